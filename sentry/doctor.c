/*
 * doctor.c - what this machine can enforce: kernel features probed by
 * trying them (never inferred from the kernel version), the protections
 * that follow, and the refusal of `pyvisor run` when a protection the
 * policy asks for is missing (DESIGN.md invariant 8).
 *
 * Every probe runs in a short-lived child process, so that a filter, a
 * namespace or a tracer never sticks to the supervisor.  The probes:
 *
 *  - seccomp user notification, WAIT_KILLABLE_RECV, SYNC_WAKE_UP, ADDFD and
 *    ADDFD_FLAG_SEND: a child installs a filter with a listener that traps
 *    getppid(2), forks a grandchild that calls it, and answers the
 *    notification by injecting an fd (seccomp_unotify(2));
 *  - pidfd_getfd(2) and ptrace(2) PTRACE_SEIZE on a child that waits;
 *  - user, pid and network namespaces: unshare(2) in a child;
 *  - Landlock: landlock_create_ruleset(2) with LANDLOCK_CREATE_RULESET_VERSION;
 *  - openat2(2) with RESOLVE_NO_SYMLINKS;
 *  - cgroup v2 delegation: our cgroup (cgroups(7), /proc/self/cgroup) on a
 *    cgroup2 mount offers the memory and pids controllers and we can create
 *    a child cgroup in it.
 */
#include "sentry.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"
#include "loader.h"

static const struct {
	const char *name;
	const char *title;
} feature_info[DOCTOR_NFEATURES] = {
	[DOCTOR_UNOTIFY] = { "seccomp_user_notif", "seccomp user notification" },
	[DOCTOR_WAIT_KILLABLE] = { "wait_killable_recv", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV" },
	[DOCTOR_SYNC_WAKE_UP] = { "sync_wake_up", "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP" },
	[DOCTOR_ADDFD] = { "addfd", "SECCOMP_IOCTL_NOTIF_ADDFD" },
	[DOCTOR_ADDFD_SEND] = { "addfd_send", "SECCOMP_ADDFD_FLAG_SEND" },
	[DOCTOR_PIDFD_GETFD] = { "pidfd_getfd", "pidfd_open + pidfd_getfd" },
	[DOCTOR_PTRACE] = { "ptrace", "ptrace of the sandbox (Yama)" },
	[DOCTOR_USERNS] = { "userns", "user namespaces" },
	[DOCTOR_PIDNS] = { "pidns", "pid namespaces (in a user namespace)" },
	[DOCTOR_NETNS] = { "netns", "network namespaces (in a user namespace)" },
	[DOCTOR_LANDLOCK] = { "landlock", "Landlock" },
	[DOCTOR_OPENAT2] = { "openat2", "openat2 with RESOLVE_*" },
	[DOCTOR_CGROUP] = { "cgroup_delegation", "cgroup v2 delegation (memory, pids)" },
};

#define F(x) (1U << (x))

static const struct doctor_protection protections[] = {
	{ "interposition", "syscall interposition: every path, fd and process call trapped "
			   "and answered by the sentry, fds injected atomically",
	  F(DOCTOR_UNOTIFY) | F(DOCTOR_ADDFD) | F(DOCTOR_ADDFD_SEND) | F(DOCTOR_PIDFD_GETFD), true },
	{ "safe-artifacts", "artifacts written beneath --output-dir only (openat2 RESOLVE_BENEATH)",
	  F(DOCTOR_OPENAT2), true },
	{ "killable-wait", "a signal never turns a trapped call into a spurious EINTR",
	  F(DOCTOR_WAIT_KILLABLE), false },
	{ "fast-wakeups", "same-CPU wake-ups for trapped calls (speed only)",
	  F(DOCTOR_SYNC_WAKE_UP), false },
	{ "landlock", "Landlock ruleset on the sandbox: no host path opens even past a filter bug",
	  F(DOCTOR_LANDLOCK), false },
	{ "userns", "per-run user namespace: --max-procs counts the run's tasks only",
	  F(DOCTOR_USERNS), false },
	{ "pidns", "private pid namespace", F(DOCTOR_USERNS) | F(DOCTOR_PIDNS), false },
	{ "netns", "private network namespace (loopback only)",
	  F(DOCTOR_USERNS) | F(DOCTOR_NETNS), false },
	{ "ptrace", "ptrace of the sandbox (exact process events)", F(DOCTOR_PTRACE), false },
	{ "cgroup", "kernel-enforced memory and task limits for the whole run (cgroup v2)",
	  F(DOCTOR_CGROUP), false },
};

const struct doctor_protection *doctor_protections(size_t *n)
{
	*n = PV_ARRAY_SIZE(protections);
	return protections;
}

const char *doctor_feature_name(enum doctor_feature f)
{
	return feature_info[f].name;
}

static void set(struct doctor_report *r, enum doctor_feature f, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set(struct doctor_report *r, enum doctor_feature f, bool ok, const char *fmt, ...)
{
	va_list ap;

	r->f[f].probed = true;
	r->f[f].ok = ok;
	va_start(ap, fmt);
	vsnprintf(r->f[f].detail, sizeof(r->f[f].detail), fmt, ap);
	va_end(ap);
}

/* What the seccomp probe child reports over its pipe. */
struct seccomp_answer {
	int install_err;	/* 0, or errno of installing the filter */
	int killable_err;	/* 0, or errno with WAIT_KILLABLE_RECV */
	int sync_err;		/* 0, or errno of SET_FLAGS(SYNC_WAKE_UP) */
	int recv_err;		/* 0, or errno of NOTIF_RECV */
	int addfd_err;		/* 0, or errno of ADDFD without flags */
	int send_err;		/* 0, or errno of ADDFD with FLAG_SEND */
	int got_fd;		/* the trapped call returned an injected fd */
};

static int wait_exit(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, __WALL) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The grandchild: two trapped getppid() calls; exit 0 if the second (the
 * FLAG_SEND one) returned an fd, 1 otherwise. */
static _Noreturn void seccomp_grandchild(void)
{
	long a = syscall(SYS_getppid);
	long b = syscall(SYS_getppid);

	(void)a;
	_exit(b >= 0 && fcntl((int)b, F_GETFD) >= 0 ? 0 : 1);
}

/* Answer one notification of @lfd: inject /dev/null with @flags (ADDFD),
 * then answer the call if FLAG_SEND did not. */
static int seccomp_answer_one(int lfd, unsigned int flags, int *recv_err)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	struct seccomp_notif_addfd addfd = { 0 };
	int nullfd, r, e = 0;

	struct pollfd pfd = { .fd = lfd, .events = POLLIN };

	/* Never hang the caller: the grandchild may have died (an outer
	 * filter, a signal) before its call. */
	if (poll(&pfd, 1, 2000) != 1) {
		*recv_err = ETIMEDOUT;
		return -ETIMEDOUT;
	}
	memset(&req, 0, sizeof(req));
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
		*recv_err = errno;
		return -errno;
	}
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	addfd.id = req.id;
	addfd.flags = flags;
	addfd.srcfd = (__u32)nullfd;
	r = ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
	if (r < 0)
		e = errno;
	close(nullfd);
	if (r >= 0 && (flags & SECCOMP_ADDFD_FLAG_SEND))
		return 0;
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	resp.val = r >= 0 ? r : -1;
	ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	return e ? -e : 0;
}

