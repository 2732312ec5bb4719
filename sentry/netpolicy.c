/*
 * netpolicy.c - the egress allowlist: parsing of --allow-net and
 * --allow-host, matching of destinations, the /etc/hosts lines of pinned
 * and resolved names (sentry.h, docs/network.md).
 *
 * Sources: inet_pton(3), getaddrinfo(3), ipv6(7) (IPv4-mapped addresses).
 */

#include "sentry.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_rule(struct net_policy *p, const struct net_rule *r, struct pv_error *err)
{
	struct net_rule *n = realloc(p->rules, (p->nrules + 1) * sizeof(*n));

	if (!n)
		return pv_error_set(err, ENOMEM, "out of memory");
	p->rules = n;
	p->rules[p->nrules++] = *r;
	return 0;
}

static int add_hosts_line(struct net_policy *p, const char *addr, const char *name,
			  struct pv_error *err)
{
	size_t old = p->hosts_text ? strlen(p->hosts_text) : 0;
	size_t add = strlen(addr) + strlen(name) + 3;
	char *n = realloc(p->hosts_text, old + add);

	if (!n)
		return pv_error_set(err, ENOMEM, "out of memory");
	snprintf(n + old, add, "%s\t%s\n", addr, name);
	p->hosts_text = n;
	return 0;
}

/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d) becomes AF_INET. */
static void normalise(struct net_rule *r)
{
	static const unsigned char prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (r->family == AF_INET6 && !memcmp(r->addr, prefix, 12) && r->prefix >= 96) {
		memmove(r->addr, r->addr + 12, 4);
		memset(r->addr + 4, 0, 12);
		r->family = AF_INET;
		r->prefix -= 96;
	}
}

/* Parse an address with optional "/prefix" (@with_prefix) into @r. */
static int parse_addr(const char *text, bool with_prefix, struct net_rule *r)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash, *end;
	unsigned long bits;

	if (strlen(text) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, text, strlen(text) + 1);
	slash = strchr(buf, '/');
	if (slash) {
		if (!with_prefix)
			return -EINVAL;
		*slash = '\0';
	}
	if (inet_pton(AF_INET, buf, r->addr) == 1) {
		r->family = AF_INET;
		r->prefix = 32;
	} else if (inet_pton(AF_INET6, buf, r->addr) == 1) {
		r->family = AF_INET6;
		r->prefix = 128;
	} else {
		return -EINVAL;
	}
	if (slash) {
		errno = 0;
		bits = strtoul(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || bits > r->prefix)
			return -EINVAL;
		r->prefix = (unsigned int)bits;
	}
	normalise(r);
	return 0;
}

static int parse_port(const char *text, bool any_ok, uint16_t *port)
{
	unsigned long v;
	char *end;

	if (any_ok && !strcmp(text, "*")) {
		*port = 0;
		return 0;
	}
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v == 0 || v > 65535 || text[0] == '-')
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* Split "ADDR:PORT" or "[ADDR]:PORT" at the port colon: *@addr and *@port
 * point into @buf.  Returns 0 or -EINVAL. */
static int split_host_port(char *buf, char **addr, char **port)
{
	char *colon;

	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		*close = '\0';
		*addr = buf + 1;
		*port = close + 2;
		return 0;
	}
	colon = strrchr(buf, ':');
	if (!colon || strchr(buf, ':') != colon)
		return -EINVAL;
	*colon = '\0';
	*addr = buf;
	*port = colon + 1;
	return 0;
}

int net_policy_add_net(struct net_policy *p, const char *spec, struct pv_error *err)
{
	struct net_rule r = { .proto = IPPROTO_TCP };
	char buf[128];
	char *addr, *port, *proto;

	if (strlen(spec) >= sizeof(buf))
		return pv_error_set(err, EINVAL, "--allow-net %s: too long", spec);
	memcpy(buf, spec, strlen(spec) + 1);
	/* The protocol suffix follows the port: the last '/' after the last
	 * ':' (a CIDR prefix also uses '/'). */
	proto = strrchr(buf, '/');
	if (proto && strrchr(buf, ':') && proto > strrchr(buf, ':')) {
		*proto++ = '\0';
		if (!strcmp(proto, "udp"))
			return pv_error_set(err, EINVAL,
					    "--allow-net %s: UDP egress is not supported "
					    "(docs/network.md)", spec);
		if (strcmp(proto, "tcp"))
			return pv_error_set(err, EINVAL, "--allow-net %s: protocol must be tcp",
					    spec);
	}
	if (split_host_port(buf, &addr, &port) < 0 || parse_port(port, true, &r.port) < 0 ||
	    parse_addr(addr, true, &r) < 0)
		return pv_error_set(err, EINVAL,
				    "--allow-net %s: expected CIDR:PORT[/tcp], for example "
				    "10.0.0.0/8:443/tcp or [2001:db8::/32]:443", spec);
	return add_rule(p, &r, err);
}

