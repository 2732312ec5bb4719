/*
 * resolve.c - path resolution in the view.
 *
 * The walker keeps its position as the deepest view dentry it reached plus,
 * below a bind's root, a stack of host O_PATH directory fds (one per
 * component), and the canonical view path of that position.  ".." pops one
 * level: a host fd from the stack (never asking the host kernel for ".."),
 * or the dentry's parent, so a ".." at a bind's root continues in the view
 * above the mount point and ".." of "/" is "/".
 *
 * Host components are opened one at a time with openat(O_PATH|O_NOFOLLOW),
 * so the host kernel never follows a symlink or "..".  A host symlink is
 * read with readlinkat() and its target is spliced in front of the rest of
 * the path and resolved again in the view: an absolute target from the
 * view's root, a relative one from the symlink's directory.  Nothing on the
 * host can therefore lead outside the view.
 *
 * Fast path: when the remaining path below a host directory has no ".."
 * component, one openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
 * RESOLVE_NO_MAGICLINKS) call tries to reach the final object; any symlink
 * on the way (ELOOP) or an escape attempt (EXDEV) falls back to the
 * component walk.  It is used only for lookups that do not modify the view
 * and only when the supervisor runs with the sandbox's uid/gid, because the
 * host kernel then checks search permission exactly as the walk would.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "compat.h"
#include "gofer-internal.h"

#define WALK_BUF (2 * PATH_MAX)
#define WALK_BASE 0x100 /* internal: enter every component (the base directory) */

struct level {
	int fd;
	mode_t mode;
	uid_t uid;
	gid_t gid;
};

struct walker {
	struct gofer_view *v;
	struct gofer_dentry *d;		/* deepest view dentry; the bind when nh > 0 */
	struct level *lv;		/* host directories below d */
	size_t nh;
	size_t cap;
	char path[PATH_MAX];		/* canonical view path of the position */
	size_t len;
	int links;
	bool check_perm;
	bool no_fast;
	bool proc_fresh;		/* /proc rebuilt once for this resolution */
	unsigned int resolve;		/* GOFER_WALK_* RESOLVE restrictions */
	bool want_parent;		/* GOFER_WALK_PARENT: keep the host parent's fd */
	size_t depth;			/* components below the base (BENEATH, IN_ROOT) */
	const struct gofer_dentry *mnt;	/* mount of the position (NO_XDEV) */
};

/* The mount the position belongs to: a bind, a mem tree, /proc, or the root skeleton. */
static const struct gofer_dentry *walker_mount(const struct walker *w)
{
	const struct gofer_dentry *d = w->d;

	if (w->nh)
		return d;
	for (; d->parent; d = d->parent)
		if (d->mount_root || d->proc_root)
			return d;
	return d;
}

/* After a move: EXDEV when NO_XDEV and the mount changed. */
static int check_xdev(struct walker *w)
{
	if (!(w->resolve & GOFER_WALK_NO_XDEV))
		return 0;
	return walker_mount(w) == w->mnt ? 0 : -EXDEV;
}

/*
 * gofer_perm_check - may the sandbox user access an object of @mode owned
 * by @uid:@gid for @want (R_OK|W_OK|X_OK bits)?  Owner, group or other
 * bits, the first class that matches; uid 0 gets no bypass because the
 * sandbox never runs with privileges.  Returns 0 or -EACCES.
 */
int gofer_perm_check(const struct gofer_view *v, mode_t mode, uid_t uid, gid_t gid, int want)
{
	unsigned int bits;

	if (uid == v->cfg.uid)
		bits = (mode >> 6) & 7;
	else if (gid == v->cfg.gid)
		bits = (mode >> 3) & 7;
	else
		bits = mode & 7;
	return (bits & (unsigned int)want) == (unsigned int)want ? 0 : -EACCES;
}

static void walker_reset(struct walker *w)
{
	while (w->nh)
		close(w->lv[--w->nh].fd);
	w->d = w->v->root;
	memcpy(w->path, "/", 2);
	w->len = 1;
}

static int path_push(struct walker *w, const char *name)
{
	size_t n = strlen(name), sep = w->len > 1;

	if (w->len + sep + n >= sizeof(w->path))
		return -ENAMETOOLONG;
	if (sep)
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, n + 1);
	w->len += n;
	return 0;
}

static void path_pop(struct walker *w)
{
	char *s;

	if (w->len <= 1)
		return;
	s = strrchr(w->path, '/');
	w->len = s == w->path ? 1 : (size_t)(s - w->path);
	w->path[w->len] = '\0';
}

