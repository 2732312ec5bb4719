/*
 * limits.c - resource limits of a run: defaults, whole-run accounting and
 * the result's `limits` object (docs/limits.md).
 *
 * Two layers, both outside the sandbox (DESIGN.md invariant 7):
 *
 *  - the kernel, per task: the loader sets RLIMIT_DATA (so an allocation
 *    fails inside and Python raises MemoryError), RLIMIT_CPU
 *    (SIGXCPU, then SIGKILL one second later), RLIMIT_NPROC (fork/clone
 *    fail with EAGAIN), RLIMIT_NOFILE (EMFILE, also for fds the sentry
 *    injects: the ADDFD is completed by the target task against its own
 *    limit) and RLIMIT_FSIZE (EFBIG; Python ignores SIGXFSZ);
 *
 *  - the supervisor, per run: every SAMPLE_MS it walks /proc once, finds
 *    every process descending from it (the supervisor is the run's child
 *    subreaper, so orphans stay descendants), and sums memory and CPU.  When
 *    the sum crosses --memory or --cpu-seconds the caller kills the whole
 *    run and reports memory_limit or cpu_limit.
 *
 * Memory counted for the run: RssAnon + RssShmem of /proc/PID/status of
 * each process (anonymous and shared-memory pages it has mapped; page cache
 * of host files it reads is not counted), plus the blocks of every memfd
 * some process of the run holds open, or the supervisor holds for the
 * view's in-memory files (once per file): bytes written to a memfd that
 * nobody maps appear in no RSS, and the workspace lives in memory.  Copy-on-write pages shared
 * after fork, and memfds both held and mapped, are counted more than once,
 * which over-counts, never under-counts (docs/limits.md states the exact
 * guarantee).
 *
 * CPU of the run: user + system time of the live processes (their own and
 * that of their waited-for children: utime, stime, cutime, cstime) plus the
 * supervisor's RUSAGE_CHILDREN growth since the run started (the processes
 * it reaped, with their waited-for descendants).
 */
#include "sentry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define MIB (1024ULL * 1024ULL)

/* Defaults of `pyvisor run` (docs/limits.md). */
#define DEFAULT_MEMORY (2048 * MIB)
#define DEFAULT_CPU_MS (60 * 1000ULL)
#define DEFAULT_PROCS 256
#define DEFAULT_NOFILE 1024
#define DEFAULT_FSIZE (1024 * MIB)

struct proc_row {
	pid_t pid, ppid;
	uint64_t cpu_ticks;	/* utime + stime + cutime + cstime */
	uint64_t threads;
	bool mark;		/* descends from the supervisor */
};

struct limits_state {
	uint64_t children_base_ms;	/* RUSAGE_CHILDREN at the start */
	long ticks_per_s;
	struct proc_row *rows;
	size_t cap;
	ino_t *memfd_seen;	/* memfd inodes counted in the current sample */
	dev_t shm_dev;		/* st_dev of every memfd (the kernel's internal shm mount) */
	bool shm_dev_known;
	unsigned int failures;	/* samples in a row that could not read /proc */
};

/* Samples in a row that may fail before the run is ended (fail closed:
 * a run the supervisor cannot account for does not go on). */
#define MAX_FAILED_SAMPLES 3
/* Slots of the memfd inode set (a power of two). */
#define MEMFD_SLOTS 65536