static bool valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 253 || name[0] == '.' || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_'))
			return false;
	}
	return true;
}

int net_policy_add_host(struct net_policy *p, const char *spec, struct pv_error *err)
{
	struct net_rule r = { .proto = IPPROTO_TCP, .port = 443 };
	char buf[300], text[INET6_ADDRSTRLEN];
	char *eq, *name = buf, *addr, *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int n = 0, rc;

	if (strlen(spec) >= sizeof(buf))
		return pv_error_set(err, EINVAL, "--allow-host %s: too long", spec);
	memcpy(buf, spec, strlen(spec) + 1);
	eq = strchr(buf, '=');
	if (eq) {
		*eq = '\0';
		if (!valid_name(name) || split_host_port(eq + 1, &addr, &port) < 0 ||
		    parse_port(port, false, &r.port) < 0 || parse_addr(addr, false, &r) < 0)
			return pv_error_set(err, EINVAL,
					    "--allow-host %s: expected NAME=ADDR:PORT, for "
					    "example api.test=127.0.0.1:8080", spec);
		memcpy(r.host, name, strlen(name) + 1); /* valid_name: <= 253 bytes */
		inet_ntop(r.family, r.addr, text, sizeof(text));
		if ((rc = add_rule(p, &r, err)) < 0)
			return rc;
		return add_hosts_line(p, text, name, err);
	}
	port = strchr(buf, ':');
	if (port) {
		*port++ = '\0';
		if (parse_port(port, false, &r.port) < 0)
			return pv_error_set(err, EINVAL, "--allow-host %s: bad port", spec);
	}
	if (!valid_name(name))
		return pv_error_set(err, EINVAL, "--allow-host %s: expected NAME[:PORT]", spec);
	memcpy(r.host, name, strlen(name) + 1); /* valid_name: <= 253 bytes */
	rc = getaddrinfo(name, NULL, &hints, &res);
	if (rc)
		return pv_error_set(err, ENOENT, "--allow-host %s: cannot resolve %s: %s", spec,
				    name, gai_strerror(rc));
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		const void *a;

		if (ai->ai_family == AF_INET) {
			a = &((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
			r.family = AF_INET;
			r.prefix = 32;
			memset(r.addr, 0, sizeof(r.addr));
			memcpy(r.addr, a, 4);
		} else if (ai->ai_family == AF_INET6) {
			a = &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
			r.family = AF_INET6;
			r.prefix = 128;
			memcpy(r.addr, a, 16);
		} else {
			continue;
		}
		normalise(&r);
		inet_ntop(r.family, r.addr, text, sizeof(text));
		if ((rc = add_rule(p, &r, err)) < 0 || (rc = add_hosts_line(p, text, name, err)) < 0) {
			freeaddrinfo(res);
			return rc;
		}
		n++;
	}
	freeaddrinfo(res);
	if (!n)
		return pv_error_set(err, ENOENT, "--allow-host %s: no IPv4 or IPv6 address", spec);
	return 0;
}

void net_policy_free(struct net_policy *p)
{
	free(p->rules);
	free(p->hosts_text);
	p->rules = NULL;
	p->hosts_text = NULL;
	p->nrules = 0;
}

static bool prefix_match(const unsigned char *a, const unsigned char *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes))
		return false;
	if (rest) {
		unsigned char mask = (unsigned char)(0xff << (8 - rest));

		return (a[bytes] & mask) == (b[bytes] & mask);
	}
	return true;
}

/* 127.0.0.0/8 or ::1 (@a: 4 or 16 bytes of @family). */
static bool is_loopback(int family, const unsigned char *a)
{
	static const unsigned char lo6[16] = { [15] = 1 };

	return family == AF_INET ? a[0] == 127 : !memcmp(a, lo6, 16);
}

static bool is_unspecified(int family, const unsigned char *a)
{
	static const unsigned char zero[16];

	return !memcmp(a, zero, family == AF_INET ? 4 : 16);
}

const struct net_rule *net_policy_match(const struct net_policy *p, int family,
					const void *addr, uint16_t port, int proto)
{
	const unsigned char *a = addr;

	/* "This host" never leaves the sandbox. */
	if (!p || is_unspecified(family, a))
		return NULL;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct net_rule *r = &p->rules[i];

		if (r->family != family || r->proto != proto || (r->port && r->port != port))
			continue;
		/* The host's loopback only through a rule inside the loopback
		 * range: 0.0.0.0/0 means "the network", not the host's own
		 * services. */
		if (is_loopback(family, a) &&
		    !(is_loopback(family, r->addr) && r->prefix >= (family == AF_INET ? 8u : 128u)))
			continue;
		if (prefix_match(r->addr, addr, r->prefix))
			return r;
	}
	return NULL;
}