static _Noreturn void seccomp_child(int w)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = PV_ARRAY_SIZE(insns), .filter = insns };
	struct seccomp_answer a = { 0 };
	unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER |
			      SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	pid_t g;
	int lfd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		a.install_err = errno;
		goto report;
	}
	lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (lfd < 0 && errno == EINVAL) {
		a.killable_err = EINVAL;
		flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
		lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	}
	if (lfd < 0) {
		a.install_err = errno;
		goto report;
	}
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (unsigned long)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) <
	    0)
		a.sync_err = errno;
	g = fork();
	if (g < 0) {
		a.install_err = errno;
		goto report;
	}
	if (g == 0)
		seccomp_grandchild();
	a.addfd_err = -seccomp_answer_one(lfd, 0, &a.recv_err);
	if (!a.recv_err)
		a.send_err = -seccomp_answer_one(lfd, SECCOMP_ADDFD_FLAG_SEND, &a.recv_err);
	if (a.recv_err)
		kill(g, SIGKILL);
	a.got_fd = wait_exit(g) == 0;
report:
	if (write(w, &a, sizeof(a)) != sizeof(a))
		_exit(2);
	_exit(0);
}

static void probe_seccomp(struct doctor_report *r)
{
	struct seccomp_answer a = { 0 };
	int p[2];
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		set(r, DOCTOR_UNOTIFY, false, "cannot start the probe: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		close(p[0]);
		seccomp_child(p[1]);
	}
	close(p[1]);
	do
		n = read(p[0], &a, sizeof(a));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	wait_exit(pid);
	if (n != sizeof(a)) {
		set(r, DOCTOR_UNOTIFY, false, "the probe died");
		return;
	}
	if (a.install_err) {
		set(r, DOCTOR_UNOTIFY, false, "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): %s",
		    strerror(a.install_err));
		set(r, DOCTOR_WAIT_KILLABLE, false, "needs seccomp user notification");
		set(r, DOCTOR_SYNC_WAKE_UP, false, "needs seccomp user notification");
		set(r, DOCTOR_ADDFD, false, "needs seccomp user notification");
		set(r, DOCTOR_ADDFD_SEND, false, "needs seccomp user notification");
		return;
	}
	if (a.recv_err)
		set(r, DOCTOR_UNOTIFY, false, "SECCOMP_IOCTL_NOTIF_RECV: %s", strerror(a.recv_err));
	else
		set(r, DOCTOR_UNOTIFY, true, "listener, RECV and SEND work");
	set(r, DOCTOR_WAIT_KILLABLE, !a.killable_err, "%s",
	    a.killable_err ? "filter flag rejected (EINVAL): Linux < 5.19" : "filter flag accepted");
	set(r, DOCTOR_SYNC_WAKE_UP, !a.sync_err, "%s",
	    a.sync_err ? strerror(a.sync_err) : "SECCOMP_IOCTL_NOTIF_SET_FLAGS accepted");
	set(r, DOCTOR_ADDFD, !a.recv_err && !a.addfd_err, "%s",
	    a.addfd_err ? strerror(a.addfd_err) : "fd injected");
	set(r, DOCTOR_ADDFD_SEND, !a.recv_err && !a.send_err && a.got_fd, "%s",
	    a.send_err ? strerror(a.send_err)
	    : a.got_fd ? "fd injected and call answered atomically"
		       : "the call did not return the injected fd");
}