void limits_supervisor_prepare(void)
{
	struct rlimit nofile;

	/* Every workspace file is a memfd the supervisor holds, and artifacts
	 * are collected with one more fd each: a soft limit of 1024 (the
	 * usual default) would cap the workspace at about a thousand files.
	 * The sandbox gets its own, explicit RLIMIT_NOFILE from the loader. */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

void limits_defaults(struct sentry_limits *l)
{
	l->memory_bytes = DEFAULT_MEMORY;
	l->cpu_ms = DEFAULT_CPU_MS;
	l->max_procs = DEFAULT_PROCS;
	l->max_open_files = DEFAULT_NOFILE;
	l->max_file_size = DEFAULT_FSIZE;
}

static uint64_t children_cpu_ms(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		return 0;
	return (uint64_t)ru.ru_utime.tv_sec * 1000 + (uint64_t)ru.ru_utime.tv_usec / 1000 +
	       (uint64_t)ru.ru_stime.tv_sec * 1000 + (uint64_t)ru.ru_stime.tv_usec / 1000;
}

int limits_start(struct sentry *s)
{
	struct limits_state *st = calloc(1, sizeof(*st));
	_cleanup_close_ int probe = -1;
	struct stat sb;

	if (!st)
		return -ENOMEM;
	st->memfd_seen = calloc(MEMFD_SLOTS, sizeof(*st->memfd_seen));
	if (!st->memfd_seen) {
		free(st);
		return -ENOMEM;
	}
	/* Every memfd lives on the kernel's internal shm mount: learn its
	 * device number from one of our own, by trying. */
	probe = memfd_create("pyvisor-limits", MFD_CLOEXEC);
	if (probe >= 0 && fstat(probe, &sb) == 0) {
		st->shm_dev = sb.st_dev;
		st->shm_dev_known = true;
	}
	st->children_base_ms = children_cpu_ms();
	st->ticks_per_s = sysconf(_SC_CLK_TCK);
	if (st->ticks_per_s <= 0)
		st->ticks_per_s = 100;
	s->limits = st;
	return 0;
}

/* Read a small /proc file into @buf (NUL-terminated).  Returns its length
 * or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* Parse /proc/PID/stat: ppid (field 4), utime..cstime (14-17),
 * num_threads (20).  The command name (field 2) may hold spaces and ')'. */
static int parse_stat(pid_t pid, struct proc_row *row)
{
	char path[64], buf[1024];
	unsigned long long f[20];
	char *p;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -ESRCH;
	p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	/* After ") ": state ppid pgrp session tty_nr tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime priority nice
	 * num_threads */
	if (sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %llu %llu %llu %llu %llu %llu %llu %llu "
			  "%llu %llu %llu",
		   &ppid, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9],
		   &f[10]) != 12)
		return -EIO;
	row->pid = pid;
	row->ppid = ppid;
	row->cpu_ticks = f[4] + f[5] + f[6] + f[7];
	row->threads = f[10];
	return 0;
}

/* RssAnon + RssShmem of @pid in bytes. */
static uint64_t proc_memory(pid_t pid)
{
	char path[64], buf[4096];
	unsigned long long anon = 0, shmem = 0;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "\nRssAnon:");
	if (p)
		sscanf(p + 9, "%llu", &anon);
	p = strstr(buf, "\nRssShmem:");
	if (p)
		sscanf(p + 10, "%llu", &shmem);
	return (anon + shmem) * 1024;
}

/* Add @ino to the set of memfds counted in this sample; false if it was
 * there already. */
static bool memfd_first_seen(struct limits_state *st, ino_t ino)
{
	size_t mask = MEMFD_SLOTS - 1, h = (size_t)ino * 0x9e3779b97f4a7c15ULL;

	for (size_t i = 0; i <= mask; i++) {
		size_t k = (h + i) & mask;

		if (st->memfd_seen[k] == ino)
			return false;
		if (st->memfd_seen[k] == 0) {
			st->memfd_seen[k] = ino;
			return true;
		}
	}
	return true; /* set full: count it (over-count, never under-count) */
}

/* Count the open fds in @fd_dir (/proc/PID/fd), and add to *@memfd_bytes
 * the memory held by memfds among them (each file once per sample,
 * whoever holds it): bytes written to a memfd that no process maps are in
 * no RSS figure.  A memfd is recognised by its device (the internal shm
 * mount), not by its name, which the sandbox chooses. */
