/*
 * test_cache.c - unit tests of the lookup and directory caches of the view
 * (gofer/cache.c).
 *
 * The caches must never change an answer: every test asks the same
 * question twice or more (the second time from the cache) and asserts the
 * same errno, metadata, bytes and audit facts (hidden, read_only), and that
 * answers about the in-memory trees follow the sandbox's changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gofer-internal.h"

static char host_root[PATH_MAX];

static void hpath(char *out, size_t size, const char *rel)
{
	int n = snprintf(out, size, "%s/%s", host_root, rel);

	assert_true(n > 0 && (size_t)n < size);
}

static void mkfile(const char *rel, const char *content, mode_t mode)
{
	char p[PATH_MAX];
	int fd;

	hpath(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void mkdir_h(const char *rel, mode_t mode)
{
	char p[PATH_MAX];

	hpath(p, sizeof(p), rel);
	assert_int_equal(mkdir(p, mode), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static int group_setup(void **state)
{
	snprintf(host_root, sizeof(host_root), "/tmp/pyvisor-cache-XXXXXX");
	if (!mkdtemp(host_root))
		return -1;
	assert_int_equal(chmod(host_root, 0755), 0);
	mkdir_h("a", 0755);
	mkdir_h("a/b", 0755);
	mkdir_h("a/b/c", 0755);
	mkfile("a/b/c/f.txt", "cached\n", 0644);
	mkdir_h("closed", 0700);
	mkfile("closed/secret", "no\n", 0644);
	mkdir_h("a/d", 0755);
	mkfile("a/d/g.txt", "g\n", 0644);
	{
		char p[PATH_MAX];

		hpath(p, sizeof(p), "a/b/up");
		assert_int_equal(symlink("../d", p), 0);
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
	return nftw(host_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A view as the policy builds it: a host bind, a mem tree, a skeleton dir.
 * The sandbox uid differs from the host owner, so "other" bits apply and
 * the component walk (not openat2) resolves host paths. */
static int setup_as(void **state, uid_t uid, gid_t gid)
{
	struct gofer_config cfg = { .uid = uid, .gid = gid };
	struct pv_error err = { 0 };
	struct gofer_view *v = gofer_view_new(&cfg, &err);

	assert_non_null(v);
	assert_int_equal(gofer_view_bind_host(v, host_root, "/data", &err), 0);
	assert_int_equal(gofer_view_add_mem_dir(v, "/workspace", 0755, &err), 0);
	assert_int_equal(gofer_view_add_symlink(v, "/d", "data/a", &err), 0);
	*state = v;
	return 0;
}

static int setup(void **state)
{
	return setup_as(state, getuid() + 4242, getgid() + 4242);
}

/* The sandbox ids are the supervisor's: host lookups take the openat2 fast path. */
static int setup_fast(void **state)
{
	return setup_as(state, geteuid(), getegid());
}

static int teardown(void **state)
{
	gofer_view_free(*state);
	return 0;
}

static void hits(struct gofer_view *v, uint64_t *h)
{
	uint64_t m;
	size_t n;

	gofer_cache_stats(v, h, &m, &n);
}

