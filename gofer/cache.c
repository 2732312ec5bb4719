/*
 * cache.c - lookup cache for the immutable part of the view.
 *
 * Python asks the view the same questions over and over: every import
 * stats and opens paths under /usr/lib/python3*, most of them several
 * times.  Resolving such a path walks the host component by component
 * (two host syscalls per component when the supervisor runs as root) or
 * makes one openat2() call plus an fstat() (resolve.c).  This cache
 * remembers the outcome of gofer_resolve() for requests whose whole
 * resolution stayed in the immutable part of the view:
 *
 *   - skeleton directories, synthesized files, device nodes and the
 *     policy's symlinks: built before the run, never changed by the sandbox
 *     (skeleton directories refuse creation and removal with EACCES);
 *   - read-only host binds: the sandbox cannot change them (EROFS), and
 *     pyvisor assumes that the host does not change the files below a
 *     bind while a run lasts (docs/performance.md: "The immutable host
 *     view").
 *
 * A resolution that touched an in-memory tree (/workspace, /tmp, ...) at
 * any step, including its base directory, is never cached: the sandbox
 * changes those trees.  Transient failures (EMFILE, ENOMEM, EINTR...) are
 * not cached either.
 *
 * What a hit gives:
 *   - for metadata-only callers (GOFER_WALK_NOFD: stat, access): the
 *     stored result and the host object's stat, no host syscall at all;
 *   - otherwise: a fresh O_PATH fd of the host object, opened with one
 *     openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS)
 *     from the bind's root along the canonical path recorded at the miss,
 *     so even a host that changed under the assumption cannot lead outside
 *     the bind; the caller then checks the object's current mode as on a
 *     miss (open_resolved() stats the fd itself).  If that open fails the
 *     entry is dropped and the request resolved again in full.
 * Permission checks: a cached success means the sandbox's search
 * permissions along the path were checked at the miss (resolve.c), on
 * metadata the assumption says does not change.
 *
 * Directory cache: the component walk below a bind root opens every host
 * directory on the way (openat(O_PATH|O_NOFOLLOW) and fstat() per
 * component).  gofer_dcache_find()/gofer_dcache_add() keep the O_PATH fd
 * and the owner and mode of up to DCACHE_MAX host directories, keyed by
 * their canonical view path, so that a walk enters a known directory
 * without a host syscall.  Only directories reached from a host directory
 * by a plain name are added (never through a symlink or ".."), and
 * search permission is still checked at every step from the stored mode.
 *
 * Bounds: at most CACHE_MAX result entries and CACHE_MAX_BYTES of them
 * (then the result cache starts over empty, so a sandbox looking up many
 * long paths cannot grow the supervisor); at most DCACHE_MAX
 * directory fds, never evicted during a run (a walk may be borrowing them).
 * Building the view (gofer_view_bind_host() and friends) clears both.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"
#include "gofer-internal.h"

#define CACHE_BUCKETS 8192	/* power of two */
#define CACHE_MAX 16384
#define CACHE_MAX_BYTES (4UL << 20)	/* keys and paths may be long: bound the memory too */
#define DCACHE_BUCKETS 1024	/* power of two */
#define DCACHE_MAX 512

struct dcache_entry {
	struct dcache_entry *next;
	uint64_t hash;
	int fd;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	size_t len;
	char path[];
};

struct cache_entry {
	struct cache_entry *next;
	uint64_t hash;
	unsigned int flags;
	int rc;
	/* The stored result (struct gofer_res without its fd and buffers). */
	bool exists, parent_host, hidden, trailing_slash, host_obj;
	int last;
	struct gofer_dentry *d, *bind, *pd;
	struct stat st;		/* host_obj: the host object's metadata */
	char *name;		/* points into text */
	char *path;		/* points into text */
	const char *rel;	/* host_obj: path below the bind's root, in path */
	size_t keylen;
	char text[];		/* key (base NUL path), then name NUL, then path NUL */
};

struct gofer_cache {
	struct cache_entry *buckets[CACHE_BUCKETS];
	size_t n;
	size_t bytes;
	uint64_t hits, misses;
	struct dcache_entry *dbuckets[DCACHE_BUCKETS];
	size_t nd;
};

static struct gofer_cache *cache_get(struct gofer_view *v)
{
	if (!v->cache)
		v->cache = calloc(1, sizeof(*v->cache));
	return v->cache;
}

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The key: flags, then for a relative path the base, then the path. */
static size_t make_key(const char *base, const char *path, char *key, size_t size)
{
	size_t bl = path[0] == '/' ? 0 : strnlen(base, PATH_MAX);
	size_t pl = strnlen(path, PATH_MAX);

	if (bl + pl + 2 > size)
		return 0;
	memcpy(key, base, bl);
	key[bl] = '\0';
	memcpy(key + bl + 1, path, pl);
	return bl + pl + 1;
}

