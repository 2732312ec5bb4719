/*
 * ops.c - path operations: open, stat, access, readlink, mkdir, unlink,
 * rename, chdir.
 *
 * The order of the checks follows Linux (fs/namei.c, fs/open.c) so each
 * operation fails with the errno the kernel would give on an equivalent
 * tree: lookup errors first, then EEXIST/EISDIR/ENOTDIR on the final
 * object, then EROFS (read-only mount), then permission.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "gofer-internal.h"

/* Status flags carried to a reopened memfd or device. */
#define STATUS_FLAGS (O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC | O_NOCTTY | O_LARGEFILE | O_NOATIME)

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

void gofer_info_init(struct gofer_lookup_info *info)
{
	if (info) {
		info->view_path[0] = '\0';
		info->hidden = false;
		info->read_only = false;
	}
}

/* Copy the audit facts of @r into @info for a call ending with @rc. */
int gofer_finish(struct gofer_lookup_info *info, struct gofer_res *r, int rc)
{
	if (info) {
		snprintf(info->view_path, sizeof(info->view_path), "%s", r->path);
		info->hidden = rc == -ENOENT && r->hidden;
		if (rc == -EROFS)
			info->read_only = true;
	}
	gofer_res_release(r);
	return rc;
}

int gofer_resolve_existing(struct gofer_view *view, const char *base, const char *path,
			   bool nofollow, struct gofer_res *r, struct gofer_lookup_info *info)
{
	int rc;

	gofer_info_init(info);
	rc = gofer_resolve(view, base, path, nofollow ? 0 : GOFER_WALK_FOLLOW, r);
	if (rc == 0 && !r->exists)
		rc = -ENOENT;
	return rc < 0 ? gofer_finish(info, r, rc) : 0;
}

/* Mode, owner and group of the resolved object. */
int gofer_res_attr(const struct gofer_res *r, mode_t *mode, uid_t *uid, gid_t *gid)
{
	struct stat st;

	if (r->hfd < 0 && r->d && r->d->kind == GOFER_KIND_MAGIC && r->follow_magic) {
		if (fstat(r->d->fd, &st) < 0)
			return -errno;
		*mode = st.st_mode;
		*uid = st.st_uid;
		*gid = st.st_gid;
		return 0;
	}

	if (r->hfd >= 0 || r->d->kind == GOFER_KIND_BIND || r->d->kind == GOFER_KIND_DEVICE) {
		if (fstat(r->hfd >= 0 ? r->hfd : r->d->fd, &st) < 0)
			return -errno;
		*mode = st.st_mode;
		*uid = st.st_uid;
		*gid = st.st_gid;
		return 0;
	}
	*mode = r->d->mode;
	*uid = r->d->uid;
	*gid = r->d->gid;
	return 0;
}

/* The resolved object lives on a read-only host bind. */
/* gofer_res_host_rw - the resolved object (or its host parent) lies in a read-write bind. */
bool gofer_res_host_rw(const struct gofer_res *r)
{
	const struct gofer_dentry *b = r->bind ? r->bind : (r->d && r->d->kind == GOFER_KIND_BIND ? r->d : NULL);

	return b && b->rw;
}

bool gofer_res_is_host(const struct gofer_res *r)
{
	return r->hfd >= 0 || (r->d && r->d->kind == GOFER_KIND_BIND);
}

