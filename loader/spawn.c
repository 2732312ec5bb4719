/*
 * spawn.c - fork the first process of a run and prepare it (see loader.h).
 *
 * Sources: seccomp(2) (SECCOMP_SET_MODE_FILTER, NEW_LISTENER,
 * WAIT_KILLABLE_RECV), prctl(2) (PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG),
 * pidfd_getfd(2), close_range(2), credentials(7).
 */
#include "loader.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"
#include "sentry.h"

/* Steps the child reports over the status pipe when one fails. */
enum loader_step {
	STEP_READY = 0,	/* not a failure: the listener fd number follows */
	STEP_SESSION,
	STEP_FDS,
	STEP_RLIMIT,
	STEP_CREDS,
	STEP_NNP,
	STEP_SECCOMP,
	STEP_HANDOFF,
	STEP_LIMITS,
	STEP_LANDLOCK,
	STEP_EXEC,
};

static const char *const step_names[] = {
	[STEP_READY] = "ready",
	[STEP_SESSION] = "new session",
	[STEP_FDS] = "fd set-up",
	[STEP_RLIMIT] = "resource limits",
	[STEP_CREDS] = "dropping to the sandbox uid/gid",
	[STEP_NNP] = "no_new_privs",
	[STEP_SECCOMP] = "installing the seccomp filter",
	[STEP_HANDOFF] = "handing the listener to the supervisor",
	[STEP_LIMITS] = "setting the resource limits",
	[STEP_LANDLOCK] = "applying the Landlock ruleset",
	[STEP_EXEC] = "executing the program",
};

struct status_msg {
	int step;
	int value;	/* errno, or the listener fd for STEP_READY */
};

/* Fixed fd numbers in the child while it prepares. */
#define CHILD_STATUS_FD 3
#define CHILD_ACK_FD 4
#define CHILD_LANDLOCK_FD 5	/* the Landlock ruleset until applied, when there is one */

static _Noreturn void child_fail(int step, int e)
{
	struct status_msg m = { .step = step, .value = e };

	if (write(CHILD_STATUS_FD, &m, sizeof(m)) < 0) {
		/* nothing left to tell anyone */
	}
	_exit(127);
}

/* Runs in the child between fork and exec: async-signal-safe calls only. */
static _Noreturn void child_main(const struct sentry_config *cfg,
				 const struct loader_filter *filter, pid_t parent, int status_w,
				 int ack_r, int out_w, int err_w)
{
	struct sock_fprog prog = { .len = filter->len, .filter = filter->insns };
	struct status_msg m = { .step = STEP_READY };
	struct rlimit core = { 0, 0 };
	unsigned long flags;
	char ack;
	int lfd, nullfd, landlock_fd = -1;

	if (setsid() < 0)
		child_fail(STEP_SESSION, errno);
	/* The supervisor blocks SIGCHLD, SIGINT, SIGTERM and SIGHUP (it reads
	 * them from a signalfd) and ignores SIGPIPE; a signal mask and ignored
	 * dispositions survive execve (signal(7)), so give the program the
	 * defaults a fresh process has. */
	{
		sigset_t none;

		sigemptyset(&none);
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
			child_fail(STEP_SESSION, errno);
	}

	/* fds: 0 = stdin or /dev/null, 1/2 = pipes, 3/4 = status/ack.  First
	 * move the four to fresh numbers >= 10 (F_DUPFD never clobbers), so
	 * that the dup2 calls below cannot overwrite one another. */
	status_w = fcntl(status_w, F_DUPFD, 10);
	ack_r = fcntl(ack_r, F_DUPFD, 10);
	out_w = fcntl(out_w, F_DUPFD, 10);
	err_w = fcntl(err_w, F_DUPFD, 10);
	if (cfg->landlock)
		landlock_fd = fcntl(cfg->landlock_fd, F_DUPFD, 10);
	if (status_w < 0 || ack_r < 0 || out_w < 0 || err_w < 0 || dup2(out_w, 1) < 0 ||
	    dup2(err_w, 2) < 0 || dup2(status_w, CHILD_STATUS_FD) < 0 ||
	    dup2(ack_r, CHILD_ACK_FD) < 0)
		_exit(127);
	if (!cfg->pass_stdin) {
		nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nullfd < 0 || dup2(nullfd, 0) < 0)
			child_fail(STEP_FDS, errno);
	}
	if (cfg->landlock && (landlock_fd < 0 || dup2(landlock_fd, CHILD_LANDLOCK_FD) < 0))
		child_fail(STEP_FDS, errno);
	if (syscall(SYS_close_range, cfg->landlock ? CHILD_LANDLOCK_FD + 1 : CHILD_ACK_FD + 1,
		    ~0U, 0) < 0)
		child_fail(STEP_FDS, errno);
	if (fcntl(CHILD_STATUS_FD, F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(CHILD_ACK_FD, F_SETFD, FD_CLOEXEC) < 0)
		child_fail(STEP_FDS, errno);

	if (setrlimit(RLIMIT_CORE, &core) < 0)
		child_fail(STEP_RLIMIT, errno);
	/* The kernel's cwd is never used for the sandbox's paths (the sentry
	 * keeps a virtual one); do not keep a host directory pinned. */
	if (chdir("/") < 0)
		child_fail(STEP_FDS, errno);

	/* A private network namespace when the kernel lets us make one; the
	 * sentry checks the outcome and refuses loopback without it. */
	if (loader_netns_enter() < 0) {
		/* not fatal: see loader_netns_enter() */
	}

	/* Never run sandboxed code as root (DESIGN.md invariant 6). */
	if (geteuid() == 0 || getegid() == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(cfg->gid, cfg->gid, cfg->gid) < 0 ||
		    setresuid(cfg->uid, cfg->uid, cfg->uid) < 0)
			child_fail(STEP_CREDS, errno);
	}
	if (geteuid() == 0 || getuid() == 0)
		child_fail(STEP_CREDS, EPERM);
	/* After the uid change: RLIMIT_NPROC then counts the sandbox uid. */
	if (loader_rlimits_apply(&cfg->limits) < 0)
		child_fail(STEP_LIMITS, errno);
	/* Die with the supervisor (besides PTRACE_O_EXITKILL); set after the
	 * credential change, which clears it (prctl(2)), then check the
	 * supervisor did not die already. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(STEP_NNP, errno);
	if (cfg->landlock) {
		if (loader_landlock_apply(CHILD_LANDLOCK_FD) < 0)
			child_fail(STEP_LANDLOCK, errno);
		close(CHILD_LANDLOCK_FD);
	}

	flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (lfd < 0 && errno == EINVAL) {
		/* Kernels before 5.19 lack WAIT_KILLABLE_RECV. */
		flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
		lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	}
	if (lfd < 0)
		child_fail(STEP_SECCOMP, errno);

	/* From here on every call is filtered.  write, read and close are
	 * allowed in BPF; the parent takes the listener with pidfd_getfd. */
	m.value = lfd;
	if (write(CHILD_STATUS_FD, &m, sizeof(m)) != sizeof(m))
		_exit(127);
	if (read(CHILD_ACK_FD, &ack, 1) != 1)
		_exit(127);
	close(lfd);
	close(CHILD_ACK_FD);

	/* The loader's exec: reaches the sentry, which lets only this first
	 * one through (syscalls/process.c). */
	execve(cfg->exec_path, cfg->argv, cfg->envp);
	child_fail(STEP_EXEC, errno);
}

