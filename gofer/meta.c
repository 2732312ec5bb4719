/*
 * meta.c - metadata and link operations of the view: symlink, link,
 * chmod, chown, utimens, truncate, mknod, O_TMPFILE, extended attributes,
 * statfs.
 *
 * The order of the checks follows Linux so that each call fails with the
 * errno the kernel gives on an equivalent tree: lookup errors, then the
 * type of the object, then EROFS (mnt_want_write on a read-only host
 * bind), then ownership or permission (fs/attr.c setattr_prepare,
 * fs/open.c chmod_common/chown_common/do_truncate, fs/namei.c
 * vfs_symlink/vfs_link/vfs_mknod, fs/xattr.c).  In-memory trees behave as
 * a tmpfs mounted without user extended attributes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "gofer-internal.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef UTIME_NOW
#define UTIME_NOW ((1l << 30) - 1l)
#define UTIME_OMIT ((1l << 30) - 2l)
#endif

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

/* The dentry (view object) or host fd of a resolved, existing object. */
static bool res_host_fd(const struct gofer_res *r, int *fd)
{
	if (r->hfd >= 0) {
		*fd = r->hfd;
		return true;
	}
	if (r->d->kind == GOFER_KIND_BIND) {
		*fd = r->d->fd;
		return true;
	}
	return false;
}

/* --- symlink, link, mknod --------------------------------------------- */

/* Resolve the final name to create: parent info, no follow. */
static int resolve_new(struct gofer_view *v, const char *base, const char *path,
		       struct gofer_res *r)
{
	int rc = gofer_resolve(v, base, path, GOFER_WALK_PARENT, r);

	if (rc < 0)
		return rc;
	if (r->exists || r->last != GOFER_LAST_NORM)
		return -EEXIST;
	return 0;
}

int gofer_symlink(struct gofer_view *view, const char *target, const char *base,
		  const char *path, struct gofer_lookup_info *info)
{
	struct gofer_dentry *d;
	struct gofer_res r;
	int rc;

	gofer_info_init(info);
	rc = resolve_new(view, base, path, &r);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	/* A trailing slash on a new symlink name: the kernel reports ENOENT. */
	if (r.trailing_slash)
		return gofer_finish(info, &r, -ENOENT);
	rc = gofer_may_modify_parent(view, &r);
	if (rc == 0 && r.parent_host)
		return gofer_finish(info, &r, symlinkat(target, r.phfd, r.name) < 0 ? -errno : 0);
	if (rc == 0)
		rc = gofer_quota_check(view);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	d = gofer_dentry_new(view, GOFER_KIND_SYMLINK, r.name, S_IFLNK | 0777, view->cfg.uid,
			     view->cfg.gid);
	if (!d)
		return gofer_finish(info, &r, -ENOMEM);
	d->counted = true;
	view->nobjs++;
	d->target = strdup(target);
	if (!d->target || gofer_dentry_attach(r.pd, d) < 0) {
		gofer_dentry_free(view, d);
		return gofer_finish(info, &r, -ENOMEM);
	}
	gofer_dentry_touch(r.pd);
	return gofer_finish(info, &r, 0);
}

/* Add a new name for mem file @src (a dentry, or a detached memfd @fd when
 * @src is NULL: an O_TMPFILE file) at the parent/name described by @rn. */
static int link_memfile(struct gofer_view *v, struct gofer_dentry *src, int fd, mode_t mode,
			struct gofer_res *rn)
{
	struct gofer_dentry *d;
	struct stat st;
	int nfd;

	nfd = fcntl(src ? src->fd : fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -errno;
	if (fstat(nfd, &st) < 0) {
		close(nfd);
		return -errno;
	}
	d = gofer_dentry_new(v, GOFER_KIND_MEMFILE, rn->name, src ? src->mode : mode,
			     src ? src->uid : v->cfg.uid, src ? src->gid : v->cfg.gid);
	if (!d) {
		close(nfd);
		return -ENOMEM;
	}
	d->fd = nfd;
	d->ino = st.st_ino;
	if (gofer_dentry_attach(rn->pd, d) < 0) {
		gofer_dentry_free(v, d);
		return -ENOMEM;
	}
	if (src) {
		d->link_next = src->link_next;
		src->link_next = d;
	} else {
		if (gofer_table_add(v, d, nfd, false) < 0) {
			gofer_dentry_detach(d);
			gofer_dentry_free(v, d);
			return -ENOMEM;
		}
		/* The store file's bits hold the ghost mode; the named file
		 * keeps its mode in the dentry and stays reopenable. */
		(void)fchmod(nfd, 0600);
		v->nfiles++;
	}
	gofer_dentry_touch(rn->pd);
	return 0;
}

int gofer_link(struct gofer_view *view, const char *old_base, const char *old_path,
	       const char *new_base, const char *new_path, bool follow,
	       struct gofer_lookup_info *info)
{
	struct gofer_res ro, rn;
	struct gofer_dentry *od;
	int rc;

