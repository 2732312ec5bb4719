/*
 * fd.c - fds the sandbox holds: view path, stat and directory listing.
 *
 * An fd is recognised by the (st_dev, st_ino) of what it refers to: the
 * inode table (view.c) maps the memfds the view handed out to their
 * dentries.  Anything else is a host object; only those below a bind (or a
 * device node of the view) map back to a view path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <dirent.h>

#include "gofer-internal.h"

/* The kernel's struct linux_dirent64 (include/linux/dirent.h). */
struct gofer_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static const char deleted_suffix[] = " (deleted)";

/* readlink of /proc/self/fd/@fd into @buf (NUL-terminated). */
static int fd_host_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return (int)n;
}

static bool is_view_memfd(const char *hp)
{
	static const char prefix[] = "/memfd:" GOFER_MEMFD_PREFIX;

	return strncmp(hp, prefix, sizeof(prefix) - 1) == 0;
}

/*
 * gofer_fd_bind - the bind (or device) whose host object @fd refers to,
 * or NULL: the longest host path prefix among the view's mounts.
 */
const struct gofer_dentry *gofer_fd_bind(const struct gofer_view *view, int fd)
{
	char hp[PATH_MAX];
	const struct gofer_dentry *best = NULL;
	size_t best_len = 0;

	if (fd_host_path(fd, hp, sizeof(hp)) < 0 || hp[0] != '/')
		return NULL;
	for (size_t i = 0; i < view->nmounts; i++) {
		const struct gofer_dentry *m = view->mounts[i];
		size_t ml = strlen(m->host_path);

		if (m->kind == GOFER_KIND_DEVICE) {
			if (!strcmp(hp, m->host_path))
				return m;
			continue;
		}
		if ((ml == 1 || (!strncmp(hp, m->host_path, ml) && (hp[ml] == '\0' || hp[ml] == '/'))) &&
		    ml >= best_len) {
			best = m;
			best_len = ml;
		}
	}
	return best;
}

int gofer_fd_view_path(struct gofer_view *view, int fd, char *out, size_t out_size)
{
	char hp[PATH_MAX];
	struct gofer_handle *h;
	struct gofer_dentry *best = NULL;
	size_t best_len = 0, n;
	struct stat st;
	const char *rel = NULL;
	int rc, len;

	if (fstat(fd, &st) < 0)
		return -EBADF;
	h = gofer_table_find(view, st.st_dev, st.st_ino);
	if (h) {
		rc = gofer_dentry_path(h->d, out, out_size);
		return rc < 0 ? rc : 0;
	}
	rc = fd_host_path(fd, hp, sizeof(hp));
	if (rc < 0)
		return rc == -ENAMETOOLONG ? rc : -EBADF;
	/* A file the view made whose dentry is gone: removed from the view. */
	if (is_view_memfd(hp) || gofer_is_store_file(view, &st) || gofer_is_store_dir(view, &st))
		return -ENOENT;
	if (hp[0] != '/')
		return -EBADF;
	n = (size_t)rc;
	for (size_t i = 0; i < view->nmounts; i++) {
		struct gofer_dentry *m = view->mounts[i];
		size_t ml = strlen(m->host_path);

		if (m->kind == GOFER_KIND_DEVICE) {
			if (strcmp(hp, m->host_path) == 0 && ml >= best_len) {
				best = m;
				best_len = ml;
				rel = "";
			}
			continue;
		}
		if (ml == 1) {	/* a bind of the host's "/" */
			if (!best) {
				best = m;
				best_len = 1;
				rel = hp + 1;
			}
			continue;
		}
		if (strncmp(hp, m->host_path, ml) == 0 && (hp[ml] == '\0' || hp[ml] == '/') &&
		    ml > best_len) {
			best = m;
			best_len = ml;
			rel = hp[ml] ? hp + ml + 1 : "";
		}
	}
	if (!best)
		return -EBADF;
	/* The host object was deleted on the host: not in the view any more. */
	if (n >= sizeof(deleted_suffix) - 1 &&
	    strcmp(hp + n - (sizeof(deleted_suffix) - 1), deleted_suffix) == 0)
		return -ENOENT;
	len = gofer_dentry_path(best, out, out_size);
	if (len < 0)
		return len;
	if (*rel) {
		size_t rl = strlen(rel);

		if ((size_t)len + 1 + rl >= out_size)
			return -ENAMETOOLONG;
		out[len] = '/';
		memcpy(out + len + 1, rel, rl + 1);
	}
	return 0;
}