static void walker_up(struct walker *w)
{
	if (w->nh) {
		close(w->lv[--w->nh].fd);
		path_pop(w);
	} else if (w->d->parent) {
		w->d = w->d->parent;
		path_pop(w);
	}
}

static bool at_host(const struct walker *w)
{
	return w->nh > 0 || w->d->kind == GOFER_KIND_BIND;
}

static int host_base(const struct walker *w)
{
	return w->nh ? w->lv[w->nh - 1].fd : w->d->fd;
}

static int push_level(struct walker *w, int fd, const struct stat *st, const char *name)
{
	int rc = path_push(w, name);

	if (rc < 0)
		return rc;
	if (w->nh == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct level *a = realloc(w->lv, cap * sizeof(*a));

		if (!a) {
			path_pop(w);
			return -ENOMEM;
		}
		w->lv = a;
		w->cap = cap;
	}
	w->lv[w->nh++] = (struct level){ fd, st->st_mode, st->st_uid, st->st_gid };
	return 0;
}

/* Search permission on the current directory. */
static int may_search(const struct walker *w)
{
	struct stat st;

	if (!w->check_perm)
		return 0;
	if (w->nh) {
		const struct level *l = &w->lv[w->nh - 1];

		return gofer_perm_check(w->v, l->mode, l->uid, l->gid, X_OK);
	}
	if (w->d->kind == GOFER_KIND_BIND) {
		if (fstat(w->d->fd, &st) < 0)
			return -errno;
		return gofer_perm_check(w->v, st.st_mode, st.st_uid, st.st_gid, X_OK);
	}
	return gofer_perm_check(w->v, w->d->mode, w->d->uid, w->d->gid, X_OK);
}

/* r->path = w->path + "/" + name (best effort, truncated on error paths). */
static int join_path(struct gofer_res *r, const struct walker *w, const char *name)
{
	size_t n = strlen(name), sep = w->len > 1 && n;

	if (w->len + sep + n >= sizeof(r->path)) {
		memcpy(r->path, w->path, w->len + 1);
		return -ENAMETOOLONG;
	}
	memcpy(r->path, w->path, w->len);
	if (sep)
		r->path[w->len] = '/';
	memcpy(r->path + w->len + sep, name, n + 1);
	return 0;
}