static uint64_t proc_fds(struct limits_state *st, const char *fd_dir, uint64_t *memfd_bytes)
{
	struct dirent *de;
	uint64_t n = 0;
	DIR *d;

	d = opendir(fd_dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat sb;

		if (de->d_name[0] == '.')
			continue;
		n++;
		if (st->shm_dev_known && fstatat(dirfd(d), de->d_name, &sb, 0) == 0 &&
		    sb.st_dev == st->shm_dev && S_ISREG(sb.st_mode) &&
		    memfd_first_seen(st, sb.st_ino))
			*memfd_bytes += (uint64_t)sb.st_blocks * 512;
	}
	closedir(d);
	return n;
}

/* Memory the view holds for the run: the memfds of the supervisor (the
 * in-memory files without a quota store), plus what is stored on the run's
 * private tmpfs under a disk quota (docs/quotas.md), each counted once.
 * The memfd set of the current sample must have been cleared. */
static uint64_t view_memory(struct sentry *s)
{
	uint64_t mem = 0;

	proc_fds(s->limits, "/proc/self/fd", &mem);
	if (s->view) {
		struct statfs sf;

		gofer_view_statfs(s->view, &sf);
		if (sf.f_blocks > sf.f_bfree)
			mem += (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
	}
	return mem;
}

enum sentry_status limits_sample(struct sentry *s)
{
	struct limits_state *st = s->limits;
	const struct sentry_limits *lim = &s->cfg->limits;
	struct sentry_usage *u = &s->outcome->usage;
	uint64_t mem = 0, tasks = 0, ticks = 0, fds_max = 0, cpu;
	pid_t self = getpid();
	struct dirent *de;
	size_t n = 0;
	bool grew;
	DIR *d;

	if (!st)
		return SENTRY_STATUS_OK;
	d = opendir("/proc");
	if (!d) {
		/* EMFILE, ENOMEM: the sandbox may be exhausting our fds to
		 * blind the accounting. */
		return ++st->failures >= MAX_FAILED_SAMPLES ? SENTRY_STATUS_KILLED
							    : SENTRY_STATUS_OK;
	}
	st->failures = 0;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (pid <= 0 || *end)
			continue;
		if (n == st->cap) {
			size_t cap = st->cap ? st->cap * 2 : 256;
			struct proc_row *rows = realloc(st->rows, cap * sizeof(*rows));

			if (!rows)
				break;
			st->rows = rows;
			st->cap = cap;
		}
		if (parse_stat((pid_t)pid, &st->rows[n]) == 0) {
			st->rows[n].mark = false;
			n++;
		}
	}
	closedir(d);

	/* Mark the descendants of the supervisor: repeat until no row is
	 * added (one pass per generation). */
	do {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			if (st->rows[i].mark)
				continue;
			if (st->rows[i].ppid == self) {
				st->rows[i].mark = grew = true;
				continue;
			}
			for (size_t j = 0; j < n; j++) {
				if (st->rows[j].mark && st->rows[j].pid == st->rows[i].ppid) {
					st->rows[i].mark = grew = true;
					break;
				}
			}
		}
	} while (grew);

	memset(st->memfd_seen, 0, MEMFD_SLOTS * sizeof(*st->memfd_seen));
	/* The view's in-memory files (workspace, /tmp, home) are memfds the
	 * supervisor holds: what the sandbox stored there is its memory too. */
	mem += view_memory(s);
	for (size_t i = 0; i < n; i++) {
		char fd_dir[64];
		uint64_t fds;

		if (!st->rows[i].mark)
			continue;
		mem += proc_memory(st->rows[i].pid);
		tasks += st->rows[i].threads;
		ticks += st->rows[i].cpu_ticks;
		snprintf(fd_dir, sizeof(fd_dir), "/proc/%d/fd", st->rows[i].pid);
		fds = proc_fds(st, fd_dir, &mem);
		if (fds > fds_max)
			fds_max = fds;
	}
	cpu = ticks * 1000 / (uint64_t)st->ticks_per_s;
	cpu += children_cpu_ms() - st->children_base_ms;

	u->samples++;
	u->memory_now = mem;
	if (mem > u->memory_peak)
		u->memory_peak = mem;
	if (tasks > u->tasks_peak)
		u->tasks_peak = tasks;
	if (fds_max > u->fds_peak)
		u->fds_peak = fds_max;
	/* CPU only grows; a sample racing a reap may see less. */
	if (cpu > u->cpu_ms)
		u->cpu_ms = cpu;

	if (lim->memory_bytes && mem > lim->memory_bytes)
		return SENTRY_STATUS_MEMORY_LIMIT;
	if (lim->cpu_ms && u->cpu_ms >= lim->cpu_ms)
		return SENTRY_STATUS_CPU_LIMIT;
	return SENTRY_STATUS_OK;
}

