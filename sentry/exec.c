/*
 * exec.c - race-free exec for the sandbox (design: docs/exec.md).
 *
 * With seccomp notification alone, an exec cannot be checked safely: after
 * CONTINUE the kernel re-reads the path (and the script's "#!" line, and
 * the program's PT_INTERP) from memory and files the sandbox can change
 * (seccomp_unotify(2); catalogue SUP-01/02).  The sentry therefore never
 * lets the kernel read anything the sandbox chose:
 *
 *  1. The handler copies path, argv and envp once, resolves the path in the
 *     view, opens the program itself and checks the exec policy on that open
 *     file (syscalls/process.c).  "#!" scripts are interpreted by the
 *     sentry, so the kernel only ever execs an ELF file the sentry opened.
 *  2. Every other task that shares the caller's memory (its threads, and a
 *     vfork parent's threads) is stopped with PTRACE_INTERRUPT: nobody can
 *     write, unmap or remap the caller's memory any more.
 *  3. The fd is installed in the caller with SECCOMP_IOCTL_NOTIF_ADDFD, the
 *     notification is answered (error) with an interrupt pending, so the
 *     caller stops right after the trapped instruction.
 *  4. With the caller in a ptrace-stop, the sentry makes it run mmap() for a
 *     fresh private anonymous region, writes "" and its own argv/envp copies
 *     there, and points the caller back at its syscall instruction as
 *     execveat(fd, "", argv', envp', AT_EMPTY_PATH).
 *  5. That call traps again; the sentry lets exactly it through (CONTINUE),
 *     recognising it by tid, syscall number and every register: fd, the
 *     address of "", argv', envp' and flags.  Its memory is private to the
 *     caller's mm, whose every user is stopped: nothing can change it before
 *     the kernel reads it.
 *  6. On success the kernel kills the other threads (de_thread) and reports
 *     PTRACE_EVENT_EXEC; on failure the sentry closes the fd, unmaps the
 *     region, restores the caller's registers with execve's error, and
 *     resumes everyone.
 *
 * The sentry waits synchronously for the stops of the tasks involved (each
 * is a bounded kernel transition); wait(2) statuses of other tasks seen
 * meanwhile are deferred and handled afterwards in order, and notifications
 * of other tasks stay queued in the kernel until the loop reads them.
 * Sources: ptrace(2) (PTRACE_INTERRUPT, PTRACE_SYSCALL, GETREGS/SETREGS,
 * "Syscall-stops"), execveat(2), seccomp_unotify(2), kcmp(2) (KCMP_VM).
 */
#include "sentry.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

#define EXEC_STOP_TIMEOUT_NS 5000000000ULL

static void defer(struct sentry *s, pid_t pid, int status)
{
	if (s->ndeferred == s->cap_deferred) {
		size_t cap = s->cap_deferred ? s->cap_deferred * 2 : 32;
		struct sentry_wait_event *n = realloc(s->deferred, cap * sizeof(*n));

		if (!n) {
			/* Cannot keep it: handle it now rather than lose it. */
			sentry_ptrace_event(s, pid, status);
			return;
		}
		s->deferred = n;
		s->cap_deferred = cap;
	}
	s->deferred[s->ndeferred].pid = pid;
	s->deferred[s->ndeferred].status = status;
	s->ndeferred++;
}

/*
 * Wait for the next wait(2) status of @pid (or of @alt, when > 0: the
 * thread-group leader, whose tid an exec'ing thread takes over), deferring
 * others'.  Returns the status, or -ETIMEDOUT / -ECHILD.
 */
static int wait_for2(struct sentry *s, pid_t pid, pid_t alt, uint64_t deadline, pid_t *who)
{
	int status;
	pid_t got;

	for (;;) {
		got = waitpid(-1, &status, WNOHANG | __WALL);
		if (got == pid || (alt > 0 && got == alt)) {
			if (who)
				*who = got;
			return status;
		}
		if (got > 0) {
			defer(s, got, status);
			continue;
		}
		if (got < 0 && errno != EINTR)
			return -ECHILD;
		if (sentry_now_ns() > deadline)
			return -ETIMEDOUT;
		usleep(50);
	}
}

static int wait_for(struct sentry *s, pid_t pid, uint64_t deadline)
{
	return wait_for2(s, pid, 0, deadline, NULL);
}

/* The deferred status that stopped @pid, if any. */
static bool deferred_stop(struct sentry *s, pid_t pid)
{
	for (size_t i = 0; i < s->ndeferred; i++)
		if (s->deferred[i].pid == pid && WIFSTOPPED(s->deferred[i].status))
			return true;
	return false;
}

