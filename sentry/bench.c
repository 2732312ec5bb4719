/*
 * bench.c - `pyvisor bench perf`: the performance suite (bench/perf.py)
 * started by pyvisor itself, measuring this very binary.
 *
 * The suite is a Python script in the source tree (PYVISOR_SOURCE_DIR,
 * set by CMake); it runs each workload natively and under every available
 * sandbox and prints a table (and JSON with --json FILE).  See
 * docs/performance.md.
 */
#include "sentry.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PYVISOR_SOURCE_DIR
#define PYVISOR_SOURCE_DIR "."
#endif
#define BENCH_PYTHON "/usr/bin/python3"

static void usage(FILE *f)
{
	fputs("Usage: pyvisor bench perf [--json FILE] [--runs N] [--warmup N]\n"
	      "                          [--workloads A,B] [--sandboxes A,B] [--smoke] ...\n"
	      "\n"
	      "Runs the performance suite (" PYVISOR_SOURCE_DIR "/bench/perf.py) against\n"
	      "this pyvisor binary: every workload natively and under pyvisor, runsc,\n"
	      "proot and bwrap (those installed), median of --runs runs after --warmup,\n"
	      "as ratios to native measured in the same invocation.  `pyvisor bench perf\n"
	      "--help` lists every option; docs/performance.md explains the numbers.\n",
	      f);
}

int bench_cmd_main(int argc, char **argv, struct pv_error *err)
{
	char self[PATH_MAX], micro[PATH_MAX + 32], script[PATH_MAX];
	const char **args;
	ssize_t n;
	int k = 0;

	if (argc < 2)
		return pv_error_set(err, EINVAL, "bench: no benchmark named (see pyvisor bench --help)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "perf"))
		return pv_error_set(err, EINVAL, "bench: unknown benchmark '%s' (known: perf)",
				    argv[1]);
	snprintf(script, sizeof(script), "%s/bench/perf.py", PYVISOR_SOURCE_DIR);
	if (access(script, R_OK) < 0)
		return pv_error_set(err, errno, "bench: %s: %s", script, strerror(errno));
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return pv_error_set(err, errno, "bench: cannot find the pyvisor binary: %s",
				    strerror(errno));
	self[n] = '\0';
	/* The build puts pv-micro in bench/ next to the pyvisor binary. */
	snprintf(micro, sizeof(micro), "%.*s/bench/pv-micro",
		 (int)(strrchr(self, '/') - self), self);
	args = calloc((size_t)argc + 10, sizeof(*args));
	if (!args)
		return pv_error_set(err, ENOMEM, "out of memory");
	args[k++] = BENCH_PYTHON;
	args[k++] = "-E";
	args[k++] = "-s";
	args[k++] = "-B";
	args[k++] = script;
	args[k++] = "--pyvisor";
	args[k++] = self;
	if (access(micro, X_OK) == 0) {
		args[k++] = "--micro";
		args[k++] = micro;
	}
	for (int i = 2; i < argc; i++)
		args[k++] = argv[i];
	args[k] = NULL;
	fflush(NULL);
	execv(BENCH_PYTHON, (char *const *)args);
	pv_error_set(err, errno, "bench: cannot run %s: %s", BENCH_PYTHON, strerror(errno));
	free(args);
	return -1;
}
