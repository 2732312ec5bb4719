/*
 * pv-micro.c - microbenchmarks of the costs pyvisor's hot path is built from.
 *
 *   pv-micro syscall   ITERATIONS   an untrapped syscall (getppid), no filter
 *   pv-micro filtered  ITERATIONS   getppid allowed by a one-rule BPF filter
 *   pv-micro roundtrip ITERATIONS   the bare user-notification round trip: a
 *                                   child traps getppid to a tiny supervisor
 *                                   of its own whose handler answers 0 at
 *                                   once (RECV, SEND); once without and once
 *                                   with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
 *   pv-micro stat      ITERATIONS PATH     newfstatat(PATH), natively
 *   pv-micro open      ITERATIONS PATH     openat(PATH) + close, natively
 *   pv-micro getdents  ITERATIONS DIR      open DIR, getdents64 to the end,
 *                                          close, natively
 *
 * Each mode prints one JSON object on stdout:
 *   {"bench": MODE, "iterations": N, "ns_per_op": X, ...}
 * Times are the median of 5 timed batches of ITERATIONS operations after one
 * warm-up batch, in nanoseconds per operation (CLOCK_MONOTONIC).
 *
 * The round trip uses the same kernel mechanism as the sentry
 * (seccomp_unotify(2): SECCOMP_FILTER_FLAG_NEW_LISTENER, NOTIF_RECV,
 * NOTIF_SEND) with a handler that does no work, so it is the floor of
 * every trapped call.  The emulated calls are measured inside pyvisor by
 * bench/micro/emulated.py (programs run under pyvisor must come from the
 * read-only host view; see docs/performance.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"

#define BATCHES 5

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static _Noreturn void fail(const char *what)
{
	fprintf(stderr, "pv-micro: %s: %s\n", what, strerror(errno));
	exit(1);
}

typedef void (*op_fn)(const char *arg);

static long gap_ns;	/* roundtrip: user-space work between two calls */

static void op_getppid(const char *arg)
{
	(void)arg;
	syscall(SYS_getppid);
}

/* getppid() after about gap_ns of work in user space, as a program does
 * between two trapped calls (the time is counted in ns_per_op). */
static void op_getppid_gap(const char *arg)
{
	struct timespec ts;
	uint64_t end;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + (uint64_t)gap_ns;
	do
		clock_gettime(CLOCK_MONOTONIC, &ts);
	while ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec < end);
	syscall(SYS_getppid);
}

static void op_stat(const char *arg)
{
	struct stat st;

	if (syscall(SYS_newfstatat, AT_FDCWD, arg, &st, 0) < 0)
		fail("newfstatat");
}

static void op_open(const char *arg)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, arg, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail("openat");
	close(fd);
}

static void op_getdents(const char *arg)
{
	char buf[32768];
	int fd = (int)syscall(SYS_openat, AT_FDCWD, arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (fd < 0)
		fail("openat");
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		fail("getdents64");
	close(fd);
}

/* Median ns per op over BATCHES batches of @iters calls, after a warm-up;
 * min and max through @lo and @hi. */
static double time_op(op_fn fn, const char *arg, long iters, double *lo, double *hi)
{
	double per[BATCHES];

	for (long i = 0; i < iters; i++)
		fn(arg);
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = now_ns();

		for (long i = 0; i < iters; i++)
			fn(arg);
		per[b] = (double)(now_ns() - t0) / (double)iters;
	}
	qsort(per, BATCHES, sizeof(per[0]), cmp_double);
	*lo = per[0];
	*hi = per[BATCHES - 1];
	return per[BATCHES / 2];
}

static void print_result(const char *mode, long iters, double med, double lo, double hi,
			 const char *extra)
{
	printf("{\"bench\": \"%s\", \"iterations\": %ld, \"ns_per_op\": %.1f, "
	       "\"ns_min\": %.1f, \"ns_max\": %.1f%s}\n",
	       mode, iters, med, lo, hi, extra ? extra : "");
}

/* A filter of a few instructions: @trap_nr gets USER_NOTIF (or ALLOW when
 * @trap_nr is -1), everything else ALLOW; foreign architectures are killed. */
static int install_filter(int trap_nr, unsigned int flags)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)trap_nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail("PR_SET_NO_NEW_PRIVS");
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * The bare round trip.  The child installs the filter, passes the listener
 * to the parent and then times getppid(), each of which becomes a
 * notification the parent answers with value 0.  The parent loops
 * poll/RECV/SEND like the sentry (poll stands in for its epoll_wait).
 */
enum wait_kind { WAIT_POLL, WAIT_EPOLL, WAIT_RECV };

