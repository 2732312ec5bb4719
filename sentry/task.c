/*
 * task.c - the sentry's table of sandbox tasks and processes, and teardown.
 *
 * Membership rule: a task belongs to the run if its process descends from
 * the supervisor.  The supervisor is a child subreaper (prctl(2)
 * PR_SET_CHILD_SUBREAPER), so orphans of the run (double forks, setsid)
 * are reparented to it and stay descendants.  Ancestry is read from
 * /proc/PID/status (proc(5): Tgid, PPid) when a task is first seen, and a
 * pidfd (pidfd_open(2)) then pins the process identity.
 *
 * Without ptrace, a new process is learnt at its first trapped call; it
 * inherits the cwd and umask its parent has at that moment (exact fork
 * events arrive with the ptrace platform, issue 4).
 */
#include "sentry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define TASK_HASH(tid) ((unsigned int)(tid) % PV_ARRAY_SIZE(((struct sentry *)0)->tasks))

int sentry_proc_fields(const char *path, const char *const *names, long *vals, size_t n)
{
	char buf[2048], key[48];
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	if (len <= 0)
		return -EIO;
	buf[len] = '\0';
	for (size_t i = 0; i < n; i++) {
		char *p;

		snprintf(key, sizeof(key), "\n%s:", names[i]);
		p = strstr(buf, key);
		if (!p || sscanf(p + strlen(key), "%ld", &vals[i]) != 1)
			return -EIO;
	}
	return 0;
}

/* Read Tgid and PPid of @tid from /proc.  Returns 0 or -errno. */
static int proc_status_ids(pid_t tid, pid_t *tgid, pid_t *ppid)
{
	static const char *const names[] = { "Tgid", "PPid" };
	char path[64];
	long v[2];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	r = sentry_proc_fields(path, names, v, 2);
	if (r < 0)
		return r;
	*tgid = (pid_t)v[0];
	*ppid = (pid_t)v[1];
	return 0;
}

/* True if process @pid descends from the supervisor (ancestry in /proc). */
static bool descends_from_us(pid_t pid)
{
	pid_t self = getpid(), tgid, ppid;

	for (int depth = 0; depth < 4096 && pid > 1; depth++) {
		if (proc_status_ids(pid, &tgid, &ppid) < 0)
			return false;
		if (ppid == self)
			return true;
		pid = ppid;
	}
	return false;
}

struct sentry_proc *sentry_proc_find(struct sentry *s, pid_t tgid)
{
	for (struct sentry_proc *p = s->procs; p; p = p->next)
		if (p->tgid == tgid)
			return p;
	return NULL;
}

static struct sentry_proc *proc_new(struct sentry *s, pid_t tgid, pid_t ppid)
{
	struct sentry_proc *parent = sentry_proc_find(s, ppid), *p;
	int pidfd;

	pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return NULL;
	/* The pidfd now pins the process; confirm it is still ours (the pid
	 * could have been recycled between the /proc read and pidfd_open). */
	if (!descends_from_us(tgid)) {
		close(pidfd);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(pidfd);
		return NULL;
	}
	p->tgid = tgid;
	p->pidfd = pidfd;
	if (parent) {
		memcpy(p->cwd, parent->cwd, sizeof(p->cwd));
		p->umask = parent->umask;
	} else {
		snprintf(p->cwd, sizeof(p->cwd), "%s", s->cfg->cwd);
		p->umask = 022;
	}
	p->loader_exec = tgid == s->child;
	if (s->epoll_fd >= 0) {
		/* Learn its exit (sentry/supervisor.c). */
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.u64 = ((uint64_t)tgid << 8) | SENTRY_TAG_PROC };

		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, pidfd, &ev);
	}
	p->next = s->procs;
	s->procs = p;
	return p;
}

struct sentry_proc *sentry_proc_admit(struct sentry *s, pid_t tgid)
{
	struct sentry_proc *p = sentry_proc_find(s, tgid);
	pid_t real_tgid, ppid;