int loader_status_read(int status_fd, struct pv_error *err)
{
	struct status_msg m;
	ssize_t n;

	do
		n = read(status_fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n != sizeof(m))
		return pv_error_set(err, EPROTO, "sandbox set-up: truncated status message");
	if (m.step <= STEP_READY || m.step > STEP_EXEC)
		return pv_error_set(err, EPROTO, "sandbox set-up: unknown step %d", m.step);
	return pv_error_set(err, m.value, "sandbox set-up failed while %s: %s",
			    step_names[m.step], strerror(m.value));
}

static void kill_and_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

int loader_spawn(const struct sentry_config *cfg, const struct loader_filter *filter,
		 struct loader_child *child, struct pv_error *err)
{
	int status[2] = { -1, -1 }, ack[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	struct status_msg m;
	pid_t parent = getpid(), pid;
	int r = 0;
	ssize_t n;

	memset(child, 0, sizeof(*child));
	child->pidfd = child->notify_fd = child->out_fd = child->err_fd = child->status_fd = -1;

	if (pipe2(status, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		r = pv_error_set(err, errno, "pipe2: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		r = pv_error_set(err, errno, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_main(cfg, filter, parent, status[1], ack[0], out[1], errp[1]);

	child->pid = pid;
	/* Trace it before it runs anything of the sandbox: every later task is
	 * attached from its creation, and dies with the supervisor
	 * (PTRACE_O_EXITKILL).  ptrace(2), PTRACE_SEIZE. */
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)sentry_ptrace_options()) < 0) {
		r = pv_error_set(err, errno, "PTRACE_SEIZE of the sandbox: %s%s", strerror(errno),
				 errno == EPERM ? " (ptrace not permitted here: Yama or a container "
						  "profile?)" : "");
		goto fail;
	}
	close(status[1]);
	status[1] = -1;
	close(ack[0]);
	ack[0] = -1;
	close(out[1]);
	out[1] = -1;
	close(errp[1]);
	errp[1] = -1;

	do
		n = read(status[0], &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(m) || m.step != STEP_READY) {
		if (n == sizeof(m) && m.step > STEP_READY && m.step <= STEP_EXEC)
			r = pv_error_set(err, m.value, "sandbox set-up failed while %s: %s",
					 step_names[m.step], strerror(m.value));
		else
			r = pv_error_set(err, EPROTO, "sandbox set-up: child exited early");
		goto fail;
	}
	child->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (child->pidfd < 0) {
		r = pv_error_set(err, errno, "pidfd_open: %s", strerror(errno));
		goto fail;
	}
	child->notify_fd = (int)syscall(SYS_pidfd_getfd, child->pidfd, m.value, 0);
	if (child->notify_fd < 0) {
		r = pv_error_set(err, errno, "pidfd_getfd of the seccomp listener: %s%s",
				 strerror(errno),
				 errno == EPERM ? " (ptrace access to the child denied: Yama?)" : "");
		goto fail;
	}
	if (write(ack[1], "", 1) != 1) {
		r = pv_error_set(err, errno, "cannot release the child: %s", strerror(errno));
		goto fail;
	}
	child->out_fd = out[0];
	child->err_fd = errp[0];
	child->status_fd = status[0];
	out[0] = errp[0] = status[0] = -1;
	goto out;

fail:
	kill_and_reap(pid);
	if (child->pidfd >= 0)
		close(child->pidfd);
	if (child->notify_fd >= 0)
		close(child->notify_fd);
	child->pidfd = child->notify_fd = -1;
	child->pid = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (status[i] >= 0)
			close(status[i]);
		if (ack[i] >= 0)
			close(ack[i]);
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return r;
}