/* A new file description of the object a directory handle or symlink handle stands for. */
static int handle_open(struct gofer_view *v, struct gofer_dentry *d, int flags)
{
	_cleanup_close_ int mfd = -1;
	struct gofer_handle *h;
	int rc, fd;

	/* One handle inode per dentry: every open reopens it, which gives a
	 * new open file description (its own directory position). */
	for (h = d->handles; h; h = h->d_next)
		if (h->fd >= 0)
			return gofer_reopen(h->fd, flags);
	if (v->nheld >= GOFER_MAX_HANDLES)
		return -EMFILE;
	if (v->store_fd >= 0 && gofer_dentry_is_view_dir(d)) {
		/* With a store: an empty directory of the store, removed from
		 * it at once, so read() on the handle is EISDIR, flock works
		 * as on a directory, and nothing can be created in it (every
		 * *at() call is trapped and resolved in the view). */
		static unsigned long long seq;
		char name[64];

		snprintf(name, sizeof(name), "dir-%llu", ++seq);
		if (mkdirat(v->store_fd, name, 0700) < 0)
			return -errno;
		mfd = openat(v->store_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rc = mfd < 0 ? -errno : 0;
		(void)unlinkat(v->store_fd, name, AT_REMOVEDIR);
		if (rc < 0)
			return rc;
		v->nstore_dirs++;
	} else {
		rc = gofer_memfd_new(GOFER_HANDLE_NAME, &mfd);
		if (rc < 0)
			return rc;
		/* Sealed empty: the sandbox can never store bytes in a handle. */
		if (fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
			return -errno;
	}
	fd = gofer_reopen(mfd, flags);
	if (fd < 0)
		return fd;
	rc = gofer_table_add(v, d, mfd, true);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	mfd = -1;
	return fd;
}

/* Open host object @hfd (O_PATH) read-only with the request's flags. */
static int host_open(int hfd, mode_t mode, int flags)
{
	int oflags = O_RDONLY | (flags & (O_NONBLOCK | O_DIRECTORY | O_NOCTTY | O_LARGEFILE | O_NOATIME));
	int fd;

	/* A FIFO would block the sentry until a writer appears: open it non-blocking. */
	if (S_ISFIFO(mode))
		oflags |= O_NONBLOCK;
	fd = gofer_reopen(hfd, oflags);
	if (fd >= 0 && S_ISFIFO(mode) && !(flags & O_NONBLOCK) &&
	    fcntl(fd, F_SETFL, oflags & ~O_NONBLOCK) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/*
 * Open the view's FIFO @pfd (O_PATH) for @acc.  The sentry must not block:
 * the open is non-blocking, then O_NONBLOCK is cleared unless asked for.
 * A reader therefore never waits for a writer (it reads EOF until one
 * comes), and a writer without a reader gets ENXIO instead of waiting
 * (docs/compat.md).
 */
static int fifo_open(int pfd, int acc, int flags)
{
	int fd = gofer_reopen(pfd, acc | O_NONBLOCK | (flags & (STATUS_FLAGS & ~O_NONBLOCK)));

	if (fd >= 0 && !(flags & O_NONBLOCK)) {
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
	}
	return fd;
}

/* Open host object @hfd of a read-write bind for writing; the host kernel
 * checks access (the supervisor has the sandbox's credentials there). */
static int host_open_rw(int hfd, mode_t mode, int flags)
{
	int acc = flags & O_ACCMODE;

	if (S_ISFIFO(mode))
		return fifo_open(hfd, acc, flags);
	return gofer_reopen(hfd, acc | (flags & (STATUS_FLAGS | O_TRUNC)));
}

/* Create @r->name in the host directory @r->phfd of a read-write bind. */
static int host_create(struct gofer_res *r, int flags, mode_t mode)
{
	int fd = openat(r->phfd, r->name,
			(flags & (O_ACCMODE | STATUS_FLAGS | O_TRUNC | O_EXCL)) | O_CREAT | O_NOFOLLOW |
				O_CLOEXEC,
			mode);

	return fd < 0 ? -errno : fd;
}

/* Create a mem file @r->name in mem dir @r->pd. */
int gofer_create_file(struct gofer_view *v, struct gofer_res *r, mode_t mode,
		       struct gofer_dentry **out)
{
	struct gofer_dentry *d;
	int rc, fd;

	rc = gofer_quota_check(v);
	if (rc < 0)
		return rc;
	rc = gofer_file_new(v, r->name, &fd);
	if (rc < 0)
		return rc;
	d = gofer_dentry_new(v, GOFER_KIND_MEMFILE, r->name, S_IFREG | (mode & 07777), v->cfg.uid,
			     v->cfg.gid);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	{
		struct stat st;

		if (fstat(fd, &st) == 0)
			d->ino = st.st_ino;
	}
	rc = gofer_table_add(v, d, fd, false);
	if (rc == 0)
		rc = gofer_dentry_attach(r->pd, d);
	if (rc < 0) {
		gofer_dentry_free(v, d);
		return rc;
	}
	gofer_dentry_touch(r->pd);
	v->nfiles++;
	*out = d;
	return 0;
}

/*
 * May the sandbox create or remove names in the final component's parent?
 * EROFS in a host bind, EACCES in a skeleton directory (root-owned and
 * never writable, whatever the sandbox uid), else the mem dir's bits.
 */
int gofer_may_modify_parent(const struct gofer_view *v, const struct gofer_res *r)
{
	if (r->parent_host)
		return gofer_res_host_rw(r) && r->phfd >= 0 ? 0 : -EROFS;	/* the host kernel checks access */
	if (!r->pd || r->pd->kind == GOFER_KIND_SKEL)
		return -EACCES;
	return gofer_perm_check(v, r->pd->mode, r->pd->uid, r->pd->gid, W_OK | X_OK);
}

/* Sticky directory: only the owner of the entry or of the directory may remove it. */
int gofer_check_sticky(const struct gofer_view *v, const struct gofer_dentry *dir,
			const struct gofer_dentry *child)
{
	if (!(dir->mode & S_ISVTX) || dir->uid == v->cfg.uid || child->uid == v->cfg.uid)
		return 0;
	return -EPERM;
}

static int open_resolved(struct gofer_view *v, struct gofer_res *r, int flags, bool created)
{
	struct gofer_dentry *d = r->d;
	int acc = flags & O_ACCMODE, want = 0, rc, fd;
	bool is_dir, is_link;
	mode_t mode = 0;
	uid_t uid = 0;
	gid_t gid = 0;

	rc = gofer_res_attr(r, &mode, &uid, &gid);
	if (rc < 0)
		return rc;
	is_dir = S_ISDIR(mode);
	is_link = S_ISLNK(mode);
	if ((flags & O_CREAT) && !(flags & O_PATH) && is_dir)
		return -EISDIR;
	if (is_link && !(flags & O_PATH))
		return -ELOOP;	/* a final symlink reached only with O_NOFOLLOW */
	if ((flags & O_DIRECTORY) && !is_dir)
		return -ENOTDIR;

	if (flags & O_PATH) {
		/* No permission check on the object itself, as Linux. */
		if (r->hfd >= 0) {
			fd = r->hfd;
			r->hfd = -1;
			return fd;
		}
		switch (d->kind) {
		case GOFER_KIND_MAGIC:
			if (r->follow_magic)
				return gofer_reopen(d->fd, O_PATH);
			return handle_open(v, d, O_PATH);
		case GOFER_KIND_SKEL:
		case GOFER_KIND_MEMDIR:
		case GOFER_KIND_SYMLINK:
			return handle_open(v, d, O_PATH);
		default:
			return gofer_reopen(d->fd, O_PATH);
		}
	}

	if (acc == O_RDONLY)
		want = R_OK;
	else if (acc == O_WRONLY)
		want = W_OK;
	else
		want = R_OK | W_OK;
	if (flags & O_TRUNC)
		want |= W_OK;
	if (is_dir && (want & W_OK))
		return -EISDIR;
	/* Read-only mount: EROFS before any permission check (may_open). */
	if (gofer_res_is_host(r) && (want & W_OK) && !gofer_res_host_rw(r))
		return -EROFS;
	if (!created) {
		rc = gofer_perm_check(v, mode, uid, gid, want);
		if (rc < 0)
			return rc;
	}
	if (r->hfd >= 0 && (want & W_OK))
		return host_open_rw(r->hfd, mode, flags);
	if (r->hfd >= 0)
		return host_open(r->hfd, mode, flags);

	switch (d->kind) {
	case GOFER_KIND_FIFO:
		return fifo_open(d->fd, acc, flags);
	case GOFER_KIND_MAGIC:
		/* /proc/PID/fd/N of a pipe, socket or nameless file: reopen
		 * the object itself (Linux's proc_fd_link semantics). */
		return gofer_reopen(d->fd, acc | (flags & (STATUS_FLAGS | O_TRUNC)));
	case GOFER_KIND_SKEL:
	case GOFER_KIND_MEMDIR:
		return handle_open(v, d, O_RDONLY | (flags & O_NONBLOCK));
	case GOFER_KIND_BIND:
		if (want & W_OK)
			return host_open_rw(d->fd, mode, flags);
		return host_open(d->fd, mode, flags);
	case GOFER_KIND_SYNTH:
		if (want & W_OK)
			return -EACCES;
		return gofer_reopen(d->fd, O_RDONLY | (flags & STATUS_FLAGS));
	case GOFER_KIND_DEVICE:
		return gofer_reopen(d->fd, acc | (flags & (STATUS_FLAGS | O_TRUNC)));
	case GOFER_KIND_MEMFILE:
		fd = gofer_reopen(d->fd, acc | (flags & STATUS_FLAGS));
		if (fd < 0)
			return fd;
		if ((flags & O_TRUNC) && (want & W_OK) && ftruncate(d->fd, 0) < 0) {
			rc = -errno;
			close(fd);
			return rc;
		}
		return fd;
	case GOFER_KIND_SYMLINK:
		break;
	}
	return -ELOOP;
}

int gofer_open(struct gofer_view *view, const char *base, const char *path, int flags,
	       mode_t mode, struct gofer_lookup_info *info)
{
	return gofer_open2(view, base, path, flags, mode, 0, info);
}

/* Linux RESOLVE_* bits to the walker's. */
static unsigned int resolve_walk_flags(uint64_t resolve)
{
	unsigned int wf = 0;

	if (resolve & RESOLVE_NO_XDEV)
		wf |= GOFER_WALK_NO_XDEV;
	if (resolve & RESOLVE_NO_MAGICLINKS)
		wf |= GOFER_WALK_NO_MAGICLINKS;
	if (resolve & RESOLVE_NO_SYMLINKS)
		wf |= GOFER_WALK_NO_SYMLINKS | GOFER_WALK_NO_MAGICLINKS;
	if (resolve & RESOLVE_BENEATH)
		wf |= GOFER_WALK_BENEATH;
	if (resolve & RESOLVE_IN_ROOT)
		wf |= GOFER_WALK_IN_ROOT;
	return wf;
}

int gofer_open2(struct gofer_view *view, const char *base, const char *path, int flags,
		mode_t mode, uint64_t resolve, struct gofer_lookup_info *info)
{
	struct gofer_res r;
	unsigned int wf = resolve_walk_flags(resolve);
	bool created = false;
	int rc;

	gofer_info_init(info);
	if (resolve & ~(uint64_t)(RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |
				  RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_CACHED))
		return -EINVAL;
	if ((resolve & RESOLVE_BENEATH) && (resolve & RESOLVE_IN_ROOT))
		return -EINVAL;
	/* RESOLVE_CACHED: the view is in memory, but creating or truncating
	 * is never "cached" (openat2(2)). */
	if ((resolve & RESOLVE_CACHED) && (flags & (O_CREAT | O_TRUNC | O_TMPFILE)))
		return -EAGAIN;
	if ((flags & O_TMPFILE) == O_TMPFILE)
		return gofer_tmpfile_at(view, base, path, flags, mode, wf, info);
	if (flags & O_PATH)
		flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	/* O_CREAT|O_EXCL never follows a final symlink (it is EEXIST). */
	if (!(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL)))
		wf |= GOFER_WALK_FOLLOW;
	if (flags & O_CREAT)
		wf |= GOFER_WALK_PARENT;
	rc = gofer_resolve(view, base, path, wf, &r);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	if (!r.exists) {
		if (!(flags & O_CREAT))
			return gofer_finish(info, &r, -ENOENT);
		if (r.trailing_slash)
			return gofer_finish(info, &r, -EISDIR);
		rc = gofer_may_modify_parent(view, &r);
		if (rc == 0 && r.parent_host)
			return gofer_finish(info, &r, host_create(&r, flags, mode));
		if (rc == 0)
			rc = gofer_create_file(view, &r, mode, &r.d);
		if (rc < 0)
			return gofer_finish(info, &r, rc);
		created = true;
	} else if ((flags & O_CREAT) && (flags & O_EXCL)) {
		return gofer_finish(info, &r, -EEXIST);
	}
	rc = open_resolved(view, &r, flags, created);
	return gofer_finish(info, &r, rc);
}

int gofer_stat(struct gofer_view *view, const char *base, const char *path, bool nofollow,
	       struct stat *st, struct gofer_lookup_info *info)
{
	struct gofer_res r;
	int rc;

	gofer_info_init(info);
	rc = gofer_resolve(view, base, path, nofollow ? 0 : GOFER_WALK_FOLLOW, &r);
	if (rc == 0 && !r.exists)
		rc = -ENOENT;
	if (rc == 0) {
		if (r.hfd >= 0) {
			memset(st, 0, sizeof(*st));
			rc = fstat(r.hfd, st) < 0 ? -errno : 0;
		} else if (r.d->kind == GOFER_KIND_MAGIC && r.follow_magic) {
			rc = gofer_fd_stat(view, r.d->fd, st);
		} else {
			rc = gofer_dentry_stat(view, r.d, st);
		}
	}
	return gofer_finish(info, &r, rc);
}

int gofer_access(struct gofer_view *view, const char *base, const char *path, int amode,
		 int flags, struct gofer_lookup_info *info)
{
	struct gofer_res r;
	mode_t mode = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	int rc;

	gofer_info_init(info);
	if (amode & ~(R_OK | W_OK | X_OK))
		return -EINVAL;
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EACCESS | AT_EMPTY_PATH))
		return -EINVAL;
	rc = gofer_resolve(view, base, path,
			   (flags & AT_SYMLINK_NOFOLLOW) ? 0 : GOFER_WALK_FOLLOW, &r);
	if (rc == 0 && !r.exists)
		rc = -ENOENT;
	if (rc == 0 && amode != F_OK)
		rc = gofer_res_attr(&r, &mode, &uid, &gid);
	if (rc == 0 && amode != F_OK) {
		/* sb_permission(): EROFS for regular files, directories and symlinks. */
		if ((amode & W_OK) && gofer_res_is_host(&r) && !gofer_res_host_rw(&r) &&
		    (S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode)))
			rc = -EROFS;
		else if ((amode & W_OK) && r.d && r.d->kind == GOFER_KIND_SKEL)
			rc = -EACCES;	/* skeleton directories are never writable */
		else
			rc = gofer_perm_check(view, mode, uid, gid, amode);
	}
	return gofer_finish(info, &r, rc);
}

