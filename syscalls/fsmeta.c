/*
 * fsmeta.c - metadata and link calls of the view: symlink(at), link(at),
 * chmod family (fchmodat2 included), chown family, utime/utimes/
 * utimensat/futimesat, truncate, mknod(at), the extended attribute calls
 * and statfs.
 *
 * Arguments are copied once from the task; the view (gofer/meta.c) acts
 * on the copies and decides the errno; nothing is ever continued to the
 * kernel.  Argument checks come first, in the kernel's order: flags
 * (EINVAL), then names (ERANGE/E2BIG for xattrs), then the path walk.
 * Sources: symlink(2), link(2), chmod(2), chown(2), utimensat(2),
 * utime(2), truncate(2), mknod(2), getxattr(2), setxattr(2),
 * listxattr(2), removexattr(2), statfs(2).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <utime.h>

#ifndef UTIME_NOW
#define UTIME_NOW ((1l << 30) - 1l)
#define UTIME_OMIT ((1l << 30) - 2l)
#endif
#ifndef XATTR_SIZE_MAX
#define XATTR_SIZE_MAX 65536
#endif
#ifndef XATTR_LIST_MAX
#define XATTR_LIST_MAX 65536
#endif

/* Copy path @addr and the base of @dirfd; "" is ENOENT unless @empty_ok. */
static int path_base(struct syscall_ctx *ctx, int dirfd, uint64_t addr, char *path, char *base,
		     bool empty_ok, struct syscall_ret *ret)
{
	int r;

	if (copy_path(ctx, addr, path, ret) < 0)
		return -1;
	if (path[0] == '\0' && !empty_ok) {
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

/* --- symlink, link ------------------------------------------------------ */

static struct syscall_ret do_symlinkat(struct syscall_ctx *ctx, uint64_t taddr, int dirfd,
				       uint64_t paddr)
{
	struct gofer_lookup_info info = { 0 };
	char target[PATH_MAX], path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (copy_path(ctx, taddr, target, &ret) < 0)
		return ret;
	if (target[0] == '\0')
		return syscall_errno(ENOENT);
	if (path_base(ctx, dirfd, paddr, path, base, false, &ret) < 0)
		return ret;
	r = gofer_symlink(ctx->sentry->view, target, base, path, &info);
	return view_result(ctx, r, &info, path);
}

SYSCALL_HANDLER(symlink)
{
	return do_symlinkat(ctx, ARG(0), AT_FDCWD, ARG(1));
}

SYSCALL_HANDLER(symlinkat)
{
	return do_symlinkat(ctx, ARG(0), ARG_INT(1), ARG(2));
}

static struct syscall_ret do_linkat(struct syscall_ctx *ctx, int olddirfd, uint64_t oldaddr,
				    int newdirfd, uint64_t newaddr, int flags)
{
	struct gofer_lookup_info info = { 0 };
	char oldpath[PATH_MAX], oldbase[PATH_MAX], newpath[PATH_MAX], newbase[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return syscall_errno(EINVAL);
	if (copy_path(ctx, oldaddr, oldpath, &ret) < 0)
		return ret;
	if (oldpath[0] == '\0') {
		_cleanup_close_ int local = -1;

		/* linkat(fd, "", AT_EMPTY_PATH): only a linkable O_TMPFILE
		 * file of the view gets a name; anything else is ENOENT. */
		if (!(flags & AT_EMPTY_PATH))
			return syscall_errno(ENOENT);
		if (path_base(ctx, newdirfd, newaddr, newpath, newbase, false, &ret) < 0)
			return ret;
		local = sentry_task_getfd(ctx, olddirfd);
		if (local < 0)
			return syscall_errno(-local);
		r = gofer_fd_link(ctx->sentry->view, local, newbase, newpath, &info);
		return view_result(ctx, r, &info, newpath);
	}
	r = at_base(ctx, olddirfd, oldpath, oldbase);
	if (r < 0)
		return syscall_errno(-r);
	if (path_base(ctx, newdirfd, newaddr, newpath, newbase, false, &ret) < 0)
		return ret;
	r = gofer_link(ctx->sentry->view, oldbase, oldpath, newbase, newpath,
		       flags & AT_SYMLINK_FOLLOW, &info);
	return view_result(ctx, r, &info, newpath);
}

SYSCALL_HANDLER(link)
{
	return do_linkat(ctx, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 0);
}

SYSCALL_HANDLER(linkat)
{
	return do_linkat(ctx, ARG_INT(0), ARG(1), ARG_INT(2), ARG(3), ARG_INT(4));
}

/* --- chmod, chown ---------------------------------------------------------- */

/* fd-based attribute change: the fd's object. */
static struct syscall_ret setattr_fd(struct syscall_ctx *ctx, int fd, mode_t mode, uid_t uid,
				     gid_t gid)
{
	_cleanup_close_ int local = sentry_task_getfd(ctx, fd);
	int r;

	if (local < 0)
		return syscall_errno(-local);
	r = gofer_fd_setattr(ctx->sentry->view, local, mode, uid, gid);
	return syscall_result(r);
}

static struct syscall_ret do_setattrat(struct syscall_ctx *ctx, int dirfd, uint64_t addr,
				       int flags, mode_t mode, uid_t uid, gid_t gid)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return syscall_errno(EINVAL);
	if (path_base(ctx, dirfd, addr, path, base, flags & AT_EMPTY_PATH, &ret) < 0)
		return ret;
	if (path[0] == '\0') {
		if (dirfd == AT_FDCWD) {
			r = gofer_setattr(ctx->sentry->view, ctx->task->proc->cwd, ".", false, mode,
					  uid, gid, &info);
			return view_result(ctx, r, &info, ".");
		}
		return setattr_fd(ctx, dirfd, mode, uid, gid);
	}
	r = gofer_setattr(ctx->sentry->view, base, path, flags & AT_SYMLINK_NOFOLLOW, mode, uid,
			  gid, &info);
	return view_result(ctx, r, &info, path);
}

SYSCALL_HANDLER(chmod)
{
	return do_setattrat(ctx, AT_FDCWD, ARG(0), 0, (mode_t)ARG(1) & 07777, (uid_t)-1,
			    (gid_t)-1);
}

SYSCALL_HANDLER(fchmod)
{
	return setattr_fd(ctx, ARG_INT(0), (mode_t)ARG(1) & 07777, (uid_t)-1, (gid_t)-1);
}

SYSCALL_HANDLER(fchmodat)
{
	return do_setattrat(ctx, ARG_INT(0), ARG(1), 0, (mode_t)ARG(2) & 07777, (uid_t)-1,
			    (gid_t)-1);
}

SYSCALL_HANDLER(fchmodat2)
{
	return do_setattrat(ctx, ARG_INT(0), ARG(1), ARG_INT(3), (mode_t)ARG(2) & 07777,
			    (uid_t)-1, (gid_t)-1);
}

SYSCALL_HANDLER(chown)
{
	return do_setattrat(ctx, AT_FDCWD, ARG(0), 0, (mode_t)-1, (uid_t)ARG_UINT(1),
			    (gid_t)ARG_UINT(2));
}

SYSCALL_HANDLER(lchown)
{
	return do_setattrat(ctx, AT_FDCWD, ARG(0), AT_SYMLINK_NOFOLLOW, (mode_t)-1,
			    (uid_t)ARG_UINT(1), (gid_t)ARG_UINT(2));
}

SYSCALL_HANDLER(fchown)
{
	return setattr_fd(ctx, ARG_INT(0), (mode_t)-1, (uid_t)ARG_UINT(1), (gid_t)ARG_UINT(2));
}

SYSCALL_HANDLER(fchownat)
{
	return do_setattrat(ctx, ARG_INT(0), ARG(1), ARG_INT(4), (mode_t)-1, (uid_t)ARG_UINT(2),
			    (gid_t)ARG_UINT(3));
}

/* --- times ----------------------------------------------------------------- */

static bool ts_valid(const struct timespec *t)
{
	return t->tv_nsec == UTIME_NOW || t->tv_nsec == UTIME_OMIT ||
	       (t->tv_nsec >= 0 && t->tv_nsec < 1000000000L);
}

/* utimensat core: @ts NULL means now; @addr 0 with a dirfd: the fd itself. */
static struct syscall_ret do_utimens(struct syscall_ctx *ctx, int dirfd, uint64_t addr,
				     const struct timespec *ts, int flags)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return syscall_errno(EINVAL);
	if (ts && (!ts_valid(&ts[0]) || !ts_valid(&ts[1])))
		return syscall_errno(EINVAL);
	if (addr == 0 && dirfd != AT_FDCWD) {
		_cleanup_close_ int local = sentry_task_getfd(ctx, dirfd);

		if (local < 0)
			return syscall_errno(-local);
		return syscall_result(gofer_fd_utimens(ctx->sentry->view, local, ts));
	}
	if (addr == 0)
		return syscall_errno(EFAULT);
	if (path_base(ctx, dirfd, addr, path, base, flags & AT_EMPTY_PATH, &ret) < 0)
		return ret;
	if (path[0] == '\0' && dirfd != AT_FDCWD) {
		_cleanup_close_ int local = sentry_task_getfd(ctx, dirfd);

		if (local < 0)
			return syscall_errno(-local);
		return syscall_result(gofer_fd_utimens(ctx->sentry->view, local, ts));
	}
	r = gofer_utimens(ctx->sentry->view, base, path[0] ? path : ".",
			  flags & AT_SYMLINK_NOFOLLOW, ts, &info);
	return view_result(ctx, r, &info, path);
}

SYSCALL_HANDLER(utimensat)
{
	struct timespec ts[2];
	int r;

	if (ARG(2)) {
		r = guestmem_read(ctx, ARG(2), ts, sizeof(ts));
		if (r < 0)
			return syscall_errno(r == -EFAULT ? EFAULT : -r);
	}
	return do_utimens(ctx, ARG_INT(0), ARG(1), ARG(2) ? ts : NULL, ARG_INT(3));
}

/* utimes/futimesat: struct timeval[2] or NULL. */
static struct syscall_ret do_utimes(struct syscall_ctx *ctx, int dirfd, uint64_t addr,
				    uint64_t tvaddr)
{
	struct timeval tv[2];
	struct timespec ts[2];
	int r;

	if (tvaddr) {
		r = guestmem_read(ctx, tvaddr, tv, sizeof(tv));
		if (r < 0)
			return syscall_errno(r == -EFAULT ? EFAULT : -r);
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return syscall_errno(EINVAL);
			ts[i].tv_sec = tv[i].tv_sec;
			ts[i].tv_nsec = tv[i].tv_usec * 1000;
		}
	}
	if (addr == 0)
		return syscall_errno(EFAULT);
	return do_utimens(ctx, dirfd, addr, tvaddr ? ts : NULL, 0);
}