static uint64_t key_hash(unsigned int flags, const char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ flags;

	return fnv1a(h, key, len);
}

static void clear_results(struct gofer_cache *c)
{
	for (size_t i = 0; i < CACHE_BUCKETS; i++) {
		struct cache_entry *e = c->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
		c->buckets[i] = NULL;
	}
	c->n = 0;
	c->bytes = 0;
}

void gofer_cache_clear(struct gofer_view *v)
{
	struct gofer_cache *c = v->cache;

	if (!c)
		return;
	clear_results(c);
	for (size_t i = 0; i < DCACHE_BUCKETS; i++) {
		struct dcache_entry *e = c->dbuckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			close(e->fd);
			free(e);
		}
		c->dbuckets[i] = NULL;
	}
	c->nd = 0;
}

/* "@dir/@name" (or "/@name") into @key; its length, or 0 if too long. */
static size_t dir_key(const char *dir, size_t dlen, const char *name, char *key, size_t size)
{
	size_t nl = strlen(name), sep = dlen > 1;

	if (dlen + sep + nl + 1 > size)
		return 0;
	memcpy(key, dir, dlen);
	if (sep)
		key[dlen] = '/';
	memcpy(key + dlen + sep, name, nl + 1);
	return dlen + sep + nl;
}

int gofer_dcache_find(struct gofer_view *v, const char *dir, size_t dlen, const char *name,
		      int *fd, mode_t *mode, uid_t *uid, gid_t *gid)
{
	struct gofer_cache *c = v->cache;
	char key[PATH_MAX];
	size_t len;
	uint64_t h;

	if (!c || !c->nd || !(len = dir_key(dir, dlen, name, key, sizeof(key))))
		return 0;
	h = fnv1a(0xcbf29ce484222325ULL, key, len);
	for (struct dcache_entry *e = c->dbuckets[h & (DCACHE_BUCKETS - 1)]; e; e = e->next) {
		if (e->hash == h && e->len == len && !memcmp(e->path, key, len)) {
			*fd = e->fd;
			*mode = e->mode;
			*uid = e->uid;
			*gid = e->gid;
			return 1;
		}
	}
	return 0;
}

bool gofer_dcache_add(struct gofer_view *v, const char *dir, size_t dlen, const char *name,
		      int fd, const struct stat *st)
{
	struct gofer_cache *c = cache_get(v);
	struct dcache_entry *e, **b;
	char key[PATH_MAX];
	size_t len;

	if (!c || c->nd >= DCACHE_MAX || !S_ISDIR(st->st_mode) ||
	    !(len = dir_key(dir, dlen, name, key, sizeof(key))))
		return false;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return false;
	e->hash = fnv1a(0xcbf29ce484222325ULL, key, len);
	e->fd = fd;
	e->mode = st->st_mode;
	e->uid = st->st_uid;
	e->gid = st->st_gid;
	e->len = len;
	memcpy(e->path, key, len + 1);
	b = &c->dbuckets[e->hash & (DCACHE_BUCKETS - 1)];
	e->next = *b;
	*b = e;
	c->nd++;
	return true;
}

void gofer_cache_free(struct gofer_view *v)
{
	gofer_cache_clear(v);
	free(v->cache);
	v->cache = NULL;
}

static struct cache_entry **find(struct gofer_cache *c, unsigned int flags, uint64_t h,
				 const char *key, size_t len)
{
	struct cache_entry **pe = &c->buckets[h & (CACHE_BUCKETS - 1)];

	for (; *pe; pe = &(*pe)->next) {
		struct cache_entry *e = *pe;

		if (e->hash == h && e->flags == flags && e->keylen == len &&
		    !memcmp(e->text, key, len))
			return pe;
	}
	return pe;
}

/* A fresh O_PATH fd of the host object @e stands for, or -errno. */
static int reopen_host(const struct cache_entry *e)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, e->bind->fd, e->rel, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