ssize_t gofer_readlink(struct gofer_view *view, const char *base, const char *path, char *buf,
		       size_t size, struct gofer_lookup_info *info)
{
	struct gofer_res r;
	ssize_t n = 0;
	int rc;

	gofer_info_init(info);
	if (size == 0)
		return -EINVAL;
	rc = gofer_resolve(view, base, path, 0, &r);
	if (rc == 0 && !r.exists)
		rc = -ENOENT;
	if (rc == 0) {
		if (r.hfd >= 0) {
			n = readlinkat(r.hfd, "", buf, size);
			if (n < 0)
				rc = errno == ENOENT ? -EINVAL : -errno;
		} else if (r.d->kind == GOFER_KIND_SYMLINK || r.d->kind == GOFER_KIND_MAGIC) {
			size_t len = strlen(r.d->target);

			n = (ssize_t)(len < size ? len : size);
			memcpy(buf, r.d->target, (size_t)n);
		} else {
			rc = -EINVAL;
		}
	}
	rc = gofer_finish(info, &r, rc);
	return rc < 0 ? rc : n;
}

int gofer_mkdir(struct gofer_view *view, const char *base, const char *path, mode_t mode,
		struct gofer_lookup_info *info)
{
	struct gofer_dentry *d;
	struct gofer_res r;
	int rc;

