/*
 * procfs.c - /proc as the sandbox sees it: the provider the view calls
 * whenever a resolution enters /proc (gofer.h, struct gofer_proc_provider).
 *
 * The gofer knows nothing of tasks; this file knows the calling task (the
 * notification being handled: procfs_enter()) and the sandbox's processes
 * (struct sentry.procs), and rebuilds /proc once per call:
 *
 *   /proc/self -> PID, /proc/thread-self -> PID/task/TID (the caller)
 *   /proc/PID/{status,stat,statm,cmdline,comm,limits,maps,mounts,cwd,exe,root}
 *       for every process of the sandbox, and only those (other pids do
 *       not exist); PID/task/TID/{stat,status,comm} for the calling thread
 *   /proc/PID/fd/N and fdinfo/N for the calling process: fd links are
 *       symlinks to view paths, or magic links that reopen the object (pipes,
 *       sockets, nameless files)
 *   /proc/{cpuinfo,meminfo,loadavg,uptime,version,stat}, /proc/mounts ->
 *       self/mounts, /proc/sys/kernel/{hostname,ostype,osrelease}
 *
 * Deliberately absent: PID/mem, PID/environ, PID/auxv, PID/pagemap, other
 * processes' fds, everything else.  Files are snapshots copied from the
 * host's /proc for the same pid (the sandbox sees host pids), cwd and root
 * are view paths, so no link leads outside the view.  Source: proc(5).
 */
#include "sentry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PROC_FILE_MAX (256 * 1024)	/* bytes copied from a host /proc file */
#define PROC_FDS_MAX 4096		/* fd links listed for the caller */

static struct syscall_ctx *proc_cur;	/* the call being handled (event loop: one at a time) */
static uint64_t proc_done_id;		/* notification /proc was last rebuilt for */
static bool proc_done;

void procfs_enter(struct syscall_ctx *ctx)
{
	/* Leaving a call that built /proc: drop its copies of task fds. */
	if (!ctx && proc_cur && proc_done && proc_done_id == proc_cur->req->id)
		gofer_proc_release_fds(proc_cur->sentry->view);
	proc_cur = ctx;
}