SYSCALL_HANDLER(utimes)
{
	return do_utimes(ctx, AT_FDCWD, ARG(0), ARG(1));
}

SYSCALL_HANDLER(futimesat)
{
	return do_utimes(ctx, ARG_INT(0), ARG(1), ARG(2));
}

SYSCALL_HANDLER(utime)
{
	struct utimbuf ub;
	struct timespec ts[2];
	int r;

	if (ARG(1)) {
		r = guestmem_read(ctx, ARG(1), &ub, sizeof(ub));
		if (r < 0)
			return syscall_errno(r == -EFAULT ? EFAULT : -r);
		ts[0].tv_sec = ub.actime;
		ts[0].tv_nsec = 0;
		ts[1].tv_sec = ub.modtime;
		ts[1].tv_nsec = 0;
	}
	if (ARG(0) == 0)
		return syscall_errno(EFAULT);
	return do_utimens(ctx, AT_FDCWD, ARG(0), ARG(1) ? ts : NULL, 0);
}

/* --- truncate, mknod -------------------------------------------------------- */

SYSCALL_HANDLER(truncate)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (path_base(ctx, AT_FDCWD, ARG(0), path, base, false, &ret) < 0)
		return ret;
	r = gofer_truncate(ctx->sentry->view, base, path, (int64_t)ARG(1), &info);
	return view_result(ctx, r, &info, path);
}

