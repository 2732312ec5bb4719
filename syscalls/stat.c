/*
 * stat.c - the stat family, access, readlink.
 *
 * Answers come from the view (gofer_stat, gofer_fd_stat) and are written to
 * the task's buffer by the sentry.  Sources: stat(2), statx(2), access(2),
 * readlink(2), statfs(2).
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* Write @st to the task at @addr (struct stat is the kernel's x86_64
 * layout: glibc's struct stat matches it on x86_64). */
static struct syscall_ret put_stat(struct syscall_ctx *ctx, uint64_t addr, const struct stat *st)
{
	int r = guestmem_write(ctx, addr, st, sizeof(*st));

	return r < 0 ? syscall_errno(-r) : syscall_value(0);
}

static struct syscall_ret stat_fd(struct syscall_ctx *ctx, int fd, struct stat *st)
{
	_cleanup_close_ int local = sentry_task_getfd(ctx, fd);
	int r;

	if (local < 0)
		return syscall_errno(-local);
	r = gofer_fd_stat(ctx->sentry->view, local, st);
	return r < 0 ? syscall_errno(-r) : syscall_value(0);
}

/* Common core of stat, lstat, newfstatat and statx: fill @st. */
static struct syscall_ret do_statat(struct syscall_ctx *ctx, int dirfd, uint64_t path_addr,
				    int flags, struct stat *st)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT |
		      AT_STATX_SYNC_TYPE))
		return syscall_errno(EINVAL);
	/* Linux 6.11+ accepts a NULL path with AT_EMPTY_PATH. */
	if (path_addr == 0 && (flags & AT_EMPTY_PATH))
		return dirfd == AT_FDCWD ? syscall_errno(EFAULT) : stat_fd(ctx, dirfd, st);
	if (copy_path(ctx, path_addr, path, &ret) < 0)
		return ret;
	if (path[0] == '\0') {
		if (!(flags & AT_EMPTY_PATH))
			return syscall_errno(ENOENT);
		if (dirfd == AT_FDCWD) {
			r = gofer_stat(ctx->sentry->view, ctx->task->proc->cwd, ".", false, st,
				       &info);
			return view_result(ctx, r, &info, ".");
		}
		return stat_fd(ctx, dirfd, st);
	}
	r = at_base(ctx, dirfd, path, base);
	if (r < 0)
		return syscall_errno(-r);
	r = gofer_stat(ctx->sentry->view, base, path, flags & AT_SYMLINK_NOFOLLOW, st, &info);
	return view_result(ctx, r, &info, path);
}

static struct syscall_ret statat_to(struct syscall_ctx *ctx, int dirfd, uint64_t path_addr,
				    int flags, uint64_t buf)
{
	struct stat st;
	struct syscall_ret ret = do_statat(ctx, dirfd, path_addr, flags, &st);

	if (ret.error)
		return ret;
	return put_stat(ctx, buf, &st);
}

SYSCALL_HANDLER(stat)
{
	return statat_to(ctx, AT_FDCWD, ARG(0), 0, ARG(1));
}

SYSCALL_HANDLER(lstat)
{
	return statat_to(ctx, AT_FDCWD, ARG(0), AT_SYMLINK_NOFOLLOW, ARG(1));
}

SYSCALL_HANDLER(newfstatat)
{
	return statat_to(ctx, ARG_INT(0), ARG(1), ARG_INT(3), ARG(2));
}

SYSCALL_HANDLER(fstat)
{
	struct stat st;
	struct syscall_ret ret = stat_fd(ctx, ARG_INT(0), &st);

	if (ret.error)
		return ret;
	return put_stat(ctx, ARG(1), &st);
}

SYSCALL_HANDLER(statx)
{
	struct statx stx;
	struct stat st;
	struct syscall_ret ret;
	int r;

	if (ARG_UINT(3) & STATX__RESERVED)
		return syscall_errno(EINVAL);
	ret = do_statat(ctx, ARG_INT(0), ARG(1), ARG_INT(2), &st);
	if (ret.error)
		return ret;
	stat_to_statx(&st, &stx);
	r = guestmem_write(ctx, ARG(4), &stx, sizeof(stx));
	return r < 0 ? syscall_errno(-r) : syscall_value(0);
}

static struct syscall_ret do_faccessat(struct syscall_ctx *ctx, int dirfd, uint64_t path_addr,
				       int amode, int flags)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (amode & ~(R_OK | W_OK | X_OK))
		return syscall_errno(EINVAL);
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EACCESS | AT_EMPTY_PATH))
		return syscall_errno(EINVAL);
	if (copy_path(ctx, path_addr, path, &ret) < 0)
		return ret;
	if (path[0] == '\0' && !(flags & AT_EMPTY_PATH))
		return syscall_errno(ENOENT);
	r = at_base(ctx, dirfd, path, base);
	if (r < 0)
		return syscall_errno(-r);
	r = gofer_access(ctx->sentry->view, base, path[0] ? path : ".", amode, flags, &info);
	return view_result(ctx, r, &info, path);
}

SYSCALL_HANDLER(access)
{
	return do_faccessat(ctx, AT_FDCWD, ARG(0), ARG_INT(1), 0);
}

SYSCALL_HANDLER(faccessat)
{
	return do_faccessat(ctx, ARG_INT(0), ARG(1), ARG_INT(2), 0);
}

SYSCALL_HANDLER(faccessat2)
{
	return do_faccessat(ctx, ARG_INT(0), ARG(1), ARG_INT(2), ARG_INT(3));
}

static struct syscall_ret do_readlinkat(struct syscall_ctx *ctx, int dirfd, uint64_t path_addr,
					uint64_t buf, int64_t size)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX], target[PATH_MAX];
	struct syscall_ret ret;
	ssize_t n;
	int r;

	if (size <= 0)
		return syscall_errno(EINVAL);
	if (copy_path(ctx, path_addr, path, &ret) < 0)
		return ret;
	if (path[0] == '\0')
		return syscall_errno(ENOENT);
	r = at_base(ctx, dirfd, path, base);
	if (r < 0)
		return syscall_errno(-r);
	n = gofer_readlink(ctx->sentry->view, base, path, target, sizeof(target), &info);
	if (n < 0)
		return view_result(ctx, n, &info, path);
	if (n > size)
		n = size;
	r = guestmem_write(ctx, buf, target, (size_t)n);
	return r < 0 ? syscall_errno(-r) : syscall_value(n);
}

SYSCALL_HANDLER(readlink)
{
	return do_readlinkat(ctx, AT_FDCWD, ARG(0), ARG(1), (int64_t)ARG_INT(2));
}

SYSCALL_HANDLER(readlinkat)
{
	return do_readlinkat(ctx, ARG_INT(0), ARG(1), ARG(2), (int64_t)ARG_INT(3));
}
