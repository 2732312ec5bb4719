/*
 * filter.c - the seccomp filter, generated from syscalls/syscalls.def with
 * libseccomp, and a small in-process evaluator for tests.
 *
 * Sources: seccomp(2) (struct seccomp_data, actions, "the arch field"),
 * libseccomp seccomp_rule_add(3), seccomp_export_bpf(3), seccomp_attr_set(3).
 */
#include "loader.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>

#include "syscalls.h"

static void ctx_releasep(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

/*
 * Register values allowed in BPF for the PV_ALLOW_IF rows.  Anything else
 * reaches the row's handler, which refuses it with an audit event.  32-bit
 * arguments (cmd, option) are compared on their low 32 bits, as the kernel
 * reads them (an unsigned int), so high garbage bits cannot dodge a rule.
 */
static const unsigned long ioctl_allowed[] = {
	TCGETS, TIOCGWINSZ, TIOCGPGRP, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX, FIOASYNC,
};

static const unsigned long fcntl_allowed[] = {
	F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_GETLK, F_SETLK, F_SETLKW,
	F_DUPFD_CLOEXEC, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_ADD_SEALS, F_GET_SEALS,
	F_GETPIPE_SZ, F_SETPIPE_SZ, F_GETOWN, F_GETSIG, F_GETLEASE,
};

static const unsigned long prctl_allowed[] = {
	PR_SET_NAME, PR_GET_NAME, PR_SET_PDEATHSIG, PR_GET_PDEATHSIG, PR_GET_DUMPABLE,
	PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS, PR_CAPBSET_READ, PR_GET_SECCOMP,
	0x53564d41 /* PR_SET_VMA */, PR_GET_TIMERSLACK, PR_SET_TIMERSLACK,
	PR_GET_THP_DISABLE, PR_SET_THP_DISABLE, PR_GET_KEEPCAPS, PR_GET_SECUREBITS,
	PR_GET_CHILD_SUBREAPER, PR_MCE_KILL_GET, PR_GET_TID_ADDRESS, PR_GET_FP_MODE,
	PR_GET_SPECULATION_CTRL,
};

/* clone(2) flags that create namespaces or escape tracing: never in BPF. */
#define CLONE_REFUSED_FLAGS                                                         \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
	 CLONE_NEWPID | CLONE_NEWNET | CLONE_UNTRACED)

static int add_values(scmp_filter_ctx ctx, int nr, unsigned int arg, const unsigned long *v,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					 SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, 0xffffffffUL, v[i]));
		if (r < 0)
			return r;
	}
	return 0;
}

/* The register rule of one PV_ALLOW_IF row. */
static int add_allow_if(scmp_filter_ctx ctx, const struct syscall_entry *e)
{
	int nr = e->nr;

	switch (nr) {
	case __NR_ioctl:
		return add_values(ctx, nr, 1, ioctl_allowed, PV_ARRAY_SIZE(ioctl_allowed));
	case __NR_fcntl:
		return add_values(ctx, nr, 1, fcntl_allowed, PV_ARRAY_SIZE(fcntl_allowed));
	case __NR_prctl:
		return add_values(ctx, nr, 0, prctl_allowed, PV_ARRAY_SIZE(prctl_allowed));
	case __NR_clone:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_REFUSED_FLAGS, 0));
	case __NR_socketpair: {
		/* AF_UNIX stream or seqpacket pairs (type may carry SOCK_CLOEXEC
		 * and SOCK_NONBLOCK): see the socket rows of syscalls.def. */
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2, SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0),
					 SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_STREAM));
		if (r < 0)
			return r;
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2, SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0),
					SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_SEQPACKET));
	}
	case __NR_setsockopt: {
		/* Socket, TCP and UDP levels pass; IP and IPv6 options reach
		 * the handler, which refuses source routing and next hops
		 * (they would re-aim an allowed connection). */
		static const unsigned long levels[] = { SOL_SOCKET, IPPROTO_TCP, IPPROTO_UDP };

		return add_values(ctx, nr, 1, levels, PV_ARRAY_SIZE(levels));
	}
	case __NR_sendto:
		/* No destination address and no Fast Open (syscalls.def). */
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2, SCMP_A4(SCMP_CMP_EQ, 0, 0),
					SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, 0));
	case __NR_getpriority:
	case __NR_setpriority:
		/* PRIO_PROCESS of who 0: the caller itself.  PRIO_USER with who 0
		 * would reach every process of the uid, host ones included. */
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2,
					SCMP_A0(SCMP_CMP_EQ, PRIO_PROCESS), SCMP_A1(SCMP_CMP_EQ, 0));
	case __NR_personality:
		/* personality(0xffffffff) only reads the current persona. */
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffUL, 0xffffffffUL));
	case __NR_getpgid:
	case __NR_getsid:
	case __NR_get_robust_list:
	case __NR_sched_getaffinity:
	case __NR_sched_setaffinity:
	case __NR_sched_getparam:
	case __NR_sched_getscheduler:
	case __NR_sched_getattr:
	case __NR_sched_rr_get_interval:
	case __NR_prlimit64:
		/* pid 0 is the caller itself. */
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, 0));
	default:
		return -EINVAL;
	}
}

