/*
 * artifact.c - snapshots of in-memory trees and the files changed since.
 */
#include <errno.h>
#include <string.h>
#include <openssl/evp.h>

#include "gofer-internal.h"

struct file_list {
	struct gofer_snapshot_entry *e;	/* rel path + digest */
	struct gofer_dentry **d;
	size_t n;
	size_t cap;
};

static void file_list_free(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->e[i].rel);
	free(l->e);
	free(l->d);
}

/* SHA-256 of the whole content of memfd @fd, read with pread. */
static int sha256_fd(int fd, unsigned char out[32], uint64_t *size)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char buf[65536];
	off_t off = 0;
	unsigned int len = 0;
	int rc = 0;

	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = -EIO;
		goto out;
	}
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
			rc = -EIO;
			goto out;
		}
		off += n;
	}
	if (EVP_DigestFinal_ex(ctx, out, &len) != 1 || len != 32)
		rc = -EIO;
	*size = (uint64_t)off;
out:
	EVP_MD_CTX_free(ctx);
	return rc;
}

static int collect(struct file_list *l, const struct gofer_dentry *dir, char *rel, size_t len)
{
	for (size_t i = 0; i < dir->nchild; i++) {
		struct gofer_dentry *c = dir->by_name[i];
		size_t n = strlen(c->name), sep = len > 0;
		int rc;

		if (len + sep + n >= PATH_MAX)
			return -ENAMETOOLONG;
		if (sep)
			rel[len] = '/';
		memcpy(rel + len + sep, c->name, n + 1);
		if (gofer_dentry_is_view_dir(c)) {
			rc = collect(l, c, rel, len + sep + n);
			if (rc < 0)
				return rc;
		} else if (c->kind == GOFER_KIND_MEMFILE || c->kind == GOFER_KIND_SYNTH) {
			if (l->n == l->cap) {
				size_t cap = l->cap ? l->cap * 2 : 64;
				struct gofer_snapshot_entry *e = realloc(l->e, cap * sizeof(*e));
				struct gofer_dentry **d;

				if (!e)
					return -ENOMEM;
				l->e = e;
				d = realloc(l->d, cap * sizeof(*d));
				if (!d)
					return -ENOMEM;
				l->d = d;
				l->cap = cap;
			}
			l->e[l->n].rel = strdup(rel);
			if (!l->e[l->n].rel)
				return -ENOMEM;
			l->d[l->n] = c;
			l->n++;
		}
		rel[len] = '\0';
	}
	return 0;
}

/* Regular files under view directory @root sorted by relative path. */
static int list_files(struct gofer_view *v, const char *root, struct file_list *l,
		      struct pv_error *err)
{
	_cleanup_free_ char *rel = malloc(PATH_MAX);
	struct gofer_res r;
	size_t *idx;
	int rc;

	if (!rel)
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	rc = gofer_resolve(v, "/", root, GOFER_WALK_FOLLOW, &r);
	if (rc == 0 && !r.exists)
		rc = -ENOENT;
	if (rc == 0 && (r.hfd >= 0 || !gofer_dentry_is_view_dir(r.d)))
		rc = -ENOTDIR;
	if (rc < 0) {
		gofer_res_release(&r);
		return pv_error_set(err, -rc, "gofer: artifacts root '%s': %s", root, strerror(-rc));
	}
	rel[0] = '\0';
	rc = collect(l, r.d, rel, 0);
	if (rc < 0)
		return pv_error_set(err, -rc, "gofer: listing '%s': %s", root, strerror(-rc));
	/* Sort (rel, dentry) pairs together through an index permutation. */
	idx = malloc((l->n ? l->n : 1) * sizeof(*idx));
	if (!idx)
		return pv_error_set(err, ENOMEM, "gofer: out of memory");
	for (size_t i = 0; i < l->n; i++)
		idx[i] = i;
	for (size_t i = 1; i < l->n; i++) {	/* insertion sort on mostly ordered input */
		size_t k = idx[i], j = i;

		while (j > 0 && strcmp(l->e[idx[j - 1]].rel, l->e[k].rel) > 0) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = k;
	}
	{
		struct gofer_snapshot_entry *e = malloc((l->n ? l->n : 1) * sizeof(*e));
		struct gofer_dentry **d = malloc((l->n ? l->n : 1) * sizeof(*d));

		if (!e || !d) {
			free(e);
			free(d);
			free(idx);
			return pv_error_set(err, ENOMEM, "gofer: out of memory");
		}
		for (size_t i = 0; i < l->n; i++) {
			e[i] = l->e[idx[i]];
			d[i] = l->d[idx[i]];
		}
		free(l->e);
		free(l->d);
		l->e = e;
		l->d = d;
		l->cap = l->n;
	}
	free(idx);
	return 0;
}

static struct gofer_snapshot *snapshot_find(struct gofer_view *v, const char *root)
{
	for (size_t i = 0; i < v->nsnaps; i++)
		if (strcmp(v->snaps[i].root, root) == 0)
			return &v->snaps[i];
	return NULL;
}

int gofer_view_snapshot(struct gofer_view *view, const char *root, struct pv_error *err)
{
	struct file_list l = { 0 };
	struct gofer_snapshot *s;
	uint64_t size;
	int rc;

	rc = list_files(view, root, &l, err);
	if (rc < 0)
		goto fail;
	for (size_t i = 0; i < l.n; i++) {
		rc = sha256_fd(l.d[i]->fd, l.e[i].sha256, &size);
		if (rc < 0) {
			rc = pv_error_set(err, -rc, "gofer: hashing '%s/%s'", root, l.e[i].rel);
			goto fail;
		}
	}
	s = snapshot_find(view, root);
	if (!s) {
		struct gofer_snapshot *a = realloc(view->snaps, (view->nsnaps + 1) * sizeof(*a));
		char *r = strdup(root);

		if (a)
			view->snaps = a;
		if (!a || !r) {
			free(r);
			rc = pv_error_set(err, ENOMEM, "gofer: out of memory");
			goto fail;
		}
		s = &view->snaps[view->nsnaps++];
		s->root = r;
	} else {
		for (size_t i = 0; i < s->n; i++)
			free(s->entries[i].rel);
		free(s->entries);
	}
	s->entries = l.e;
	s->n = l.n;
	free(l.d);
	return 0;
fail:
	file_list_free(&l);
	return rc;
}

static const struct gofer_snapshot_entry *snapshot_lookup(const struct gofer_snapshot *s,
							  const char *rel)
{
	size_t lo = 0, hi = s ? s->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->entries[mid].rel, rel);

		if (c == 0)
			return &s->entries[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int gofer_view_walk_changed(struct gofer_view *view, const char *root,
			    int (*fn)(const struct gofer_artifact *a, void *opaque), void *opaque,
			    struct pv_error *err)
{
	struct file_list l = { 0 };
	const struct gofer_snapshot *s = snapshot_find(view, root);
	int rc;

	rc = list_files(view, root, &l, err);
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		const struct gofer_snapshot_entry *old;
		struct gofer_artifact a = { .rel_path = l.e[i].rel, .fd = l.d[i]->fd };

		rc = sha256_fd(a.fd, a.sha256, &a.size);
		if (rc < 0) {
			rc = pv_error_set(err, -rc, "gofer: hashing '%s/%s'", root, l.e[i].rel);
			break;
		}
		old = snapshot_lookup(s, a.rel_path);
		if (old && memcmp(old->sha256, a.sha256, sizeof(a.sha256)) == 0)
			continue;
		rc = fn(&a, opaque);
	}
	file_list_free(&l);
	return rc;
}
