/*
 * test_gofer.c - unit tests of the filesystem view (gofer/).
 *
 * A host tree is built under a mkdtemp() directory and bound into a view
 * together with in-memory trees, a synthesized file, a device and
 * symlinks.  Every test gets a fresh view and asserts exact errnos and
 * bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gofer.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define SANDBOX_UID 1000
#define SANDBOX_GID 1000

static const char passwd_synth[] = "root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000::/workspace:/bin/sh\n";

/* sha256("hello\n") */
static const unsigned char hello_sha[32] = {
	0x58, 0x91, 0xb5, 0xb5, 0x22, 0xd5, 0xdf, 0x08, 0x6d, 0x0f, 0xf0, 0xb1, 0x10, 0xfb, 0xd9, 0xd2,
	0x1b, 0xb4, 0xfc, 0x71, 0x63, 0xaf, 0x34, 0xd0, 0x82, 0x86, 0xa2, 0xe8, 0x46, 0xf6, 0xbe, 0x03,
};

static char host_root[PATH_MAX];

struct fixture {
	struct gofer_view *v;
	struct gofer_lookup_info info;
};

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

static void symlink_h(const char *target, const char *rel)
{
	char p[PATH_MAX];

	hpath(p, sizeof(p), rel);
	assert_int_equal(symlink(target, p), 0);
}

static int group_setup(void **state)
{
	snprintf(host_root, sizeof(host_root), "/tmp/gofer-test-XXXXXX");
	if (!mkdtemp(host_root))
		return -1;
	mkdir_h("usr", 0755);
	mkdir_h("usr/bin", 0755);
	mkfile("usr/bin/python3", "#!python\n", 0755);
	mkdir_h("usr/lib", 0755);
	mkfile("usr/lib/data.txt", "hello\n", 0644);
	mkdir_h("usr/lib/secret", 0700);
	mkfile("usr/lib/secret/x", "x", 0644);
	symlink_h("../../../etc/passwd", "usr/escape");
	symlink_h("/etc/shadow", "usr/abs");
	symlink_h("/etc/passwd", "usr/abs2");
	symlink_h("loop2", "usr/loop1");
	symlink_h("loop1", "usr/loop2");
	symlink_h("lib/data.txt", "usr/rel");
	symlink_h("lib", "usr/libdir");
	symlink_h("../workspace", "usr/up");
	mkfile("hosthidden", "secret\n", 0644);
	mkfile("input.csv", "a,b\n1,2\n", 0644);
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX];
	const char *rels[] = {
		"usr/lib/secret/x", "usr/lib/data.txt", "usr/bin/python3", "usr/escape",
		"usr/abs", "usr/abs2", "usr/loop1", "usr/loop2", "usr/rel", "usr/libdir",
		"usr/up", "hosthidden", "input.csv",
	};
	const char *dirs[] = { "usr/lib/secret", "usr/lib", "usr/bin", "usr", "" };

	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++) {
		hpath(cmd, sizeof(cmd), rels[i]);
		unlink(cmd);
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		hpath(cmd, sizeof(cmd), dirs[i]);
		rmdir(cmd);
	}
	return 0;
}

static struct gofer_view *build_view(uid_t uid, gid_t gid)
{
	struct gofer_config cfg = { .uid = uid, .gid = gid };
	struct pv_error err = { 0 };
	struct gofer_view *v = gofer_view_new(&cfg, &err);
	char p[PATH_MAX];
	int fd;