static bool deferred_exit(struct sentry *s, pid_t pid)
{
	for (size_t i = 0; i < s->ndeferred; i++)
		if (s->deferred[i].pid == pid && !WIFSTOPPED(s->deferred[i].status))
			return true;
	return false;
}

/*
 * Stop every known task other than @self whose memory is @self's (kcmp
 * KCMP_VM).  Returns 0 once all are in a ptrace-stop (their statuses are
 * deferred), or -EAGAIN.
 */
static int freeze_mm(struct sentry *s, pid_t self)
{
	pid_t *pending = NULL;
	size_t n = 0, cap = 0;
	uint64_t deadline = sentry_now_ns() + EXEC_STOP_TIMEOUT_NS;
	int r = 0;

	for (size_t h = 0; h < PV_ARRAY_SIZE(s->tasks); h++) {
		for (struct sentry_task *t = s->tasks[h]; t; t = t->next) {
			/* Blocked tasks cannot run user code until the sentry
			 * or the exec answers them: a vfork parent waiting for
			 * its child, a task whose notification the sentry holds. */
			if (t->tid == self || t->vfork_child > 0 || sentry_notif_held(s, t->tid) ||
			    syscall(SYS_kcmp, self, t->tid, KCMP_VM, 0, 0) != 0)
				continue;
			if (n == cap) {
				pid_t *np;

				cap = cap ? cap * 2 : 16;
				np = realloc(pending, cap * sizeof(*np));
				if (!np) {
					free(pending);
					return -EAGAIN;
				}
				pending = np;
			}
			pending[n++] = t->tid;
			/* A listening (group-stopped) task is already stopped;
			 * the interrupt makes it report again. */
			ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
		}
	}
	for (size_t i = 0; i < n; i++) {
		while (!deferred_stop(s, pending[i]) && !deferred_exit(s, pending[i])) {
			int st = wait_for(s, pending[i], deadline);

			if (st < 0) {
				r = -EAGAIN;
				goto out;
			}
			defer(s, pending[i], st);
		}
	}
out:
	free(pending);
	return r;
}

/* Run one syscall in stopped tracee @tid with @regs (rip already at the
 * syscall instruction); returns its result in *@ret.  The tracee ends in
 * its syscall-exit-stop. */
static int inject_syscall(struct sentry *s, pid_t tid, struct user_regs_struct *regs,
			  long *ret)
{
	uint64_t deadline = sentry_now_ns() + EXEC_STOP_TIMEOUT_NS;
	int st;

	if (ptrace(PTRACE_SETREGS, tid, 0, regs) < 0)
		return -errno;
	for (int stop = 0; stop < 2; stop++) {
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0)
			return -errno;
		st = wait_for(s, tid, deadline);
		if (st < 0)
			return st;
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80))
			return -EINTR; /* killed, or a signal: give up */
	}
	if (ptrace(PTRACE_GETREGS, tid, 0, regs) < 0)
		return -errno;
	*ret = (long)regs->rax;
	return 0;
}

/* Bytes needed to lay out "" + argv + envp for the new program. */
static size_t layout_size(char *const *argv, char *const *envp)
{
	size_t sz = 16, n = 0;

	for (size_t i = 0; argv[i]; i++, n++)
		sz += strlen(argv[i]) + 1;
	for (size_t i = 0; envp[i]; i++, n++)
		sz += strlen(envp[i]) + 1;
	sz += (n + 2) * sizeof(uint64_t) + 16;
	return (sz + 4095) & ~(size_t)4095;
}

/* Build the region image: [ "" | argv ptrs | envp ptrs | strings ]. */
static char *layout_build(uint64_t base, size_t size, char *const *argv, char *const *envp,
			  uint64_t *argv_at, uint64_t *envp_at)
{
	size_t nargv = 0, nenvp = 0, off;
	char *img = calloc(1, size);
	uint64_t *ptrs;

	if (!img)
		return NULL;
	while (argv[nargv])
		nargv++;
	while (envp[nenvp])
		nenvp++;
	*argv_at = base + 16;
	*envp_at = *argv_at + (nargv + 1) * sizeof(uint64_t);
	off = 16 + (nargv + nenvp + 2) * sizeof(uint64_t);
	ptrs = (uint64_t *)(img + 16);
	for (size_t i = 0; i < nargv; i++) {
		size_t len = strlen(argv[i]) + 1;

		ptrs[i] = base + off;
		memcpy(img + off, argv[i], len);
		off += len;
	}
	ptrs[nargv] = 0;
	for (size_t i = 0; i < nenvp; i++) {
		size_t len = strlen(envp[i]) + 1;

		ptrs[nargv + 1 + i] = base + off;
		memcpy(img + off, envp[i], len);
		off += len;
	}
	ptrs[nargv + 1 + nenvp] = 0;
	return img;
}