	if (p)
		return p;
	if (tgid <= 0 || proc_status_ids(tgid, &real_tgid, &ppid) < 0 || real_tgid != tgid)
		return NULL;
	if (tgid != s->child && !descends_from_us(tgid))
		return NULL;
	return proc_new(s, tgid, ppid);
}

struct sentry_task *sentry_task_get(struct sentry *s, pid_t tid)
{
	unsigned int h = TASK_HASH(tid);
	struct sentry_task *t;
	struct sentry_proc *p;
	pid_t tgid, ppid;

	for (t = s->tasks[h]; t; t = t->next)
		if (t->tid == tid)
			return t;
	if (proc_status_ids(tid, &tgid, &ppid) < 0)
		return NULL;
	p = sentry_proc_find(s, tgid);
	if (!p) {
		if (tgid != s->child && !descends_from_us(tgid))
			return NULL;
		p = proc_new(s, tgid, ppid);
		if (!p)
			return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->proc = p;
	p->ntasks++;
	t->next = s->tasks[h];
	s->tasks[h] = t;
	return t;
}

void sentry_proc_reap(struct sentry *s, struct sentry_proc *proc)
{
	for (size_t h = 0; h < PV_ARRAY_SIZE(s->tasks); h++) {
		struct sentry_task **pp = &s->tasks[h];

		while (*pp) {
			if ((*pp)->proc == proc) {
				struct sentry_task *dead = *pp;

				*pp = dead->next;
				free(dead);
			} else {
				pp = &(*pp)->next;
			}
		}
	}
	for (struct sentry_proc **pp = &s->procs; *pp; pp = &(*pp)->next) {
		if (*pp == proc) {
			*pp = proc->next;
			break;
		}
	}
	if (proc->pidfd >= 0)
		close(proc->pidfd);
	free(proc);
}

void sentry_tasks_free(struct sentry *s)
{
	while (s->procs)
		sentry_proc_reap(s, s->procs);
}

/* Collect the pids whose parent is in @parents (one pass over /proc). */
static size_t scan_descendants(pid_t self, pid_t *out, size_t max)
{
	size_t n = 0, before;
	DIR *d;

	out[n++] = self;
	do {
		struct dirent *de;

		before = n;
		d = opendir("/proc");
		if (!d)
			break;
		while ((de = readdir(d)) && n < max) {
			pid_t pid = (pid_t)atoi(de->d_name), tgid, ppid;
			bool known = false, child = false;

			if (pid <= 0)
				continue;
			for (size_t i = 0; i < n; i++) {
				if (out[i] == pid)
					known = true;
			}
			if (known || proc_status_ids(pid, &tgid, &ppid) < 0 || tgid != pid)
				continue;
			for (size_t i = 0; i < n; i++) {
				if (out[i] == ppid)
					child = true;
			}
			if (child)
				out[n++] = pid;
		}
		closedir(d);
	} while (n != before && n < max);
	return n;
}

void sentry_kill_all(struct sentry *s)
{
	pid_t self = getpid();
	enum { MAX_PIDS = 65536 };
	pid_t *pids = malloc(MAX_PIDS * sizeof(*pids));

	/* Known processes first: their pidfds cannot hit a recycled pid. */
	for (struct sentry_proc *p = s->procs; p; p = p->next)
		syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
	if (s->child > 0)
		kill(s->child, SIGKILL);

	for (int round = 0; pids && round < 1000; round++) {
		size_t n = scan_descendants(self, pids, MAX_PIDS);
		bool left = false;

		for (size_t i = 1; i < n; i++) {
			int pidfd = (int)syscall(SYS_pidfd_open, pids[i], 0);
			pid_t tgid, ppid;

			if (pidfd < 0)
				continue;
			/* Pinned: signal only if it still descends from us. */
			if (proc_status_ids(pids[i], &tgid, &ppid) == 0 &&
			    descends_from_us(pids[i])) {
				syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
				left = true;
			}
			close(pidfd);
		}
		/* Reap our children and the orphans reparented to us. */
		while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
			;
		if (!left) {
			if (waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD)
				break;
			usleep(1000);
		}
	}
	free(pids);
}