	assert_non_null(v);
	hpath(p, sizeof(p), "usr");
	assert_int_equal(gofer_view_bind_host(v, p, "/usr", &err), 0);
	assert_int_equal(gofer_view_add_mem_dir(v, "/workspace", 0755, &err), 0);
	assert_int_equal(gofer_view_add_mem_dir(v, "/tmp", 01777, &err), 0);
	assert_int_equal(gofer_view_add_synth_file(v, "/etc/passwd", passwd_synth,
						   strlen(passwd_synth), &err),
			 0);
	assert_int_equal(gofer_view_add_device(v, "/dev/null", "/dev/null", &err), 0);
	assert_int_equal(gofer_view_add_symlink(v, "/bin", "usr/bin", &err), 0);
	hpath(p, sizeof(p), "input.csv");
	fd = open(p, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(gofer_view_add_mem_file(v, "/workspace/input.csv", fd, 0644, &err), 0);
	close(fd);
	return v;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->v = build_view(SANDBOX_UID, SANDBOX_GID);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	gofer_view_free(f->v);
	free(f);
	return 0;
}

/* Read all of @fd from offset 0 into @buf (NUL-terminated). */
static ssize_t slurp(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static int create_file(struct gofer_view *v, const char *path, const char *content)
{
	int fd = gofer_open(v, "/", path, O_CREAT | O_WRONLY | O_TRUNC, 0644, NULL);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	return 0;
}

/* --- lookups ---------------------------------------------------------- */

static void test_lookup(void **state)
{
	struct fixture *f = *state;
	struct stat st, root;

	assert_int_equal(gofer_stat(f->v, "/", "/usr/lib/data.txt", false, &st, &f->info), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 6);
	assert_string_equal(f->info.view_path, "/usr/lib/data.txt");

	assert_int_equal(gofer_stat(f->v, "/", "/bin/python3", false, &st, &f->info), 0);
	assert_int_equal(st.st_size, 9);
	assert_string_equal(f->info.view_path, "/usr/bin/python3");

	assert_int_equal(gofer_stat(f->v, "/usr", "lib/data.txt", false, &st, &f->info), 0);
	assert_string_equal(f->info.view_path, "/usr/lib/data.txt");
	assert_int_equal(gofer_stat(f->v, "/", "/usr/lib/../bin/./python3", false, &st, &f->info), 0);
	assert_string_equal(f->info.view_path, "/usr/bin/python3");
	/* ".." at the bind's root continues in the view above the mount point */
	assert_int_equal(gofer_stat(f->v, "/usr/lib", "../../workspace/input.csv", false, &st,
				    &f->info),
			 0);
	assert_string_equal(f->info.view_path, "/workspace/input.csv");
	/* ".." of "/" is "/" */
	assert_int_equal(gofer_stat(f->v, "/", "/../../..", false, &st, &f->info), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/", false, &root, NULL), 0);
	assert_int_equal(st.st_ino, root.st_ino);
	assert_true(S_ISDIR(root.st_mode));
	assert_int_equal(root.st_uid, 0);
	assert_int_equal(root.st_mode & 07777, 0755);
	assert_string_equal(f->info.view_path, "/");

	assert_int_equal(gofer_stat(f->v, "/", "", false, &st, &f->info), -ENOENT);
	/* host metadata for host objects */
	{
		char p[PATH_MAX];
		struct stat hst;

		hpath(p, sizeof(p), "usr/lib/data.txt");
		assert_int_equal(stat(p, &hst), 0);
		assert_int_equal(gofer_stat(f->v, "/", "/usr/lib/data.txt", false, &st, NULL), 0);
		assert_int_equal(st.st_ino, hst.st_ino);
		assert_int_equal(st.st_dev, hst.st_dev);
	}
}

static void test_hidden(void **state)
{
	struct fixture *f = *state;
	struct stat st;

	assert_int_equal(gofer_stat(f->v, "/", "/hosthidden", false, &st, &f->info), -ENOENT);
	assert_true(f->info.hidden);
	assert_string_equal(f->info.view_path, "/hosthidden");

	assert_int_equal(gofer_stat(f->v, "/", "/etc/shadow", false, &st, &f->info), -ENOENT);
	assert_true(f->info.hidden);
	assert_string_equal(f->info.view_path, "/etc/shadow");

	assert_int_equal(gofer_stat(f->v, "/", "/home/user/x", false, &st, &f->info), -ENOENT);
	assert_true(f->info.hidden);
	assert_string_equal(f->info.view_path, "/home");

	assert_int_equal(gofer_open(f->v, "/", "/proc/self/environ", O_RDONLY, 0, &f->info),
			 -ENOENT);
	assert_true(f->info.hidden);

	assert_int_equal(gofer_stat(f->v, "/", "/workspace/nope", false, &st, &f->info), -ENOENT);
	assert_false(f->info.hidden);
	assert_string_equal(f->info.view_path, "/workspace/nope");

	assert_int_equal(gofer_stat(f->v, "/", "/usr/nope", false, &st, &f->info), -ENOENT);
	assert_false(f->info.hidden);
	assert_int_equal(gofer_stat(f->v, "/", "/usr/nope/deeper", false, &st, &f->info), -ENOENT);
	assert_false(f->info.hidden);
	assert_string_equal(f->info.view_path, "/usr/nope");
}

static void test_symlinks_stay_in_view(void **state)
{
	struct fixture *f = *state;
	struct stat st, root;
	char buf[256];
	int fd;

	assert_int_equal(gofer_stat(f->v, "/", "/", false, &root, NULL), 0);
	/* ../../../etc/passwd from /usr is the view's /etc/passwd (the synth file) */
	assert_int_equal(gofer_stat(f->v, "/", "/usr/escape", false, &st, &f->info), 0);
	assert_string_equal(f->info.view_path, "/etc/passwd");
	assert_int_equal(st.st_dev, root.st_dev);
	assert_int_equal(st.st_size, (off_t)strlen(passwd_synth));
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode, S_IFREG | 0644);
	fd = gofer_open(f->v, "/", "/usr/escape", O_RDONLY, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(slurp(fd, buf, sizeof(buf)), (ssize_t)strlen(passwd_synth));
	assert_string_equal(buf, passwd_synth);
	close(fd);
	fd = gofer_open(f->v, "/", "/usr/abs2", O_RDONLY, 0, &f->info);
	assert_true(fd >= 0);
	assert_string_equal(f->info.view_path, "/etc/passwd");
	close(fd);

	/* an absolute host symlink resolves in the view: /etc/shadow is not there */
	assert_int_equal(gofer_stat(f->v, "/", "/usr/abs", false, &st, &f->info), -ENOENT);
	assert_true(f->info.hidden);
	assert_string_equal(f->info.view_path, "/etc/shadow");
	assert_int_equal(gofer_open(f->v, "/", "/usr/abs", O_RDONLY, 0, &f->info), -ENOENT);
	assert_int_equal(gofer_stat(f->v, "/", "/usr/abs", true, &st, &f->info), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(f->info.view_path, "/usr/abs");

	/* relative links inside the bind, and one climbing out of it into the view */
	assert_int_equal(gofer_stat(f->v, "/", "/usr/rel", false, &st, &f->info), 0);
	assert_string_equal(f->info.view_path, "/usr/lib/data.txt");
	assert_int_equal(gofer_stat(f->v, "/", "/usr/libdir/data.txt", false, &st, &f->info), 0);
	assert_string_equal(f->info.view_path, "/usr/lib/data.txt");
	assert_int_equal(gofer_stat(f->v, "/", "/usr/up/input.csv", false, &st, &f->info), 0);
	assert_string_equal(f->info.view_path, "/workspace/input.csv");
	assert_int_equal(st.st_uid, SANDBOX_UID);
	/* in-memory symlink with a trailing slash is followed */
	assert_int_equal(gofer_stat(f->v, "/", "/bin/", true, &st, &f->info), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_string_equal(f->info.view_path, "/usr/bin");
}

static void test_loops_and_limits(void **state)
{
	struct fixture *f = *state;
	struct pv_error err = { 0 };
	struct stat st;
	char name[300], path[PATH_MAX + 10];
	int fd;

	assert_int_equal(gofer_stat(f->v, "/", "/usr/loop1", false, &st, &f->info), -ELOOP);
	assert_int_equal(gofer_stat(f->v, "/", "/usr/loop1/x", false, &st, &f->info), -ELOOP);
	assert_int_equal(gofer_open(f->v, "/", "/usr/loop1", O_RDONLY, 0, &f->info), -ELOOP);
	assert_int_equal(gofer_stat(f->v, "/", "/usr/loop1", true, &st, &f->info), 0);

	/* O_NOFOLLOW on a final symlink */
	assert_int_equal(gofer_open(f->v, "/", "/bin", O_RDONLY | O_NOFOLLOW, 0, &f->info), -ELOOP);
	assert_int_equal(gofer_open(f->v, "/", "/usr/rel", O_RDONLY | O_NOFOLLOW, 0, &f->info),
			 -ELOOP);
	fd = gofer_open(f->v, "/", "/bin", O_PATH | O_NOFOLLOW, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_stat(f->v, fd, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(st.st_size, 7);
	close(fd);
	fd = gofer_open(f->v, "/", "/usr/rel", O_PATH | O_NOFOLLOW, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	close(fd);

	/* exactly GOFER_MAX_SYMLINKS links are followed, one more is ELOOP */
	for (int i = 0; i <= GOFER_MAX_SYMLINKS; i++) {
		char target[32];

		snprintf(name, sizeof(name), "/chain/l%d", i);
		if (i == GOFER_MAX_SYMLINKS)
			snprintf(target, sizeof(target), "/etc/passwd");
		else
			snprintf(target, sizeof(target), "l%d", i + 1);
		assert_int_equal(gofer_view_add_symlink(f->v, name, target, &err), 0);
	}
	assert_int_equal(gofer_stat(f->v, "/", "/chain/l1", false, &st, &f->info), 0);
	assert_string_equal(f->info.view_path, "/etc/passwd");
	assert_int_equal(gofer_stat(f->v, "/", "/chain/l0", false, &st, &f->info), -ELOOP);

	/* ENAMETOOLONG: a component over NAME_MAX, a path over PATH_MAX - 1 */
	memset(name, 'a', NAME_MAX + 1);
	name[NAME_MAX + 1] = '\0';
	snprintf(path, sizeof(path), "/workspace/%s", name);
	assert_int_equal(gofer_stat(f->v, "/", path, false, &st, NULL), -ENAMETOOLONG);
	assert_int_equal(gofer_open(f->v, "/", path, O_CREAT | O_WRONLY, 0644, NULL), -ENAMETOOLONG);
	snprintf(path, sizeof(path), "/usr/%s", name);
	assert_int_equal(gofer_stat(f->v, "/", path, false, &st, NULL), -ENAMETOOLONG);
	name[NAME_MAX] = '\0';
	snprintf(path, sizeof(path), "/workspace/%s", name);
	assert_int_equal(gofer_stat(f->v, "/", path, false, &st, NULL), -ENOENT);
	memset(path, '/', PATH_MAX);
	path[PATH_MAX] = '\0';
	assert_int_equal(gofer_stat(f->v, "/", path, false, &st, NULL), -ENAMETOOLONG);
	path[PATH_MAX - 1] = '\0';
	assert_int_equal(gofer_stat(f->v, "/", path, false, &st, NULL), 0);
}

/* --- writes and permissions ------------------------------------------- */

static void test_erofs(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(gofer_open(f->v, "/", "/usr/lib/data.txt", O_WRONLY, 0, &f->info), -EROFS);
	assert_true(f->info.read_only);
	assert_int_equal(gofer_open(f->v, "/", "/usr/lib/data.txt", O_RDWR, 0, &f->info), -EROFS);
	assert_int_equal(gofer_open(f->v, "/", "/usr/lib/data.txt", O_RDONLY | O_TRUNC, 0,
				    &f->info),
			 -EROFS);
	assert_int_equal(gofer_open(f->v, "/", "/usr/new", O_CREAT | O_WRONLY, 0644, &f->info),
			 -EROFS);
	assert_true(f->info.read_only);
	assert_string_equal(f->info.view_path, "/usr/new");
	assert_int_equal(gofer_open(f->v, "/", "/usr/nodir/new", O_CREAT | O_WRONLY, 0644,
				    &f->info),
			 -ENOENT);
	assert_false(f->info.read_only);
	assert_int_equal(gofer_mkdir(f->v, "/", "/usr/newdir", 0755, &f->info), -EROFS);
	assert_int_equal(gofer_mkdir(f->v, "/", "/usr/lib", 0755, &f->info), -EEXIST);
	assert_int_equal(gofer_unlink(f->v, "/", "/usr/lib/data.txt", false, &f->info), -EROFS);
	assert_int_equal(gofer_unlink(f->v, "/", "/usr/missing", false, &f->info), -EROFS);
	assert_int_equal(gofer_unlink(f->v, "/", "/usr/lib", true, &f->info), -EROFS);
	assert_int_equal(gofer_access(f->v, "/", "/usr/lib/data.txt", W_OK, 0, &f->info), -EROFS);
	assert_true(f->info.read_only);
	assert_int_equal(gofer_access(f->v, "/", "/usr/lib/data.txt", R_OK, 0, &f->info), 0);
	assert_int_equal(gofer_access(f->v, "/", "/usr/lib/data.txt", X_OK, 0, &f->info), -EACCES);
	assert_int_equal(gofer_access(f->v, "/", "/usr/bin/python3", R_OK | X_OK, 0, &f->info), 0);
	assert_int_equal(gofer_rename(f->v, "/", "/usr/lib/data.txt", "/", "/usr/x", 0, &f->info),
			 -EROFS);
	assert_int_equal(gofer_rename(f->v, "/", "/usr/lib/data.txt", "/", "/workspace/x", 0,
				      &f->info),
			 -EXDEV);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/input.csv", "/", "/usr/x", 0, &f->info),
			 -EXDEV);
	/* directories opened for writing: EISDIR comes before EROFS */
	assert_int_equal(gofer_open(f->v, "/", "/usr/lib", O_RDWR, 0, &f->info), -EISDIR);
}

static void test_skeleton_eacces(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(gofer_open(f->v, "/", "/newfile", O_CREAT | O_WRONLY, 0644, &f->info),
			 -EACCES);
	assert_false(f->info.hidden);
	assert_int_equal(gofer_open(f->v, "/", "/etc/new", O_CREAT | O_EXCL | O_WRONLY, 0644,
				    &f->info),
			 -EACCES);
	assert_int_equal(gofer_mkdir(f->v, "/", "/etc/x", 0755, &f->info), -EACCES);
	assert_int_equal(gofer_unlink(f->v, "/", "/etc/passwd", false, &f->info), -EACCES);
	assert_int_equal(gofer_open(f->v, "/", "/etc/passwd", O_WRONLY, 0, &f->info), -EACCES);
	assert_int_equal(gofer_open(f->v, "/", "/etc/passwd", O_RDONLY | O_TRUNC, 0, &f->info),
			 -EACCES);
	assert_int_equal(gofer_access(f->v, "/", "/", W_OK, 0, &f->info), -EACCES);
	assert_int_equal(gofer_access(f->v, "/", "/", R_OK | X_OK, 0, &f->info), 0);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace", true, &f->info), -EACCES);
	assert_int_equal(gofer_unlink(f->v, "/", "/", true, &f->info), -EBUSY);
	assert_int_equal(gofer_rename(f->v, "/", "/etc/passwd", "/", "/etc/p2", 0, &f->info),
			 -EACCES);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/input.csv", "/", "/etc/x", 0,
				      &f->info),
			 -EXDEV);
}

static void test_permissions(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	char out[4096];
	int fd;

	/* host 0700 root directory: no search, no read for the sandbox uid */
	assert_int_equal(gofer_stat(f->v, "/", "/usr/lib/secret/x", false, &st, &f->info), -EACCES);
	assert_int_equal(gofer_open(f->v, "/", "/usr/lib/secret", O_RDONLY | O_DIRECTORY, 0,
				    &f->info),
			 -EACCES);
	assert_int_equal(gofer_stat(f->v, "/", "/usr/lib/secret", false, &st, &f->info), 0);
	assert_int_equal(gofer_chdir_resolve(f->v, "/", "/usr/lib/secret", out, sizeof(out),
					     &f->info),
			 -EACCES);
	assert_int_equal(gofer_chdir_resolve(f->v, "/", "/bin", out, sizeof(out), &f->info), 0);
	assert_string_equal(out, "/usr/bin");
	assert_int_equal(gofer_chdir_resolve(f->v, "/workspace", "..", out, sizeof(out), &f->info),
			 0);
	assert_string_equal(out, "/");
	assert_int_equal(gofer_chdir_resolve(f->v, "/", "/workspace/input.csv", out, sizeof(out),
					     &f->info),
			 -ENOTDIR);

	/* mem file with mode 0400 */
	fd = gofer_open(f->v, "/", "/workspace/ro", O_CREAT | O_RDWR | O_EXCL, 0400, &f->info);
	assert_true(fd >= 0);	/* the creator gets its access mode */
	close(fd);
	assert_int_equal(gofer_open(f->v, "/", "/workspace/ro", O_WRONLY, 0, &f->info), -EACCES);
	fd = gofer_open(f->v, "/", "/workspace/ro", O_RDONLY, 0, &f->info);
	assert_true(fd >= 0);
	close(fd);
	/* mem dir without write permission */
	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/locked", 0555, &f->info), 0);
	assert_int_equal(gofer_open(f->v, "/", "/workspace/locked/f", O_CREAT | O_WRONLY, 0644,
				    &f->info),
			 -EACCES);
	assert_int_equal(gofer_access(f->v, "/", "/dev/null", R_OK | W_OK, 0, &f->info), 0);
	assert_int_equal(gofer_access(f->v, "/", "/dev/null", 8, 0, &f->info), -EINVAL);
}

static void test_open_creat_excl(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	char buf[64];
	int fd, fd2;

	fd = gofer_open(f->v, "/", "/workspace/a", O_CREAT | O_EXCL | O_RDWR, 0640, &f->info);
	assert_true(fd >= 0);
	assert_string_equal(f->info.view_path, "/workspace/a");
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	assert_int_equal(write(fd, "hello\n", 6), 6);
	assert_int_equal(gofer_open(f->v, "/", "/workspace/a", O_CREAT | O_EXCL | O_RDWR, 0640,
				    &f->info),
			 -EEXIST);
	fd2 = gofer_open(f->v, "/workspace", "a", O_CREAT | O_RDONLY, 0640, &f->info);
	assert_true(fd2 >= 0);
	/* private offsets: fd2 reads from 0 although fd wrote 6 bytes */
	assert_int_equal(read(fd2, buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "hello\n", 6);
	close(fd2);
	close(fd);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/a", false, &st, &f->info), 0);
	assert_int_equal(st.st_size, 6);
	assert_int_equal(st.st_mode, S_IFREG | 0640);
	assert_int_equal(st.st_uid, SANDBOX_UID);
	assert_int_equal(st.st_gid, SANDBOX_GID);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_blksize, 4096);

	/* O_CREAT|O_EXCL does not follow a final symlink */
	assert_int_equal(gofer_open(f->v, "/", "/bin", O_CREAT | O_EXCL | O_WRONLY, 0644, &f->info),
			 -EEXIST);
	assert_int_equal(gofer_open(f->v, "/", "/workspace/newdir/", O_CREAT | O_WRONLY, 0644,
				    &f->info),
			 -EISDIR);
	assert_int_equal(gofer_open(f->v, "/", "/workspace", O_CREAT | O_RDONLY, 0644, &f->info),
			 -EISDIR);
	assert_int_equal(gofer_open(f->v, "/", "/workspace/nodir/x", O_CREAT | O_WRONLY, 0644,
				    &f->info),
			 -ENOENT);
	assert_int_equal(gofer_open(f->v, "/", "/workspace/missing", O_RDONLY, 0, &f->info),
			 -ENOENT);
	/* O_TMPFILE names a directory: missing is ENOENT, a file ENOTDIR */
	assert_int_equal(gofer_open(f->v, "/", "/workspace/x", O_RDWR | O_TMPFILE, 0600, &f->info),
			 -ENOENT);
	assert_int_equal(gofer_open(f->v, "/", "/workspace", O_RDONLY | O_TMPFILE, 0600, &f->info),
			 -EINVAL);
	{
		struct stat tst;
		int tfd = gofer_open(f->v, "/", "/workspace", O_RDWR | O_TMPFILE, 0640, &f->info);

		assert_true(tfd >= 0);
		assert_int_equal(gofer_fd_stat(f->v, tfd, &tst), 0);
		assert_int_equal(tst.st_nlink, 0);
		assert_int_equal(tst.st_mode, S_IFREG | 0640);
		close(tfd);
	}
	/* O_CREAT through a dangling in-memory symlink creates its target */
	{
		struct pv_error err = { 0 };

		assert_int_equal(gofer_view_add_symlink(f->v, "/workspace/dangling", "target", &err),
				 0);
		fd = gofer_open(f->v, "/", "/workspace/dangling", O_CREAT | O_WRONLY, 0644, &f->info);
		assert_true(fd >= 0);
		assert_string_equal(f->info.view_path, "/workspace/target");
		close(fd);
	}
}

static void test_trunc_append(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	char buf[64];
	int fd, rfd;

	create_file(f->v, "/workspace/log", "hello\n");
	fd = gofer_open(f->v, "/", "/workspace/log", O_WRONLY | O_APPEND, 0, &f->info);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFL) & O_APPEND);
	assert_int_equal(write(fd, "world\n", 6), 6);
	close(fd);
	rfd = gofer_open(f->v, "/", "/workspace/log", O_RDONLY, 0, &f->info);
	assert_true(rfd >= 0);
	assert_int_equal(slurp(rfd, buf, sizeof(buf)), 12);
	assert_string_equal(buf, "hello\nworld\n");
	assert_int_equal(write(rfd, "x", 1), -1);	/* read-only description */
	assert_int_equal(errno, EBADF);

	fd = gofer_open(f->v, "/", "/workspace/log", O_WRONLY | O_TRUNC, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/log", false, &st, NULL), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(slurp(rfd, buf, sizeof(buf)), 0);
	close(fd);
	close(rfd);

	/* the input file was copied at build time */
	rfd = gofer_open(f->v, "/", "/workspace/input.csv", O_RDONLY | O_NONBLOCK, 0, &f->info);
	assert_true(rfd >= 0);
	assert_true(fcntl(rfd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(slurp(rfd, buf, sizeof(buf)), 8);
	assert_string_equal(buf, "a,b\n1,2\n");
	close(rfd);

	/* synth file: sealed, read-only */
	rfd = gofer_open(f->v, "/", "/etc/passwd", O_RDONLY, 0, &f->info);
	assert_true(rfd >= 0);
	assert_int_equal(fcntl(rfd, F_GET_SEALS),
			 F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	close(rfd);

	/* device: opened from the host */
	fd = gofer_open(f->v, "/", "/dev/null", O_WRONLY, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	close(fd);
}

static void test_directory_flags(void **state)
{
	struct fixture *f = *state;
	struct stat st, dst;
	int fd;

	assert_int_equal(gofer_open(f->v, "/", "/workspace/input.csv", O_RDONLY | O_DIRECTORY, 0,
				    &f->info),
			 -ENOTDIR);
	assert_int_equal(gofer_open(f->v, "/", "/usr/lib/data.txt", O_RDONLY | O_DIRECTORY, 0,
				    &f->info),
			 -ENOTDIR);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/input.csv/", false, &st, NULL), -ENOTDIR);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/input.csv/x", false, &st, NULL),
			 -ENOTDIR);
	assert_int_equal(gofer_stat(f->v, "/", "/usr/lib/data.txt/", false, &st, NULL), -ENOTDIR);
	assert_int_equal(gofer_stat(f->v, "/", "/usr/lib/data.txt/x", false, &st, NULL), -ENOTDIR);
	assert_int_equal(gofer_open(f->v, "/", "/workspace", O_WRONLY, 0, &f->info), -EISDIR);
	assert_int_equal(gofer_open(f->v, "/", "/", O_RDWR | O_DIRECTORY, 0, &f->info), -EISDIR);

	fd = gofer_open(f->v, "/", "/workspace/", O_RDONLY | O_DIRECTORY, 0, &f->info);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(gofer_fd_stat(f->v, fd, &st), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace", false, &dst, NULL), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_ino, dst.st_ino);
	assert_int_equal(st.st_dev, dst.st_dev);
	assert_int_equal(st.st_uid, SANDBOX_UID);
	assert_int_equal(st.st_mode, S_IFDIR | 0755);
	assert_int_equal(st.st_nlink, 2);
	close(fd);

	fd = gofer_open(f->v, "/", "/", O_PATH, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_stat(f->v, fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* "/" holds bin(symlink) dev etc tmp usr workspace: 5 subdirectories */
	assert_int_equal(st.st_nlink, 7);
	assert_int_equal(gofer_fd_getdents(f->v, fd, (char[256]){ 0 }, 256), -EBADF);
	close(fd);

	fd = gofer_open(f->v, "/", "/usr/lib", O_RDONLY | O_DIRECTORY, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
}

static void test_mkdir_unlink(void **state)
{
	struct fixture *f = *state;
	struct stat st;

	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/d", 0755, &f->info), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/d", false, &st, NULL), 0);
	assert_int_equal(st.st_mode, S_IFDIR | 0755);
	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/d", 0755, &f->info), -EEXIST);
	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/d/.", 0755, &f->info), -EEXIST);
	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/input.csv", 0755, &f->info), -EEXIST);
	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/nope/x", 0755, &f->info), -ENOENT);
	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/input.csv/x", 0755, &f->info), -ENOTDIR);
	assert_int_equal(gofer_mkdir(f->v, "/workspace", "d/sub/", 0700, &f->info), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/d", false, &st, NULL), 0);
	assert_int_equal(st.st_nlink, 3);
	create_file(f->v, "/workspace/d/f", "x");

	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d", true, &f->info), -ENOTEMPTY);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d", false, &f->info), -EISDIR);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d/f", true, &f->info), -ENOTDIR);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d/f/", false, &f->info), -ENOTDIR);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d/.", true, &f->info), -EINVAL);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d/..", true, &f->info), -ENOTEMPTY);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d/f", false, &f->info), 0);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d/f", false, &f->info), -ENOENT);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d/sub", true, &f->info), 0);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/d", true, &f->info), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/d", false, &st, NULL), -ENOENT);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/nope/x", false, &f->info), -ENOENT);
	/* a symlink is removed, not followed */
	{
		struct pv_error err = { 0 };

		assert_int_equal(gofer_view_add_symlink(f->v, "/workspace/ln", "input.csv", &err), 0);
		assert_int_equal(gofer_unlink(f->v, "/", "/workspace/ln", false, &f->info), 0);
		assert_int_equal(gofer_stat(f->v, "/", "/workspace/input.csv", false, &st, NULL), 0);
	}
}