/* The rewritten call the sentry expects from the caller. */
struct pending_exec {
	pid_t tid;
	uint64_t fd, path, argv, envp;
};

static void answer(int notify_fd, uint64_t id, int error, bool cont)
{
	struct seccomp_notif_resp resp = { .id = id };

	if (cont)
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else
		resp.error = -error;
	ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/*
 * Receive notifications until the caller's arrives, and answer it with
 * CONTINUE only if it is exactly the rewritten call.  Notifications of
 * other tasks are held (sentry_notif_hold) and handled by the main loop
 * after the exec: their tasks wait in the kernel meanwhile.
 */
static int let_through(struct sentry *s, const struct pending_exec *want, pid_t waitpid_of)
{
	uint64_t deadline = sentry_now_ns() + EXEC_STOP_TIMEOUT_NS;

	while (sentry_now_ns() < deadline) {
		struct pollfd pfd = { .fd = s->notify_fd, .events = POLLIN };
		struct seccomp_notif req;
		int st;

		if (poll(&pfd, 1, 10) <= 0) {
			/* The task may have died (or been stopped) instead. */
			pid_t got = waitpid(waitpid_of, &st, WNOHANG | __WALL);

			if (got == waitpid_of) {
				defer(s, got, st);
				return -ECHILD;
			}
			continue;
		}
		memset(&req, 0, sizeof(req));
		if (ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		if ((pid_t)req.pid != want->tid) {
			if (sentry_notif_hold(s, &req) < 0)
				answer(s->notify_fd, req.id, EAGAIN, false);
			continue;
		}
		/* The caller's own trap: only the exact rewritten call passes.
		 * Every register was written by the sentry and every task that
		 * could change the memory they point to is stopped; the kernel
		 * reads the sentry's bytes. */
		if (req.data.nr == __NR_execveat && req.data.args[0] == want->fd &&
		    req.data.args[1] == want->path && req.data.args[2] == want->argv &&
		    req.data.args[3] == want->envp && req.data.args[4] == AT_EMPTY_PATH) {
			answer(s->notify_fd, req.id, 0, true);
			return 0;
		}
		answer(s->notify_fd, req.id, EPERM, false);
		return -EPERM;
	}
	return -ETIMEDOUT;
}

/* Restore @tid after a failed rewrite: close the fd, unmap the region,
 * return -@err from the original execve.  Best effort; the task is ours. */
static void undo(struct sentry *s, pid_t tid, const struct user_regs_struct *orig, long fd,
		 uint64_t region, size_t size, int err)
{
	struct user_regs_struct r = *orig;
	long ret;

	if (fd >= 0) {
		r = *orig;
		r.rip -= 2;
		r.rax = __NR_close;
		r.rdi = (unsigned long)fd;
		inject_syscall(s, tid, &r, &ret);
	}
	if (region) {
		r = *orig;
		r.rip -= 2;
		r.rax = __NR_munmap;
		r.rdi = region;
		r.rsi = size;
		inject_syscall(s, tid, &r, &ret);
	}
	r = *orig;
	r.rax = (unsigned long)(long)-err;
	ptrace(PTRACE_SETREGS, tid, 0, &r);
}

struct syscall_ret sentry_exec(struct syscall_ctx *ctx, int binfd, char *const *argv,
			       char *const *envp)
{
	struct sentry *s = ctx->sentry;
	pid_t tid = (pid_t)ctx->req->pid;
	struct user_regs_struct orig, r;
	struct seccomp_notif_addfd addfd = {
		.id = ctx->req->id,
		.srcfd = (uint32_t)binfd,
		.newfd_flags = O_CLOEXEC,
	};
	struct pending_exec want = { .tid = tid };
	uint64_t deadline = sentry_now_ns() + EXEC_STOP_TIMEOUT_NS;
	uint64_t region = 0, argv_at, envp_at;
	size_t size = layout_size(argv, envp);
	char *img = NULL;
	long ret, insn;
	pid_t reporter = tid;
	int fd, st, r_;
	struct syscall_ret out = { .inject_fd = -1, .answered = true };

	/* 2. Nobody else may touch the caller's memory from now on. */
	if (freeze_mm(s, tid) < 0) {
		close(binfd);
		sentry_ptrace_drain(s);
		return syscall_errno(EAGAIN);
	}
	/* 3. The program's fd, then the answer with an interrupt pending. */
	fd = ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
	close(binfd);
	if (fd < 0) {
		int e = errno;

		sentry_ptrace_drain(s);
		return syscall_errno(e == ENOENT ? ESRCH : e);
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		sentry_ptrace_drain(s);
		return syscall_errno(EAGAIN); /* the fd stays: O_CLOEXEC, harmless */
	}
	answer(s->notify_fd, ctx->req->id, ENOSYS, false);
	st = wait_for(s, tid, deadline);
	if (st < 0 || !WIFSTOPPED(st) || (st >> 16) != PTRACE_EVENT_STOP) {
		/* Died, or stopped for something else first: give up; the
		 * caller saw execve fail with ENOSYS.  Fail closed. */
		if (st >= 0)
			defer(s, tid, st);
		goto resume;
	}
	if (ptrace(PTRACE_GETREGS, tid, 0, &orig) < 0)
		goto resume;
	/* The trapped instruction must be `syscall` (0f 05) just before rip. */
	errno = 0;
	insn = ptrace(PTRACE_PEEKTEXT, tid, orig.rip - 2, 0);
	if (errno || (insn & 0xffff) != 0x050f)
		goto resume_restore;

	/* 4. A private region for the new program's strings. */
	r = orig;
	r.rip -= 2;
	r.rax = __NR_mmap;
	r.rdi = 0;
	r.rsi = size;
	r.rdx = PROT_READ | PROT_WRITE;
	r.r10 = MAP_PRIVATE | MAP_ANONYMOUS;
	r.r8 = (unsigned long)-1;
	r.r9 = 0;
	if (inject_syscall(s, tid, &r, &ret) < 0 || ret < 0 || (unsigned long)ret > -4096UL)
		goto resume_restore;
	region = (uint64_t)ret;
	img = layout_build(region, size, argv, envp, &argv_at, &envp_at);
	if (!img || guestmem_write_stopped(tid, region, img, size) < 0)
		goto fail_undo;

	/* 5. Back to the syscall instruction, as execveat on our bytes. */
	r = orig;
	r.rip -= 2;
	r.rax = __NR_execveat;
	r.orig_rax = (unsigned long)-1;
	r.rdi = (unsigned long)fd;
	r.rsi = region;
	r.rdx = argv_at;
	r.r10 = envp_at;
	r.r8 = AT_EMPTY_PATH;
	want.fd = (uint64_t)fd;
	want.path = region;
	want.argv = argv_at;
	want.envp = envp_at;
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0 || ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0)
		goto fail_undo;
	st = wait_for(s, tid, deadline); /* syscall-enter-stop */
	if (st < 0 || !WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80)) {
		if (st >= 0)
			defer(s, tid, st);
		goto resume;
	}
	if (ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0)
		goto resume;
	r_ = let_through(s, &want, tid);
	if (r_ == -ECHILD)
		goto resume;
	/* 6. Success: PTRACE_EVENT_EXEC (then the exit stop); failure: the
	 * syscall-exit-stop with the error. */
	st = wait_for2(s, tid, ctx->task->proc->tgid, sentry_now_ns() + EXEC_STOP_TIMEOUT_NS,
		       &reporter);
	if (st < 0)
		goto resume;
	if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_EXEC) {
		/* Reported under the leader's tid when a thread exec'd; the
		 * normal path follows the exec and resumes the task. */
		defer(s, reporter, st);
		free(img);
		sentry_ptrace_drain(s);
		return out;
	}
	if (WIFSTOPPED(st) && WSTOPSIG(st) == (SIGTRAP | 0x80)) {
		struct user_regs_struct now;
		int err = EACCES;

		if (ptrace(PTRACE_GETREGS, tid, 0, &now) == 0 && (long)now.rax < 0)
			err = (int)-(long)now.rax;
		if (r_ < 0)
			err = EACCES;
		undo(s, tid, &orig, fd, region, size, err);
		ptrace(PTRACE_CONT, tid, 0, 0);
		free(img);
		sentry_ptrace_drain(s);
		return out;
	}
	defer(s, tid, st);
	goto resume;

fail_undo:
	undo(s, tid, &orig, fd, region, size, ENOMEM);
	ptrace(PTRACE_CONT, tid, 0, 0);
	free(img);
	sentry_ptrace_drain(s);
	return out;
resume_restore:
	r = orig;
	ptrace(PTRACE_SETREGS, tid, 0, &r);
	ptrace(PTRACE_CONT, tid, 0, 0);
resume:
	free(img);
	sentry_ptrace_drain(s);
	return out;
}