/* pidfd_getfd and PTRACE_SEIZE on a child that waits for us. */
static void probe_pidfd_ptrace(struct doctor_report *r)
{
	char scope[16] = "";
	int p[2], pidfd, fd;
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		set(r, DOCTOR_PIDFD_GETFD, false, "cannot start the probe: %s", strerror(errno));
		set(r, DOCTOR_PTRACE, false, "cannot start the probe");
		return;
	}
	if (pid == 0) {
		char c;

		close(p[1]);
		n = read(p[0], &c, 1);
		_exit(n == 1 ? 0 : 1);
	}
	close(p[0]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		set(r, DOCTOR_PIDFD_GETFD, false, "pidfd_open: %s", strerror(errno));
	} else {
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0);
		if (fd < 0)
			set(r, DOCTOR_PIDFD_GETFD, false, "pidfd_getfd: %s", strerror(errno));
		else
			set(r, DOCTOR_PIDFD_GETFD, true, "fd taken from a child");
		if (fd >= 0)
			close(fd);
		close(pidfd);
	}

	fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, scope, sizeof(scope) - 1);
		scope[n > 0 ? n - 1 : 0] = '\0';
		close(fd);
	}
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)PTRACE_O_EXITKILL) < 0)
		set(r, DOCTOR_PTRACE, false, "PTRACE_SEIZE: %s%s%s", strerror(errno),
		    scope[0] ? ", Yama ptrace_scope " : "", scope);
	else
		set(r, DOCTOR_PTRACE, true, "PTRACE_SEIZE of a child works%s%s",
		    scope[0] ? ", Yama ptrace_scope " : " (no Yama)", scope);
	kill(pid, SIGKILL);
	close(p[1]);
	wait_exit(pid);
}

static void probe_namespaces(struct doctor_report *r)
{
	int res[3] = { -1, -1, -1 };
	int p[2];
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		set(r, DOCTOR_USERNS, false, "cannot start the probe: %s", strerror(errno));
		set(r, DOCTOR_PIDNS, false, "cannot start the probe");
		set(r, DOCTOR_NETNS, false, "cannot start the probe");
		return;
	}
	if (pid == 0) {
		int out[3];

		close(p[0]);
		out[0] = unshare(CLONE_NEWUSER) < 0 ? errno : 0;
		out[1] = out[0] ? -1 : unshare(CLONE_NEWPID) < 0 ? errno : 0;
		out[2] = out[0] ? -1 : unshare(CLONE_NEWNET) < 0 ? errno : 0;
		_exit(write(p[1], out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(p[1]);
	do
		n = read(p[0], res, sizeof(res));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	wait_exit(pid);
	if (n != sizeof(res)) {
		set(r, DOCTOR_USERNS, false, "the probe died");
		set(r, DOCTOR_PIDNS, false, "the probe died");
		set(r, DOCTOR_NETNS, false, "the probe died");
		return;
	}
	set(r, DOCTOR_USERNS, res[0] == 0, "unshare(CLONE_NEWUSER): %s",
	    res[0] ? strerror(res[0]) : "ok");
	if (res[0]) {
		set(r, DOCTOR_PIDNS, false, "needs a user namespace");
		set(r, DOCTOR_NETNS, false, "needs a user namespace");
		return;
	}
	set(r, DOCTOR_PIDNS, res[1] == 0, "unshare(CLONE_NEWPID): %s",
	    res[1] ? strerror(res[1]) : "ok");
	set(r, DOCTOR_NETNS, res[2] == 0, "unshare(CLONE_NEWNET): %s",
	    res[2] ? strerror(res[2]) : "ok");
}

static void probe_landlock(struct doctor_report *r)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	r->landlock_abi = v > 0 ? (int)v : 0;
	if (v > 0)
		set(r, DOCTOR_LANDLOCK, true, "ABI %ld", v);
	else
		set(r, DOCTOR_LANDLOCK, false, "landlock_create_ruleset: %s%s", strerror(errno),
		    errno == EOPNOTSUPP ? " (built in but disabled at boot)" : "");
}

static void probe_openat2(struct doctor_report *r)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));

	if (fd < 0 && errno != EACCES && errno != ENOENT) {
		set(r, DOCTOR_OPENAT2, false, "openat2: %s", strerror(errno));
		return;
	}
	if (fd >= 0)
		close(fd);
	set(r, DOCTOR_OPENAT2, true, "RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS accepted");
}