	gofer_info_init(info);
	rc = gofer_resolve(view, base, path, GOFER_WALK_PARENT, &r);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	if (r.exists || r.last != GOFER_LAST_NORM)
		return gofer_finish(info, &r, -EEXIST);
	rc = gofer_may_modify_parent(view, &r);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	if (r.parent_host)
		return gofer_finish(info, &r, mkdirat(r.phfd, r.name, mode & 07777) < 0 ? -errno : 0);
	rc = gofer_quota_check(view);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	d = gofer_dentry_new(view, GOFER_KIND_MEMDIR, r.name, S_IFDIR | (mode & 01777), view->cfg.uid,
			     view->cfg.gid);
	if (!d)
		return gofer_finish(info, &r, -ENOMEM);
	d->counted = true;
	view->nobjs++;
	rc = gofer_dentry_attach(r.pd, d);
	if (rc < 0) {
		gofer_dentry_free(view, d);
		return gofer_finish(info, &r, rc);
	}
	gofer_dentry_touch(r.pd);
	return gofer_finish(info, &r, 0);
}

int gofer_unlink(struct gofer_view *view, const char *base, const char *path, bool rmdir,
		 struct gofer_lookup_info *info)
{
	struct gofer_dentry *d;
	struct gofer_res r;
	int rc;

