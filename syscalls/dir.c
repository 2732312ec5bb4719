/*
 * dir.c - directories and the working directory: getdents64, getcwd,
 * chdir, fchdir, mkdir(at), rmdir, unlink(at), rename(at/2), sync.
 *
 * The working directory is virtual: a canonical view path per process kept
 * by the sentry (struct sentry_proc.cwd); the kernel's cwd of the task is
 * "/" of the host and never used for the sandbox's paths, because every
 * path-taking call is trapped.  Sources: getdents64(2), getcwd(2),
 * chdir(2), mkdir(2), rmdir(2), unlink(2), rename(2).
 */
#include "internal.h"

#include <errno.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>

SYSCALL_HANDLER(getdents64)
{
	_cleanup_close_ int local = -1;
	_cleanup_free_ char *buf = NULL;
	size_t size = ARG_UINT(2);
	ssize_t n;
	int r;

	local = sentry_task_getfd(ctx, ARG_INT(0));
	if (local < 0)
		return syscall_errno(-local);
	/* Bound the sentry's buffer; a shorter answer is valid getdents. */
	if (size > 65536)
		size = 65536;
	buf = malloc(size ? size : 1);
	if (!buf)
		return syscall_errno(ENOMEM);
	n = gofer_fd_getdents(ctx->sentry->view, local, buf, size);
	if (n <= 0)
		return syscall_result(n);
	r = guestmem_write(ctx, ARG(1), buf, (size_t)n);
	return r < 0 ? syscall_errno(-r) : syscall_value(n);
}

SYSCALL_HANDLER(getcwd)
{
	const char *cwd = ctx->task->proc->cwd;
	size_t len = strlen(cwd) + 1;
	int r;

	if (ARG(1) < len)
		return syscall_errno(ERANGE);
	r = guestmem_write(ctx, ARG(0), cwd, len);
	return r < 0 ? syscall_errno(-r) : syscall_value((int64_t)len);
}

static struct syscall_ret set_cwd(struct syscall_ctx *ctx, const char *base, const char *path)
{
	struct gofer_lookup_info info = { 0 };
	char out[PATH_MAX];
	int r = gofer_chdir_resolve(ctx->sentry->view, base, path, out, sizeof(out), &info);

	if (r < 0)
		return view_result(ctx, r, &info, path);
	memcpy(ctx->task->proc->cwd, out, sizeof(out));
	return syscall_value(0);
}

SYSCALL_HANDLER(chdir)
{
	char path[PATH_MAX];
	struct syscall_ret ret;

	if (copy_path(ctx, ARG(0), path, &ret) < 0)
		return ret;
	if (path[0] == '\0')
		return syscall_errno(ENOENT);
	return set_cwd(ctx, ctx->task->proc->cwd, path);
}

SYSCALL_HANDLER(fchdir)
{
	char base[PATH_MAX];
	int r = sentry_at_base(ctx, ARG_INT(0), base);

	if (r < 0)
		return syscall_errno(-r);
	return set_cwd(ctx, base, ".");
}

/* Copy the path at @addr and the base it resolves against. */
static int path_and_base(struct syscall_ctx *ctx, int dirfd, uint64_t addr, char *path,
			 char *base, struct syscall_ret *ret)
{
	int r;

	if (copy_path(ctx, addr, path, ret) < 0)
		return -1;
	if (path[0] == '\0') {
		*ret = syscall_errno(ENOENT);
		return -1;
	}
	r = at_base(ctx, dirfd, path, base);
	if (r < 0) {
		*ret = syscall_errno(-r);
		return -1;
	}
	return 0;
}

static struct syscall_ret do_mkdirat(struct syscall_ctx *ctx, int dirfd, uint64_t addr,
				     mode_t mode)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (path_and_base(ctx, dirfd, addr, path, base, &ret) < 0)
		return ret;
	mode = (mode & 07777) & ~ctx->task->proc->umask;
	r = gofer_mkdir(ctx->sentry->view, base, path, mode, &info);
	return view_result(ctx, r, &info, path);
}

SYSCALL_HANDLER(mkdir)
{
	return do_mkdirat(ctx, AT_FDCWD, ARG(0), (mode_t)ARG(1));
}

SYSCALL_HANDLER(mkdirat)
{
	return do_mkdirat(ctx, ARG_INT(0), ARG(1), (mode_t)ARG(2));
}

static struct syscall_ret do_unlinkat(struct syscall_ctx *ctx, int dirfd, uint64_t addr,
				      int flags)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (flags & ~AT_REMOVEDIR)
		return syscall_errno(EINVAL);
	if (path_and_base(ctx, dirfd, addr, path, base, &ret) < 0)
		return ret;
	r = gofer_unlink(ctx->sentry->view, base, path, flags & AT_REMOVEDIR, &info);
	return view_result(ctx, r, &info, path);
}

SYSCALL_HANDLER(unlink)
{
	return do_unlinkat(ctx, AT_FDCWD, ARG(0), 0);
}

SYSCALL_HANDLER(rmdir)
{
	return do_unlinkat(ctx, AT_FDCWD, ARG(0), AT_REMOVEDIR);
}

SYSCALL_HANDLER(unlinkat)
{
	return do_unlinkat(ctx, ARG_INT(0), ARG(1), ARG_INT(2));
}

static struct syscall_ret do_renameat2(struct syscall_ctx *ctx, int olddirfd, uint64_t oldaddr,
				       int newdirfd, uint64_t newaddr, unsigned int flags)
{
	struct gofer_lookup_info info = { 0 };
	char oldpath[PATH_MAX], oldbase[PATH_MAX], newpath[PATH_MAX], newbase[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return syscall_errno(EINVAL);
	if ((flags & RENAME_EXCHANGE) && (flags & RENAME_NOREPLACE))
		return syscall_errno(EINVAL);
	if (path_and_base(ctx, olddirfd, oldaddr, oldpath, oldbase, &ret) < 0 ||
	    path_and_base(ctx, newdirfd, newaddr, newpath, newbase, &ret) < 0)
		return ret;
	r = gofer_rename(ctx->sentry->view, oldbase, oldpath, newbase, newpath, flags, &info);
	return view_result(ctx, r, &info, newpath);
}

SYSCALL_HANDLER(rename)
{
	return do_renameat2(ctx, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 0);
}

SYSCALL_HANDLER(renameat)
{
	return do_renameat2(ctx, ARG_INT(0), ARG(1), ARG_INT(2), ARG(3), 0);
}

SYSCALL_HANDLER(renameat2)
{
	return do_renameat2(ctx, ARG_INT(0), ARG(1), ARG_INT(2), ARG(3), ARG_UINT(4));
}

SYSCALL_HANDLER(sync)
{
	/* Every file of the view is in memory or read-only: nothing to flush,
	 * and the host's disks are not the sandbox's business. */
	return syscall_value(0);
}
