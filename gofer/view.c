/*
 * view.c - the dentry tree: building the view, the inode table, dentry
 * metadata.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "gofer-internal.h"

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

/* --- inode table ------------------------------------------------------ */

static size_t bucket_of(size_t nbuckets, dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)ino * 0xff51afd7ed558ccdULL);

	h ^= h >> 29;
	return (size_t)(h & (nbuckets - 1));
}

static int table_grow(struct gofer_view *v)
{
	size_t n = v->nbuckets ? v->nbuckets * 2 : 64;
	struct gofer_handle **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < v->nbuckets; i++) {
		struct gofer_handle *h = v->buckets[i], *next;

		for (; h; h = next) {
			size_t j = bucket_of(n, h->dev, h->ino);

			next = h->next;
			h->next = b[j];
			b[j] = h;
		}
	}
	free(v->buckets);
	v->buckets = b;
	v->nbuckets = n;
	return 0;
}

/*
 * gofer_table_add - map the inode of memfd @fd to @d.  @held: the table
 * owns @fd (a directory handle) and closes it when @d goes away; otherwise
 * @fd is @d's own memfd.  Returns 0 or -errno; on failure a @held @fd is
 * left to the caller.
 */
int gofer_table_add(struct gofer_view *v, struct gofer_dentry *d, int fd, bool held)
{
	struct gofer_handle *h;
	struct stat st;
	size_t i;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (v->nentries + 1 > v->nbuckets) {
		int rc = table_grow(v);

		if (rc < 0)
			return rc;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->dev = st.st_dev;
	h->ino = st.st_ino;
	h->d = d;
	h->fd = held ? fd : -1;
	i = bucket_of(v->nbuckets, h->dev, h->ino);
	h->next = v->buckets[i];
	v->buckets[i] = h;
	h->d_next = d->handles;
	d->handles = h;
	v->nentries++;
	if (held)
		v->nheld++;
	return 0;
}

/* gofer_table_find - the entry for inode (@dev, @ino), or NULL. */
struct gofer_handle *gofer_table_find(const struct gofer_view *v, dev_t dev, ino_t ino)
{
	struct gofer_handle *h;

	if (!v->nbuckets)
		return NULL;
	for (h = v->buckets[bucket_of(v->nbuckets, dev, ino)]; h; h = h->next)
		if (h->dev == dev && h->ino == ino)
			return h;
	return NULL;
}

static void table_remove_dentry(struct gofer_view *v, struct gofer_dentry *d)
{
	struct gofer_handle *h, *next;

	for (h = d->handles; h; h = next) {
		struct gofer_handle **pp = &v->buckets[bucket_of(v->nbuckets, h->dev, h->ino)];

		next = h->d_next;
		while (*pp && *pp != h)
			pp = &(*pp)->next;
		if (*pp)
			*pp = h->next;
		if (h->fd >= 0) {
			close(h->fd);
			v->nheld--;
		}
		v->nentries--;
		free(h);
	}
	d->handles = NULL;
}

/* --- memfds ----------------------------------------------------------- */

/*
 * gofer_memfd_new - create a sealable close-on-exec memfd named @name into
 * *@out.  Returns 0 or -errno.
 */
int gofer_memfd_new(const char *name, int *out)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	*out = fd;
	return 0;
}

/*
 * gofer_reopen - open a new file description of the object behind @fd
 * (any fd, O_PATH included) through /proc/self/fd with @flags (O_CLOEXEC
 * is added).  The magic link names the exact object, no path is walked.
 * Returns the new fd or -errno.
 */