static void test_rename(void **state)
{
	struct fixture *f = *state;
	struct stat st, st2;
	char buf[64];
	int fd;

	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/r", 0755, NULL), 0);
	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/r/sub", 0755, NULL), 0);
	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/r/empty", 0755, NULL), 0);
	create_file(f->v, "/workspace/r/sub/inner", "i");
	create_file(f->v, "/workspace/r/a", "A");
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/r/a", false, &st, NULL), 0);

	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/a", "/workspace/r", "b", 0, &f->info),
			 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/r/a", false, &st2, NULL), -ENOENT);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/r/b", false, &st2, NULL), 0);
	assert_int_equal(st.st_ino, st2.st_ino);
	fd = gofer_open(f->v, "/", "/workspace/r/b", O_RDONLY, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(slurp(fd, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "A");
	close(fd);

	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/b", "/", "/workspace/r/sub",
				      RENAME_NOREPLACE, &f->info),
			 -EEXIST);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/b", "/", "/workspace/r/sub", 0,
				      &f->info),
			 -EISDIR);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/sub", "/", "/workspace/r/b", 0,
				      &f->info),
			 -ENOTDIR);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r", "/", "/workspace/r/sub/x", 0,
				      &f->info),
			 -EINVAL);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/sub", "/", "/workspace/r/sub/x", 0,
				      &f->info),
			 -EINVAL);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/empty", "/", "/workspace/r/sub", 0,
				      &f->info),
			 -ENOTEMPTY);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/b", "/", "/workspace/r/b/", 0,
				      &f->info),
			 -ENOTDIR);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/.", "/", "/workspace/r2", 0,
				      &f->info),
			 -EBUSY);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/missing", "/", "/workspace/r/z", 0,
				      &f->info),
			 -ENOENT);
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/b", "/", "/workspace/r/c",
				      RENAME_EXCHANGE, &f->info),
			 -ENOENT);
	/* a directory over an empty directory */
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/sub", "/", "/workspace/r/empty", 0,
				      &f->info),
			 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/r/empty/inner", false, &st, NULL), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/r/sub", false, &st, NULL), -ENOENT);
	/* across in-memory trees: one filesystem */
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/r/b", "/", "/tmp/b", 0, &f->info), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/tmp/b", false, &st, NULL), 0);
	/* replacing a file keeps the source's content */
	create_file(f->v, "/tmp/c", "CC");
	assert_int_equal(gofer_rename(f->v, "/", "/tmp/b", "/", "/tmp/c", 0, &f->info), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/tmp/c", false, &st, NULL), 0);
	assert_int_equal(st.st_size, 1);
	assert_int_equal(gofer_rename(f->v, "/", "/tmp/c", "/", "/tmp/c", 0, &f->info), 0);
	assert_int_equal(gofer_rename(f->v, "/", "/tmp/c", "/", "/tmp/c", RENAME_NOREPLACE,
				      &f->info),
			 -EEXIST);
	/* mount points */
	assert_int_equal(gofer_rename(f->v, "/", "/workspace", "/", "/ws", 0, &f->info), -EACCES);
}