int gofer_cache_lookup(struct gofer_view *v, const char *base, const char *path,
		       unsigned int flags, struct gofer_res *r, int *rc)
{
	struct gofer_cache *c = v->cache;
	char key[2 * PATH_MAX + 2];
	struct cache_entry **pe, *e;
	size_t len;
	uint64_t h;

	if (!c || !(len = make_key(base, path, key, sizeof(key))))
		return 0;
	h = key_hash(flags & ~GOFER_WALK_NOFD, key, len);
	pe = find(c, flags & ~GOFER_WALK_NOFD, h, key, len);
	e = *pe;
	if (!e) {
		c->misses++;
		return 0;
	}
	r->exists = e->exists;
	r->d = e->d;
	r->bind = e->bind;
	r->pd = e->pd;
	r->parent_host = e->parent_host;
	r->hidden = e->hidden;
	r->last = e->last;
	r->trailing_slash = e->trailing_slash;
	r->hfd = -1;
	r->host_obj = e->host_obj;
	r->st_valid = false;
	if (e->host_obj) {
		if (flags & GOFER_WALK_NOFD) {
			r->st = e->st;
			r->st_valid = true;
		} else {
			int fd = reopen_host(e);

			if (fd < 0) {
				/* The host changed (or openat2 is missing):
				 * forget the entry and resolve in full. */
				*pe = e->next;
				c->bytes -= sizeof(*e) + e->keylen + strlen(e->name) +
					    strlen(e->path) + 2;
				free(e);
				c->n--;
				c->misses++;
				return 0;
			}
			r->hfd = fd;
		}
	}
	memcpy(r->name, e->name, strlen(e->name) + 1);
	memcpy(r->path, e->path, strlen(e->path) + 1);
	*rc = e->rc;
	c->hits++;
	return 1;
}

/* Errors that describe the view rather than the supervisor's state. */
static bool stable_error(int rc)
{
	return rc == 0 || rc == -ENOENT || rc == -ENOTDIR || rc == -EACCES || rc == -ELOOP ||
	       rc == -ENAMETOOLONG;
}

void gofer_cache_store(struct gofer_view *v, const char *base, const char *path,
		       unsigned int flags, int rc, const struct gofer_res *r)
{
	struct gofer_cache *c = v->cache;
	char key[2 * PATH_MAX + 2], bpath[PATH_MAX];
	size_t len, nl, pl, bl = 0;
	struct cache_entry **pe, *e;
	struct stat st;
	bool host_obj = rc == 0 && r->exists && r->hfd >= 0;
	uint64_t h;

	if (!stable_error(rc) || !(len = make_key(base, path, key, sizeof(key))))
		return;
	if (host_obj) {
		/* The object lies below r->bind at r->path: keep the part
		 * below the bind's root to reopen it from there. */
		if (!r->bind || r->bind->kind != GOFER_KIND_BIND ||
		    gofer_dentry_path(r->bind, bpath, sizeof(bpath)) < 0)
			return;
		bl = strlen(bpath);
		if (strncmp(r->path, bpath, bl) || r->path[bl] != '/' || !r->path[bl + 1])
			return;
		if (r->st_valid)
			st = r->st;
		else if (fstat(r->hfd, &st) < 0)
			return;
	}
	c = cache_get(v);
	if (!c)
		return;
	nl = strlen(r->name) + 1;
	pl = strlen(r->path) + 1;
	if (c->n >= CACHE_MAX || c->bytes + sizeof(*e) + len + nl + pl > CACHE_MAX_BYTES)
		clear_results(c);
	flags &= ~GOFER_WALK_NOFD;
	h = key_hash(flags, key, len);
	pe = find(c, flags, h, key, len);
	if (*pe)
		return;
	e = malloc(sizeof(*e) + len + nl + pl);
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
	e->hash = h;
	e->flags = flags;
	e->rc = rc;
	e->exists = r->exists;
	e->parent_host = r->parent_host;
	e->hidden = r->hidden;
	e->trailing_slash = r->trailing_slash;
	e->last = r->last;
	e->d = r->d;
	e->bind = r->bind;
	e->pd = r->pd;
	e->keylen = len;
	memcpy(e->text, key, len);
	e->name = e->text + len;
	memcpy(e->name, r->name, nl);
	e->path = e->name + nl;
	memcpy(e->path, r->path, pl);
	if (host_obj) {
		e->host_obj = true;
		e->st = st;
		e->rel = e->path + bl + 1;
	}
	*pe = e;
	c->n++;
	c->bytes += sizeof(*e) + len + nl + pl;
}

void gofer_cache_stats(const struct gofer_view *v, uint64_t *hits, uint64_t *misses,
		       size_t *entries)
{
	const struct gofer_cache *c = v->cache;

	*hits = c ? c->hits : 0;
	*misses = c ? c->misses : 0;
	*entries = c ? c->n : 0;
}
