/*
 * test_landlock.c - the sandbox's Landlock ruleset (loader/landlock.c) and
 * per-task rlimits (loader/rlimit.c), applied to a forked child exactly as
 * the loader applies them, without the seccomp filter: what would happen if
 * a filter or handler bug let a path call reach the kernel.  Live kernel
 * test: skipped (77) when the kernel has no Landlock.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader.h"
#include "sentry.h"

#define PROGRAM "/usr/bin/true"

/* Child exit codes: 0 all as expected, else the number of the check. */
static int restricted_child(int ruleset, int pre_fd)
{
	char buf[16];
	pid_t pid;
	int st, fd;

	if (loader_landlock_apply(ruleset) < 0)
		return 1;
	/* A host file by path: refused even though no filter is loaded. */
	if (open("/etc/passwd", O_RDONLY) >= 0 || errno != EACCES)
		return 2;
	/* Creating, renaming and removing by path: refused. */
	if (open("/tmp/pyvisor-landlock-test", O_WRONLY | O_CREAT, 0600) >= 0 || errno != EACCES)
		return 3;
	if (mkdir("/tmp/pyvisor-landlock-dir", 0700) == 0 || errno != EACCES)
		return 4;
	if (open("/usr/bin", O_RDONLY | O_DIRECTORY) >= 0 || errno != EACCES)
		return 5;
	/* An fd opened before (like an fd the sentry injects) keeps working. */
	if (pread(pre_fd, buf, sizeof(buf), 0) <= 0)
		return 6;
	/* The kernel's exec of the program and its ELF interpreter works (the
	 * loader's exec); the interpreter then cannot open libc by path (in
	 * the sandbox that open is trapped and the sentry injects the fd), so
	 * ld.so exits with 127 instead of exec failing (100). */
	pid = fork();
	if (pid == 0) {
		close(2); /* ld.so's complaint is expected */
		execl(PROGRAM, PROGRAM, (char *)NULL);
		_exit(100);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 127)
		return 7;
	/* Nothing else can be executed. */
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
		_exit(errno == EACCES ? 42 : 43);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 42)
		return 8;
	fd = open(PROGRAM, O_RDONLY);
	if (fd < 0)
		return 9;
	return 0;
}

static void landlock_confines(void **state)
{
	struct pv_error err = { 0 };
	int abi, ruleset, pre, st;
	pid_t pid;

	ruleset = loader_landlock_build(PROGRAM, &abi, &err);
	if (ruleset == -EOPNOTSUPP)
		skip();
	assert_true(ruleset >= 0);
	assert_int_equal(abi, loader_landlock_abi());
	pre = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	assert_true(pre >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(restricted_child(ruleset, pre));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(pre);
	close(ruleset);
	/* The parent (the supervisor) is not restricted. */
	pre = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	assert_true(pre >= 0);
	close(pre);
}

static void landlock_missing_file(void **state)
{
	struct pv_error err = { 0 };
	int abi, r;

	if (loader_landlock_abi() < 1)
		skip();
	r = loader_landlock_build("/nonexistent/pyvisor-program", &abi, &err);
	assert_int_equal(r, -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/pyvisor-program"));
}

static void rlimits_applied(void **state)
{
	struct sentry_limits l = { .memory_bytes = 64 << 20, .cpu_ms = 1500, .max_procs = 7,
				   .max_open_files = 33, .max_file_size = 4096 };
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit r;

		if (loader_rlimits_apply(&l) < 0)
			_exit(1);
		if (getrlimit(RLIMIT_DATA, &r) < 0 || r.rlim_cur != (64 << 20) ||
		    r.rlim_max != (64 << 20))
			_exit(2);
		/* Reserved address space is not limited (loader/rlimit.c). */
		if (getrlimit(RLIMIT_AS, &r) < 0 || r.rlim_cur != RLIM_INFINITY)
			_exit(3);
		if (getrlimit(RLIMIT_CPU, &r) < 0 || r.rlim_cur != 2 || r.rlim_max != 3)
			_exit(4);
		if (getrlimit(RLIMIT_NPROC, &r) < 0 || r.rlim_cur != 7)
			_exit(5);
		if (getrlimit(RLIMIT_NOFILE, &r) < 0 || r.rlim_cur != 33)
			_exit(6);
		if (getrlimit(RLIMIT_FSIZE, &r) < 0 || r.rlim_cur != 4096)
			_exit(7);
		/* Lower than asked stays lower; an unset field is left alone. */
		l.max_open_files = 1000;
		l.memory_bytes = 0;
		if (loader_rlimits_apply(&l) < 0 || getrlimit(RLIMIT_NOFILE, &r) < 0 ||
		    r.rlim_cur != 33 || getrlimit(RLIMIT_DATA, &r) < 0 || r.rlim_cur != (64 << 20))
			_exit(8);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(landlock_confines),
		cmocka_unit_test(landlock_missing_file),
		cmocka_unit_test(rlimits_applied),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