enum sentry_status limits_stop(struct sentry *s)
{
	struct limits_state *st = s->limits;
	enum sentry_status verdict = SENTRY_STATUS_OK;
	uint64_t cpu, view = 0;
	struct rusage ru;

	if (!st)
		return SENTRY_STATUS_OK;
	/* What the run left in the view's memory: a burst of writes at the
	 * end of a run can fall between two samples. */
	memset(st->memfd_seen, 0, MEMFD_SLOTS * sizeof(*st->memfd_seen));
	view = view_memory(s);
	if (view > s->outcome->usage.memory_peak)
		s->outcome->usage.memory_peak = view;
	if (s->cfg->limits.memory_bytes && view > s->cfg->limits.memory_bytes)
		verdict = SENTRY_STATUS_MEMORY_LIMIT;
	/* Every process is gone and reaped: RUSAGE_CHILDREN holds them all. */
	cpu = children_cpu_ms() - st->children_base_ms;
	if (cpu > s->outcome->usage.cpu_ms)
		s->outcome->usage.cpu_ms = cpu;
	/* A run shorter than one sample period: the largest peak RSS of a
	 * reaped process (getrusage(2) ru_maxrss, KiB) is a lower bound. */
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0 &&
	    (uint64_t)ru.ru_maxrss * 1024 > s->outcome->usage.memory_peak)
		s->outcome->usage.memory_peak = (uint64_t)ru.ru_maxrss * 1024;
	free(st->rows);
	free(st->memfd_seen);
	free(st);
	s->limits = NULL;
	return verdict;
}

uint64_t limits_memory_total(const struct sentry *s)
{
	return s->cfg->limits.memory_bytes;
}

uint64_t limits_memory_used(const struct sentry *s)
{
	return s->outcome ? s->outcome->usage.memory_now : 0;
}

const char *limits_status_name(enum sentry_status st)
{
	switch (st) {
	case SENTRY_STATUS_OK:
		return "ok";
	case SENTRY_STATUS_ERROR:
		return "error";
	case SENTRY_STATUS_TIMEOUT:
		return "timeout";
	case SENTRY_STATUS_KILLED:
		return "killed";
	case SENTRY_STATUS_MEMORY_LIMIT:
		return "memory_limit";
	case SENTRY_STATUS_CPU_LIMIT:
		return "cpu_limit";
	}
	return "error";
}

/* {"limit": N or null, "peak": M} */
static json_t *entry(uint64_t limit, uint64_t used)
{
	return json_pack("{s:o,s:I}", "limit", limit ? json_integer((json_int_t)limit) : json_null(),
			 "peak", (json_int_t)used);
}

json_t *limits_json(const struct sentry_config *cfg, const struct sentry_outcome *o,
		    uint64_t largest_file)
{
	const struct sentry_limits *l = &cfg->limits;
	const struct sentry_usage *u = &o->usage;

	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
			 "memory_bytes", entry(l->memory_bytes, u->memory_peak),
			 "cpu_ms", entry(l->cpu_ms, u->cpu_ms),
			 "wall_ms", entry((uint64_t)(cfg->timeout_s * 1000.0), o->duration_ms),
			 "tasks", entry(l->max_procs, u->tasks_peak),
			 "open_files", entry(l->max_open_files, u->fds_peak),
			 "file_size_bytes", entry(l->max_file_size, largest_file),
			 "stdout_bytes", entry(cfg->max_output, o->out.total),
			 "stderr_bytes", entry(cfg->max_output, o->err.total));
}