int gofer_reopen(int fd, int flags)
{
	char p[64];
	int r;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = open(p, flags | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

/* --- dentries --------------------------------------------------------- */

/*
 * gofer_dentry_new - allocate an unattached dentry of @kind named @name.
 * Returns NULL on allocation failure.
 */
struct gofer_dentry *gofer_dentry_new(struct gofer_view *v, enum gofer_kind kind,
				      const char *name, mode_t mode, uid_t uid, gid_t gid)
{
	struct gofer_dentry *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->name = strdup(name);
	if (!d->name) {
		free(d);
		return NULL;
	}
	d->kind = kind;
	d->ino = v->next_ino++;
	d->mode = mode;
	d->uid = uid;
	d->gid = gid;
	d->fd = -1;
	d->next_seq = 2;
	now(&d->mtime);
	d->atime = d->ctime = d->mtime;
	return d;
}

static void mounts_remove(struct gofer_view *v, struct gofer_dentry *d)
{
	for (size_t i = 0; i < v->nmounts; i++) {
		if (v->mounts[i] == d) {
			memmove(&v->mounts[i], &v->mounts[i + 1],
				(v->nmounts - i - 1) * sizeof(v->mounts[0]));
			v->nmounts--;
			return;
		}
	}
}

static void dentry_free_one(struct gofer_view *v, struct gofer_dentry *d)
{
	table_remove_dentry(v, d);
	if (d->kind == GOFER_KIND_BIND || d->kind == GOFER_KIND_DEVICE)
		mounts_remove(v, d);
	if (d->fd >= 0)
		close(d->fd);
	free(d->by_name);
	free(d->by_seq);
	free(d->host_path);
	free(d->target);
	free(d->name);
	free(d);
}

/*
 * gofer_dentry_free - free @d and its subtree: inode table entries, memfds,
 * host fds.  @d must already be detached from its parent (or be the root).
 * Iterative (post-order through parent pointers): renames can build trees
 * deeper than any path, so recursion could exhaust the supervisor's stack.
 */
void gofer_dentry_free(struct gofer_view *v, struct gofer_dentry *d)
{
	struct gofer_dentry *cur = d;

	while (cur) {
		struct gofer_dentry *next;

		if (cur->nchild) {
			cur = cur->by_seq[--cur->nchild];
			continue;
		}
		next = cur == d ? NULL : cur->parent;
		dentry_free_one(v, cur);
		cur = next;
	}
}

/* gofer_dentry_is_view_dir - @d is an in-memory directory (skeleton or mem dir). */
bool gofer_dentry_is_view_dir(const struct gofer_dentry *d)
{
	return d->kind == GOFER_KIND_SKEL || d->kind == GOFER_KIND_MEMDIR;
}

/* gofer_dentry_is_dir - @d is a directory (in memory, or a bind of a host directory). */
bool gofer_dentry_is_dir(const struct gofer_dentry *d)
{
	return gofer_dentry_is_view_dir(d) || (d->kind == GOFER_KIND_BIND && S_ISDIR(d->mode));
}

static size_t name_index(const struct gofer_dentry *dir, const char *name, bool *found)
{
	size_t lo = 0, hi = dir->nchild;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(dir->by_name[mid]->name, name);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t seq_index(const struct gofer_dentry *dir, uint64_t seq)
{
	size_t lo = 0, hi = dir->nchild;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dir->by_seq[mid]->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* gofer_dentry_find - child @name of directory @dir, or NULL. */
struct gofer_dentry *gofer_dentry_find(const struct gofer_dentry *dir, const char *name)
{
	bool found;
	size_t i = name_index(dir, name, &found);

	return found ? dir->by_name[i] : NULL;
}

/*
 * gofer_dentry_seek - index in @dir->by_seq of the first child whose
 * listing position is >= @seq (dir->nchild when none).
 */
size_t gofer_dentry_seek(const struct gofer_dentry *dir, uint64_t seq)
{
	return seq_index(dir, seq);
}

/*
 * gofer_dentry_attach - add @child (unattached, name not present) to @dir,
 * last in listing order.  Returns 0 or -ENOMEM (nothing changed).
 */
int gofer_dentry_attach(struct gofer_dentry *dir, struct gofer_dentry *child)
{
	bool found;
	size_t i;
	int rc = gofer_dentry_reserve(dir);

	if (rc < 0)
		return rc;
	i = name_index(dir, child->name, &found);
	memmove(&dir->by_name[i + 1], &dir->by_name[i], (dir->nchild - i) * sizeof(dir->by_name[0]));
	dir->by_name[i] = child;
	child->seq = dir->next_seq++;
	dir->by_seq[dir->nchild] = child;
	dir->nchild++;
	child->parent = dir;
	return 0;
}

/*
 * gofer_dentry_reserve - make room in @dir for one more child, so that the
 * next gofer_dentry_attach() cannot fail.  Returns 0 or -ENOMEM.
 */
int gofer_dentry_reserve(struct gofer_dentry *dir)
{
	if (dir->nchild == dir->cap) {
		size_t cap = dir->cap ? dir->cap * 2 : 8;
		struct gofer_dentry **a = realloc(dir->by_name, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		dir->by_name = a;
		a = realloc(dir->by_seq, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		dir->by_seq = a;
		dir->cap = cap;
	}
	return 0;
}

/* gofer_dentry_detach - remove @child from its parent's children. */
void gofer_dentry_detach(struct gofer_dentry *child)
{
	struct gofer_dentry *dir = child->parent;
	bool found;
	size_t i;

	if (!dir)
		return;
	i = name_index(dir, child->name, &found);
	if (found && dir->by_name[i] == child) {
		memmove(&dir->by_name[i], &dir->by_name[i + 1],
			(dir->nchild - i - 1) * sizeof(dir->by_name[0]));
		i = seq_index(dir, child->seq);
		memmove(&dir->by_seq[i], &dir->by_seq[i + 1],
			(dir->nchild - i - 1) * sizeof(dir->by_seq[0]));
		dir->nchild--;
	}
	child->parent = NULL;
}

/* gofer_dentry_touch - update a directory's mtime and ctime after a change of its entries. */
void gofer_dentry_touch(struct gofer_dentry *dir)
{
	now(&dir->mtime);
	dir->ctime = dir->mtime;
}

/*
 * gofer_dentry_path - write the canonical view path of @d to @out.
 * Returns the length, or -ENAMETOOLONG when @size is too small.
 */
int gofer_dentry_path(const struct gofer_dentry *d, char *out, size_t size)
{
	size_t len = 0, pos;
	const struct gofer_dentry *p;

	if (!d->parent) {
		if (size < 2)
			return -ENAMETOOLONG;
		memcpy(out, "/", 2);
		return 1;
	}
	for (p = d; p->parent; p = p->parent)
		len += 1 + strlen(p->name);
	if (len + 1 > size)
		return -ENAMETOOLONG;
	pos = len;
	out[pos] = '\0';
	for (p = d; p->parent; p = p->parent) {
		size_t n = strlen(p->name);

		pos -= n;
		memcpy(out + pos, p->name, n);
		out[--pos] = '/';
	}
	return (int)len;
}

/*
 * gofer_dentry_stat - the stat of @d as the sandbox sees it.  Host objects
 * (binds, devices) report their host metadata.  Returns 0 or -errno.
 */
int gofer_dentry_stat(const struct gofer_view *v, const struct gofer_dentry *d, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	switch (d->kind) {
	case GOFER_KIND_BIND:
	case GOFER_KIND_DEVICE:
		return fstat(d->fd, st) < 0 ? -errno : 0;
	case GOFER_KIND_MEMFILE:
	case GOFER_KIND_SYNTH:
		if (fstat(d->fd, st) < 0)
			return -errno;
		st->st_nlink = 1;
		st->st_rdev = 0;
		st->st_blocks = (st->st_size + 4095) / 4096 * 8;
		break;
	case GOFER_KIND_SKEL:
	case GOFER_KIND_MEMDIR:
		st->st_nlink = 2;
		for (size_t i = 0; i < d->nchild; i++)
			if (gofer_dentry_is_dir(d->by_name[i]))
				st->st_nlink++;
		st->st_size = 4096;
		st->st_blocks = 8;
		st->st_atim = d->atime;
		st->st_mtim = d->mtime;
		st->st_ctim = d->ctime;
		break;
	case GOFER_KIND_SYMLINK:
		st->st_nlink = 1;
		st->st_size = (off_t)strlen(d->target);
		st->st_atim = d->atime;
		st->st_mtim = d->mtime;
		st->st_ctim = d->ctime;
		break;
	}
	st->st_dev = GOFER_VIEW_DEV;
	st->st_ino = d->ino;
	st->st_mode = d->mode;
	st->st_uid = d->uid;
	st->st_gid = d->gid;
	st->st_blksize = 4096;
	return 0;
}

/* --- the view --------------------------------------------------------- */

struct gofer_view *gofer_view_new(const struct gofer_config *cfg, struct pv_error *err)
{
	struct gofer_view *v = calloc(1, sizeof(*v));

	if (!v) {
		pv_error_set(err, ENOMEM, "gofer: cannot allocate the view");
		return NULL;
	}
	v->cfg = *cfg;
	v->next_ino = 1;
	/*
	 * The openat2 fast path lets the host kernel check search permission
	 * on the directories it crosses; that equals our own check only when
	 * the supervisor has the sandbox's credentials.  Otherwise (a root
	 * supervisor) every component is walked and checked here.
	 */
	v->fast_host = geteuid() == cfg->uid && getegid() == cfg->gid;
	v->root = gofer_dentry_new(v, GOFER_KIND_SKEL, "", S_IFDIR | 0755, 0, 0);
	if (!v->root) {
		free(v);
		pv_error_set(err, ENOMEM, "gofer: cannot allocate the view");
		return NULL;
	}
	v->root->hidden = true;
	return v;
}

void gofer_view_free(struct gofer_view *view)
{
	if (!view)
		return;
	gofer_cache_free(view);
	gofer_dentry_free(view, view->root);
	for (size_t i = 0; i < view->nsnaps; i++) {
		for (size_t j = 0; j < view->snaps[i].n; j++)
			free(view->snaps[i].entries[j].rel);
		free(view->snaps[i].entries);
		free(view->snaps[i].root);
	}
	free(view->snaps);
	free(view->buckets);
	free(view->mounts);
	free(view);
}

/*
 * Check that @path is absolute and canonical, create its missing parents
 * and return the parent directory and the last component.  -EEXIST when
 * the path is taken.
 */
static int build_parent(struct gofer_view *v, const char *path, struct gofer_dentry **parent,
			const char **last, struct pv_error *err)
{
	struct gofer_dentry *dir = v->root;
	const char *p = path;
	char comp[NAME_MAX + 1];

	if (!path || path[0] != '/' || strnlen(path, PATH_MAX) >= PATH_MAX)
		return pv_error_set(err, EINVAL, "gofer: view path '%s' is not absolute", path ? path : "");
	if (path[1] == '\0')
		return pv_error_set(err, EEXIST, "gofer: view path '/' is taken");
	gofer_cache_clear(v);	/* the immutable part is changing */
	for (;;) {
		const char *q;
		size_t n;
		struct gofer_dentry *c;

		p++;
		q = strchrnul(p, '/');
		n = (size_t)(q - p);
		if (n == 0 || n > NAME_MAX || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.') || (*q == '/' && q[1] == '\0'))
			return pv_error_set(err, EINVAL, "gofer: view path '%s' is not canonical",
					    path);
		if (*q == '\0')
			break;
		memcpy(comp, p, n);
		comp[n] = '\0';
		c = gofer_dentry_find(dir, comp);
		if (!c) {
			/* Inside a mem tree the missing parent is a mem dir, elsewhere a skeleton dir. */
			bool mem = dir->kind == GOFER_KIND_MEMDIR;
			int rc;

			c = gofer_dentry_new(v, mem ? GOFER_KIND_MEMDIR : GOFER_KIND_SKEL, comp,
					     S_IFDIR | 0755, mem ? v->cfg.uid : 0,
					     mem ? v->cfg.gid : 0);
			if (!c)
				return pv_error_set(err, ENOMEM, "gofer: %s: out of memory", path);
			c->hidden = !mem && dir->hidden;
			rc = gofer_dentry_attach(dir, c);
			if (rc < 0) {
				gofer_dentry_free(v, c);
				return pv_error_set(err, -rc, "gofer: %s: out of memory", path);
			}
		} else if (!gofer_dentry_is_view_dir(c)) {
			return pv_error_set(err, ENOTDIR,
					    "gofer: %s: '%s' is not an in-memory directory", path,
					    comp);
		}
		dir = c;
		p = q;
	}
	if (gofer_dentry_find(dir, p))
		return pv_error_set(err, EEXIST, "gofer: view path '%s' is taken", path);
	*parent = dir;
	*last = p;
	return 0;
}

/* Attach @d under @parent or free it. */
static int attach_or_free(struct gofer_view *v, struct gofer_dentry *parent,
			  struct gofer_dentry *d, const char *path, struct pv_error *err)
{
	int rc = gofer_dentry_attach(parent, d);

	if (rc < 0) {
		gofer_dentry_free(v, d);
		return pv_error_set(err, -rc, "gofer: %s: out of memory", path);
	}
	gofer_dentry_touch(parent);
	return 0;
}

static int mounts_add(struct gofer_view *v, struct gofer_dentry *d)
{
	if (v->nmounts == v->cap_mounts) {
		size_t cap = v->cap_mounts ? v->cap_mounts * 2 : 16;
		struct gofer_dentry **a = realloc(v->mounts, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		v->mounts = a;
		v->cap_mounts = cap;
	}
	v->mounts[v->nmounts++] = d;
	return 0;
}

/* Open host object @host_path O_PATH and read its canonical path. */
static int host_open(const char *host_path, int *fd_out, char **canon, struct stat *st,
		     struct pv_error *err)
{
	_cleanup_close_ int fd = open(host_path, O_PATH | O_CLOEXEC);
	char link[64], buf[PATH_MAX];
	ssize_t n;

	if (fd < 0)
		return pv_error_set(err, errno, "gofer: cannot open host '%s': %s", host_path,
				    strerror(errno));
	if (fstat(fd, st) < 0)
		return pv_error_set(err, errno, "gofer: cannot stat host '%s'", host_path);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '/')
		return pv_error_set(err, n < 0 ? errno : EINVAL,
				    "gofer: cannot read the canonical path of host '%s'", host_path);
	buf[n] = '\0';
	*canon = strdup(buf);
	if (!*canon)
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	*fd_out = pv_steal_fd(&fd);
	return 0;
}

static int add_host_node(struct gofer_view *v, enum gofer_kind kind, const char *host_path,
			 const char *view_path, struct pv_error *err)
{
	struct gofer_dentry *parent, *d;
	const char *name;
	struct stat st;
	char *canon = NULL;
	int fd = -1, rc;

	rc = build_parent(v, view_path, &parent, &name, err);
	if (rc < 0)
		return rc;
	rc = host_open(host_path, &fd, &canon, &st, err);
	if (rc < 0)
		return rc;
	if (kind == GOFER_KIND_DEVICE && !S_ISCHR(st.st_mode)) {
		close(fd);
		free(canon);
		return pv_error_set(err, EINVAL, "gofer: host '%s' is not a character device",
				    host_path);
	}
	d = gofer_dentry_new(v, kind, name, st.st_mode, st.st_uid, st.st_gid);
	if (!d) {
		close(fd);
		free(canon);
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	}
	d->fd = fd;
	d->host_path = canon;
	d->host_ino = st.st_ino;
	d->mount_root = kind == GOFER_KIND_BIND;
	rc = mounts_add(v, d);
	if (rc < 0) {
		gofer_dentry_free(v, d);
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	}
	return attach_or_free(v, parent, d, view_path, err);
}

int gofer_view_bind_host(struct gofer_view *view, const char *host_path, const char *view_path,
			 struct pv_error *err)
{
	return add_host_node(view, GOFER_KIND_BIND, host_path, view_path, err);
}

int gofer_view_add_device(struct gofer_view *view, const char *host_path, const char *view_path,
			  struct pv_error *err)
{
	return add_host_node(view, GOFER_KIND_DEVICE, host_path, view_path, err);
}

int gofer_view_add_mem_dir(struct gofer_view *view, const char *view_path, mode_t mode,
			   struct pv_error *err)
{
	struct gofer_dentry *parent, *d;
	const char *name;
	int rc = build_parent(view, view_path, &parent, &name, err);

	if (rc < 0)
		return rc;
	d = gofer_dentry_new(view, GOFER_KIND_MEMDIR, name, S_IFDIR | (mode & 07777), view->cfg.uid,
			     view->cfg.gid);
	if (!d)
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	d->mount_root = true;
	return attach_or_free(view, parent, d, view_path, err);
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Add a memfd-backed file at @view_path; @fill fills the memfd.  */
static int add_file(struct gofer_view *v, enum gofer_kind kind, const char *view_path,
		    mode_t mode, uid_t uid, gid_t gid, int host_fd, const void *data, size_t len,
		    struct pv_error *err)
{
	struct gofer_dentry *parent, *d;
	const char *name;
	char mname[256];
	_cleanup_close_ int fd = -1;
	int rc = build_parent(v, view_path, &parent, &name, err);

	if (rc < 0)
		return rc;
	snprintf(mname, sizeof(mname), GOFER_MEMFD_PREFIX ":%.200s", name);
	rc = gofer_memfd_new(mname, &fd);
	if (rc < 0)
		return pv_error_set(err, -rc, "gofer: %s: memfd_create failed", view_path);
	if (host_fd >= 0) {
		char buf[65536];
		off_t off = 0;

		for (;;) {
			ssize_t n = pread(host_fd, buf, sizeof(buf), off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return pv_error_set(err, errno, "gofer: %s: cannot read the input",
						    view_path);
			if (n == 0)
				break;
			rc = write_all(fd, buf, (size_t)n);
			if (rc < 0)
				return pv_error_set(err, -rc, "gofer: %s: cannot fill the memfd",
						    view_path);
			off += n;
		}
	} else {
		rc = write_all(fd, data, len);
		if (rc < 0)
			return pv_error_set(err, -rc, "gofer: %s: cannot fill the memfd", view_path);
	}
	if (kind == GOFER_KIND_SYNTH &&
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		return pv_error_set(err, errno, "gofer: %s: cannot seal the memfd", view_path);
	d = gofer_dentry_new(v, kind, name, S_IFREG | (mode & 07777), uid, gid);
	if (!d)
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	d->fd = pv_steal_fd(&fd);
	rc = gofer_table_add(v, d, d->fd, false);
	if (rc < 0) {
		gofer_dentry_free(v, d);
		return pv_error_set(err, -rc, "gofer: %s: out of memory", view_path);
	}
	return attach_or_free(v, parent, d, view_path, err);
}

int gofer_view_add_mem_file(struct gofer_view *view, const char *view_path, int host_fd,
			    mode_t mode, struct pv_error *err)
{
	if (host_fd < 0)
		return pv_error_set(err, EBADF, "gofer: %s: bad input fd", view_path);
	return add_file(view, GOFER_KIND_MEMFILE, view_path, mode, view->cfg.uid, view->cfg.gid,
			host_fd, NULL, 0, err);
}

int gofer_view_add_synth_file(struct gofer_view *view, const char *view_path, const void *data,
			      size_t len, struct pv_error *err)
{
	return add_file(view, GOFER_KIND_SYNTH, view_path, 0644, 0, 0, -1, data, len, err);
}

int gofer_view_add_symlink(struct gofer_view *view, const char *view_path, const char *target,
			   struct pv_error *err)
{
	struct gofer_dentry *parent, *d;
	const char *name;
	bool mem;
	int rc;

	if (!target || !*target || strnlen(target, PATH_MAX) >= PATH_MAX)
		return pv_error_set(err, EINVAL, "gofer: %s: bad symlink target", view_path);
	rc = build_parent(view, view_path, &parent, &name, err);
	if (rc < 0)
		return rc;
	mem = parent->kind == GOFER_KIND_MEMDIR;
	d = gofer_dentry_new(view, GOFER_KIND_SYMLINK, name, S_IFLNK | 0777,
			     mem ? view->cfg.uid : 0, mem ? view->cfg.gid : 0);
	if (!d)
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	d->target = strdup(target);
	if (!d->target) {
		gofer_dentry_free(view, d);
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	}
	return attach_or_free(view, parent, d, view_path, err);
}
