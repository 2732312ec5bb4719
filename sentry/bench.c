/*
 * bench.c - `pyvisor bench perf`: the performance suite (bench/perf.py)
 * started by pyvisor itself, measuring this very binary; `pyvisor bench
 * escapes`: the escape-attempt corpus (bench/escapes/run.py) run against
 * this binary and the other sandboxes installed (docs/escape-scorecard.md).
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
	      "       pyvisor bench escapes [--sandbox NAME] [--case ID] [--json FILE] ...\n"
	      "\n"
	      "Runs the performance suite (" PYVISOR_SOURCE_DIR "/bench/perf.py) against\n"
	      "this pyvisor binary: every workload natively and under pyvisor, runsc,\n"
	      "proot and bwrap (those installed), median of --runs runs after --warmup,\n"
	      "as ratios to native measured in the same invocation.  `pyvisor bench perf\n"
	      "--help` lists every option; docs/performance.md explains the numbers.\n"
	      "\n"
	      "`escapes` runs the escape-attempt corpus (" PYVISOR_SOURCE_DIR "/bench/escapes)\n"
	      "under pyvisor, the plain-python3 control `none`, and runsc, bwrap,\n"
	      "firejail and proot when installed; verdicts come from host-side oracles\n"
	      "(canary files, a loopback listener, a host process, stray processes).\n"
	      "`pyvisor bench escapes --help` lists every option; see\n"
	      "docs/escape-scorecard.md.\n",
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
	if (strcmp(argv[1], "perf") && strcmp(argv[1], "escapes"))
		return pv_error_set(err, EINVAL,
				    "bench: unknown benchmark '%s' (known: perf, escapes)", argv[1]);
	snprintf(script, sizeof(script), "%s/bench/%s", PYVISOR_SOURCE_DIR,
		 strcmp(argv[1], "perf") ? "escapes/run.py" : "perf.py");
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
	if (!strcmp(argv[1], "perf") && access(micro, X_OK) == 0) {
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