/* --- fds -------------------------------------------------------------- */

struct dent {
	char name[256];
	unsigned char type;
	uint64_t ino;
};

/* Parse linux_dirent64 records. */
static int parse_dirents(const char *buf, ssize_t n, struct dent *out, int max)
{
	int count = 0;

	for (ssize_t off = 0; off < n && count < max;) {
		uint64_t ino;
		unsigned short reclen;

		memcpy(&ino, buf + off, 8);
		memcpy(&reclen, buf + off + 16, 2);
		assert_int_equal(reclen % 8, 0);
		out[count].ino = ino;
		out[count].type = (unsigned char)buf[off + 18];
		snprintf(out[count].name, sizeof(out[count].name), "%s", buf + off + 19);
		count++;
		off += reclen;
	}
	return count;
}

static void test_getdents_view(void **state)
{
	struct fixture *f = *state;
	static const char *expect[] = { ".", "..", "usr", "workspace", "tmp", "etc", "dev", "bin" };
	static const unsigned char types[] = { DT_DIR, DT_DIR, DT_DIR, DT_DIR,
					       DT_DIR, DT_DIR, DT_DIR, DT_LNK };
	struct dent d[32];
	char buf[4096];
	struct stat st;
	ssize_t n;
	int fd, cnt;

	fd = gofer_open(f->v, "/", "/", O_RDONLY | O_DIRECTORY, 0, &f->info);
	assert_true(fd >= 0);
	n = gofer_fd_getdents(f->v, fd, buf, sizeof(buf));
	assert_true(n > 0);
	cnt = parse_dirents(buf, n, d, 32);
	assert_int_equal(cnt, 8);
	for (int i = 0; i < cnt; i++) {
		assert_string_equal(d[i].name, expect[i]);
		assert_int_equal(d[i].type, types[i]);
	}
	assert_int_equal(gofer_stat(f->v, "/", "/workspace", false, &st, NULL), 0);
	assert_int_equal(d[3].ino, st.st_ino);
	assert_int_equal(gofer_fd_getdents(f->v, fd, buf, sizeof(buf)), 0);

	/* rewind and read one record at a time */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(gofer_fd_getdents(f->v, fd, buf, 16), -EINVAL);
	n = gofer_fd_getdents(f->v, fd, buf, 24);
	assert_int_equal(n, 24);
	assert_string_equal(buf + 19, ".");
	n = gofer_fd_getdents(f->v, fd, buf, 24);
	assert_int_equal(n, 24);
	assert_string_equal(buf + 19, "..");
	n = gofer_fd_getdents(f->v, fd, buf, 24);
	assert_int_equal(n, 24);
	assert_string_equal(buf + 19, "usr");
	close(fd);

	/* a mem dir listing stays stable while entries are removed during it */
	create_file(f->v, "/tmp/e1", "1");
	create_file(f->v, "/tmp/e2", "2");
	create_file(f->v, "/tmp/e3", "3");
	fd = gofer_open(f->v, "/", "/tmp", O_RDONLY | O_DIRECTORY, 0, NULL);
	assert_true(fd >= 0);
	n = gofer_fd_getdents(f->v, fd, buf, 24 * 3);	/* ".", "..", "e1" */
	assert_int_equal(parse_dirents(buf, n, d, 32), 3);
	assert_string_equal(d[2].name, "e1");
	assert_int_equal(d[2].type, DT_REG);
	assert_int_equal(gofer_unlink(f->v, "/", "/tmp/e1", false, NULL), 0);
	n = gofer_fd_getdents(f->v, fd, buf, sizeof(buf));
	cnt = parse_dirents(buf, n, d, 32);
	assert_int_equal(cnt, 2);
	assert_string_equal(d[0].name, "e2");
	assert_string_equal(d[1].name, "e3");
	close(fd);

	/* a non-directory */
	fd = gofer_open(f->v, "/", "/workspace/input.csv", O_RDONLY, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_getdents(f->v, fd, buf, sizeof(buf)), -ENOTDIR);
	close(fd);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_getdents_bind(void **state)
{
	struct fixture *f = *state;
	struct dent d[32];
	char *names[32];
	char buf[4096];
	ssize_t n;
	int fd, cnt;

	fd = gofer_open(f->v, "/", "/usr/lib", O_RDONLY | O_DIRECTORY, 0, &f->info);
	assert_true(fd >= 0);
	n = gofer_fd_getdents(f->v, fd, buf, sizeof(buf));
	assert_true(n > 0);
	cnt = parse_dirents(buf, n, d, 32);
	assert_int_equal(cnt, 4);
	for (int i = 0; i < cnt; i++)
		names[i] = d[i].name;
	qsort(names, (size_t)cnt, sizeof(names[0]), cmp_str);
	assert_string_equal(names[0], ".");
	assert_string_equal(names[1], "..");
	assert_string_equal(names[2], "data.txt");
	assert_string_equal(names[3], "secret");
	assert_int_equal(gofer_fd_getdents(f->v, fd, buf, sizeof(buf)), 0);
	close(fd);
}

static void test_fd_view_path(void **state)
{
	struct fixture *f = *state;
	char out[4096], buf[64];
	int fd, pfd[2];

	fd = gofer_open(f->v, "/", "/workspace", O_RDONLY | O_DIRECTORY, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), 0);
	assert_string_equal(out, "/workspace");
	close(fd);
	fd = gofer_open(f->v, "/", "/", O_RDONLY | O_DIRECTORY, 0, NULL);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	close(fd);

	fd = gofer_open(f->v, "/", "/workspace/input.csv", O_RDONLY, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), 0);
	assert_string_equal(out, "/workspace/input.csv");
	assert_int_equal(gofer_rename(f->v, "/", "/workspace/input.csv", "/", "/tmp/moved.csv", 0,
				      NULL),
			 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), 0);
	assert_string_equal(out, "/tmp/moved.csv");
	assert_int_equal(gofer_unlink(f->v, "/", "/tmp/moved.csv", false, NULL), 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), -ENOENT);
	/* the open file keeps its bytes after the unlink */
	assert_int_equal(slurp(fd, buf, sizeof(buf)), 8);
	close(fd);

	fd = gofer_open(f->v, "/", "/bin/python3", O_RDONLY, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), 0);
	assert_string_equal(out, "/usr/bin/python3");
	close(fd);
	fd = gofer_open(f->v, "/", "/usr", O_PATH, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), 0);
	assert_string_equal(out, "/usr");
	close(fd);
	fd = gofer_open(f->v, "/", "/dev/null", O_RDWR, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), 0);
	assert_string_equal(out, "/dev/null");
	close(fd);
	fd = gofer_open(f->v, "/", "/etc/passwd", O_RDONLY, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), 0);
	assert_string_equal(out, "/etc/passwd");
	close(fd);

	/* a directory handle outliving its directory */
	assert_int_equal(gofer_mkdir(f->v, "/", "/tmp/gone", 0755, NULL), 0);
	fd = gofer_open(f->v, "/", "/tmp/gone", O_RDONLY | O_DIRECTORY, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_unlink(f->v, "/", "/tmp/gone", true, NULL), 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), -ENOENT);
	assert_int_equal(gofer_fd_getdents(f->v, fd, buf, sizeof(buf)), 0);
	close(fd);

	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(gofer_fd_view_path(f->v, pfd[0], out, sizeof(out)), -EBADF);
	close(pfd[0]);
	close(pfd[1]);
	fd = memfd_create("sandbox-own", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), -EBADF);
	close(fd);
	{
		char p[PATH_MAX];

		hpath(p, sizeof(p), "hosthidden");
		fd = open(p, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(gofer_fd_view_path(f->v, fd, out, sizeof(out)), -EBADF);
		close(fd);
	}
	assert_int_equal(gofer_fd_view_path(f->v, 987, out, sizeof(out)), -EBADF);
}