/* The cgroup2 mount point into @out (PATH_MAX), from /proc/self/mountinfo. */
static int cgroup2_mount(char *out)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		snprintf(out, PATH_MAX, "%s", mnt);
		return 0;
	}
	return -ENOENT;
}

static bool has_word(const char *list, const char *w)
{
	size_t l = strlen(w);

	for (const char *p = list; (p = strstr(p, w)); p += l)
		if ((p == list || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\n' || !p[l]))
			return true;
	return false;
}

static void probe_cgroup(struct doctor_report *r)
{
	char mnt[PATH_MAX], rel[PATH_MAX] = "", dir[2 * PATH_MAX + 64], path[3 * PATH_MAX],
		ctl[512] = "";
	_cleanup_fclose_ FILE *f = NULL;
	char line[PATH_MAX];
	int fd;
	ssize_t n;

	if (cgroup2_mount(mnt) < 0) {
		set(r, DOCTOR_CGROUP, false, "no cgroup2 file system mounted");
		return;
	}
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0::", 3)) {
			snprintf(rel, sizeof(rel), "%s", line + 3);
			rel[strcspn(rel, "\n")] = '\0';
		}
	}
	snprintf(dir, sizeof(dir), "%s%s", mnt, strcmp(rel, "/") ? rel : "");
	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, ctl, sizeof(ctl) - 1);
		ctl[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	if (!has_word(ctl, "memory") || !has_word(ctl, "pids")) {
		set(r, DOCTOR_CGROUP, false, "%s offers no memory and pids controllers%s", dir,
		    strcmp(mnt, "/sys/fs/cgroup") ? " (hybrid cgroup v1/v2 hierarchy)" : "");
		return;
	}
	snprintf(path, sizeof(path), "%s/pyvisor-probe-%d", dir, getpid());
	if (mkdir(path, 0700) < 0) {
		set(r, DOCTOR_CGROUP, false, "cannot create a cgroup under %s: %s", dir,
		    strerror(errno));
		return;
	}
	rmdir(path);
	set(r, DOCTOR_CGROUP, true, "%s: memory and pids, child cgroups can be created", dir);
}

void doctor_probe(struct doctor_report *r, uint32_t features)
{
	memset(r, 0, sizeof(*r));
	if (features & (F(DOCTOR_UNOTIFY) | F(DOCTOR_WAIT_KILLABLE) | F(DOCTOR_SYNC_WAKE_UP) |
			F(DOCTOR_ADDFD) | F(DOCTOR_ADDFD_SEND)))
		probe_seccomp(r);
	if (features & (F(DOCTOR_PIDFD_GETFD) | F(DOCTOR_PTRACE)))
		probe_pidfd_ptrace(r);
	if (features & (F(DOCTOR_USERNS) | F(DOCTOR_PIDNS) | F(DOCTOR_NETNS)))
		probe_namespaces(r);
	if (features & F(DOCTOR_LANDLOCK))
		probe_landlock(r);
	if (features & F(DOCTOR_OPENAT2))
		probe_openat2(r);
	if (features & F(DOCTOR_CGROUP))
		probe_cgroup(r);
}

/* The first missing feature of @needs, or -1. */
static int first_missing(const struct doctor_report *r, uint32_t needs)
{
	for (int f = 0; f < DOCTOR_NFEATURES; f++)
		if ((needs & F(f)) && !r->f[f].ok)
			return f;
	return -1;
}