static bool has_dotdot(const char *p)
{
	while (*p) {
		const char *q = strchrnul(p, '/');

		if (q - p == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p = q;
		while (*p == '/')
			p++;
	}
	return false;
}

/*
 * One openat2() for the rest of the path below a host directory.  Returns
 * 0 (r filled), -errno, or 1 to fall back to the component walk.
 */
static int try_fast(struct walker *w, const char *p, unsigned int flags, struct gofer_res *r)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	const char *last = NULL, *s = p;
	size_t lastlen = 0, plen = strlen(p);
	struct stat st;
	int fd, e;

	fd = (int)syscall(SYS_openat2, host_base(w), p, &how, sizeof(how));
	if (fd < 0) {
		e = errno;
		if (e == ENOSYS || e == E2BIG) {
			w->v->fast_host = false;
			return 1;
		}
		if (e == ELOOP || e == EXDEV || e == EAGAIN || e == EINVAL)
			return 1;
		join_path(r, w, p);
		return -e;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	if (S_ISLNK(st.st_mode) && ((flags & GOFER_WALK_FOLLOW) || p[plen - 1] == '/')) {
		close(fd);
		return 1;
	}
	/* The view path: the components of p appended lexically (no ".." in p). */
	memcpy(r->path, w->path, w->len + 1);
	for (size_t len = w->len; *s;) {
		const char *q = strchrnul(s, '/');
		size_t n = (size_t)(q - s);

		if (n && !(n == 1 && s[0] == '.')) {
			size_t sep = len > 1;

			if (len + sep + n >= sizeof(r->path)) {
				close(fd);
				return -ENAMETOOLONG;
			}
			if (sep)
				r->path[len++] = '/';
			memcpy(r->path + len, s, n);
			len += n;
			r->path[len] = '\0';
		}
		if (n) {
			last = s;
			lastlen = n;
		}
		s = q;
		while (*s == '/')
			s++;
	}
	r->exists = true;
	r->hfd = fd;
	r->bind = w->d;
	r->parent_host = true;
	r->trailing_slash = p[plen - 1] == '/';
	if (last && lastlen == 1 && last[0] == '.') {
		r->last = GOFER_LAST_DOT;
	} else {
		r->last = GOFER_LAST_NORM;
		memcpy(r->name, last, lastlen);
		r->name[lastlen] = '\0';
	}
	return 0;
}

/* Final object is view dentry @c, child of the current position. */
static int final_view(struct walker *w, struct gofer_dentry *c, bool trailing, struct gofer_res *r)
{
	r->exists = true;
	r->d = c;
	r->pd = w->d;
	r->bind = c->kind == GOFER_KIND_BIND ? c : NULL;
	r->last = GOFER_LAST_NORM;
	r->trailing_slash = trailing;
	memcpy(r->name, c->name, strlen(c->name) + 1);
	return join_path(r, w, c->name);
}

/* Is @name, in the current host directory of a bind with hides, hidden? */
static bool host_hidden(const struct walker *w, const char *name)
{
	char bp[PATH_MAX], rel[PATH_MAX];
	int bl = gofer_dentry_path(w->d, bp, sizeof(bp));
	const char *below;

	if (bl < 0)
		return true;	/* fail closed */
	below = w->path + (bl == 1 ? 1 : bl);
	if (*below == '/')
		below++;
	if ((size_t)snprintf(rel, sizeof(rel), "%s%s%s", below, *below ? "/" : "", name) >=
	    sizeof(rel))
		return true;
	return gofer_bind_hides(w->d, rel);
}

/* A PARENT walk ending in a host directory of a read-write bind keeps an
 * O_PATH fd of that directory, for the *at() call that changes it. */
static int keep_parent(struct walker *w, struct gofer_res *r)
{
	if (!w->want_parent || !w->d->rw)
		return 0;
	r->phfd = fcntl(host_base(w), F_DUPFD_CLOEXEC, 3);
	return r->phfd < 0 ? -errno : 0;
}

/* Final object is host object @fd (owned by r on success), child of the current position. */
static int final_host(struct walker *w, int fd, const char *name, bool trailing,
		      struct gofer_res *r)
{
	int rc = join_path(r, w, name);

	if (rc < 0) {
		close(fd);
		return rc;
	}
	r->exists = true;
	r->hfd = fd;
	r->bind = w->d;
	r->parent_host = true;
	r->last = GOFER_LAST_NORM;
	r->trailing_slash = trailing;
	memcpy(r->name, name, strlen(name) + 1);
	return keep_parent(w, r);
}

/* The final name does not exist; the current position is its parent. */
static int final_missing(struct walker *w, const char *name, bool trailing, struct gofer_res *r)
{
	r->exists = false;
	r->last = GOFER_LAST_NORM;
	r->trailing_slash = trailing;
	memcpy(r->name, name, strlen(name) + 1);
	if (at_host(w)) {
		int rc;

		r->parent_host = true;
		r->bind = w->d;
		rc = keep_parent(w, r);
		if (rc < 0)
			return rc;
	} else {
		r->pd = w->d;
		r->hidden = w->d->kind == GOFER_KIND_SKEL && w->d->hidden;
	}
	return join_path(r, w, name);
}

/*
 * Splice symlink target @t (@tlen bytes) in front of @rest inside @buf and
 * move the position to where the target resolves from.
 */
static int follow(struct walker *w, const char *t, size_t tlen, char *buf, char *rest, char **p)
{
	size_t restlen = strlen(rest);

	if (++w->links > GOFER_MAX_SYMLINKS)
		return -ELOOP;
	if (tlen == 0)
		return -ENOENT;
	if (tlen + restlen + 1 > WALK_BUF)
		return -ENAMETOOLONG;
	memmove(buf + tlen, rest, restlen + 1);
	memcpy(buf, t, tlen);
	*p = buf;
	if (t[0] == '/') {
		if (w->resolve & GOFER_WALK_BENEATH)
			return -EXDEV;
		if (w->resolve & GOFER_WALK_IN_ROOT) {
			/* Back to the base, which stands for "/". */
			while (w->depth) {
				walker_up(w);
				w->depth--;
			}
		} else {
			walker_reset(w);
		}
		if (check_xdev(w) < 0)
			return -EXDEV;
	}
	w->no_fast = false;
	return 0;
}

static int walk(struct walker *w, const char *path, unsigned int flags, struct gofer_res *r)
{
	_cleanup_free_ char *buf = malloc(WALK_BUF);
	char name[NAME_MAX + 1] = "";
	int last_type = GOFER_LAST_ROOT, rc = 0;
	char *p;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, path, strlen(path) + 1);
	p = buf;
	for (;;) {
		char *q, *s;
		size_t n;
		bool last, trailing;
		struct gofer_dentry *c;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		if (!(flags & (GOFER_WALK_PARENT | WALK_BASE)) && !w->resolve && w->check_perm &&
		    w->v->fast_host && !w->d->nhides &&
		    !w->no_fast && at_host(w) && !has_dotdot(p)) {
			rc = try_fast(w, p, flags, r);
			if (rc <= 0)
				return rc;
			w->no_fast = true;
		}
		q = strchrnul(p, '/');
		n = (size_t)(q - p);
		if (n > NAME_MAX) {
			rc = -ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		for (s = q; *s == '/'; s++)
			;
		last = !*s && !(flags & WALK_BASE);
		trailing = last && *q == '/';
		p = q;
		rc = may_search(w);
		if (rc < 0)
			goto fail;
		if (n == 1 && name[0] == '.') {
			last_type = GOFER_LAST_DOT;
			continue;
		}
		if (n == 2 && name[0] == '.' && name[1] == '.') {
			last_type = GOFER_LAST_DOTDOT;
			if (w->resolve & (GOFER_WALK_BENEATH | GOFER_WALK_IN_ROOT)) {
				if (w->depth == 0) {
					if (w->resolve & GOFER_WALK_BENEATH) {
						rc = -EXDEV;
						goto fail;
					}
					continue;	/* IN_ROOT: ".." of the root is the root */
				}
				w->depth--;
			}
			walker_up(w);
			rc = check_xdev(w);
			if (rc < 0)
				goto fail;
			continue;
		}
		last_type = GOFER_LAST_NORM;

		if (!at_host(w)) {
			if (w->d->proc_root && w->v->proc && !w->proc_fresh) {
				rc = w->v->proc->refresh(w->v->proc_opaque, w->v);
				if (rc < 0)
					goto fail;
				w->proc_fresh = true;
			}
			c = gofer_dentry_find(w->d, name);
			if (!c) {
				if (last)
					return final_missing(w, name, trailing, r);
				r->hidden = w->d->kind == GOFER_KIND_SKEL && w->d->hidden;
				rc = -ENOENT;
				goto fail;
			}
			if (c->kind == GOFER_KIND_SYMLINK) {
				if (last && !(flags & GOFER_WALK_FOLLOW) && !trailing)
					return final_view(w, c, trailing, r);
				if ((w->resolve & GOFER_WALK_NO_SYMLINKS) ||
				    (c->magic && (w->resolve & GOFER_WALK_NO_MAGICLINKS))) {
					rc = -ELOOP;
					goto fail;
				}
				rc = follow(w, c->target, strlen(c->target), buf, p, &p);
				if (rc < 0)
					goto fail;
				continue;
			}
			if (c->proc_root && w->v->proc && !w->proc_fresh) {
				/* Entering /proc (or listing it): fill it first. */
				rc = w->v->proc->refresh(w->v->proc_opaque, w->v);
				if (rc < 0)
					goto fail;
				w->proc_fresh = true;
			}
			if (c->kind == GOFER_KIND_MAGIC) {
				/* Only the final component can be a magic link. */
				if (!last) {
					rc = -ENOTDIR;
					goto fail;
				}
				r->follow_magic = (flags & GOFER_WALK_FOLLOW) || trailing;
				if (r->follow_magic && c->fd < 0) {
					/* Released after the call that built it. */
					rc = -ENOENT;
					goto fail;
				}
				if (r->follow_magic && (w->resolve & (GOFER_WALK_NO_SYMLINKS |
								      GOFER_WALK_NO_MAGICLINKS))) {
					rc = -ELOOP;
					goto fail;
				}
				return final_view(w, c, trailing, r);
			}
			if (!gofer_dentry_is_dir(c)) {
				if (!last || trailing) {
					rc = -ENOTDIR;
					goto fail;
				}
				return final_view(w, c, trailing, r);
			}
			if (last) {
				/* The final object may be a mount root: NO_XDEV looks at it too. */
				if ((w->resolve & GOFER_WALK_NO_XDEV) && (c->mount_root || c->proc_root)) {
					rc = -EXDEV;
					goto fail;
				}
				return final_view(w, c, trailing, r);
			}
			rc = path_push(w, c->name);
			if (rc < 0)
				goto fail;
			w->d = c;
			w->depth++;
			rc = check_xdev(w);
			if (rc < 0)
				goto fail;
			continue;
		}

		/* A name the policy hides inside the bind: as if absent. */
		if (w->d->nhides && host_hidden(w, name)) {
			r->hidden = true;
			rc = -ENOENT;
			goto fail;
		}
		/* Host directory: one component, never following anything. */
		{
			_cleanup_close_ int fd = openat(host_base(w), name,
							O_PATH | O_NOFOLLOW | O_CLOEXEC);
			struct stat st;

			if (fd < 0) {
				rc = -errno;
				if (rc == -ENOENT && last)
					return final_missing(w, name, trailing, r);
				goto fail;
			}
			if (fstat(fd, &st) < 0) {
				rc = -errno;
				goto fail;
			}
			if (S_ISLNK(st.st_mode)) {
				char t[PATH_MAX];
				ssize_t tl;

				if (last && !(flags & GOFER_WALK_FOLLOW) && !trailing)
					return final_host(w, pv_steal_fd(&fd), name, trailing, r);
				if (w->resolve & GOFER_WALK_NO_SYMLINKS) {
					rc = -ELOOP;
					goto fail;
				}
				tl = readlinkat(fd, "", t, sizeof(t));
				if (tl < 0) {
					rc = -errno;
					goto fail;
				}
				if ((size_t)tl >= sizeof(t)) {
					rc = -ENAMETOOLONG;
					goto fail;
				}
				rc = follow(w, t, (size_t)tl, buf, p, &p);
				if (rc < 0)
					goto fail;
				continue;
			}
			if (!S_ISDIR(st.st_mode)) {
				if (!last || trailing) {
					rc = -ENOTDIR;
					goto fail;
				}
				return final_host(w, pv_steal_fd(&fd), name, trailing, r);
			}
			if (last)
				return final_host(w, pv_steal_fd(&fd), name, trailing, r);
			rc = push_level(w, fd, &st, name);
			if (rc < 0)
				goto fail;
			fd = -1;
			w->depth++;
		}
	}
	if (flags & WALK_BASE)
		return 0;
	/* The path ended on the current position ("/", ".", "..", "dir/."). */
	r->exists = true;
	r->last = last_type;
	memcpy(r->path, w->path, w->len + 1);
	if (w->nh) {
		r->hfd = w->lv[--w->nh].fd;
		r->bind = w->d;
		r->parent_host = true;
	} else {
		r->d = w->d;
		r->pd = w->d->parent;
		r->bind = w->d->kind == GOFER_KIND_BIND ? w->d : NULL;
	}
	return 0;
fail:
	join_path(r, w, name);
	return rc;
}

/*
 * gofer_resolve - resolve @path (relative to view path @base when not
 * absolute) with GOFER_WALK_* @flags into @r.  Returns 0 when the final
 * object exists (r->exists) or only the final component is missing (its
 * parent is described in @r); -errno otherwise (r->path and r->hidden are
 * still filled, best effort).  Release @r with gofer_res_release().
 */
int gofer_resolve(struct gofer_view *v, const char *base, const char *path, unsigned int flags,
		  struct gofer_res *r)
{
	struct walker w = { .v = v, .check_perm = true };
	int rc;

	memset(r, 0, offsetof(struct gofer_res, path));
	r->hfd = -1;
	r->phfd = -1;
	r->path[0] = '\0';
	if (!path)
		return -EFAULT;
	if (!*path)
		return -ENOENT;
	if (strnlen(path, PATH_MAX) >= PATH_MAX)
		return -ENAMETOOLONG;
	walker_reset(&w);
	if (path[0] == '/' && (flags & GOFER_WALK_BENEATH))
		return -EXDEV;
	if (path[0] != '/' || (flags & GOFER_WALK_IN_ROOT)) {
		if (!base || base[0] != '/' || strnlen(base, PATH_MAX) >= PATH_MAX) {
			rc = -EINVAL;
			goto out;
		}
		/* The base is the task's cwd or a dirfd: already entered, no search checks. */
		w.check_perm = false;
		rc = walk(&w, base, WALK_BASE, r);
		if (rc < 0)
			goto out;
		w.check_perm = true;
		w.links = 0;
	}
	w.resolve = flags & GOFER_WALK_RESOLVE_MASK;
	w.want_parent = flags & GOFER_WALK_PARENT;
	w.depth = 0;
	w.mnt = walker_mount(&w);
	rc = walk(&w, path, flags, r);
out:
	while (w.nh)
		close(w.lv[--w.nh].fd);
	free(w.lv);
	if (rc < 0) {
		if (r->hfd >= 0)
			close(r->hfd);
		r->hfd = -1;
		if (r->phfd >= 0)
			close(r->phfd);
		r->phfd = -1;
		r->exists = false;
	}
	return rc;
}

/* gofer_res_release - close what @r owns. */
void gofer_res_release(struct gofer_res *r)
{
	if (r->hfd >= 0)
		close(r->hfd);
	r->hfd = -1;
	if (r->phfd >= 0)
		close(r->phfd);
	r->phfd = -1;
}
