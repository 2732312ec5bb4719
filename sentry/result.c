/*
 * result.c - artifacts and the result object of a run (docs/result.md).
 *
 * Artifacts are the regular files of /workspace that are new or changed
 * since the run started (gofer_view_walk_changed).  They are written to
 * --output-dir only after every conflict has been checked, each one through
 * a temporary name and a rename, with every path component opened relative
 * to the output directory and never through a symlink (openat2(2)
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so a sandbox-chosen name cannot
 * land outside it.
 */
#include "sentry.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/fs.h>
#include <magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"

static int collect_one(const struct gofer_artifact *a, void *opaque)
{
	struct result_artifacts *list = opaque;
	struct result_artifact *arr, *it;

	if (list->count == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 16;

		arr = realloc(list->items, cap * sizeof(*arr));
		if (!arr)
			return -ENOMEM;
		list->items = arr;
		list->cap = cap;
	}
	it = &list->items[list->count];
	memset(it, 0, sizeof(*it));
	it->rel_path = strdup(a->rel_path);
	it->fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 3);
	if (!it->rel_path || it->fd < 0) {
		free(it->rel_path);
		if (it->fd >= 0)
			close(it->fd);
		return -ENOMEM;
	}
	it->size = a->size;
	for (int i = 0; i < 32; i++)
		snprintf(it->sha256 + 2 * i, 3, "%02x", a->sha256[i]);
	list->count++;
	return 0;
}

/* Content type from the first bytes, with libmagic (file(1)'s database). */
static void fill_mime(struct result_artifacts *list)
{
	magic_t m = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR);
	char buf[65536];

	if (m && magic_load(m, NULL) < 0) {
		magic_close(m);
		m = NULL;
	}
	for (size_t i = 0; i < list->count; i++) {
		struct result_artifact *a = &list->items[i];
		ssize_t n = pread(a->fd, buf, sizeof(buf), 0);
		const char *t = (m && n >= 0) ? magic_buffer(m, buf, (size_t)n) : NULL;

		snprintf(a->mime, sizeof(a->mime), "%s", t ? t : "application/octet-stream");
	}
	if (m)
		magic_close(m);
}

int result_artifacts_collect(struct gofer_view *view, struct result_artifacts *list,
			     struct pv_error *err)
{
	int r;

	memset(list, 0, sizeof(*list));
	r = gofer_view_walk_changed(view, "/workspace", collect_one, list, err);
	if (r < 0) {
		if (err && !err->msg[0])
			pv_error_set(err, -r, "collecting artifacts: %s", strerror(-r));
		return r;
	}
	fill_mime(list);
	return 0;
}

void result_artifacts_free(struct result_artifacts *list)
{
	for (size_t i = 0; i < list->count; i++) {
		free(list->items[i].rel_path);
		if (list->items[i].fd >= 0)
			close(list->items[i].fd);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
}

/* Open @rel under @dirfd, never leaving it and never through a symlink. */
static int open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* Open (creating) the directory holding @rel inside @root.  Returns an fd
 * and sets *@base to the last component of @rel. */
static int open_parent(int root, const char *rel, const char **base, struct pv_error *err)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	int fd;

	*base = slash ? slash + 1 : rel;
	if (!slash)
		return fcntl(root, F_DUPFD_CLOEXEC, 3);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	for (char *p = dir;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdirat(root, dir, 0755) < 0 && errno != EEXIST)
			return pv_error_set(err, errno, "output directory: cannot create %s: %s", dir,
					    strerror(errno));
		*p = c;
		if (c == '\0')
			break;
	}
	fd = open_beneath(root, dir, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return pv_error_set(err, -fd, "output directory: cannot open %s: %s", dir,
				    strerror(-fd));
	return fd;
}

static int copy_fd(int from, int to)
{
	char buf[65536];
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(from, buf, sizeof(buf), off), w;

		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t done = 0; done < n; done += w) {
			w = write(to, buf + done, (size_t)(n - done));
			if (w < 0)
				return -errno;
		}
		off += n;
	}
}

/* mkdir -p @dir (0755).  Returns 0 or -errno. */
static int mkdir_parents(const char *dir)
{
	char tmp[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, len + 1);
	for (char *p = tmp + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (c == '\0')
			return 0;
	}
}

int result_artifacts_write(const struct result_artifacts *list, const char *dir, bool force,
			   struct pv_error *err)
{
	_cleanup_close_ int root = -1;
	int r;