bool doctor_protection_ok(const struct doctor_report *r, const struct doctor_protection *p)
{
	return first_missing(r, p->needs) < 0;
}

const struct doctor_protection *doctor_protection_find(const char *name)
{
	for (size_t i = 0; i < PV_ARRAY_SIZE(protections); i++)
		if (!strcmp(protections[i].name, name))
			return &protections[i];
	return NULL;
}

int doctor_require(const char *const *names, size_t n, struct pv_error *err)
{
	const struct doctor_protection *want[PV_ARRAY_SIZE(protections)];
	struct doctor_report r;
	uint32_t needs = 0;
	size_t k = 0;

	for (size_t i = 0; i < PV_ARRAY_SIZE(protections); i++) {
		bool asked = protections[i].always;

		for (size_t j = 0; j < n && !asked; j++)
			asked = !strcmp(names[j], protections[i].name);
		if (asked) {
			want[k++] = &protections[i];
			needs |= protections[i].needs;
		}
	}
	doctor_probe(&r, needs);
	for (size_t i = 0; i < k; i++) {
		int f = first_missing(&r, want[i]->needs);

		if (f < 0)
			continue;
		return pv_error_set(err, EOPNOTSUPP,
				    "this machine cannot give the protection '%s' the policy asks "
				    "for: %s missing (%s); see pyvisor doctor",
				    want[i]->name, feature_info[f].title, r.f[f].detail);
	}
	return 0;
}

struct json_t *doctor_json(const struct doctor_report *r)
{
	json_t *root = json_object(), *feat = json_object(), *prot = json_object();
	bool ok = true;

	if (!root || !feat || !prot) {
		json_decref(root);
		json_decref(feat);
		json_decref(prot);
		return NULL;
	}
	for (int f = 0; f < DOCTOR_NFEATURES; f++) {
		json_t *o = json_pack("{s:b,s:s,s:s}", "available", r->f[f].ok, "title",
				      feature_info[f].title, "detail", r->f[f].detail);

		if (o && f == DOCTOR_LANDLOCK)
			json_object_set_new(o, "abi", json_integer(r->landlock_abi));
		json_object_set_new(feat, feature_info[f].name, o);
	}
	for (size_t i = 0; i < PV_ARRAY_SIZE(protections); i++) {
		const struct doctor_protection *p = &protections[i];
		int miss = first_missing(r, p->needs);
		json_t *needs = json_array();

		for (int f = 0; f < DOCTOR_NFEATURES; f++)
			if (p->needs & F(f))
				json_array_append_new(needs, json_string(feature_info[f].name));
		if (miss >= 0 && p->always)
			ok = false;
		json_object_set_new(prot, p->name,
				    json_pack("{s:b,s:b,s:s,s:o,s:o}", "available", miss < 0,
					      "always_required", p->always, "description",
					      p->description, "needs", needs, "missing",
					      miss >= 0 ? json_string(feature_info[miss].name)
							: json_null()));
	}
	json_object_set_new(root, "ok", json_boolean(ok));
	json_object_set_new(root, "features", feat);
	json_object_set_new(root, "protections", prot);
	return root;
}

bool doctor_table_print(const struct doctor_report *r, FILE *out)
{
	bool ok = true;

	fprintf(out, "%-40s %-4s %s\n", "KERNEL FEATURE", "HAS", "DETAIL");
	for (int f = 0; f < DOCTOR_NFEATURES; f++)
		fprintf(out, "%-40s %-4s %s\n", feature_info[f].title, r->f[f].ok ? "yes" : "NO",
			r->f[f].detail);
	fprintf(out, "\n%-16s %-12s %s\n", "PROTECTION", "STATE", "WHAT IT GIVES");
	for (size_t i = 0; i < PV_ARRAY_SIZE(protections); i++) {
		const struct doctor_protection *p = &protections[i];
		int miss = first_missing(r, p->needs);
		const char *state = miss < 0 ? "enforced" : p->always ? "MISSING" : "unavailable";

		if (miss >= 0 && p->always)
			ok = false;
		fprintf(out, "%-16s %-12s %s", p->name, state, p->description);
		if (miss >= 0)
			fprintf(out, " [needs %s]", feature_info[miss].name);
		fputc('\n', out);
	}
	fprintf(out, "\n%s\n",
		ok ? "pyvisor run works on this machine; protections marked unavailable are "
		     "refused when asked for (--require)."
		   : "pyvisor run refuses to start on this machine: a protection every run needs "
		     "is MISSING.");
	return ok;
}
