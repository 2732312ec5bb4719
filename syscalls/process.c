/*
 * process.c - signals, umask, calls naming another task, and the
 * refusals of clone and prctl.  Exec is in exec.c.
 *
 * Signals: only processes of the run may be signalled.  The sentry sends
 * signals to other sandbox processes itself through the pidfd it holds
 * (pidfd_send_signal(2)), so a recycled pid can never be hit; a task
 * signalling its own thread group is let through (CONTINUE on register
 * values: the target is the caller itself, alive while it waits).
 * Sources: kill(2), tgkill(2), pidfd_send_signal(2), umask(2).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

SYSCALL_HANDLER(umask)
{
	struct sentry_proc *p = ctx->task->proc;
	mode_t old = p->umask;

	p->umask = (mode_t)ARG(0) & 0777;
	return syscall_value(old);
}

static struct syscall_ret signal_outside(struct syscall_ctx *ctx, pid_t target)
{
	char detail[64];

	snprintf(detail, sizeof(detail), "target %d is not a sandbox process", target);
	return syscall_deny(ctx, EPERM, "signal.outside", NULL, NULL, detail);
}

static int send_to(struct sentry_proc *p, int sig)
{
	if (syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0) < 0)
		return -errno;
	return 0;
}

SYSCALL_HANDLER(kill)
{
	struct sentry *s = ctx->sentry;
	pid_t pid = (pid_t)ARG_INT(0), caller = ctx->task->proc->tgid;
	int sig = ARG_INT(1);
	struct sentry_proc *p;
	int sent = 0, r;

	if (sig < 0 || sig > SIGRTMAX)
		return syscall_errno(EINVAL);
	if (pid == caller) {
		/* Self: register values only, the target is the caller. */
		return syscall_continue();
	}
	if (pid > 0) {
		p = sentry_proc_admit(s, pid);
		if (!p)
			return signal_outside(ctx, pid);
		return syscall_result(sig ? send_to(p, sig) : 0);
	}
	/* pid 0: the caller's process group; -1: every process of the run but
	 * the caller; < -1: process group -pid.  Within the sandbox only
	 * (kill(2)); groups are matched with getpgid(2) on known processes. */
	for (p = s->procs; p; p = p->next) {
		pid_t pgid = getpgid(p->tgid);

		if (pid == -1 && p->tgid == caller)
			continue;
		if (pid == 0 && pgid != getpgid(caller))
			continue;
		if (pid < -1 && pgid != -pid)
			continue;
		r = sig ? send_to(p, sig) : 0;
		if (r == 0)
			sent++;
	}
	if (sent)
		return syscall_value(0);
	if (pid < -1)
		/* No process of the sandbox is in that group: it is a host
		 * group, or none; either way not the sandbox's to signal. */
		return signal_outside(ctx, pid);
	return syscall_errno(ESRCH);
}

/* tgkill/tkill with a target in the caller's own thread group. */
SYSCALL_HANDLER(tgkill)
{
	pid_t tgid = (pid_t)ARG_INT(0), tid = (pid_t)ARG_INT(1);
	struct sentry_proc *p;

	if (tgid <= 0 || tid <= 0)
		return syscall_errno(EINVAL);
	if (tgid == ctx->task->proc->tgid) {
		/* The kernel checks that tid belongs to tgid, the caller's own
		 * (living) thread group: registers decide. */
		return syscall_continue();
	}
	p = sentry_proc_admit(ctx->sentry, tgid);
	if (!p)
		return signal_outside(ctx, tgid);
	/* Another sandbox process: deliver to the process (the thread choice
	 * is lost; issue 4 tracks threads exactly). */
	return syscall_result(ARG_INT(2) ? send_to(p, ARG_INT(2)) : 0);
}

SYSCALL_HANDLER(tkill)
{
	pid_t tid = (pid_t)ARG_INT(0);

	if (tid <= 0)
		return syscall_errno(EINVAL);
	if (tid == ctx->task->tid) {
		/* The caller itself. */
		return syscall_continue();
	}
	return signal_outside(ctx, tid);
}