/* Hot calls first in the generated tree (perf-anchors.md: filter order). */
static const int hot_calls[] = {
	__NR_read, __NR_write, __NR_futex, __NR_mmap, __NR_munmap, __NR_lseek, __NR_close,
	__NR_ioctl, __NR_mprotect, __NR_brk, __NR_rt_sigaction, __NR_rt_sigprocmask,
	__NR_fcntl, __NR_getpid, __NR_clock_gettime, __NR_poll, __NR_epoll_wait,
};

int loader_filter_build(struct loader_filter *f, struct pv_error *err)
{
	__attribute__((cleanup(ctx_releasep))) scmp_filter_ctx ctx = NULL;
	_cleanup_close_ int mfd = -1;
	const struct syscall_entry *tab;
	size_t n;
	struct stat st;
	int r;

	memset(f, 0, sizeof(*f));
	ctx = seccomp_init(SCMP_ACT_NOTIFY);
	if (!ctx)
		return pv_error_set(err, EINVAL,
				    "libseccomp cannot build a user-notification filter");
	/* Foreign architectures (i386 int 0x80) and x32 numbers: kill.
	 * libseccomp's native x86_64 filter already treats numbers with
	 * __X32_SYSCALL_BIT as a bad architecture. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0)
		return pv_error_set(err, -r, "seccomp_attr_set: %s", strerror(-r));

	tab = syscall_table(&n);
	for (size_t i = 0; i < n; i++) {
		const struct syscall_entry *e = &tab[i];

		switch (e->class) {
		case PV_ALLOW:
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, e->nr, 0);
			break;
		case PV_ALLOW_IF:
			r = add_allow_if(ctx, e);
			break;
		case PV_ENOSYS:
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), e->nr, 0);
			break;
		default:
			r = 0; /* the default action: the sentry decides */
			break;
		}
		if (r < 0)
			return pv_error_set(err, -r, "filter rule for %s: %s", e->name, strerror(-r));
	}
	for (size_t i = 0; i < PV_ARRAY_SIZE(hot_calls); i++)
		seccomp_syscall_priority(ctx, hot_calls[i], (uint8_t)(255 - i));

	mfd = memfd_create("pyvisor-bpf", MFD_CLOEXEC);
	if (mfd < 0)
		return pv_error_set(err, errno, "memfd_create: %s", strerror(errno));
	r = seccomp_export_bpf(ctx, mfd);
	if (r < 0)
		return pv_error_set(err, -r, "seccomp_export_bpf: %s", strerror(-r));
	if (fstat(mfd, &st) < 0)
		return pv_error_set(err, errno, "fstat: %s", strerror(errno));
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return pv_error_set(err, E2BIG, "filter has an unusable size (%lld bytes)",
				    (long long)st.st_size);
	f->insns = malloc(st.st_size);
	if (!f->insns)
		return pv_error_set(err, ENOMEM, "out of memory");
	if (pread(mfd, f->insns, st.st_size, 0) != st.st_size) {
		loader_filter_free(f);
		return pv_error_set(err, EIO, "cannot read back the filter");
	}
	f->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	return 0;
}

void loader_filter_free(struct loader_filter *f)
{
	free(f->insns);
	f->insns = NULL;
	f->len = 0;
}

/* Load 32 bits at offset @k of struct seccomp_data (seccomp(2)). */
static uint32_t data_word(const struct seccomp_data *d, uint32_t k)
{
	uint32_t w = 0;

	if (k + 4 <= sizeof(*d) && k % 4 == 0)
		memcpy(&w, (const char *)d + k, 4);
	return w;
}

unsigned int loader_filter_eval(const struct loader_filter *f, unsigned int arch, int nr,
				const unsigned long long args[6])
{
	struct seccomp_data d = { .nr = nr, .arch = arch };
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = { 0 };

	for (int i = 0; i < 6; i++)
		d.args[i] = args ? args[i] : 0;
	for (unsigned int pc = 0; pc < f->len; pc++) {
		const struct sock_filter *in = &f->insns[pc];

		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			A = data_word(&d, in->k);
			break;
		case BPF_LD | BPF_IMM:
			A = in->k;
			break;
		case BPF_LDX | BPF_IMM:
			X = in->k;
			break;
		case BPF_LD | BPF_MEM:
			A = M[in->k % BPF_MEMWORDS];
			break;
		case BPF_LDX | BPF_MEM:
			X = M[in->k % BPF_MEMWORDS];
			break;
		case BPF_ST:
			M[in->k % BPF_MEMWORDS] = A;
			break;
		case BPF_STX:
			M[in->k % BPF_MEMWORDS] = X;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			A &= in->k;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
			A |= in->k;
			break;
		case BPF_MISC | BPF_TAX:
			X = A;
			break;
		case BPF_MISC | BPF_TXA:
			A = X;
			break;
		case BPF_JMP | BPF_JA:
			pc += in->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += (A == in->k) ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += (A > in->k) ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += (A >= in->k) ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (A & in->k) ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JEQ | BPF_X:
			pc += (A == X) ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_X:
			pc += (A > X) ? in->jt : in->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_X:
			pc += (A >= X) ? in->jt : in->jf;
			break;
		case BPF_RET | BPF_K:
			return in->k;
		case BPF_RET | BPF_A:
			return A;
		default:
			return SECCOMP_RET_KILL_PROCESS; /* unknown opcode: fail closed */
		}
	}
	return SECCOMP_RET_KILL_PROCESS;
}
