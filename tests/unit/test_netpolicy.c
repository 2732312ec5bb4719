/*
 * test_netpolicy.c - the egress allowlist (sentry/netpolicy.c): parsing of
 * --allow-net and --allow-host NAME=ADDR:PORT, matching, IPv4-mapped
 * normalisation and the loopback rule, in-process (docs/network.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sentry.h"

/* Does @p allow TCP to @addr (text) port @port? */
static bool allows(const struct net_policy *p, const char *addr, unsigned int port)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, addr, a) == 1)
		return net_policy_match(p, AF_INET, a, (uint16_t)port, IPPROTO_TCP) != NULL;
	assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
	return net_policy_match(p, AF_INET6, a, (uint16_t)port, IPPROTO_TCP) != NULL;
}

static void test_allow_net(void **state)
{
	struct net_policy p = { 0 };
	struct pv_error err = { 0 };

	assert_int_equal(net_policy_add_net(&p, "10.0.0.0/8:443/tcp", &err), 0);
	assert_int_equal(net_policy_add_net(&p, "[2001:db8::/32]:*", &err), 0);
	assert_int_equal(net_policy_add_net(&p, "192.0.2.1:80", &err), 0);
	assert_true(allows(&p, "10.1.2.3", 443));
	assert_false(allows(&p, "10.1.2.3", 80));
	assert_false(allows(&p, "11.0.0.1", 443));
	assert_true(allows(&p, "2001:db8:1::5", 22));
	assert_false(allows(&p, "2001:db9::5", 22));
	assert_true(allows(&p, "192.0.2.1", 80));
	assert_false(allows(&p, "192.0.2.2", 80));
	/* UDP is never allowed. */
	{
		unsigned char a[4] = { 10, 0, 0, 1 };

		assert_null(net_policy_match(&p, AF_INET, a, 443, IPPROTO_UDP));
	}
	net_policy_free(&p);
}

static void test_allow_net_errors(void **state)
{
	static const char *const bad[] = {
		"10.0.0.0/8", "10.0.0.0/33:80", "10.0.0.0/8:0", "10.0.0.0/8:65536",
		"10.0.0.0/8:443/udp", "10.0.0.0/8:443/icmp", "2001:db8::/32:443", "[::1]443",
		"example.com:443", ":443", "10.0.0.0/8:-1",
	};
	struct net_policy p = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pv_error err = { 0 };

		assert_int_equal(net_policy_add_net(&p, bad[i], &err), -EINVAL);
		assert_true(err.msg[0] != '\0');
	}
	assert_int_equal(p.nrules, 0);
	net_policy_free(&p);
}

static void test_pinned_host(void **state)
{
	struct net_policy p = { 0 };
	struct pv_error err = { 0 };

	assert_int_equal(net_policy_add_host(&p, "api.test=192.0.2.10:8443", &err), 0);
	assert_int_equal(net_policy_add_host(&p, "v6.test=[2001:db8::7]:443", &err), 0);
	assert_true(allows(&p, "192.0.2.10", 8443));
	assert_false(allows(&p, "192.0.2.10", 443));
	assert_true(allows(&p, "2001:db8::7", 443));
	assert_string_equal(p.hosts_text, "192.0.2.10\tapi.test\n2001:db8::7\tv6.test\n");
	assert_string_equal(p.rules[0].host, "api.test");
	{
		struct pv_error e = { 0 };

		assert_int_equal(net_policy_add_host(&p, "bad name=1.2.3.4:80", &e), -EINVAL);
		assert_int_equal(net_policy_add_host(&p, "x.test=1.2.3.4", &e), -EINVAL);
		assert_int_equal(net_policy_add_host(&p, "x.test=host:80", &e), -EINVAL);
	}
	net_policy_free(&p);
}

static void test_mapped_and_loopback(void **state)
{
	struct net_policy p = { 0 };
	struct pv_error err = { 0 };

	/* An IPv4-mapped rule is an IPv4 rule. */
	assert_int_equal(net_policy_add_net(&p, "[::ffff:192.0.2.0/120]:80", &err), 0);
	assert_int_equal(p.rules[0].family, AF_INET);
	assert_int_equal(p.rules[0].prefix, 24);
	assert_true(allows(&p, "192.0.2.99", 80));
	/* A wide rule never reaches the host's loopback or "this host". */
	assert_int_equal(net_policy_add_net(&p, "0.0.0.0/0:*", &err), 0);
	assert_int_equal(net_policy_add_net(&p, "[::/0]:*", &err), 0);
	assert_true(allows(&p, "203.0.113.5", 9));
	assert_false(allows(&p, "127.0.0.1", 9));
	assert_false(allows(&p, "0.0.0.0", 9));
	assert_false(allows(&p, "::1", 9));
	assert_false(allows(&p, "::", 9));
	/* A loopback rule does. */
	assert_int_equal(net_policy_add_net(&p, "127.0.0.1/32:8080", &err), 0);
	assert_true(allows(&p, "127.0.0.1", 8080));
	assert_false(allows(&p, "127.0.0.2", 8080));
	net_policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allow_net),
		cmocka_unit_test(test_allow_net_errors),
		cmocka_unit_test(test_pinned_host),
		cmocka_unit_test(test_mapped_and_loopback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