static void test_host_stat_repeats(void **state)
{
	struct gofer_view *v = *state;
	struct gofer_lookup_info info;
	struct stat st1, st2, host;
	char p[PATH_MAX];
	uint64_t h0, h1;

	hpath(p, sizeof(p), "a/b/c/f.txt");
	assert_int_equal(stat(p, &host), 0);
	assert_int_equal(gofer_stat(v, "/", "/data/a/b/c/f.txt", false, &st1, &info), 0);
	hits(v, &h0);
	assert_int_equal(gofer_stat(v, "/", "/data/a/b/c/f.txt", false, &st2, &info), 0);
	hits(v, &h1);
	assert_true(h1 == h0 + 1);
	assert_memory_equal(&st1, &st2, sizeof(st1));
	assert_int_equal(st2.st_ino, host.st_ino);
	assert_int_equal(st2.st_size, 7);
	assert_string_equal(info.view_path, "/data/a/b/c/f.txt");
	/* Through the policy's symlink, and a relative path from a host base. */
	assert_int_equal(gofer_stat(v, "/", "/d/b/c/f.txt", false, &st2, &info), 0);
	assert_int_equal(st2.st_ino, host.st_ino);
	assert_int_equal(gofer_stat(v, "/data/a", "b/c/f.txt", false, &st2, &info), 0);
	assert_int_equal(gofer_stat(v, "/data/a", "b/c/f.txt", false, &st2, &info), 0);
	assert_int_equal(st2.st_ino, host.st_ino);
	/* A host symlink through "..": same file every time. */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(gofer_stat(v, "/", "/data/a/b/up/g.txt", false, &st2, &info), 0);
		assert_int_equal(st2.st_size, 2);
	}
}

static void test_open_after_hit(void **state)
{
	struct gofer_view *v = *state;
	struct gofer_lookup_info info;
	char buf[16];

	for (int i = 0; i < 3; i++) {
		int fd = gofer_open(v, "/", "/data/a/b/c/f.txt", O_RDONLY, 0, &info);

		assert_true(fd >= 0);
		memset(buf, 0, sizeof(buf));
		assert_int_equal(read(fd, buf, sizeof(buf)), 7);
		assert_string_equal(buf, "cached\n");
		close(fd);
		/* Writing is still refused on the host bind, with the audit fact. */
		assert_int_equal(gofer_open(v, "/", "/data/a/b/c/f.txt", O_WRONLY, 0, &info),
				 -EROFS);
		assert_true(info.read_only);
		assert_int_equal(gofer_access(v, "/", "/data/a/b/c/f.txt", W_OK, 0, &info),
				 -EROFS);
		assert_int_equal(gofer_access(v, "/", "/data/a/b/c/f.txt", R_OK, 0, &info), 0);
		assert_int_equal(gofer_access(v, "/", "/data/a/b/c/f.txt", X_OK, 0, &info),
				 -EACCES);
	}
}

static void test_errors_repeat(void **state)
{
	struct gofer_view *v = *state;
	struct gofer_lookup_info info;
	struct stat st;

	for (int i = 0; i < 3; i++) {
		/* Search permission on a 0700 directory the sandbox does not own. */
		assert_int_equal(gofer_stat(v, "/", "/data/closed/secret", false, &st, &info),
				 -EACCES);
		assert_int_equal(gofer_open(v, "/", "/data/closed/secret", O_RDONLY, 0, &info),
				 -EACCES);
		/* Missing host names, ENOTDIR. */
		assert_int_equal(gofer_stat(v, "/", "/data/a/nope", false, &st, &info), -ENOENT);
		assert_false(info.hidden);
		assert_int_equal(gofer_stat(v, "/", "/data/a/b/c/f.txt/x", false, &st, &info),
				 -ENOTDIR);
		/* A name the policy hides: still reported as hidden. */
		assert_int_equal(gofer_stat(v, "/", "/etc/shadow", false, &st, &info), -ENOENT);
		assert_true(info.hidden);
		assert_string_equal(info.view_path, "/etc");
	}
}

static void test_dotdot_dir_fd(void **state)
{
	struct gofer_view *v = *state;
	struct gofer_lookup_info info;
	char out[PATH_MAX];

	for (int i = 0; i < 3; i++) {
		/* Ends on a host directory entered from the directory cache. */
		int fd = gofer_open(v, "/", "/data/a/b/c/..", O_RDONLY | O_DIRECTORY, 0, &info);

		assert_true(fd >= 0);
		assert_int_equal(gofer_fd_view_path(v, fd, out, sizeof(out)), 0);
		assert_string_equal(out, "/data/a/b");
		close(fd);
		assert_int_equal(gofer_chdir_resolve(v, "/", "/data/a/b/c/.", out, sizeof(out),
						     &info),
				 0);
		assert_string_equal(out, "/data/a/b/c");
	}
}