SYSCALL_HANDLER(rt_sigqueueinfo)
{
	if ((pid_t)ARG_INT(0) == ctx->task->proc->tgid) {
		/* Own process: the kernel checks the siginfo against the
		 * caller's own credentials (rt_sigqueueinfo(2)). */
		return syscall_continue();
	}
	return signal_outside(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(rt_tgsigqueueinfo)
{
	if ((pid_t)ARG_INT(0) == ctx->task->proc->tgid) {
		/* Own thread group, as for tgkill. */
		return syscall_continue();
	}
	return signal_outside(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(clone)
{
	/* The filter allows clone without namespace or CLONE_UNTRACED flags;
	 * these are the rest. */
	return syscall_deny(ctx, EPERM, "syscall.refused", NULL, NULL,
			    "clone with namespace or untraced flags");
}

SYSCALL_HANDLER(prctl)
{
	char detail[64];

	snprintf(detail, sizeof(detail), "prctl option %d", ARG_INT(0));
	return syscall_deny(ctx, EPERM, "prctl.refused", NULL, NULL, detail);
}

SYSCALL_HANDLER(ioctl)
{
	unsigned int cmd = ARG_UINT(1);
	char detail[64];

	snprintf(detail, sizeof(detail), "ioctl request 0x%x", cmd);
	/* Terminal injection gets EPERM; anything else not on the filter's
	 * list behaves as an unsupported request. */
	if (cmd == 0x5412 /* TIOCSTI */ || cmd == 0x541C /* TIOCLINUX */)
		return syscall_deny(ctx, EPERM, "ioctl.refused", NULL, NULL, detail);
	return syscall_deny(ctx, ENOTTY, "ioctl.refused", NULL, NULL, detail);
}

SYSCALL_HANDLER(fcntl)
{
	char detail[64];

	snprintf(detail, sizeof(detail), "fcntl command %d", ARG_INT(1));
	return syscall_deny(ctx, EPERM, "syscall.refused", NULL, NULL, detail);
}

/*
 * Calls that name a task by pid: the filter lets pid 0 (the caller)
 * through; here the caller naming itself by number is let through as well
 * (CONTINUE on a register value equal to the caller's own tid or tgid: the
 * caller is alive while it waits, so the number cannot be recycled).
 * Anything else would act on another process: refused.
 */
static struct syscall_ret self_only(struct syscall_ctx *ctx, pid_t pid)
{
	char detail[64];

	if (pid == 0 || pid == ctx->task->tid || pid == ctx->task->proc->tgid)
		return syscall_continue();
	snprintf(detail, sizeof(detail), "acts on task %d, not the caller", pid);
	return syscall_deny(ctx, EPERM, "process.outside", NULL, NULL, detail);
}

SYSCALL_HANDLER(get_robust_list)
{
	return self_only(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(sched_getaffinity)
{
	return self_only(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(sched_setaffinity)
{
	return self_only(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(sched_getparam)
{
	return self_only(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(sched_getscheduler)
{
	return self_only(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(sched_getattr)
{
	return self_only(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(sched_rr_get_interval)
{
	return self_only(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(prlimit64)
{
	return self_only(ctx, (pid_t)ARG_INT(0));
}

/* getpriority/setpriority(which, who): who names a process, a process group
 * or a user depending on which (getpriority(2)); only PRIO_PROCESS of the
 * caller itself is let through. */
SYSCALL_HANDLER(getpriority)
{
	if (ARG_INT(0) != 0 /* PRIO_PROCESS */)
		return syscall_deny(ctx, EPERM, "syscall.refused", NULL, NULL,
				    "priority of a group or user");
	return self_only(ctx, (pid_t)ARG_INT(1));
}

SYSCALL_HANDLER(setpriority)
{
	if (ARG_INT(0) != 0 /* PRIO_PROCESS */)
		return syscall_deny(ctx, EPERM, "syscall.refused", NULL, NULL,
				    "priority of a group or user");
	return self_only(ctx, (pid_t)ARG_INT(1));
}

/*
 * Queries about another process: answered for processes of the sandbox
 * (CONTINUE on the register value: a read-only query, the pid pinned by the
 * sentry's pidfd); host processes do not exist for the sandbox (ESRCH, as in
 * a pid namespace), so it cannot enumerate them (catalogue PROC-08).
 */
static struct syscall_ret query_sandbox_only(struct syscall_ctx *ctx, pid_t pid)
{
	char detail[64];

	if (pid == 0 || pid == ctx->task->proc->tgid || sentry_proc_admit(ctx->sentry, pid))
		return syscall_continue();
	snprintf(detail, sizeof(detail), "process %d is not in the sandbox", pid);
	return syscall_deny(ctx, ESRCH, "process.outside", NULL, NULL, detail);
}

SYSCALL_HANDLER(getpgid)
{
	return query_sandbox_only(ctx, (pid_t)ARG_INT(0));
}

SYSCALL_HANDLER(getsid)
{
	return query_sandbox_only(ctx, (pid_t)ARG_INT(0));
}

/* capget(2): the pid is in the header, in guest memory, so the sentry asks
 * the kernel itself with its own copy and writes the answer back. */
SYSCALL_HANDLER(capget)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	char detail[64];
	pid_t pid;
	int r;

	r = guestmem_read(ctx, ARG(0), &hdr, sizeof(hdr));
	if (r < 0)
		return syscall_errno(r == -EFAULT ? EFAULT : -r);
	pid = hdr.pid;
	if (pid != 0 && pid != ctx->task->tid && pid != ctx->task->proc->tgid &&
	    !sentry_proc_admit(ctx->sentry, pid)) {
		snprintf(detail, sizeof(detail), "process %d is not in the sandbox", pid);
		return syscall_deny(ctx, ESRCH, "process.outside", NULL, NULL, detail);
	}
	if (pid == 0)
		hdr.pid = ctx->task->tid;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, ARG(1) ? data : NULL) < 0) {
		int e = errno;

		/* EINVAL reports the preferred version in the header. */
		hdr.pid = pid;
		if (e == EINVAL)
			guestmem_write(ctx, ARG(0), &hdr, sizeof(hdr));
		return syscall_errno(e);
	}
	if (!ARG(1))
		return syscall_value(0);
	/* Version 1 has one data struct, versions 2 and 3 two. */
	r = guestmem_write(ctx, ARG(1), data,
			   hdr.version == _LINUX_CAPABILITY_VERSION_1 ? sizeof(data[0])
								     : sizeof(data));
	return r < 0 ? syscall_errno(-r) : syscall_value(0);
}

/* pidfd_open(2): a pidfd only for a process of the sandbox, opened by the
 * sentry (the pid is pinned by its own pidfd of the process) and injected. */
SYSCALL_HANDLER(pidfd_open)
{
	pid_t pid = (pid_t)ARG_INT(0);
	unsigned int flags = ARG_UINT(1);
	struct sentry_proc *p;
	int fd;

	if (flags & ~(unsigned int)(O_NONBLOCK | PIDFD_THREAD))
		return syscall_errno(EINVAL);
	if (pid <= 0)
		return syscall_errno(EINVAL);
	p = sentry_proc_admit(ctx->sentry, pid);
	if (!p) {
		char detail[64];

		snprintf(detail, sizeof(detail), "process %d is not in the sandbox", pid);
		return syscall_deny(ctx, ESRCH, "process.outside", NULL, NULL, detail);
	}
	fd = (int)syscall(SYS_pidfd_open, pid, flags);
	if (fd < 0)
		return syscall_errno(errno);
	return syscall_inject(fd, true); /* pidfds are always close-on-exec */
}

/* The pid a pidfd refers to (proc(5): fdinfo "Pid:"), -1 when it has
 * exited, or -EBADF when @fd is not a pidfd. */
static int pidfd_pid(int fd)
{
	static const char *const names[] = { "Pid" };
	char path[64];
	long pid;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (sentry_proc_fields(path, names, &pid, 1) < 0)
		return -EBADF;
	return (int)pid;
}

/* pidfd_send_signal(2): the pidfd may only name a sandbox process (pidfds
 * reach the sandbox through pidfd_open above, CLONE_PIDFD of its own
 * children, or fd passing between its processes); the sentry checks the
 * process behind its own copy of the fd and sends the signal itself, with
 * its own copy of the siginfo. */
SYSCALL_HANDLER(pidfd_send_signal)
{
	_cleanup_close_ int local = sentry_task_getfd(ctx, ARG_INT(0));
	siginfo_t info;
	int pid, r;

	if (local < 0)
		return syscall_errno(-local);
	pid = pidfd_pid(local);
	if (pid == -EBADF)
		return syscall_errno(EBADF);
	if (pid < 0)
		return syscall_errno(ESRCH); /* exited */
	if (pid != ctx->task->proc->tgid && !sentry_proc_admit(ctx->sentry, pid))
		return signal_outside(ctx, pid);
	if (ARG(2)) {
		r = guestmem_read(ctx, ARG(2), &info, sizeof(info));
		if (r < 0)
			return syscall_errno(r == -EFAULT ? EFAULT : -r);
	}
	if (syscall(SYS_pidfd_send_signal, local, ARG_INT(1), ARG(2) ? &info : NULL,
		    ARG_UINT(3)) < 0)
		return syscall_errno(errno);
	return syscall_value(0);
}