static void test_fd_stat(void **state)
{
	struct fixture *f = *state;
	struct stat st, pst, hst;
	int fd, pfd[2];

	create_file(f->v, "/workspace/s", "hello\n");
	fd = gofer_open(f->v, "/", "/workspace/s", O_RDWR, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(gofer_fd_stat(f->v, fd, &st), 0);
	assert_int_equal(gofer_stat(f->v, "/", "/workspace/s", false, &pst, NULL), 0);
	assert_int_equal(fstat(fd, &hst), 0);
	assert_int_equal(st.st_ino, pst.st_ino);
	assert_int_equal(st.st_dev, pst.st_dev);
	assert_true(st.st_ino != hst.st_ino || st.st_dev != hst.st_dev);
	assert_int_equal(st.st_mode, S_IFREG | 0644);
	assert_int_equal(st.st_uid, SANDBOX_UID);
	assert_int_equal(st.st_size, 6);
	assert_int_equal(lseek(fd, 0, SEEK_END), 6);
	assert_int_equal(write(fd, "more", 4), 4);
	assert_int_equal(gofer_fd_stat(f->v, fd, &st), 0);
	assert_int_equal(st.st_size, 10);
	close(fd);

	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(gofer_fd_stat(f->v, pfd[0], &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	close(pfd[0]);
	close(pfd[1]);
	assert_int_equal(gofer_fd_stat(f->v, 987, &st), -EBADF);
}

/* --- artifacts -------------------------------------------------------- */

struct seen {
	int n;
	char paths[8][64];
	unsigned char sha[8][32];
	uint64_t size[8];
};

static int collect_cb(const struct gofer_artifact *a, void *opaque)
{
	struct seen *s = opaque;

	if (s->n >= 8)
		return 1;
	snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", a->rel_path);
	memcpy(s->sha[s->n], a->sha256, 32);
	s->size[s->n] = a->size;
	s->n++;
	return 0;
}

static int stop_cb(const struct gofer_artifact *a, void *opaque)
{
	(*(int *)opaque)++;
	return 42;
}

static void test_snapshot(void **state)
{
	struct fixture *f = *state;
	struct pv_error err = { 0 };
	struct seen s = { 0 };
	int calls = 0, fd;

	create_file(f->v, "/workspace/same.txt", "same");
	assert_int_equal(gofer_view_snapshot(f->v, "/workspace", &err), 0);
	assert_int_equal(gofer_view_walk_changed(f->v, "/workspace", collect_cb, &s, &err), 0);
	assert_int_equal(s.n, 0);

	assert_int_equal(gofer_mkdir(f->v, "/", "/workspace/plots", 0755, NULL), 0);
	create_file(f->v, "/workspace/plots/a.png", "hello\n");
	create_file(f->v, "/workspace/plots.txt", "hello\n");
	fd = gofer_open(f->v, "/", "/workspace/input.csv", O_WRONLY | O_APPEND, 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "3,4\n", 4), 4);
	close(fd);
	create_file(f->v, "/workspace/same.txt", "same");	/* rewritten, same bytes */
	assert_int_equal(gofer_view_add_symlink(f->v, "/workspace/link", "same.txt", &err), 0);

	assert_int_equal(gofer_view_walk_changed(f->v, "/workspace", collect_cb, &s, &err), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.paths[0], "input.csv");
	assert_string_equal(s.paths[1], "plots.txt");
	assert_string_equal(s.paths[2], "plots/a.png");
	assert_int_equal(s.size[0], 12);
	assert_int_equal(s.size[2], 6);
	assert_memory_equal(s.sha[1], hello_sha, 32);
	assert_memory_equal(s.sha[2], hello_sha, 32);

	assert_int_equal(gofer_view_walk_changed(f->v, "/workspace", stop_cb, &calls, &err), 42);
	assert_int_equal(calls, 1);

	/* no snapshot of /tmp yet: everything there is new */
	create_file(f->v, "/tmp/t", "hello\n");
	memset(&s, 0, sizeof(s));
	assert_int_equal(gofer_view_walk_changed(f->v, "/tmp", collect_cb, &s, &err), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.paths[0], "t");

	assert_int_equal(gofer_view_snapshot(f->v, "/nope", &err), -ENOENT);
	assert_int_equal(err.code, ENOENT);
	assert_int_equal(gofer_view_snapshot(f->v, "/workspace/input.csv", &err), -ENOTDIR);
}

/* --- building --------------------------------------------------------- */

static void test_builder_errors(void **state)
{
	struct fixture *f = *state;
	struct pv_error err = { 0 };
	char p[PATH_MAX];

	hpath(p, sizeof(p), "does-not-exist");
	assert_int_equal(gofer_view_bind_host(f->v, p, "/opt", &err), -ENOENT);
	assert_int_equal(err.code, ENOENT);
	assert_non_null(strstr(err.msg, "does-not-exist"));
	hpath(p, sizeof(p), "usr");
	assert_int_equal(gofer_view_bind_host(f->v, p, "/usr", &err), -EEXIST);
	assert_int_equal(gofer_view_add_mem_dir(f->v, "/a//b", 0755, &err), -EINVAL);
	assert_int_equal(gofer_view_add_mem_dir(f->v, "/a/./b", 0755, &err), -EINVAL);
	assert_int_equal(gofer_view_add_mem_dir(f->v, "/a/", 0755, &err), -EINVAL);
	assert_int_equal(gofer_view_add_mem_dir(f->v, "rel", 0755, &err), -EINVAL);
	assert_int_equal(gofer_view_add_mem_dir(f->v, "/", 0755, &err), -EEXIST);
	assert_int_equal(gofer_view_add_mem_dir(f->v, "/usr/x", 0755, &err), -ENOTDIR);
	hpath(p, sizeof(p), "hosthidden");
	assert_int_equal(gofer_view_add_device(f->v, p, "/dev/x", &err), -EINVAL);
	assert_int_equal(gofer_view_add_symlink(f->v, "/l", "", &err), -EINVAL);
	/* a nested mount point inside a mem tree cannot be removed */
	assert_int_equal(gofer_view_add_mem_dir(f->v, "/workspace/cache", 0755, &err), 0);
	assert_int_equal(gofer_unlink(f->v, "/", "/workspace/cache", true, NULL), -EBUSY);
	/* skeleton parents are created hidden */
	{
		struct gofer_lookup_info info;
		struct stat st;

		assert_int_equal(gofer_view_add_synth_file(f->v, "/opt/x/y", "y", 1, &err), 0);
		assert_int_equal(gofer_stat(f->v, "/", "/opt/x/z", false, &st, &info), -ENOENT);
		assert_true(info.hidden);
		assert_int_equal(gofer_stat(f->v, "/", "/opt/x", false, &st, &info), 0);
		assert_int_equal(st.st_mode, S_IFDIR | 0755);
		assert_int_equal(st.st_uid, 0);
	}
}

/* The openat2 fast path is used when the supervisor has the sandbox's uid. */
static void test_fast_path(void **state)
{
	struct gofer_view *v = build_view(geteuid(), getegid());
	struct gofer_lookup_info info;
	struct stat st;
	int fd;

	assert_int_equal(gofer_stat(v, "/", "/usr/lib/data.txt", false, &st, &info), 0);
	assert_int_equal(st.st_size, 6);
	assert_string_equal(info.view_path, "/usr/lib/data.txt");
	assert_int_equal(gofer_stat(v, "/", "/usr/./lib//data.txt", false, &st, &info), 0);
	assert_string_equal(info.view_path, "/usr/lib/data.txt");
	assert_int_equal(gofer_stat(v, "/", "/usr/escape", false, &st, &info), 0);
	assert_string_equal(info.view_path, "/etc/passwd");
	assert_int_equal(gofer_stat(v, "/", "/usr/abs", false, &st, &info), -ENOENT);
	assert_int_equal(gofer_stat(v, "/", "/usr/libdir/data.txt", false, &st, &info), 0);
	assert_string_equal(info.view_path, "/usr/lib/data.txt");
	assert_int_equal(gofer_stat(v, "/", "/usr/rel", true, &st, &info), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(gofer_stat(v, "/", "/usr/nope/x", false, &st, &info), -ENOENT);
	assert_false(info.hidden);
	assert_int_equal(gofer_stat(v, "/", "/usr/lib/data.txt/x", false, &st, &info), -ENOTDIR);
	assert_int_equal(gofer_stat(v, "/", "/usr/loop1", false, &st, &info), -ELOOP);
	fd = gofer_open(v, "/", "/usr/lib/data.txt", O_RDONLY, 0, &info);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(gofer_open(v, "/", "/usr/lib/data.txt", O_WRONLY, 0, &info), -EROFS);
	gofer_view_free(v);
}

/* --- metadata, links, quota, /proc ------------------------------------ */

static void test_links_and_meta(void **state)
{
	struct fixture *f = *state;
	struct gofer_view *v = f->v;
	struct stat a, b;
	int fd;

	create_file(v, "/workspace/f", "hello\n");
	assert_int_equal(gofer_link(v, "/", "/workspace/f", "/", "/workspace/h", false, &f->info), 0);
	assert_int_equal(gofer_stat(v, "/", "/workspace/f", false, &a, &f->info), 0);
	assert_int_equal(gofer_stat(v, "/", "/workspace/h", false, &b, &f->info), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_nlink, 2);
	assert_int_equal(gofer_link(v, "/", "/workspace/f", "/", "/workspace/h", false, &f->info),
			 -EEXIST);
	assert_int_equal(gofer_link(v, "/", "/workspace", "/", "/workspace/d2", false, &f->info),
			 -EPERM);
	assert_int_equal(gofer_link(v, "/", "/usr/lib/data.txt", "/", "/workspace/x", false,
				    &f->info), -EXDEV);
	/* chmod through one name shows through the other */
	assert_int_equal(gofer_setattr(v, "/", "/workspace/h", false, 0600, (uid_t)-1, (gid_t)-1,
				       &f->info), 0);
	assert_int_equal(gofer_stat(v, "/", "/workspace/f", false, &a, &f->info), 0);
	assert_int_equal(a.st_mode, S_IFREG | 0600);
	/* ownership: no change to another uid, EROFS on the host, EPERM on root's */
	assert_int_equal(gofer_setattr(v, "/", "/workspace/f", false, (mode_t)-1, 0, (gid_t)-1,
				       &f->info), -EPERM);
	assert_int_equal(gofer_setattr(v, "/", "/usr/lib/data.txt", false, 0777, (uid_t)-1,
				       (gid_t)-1, &f->info), -EROFS);
	assert_int_equal(gofer_setattr(v, "/", "/etc/passwd", false, 0777, (uid_t)-1, (gid_t)-1,
				       &f->info), -EPERM);
	/* the last name gone: an open fd reports nlink 0 and keeps the mode */
	fd = gofer_open(v, "/", "/workspace/f", O_RDONLY, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(gofer_unlink(v, "/", "/workspace/h", false, &f->info), 0);
	assert_int_equal(gofer_fd_stat(v, fd, &a), 0);
	assert_int_equal(a.st_nlink, 1);
	assert_int_equal(gofer_unlink(v, "/", "/workspace/f", false, &f->info), 0);
	assert_int_equal(gofer_fd_stat(v, fd, &a), 0);
	assert_int_equal(a.st_nlink, 0);
	assert_int_equal(a.st_mode, S_IFREG | 0600);
	close(fd);
	/* symlink, truncate, mknod, xattr */
	assert_int_equal(gofer_symlink(v, "target", "/", "/workspace/s", &f->info), 0);
	assert_int_equal(gofer_symlink(v, "target", "/", "/workspace/s", &f->info), -EEXIST);
	assert_int_equal(gofer_symlink(v, "target", "/", "/usr/lib/s", &f->info), -EROFS);
	create_file(v, "/workspace/t", "0123456789");
	assert_int_equal(gofer_truncate(v, "/", "/workspace/t", 3, &f->info), 0);
	assert_int_equal(gofer_stat(v, "/", "/workspace/t", false, &a, &f->info), 0);
	assert_int_equal(a.st_size, 3);
	assert_int_equal(gofer_truncate(v, "/", "/workspace", 0, &f->info), -EISDIR);
	assert_int_equal(gofer_truncate(v, "/", "/dev/null", 0, &f->info), -EINVAL);
	assert_int_equal(gofer_truncate(v, "/", "/workspace/t", -1, &f->info), -EINVAL);
	assert_int_equal(gofer_mknod(v, "/", "/workspace/m", S_IFREG | 0640, 0, &f->info), 0);
	assert_int_equal(gofer_mknod(v, "/", "/workspace/c", S_IFCHR | 0640, 0, &f->info), -EPERM);
	assert_int_equal(gofer_xattr(v, "/", "/workspace/t", false, 's', "user.a", "1", 1, 0,
				     &f->info), -EOPNOTSUPP);
	assert_int_equal(gofer_xattr(v, "/", "/workspace/t", false, 'g', "trusted.a", NULL, 0, 0,
				     &f->info), -ENODATA);
	assert_int_equal(gofer_xattr(v, "/", "/workspace/t", false, 'g', "", NULL, 0, 0,
				     &f->info), -ERANGE);
	assert_int_equal(gofer_xattr(v, "/", "/workspace/t", false, 'l', NULL, NULL, 0, 0,
				     &f->info), 0);
}

static void test_quota_store(void **state)
{
	struct gofer_config cfg = { .uid = geteuid(), .gid = getegid(),
				    .quota_bytes = 64 * 1024, .quota_files = 3 };
	struct pv_error err = { 0 };
	struct gofer_view *v = gofer_view_new(&cfg, &err);
	char block[4096];
	ssize_t n = 0, total = 0;
	int fd;

	(void)state;
	if (!v) {
		/* No unprivileged user namespaces here: the CLI refuses to run. */
		skip();
	}
	assert_int_equal(gofer_view_add_mem_dir(v, "/workspace", 0755, &err), 0);
	fd = gofer_open(v, "/", "/workspace/big", O_CREAT | O_WRONLY, 0644, NULL);
	assert_true(fd >= 0);
	memset(block, 'x', sizeof(block));
	while ((n = write(fd, block, sizeof(block))) > 0)
		total += n;
	assert_int_equal(n, -1);
	assert_int_equal(errno, ENOSPC);
	assert_true(total <= 64 * 1024 && total >= 60 * 1024);
	close(fd);
	assert_int_equal(gofer_mkdir(v, "/", "/workspace/d", 0755, NULL), 0);
	assert_int_equal(gofer_symlink(v, "x", "/", "/workspace/s", NULL), 0);
	assert_int_equal(gofer_open(v, "/", "/workspace/one-more", O_CREAT | O_WRONLY, 0644, NULL),
			 -ENOSPC);
	assert_int_equal(gofer_mkdir(v, "/", "/workspace/d2", 0755, NULL), -ENOSPC);
	assert_int_equal(gofer_unlink(v, "/", "/workspace/s", false, NULL), 0);
	assert_int_equal(gofer_mkdir(v, "/", "/workspace/d2", 0755, NULL), 0);
	gofer_view_free(v);
}

static int fake_refresh(void *opaque, struct gofer_view *v)
{
	int *calls = opaque;

	(*calls)++;
	gofer_proc_reset(v);
	if (gofer_proc_add_symlink(v, "self", "42", false) < 0 || gofer_proc_add_dir(v, "42") < 0 ||
	    gofer_proc_add_file(v, "42/status", "Name:\tx\n", 8, false) < 0)
		return -ENOMEM;
	{
		int p[2], rc;

		if (pipe2(p, O_CLOEXEC) < 0)
			return -errno;
		rc = gofer_proc_add_fd(v, "42/fd/0", p[0], "pipe:[1]");
		close(p[1]);
		return rc;
	}
}

static void test_proc_provider(void **state)
{
	static const struct gofer_proc_provider prov = { .refresh = fake_refresh };
	struct fixture *f = *state;
	struct pv_error err = { 0 };
	char buf[64];
	int calls = 0, fd;
	ssize_t n;

	assert_int_equal(gofer_view_set_proc(f->v, &prov, &calls, &err), 0);
	fd = gofer_open(f->v, "/", "/proc/self/status", O_RDONLY, 0, &f->info);
	assert_true(fd >= 0);
	assert_int_equal(slurp(fd, buf, sizeof(buf)), 8);
	assert_string_equal(buf, "Name:\tx\n");
	close(fd);
	assert_int_equal(calls, 1);
	assert_int_equal(gofer_open(f->v, "/", "/proc/self/status", O_WRONLY, 0, &f->info),
			 -EACCES);
	assert_int_equal(gofer_open(f->v, "/", "/proc/7/status", O_RDONLY, 0, &f->info), -ENOENT);
	assert_true(f->info.hidden);
	n = gofer_readlink(f->v, "/", "/proc/self/fd/0", buf, sizeof(buf), &f->info);
	assert_int_equal(n, 8);
	assert_memory_equal(buf, "pipe:[1]", 8);
	assert_int_equal(gofer_open(f->v, "/", "/proc/self/fd/0/x", O_RDONLY, 0, &f->info),
			 -ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lookup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hidden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks_stay_in_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loops_and_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_erofs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skeleton_eacces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permissions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_creat_excl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trunc_append, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_unlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getdents_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getdents_bind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_view_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_stat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_builder_errors, setup, teardown),
		cmocka_unit_test(test_fast_path),
		cmocka_unit_test_setup_teardown(test_links_and_meta, setup, teardown),
		cmocka_unit_test(test_quota_store),
		cmocka_unit_test_setup_teardown(test_proc_provider, setup, teardown),
	};

	return cmocka_run_group_tests_name("gofer", tests, group_setup, group_teardown);
}
