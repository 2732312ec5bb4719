/*
 * rlimit.c - the per-task half of the run's resource limits (see loader.h
 * and sentry/limits.c for the whole-run half).
 *
 * Sources: setrlimit(2) / getrlimit(2) (RLIMIT_DATA, RLIMIT_CPU,
 * RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_FSIZE), signal(7) (SIGXCPU, SIGXFSZ).
 */
#include "loader.h"

#include <errno.h>
#include <sys/resource.h>

#include "sentry.h"

/* Set both values of @res to @v, never above the current hard limit (an
 * unprivileged process cannot raise it, and a lower one already holds). */
static int set_both(int res, rlim_t v)
{
	struct rlimit cur, nl;

	if (getrlimit(res, &cur) < 0)
		return -errno;
	if (cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
		v = cur.rlim_max;
	nl.rlim_cur = v;
	nl.rlim_max = v;
	if (setrlimit(res, &nl) < 0)
		return -errno;
	return 0;
}

int loader_rlimits_apply(const struct sentry_limits *l)
{
	int r = 0;

	/* RLIMIT_DATA, not RLIMIT_AS: RLIMIT_DATA counts the private writable
	 * mappings (heap, anonymous memory, thread stacks), so a big malloc or
	 * numpy array fails with ENOMEM -> MemoryError; RLIMIT_AS would also
	 * count address space that is only reserved (glibc reserves 64 MiB
	 * PROT_NONE per malloc arena), and under --memory 512 a Python
	 * process could start only 14 threads instead of 62. */
	if (l->memory_bytes)
		r = set_both(RLIMIT_DATA, (rlim_t)l->memory_bytes);
	if (r == 0 && l->cpu_ms) {
		/* Soft limit: SIGXCPU at the limit (whole seconds, rounded up);
		 * hard limit one second later: SIGKILL, should the program
		 * catch SIGXCPU.  The supervisor also ends the run when the
		 * run's total CPU crosses the limit. */
		struct rlimit cur, nl;
		rlim_t soft = (rlim_t)((l->cpu_ms + 999) / 1000);

		if (getrlimit(RLIMIT_CPU, &cur) < 0)
			return -errno;
		nl.rlim_cur = soft;
		nl.rlim_max = soft + 1;
		if (cur.rlim_max != RLIM_INFINITY && nl.rlim_max > cur.rlim_max) {
			nl.rlim_max = cur.rlim_max;
			if (nl.rlim_cur > nl.rlim_max)
				nl.rlim_cur = nl.rlim_max;
		}
		if (setrlimit(RLIMIT_CPU, &nl) < 0)
			r = -errno;
	}
	if (r == 0 && l->max_procs)
		r = set_both(RLIMIT_NPROC, (rlim_t)l->max_procs);
	if (r == 0 && l->max_open_files)
		r = set_both(RLIMIT_NOFILE, (rlim_t)l->max_open_files);
	if (r == 0 && l->max_file_size)
		r = set_both(RLIMIT_FSIZE, (rlim_t)l->max_file_size);
	return r;
}