static struct syscall_ret do_mknodat(struct syscall_ctx *ctx, int dirfd, uint64_t addr,
				     mode_t mode, dev_t dev)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int r;

	if (path_base(ctx, dirfd, addr, path, base, false, &ret) < 0)
		return ret;
	mode = (mode & S_IFMT) | ((mode & 07777) & ~ctx->task->proc->umask);
	r = gofer_mknod(ctx->sentry->view, base, path, mode, dev, &info);
	return view_result(ctx, r, &info, path);
}

SYSCALL_HANDLER(mknod)
{
	return do_mknodat(ctx, AT_FDCWD, ARG(0), (mode_t)ARG_UINT(1), (dev_t)ARG_UINT(2));
}

SYSCALL_HANDLER(mknodat)
{
	return do_mknodat(ctx, ARG_INT(0), ARG(1), (mode_t)ARG_UINT(2), (dev_t)ARG_UINT(3));
}

/* --- extended attributes ---------------------------------------------------- */

/* Copy an attribute name: ERANGE when empty or longer than XATTR_NAME_MAX. */
static int copy_xattr_name(struct syscall_ctx *ctx, uint64_t addr, char *name,
			   struct syscall_ret *ret)
{
	int r = guestmem_read_path(ctx, addr, name, XATTR_NAME_MAX + 1);