int gofer_fd_stat(struct gofer_view *view, int fd, struct stat *st)
{
	struct gofer_handle *h;
	char hp[PATH_MAX];

	if (fstat(fd, st) < 0)
		return -errno;
	h = gofer_table_find(view, st->st_dev, st->st_ino);
	if (h)
		return gofer_dentry_stat(view, h->d, st);
	if (gofer_is_store_file(view, st) || gofer_is_store_dir(view, st) ||
	    (S_ISREG(st->st_mode) && fd_host_path(fd, hp, sizeof(hp)) > 0 && is_view_memfd(hp))) {
		/*
		 * A file or directory of the view whose last name is gone (or
		 * an O_TMPFILE file): as Linux, nlink 0, the view's device,
		 * the sandbox as owner and the mode the dentry had (copied
		 * into the memfd's bits when it went away).
		 */
		bool dir = gofer_is_store_dir(view, st) ||
			   (!gofer_is_store_file(view, st) &&
			    strncmp(hp, "/memfd:" GOFER_HANDLE_NAME " ",
				    sizeof("/memfd:" GOFER_HANDLE_NAME)) == 0);

		st->st_dev = GOFER_VIEW_DEV;
		st->st_nlink = 0;
		st->st_uid = view->cfg.uid;
		st->st_gid = view->cfg.gid;
		st->st_blksize = 4096;
		if (dir) {
			st->st_mode = S_IFDIR | (st->st_mode & 07777);
			st->st_size = 0;
		}
		st->st_blocks = (st->st_size + 4095) / 4096 * 8;
	}
	return 0;
}

/* gofer_is_view_file - @fd is a regular file the view created (store file
 * or view memfd, directory handles excluded), named or not. */
bool gofer_is_view_file(const struct gofer_view *v, int fd)
{
	char hp[PATH_MAX];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	if (gofer_is_store_file(v, &st))
		return true;
	return fd_host_path(fd, hp, sizeof(hp)) > 0 && is_view_memfd(hp) &&
	       strncmp(hp, "/memfd:" GOFER_HANDLE_NAME " ", sizeof("/memfd:" GOFER_HANDLE_NAME)) != 0;
}
static unsigned char dtype_of(const struct gofer_dentry *d)
{
	switch (d->kind) {
	case GOFER_KIND_SKEL:
	case GOFER_KIND_MEMDIR:
		return DT_DIR;
	case GOFER_KIND_MEMFILE:
	case GOFER_KIND_SYNTH:
		return DT_REG;
	case GOFER_KIND_SYMLINK:
	case GOFER_KIND_MAGIC:
		return DT_LNK;
	case GOFER_KIND_FIFO:
		return DT_FIFO;
	case GOFER_KIND_DEVICE:
	case GOFER_KIND_BIND:
		return (unsigned char)IFTODT(d->mode);
	}
	return DT_UNKNOWN;
}

static uint64_t dino_of(const struct gofer_dentry *d)
{
	return d->kind == GOFER_KIND_BIND || d->kind == GOFER_KIND_DEVICE ? d->host_ino : d->ino;
}

/* Append one record; returns false when it does not fit. */
static bool emit(char *buf, size_t size, size_t *used, uint64_t ino, int64_t off,
		 unsigned char type, const char *name)
{
	size_t nl = strlen(name);
	size_t reclen = (offsetof(struct gofer_dirent64, d_name) + nl + 1 + 7) & ~(size_t)7;
	struct gofer_dirent64 *de;

	if (*used + reclen > size)
		return false;
	de = (struct gofer_dirent64 *)(buf + *used);
	memset(de, 0, reclen);
	de->d_ino = ino;
	de->d_off = off;
	de->d_reclen = (unsigned short)reclen;
	de->d_type = type;
	memcpy(de->d_name, name, nl + 1);
	*used += reclen;
	return true;
}

/*
 * Listing of a view directory.  Positions: 0 ".", 1 "..", then each child's
 * listing sequence number (assigned when it entered the directory and never
 * reused), so entries added or removed during a listing do not make others
 * appear twice or be skipped.
 */