static void test_mem_tree_not_cached(void **state)
{
	struct gofer_view *v = *state;
	struct gofer_lookup_info info;
	struct stat st;
	int fd;

	assert_int_equal(gofer_stat(v, "/", "/workspace/new.txt", false, &st, &info), -ENOENT);
	assert_int_equal(gofer_stat(v, "/workspace", "new.txt", false, &st, &info), -ENOENT);
	fd = gofer_open(v, "/workspace", "new.txt", O_WRONLY | O_CREAT, 0644, &info);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_int_equal(gofer_stat(v, "/", "/workspace/new.txt", false, &st, &info), 0);
	assert_int_equal(st.st_size, 3);
	assert_int_equal(gofer_stat(v, "/workspace", "new.txt", false, &st, &info), 0);
	assert_int_equal(gofer_unlink(v, "/", "/workspace/new.txt", false, &info), 0);
	assert_int_equal(gofer_stat(v, "/", "/workspace/new.txt", false, &st, &info), -ENOENT);
	/* A host path looked up from a base inside the mem tree. */
	assert_int_equal(gofer_mkdir(v, "/", "/workspace/sub", 0755, &info), 0);
	assert_int_equal(gofer_stat(v, "/workspace/sub", "../../data/a/d/g.txt", false, &st,
				    &info),
			 0);
	assert_int_equal(gofer_unlink(v, "/", "/workspace/sub", true, &info), 0);
	assert_int_equal(gofer_stat(v, "/workspace/sub", "../../data/a/d/g.txt", false, &st,
				    &info),
			 -ENOENT);
}

static void test_build_clears(void **state)
{
	struct gofer_view *v = *state;
	struct gofer_lookup_info info;
	struct pv_error err = { 0 };
	struct stat st;
	char p[PATH_MAX];

	assert_int_equal(gofer_stat(v, "/", "/opt/f.txt", false, &st, &info), -ENOENT);
	assert_true(info.hidden);
	hpath(p, sizeof(p), "a/b/c");
	assert_int_equal(gofer_view_bind_host(v, p, "/opt", &err), 0);
	assert_int_equal(gofer_stat(v, "/", "/opt/f.txt", false, &st, &info), 0);
	assert_int_equal(st.st_size, 7);
}

/* Many long paths: the cache stays bounded in memory and answers stay right. */
static void test_bounded(void **state)
{
	struct gofer_view *v = *state;
	struct gofer_lookup_info info;
	static char path[3200];
	struct stat st;
	uint64_t h, m;
	size_t n, len;

	len = (size_t)snprintf(path, sizeof(path), "/data");
	while (len < 3000)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "/.");
	for (int i = 0; i < 3000; i++) {
		snprintf(path + len, sizeof(path) - len, "/a/nope%d", i);
		assert_int_equal(gofer_stat(v, "/", path, false, &st, &info), -ENOENT);
		gofer_cache_stats(v, &h, &m, &n);
		assert_true(n * 3000 <= (4UL << 20));
	}
	snprintf(path + len, sizeof(path) - len, "/a/b/c/f.txt");
	assert_int_equal(gofer_stat(v, "/", path, false, &st, &info), 0);
	assert_int_equal(gofer_stat(v, "/", path, false, &st, &info), 0);
	assert_int_equal(st.st_size, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_host_stat_repeats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_after_hit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_repeat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dotdot_dir_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mem_tree_not_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_clears, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_stat_repeats, setup_fast, teardown),
		cmocka_unit_test_setup_teardown(test_open_after_hit, setup_fast, teardown),
		cmocka_unit_test_setup_teardown(test_dotdot_dir_fd, setup_fast, teardown),
		cmocka_unit_test_setup_teardown(test_mem_tree_not_cached, setup_fast, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