	if (r == -ENAMETOOLONG || r == 0) {
		*ret = syscall_errno(ERANGE);
		return -1;
	}
	if (r < 0) {
		*ret = r == -EFAULT ? syscall_deny(ctx, EFAULT, "guestmem.unreadable", NULL, NULL,
						   "xattr name unreadable")
				    : syscall_errno(-r);
		return -1;
	}
	return 0;
}

/* One xattr call.  @kind: 0 path, 1 lpath (no follow), 2 fd (ARG(0)). */
static struct syscall_ret do_xattr(struct syscall_ctx *ctx, int kind, char op)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX], name[XATTR_NAME_MAX + 1] = "";
	_cleanup_free_ char *buf = NULL;
	struct syscall_ret ret;
	size_t size = 0;
	uint64_t bufaddr = 0;
	int flags = 0, r;
	ssize_t n;

	if (op != 'l' && copy_xattr_name(ctx, ARG(1), name, &ret) < 0)
		return ret;
	switch (op) {
	case 'g':
		bufaddr = ARG(2);
		size = ARG(3);
		if (size > XATTR_SIZE_MAX)
			size = XATTR_SIZE_MAX;
		break;
	case 's':
		bufaddr = ARG(2);
		size = ARG(3);
		flags = ARG_INT(4);
		if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
			return syscall_errno(EINVAL);
		if (size > XATTR_SIZE_MAX)
			return syscall_errno(E2BIG);
		break;
	case 'l':
		bufaddr = ARG(1);
		size = ARG(2);
		if (size > XATTR_LIST_MAX)
			size = XATTR_LIST_MAX;
		break;
	default:
		break;
	}
	if (size) {
		buf = malloc(size);
		if (!buf)
			return syscall_errno(ENOMEM);
		if (op == 's') {
			r = guestmem_read(ctx, bufaddr, buf, size);
			if (r < 0)
				return syscall_errno(r == -EFAULT ? EFAULT : -r);
		}
	}
	if (kind == 2) {
		_cleanup_close_ int local = sentry_task_getfd(ctx, ARG_INT(0));

		if (local < 0)
			return syscall_errno(-local);
		n = gofer_fd_xattr(ctx->sentry->view, local, op, name, buf, size, flags);
		if (n < 0)
			return syscall_errno((int)-n);
	} else {
		if (path_base(ctx, AT_FDCWD, ARG(0), path, base, false, &ret) < 0)
			return ret;
		n = gofer_xattr(ctx->sentry->view, base, path, kind == 1, op, name, buf, size, flags,
				&info);
		if (n < 0)
			return view_result(ctx, n, &info, path);
	}
	if ((op == 'g' || op == 'l') && n > 0 && size) {
		r = guestmem_write(ctx, bufaddr, buf, (size_t)n);
		if (r < 0)
			return syscall_errno(-r);
	}
	return syscall_value(n);
}

SYSCALL_HANDLER(getxattr) { return do_xattr(ctx, 0, 'g'); }
SYSCALL_HANDLER(lgetxattr) { return do_xattr(ctx, 1, 'g'); }
SYSCALL_HANDLER(fgetxattr) { return do_xattr(ctx, 2, 'g'); }
SYSCALL_HANDLER(setxattr) { return do_xattr(ctx, 0, 's'); }
SYSCALL_HANDLER(lsetxattr) { return do_xattr(ctx, 1, 's'); }
SYSCALL_HANDLER(fsetxattr) { return do_xattr(ctx, 2, 's'); }
SYSCALL_HANDLER(listxattr) { return do_xattr(ctx, 0, 'l'); }
SYSCALL_HANDLER(llistxattr) { return do_xattr(ctx, 1, 'l'); }
SYSCALL_HANDLER(flistxattr) { return do_xattr(ctx, 2, 'l'); }
SYSCALL_HANDLER(removexattr) { return do_xattr(ctx, 0, 'r'); }
SYSCALL_HANDLER(lremovexattr) { return do_xattr(ctx, 1, 'r'); }
SYSCALL_HANDLER(fremovexattr) { return do_xattr(ctx, 2, 'r'); }

/* --- statfs -------------------------------------------------------------------- */

SYSCALL_HANDLER(statfs)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	struct statfs sf;
	int r;

	if (path_base(ctx, AT_FDCWD, ARG(0), path, base, false, &ret) < 0)
		return ret;
	r = gofer_statfs(ctx->sentry->view, base, path, &sf, &info);
	if (r < 0)
		return view_result(ctx, r, &info, path);
	r = guestmem_write(ctx, ARG(1), &sf, sizeof(sf));
	return r < 0 ? syscall_errno(-r) : syscall_value(0);
}
