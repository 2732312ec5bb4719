/*
 * fdops.c - fds of sandbox tasks, seen from the sentry.
 *
 * pidfd_getfd(2) gives the supervisor a duplicate of a task's fd (the same
 * open file description, so offsets are shared).  It needs ptrace access
 * (PTRACE_MODE_ATTACH_REALCREDS), which the supervisor has: it is the
 * parent or subreaper of every sandbox process, runs with the same uid or
 * as root, and the sandbox cannot make itself non-dumpable (prctl
 * PR_SET_DUMPABLE is refused by the filter).
 */
#include "sentry.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int sentry_task_getfd(struct syscall_ctx *ctx, int fd)
{
	int local;

	if (fd < 0)
		return -EBADF;
	local = (int)syscall(SYS_pidfd_getfd, ctx->task->proc->pidfd, fd, 0);
	if (local < 0)
		return errno == EBADF ? -EBADF : -errno;
	/* The fd number may have been reused by a racing thread between the
	 * trap and now; that is the same race the kernel has for *at() calls
	 * with a dirfd another thread closes, so it is not a hole. */
	return local;
}

int sentry_at_base(struct syscall_ctx *ctx, int dirfd, char *out)
{
	_cleanup_close_ int local = -1;
	struct stat st;
	int r;

	if (dirfd == AT_FDCWD) {
		memcpy(out, ctx->task->proc->cwd, PATH_MAX);
		return 0;
	}
	local = sentry_task_getfd(ctx, dirfd);
	if (local < 0)
		return local;
	r = gofer_fd_stat(ctx->sentry->view, local, &st);
	if (r < 0)
		return r;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return gofer_fd_view_path(ctx->sentry->view, local, out, PATH_MAX);
}