static int roundtrip(long iters, bool sync_wakeup, enum wait_kind wait, double *med, double *lo,
		     double *hi, bool *sync_ok)
{
	int sv[2], res[2], listener, status, epfd = -1;
	double out[3];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe(res) < 0)
		fail("socketpair");
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		close(sv[0]);
		close(res[0]);
		listener = install_filter(SYS_getppid, SECCOMP_FILTER_FLAG_NEW_LISTENER);
		if (listener < 0 || send_fd(sv[1], listener) < 0)
			_exit(2);
		close(listener);
		/* Wait for the parent's go (it may set flags on the listener). */
		if (read(sv[1], &status, 1) != 1)
			_exit(3);
		out[0] = time_op(gap_ns ? op_getppid_gap : op_getppid, NULL, iters, &out[1],
				 &out[2]);
		if (write(res[1], out, sizeof(out)) != sizeof(out))
			_exit(4);
		_exit(0);
	}
	close(sv[1]);
	close(res[1]);
	listener = recv_fd(sv[0]);
	if (listener < 0) {
		fprintf(stderr, "pv-micro: no listener from the child\n");
		return -1;
	}
	*sync_ok = false;
	if (sync_wakeup)
		*sync_ok = ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
				 (unsigned long)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0;
	if (wait == WAIT_EPOLL) {
		struct epoll_event ev = { .events = EPOLLIN };

		epfd = epoll_create1(EPOLL_CLOEXEC);
		if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev) < 0)
			fail("epoll");
	}
	if (write(sv[0], "g", 1) != 1)
		fail("write");
	for (;;) {
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;
		struct pollfd pfd = { .fd = listener, .events = POLLIN };
		struct epoll_event ev;

		if (wait == WAIT_POLL) {
			if (poll(&pfd, 1, -1) < 0) {
				if (errno == EINTR)
					continue;
				fail("poll");
			}
			if (pfd.revents & (POLLHUP | POLLERR))
				break;
		} else if (wait == WAIT_EPOLL) {
			if (epoll_wait(epfd, &ev, 1, -1) < 0) {
				if (errno == EINTR)
					continue;
				fail("epoll_wait");
			}
			if (ev.events & (EPOLLHUP | EPOLLERR))
				break;
		}
		memset(&req, 0, sizeof(req));
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			/* A blocking RECV fails with ENOENT once every
			 * filtered task is gone. */
			if (wait == WAIT_RECV && errno != EINTR)
				break;
			continue;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.val = 0;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	if (read(res[0], out, sizeof(out)) != sizeof(out))
		return -1;
	close(res[0]);
	close(sv[0]);
	close(listener);
	if (epfd >= 0)
		close(epfd);
	*med = out[0];
	*lo = out[1];
	*hi = out[2];
	return 0;
}

static void usage(FILE *f)
{
	fputs("Usage: pv-micro MODE ITERATIONS [PATH]\n"
	      "       pv-micro roundtrip ITERATIONS [GAP_NS]\n"
	      "\n"
	      "Modes:\n"
	      "  syscall    untrapped getppid(), no seccomp filter\n"
	      "  filtered   getppid() allowed by a small BPF filter\n"
	      "  roundtrip  getppid() trapped to a trivial supervisor (bare notification\n"
	      "             round trip), without and with SYNC_WAKE_UP, the supervisor\n"
	      "             waiting in poll, epoll or a blocking RECV; with GAP_NS the\n"
	      "             child spins that long before each call (time included)\n"
	      "  stat PATH      newfstatat(PATH), natively\n"
	      "  open PATH      openat(PATH) + close, natively\n"
	      "  getdents DIR   open DIR, getdents64 to the end, close, natively\n"
	      "\n"
	      "Prints one JSON object per measurement: ns_per_op is the median of 5\n"
	      "batches of ITERATIONS operations after one warm-up batch.\n",
	      f);
}

int main(int argc, char **argv)
{
	double med, lo, hi;
	long iters;
	char *end;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	errno = 0;
	iters = strtol(argv[2], &end, 10);
	if (errno || *end || iters < 1 || iters > 100000000) {
		fprintf(stderr, "pv-micro: ITERATIONS must be between 1 and 100000000\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(argv[1], "syscall")) {
		med = time_op(op_getppid, NULL, iters, &lo, &hi);
		print_result("syscall", iters, med, lo, hi, NULL);
	} else if (!strcmp(argv[1], "filtered")) {
		if (install_filter(-1, 0) < 0)
			fail("seccomp");
		med = time_op(op_getppid, NULL, iters, &lo, &hi);
		print_result("filtered", iters, med, lo, hi, NULL);
	} else if (!strcmp(argv[1], "roundtrip")) {
		if (argc >= 4)
			gap_ns = strtol(argv[3], NULL, 10);
		static const struct {
			const char *name;
			bool sync;
			enum wait_kind wait;
		} variants[] = {
			{ "roundtrip_poll", false, WAIT_POLL },
			{ "roundtrip_epoll", false, WAIT_EPOLL },
			{ "roundtrip_poll_sync", true, WAIT_POLL },
			{ "roundtrip_epoll_sync", true, WAIT_EPOLL },
			{ "roundtrip_recv_sync", true, WAIT_RECV },
		};

		for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
			bool sync_ok;

			if (roundtrip(iters, variants[i].sync, variants[i].wait, &med, &lo, &hi,
				      &sync_ok) < 0) {
				fprintf(stderr, "pv-micro: round trip failed\n");
				return 1;
			}
			print_result(variants[i].name, iters, med, lo, hi,
				     !variants[i].sync ? NULL
				     : sync_ok	       ? ", \"sync_wakeup\": true"
							: ", \"sync_wakeup\": false");
		}
	} else if (argc >= 4 && !strcmp(argv[1], "stat")) {
		med = time_op(op_stat, argv[3], iters, &lo, &hi);
		print_result("stat", iters, med, lo, hi, NULL);
	} else if (argc >= 4 && !strcmp(argv[1], "open")) {
		med = time_op(op_open, argv[3], iters, &lo, &hi);
		print_result("open", iters, med, lo, hi, NULL);
	} else if (argc >= 4 && !strcmp(argv[1], "getdents")) {
		med = time_op(op_getdents, argv[3], iters, &lo, &hi);
		print_result("getdents", iters, med, lo, hi, NULL);
	} else {
		usage(stderr);
		return 2;
	}
	return 0;
}
