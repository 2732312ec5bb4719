/*
 * test_table.c - the syscall table and the seccomp filter built from it,
 * checked in-process (no kernel filter is loaded): STYLE.md "policy and
 * filter logic is tested in-process without a kernel".
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>

#include <cmocka.h>

#include "loader.h"
#include "syscalls.h"

static struct loader_filter filter;

static int setup(void **state)
{
	struct pv_error err = { 0 };

	return loader_filter_build(&filter, &err);
}

static int teardown(void **state)
{
	loader_filter_free(&filter);
	return 0;
}

static unsigned int eval(int nr, unsigned long long a0, unsigned long long a1,
			 unsigned long long a2)
{
	unsigned long long args[6] = { a0, a1, a2, 0, 0, 0 };

	return loader_filter_eval(&filter, AUDIT_ARCH_X86_64, nr, args);
}

#define ACTION(r) ((r) & SECCOMP_RET_ACTION_FULL)

static void test_rows_are_consistent(void **state)
{
	size_t n;
	const struct syscall_entry *t = syscall_table(&n);

	assert_true(n > 200);
	for (size_t i = 0; i < n; i++) {
		assert_true(t[i].nr >= 0 && t[i].nr < PV_SYSCALL_MAX);
		assert_non_null(t[i].handler);
		/* A pointer the kernel interprets may never pass through BPF. */
		if (t[i].class == PV_ALLOW && t[i].args == PV_ARGS_MEM)
			fail_msg("%s: PV_ALLOW row with a pointer argument", t[i].name);
		/* Emulated rows need their own handler. */
		if (t[i].class == PV_EMULATE && t[i].handler == sys_none)
			fail_msg("%s: PV_EMULATE row without a handler", t[i].name);
		for (size_t j = i + 1; j < n; j++) {
			if (t[i].nr == t[j].nr)
				fail_msg("%s and %s share number %d", t[i].name, t[j].name,
					 t[i].nr);
			if (t[i].handler != sys_none && t[i].handler == t[j].handler)
				fail_msg("%s and %s share a handler", t[i].name, t[j].name);
		}
		assert_ptr_equal(syscall_lookup(t[i].nr), &t[i]);
	}
	assert_null(syscall_lookup(-1));
	assert_null(syscall_lookup(PV_SYSCALL_MAX));
	assert_string_equal(syscall_name(__NR_openat), "openat");
}

/* Every row's class is what the filter does for it. */
static void test_filter_matches_table(void **state)
{
	size_t n;
	const struct syscall_entry *t = syscall_table(&n);

	for (size_t i = 0; i < n; i++) {
		unsigned int r = eval(t[i].nr, 0xdead0000, 0xdead0000, 0);

		switch (t[i].class) {
		case PV_ALLOW:
			if (r != SECCOMP_RET_ALLOW)
				fail_msg("%s: expected ALLOW, got 0x%x", t[i].name, r);
			break;
		case PV_EMULATE:
		case PV_REFUSE:
			if (r != SECCOMP_RET_USER_NOTIF)
				fail_msg("%s: expected USER_NOTIF, got 0x%x", t[i].name, r);
			break;
		case PV_ENOSYS:
			assert_int_equal(r, SECCOMP_RET_ERRNO | ENOSYS);
			break;
		case PV_ALLOW_IF:
			/* Nonsense arguments never pass.  The send rows are
			 * rules on what must be absent (an address, Fast Open):
			 * test_send_rules covers them. */
			if (t[i].nr == __NR_sendto)
				break;
			if (r == SECCOMP_RET_ALLOW)
				fail_msg("%s: allowed with arbitrary arguments", t[i].name);
			break;
		}
	}
}

/* send calls: in BPF only without a destination address and without TCP
 * Fast Open; everything else reaches the sentry (syscalls.def). */
static void test_send_rules(void **state)
{
	unsigned long long a[6] = { 3, 0x1000, 10, 0, 0, 0 };

	assert_int_equal(loader_filter_eval(&filter, AUDIT_ARCH_X86_64, __NR_sendto, a),
			 SECCOMP_RET_ALLOW);
	a[4] = 0x2000; /* an address */
	a[5] = 16;
	assert_int_equal(loader_filter_eval(&filter, AUDIT_ARCH_X86_64, __NR_sendto, a),
			 SECCOMP_RET_USER_NOTIF);
	a[4] = 0;
	a[3] = MSG_FASTOPEN | MSG_NOSIGNAL;
	assert_int_equal(loader_filter_eval(&filter, AUDIT_ARCH_X86_64, __NR_sendto, a),
			 SECCOMP_RET_USER_NOTIF);
	/* sendmsg/sendmmsg: always the sentry (msg_name is in memory). */
	assert_int_equal(eval(__NR_sendmsg, 3, 0x1000, MSG_NOSIGNAL), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_sendmmsg, 3, 0x1000, 2), SECCOMP_RET_USER_NOTIF);
	/* setsockopt: socket/TCP/UDP levels pass; IP levels reach the sentry,
	 * also with garbage in the upper half of the level. */
	assert_int_equal(eval(__NR_setsockopt, 3, SOL_SOCKET, SO_REUSEADDR), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_setsockopt, 3, IPPROTO_TCP, 1), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_setsockopt, 3, IPPROTO_IP, 4), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_setsockopt, 3, 0x100000000ULL | IPPROTO_IP, 4),
			 SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_setsockopt, 3, IPPROTO_IPV6, 57), SECCOMP_RET_USER_NOTIF);
	/* socket() always reaches the sentry (family policy, audit). */
	assert_int_equal(eval(__NR_socket, AF_PACKET, SOCK_RAW, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_connect, 3, 0x1000, 16), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_bind, 3, 0x1000, 16), SECCOMP_RET_USER_NOTIF);
}

