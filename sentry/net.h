/*
 * net.h - the network side of the sentry: egress policy (allowlist rules
 * and pinned names), the run's network state (private namespace or not,
 * notifications kept pending while a connect completes, connection
 * accounting and budgets) and the result's "network" object.
 * docs/network.md describes the behaviour; syscalls/socket.c is the user.
 *
 * Kernel interfaces: socket(7), ip(7), ipv6(7), tcp(7) (TCP_INFO),
 * seccomp_unotify(2) (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SETFD,
 * SECCOMP_IOCTL_NOTIF_SEND), netdevice(7) (SIOCGSKNS), proc(5)
 * (/proc/PID/fd, /proc/PID/fdinfo).
 */
#ifndef PYVISOR_SENTRY_NET_H
#define PYVISOR_SENTRY_NET_H

#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "pv_util.h"
#include "syscalls.h"

struct sentry;
struct syscall_ctx;

/* One allow rule: destinations in family/addr/prefix, on port (0: any),
 * for protocol proto (IPPROTO_TCP). */
struct net_rule {
	int family;			/* AF_INET or AF_INET6 */
	unsigned char addr[16];		/* network byte order, 4 or 16 bytes */
	unsigned int prefix;		/* bits */
	uint16_t port;			/* host order; 0 = any */
	int proto;			/* IPPROTO_TCP */
	char host[256];			/* the --allow-host name, or "" */
};

/* The egress policy of a run.  Zero-initialise; free with
 * net_policy_free(). */
struct net_policy {
	struct net_rule *rules;		/* malloc'd */
	size_t nrules;
	char *hosts_text;		/* extra /etc/hosts lines (malloc'd) or NULL */
	uint64_t max_bytes;		/* egress budget, bytes sent; 0 = unlimited */
	unsigned int max_conns;		/* egress connections; 0 = unlimited */
};

/*
 * net_policy_add_net - parse "CIDR:PORT[/PROTO]" (PORT a number or "*",
 * PROTO "tcp"; IPv6 CIDRs in brackets: "[2001:db8::/32]:443") and add the
 * rule.  Returns 0, or -EINVAL with @err saying what is wrong.
 */
int net_policy_add_net(struct net_policy *p, const char *spec, struct pv_error *err);

/*
 * net_policy_add_host - parse "NAME[:PORT]" (PORT defaults to 443; NAME is
 * resolved now with the host's resolver) or "NAME=ADDR:PORT" (NAME pinned
 * to ADDR, no resolution) and add one rule per address plus the /etc/hosts
 * lines.  Returns 0 or -errno (-EINVAL bad syntax, -ENOENT NAME does not
 * resolve) with @err set.
 */
int net_policy_add_host(struct net_policy *p, const char *spec, struct pv_error *err);

/* net_policy_free - release @p's rules and text. */
void net_policy_free(struct net_policy *p);

/*
 * net_policy_match - the rule that allows @proto to @family address @addr
 * (4 or 16 bytes, network order; IPv4-mapped IPv6 must already be
 * normalised to AF_INET) port @port (host order), or NULL.
 */
const struct net_rule *net_policy_match(const struct net_policy *p, int family,
					const void *addr, uint16_t port, int proto);

/*
 * Run state.  net_start() after the child is spawned: learns whether the
 * child is in a network namespace of its own (compares /proc/PID/ns/net
 * with ours).  net_finish() at the end: final accounting, closes
 * everything and stores the "network" object in the outcome.
 */
int net_start(struct sentry *s, pid_t child, struct pv_error *err);
void net_finish(struct sentry *s);

/* net_private - true when the sandbox has its own network namespace. */
bool net_private(const struct sentry *s);

/*
 * net_sock_in_sandbox - true when the socket @fd (a sentry copy of a
 * sandbox fd) belongs to the sandbox's private network namespace; false
 * for host-side sockets (the injected egress connections) and when there
 * is no private namespace.
 */
bool net_sock_in_sandbox(const struct sentry *s, int fd);

/*
 * net_loop_connect - connect the sandbox's socket @fd (a sentry copy; the
 * socket lives in the sandbox's namespace) to @sa: the connect runs
 * non-blocking; when the sandbox's socket is blocking and the connect is in
 * progress, the notification is kept pending (the return has .pending) and
 * answered when the socket becomes writable.  Takes ownership of @fd.
 */
struct syscall_ret net_loop_connect(struct syscall_ctx *ctx, int fd, const struct sockaddr *sa,
				    socklen_t len);

/*
 * net_egress_connect - create a host-side socket like the sandbox's @fd
 * (family, type, protocol, O_NONBLOCK, a few options), connect it to @sa
 * and install it over the sandbox's fd number @guest_fd with ADDFD|SETFD;
 * blocking sockets keep the notification pending until the connect
 * completes.  @dest and @rule describe the connection for the log.  Takes
 * ownership of @fd.  Refuses with an audit event when the connection
 * budget is used up.
 */
struct syscall_ret net_egress_connect(struct syscall_ctx *ctx, int fd, int guest_fd,
				      const struct sockaddr *sa, socklen_t len, const char *dest,
				      const struct net_rule *rule);

/* net_event - an epoll event with tag SENTRY_TAG_NET for slot @slot. */
void net_event(struct sentry *s, unsigned int slot, uint32_t events);

/* net_tick - periodic accounting (closed connections, budgets); called by
 * the event loop every NET_TICK_MS while connections are open. */
void net_tick(struct sentry *s);
bool net_needs_tick(const struct sentry *s);
#define NET_TICK_MS 100

/* epoll tag of a pending network operation: data.u64 = slot << 8 | tag. */
#define SENTRY_TAG_NET 8

#endif
