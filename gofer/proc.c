/*
 * proc.c - the /proc subtree of the view, rebuilt by the sentry's provider
 * (gofer.h, struct gofer_proc_provider) whenever a resolution enters it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gofer-internal.h"

int gofer_view_set_proc(struct gofer_view *view, const struct gofer_proc_provider *p,
			void *opaque, struct pv_error *err)
{
	struct gofer_dentry *d;

	d = gofer_dentry_new(view, GOFER_KIND_SKEL, "proc", S_IFDIR | 0555, 0, 0);
	if (!d)
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	if (gofer_dentry_find(view->root, "proc")) {
		gofer_dentry_free(view, d);
		return pv_error_set(err, EEXIST, "gofer: view path '/proc' is taken");
	}
	if (gofer_dentry_attach(view->root, d) < 0) {
		gofer_dentry_free(view, d);
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	}
	d->proc_root = true;
	/* Names /proc does not show (other processes) are policy hides. */
	d->hidden = true;
	view->proc = p;
	view->proc_opaque = opaque;
	view->proc_root = d;
	return 0;
}

void gofer_proc_reset(struct gofer_view *view)
{
	struct gofer_dentry *root = view->proc_root;

	if (!root)
		return;
	while (root->nchild) {
		struct gofer_dentry *c = root->by_seq[root->nchild - 1];

		gofer_dentry_detach(c);
		gofer_dentry_free(view, c);
	}
}

static void release_fds(struct gofer_dentry *d)
{
	if (d->kind == GOFER_KIND_MAGIC && d->fd >= 0) {
		close(d->fd);
		d->fd = -1;
	}
	for (size_t i = 0; i < d->nchild; i++)
		release_fds(d->by_seq[i]);
}

void gofer_proc_release_fds(struct gofer_view *view)
{
	if (view->proc_root)
		release_fds(view->proc_root);
}

/*
 * Parent directory of @rel under /proc (created as 0555 skeleton
 * directories) and its last component.  -EEXIST when taken, -EINVAL for a
 * bad path.
 */
static int proc_parent(struct gofer_view *v, const char *rel, struct gofer_dentry **parent,
		       const char **last)
{
	struct gofer_dentry *dir = v->proc_root;
	const char *p = rel;
	char comp[NAME_MAX + 1];

	if (!dir || !rel || !*rel || rel[0] == '/')
		return -EINVAL;
	for (;;) {
		const char *q = strchrnul(p, '/');
		size_t n = (size_t)(q - p);
		struct gofer_dentry *c;

		if (n == 0 || n > NAME_MAX)
			return -EINVAL;
		if (!*q)
			break;
		memcpy(comp, p, n);
		comp[n] = '\0';
		c = gofer_dentry_find(dir, comp);
		if (!c) {
			c = gofer_dentry_new(v, GOFER_KIND_SKEL, comp, S_IFDIR | 0555, 0, 0);
			if (!c)
				return -ENOMEM;
			if (gofer_dentry_attach(dir, c) < 0) {
				gofer_dentry_free(v, c);
				return -ENOMEM;
			}
		} else if (c->kind != GOFER_KIND_SKEL) {
			return -ENOTDIR;
		}
		dir = c;
		p = q + 1;
	}
	if (gofer_dentry_find(dir, p))
		return -EEXIST;
	*parent = dir;
	*last = p;
	return 0;
}

static int proc_attach(struct gofer_view *v, struct gofer_dentry *parent, struct gofer_dentry *d)
{
	if (gofer_dentry_attach(parent, d) < 0) {
		gofer_dentry_free(v, d);
		return -ENOMEM;
	}
	return 0;
}

int gofer_proc_add_dir(struct gofer_view *view, const char *rel)
{
	struct gofer_dentry *parent, *d;
	const char *name;
	int rc = proc_parent(view, rel, &parent, &name);

	if (rc < 0)
		return rc;
	d = gofer_dentry_new(view, GOFER_KIND_SKEL, name, S_IFDIR | 0555, 0, 0);
	if (!d)
		return -ENOMEM;
	/* A pid directory: what it lacks (mem, environ, ...) is withheld. */
	d->hidden = parent == view->proc_root;
	return proc_attach(view, parent, d);
}

int gofer_proc_add_file(struct gofer_view *view, const char *rel, const void *data, size_t len,
			bool private_file)
{
	struct gofer_dentry *parent, *d;
	const char *name;
	const char *p = data;
	size_t left = len;
	struct stat st;
	int rc = proc_parent(view, rel, &parent, &name), fd;

	if (rc < 0)
		return rc;
	rc = gofer_memfd_new(GOFER_MEMFD_PREFIX ":proc", &fd);
	if (rc < 0)
		return rc;
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		p += n;
		left -= (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0 ||
	    fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	d = gofer_dentry_new(view, GOFER_KIND_SYNTH, name,
			     S_IFREG | (private_file ? 0400 : 0444),
			     private_file ? view->cfg.uid : 0, private_file ? view->cfg.gid : 0);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	d->ino = st.st_ino;
	rc = gofer_table_add(view, d, fd, false);
	if (rc < 0) {
		gofer_dentry_free(view, d);
		return rc;
	}
	return proc_attach(view, parent, d);
}

int gofer_proc_add_symlink(struct gofer_view *view, const char *rel, const char *target,
			   bool magic)
{
	struct gofer_dentry *parent, *d;
	const char *name;
	int rc = proc_parent(view, rel, &parent, &name);

	if (rc < 0)
		return rc;
	d = gofer_dentry_new(view, GOFER_KIND_SYMLINK, name, S_IFLNK | 0777, view->cfg.uid,
			     view->cfg.gid);
	if (!d)
		return -ENOMEM;
	d->target = strdup(target);
	if (!d->target) {
		gofer_dentry_free(view, d);
		return -ENOMEM;
	}
	d->magic = magic;
	return proc_attach(view, parent, d);
}

int gofer_proc_add_fd(struct gofer_view *view, const char *rel, int fd, const char *text)
{
	struct gofer_dentry *parent, *d;
	char vp[PATH_MAX];
	const char *name;
	int rc;

	/* An object of the view with a name: an ordinary symlink to it. */
	if (gofer_fd_view_path(view, fd, vp, sizeof(vp)) == 0) {
		close(fd);
		return gofer_proc_add_symlink(view, rel, vp, true);
	}
	rc = proc_parent(view, rel, &parent, &name);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	d = gofer_dentry_new(view, GOFER_KIND_MAGIC, name, S_IFLNK | 0700, view->cfg.uid,
			     view->cfg.gid);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	d->target = strdup(text);
	if (!d->target) {
		gofer_dentry_free(view, d);
		return -ENOMEM;
	}
	return proc_attach(view, parent, d);
}