static void test_unknown_numbers_reach_the_sentry(void **state)
{
	/* Deny by default: not in the table -> the sentry answers ENOSYS. */
	for (int nr = 0; nr < PV_SYSCALL_MAX; nr++) {
		if (!syscall_lookup(nr) && ACTION(eval(nr, 0, 0, 0)) == SECCOMP_RET_ALLOW)
			fail_msg("number %d is not in the table but allowed", nr);
	}
	assert_int_equal(eval(1000, 0, 0, 0), SECCOMP_RET_USER_NOTIF);
}

static void test_foreign_abis_are_killed(void **state)
{
	unsigned long long args[6] = { 0 };

	/* i386 (int 0x80): catalogue FLT-02. */
	assert_int_equal(loader_filter_eval(&filter, AUDIT_ARCH_I386, 5, args),
			 SECCOMP_RET_KILL_PROCESS);
	/* x32 numbers under the x86_64 arch: catalogue FLT-01. */
	assert_int_equal(ACTION(eval(0x40000000 | __NR_openat, 0, 0, 0)), SECCOMP_RET_KILL_PROCESS);
	assert_int_equal(ACTION(eval(0x40000000 | __NR_read, 0, 0, 0)), SECCOMP_RET_KILL_PROCESS);
	assert_int_equal(ACTION(eval(0x40000000 | 520, 0, 0, 0)), SECCOMP_RET_KILL_PROCESS);
}

static void test_argument_rules(void **state)
{
	/* ioctl: terminal queries pass, injection reaches the sentry. */
	assert_int_equal(eval(__NR_ioctl, 0, TCGETS, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_ioctl, 0, TCGETS | (1ULL << 32), 0), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_ioctl, 0, TIOCSTI, 0), SECCOMP_RET_USER_NOTIF);
	/* clone: threads and forks pass, namespaces do not. */
	assert_int_equal(eval(__NR_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, 0, 0),
			 SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_clone, CLONE_NEWUSER, 0, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_clone, CLONE_UNTRACED, 0, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_clone3, 0, 0, 0), SECCOMP_RET_ERRNO | ENOSYS);
	/* socketpair: AF_UNIX stream/seqpacket only. */
	assert_int_equal(eval(__NR_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
			 SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_socketpair, AF_UNIX, SOCK_SEQPACKET, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_socketpair, AF_UNIX, SOCK_DGRAM, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_socketpair, AF_INET, SOCK_STREAM, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_socket, AF_UNIX, SOCK_STREAM, 0), SECCOMP_RET_USER_NOTIF);
	/* prctl: names pass; dumpable, ptracer, subreaper, seccomp do not. */
	assert_int_equal(eval(__NR_prctl, PR_SET_NAME, 0, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_prctl, PR_SET_DUMPABLE, 0, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_prctl, PR_SET_PTRACER, 0, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_prctl, PR_SET_CHILD_SUBREAPER, 1, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_prctl, PR_SET_SECCOMP, 2, 0), SECCOMP_RET_USER_NOTIF);
	/* fcntl: F_SETOWN could aim SIGIO at a host process. */
	assert_int_equal(eval(__NR_fcntl, 3, F_GETFL, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_fcntl, 3, F_SETOWN, 1), SECCOMP_RET_USER_NOTIF);
	/* priorities: the caller only, never a whole uid. */
	assert_int_equal(eval(__NR_setpriority, PRIO_PROCESS, 0, 10), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_setpriority, PRIO_USER, 0, 19), SECCOMP_RET_USER_NOTIF);
	/* pid-taking calls: pid 0 only in BPF. */
	assert_int_equal(eval(__NR_prlimit64, 0, RLIMIT_NOFILE, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(eval(__NR_prlimit64, 1, RLIMIT_NOFILE, 0), SECCOMP_RET_USER_NOTIF);
	/* Dangerous families reach the sentry (EPERM plus audit there). */
	assert_int_equal(eval(__NR_io_uring_setup, 8, 0, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_seccomp, 1, 0, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_ptrace, 16, 1, 0), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(eval(__NR_execve, 0, 0, 0), SECCOMP_RET_USER_NOTIF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_are_consistent),
		cmocka_unit_test(test_filter_matches_table),
		cmocka_unit_test(test_send_rules),
		cmocka_unit_test(test_unknown_numbers_reach_the_sentry),
		cmocka_unit_test(test_foreign_abis_are_killed),
		cmocka_unit_test(test_argument_rules),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