	r = mkdir_parents(dir);
	if (r < 0)
		return pv_error_set(err, -r, "cannot create output directory %s: %s", dir,
				    strerror(-r));
	root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return pv_error_set(err, errno, "cannot open output directory %s: %s", dir,
				    strerror(errno));
	/* All conflicts first: on a conflict nothing is written. */
	if (!force) {
		for (size_t i = 0; i < list->count; i++) {
			struct stat st;

			if (fstatat(root, list->items[i].rel_path, &st, AT_SYMLINK_NOFOLLOW) == 0)
				return pv_error_set(err, EEXIST,
						    "output file %s/%s exists (use --force to overwrite)",
						    dir, list->items[i].rel_path);
		}
	}
	for (size_t i = 0; i < list->count; i++) {
		const struct result_artifact *a = &list->items[i];
		_cleanup_close_ int pfd = -1, out = -1;
		const char *base;
		char tmp[NAME_MAX + 1];

		pfd = open_parent(root, a->rel_path, &base, err);
		if (pfd < 0)
			return pfd;
		snprintf(tmp, sizeof(tmp), ".pyvisor-%d-%zu.tmp", getpid(), i);
		out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (out < 0)
			return pv_error_set(err, errno, "cannot write %s/%s: %s", dir, a->rel_path,
					    strerror(errno));
		r = copy_fd(a->fd, out);
		if (r == 0 && fsync(out) < 0)
			r = -errno;
		if (r == 0 && renameat2(pfd, tmp, pfd, base, force ? 0 : RENAME_NOREPLACE) < 0)
			r = -errno;
		if (r < 0) {
			unlinkat(pfd, tmp, 0);
			return pv_error_set(err, -r, "cannot write %s/%s: %s", dir, a->rel_path,
					    strerror(-r));
		}
	}
	return 0;
}

/* A JSON string from captured bytes: invalid UTF-8 becomes U+FFFD. */
static json_t *bytes_to_json(const char *data, size_t len)
{
	char *buf = malloc(len * 3 + 1);
	size_t o = 0, i = 0;
	json_t *j;

	if (!buf)
		return json_null();
	while (i < len) {
		unsigned char c = (unsigned char)data[i];
		size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		bool ok = n > 0 && i + n <= len;

		for (size_t k = 1; ok && k < n; k++)
			ok = ((unsigned char)data[i + k] >> 6) == 2;
		if (ok && n > 1) {
			/* Overlong forms, surrogates and > U+10FFFF are invalid. */
			unsigned int cp = n == 2 ? (c & 0x1fu) : n == 3 ? (c & 0x0fu) : (c & 0x07u);

			for (size_t k = 1; k < n; k++)
				cp = (cp << 6) | ((unsigned char)data[i + k] & 0x3fu);
			ok = !((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
			       (n == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) ||
			       cp > 0x10ffff);
		}
		if (ok && c != 0) {
			memcpy(buf + o, data + i, n);
			o += n;
			i += n;
		} else if (ok) {
			buf[o++] = 0; /* NUL is valid UTF-8; jansson takes lengths */
			i++;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	j = json_stringn(buf, o);
	free(buf);
	return j ? j : json_null();
}

json_t *result_json(const struct sentry_outcome *o, const struct result_artifacts *arts,
		    const char *audit_path, const char *error, const struct sentry_config *cfg)
{
	json_t *res = json_object(), *list = json_array();
	bool exited = o->status == SENTRY_STATUS_OK || o->status == SENTRY_STATUS_ERROR;
	uint64_t largest = 0;

	if (!res || !list) {
		json_decref(res);
		json_decref(list);
		return NULL;
	}
	for (size_t i = 0; arts && i < arts->count; i++) {
		const struct result_artifact *a = &arts->items[i];

		if (a->size > largest)
			largest = a->size;
		json_array_append_new(list, json_pack("{s:s, s:I, s:s, s:s}", "path", a->rel_path,
						      "size_bytes", (json_int_t)a->size, "sha256",
						      a->sha256, "mime", a->mime));
	}
	json_object_set_new(res, "status", json_string(limits_status_name(o->status)));
	json_object_set_new(res, "exit_code", exited ? json_integer(o->exit_code) : json_null());
	json_object_set_new(res, "signal",
			    !exited && o->signal ? json_integer(o->signal) : json_null());
	json_object_set_new(res, "stdout", bytes_to_json(o->out.data, o->out.len));
	json_object_set_new(res, "stderr", bytes_to_json(o->err.data, o->err.len));
	json_object_set_new(res, "stdout_truncated", json_boolean(o->out.truncated));
	json_object_set_new(res, "stderr_truncated", json_boolean(o->err.truncated));
	json_object_set_new(res, "duration_ms", json_integer((json_int_t)o->duration_ms));
	json_object_set_new(res, "artifacts", list);
	json_object_set_new(res, "violations", json_integer((json_int_t)o->violations));
	json_object_set_new(res, "audit_log", audit_path ? json_string(audit_path) : json_null());
	json_object_set_new(res, "audit_events",
			    o->audit_events ? json_copy(o->audit_events) : json_array());
	json_object_set_new(res, "audit_events_truncated", json_boolean(o->audit_events_truncated));
	if (o->network)
		json_object_set_new(res, "network", json_copy(o->network));
	json_object_set_new(res, "error", error ? json_string(error) : json_null());
	if (cfg)
		json_object_set_new(res, "limits", limits_json(cfg, o, largest));
	return res;
}