	gofer_info_init(info);
	rc = gofer_resolve(view, base, path, GOFER_WALK_PARENT, &r);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	if (r.last != GOFER_LAST_NORM) {
		if (!rmdir)
			return gofer_finish(info, &r, -EISDIR);
		return gofer_finish(info, &r, r.last == GOFER_LAST_DOT    ? -EINVAL :
					r.last == GOFER_LAST_DOTDOT ? -ENOTEMPTY :
								      -EBUSY);
	}
	if (r.parent_host && !(gofer_res_host_rw(&r) && r.phfd >= 0))
		return gofer_finish(info, &r, -EROFS);	/* mnt_want_write() comes before the lookup */
	if (r.parent_host)
		return gofer_finish(info, &r, unlinkat(r.phfd, r.name, rmdir ? AT_REMOVEDIR : 0) < 0 ?
						      -errno : 0);
	if (!r.exists)
		return gofer_finish(info, &r, -ENOENT);
	rc = gofer_may_modify_parent(view, &r);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	d = r.d;
	rc = gofer_check_sticky(view, r.pd, d);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	if (rmdir) {
		if (!gofer_dentry_is_dir(d))
			return gofer_finish(info, &r, -ENOTDIR);
		if (d->mount_root)
			return gofer_finish(info, &r, -EBUSY);
		if (d->nchild)
			return gofer_finish(info, &r, -ENOTEMPTY);
	} else {
		if (gofer_dentry_is_dir(d))
			return gofer_finish(info, &r, -EISDIR);
		if (d->mount_root)
			return gofer_finish(info, &r, -EBUSY);
	}
	gofer_dentry_detach(d);
	gofer_dentry_free(view, d);
	gofer_dentry_touch(r.pd);
	return gofer_finish(info, &r, 0);
}