/* Read host file @path (at most PROC_FILE_MAX bytes) into a malloc'd buffer. */
static char *read_host(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	size_t got = 0;

	*len = 0;
	if (fd < 0)
		return NULL;
	buf = malloc(PROC_FILE_MAX);
	if (!buf) {
		close(fd);
		return NULL;
	}
	while (got < PROC_FILE_MAX) {
		ssize_t n = read(fd, buf + got, PROC_FILE_MAX - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

/* Copy host /proc/@src to view /proc/@dst (skipped when unreadable). */
static int copy_file(struct gofer_view *v, const char *src, const char *dst, bool priv)
{
	char path[128];
	size_t len;
	char *buf;
	int rc;

	snprintf(path, sizeof(path), "/proc/%s", src);
	buf = read_host(path, &len);
	if (!buf)
		return 0;
	rc = gofer_proc_add_file(v, dst, buf, len, priv);
	free(buf);
	return rc == -EEXIST ? 0 : rc;
}

static int add_text(struct gofer_view *v, const char *rel, const char *text)
{
	return gofer_proc_add_file(v, rel, text, strlen(text), false);
}

static const char mounts_text[] =
	"pyvisor / pyvisor ro,nosuid,nodev 0 0\n"
	"tmpfs /workspace tmpfs rw,nosuid,nodev 0 0\n"
	"tmpfs /tmp tmpfs rw,nosuid,nodev 0 0\n"
	"tmpfs /home/sandbox tmpfs rw,nosuid,nodev 0 0\n"
	"tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n"
	"proc /proc proc ro,nosuid,nodev,noexec 0 0\n";

/* The entries of process @p; @caller adds fd/, fdinfo/ and task/TID. */
static int add_process(struct syscall_ctx *ctx, struct gofer_view *v, struct sentry_proc *p,
		       bool caller)
{
	static const char *const files[] = { "status", "stat", "statm", "cmdline", "comm",
					     "limits", "maps" };
	char src[64], dst[64], link[PATH_MAX];
	pid_t pid = p->tgid;
	ssize_t n;
	int rc;

	snprintf(dst, sizeof(dst), "%d", pid);
	rc = gofer_proc_add_dir(v, dst);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < PV_ARRAY_SIZE(files); i++) {
		snprintf(src, sizeof(src), "%d/%s", pid, files[i]);
		rc = copy_file(v, src, src, false);
		if (rc < 0)
			return rc;
	}
	snprintf(dst, sizeof(dst), "%d/mounts", pid);
	if ((rc = add_text(v, dst, mounts_text)) < 0)
		return rc;
	snprintf(dst, sizeof(dst), "%d/cwd", pid);
	if ((rc = gofer_proc_add_symlink(v, dst, p->cwd, true)) < 0)
		return rc;
	snprintf(dst, sizeof(dst), "%d/root", pid);
	if ((rc = gofer_proc_add_symlink(v, dst, "/", true)) < 0)
		return rc;
	/* exe: the host path of the program, which is its view path too (the
	 * programs the sandbox can run live in host binds at the same path). */
	snprintf(src, sizeof(src), "/proc/%d/exe", pid);
	n = readlink(src, link, sizeof(link) - 1);
	if (n > 0 && link[0] == '/') {
		link[n] = '\0';
		snprintf(dst, sizeof(dst), "%d/exe", pid);
		if ((rc = gofer_proc_add_symlink(v, dst, link, true)) < 0)
			return rc;
	}
	if (!caller)
		return 0;

	snprintf(dst, sizeof(dst), "%d/task/%d", pid, ctx->task->tid);
	if ((rc = gofer_proc_add_dir(v, dst)) < 0)
		return rc;
	for (size_t i = 0; i < 3; i++) {
		static const char *const tf[] = { "stat", "status", "comm" };

		snprintf(src, sizeof(src), "%d/task/%d/%s", pid, ctx->task->tid, tf[i]);
		if ((rc = copy_file(v, src, src, false)) < 0)
			return rc;
	}

	snprintf(dst, sizeof(dst), "%d/fd", pid);
	if ((rc = gofer_proc_add_dir(v, dst)) < 0)
		return rc;
	snprintf(dst, sizeof(dst), "%d/fdinfo", pid);
	if ((rc = gofer_proc_add_dir(v, dst)) < 0)
		return rc;
	{
		DIR *dir;
		struct dirent *de;
		size_t count = 0;

		snprintf(src, sizeof(src), "/proc/%d/fd", pid);
		dir = opendir(src);
		if (!dir)
			return 0;
		while ((de = readdir(dir)) && count < PROC_FDS_MAX) {
			char *end;
			long fd = strtol(de->d_name, &end, 10);
			int local;

			if (*end || de->d_name[0] == '\0' || fd < 0)
				continue;
			local = sentry_task_getfd(ctx, (int)fd);
			if (local < 0)
				continue;
			snprintf(src, sizeof(src), "/proc/%d/fd/%ld", pid, fd);
			n = readlink(src, link, sizeof(link) - 1);
			link[n > 0 ? n : 0] = '\0';
			snprintf(dst, sizeof(dst), "%d/fd/%ld", pid, fd);
			rc = gofer_proc_add_fd(v, dst, local, link);
			if (rc < 0 && rc != -EEXIST) {
				closedir(dir);
				return rc;
			}
			snprintf(src, sizeof(src), "%d/fdinfo/%ld", pid, fd);
			if ((rc = copy_file(v, src, src, false)) < 0) {
				closedir(dir);
				return rc;
			}
			count++;
		}
		closedir(dir);
	}
	return 0;
}

static int proc_refresh(void *opaque, struct gofer_view *v)
{
	struct syscall_ctx *ctx = proc_cur;
	struct sentry *s;
	struct utsname u;
	char buf[128];
	int rc;

	(void)opaque;
	/* Outside a call (the CLI resolving the program): an empty /proc. */
	if (!ctx) {
		gofer_proc_reset(v);
		proc_done = false;
		return 0;
	}
	/* Once per call: a second resolution (rename, link) must find the
	 * dentries the first one returned. */
	if (proc_done && proc_done_id == ctx->req->id)
		return 0;
	gofer_proc_reset(v);
	proc_done = true;
	proc_done_id = ctx->req->id;
	s = ctx->sentry;

	snprintf(buf, sizeof(buf), "%d", ctx->task->proc->tgid);
	if ((rc = gofer_proc_add_symlink(v, "self", buf, false)) < 0)
		return rc;
	snprintf(buf, sizeof(buf), "%d/task/%d", ctx->task->proc->tgid, ctx->task->tid);
	if ((rc = gofer_proc_add_symlink(v, "thread-self", buf, false)) < 0)
		return rc;
	if ((rc = gofer_proc_add_symlink(v, "mounts", "self/mounts", false)) < 0)
		return rc;
	for (struct sentry_proc *p = s->procs; p; p = p->next) {
		rc = add_process(ctx, v, p, p == ctx->task->proc);
		if (rc < 0)
			return rc;
	}
	if ((rc = copy_file(v, "cpuinfo", "cpuinfo", false)) < 0 ||
	    (rc = copy_file(v, "meminfo", "meminfo", false)) < 0 ||
	    (rc = copy_file(v, "loadavg", "loadavg", false)) < 0 ||
	    (rc = copy_file(v, "uptime", "uptime", false)) < 0 ||
	    (rc = copy_file(v, "version", "version", false)) < 0 ||
	    (rc = copy_file(v, "stat", "stat", false)) < 0)
		return rc;
	if ((rc = add_text(v, "sys/kernel/hostname", "sandbox\n")) < 0 ||
	    (rc = add_text(v, "sys/kernel/ostype", "Linux\n")) < 0)
		return rc;
	if (uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s\n", u.release);
		if ((rc = add_text(v, "sys/kernel/osrelease", buf)) < 0)
			return rc;
	}
	return 0;
}

static const struct gofer_proc_provider proc_provider = { .refresh = proc_refresh };

int procfs_register(struct gofer_view *view, struct pv_error *err)
{
	return gofer_view_set_proc(view, &proc_provider, NULL, err);
}
