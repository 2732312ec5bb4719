/*
 * test_limits.c - the supervisor's whole-run accounting (sentry/limits.c)
 * on real child processes, without a sandbox: memory (anonymous pages and
 * memfds, each memfd once), tasks, fds, CPU, the verdicts, and the result's
 * `limits` object.  A child names itself like an attacker would, with ')'
 * and spaces in its command name, to exercise the /proc/PID/stat parser.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sentry.h"

#define MIB (1024ULL * 1024ULL)

/* A child that maps and touches @anon_mib of anonymous memory, holds a
 * memfd of @memfd_mib (and a second fd on the same memfd), then forks a
 * grandchild that holds the same memfd, signals ready on @w and sleeps. */
static pid_t holder(int anon_mib, int memfd_mib, int w)
{
	pid_t pid = fork();
	char chunk[65536];
	char *p;
	int fd;

	if (pid != 0)
		return pid;
	/* Own process group: the test kills both processes with one kill. */
	setpgid(0, 0);
	prctl(PR_SET_NAME, "x) 1 2 (y", 0, 0, 0);
	p = mmap(NULL, (size_t)anon_mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	fd = memfd_create("pv-test", 0);
	if (p == MAP_FAILED || fd < 0)
		_exit(1);
	memset(p, 1, (size_t)anon_mib * MIB);
	memset(chunk, 2, sizeof(chunk));
	for (int i = 0; i < memfd_mib * 16; i++)
		if (write(fd, chunk, sizeof(chunk)) != sizeof(chunk))
			_exit(2);
	if (dup(fd) < 0)
		_exit(3);
	if (fork() == 0) {
		pause();
		_exit(0);
	}
	if (write(w, "r", 1) != 1)
		_exit(4);
	pause();
	_exit(0);
}

static void accounting(void **state)
{
	struct sentry_config cfg = { .timeout_s = 10, .max_output = 100 };
	struct sentry_outcome o = { 0 };
	struct sentry s = { .cfg = &cfg, .outcome = &o };
	char c, chunk[65536] = { 0 };
	int p[2], view;
	pid_t pid;

	limits_defaults(&cfg.limits);
	/* The grandchild is reparented to us when its parent dies: reap it. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(pipe(p), 0);
	pid = holder(40, 24, p[1]);
	assert_true(pid > 0);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(limits_start(&s), 0);
	/* A memfd of the supervisor itself, like the view's in-memory files. */
	view = memfd_create("view-file", MFD_CLOEXEC);
	assert_true(view >= 0);
	assert_int_equal(ftruncate(view, 0), 0);
	for (int i = 0; i < 8 * 16; i++)
		assert_int_equal(write(view, chunk, sizeof(chunk)), sizeof(chunk));

	assert_int_equal(limits_sample(&s), SENTRY_STATUS_OK);
	/* 40 MiB anonymous + 24 MiB memfd counted once although three fds in
	 * two processes hold it + 8 MiB in our own memfd; the fork shares the
	 * 40 MiB copy-on-write and is counted again (over-count, never
	 * under-count). */
	assert_true(o.usage.memory_now >= 72 * MIB);
	assert_true(o.usage.memory_now < 72 * MIB + 40 * MIB + 32 * MIB);
	assert_int_equal(o.usage.tasks_peak, 2);
	assert_true(o.usage.fds_peak >= 5);
	assert_int_equal(limits_memory_used(&s), o.usage.memory_now);
	assert_int_equal(limits_memory_total(&s), cfg.limits.memory_bytes);

	cfg.limits.memory_bytes = 32 * MIB;
	assert_int_equal(limits_sample(&s), SENTRY_STATUS_MEMORY_LIMIT);
	cfg.limits.memory_bytes = 0;
	assert_int_equal(limits_sample(&s), SENTRY_STATUS_OK);

	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	close(p[0]);
	close(p[1]);
	/* Final accounting: the view (our memfd) alone is over 4 MiB. */
	cfg.limits.memory_bytes = 4 * MIB;
	assert_int_equal(limits_stop(&s), SENTRY_STATUS_MEMORY_LIMIT);
	assert_null(s.limits);
	assert_true(o.usage.memory_peak >= 72 * MIB);
	close(view);
}

static void cpu_verdict(void **state)
{
	struct sentry_config cfg = { .timeout_s = 10 };
	struct sentry_outcome o = { 0 };
	struct sentry s = { .cfg = &cfg, .outcome = &o };
	struct timespec t0, t;
	pid_t pid;

	limits_defaults(&cfg.limits);
	cfg.limits.cpu_ms = 200;
	assert_int_equal(limits_start(&s), 0);
	pid = fork();
	if (pid == 0) {
		for (;;)
			;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		enum sentry_status st = limits_sample(&s);

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (st == SENTRY_STATUS_CPU_LIMIT || t.tv_sec - t0.tv_sec > 20)
			break;
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_true(o.usage.cpu_ms >= 200);
	limits_stop(&s);
	/* The reaped child's CPU is in RUSAGE_CHILDREN now. */
	assert_true(o.usage.cpu_ms >= 200);
}

/* A supervisor out of fds cannot read /proc: after three failed samples
 * the verdict ends the run instead of going on unaccounted. */
static void fails_closed(void **state)
{
	struct sentry_config cfg = { .timeout_s = 10 };
	struct sentry_outcome o = { 0 };
	struct sentry s = { .cfg = &cfg, .outcome = &o };
	struct rlimit saved, low;
	int fds[512], n = 0;

	limits_defaults(&cfg.limits);
	assert_int_equal(limits_start(&s), 0);
	assert_int_equal(limits_sample(&s), SENTRY_STATUS_OK);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	low = saved;
	low.rlim_cur = 256;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (n < (int)PV_ARRAY_SIZE(fds) && (fds[n] = dup(0)) >= 0)
		n++;
	assert_int_equal(errno, EMFILE);
	assert_int_equal(limits_sample(&s), SENTRY_STATUS_OK);
	assert_int_equal(limits_sample(&s), SENTRY_STATUS_OK);
	assert_int_equal(limits_sample(&s), SENTRY_STATUS_KILLED);
	while (n > 0)
		close(fds[--n]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	assert_int_equal(limits_sample(&s), SENTRY_STATUS_OK);
	limits_stop(&s);
}

static void result_object(void **state)
{
	struct sentry_config cfg = { .timeout_s = 1.5, .max_output = 1000 };
	struct sentry_outcome o = { .duration_ms = 42 };
	json_t *j, *e;

	limits_defaults(&cfg.limits);
	cfg.limits.cpu_ms = 0; /* no limit: null */
	o.usage.memory_peak = 5;
	o.out.total = 7;
	j = limits_json(&cfg, &o, 99);
	assert_non_null(j);
	assert_int_equal(json_object_size(j), 8);
	e = json_object_get(j, "memory_bytes");
	assert_int_equal(json_integer_value(json_object_get(e, "limit")), 2048 * MIB);
	assert_int_equal(json_integer_value(json_object_get(e, "peak")), 5);
	assert_true(json_is_null(json_object_get(json_object_get(j, "cpu_ms"), "limit")));
	e = json_object_get(j, "wall_ms");
	assert_int_equal(json_integer_value(json_object_get(e, "limit")), 1500);
	assert_int_equal(json_integer_value(json_object_get(e, "peak")), 42);
	e = json_object_get(j, "file_size_bytes");
	assert_int_equal(json_integer_value(json_object_get(e, "peak")), 99);
	e = json_object_get(j, "stdout_bytes");
	assert_int_equal(json_integer_value(json_object_get(e, "limit")), 1000);
	assert_int_equal(json_integer_value(json_object_get(e, "peak")), 7);
	json_decref(j);
	assert_string_equal(limits_status_name(SENTRY_STATUS_MEMORY_LIMIT), "memory_limit");
	assert_string_equal(limits_status_name(SENTRY_STATUS_CPU_LIMIT), "cpu_limit");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accounting),
		cmocka_unit_test(cpu_verdict),
		cmocka_unit_test(fails_closed),
		cmocka_unit_test(result_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