/* Which filesystem the parent of a resolved name belongs to (EXDEV check). */
static const void *parent_fs(const struct gofer_view *v, const struct gofer_res *r)
{
	static const char mem_fs, skel_fs;

	if (r->parent_host)
		return r->bind;
	if (r->pd && r->pd->kind == GOFER_KIND_MEMDIR)
		return &mem_fs;
	return &skel_fs;
}

/* rename inside one read-write bind: the host kernel decides. */
static int host_rename(struct gofer_res *ro, struct gofer_res *rn, unsigned int flags)
{
	if (!gofer_res_host_rw(ro) || ro->phfd < 0 || rn->phfd < 0)
		return -EROFS;
	return syscall(SYS_renameat2, ro->phfd, ro->name, rn->phfd, rn->name, flags) < 0 ? -errno : 0;
}

static int do_rename(struct gofer_view *v, struct gofer_res *ro, struct gofer_res *rn,
		     unsigned int flags)
{
	struct gofer_dentry *od, *nd, *p;
	char *name;
	int rc;

	if (ro->last != GOFER_LAST_NORM)
		return -EBUSY;
	if (rn->last != GOFER_LAST_NORM)
		return (flags & RENAME_NOREPLACE) ? -EEXIST : -EBUSY;
	if (parent_fs(v, ro) != parent_fs(v, rn))
		return -EXDEV;
	if (ro->parent_host)
		return host_rename(ro, rn, flags);
	if (!ro->exists)
		return -ENOENT;
	od = ro->d;
	nd = rn->exists ? rn->d : NULL;
	if (!gofer_dentry_is_dir(od) && (ro->trailing_slash || rn->trailing_slash))
		return -ENOTDIR;
	/* A directory cannot move into its own subtree. */
	for (p = rn->pd; p; p = p->parent)
		if (p == od)
			return -EINVAL;
	if (nd && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if (od == nd)
		return 0;
	rc = gofer_may_modify_parent(v, ro);
	if (rc == 0)
		rc = gofer_check_sticky(v, ro->pd, od);
	if (rc == 0)
		rc = gofer_may_modify_parent(v, rn);
	if (rc == 0 && nd)
		rc = gofer_check_sticky(v, rn->pd, nd);
	if (rc < 0)
		return rc;
	if (nd) {
		if (gofer_dentry_is_dir(od) && !gofer_dentry_is_dir(nd))
			return -ENOTDIR;
		if (!gofer_dentry_is_dir(od) && gofer_dentry_is_dir(nd))
			return -EISDIR;
	}
	if (od->mount_root || (nd && nd->mount_root))
		return -EBUSY;
	if (nd && nd->nchild)
		return -ENOTEMPTY;

	/* Allocate first: past this point the rename cannot fail. */
	rc = gofer_dentry_reserve(rn->pd);
	if (rc < 0)
		return rc;
	name = strdup(rn->name);
	if (!name)
		return -ENOMEM;
	if (nd) {
		gofer_dentry_detach(nd);
		gofer_dentry_free(v, nd);
	}
	gofer_dentry_detach(od);
	free(od->name);
	od->name = name;
	gofer_dentry_attach(rn->pd, od);
	gofer_dentry_touch(ro->pd);
	gofer_dentry_touch(rn->pd);
	od->ctime = rn->pd->mtime;
	return 0;
}

/* renameat2(RENAME_EXCHANGE): swap two existing names atomically. */
static int do_exchange(struct gofer_view *v, struct gofer_res *ro, struct gofer_res *rn)
{
	struct gofer_dentry *od, *nd, *op, *np, *p;
	char *tmp;
	int rc;

	if (ro->last != GOFER_LAST_NORM || rn->last != GOFER_LAST_NORM)
		return -EBUSY;
	if (parent_fs(v, ro) != parent_fs(v, rn))
		return -EXDEV;
	if (ro->parent_host)
		return host_rename(ro, rn, RENAME_EXCHANGE);
	if (!ro->exists || !rn->exists)
		return -ENOENT;
	od = ro->d;
	nd = rn->d;
	if ((!gofer_dentry_is_dir(od) && ro->trailing_slash) ||
	    (!gofer_dentry_is_dir(nd) && rn->trailing_slash))
		return -ENOTDIR;
	for (p = rn->pd; p; p = p->parent)
		if (p == od)
			return -EINVAL;
	for (p = ro->pd; p; p = p->parent)
		if (p == nd)
			return -EINVAL;
	if (od == nd)
		return 0;
	rc = gofer_may_modify_parent(v, ro);
	if (rc == 0)
		rc = gofer_check_sticky(v, ro->pd, od);
	if (rc == 0)
		rc = gofer_may_modify_parent(v, rn);
	if (rc == 0)
		rc = gofer_check_sticky(v, rn->pd, nd);
	if (rc < 0)
		return rc;
	if (od->mount_root || nd->mount_root)
		return -EBUSY;
	/* Detach both first: each parent keeps room for the one coming in. */
	op = ro->pd;
	np = rn->pd;
	gofer_dentry_detach(od);
	gofer_dentry_detach(nd);
	tmp = od->name;
	od->name = nd->name;
	nd->name = tmp;
	gofer_dentry_attach(np, od);
	gofer_dentry_attach(op, nd);
	gofer_dentry_touch(op);
	gofer_dentry_touch(np);
	od->ctime = np->mtime;
	nd->ctime = np->mtime;
	return 0;
}

int gofer_rename(struct gofer_view *view, const char *old_base, const char *old_path,
		 const char *new_base, const char *new_path, unsigned int flags,
		 struct gofer_lookup_info *info)
{
	struct gofer_res ro, rn;
	int rc;

	gofer_info_init(info);
	if (flags & ~(unsigned int)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	rc = gofer_resolve(view, old_base, old_path, GOFER_WALK_PARENT, &ro);
	if (rc < 0)
		return gofer_finish(info, &ro, rc);
	rc = gofer_resolve(view, new_base, new_path, GOFER_WALK_PARENT, &rn);
	if (rc < 0) {
		gofer_res_release(&ro);
		return gofer_finish(info, &rn, rc);
	}
	rc = (flags & RENAME_EXCHANGE) ? do_exchange(view, &ro, &rn) : do_rename(view, &ro, &rn, flags);
	/* Audit the side that failed: the new path unless the old one was at fault. */
	if (rc == -ENOENT || rc == -EBUSY || rc == 0) {
		gofer_res_release(&rn);
		return gofer_finish(info, &ro, rc);
	}
	gofer_res_release(&ro);
	return gofer_finish(info, &rn, rc);
}

int gofer_chdir_resolve(struct gofer_view *view, const char *base, const char *path, char *out,
			size_t out_size, struct gofer_lookup_info *info)
{
	struct gofer_res r;
	mode_t mode = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	int rc;

	gofer_info_init(info);
	rc = gofer_resolve(view, base, path, GOFER_WALK_FOLLOW, &r);
	if (rc == 0 && !r.exists)
		rc = -ENOENT;
	if (rc == 0)
		rc = gofer_res_attr(&r, &mode, &uid, &gid);
	if (rc == 0 && !S_ISDIR(mode))
		rc = -ENOTDIR;
	if (rc == 0)
		rc = gofer_perm_check(view, mode, uid, gid, X_OK);
	if (rc == 0 && strlen(r.path) >= out_size)
		rc = -ENAMETOOLONG;
	if (rc == 0)
		memcpy(out, r.path, strlen(r.path) + 1);
	return gofer_finish(info, &r, rc);
}