static ssize_t view_getdents(struct gofer_dentry *d, int fd, char *buf, size_t size)
{
	const struct gofer_dentry *parent = d->parent ? d->parent : d;
	size_t used = 0;
	off_t cur = lseek(fd, 0, SEEK_CUR);
	uint64_t pos;

	if (cur < 0)
		return -errno;
	pos = (uint64_t)cur;
	if (pos == 0) {
		if (!emit(buf, size, &used, d->ino, 1, DT_DIR, "."))
			return -EINVAL;
		pos = 1;
	}
	if (pos == 1) {
		if (!emit(buf, size, &used, dino_of(parent), 2, DT_DIR, "..")) {
			if (!used)
				return -EINVAL;
			goto out;
		}
		pos = 2;
	}
	for (size_t i = gofer_dentry_seek(d, pos); i < d->nchild; i++) {
		const struct gofer_dentry *c = d->by_seq[i];

		if (!emit(buf, size, &used, dino_of(c), (int64_t)(c->seq + 1), dtype_of(c),
			  c->name)) {
			if (!used)
				return -EINVAL;
			goto out;
		}
		pos = c->seq + 1;
	}
out:
	if (lseek(fd, (off_t)pos, SEEK_SET) < 0)
		return -errno;
	return (ssize_t)used;
}

/*
 * Drop from the @len bytes of records in @buf the names hidden in the bind
 * holding directory @fd; returns the bytes kept (records stay in order,
 * each keeps its d_off, so the directory position is unchanged).
 */
static ssize_t filter_hidden(const struct gofer_view *view, int fd, char *buf, size_t len)
{
	const struct gofer_dentry *b = gofer_fd_bind(view, fd);
	char hp[PATH_MAX], rel[PATH_MAX];
	size_t in = 0, out = 0, hl, bl;
	const char *below;

	if (!b || !b->nhides)
		return (ssize_t)len;
	if (fd_host_path(fd, hp, sizeof(hp)) < 0)
		return -EIO;
	hl = strlen(hp);
	bl = strlen(b->host_path);
	below = bl == 1 ? hp + 1 : hp + bl;
	if (*below == '/')
		below++;
	(void)hl;
	while (in < len) {
		struct gofer_dirent64 *de = (struct gofer_dirent64 *)(buf + in);
		size_t rl = de->d_reclen;

		if (rl == 0 || in + rl > len)
			break;
		snprintf(rel, sizeof(rel), "%s%s%s", below, *below ? "/" : "", de->d_name);
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && gofer_bind_hides(b, rel)) {
			in += rl;
			continue;
		}
		if (out != in)
			memmove(buf + out, buf + in, rl);
		out += rl;
		in += rl;
	}
	return (ssize_t)out;
}

ssize_t gofer_fd_getdents(struct gofer_view *view, int fd, void *buf, size_t size)
{
	struct gofer_handle *h;
	struct stat st;
	char hp[PATH_MAX];
	long n;
	int fl;

	if (fstat(fd, &st) < 0)
		return -EBADF;
	h = gofer_table_find(view, st.st_dev, st.st_ino);
	if (h) {
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || (fl & O_PATH))
			return -EBADF;
		if (!gofer_dentry_is_view_dir(h->d))
			return -ENOTDIR;
		return view_getdents(h->d, fd, buf, size);
	}
	/* A directory of the view removed since: empty, as Linux lists a deleted dir. */
	if (gofer_is_store_dir(view, &st))
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		/* The handle of a directory removed since: empty, as Linux lists a deleted dir. */
		if (S_ISREG(st.st_mode) && fd_host_path(fd, hp, sizeof(hp)) > 0 &&
		    strncmp(hp, "/memfd:" GOFER_HANDLE_NAME " ", sizeof("/memfd:" GOFER_HANDLE_NAME)) == 0)
			return 0;
		return -ENOTDIR;
	}
	/* A host directory below a bind: the host's own listing and offset,
	 * without the names the policy hides in that bind. */
	for (;;) {
		n = syscall(SYS_getdents64, fd, buf, size);
		if (n <= 0)
			return n < 0 ? -errno : 0;
		n = filter_hidden(view, fd, buf, (size_t)n);
		if (n != 0)
			return n;
		/* Every record of this batch was hidden: read on. */
	}
}
