/*
 * common.c - helpers shared by the handler files (internal.h).
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int copy_path(struct syscall_ctx *ctx, uint64_t addr, char *buf, struct syscall_ret *ret)
{
	int r = guestmem_read_path(ctx, addr, buf, PATH_MAX);

	if (r >= 0)
		return 0;
	if (r == -EFAULT)
		*ret = syscall_deny(ctx, EFAULT, "guestmem.unreadable", NULL, NULL,
				    "path argument unreadable");
	else
		*ret = syscall_errno(-r);
	return -1;
}

struct syscall_ret view_result(struct syscall_ctx *ctx, int64_t r,
			       const struct gofer_lookup_info *info, const char *path)
{
	if (r >= 0)
		return syscall_value(r);
	if (info && info->hidden && !policy_miss_is_quiet(info->view_path))
		return syscall_deny(ctx, (int)-r, "view.hidden",
				    info->view_path[0] ? info->view_path : path, NULL,
				    "not in the view");
	if (info && info->read_only)
		return syscall_deny(ctx, (int)-r, "view.read_only",
				    info->view_path[0] ? info->view_path : path, NULL,
				    "read-only part of the view");
	return syscall_errno((int)-r);
}

int at_base(struct syscall_ctx *ctx, int dirfd, const char *path, char *out)
{
	if (path[0] == '/') {
		out[0] = '/';
		out[1] = '\0';
		return 0;
	}
	return sentry_at_base(ctx, dirfd, out);
}

void stat_to_statx(const struct stat *st, struct statx *stx)
{
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS;
	stx->stx_blksize = (__u32)st->st_blksize;
	stx->stx_nlink = (__u32)st->st_nlink;
	stx->stx_uid = st->st_uid;
	stx->stx_gid = st->st_gid;
	stx->stx_mode = (__u16)st->st_mode;
	stx->stx_ino = st->st_ino;
	stx->stx_size = (__u64)st->st_size;
	stx->stx_blocks = (__u64)st->st_blocks;
	stx->stx_atime.tv_sec = st->st_atim.tv_sec;
	stx->stx_atime.tv_nsec = (__u32)st->st_atim.tv_nsec;
	stx->stx_mtime.tv_sec = st->st_mtim.tv_sec;
	stx->stx_mtime.tv_nsec = (__u32)st->st_mtim.tv_nsec;
	stx->stx_ctime.tv_sec = st->st_ctim.tv_sec;
	stx->stx_ctime.tv_nsec = (__u32)st->st_ctim.tv_nsec;
	stx->stx_rdev_major = major(st->st_rdev);
	stx->stx_rdev_minor = minor(st->st_rdev);
	stx->stx_dev_major = major(st->st_dev);
	stx->stx_dev_minor = minor(st->st_dev);
}