	gofer_info_init(info);
	rc = gofer_resolve(view, old_base, old_path, follow ? GOFER_WALK_FOLLOW : 0, &ro);
	if (rc == 0 && !ro.exists)
		rc = -ENOENT;
	if (rc < 0)
		return gofer_finish(info, &ro, rc);
	rc = resolve_new(view, new_base, new_path, &rn);
	if (rc < 0) {
		gofer_res_release(&ro);
		return gofer_finish(info, &rn, rc);
	}
	/* Same mount required (EXDEV) before anything else. */
	if (gofer_res_is_host(&ro) || rn.parent_host) {
		bool same = gofer_res_is_host(&ro) && rn.parent_host && ro.bind == rn.bind;

		if (same && gofer_res_host_rw(&rn) && rn.phfd >= 0 && ro.hfd >= 0) {
			/* Inside one read-write bind: the host kernel links the
			 * very object resolved (through its magic link); a
			 * symlink is copied as a new symlink, so that no host
			 * link is ever followed out of the view. */
			char p[64], t[PATH_MAX];
			struct stat st;
			ssize_t tl;

			if (fstat(ro.hfd, &st) == 0 && S_ISLNK(st.st_mode)) {
				tl = readlinkat(ro.hfd, "", t, sizeof(t) - 1);
				if (tl < 0) {
					rc = -errno;
				} else {
					t[tl] = '\0';
					rc = symlinkat(t, rn.phfd, rn.name) < 0 ? -errno : 0;
				}
				gofer_res_release(&ro);
				return gofer_finish(info, &rn, rc);
			}
			snprintf(p, sizeof(p), "/proc/self/fd/%d", ro.hfd);
			rc = linkat(AT_FDCWD, p, rn.phfd, rn.name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
			gofer_res_release(&ro);
			return gofer_finish(info, &rn, rc);
		}
		gofer_res_release(&ro);
		return gofer_finish(info, &rn, same ? -EROFS : -EXDEV);
	}
	od = ro.d;
	if ((od->kind == GOFER_KIND_MEMFILE || od->kind == GOFER_KIND_MEMDIR ||
	     (od->kind == GOFER_KIND_SYMLINK && ro.pd && ro.pd->kind == GOFER_KIND_MEMDIR)) !=
	    (rn.pd && rn.pd->kind == GOFER_KIND_MEMDIR)) {
		gofer_res_release(&ro);
		return gofer_finish(info, &rn, -EXDEV);
	}
	rc = gofer_may_modify_parent(view, &rn);
	if (rc == 0 && gofer_dentry_is_dir(od))
		rc = -EPERM;
	if (rc == 0 && rn.trailing_slash)
		rc = -ENOENT;
	/* fs.protected_hardlinks: linking a file one does not own needs
	 * read and write access to it. */
	if (rc == 0 && od->uid != view->cfg.uid &&
	    (!S_ISREG(od->mode) || (od->mode & S_ISUID) ||
	     ((od->mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) ||
	     gofer_perm_check(view, od->mode, od->uid, od->gid, R_OK | W_OK) < 0))
		rc = -EPERM;
	if (rc == 0) {
		if (od->kind == GOFER_KIND_MEMFILE) {
			rc = link_memfile(view, od, -1, 0, &rn);
		} else if (od->kind == GOFER_KIND_SYMLINK) {
			/* Hard link to a symlink: a second symlink with the same
			 * target (its own inode number: the one visible
			 * difference, documented in docs/compat.md). */
			struct gofer_dentry *d = gofer_dentry_new(view, GOFER_KIND_SYMLINK, rn.name,
								  od->mode, od->uid, od->gid);

			rc = gofer_quota_check(view);
			if (rc < 0) {
				if (d)
					gofer_dentry_free(view, d);
			} else if (!d || !(d->target = strdup(od->target)) ||
				   gofer_dentry_attach(rn.pd, d) < 0) {
				if (d)
					gofer_dentry_free(view, d);
				rc = -ENOMEM;
			} else {
				d->counted = true;
				view->nobjs++;
				gofer_dentry_touch(rn.pd);
			}
		} else {
			rc = -EPERM;
		}
	}
	if (rc == 0)
		now(&od->ctime);
	gofer_res_release(&ro);
	return gofer_finish(info, &rn, rc);
}

/* @fd is an O_TMPFILE file of the view opened without O_EXCL. */
static bool fd_linkable(const struct gofer_view *v, int fd)
{
	char link[64], hp[PATH_MAX], val = 0;
	ssize_t n;

	if (v->store_fd >= 0) {
		struct stat st;

		return fstat(fd, &st) == 0 && gofer_is_store_file(v, &st) &&
		       fgetxattr(fd, GOFER_LINKABLE_XATTR, &val, 1) == 1 && val == '1';
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, hp, sizeof(hp) - 1);
	if (n <= 0)
		return false;
	hp[n] = '\0';
	return strncmp(hp, "/memfd:" GOFER_TMPFILE_NAME " ", sizeof("/memfd:" GOFER_TMPFILE_NAME)) == 0;
}

int gofer_fd_link(struct gofer_view *view, int fd, const char *new_base, const char *new_path,
		  struct gofer_lookup_info *info)
{
	struct gofer_res rn;
	struct stat st;
	int rc;

	gofer_info_init(info);
	if (fstat(fd, &st) < 0)
		return -EBADF;
	rc = resolve_new(view, new_base, new_path, &rn);
	if (rc < 0)
		return gofer_finish(info, &rn, rc);
	if (rn.parent_host)
		return gofer_finish(info, &rn, -EXDEV);
	rc = gofer_may_modify_parent(view, &rn);
	if (rc == 0 && rn.trailing_slash)
		rc = -ENOENT;
	if (rc == 0 && (gofer_table_find(view, st.st_dev, st.st_ino) || !fd_linkable(view, fd)))
		rc = -ENOENT;
	if (rc == 0)
		rc = gofer_quota_check(view);
	if (rc == 0)
		rc = link_memfile(view, NULL, fd, S_IFREG | (st.st_mode & 07777), &rn);
	return gofer_finish(info, &rn, rc);
}

/*
 * A named pipe in the store: a real FIFO inode of the run's tmpfs, made
 * under a private name, held by an O_PATH fd and unlinked from the store
 * at once, so that opening the view name opens that FIFO (reader and
 * writer meet in the kernel) while the supervisor holds neither end.
 * Without a store (--disk-quota 0) there is nowhere to make one: EPERM.
 */
static int make_fifo(struct gofer_view *v, struct gofer_res *r, mode_t mode)
{
	static unsigned long long seq;
	struct gofer_dentry *d;
	char name[64];
	int fd, rc;

	if (v->store_fd < 0)
		return -EPERM;
	rc = gofer_quota_check(v);
	if (rc < 0)
		return rc;
	snprintf(name, sizeof(name), "fifo-%llu", ++seq);
	if (mknodat(v->store_fd, name, S_IFIFO | 0600, 0) < 0)
		return -errno;
	fd = openat(v->store_fd, name, O_PATH | O_CLOEXEC);
	rc = fd < 0 ? -errno : 0;
	(void)unlinkat(v->store_fd, name, 0);
	if (rc < 0)
		return rc;
	d = gofer_dentry_new(v, GOFER_KIND_FIFO, r->name, S_IFIFO | mode, v->cfg.uid, v->cfg.gid);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	rc = gofer_table_add(v, d, fd, false);
	if (rc == 0)
		rc = gofer_dentry_attach(r->pd, d);
	if (rc < 0) {
		gofer_dentry_free(v, d);
		return rc;
	}
	gofer_dentry_touch(r->pd);
	return 0;
}

int gofer_mknod(struct gofer_view *view, const char *base, const char *path, mode_t mode,
		dev_t dev, struct gofer_lookup_info *info)
{
	struct gofer_dentry *d;
	struct gofer_res r;
	int rc;

	gofer_info_init(info);
	(void)dev;
	switch (mode & S_IFMT) {
	case 0:
	case S_IFREG:
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		break;
	default:
		return -EINVAL;
	}
	rc = resolve_new(view, base, path, &r);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	if (r.trailing_slash)
		return gofer_finish(info, &r, -ENOENT);
	/* Device nodes need CAP_MKNOD (vfs_mknod), checked before the mount. */
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return gofer_finish(info, &r, -EPERM);
	rc = gofer_may_modify_parent(view, &r);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	if (r.parent_host)
		return gofer_finish(info, &r, mknodat(r.phfd, r.name, mode, 0) < 0 ? -errno : 0);
	if (S_ISFIFO(mode)) {
		rc = make_fifo(view, &r, mode & 07777);
		return gofer_finish(info, &r, rc);
	}
	if (S_ISSOCK(mode)) {
		/* Socket nodes have no in-memory backing: refused (docs/compat.md). */
		return gofer_finish(info, &r, -EPERM);
	}
	rc = gofer_create_file(view, &r, mode & 07777, &d);
	return gofer_finish(info, &r, rc);
}

int gofer_tmpfile(struct gofer_view *view, const char *base, const char *path, int flags,
		  mode_t mode, struct gofer_lookup_info *info)
{
	return gofer_tmpfile_at(view, base, path, flags, mode, 0, info);
}

/* gofer_tmpfile with walker restrictions @wf (GOFER_WALK_* RESOLVE bits). */
int gofer_tmpfile_at(struct gofer_view *view, const char *base, const char *path, int flags,
		     mode_t mode, unsigned int wf, struct gofer_lookup_info *info)
{
	struct gofer_res r;
	mode_t dmode = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	int rc, fd, mfd, acc = flags & O_ACCMODE;

	gofer_info_init(info);
	if (acc != O_WRONLY && acc != O_RDWR)
		return -EINVAL;
	rc = gofer_resolve(view, base, path, GOFER_WALK_FOLLOW | wf, &r);
	if (rc == 0 && !r.exists)
		rc = -ENOENT;
	if (rc == 0)
		rc = gofer_res_attr(&r, &dmode, &uid, &gid);
	if (rc == 0 && !S_ISDIR(dmode))
		rc = -ENOTDIR;
	if (rc == 0 && gofer_res_is_host(&r)) {
		if (!gofer_res_host_rw(&r))
			return gofer_finish(info, &r, -EROFS);
		fd = openat(r.hfd >= 0 ? r.hfd : r.d->fd, ".",
			    O_TMPFILE | acc | (flags & (O_EXCL | O_APPEND | O_NONBLOCK)) | O_CLOEXEC,
			    mode & 07777);
		return gofer_finish(info, &r, fd < 0 ? -errno : fd);
	}
	if (rc == 0 && r.d->kind == GOFER_KIND_SKEL)
		rc = -EACCES;
	if (rc == 0)
		rc = gofer_perm_check(view, dmode, uid, gid, W_OK | X_OK);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	rc = gofer_quota_check(view);
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	/* Whether linkat() may give it a name (not O_EXCL): the memfd name,
	 * or an attribute of the store file. */
	if (view->store_fd >= 0) {
		rc = gofer_file_new(view, "tmpfile", &mfd);
		if (rc == 0 && !(flags & O_EXCL))
			(void)fsetxattr(mfd, GOFER_LINKABLE_XATTR, "1", 1, 0);
	} else {
		rc = gofer_memfd_new((flags & O_EXCL) ? GOFER_MEMFD_PREFIX ":tmpfile-excl" :
							GOFER_TMPFILE_NAME, &mfd);
	}
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	fd = gofer_reopen(mfd, acc | (flags & (O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC | O_NOATIME)));
	/* Its bits are what fstat() shows while it has no name. */
	(void)fchmod(mfd, mode & 07777);
	close(mfd);
	return gofer_finish(info, &r, fd);
}

/* --- chmod, chown, utimens -------------------------------------------- */

/* The dentries sharing @d's metadata: the hard link ring of a mem file. */
#define for_each_link(p, d) \
	for (struct gofer_dentry *p = (d), *p##_end = NULL; p != p##_end; \
	     p##_end = (d), p = p->link_next)

/* Change time of @d: the memfd's own ctime for files (a no-op fchmod
 * makes the kernel stamp it), the dentry's for the rest. */
static void touch_ctime(struct gofer_dentry *d)
{
	struct stat st;

	if (d->kind == GOFER_KIND_MEMFILE && fstat(d->fd, &st) == 0) {
		(void)fchmod(d->fd, st.st_mode & 07777);
		return;
	}
	now(&d->ctime);
}

/*
 * Attribute change on view object @d: chmod (@mode != (mode_t)-1) or
 * chown (@uid/@gid, -1 = unchanged).  Host objects never reach here.
 */
static int setattr_dentry(struct gofer_view *v, struct gofer_dentry *d, mode_t mode, uid_t uid,
			  gid_t gid)
{
	bool owner = d->uid == v->cfg.uid;
	mode_t m = d->mode;

	if (d->kind == GOFER_KIND_DEVICE)
		return -EPERM;
	if (mode != (mode_t)-1) {
		if (!owner)
			return -EPERM;
		m = (m & S_IFMT) | (mode & 07777);
		/* setattr_prepare: S_ISGID only for a member of the file's group. */
		if (d->gid != v->cfg.gid && !S_ISDIR(m))
			m &= ~(mode_t)S_ISGID;
	} else {
		if (uid != (uid_t)-1 && !(owner && uid == d->uid))
			return -EPERM;
		if (gid != (gid_t)-1 && !(owner && (gid == d->gid || gid == v->cfg.gid)))
			return -EPERM;
		/* chown_common: a non-directory loses set-user-ID, and
		 * set-group-ID when group-executable. */
		if (!S_ISDIR(m) && (uid != (uid_t)-1 || gid != (gid_t)-1)) {
			m &= ~(mode_t)S_ISUID;
			if (m & S_IXGRP)
				m &= ~(mode_t)S_ISGID;
		}
	}
	if (S_ISLNK(d->mode) && mode != (mode_t)-1)
		return -EOPNOTSUPP;
	for_each_link(p, d) {
		p->mode = m;
		if (uid != (uid_t)-1)
			p->uid = uid;
		if (gid != (gid_t)-1)
			p->gid = gid;
	}
	touch_ctime(d);
	return 0;
}

/* chmod/chown of host object @hfd (O_PATH) of a read-write bind. */
static int host_setattr(int hfd, mode_t mode, uid_t uid, gid_t gid)
{
	char p[64];

	if (mode != (mode_t)-1) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", hfd);
		return fchmodat(AT_FDCWD, p, mode & 07777, 0) < 0 ? -errno : 0;
	}
	return fchownat(hfd, "", uid, gid, AT_EMPTY_PATH) < 0 ? -errno : 0;
}

int gofer_setattr(struct gofer_view *view, const char *base, const char *path, bool nofollow,
		  mode_t mode, uid_t uid, gid_t gid, struct gofer_lookup_info *info)
{
	struct gofer_res r;
	int rc, hfd;

	rc = gofer_resolve_existing(view, base, path, nofollow, &r, info);
	if (rc < 0)
		return rc;
	if (res_host_fd(&r, &hfd)) {
		struct stat st;

		/* fchmodat2(AT_SYMLINK_NOFOLLOW) on a symlink: EOPNOTSUPP first. */
		if (mode != (mode_t)-1 && fstat(hfd, &st) == 0 && S_ISLNK(st.st_mode))
			return gofer_finish(info, &r, -EOPNOTSUPP);
		if (!gofer_res_host_rw(&r))
			return gofer_finish(info, &r, -EROFS);
		return gofer_finish(info, &r, host_setattr(hfd, mode, uid, gid));
	}
	return gofer_finish(info, &r, setattr_dentry(view, r.d, mode, uid, gid));
}

/* The view dentry behind fd @fd, or NULL (host object or not from the view). */
static struct gofer_dentry *fd_dentry(struct gofer_view *v, int fd, struct stat *st)
{
	struct gofer_handle *h;

	if (fstat(fd, st) < 0)
		return NULL;
	h = gofer_table_find(v, st->st_dev, st->st_ino);
	return h ? h->d : NULL;
}

/*
 * Is the object behind @fd (not in the view's tree) the sandbox's own: a
 * nameless file of the view, or an object owned by the sandbox uid (pipes,
 * sockets and memfds it made)?
 */
static bool anon_owned(const struct gofer_view *v, int fd, const struct stat *st)
{
	return gofer_is_view_file(v, fd) || st->st_uid == v->cfg.uid;
}

int gofer_fd_setattr(struct gofer_view *view, int fd, mode_t mode, uid_t uid, gid_t gid)
{
	struct stat st;
	struct gofer_dentry *d = fd_dentry(view, fd, &st);
	char vp[PATH_MAX];
	int rc;

	if (d)
		return setattr_dentry(view, d, mode, uid, gid);
	if (fstat(fd, &st) < 0)
		return -EBADF;
	if (fcntl(fd, F_GETFL) & O_PATH)
		return -EBADF;
	/* A host object of a bind: read-only mount, or the host kernel decides. */
	rc = gofer_fd_view_path(view, fd, vp, sizeof(vp));
	if (rc == 0) {
		const struct gofer_dentry *b = gofer_fd_bind(view, fd);

		if (!b || !b->rw)
			return -EROFS;
		if (mode != (mode_t)-1)
			return fchmod(fd, mode & 07777) < 0 ? -errno : 0;
		return fchown(fd, uid, gid) < 0 ? -errno : 0;
	}
	/* A file of the view without a name (unlinked, O_TMPFILE), or an
	 * object the sandbox made (pipe, socket, memfd): the change applies
	 * to the object itself.  Anything else (a host file inherited as a
	 * standard stream) is not the sandbox's: EPERM, as Linux answers a
	 * non-owner, and the supervisor's own rights never act for it. */
	if (!anon_owned(view, fd, &st))
		return -EPERM;
	if (uid != (uid_t)-1 && uid != view->cfg.uid)
		return -EPERM;
	if (gid != (gid_t)-1 && gid != view->cfg.gid)
		return -EPERM;
	if (mode != (mode_t)-1 && fchmod(fd, mode & 07777) < 0)
		return -errno;
	return 0;
}

static bool ts_special(const struct timespec *t, long v)
{
	return t->tv_nsec == v;
}

/*
 * utimensat on view object @d with @ts (NULL: both now).  Permission as
 * fs/utimes.c: setting explicit times needs ownership (EPERM); setting
 * both to now needs ownership or write access (EACCES).
 */
static int utimens_dentry(struct gofer_view *v, struct gofer_dentry *d, const struct timespec *ts)
{
	struct timespec t[2], n;
	bool explicit_times = ts && !(ts_special(&ts[0], UTIME_NOW) && ts_special(&ts[1], UTIME_NOW));
	bool owner = d->uid == v->cfg.uid;

	if (ts && ts_special(&ts[0], UTIME_OMIT) && ts_special(&ts[1], UTIME_OMIT))
		return 0;
	if (explicit_times) {
		if (!owner)
			return -EPERM;
	} else if (!owner) {
		if (d->kind == GOFER_KIND_SKEL || d->kind == GOFER_KIND_SYNTH ||
		    d->kind == GOFER_KIND_DEVICE)
			return -EACCES;
		if (gofer_perm_check(v, d->mode, d->uid, d->gid, W_OK) < 0)
			return -EACCES;
	}
	if (d->kind == GOFER_KIND_DEVICE)
		return -EPERM;
	if (d->kind == GOFER_KIND_MEMFILE || d->kind == GOFER_KIND_SYNTH)
		return futimens(d->fd, ts) < 0 ? -errno : 0;
	now(&n);
	t[0] = ts ? ts[0] : n;
	t[1] = ts ? ts[1] : n;
	if (!ts_special(&t[0], UTIME_OMIT))
		d->atime = ts_special(&t[0], UTIME_NOW) ? n : t[0];
	if (!ts_special(&t[1], UTIME_OMIT))
		d->mtime = ts_special(&t[1], UTIME_NOW) ? n : t[1];
	d->ctime = n;
	return 0;
}

int gofer_utimens(struct gofer_view *view, const char *base, const char *path, bool nofollow,
		  const struct timespec *ts, struct gofer_lookup_info *info)
{
	struct gofer_res r;
	int rc, hfd;

	rc = gofer_resolve_existing(view, base, path, nofollow, &r, info);
	if (rc < 0)
		return rc;
	if (res_host_fd(&r, &hfd)) {
		char p[64];

		if (!gofer_res_host_rw(&r))
			return gofer_finish(info, &r, -EROFS);
		/* The object itself, a symlink included: never its target. */
		(void)p;
		rc = utimensat(hfd, "", ts, AT_EMPTY_PATH) < 0 ? -errno : 0;
		return gofer_finish(info, &r, rc);
	}
	return gofer_finish(info, &r, utimens_dentry(view, r.d, ts));
}

int gofer_fd_utimens(struct gofer_view *view, int fd, const struct timespec *ts)
{
	struct stat st;
	struct gofer_dentry *d = fd_dentry(view, fd, &st);
	char vp[PATH_MAX];

	if (d)
		return utimens_dentry(view, d, ts);
	if (fstat(fd, &st) < 0)
		return -EBADF;
	if (gofer_fd_view_path(view, fd, vp, sizeof(vp)) == 0) {
		const struct gofer_dentry *b = gofer_fd_bind(view, fd);

		if (!b || !b->rw)
			return -EROFS;
		return futimens(fd, ts) < 0 ? -errno : 0;
	}
	/* The sandbox's own object or a nameless view file (see gofer_fd_setattr). */
	if (!anon_owned(view, fd, &st))
		return ts && !(ts_special(&ts[0], UTIME_NOW) && ts_special(&ts[1], UTIME_NOW)) ?
			       -EPERM : -EACCES;
	return futimens(fd, ts) < 0 ? -errno : 0;
}

/* --- truncate ----------------------------------------------------------- */

int gofer_truncate(struct gofer_view *view, const char *base, const char *path, int64_t length,
		   struct gofer_lookup_info *info)
{
	struct gofer_res r;
	mode_t mode = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	int rc;

	gofer_info_init(info);
	if (length < 0)
		return -EINVAL;
	rc = gofer_resolve(view, base, path, GOFER_WALK_FOLLOW, &r);
	if (rc == 0 && !r.exists)
		rc = -ENOENT;
	if (rc == 0)
		rc = gofer_res_attr(&r, &mode, &uid, &gid);
	/* vfs_truncate: EISDIR, EINVAL (not regular), EROFS, then permission. */
	if (rc == 0 && S_ISDIR(mode))
		rc = -EISDIR;
	if (rc == 0 && !S_ISREG(mode))
		rc = -EINVAL;
	if (rc == 0 && gofer_res_is_host(&r)) {
		int fd;

		if (!gofer_res_host_rw(&r))
			return gofer_finish(info, &r, -EROFS);
		fd = gofer_reopen(r.hfd >= 0 ? r.hfd : r.d->fd, O_WRONLY | O_NONBLOCK);
		if (fd < 0)
			return gofer_finish(info, &r, fd);
		rc = ftruncate(fd, (off_t)length) < 0 ? -errno : 0;
		close(fd);
		return gofer_finish(info, &r, rc);
	}
	if (rc == 0)
		rc = gofer_perm_check(view, mode, uid, gid, W_OK);
	if (rc == 0 && r.d->kind != GOFER_KIND_MEMFILE)
		rc = -EACCES;
	if (rc == 0 && ftruncate(r.d->fd, (off_t)length) < 0)
		rc = -errno;
	return gofer_finish(info, &r, rc);
}

/* --- extended attributes ------------------------------------------------ */

/*
 * Name checks of fs/xattr.c (import_xattr_name, xattr_resolve_name) and
 * the namespaces a tmpfs without user xattrs offers.  Returns the errno
 * for @name: 0 when the name is well formed in a supported namespace.
 */
enum xattr_ns { XNS_NONE, XNS_USER, XNS_TRUSTED, XNS_SECURITY, XNS_SYSTEM };

static int xattr_name_ns(const char *name, enum xattr_ns *ns)
{
	size_t n = strlen(name);

	if (n == 0 || n > XATTR_NAME_MAX)
		return -ERANGE;
	*ns = XNS_NONE;
	if (!strncmp(name, "user.", 5))
		*ns = XNS_USER;
	else if (!strncmp(name, "trusted.", 8))
		*ns = XNS_TRUSTED;
	else if (!strncmp(name, "security.", 9))
		*ns = XNS_SECURITY;
	else if (!strncmp(name, "system.", 7))
		*ns = XNS_SYSTEM;
	else
		return -EOPNOTSUPP;
	return 0;
}

/*
 * xattr operation @op on a view object (not a host one): 'g'et, 's'et,
 * 'l'ist, 'r'emove.  Returns the byte count for get/list or -errno.
 */
static ssize_t xattr_view(char op, const char *name, int flags)
{
	enum xattr_ns ns = XNS_NONE;
	int rc;

	if (op == 'l')
		return 0;	/* nothing stored, and no security module labels */
	rc = xattr_name_ns(name, &ns);
	if (rc < 0)
		return rc;
	switch (ns) {
	case XNS_USER:
		return -EOPNOTSUPP;
	case XNS_TRUSTED:
		/* xattr_permission without CAP_SYS_ADMIN. */
		return op == 'g' ? -ENODATA : -EPERM;
	case XNS_SECURITY:
		return op == 'g' ? -ENODATA : -EPERM;
	case XNS_SYSTEM:
		if (strcmp(name, "system.posix_acl_access") &&
		    strcmp(name, "system.posix_acl_default"))
			return -EOPNOTSUPP;
		if (op == 'g')
			return -ENODATA;
		if (op == 'r')
			return 0;	/* removing an absent ACL succeeds */
		(void)flags;
		return -EOPNOTSUPP;	/* ACLs are not stored by the view */
	case XNS_NONE:
		break;
	}
	return -EOPNOTSUPP;
}

/* xattr get/list on host object @hfd (O_PATH) through a read-only open. */
static ssize_t xattr_host(const struct gofer_view *v, int hfd, char op, const char *name,
			  void *buf, size_t size, int flags, bool rw)
{
	struct stat st;
	ssize_t n;
	int fd;

	if (op == 's' || op == 'r') {
		enum xattr_ns ns;
		int rc = xattr_name_ns(name, &ns);

		if (rc < 0)
			return rc;
		if (!rw)
			return -EROFS;
		if (fstat(hfd, &st) < 0)
			return -errno;
		if (S_ISLNK(st.st_mode))
			return -EPERM;	/* user.* on a symlink; never follow it */
		fd = gofer_reopen(hfd, O_RDONLY | O_NONBLOCK |
					       (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
		if (fd < 0)
			return fd;
		n = op == 's' ? fsetxattr(fd, name, buf, size, flags) : fremovexattr(fd, name);
		n = n < 0 ? -errno : 0;
		close(fd);
		return n;
	}
	if (fstat(hfd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return op == 'l' ? 0 : -ENODATA;
	if (op == 'g') {
		enum xattr_ns ns;
		int rc = xattr_name_ns(name, &ns);

		if (rc < 0)
			return rc;
		if (ns == XNS_TRUSTED)
			return -ENODATA;
		/* xattr_permission(): user.* values need read access. */
		if (ns == XNS_USER && gofer_perm_check(v, st.st_mode, st.st_uid, st.st_gid, R_OK) < 0)
			return -EACCES;
	}
	fd = gofer_reopen(hfd, O_RDONLY | O_NONBLOCK | (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (fd < 0)
		return fd;
	n = op == 'g' ? fgetxattr(fd, name, buf, size) : flistxattr(fd, buf, size);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

ssize_t gofer_xattr(struct gofer_view *view, const char *base, const char *path, bool nofollow,
		    char op, const char *name, void *buf, size_t size, int flags,
		    struct gofer_lookup_info *info)
{
	struct gofer_res r;
	ssize_t n;
	int rc, hfd;

	rc = gofer_resolve_existing(view, base, path, nofollow, &r, info);
	if (rc < 0)
		return rc;
	if (res_host_fd(&r, &hfd))
		n = xattr_host(view, hfd, op, name, buf, size, flags, gofer_res_host_rw(&r));
	else if (r.d->kind == GOFER_KIND_DEVICE)
		n = xattr_host(view, r.d->fd, op, name, buf, size, flags, false);
	else
		n = xattr_view(op, name, flags);
	rc = gofer_finish(info, &r, n < 0 ? (int)n : 0);
	return rc < 0 ? rc : n;
}

ssize_t gofer_fd_xattr(struct gofer_view *view, int fd, char op, const char *name, void *buf,
		       size_t size, int flags)
{
	struct stat st;
	char vp[PATH_MAX];

	if (fstat(fd, &st) < 0)
		return -EBADF;
	if (fcntl(fd, F_GETFL) & O_PATH)
		return -EBADF;
	if (fd_dentry(view, fd, &st) || gofer_is_view_file(view, fd))
		return xattr_view(op, name, flags);
	if (gofer_fd_view_path(view, fd, vp, sizeof(vp)) == 0) {
		const struct gofer_dentry *b = gofer_fd_bind(view, fd);

		return xattr_host(view, fd, op, name, buf, size, flags, b && b->rw);
	}
	/* Pipes, sockets and the sandbox's own memfds: no xattrs offered. */
	return op == 'l' ? 0 : -EOPNOTSUPP;
}

/* --- statfs -------------------------------------------------------------- */

int gofer_statfs(struct gofer_view *view, const char *base, const char *path, struct statfs *sf,
		 struct gofer_lookup_info *info)
{
	struct gofer_res r;
	int rc, hfd;

	gofer_info_init(info);
	rc = gofer_resolve(view, base, path, GOFER_WALK_FOLLOW, &r);
	if (rc == 0 && !r.exists)
		rc = -ENOENT;
	if (rc < 0)
		return gofer_finish(info, &r, rc);
	memset(sf, 0, sizeof(*sf));
	if (res_host_fd(&r, &hfd) || r.d->kind == GOFER_KIND_DEVICE) {
		if (fstatfs(r.hfd >= 0 ? r.hfd : r.d->fd, sf) < 0)
			rc = -errno;
		else
			sf->f_flags |= ST_RDONLY;
		return gofer_finish(info, &r, rc);
	}
	gofer_view_statfs(view, sf);
	return gofer_finish(info, &r, 0);
}

void gofer_view_statfs(const struct gofer_view *view, struct statfs *sf)
{
	memset(sf, 0, sizeof(*sf));
	if (view->store_fd >= 0 && fstatfs(view->store_fd, sf) == 0) {
		/* The store's own numbers; directories and symlinks count as files. */
		uint64_t used = (uint64_t)(sf->f_files - sf->f_ffree) - 1 - view->nstore_dirs +
				view->nobjs;

		if (view->cfg.quota_files) {
			sf->f_files = view->cfg.quota_files;
			sf->f_ffree = sf->f_files > used ? sf->f_files - used : 0;
		}
		memset(&sf->f_fsid, 0, sizeof(sf->f_fsid));
		return;
	}
	sf->f_type = TMPFS_MAGIC;
	sf->f_bsize = 4096;
	sf->f_frsize = 4096;
	/* No byte quota: a tmpfs the size of the run's memory would show
	 * what is left of it; report the files count only. */
	sf->f_blocks = 0;
	sf->f_files = view->cfg.quota_files;
	sf->f_ffree = view->cfg.quota_files > view->nfiles + view->nobjs ?
			      view->cfg.quota_files - view->nfiles - view->nobjs : 0;
	sf->f_namelen = NAME_MAX;
	sf->f_flags = ST_NOSUID | ST_NODEV;
}
