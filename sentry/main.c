/*
 * main.c - the pyvisor command line.
 *
 *   pyvisor run [OPTIONS] SCRIPT.py [ARGS...]
 *   pyvisor run [OPTIONS] -- PROGRAM [ARGS...]
 *   pyvisor doctor [--json]
 *
 * Exit status: the program's own; 128+N when it died of signal N; 124 on
 * timeout; 125 when pyvisor itself failed, with one line on stderr saying
 * what and why.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "sentry.h"

#define PYVISOR_VERSION "0.1.0"
#define EXIT_PYVISOR 125
#define EXIT_TIMEOUT 124
#define EXIT_CPU_LIMIT (128 + SIGXCPU)
#define EXIT_MEMORY_LIMIT (128 + SIGKILL)
#define MAX_REQUIRE 16
#define SANDBOX_PYTHON "/usr/bin/python3"
#define SANDBOX_ID_DEFAULT 65534

struct input {
	const char *host;
	char name[NAME_MAX + 1];
};

struct run_opts {
	struct input *inputs;
	size_t ninputs;
	const char *output_dir;
	bool force, json, pass_stdin;
	double timeout_s;
	size_t max_output;
	const char *audit_log;
	uint64_t disk_quota;	/* bytes, 0: none */
	uint64_t max_files;	/* 0: no limit */
	char **mounts;		/* HOST:SANDBOX[:ro] */
	size_t nmounts;
	char **hides;
	size_t nhides;
	const char **allow_exec;
	size_t nallow_exec;
	bool program_mode;
	struct net_policy net;	/* --allow-net, --allow-host, budgets */
	char **rest;	/* SCRIPT ARGS... or PROGRAM ARGS... */
	int nrest;
	struct sentry_limits limits;
	const char *require[MAX_REQUIRE];	/* --require PROTECTION */
	size_t nrequire;
};

static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static _Noreturn void die(const char *fmt, ...)
{
	va_list ap;

	fputs("pyvisor: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_PYVISOR);
}

static void usage_main(FILE *f)
{
	fputs("Usage: pyvisor COMMAND [OPTIONS]\n"
	      "\n"
	      "Run untrusted Python under a user-space syscall interposer, without root.\n"
	      "\n"
	      "Commands:\n"
	      "  run       run a Python script (or a program) in the sandbox\n"
	      "  doctor    show what this machine can enforce (--json for machines)\n"
	      "  bench     run the performance suite or the escape corpus\n"
	      "            (pyvisor bench perf --help, pyvisor bench escapes --help)\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help     show this help\n"
	      "  --version      show the version\n"
	      "\n"
	      "Run options (details: pyvisor run --help):\n"
	      "  --input HOSTPATH[=NAME]  --output-dir DIR  --force  --timeout SECONDS\n"
	      "  --max-output BYTES  --json  --audit-log FILE  --stdin  --memory MIB\n"
	      "  --cpu-seconds S  --max-procs N  --max-open-files N  --max-file-size BYTES\n"
	      "  --require PROTECTION  --allow-exec PROGRAM\n",
	      f);
}

static void usage_run(FILE *f)
{
	fputs("Usage: pyvisor run [OPTIONS] SCRIPT.py [ARGS...]\n"
	      "       pyvisor run [OPTIONS] -- PROGRAM [ARGS...]\n"
	      "\n"
	      "Runs SCRIPT with " SANDBOX_PYTHON " (or PROGRAM, found in the view) inside the\n"
	      "sandbox.  The working directory is the in-memory /workspace, which holds the\n"
	      "script and the inputs; files the program creates or changes there are the\n"
	      "run's artifacts.\n"
	      "\n"
	      "Options:\n"
	      "  --input HOSTPATH[=NAME]  copy a host file into /workspace as NAME (default:\n"
	      "                           its base name); repeatable\n"
	      "  --output-dir DIR         write the artifacts into DIR after the run (created\n"
	      "                           if missing; existing files are not overwritten)\n"
	      "  --force                  overwrite existing files in --output-dir\n"
	      "  --timeout SECONDS        wall-clock limit (default 60)\n"
	      "  --max-output BYTES       bytes kept per output stream (default 1048576)\n"
	      "  --disk-quota SIZE        total bytes of the files the program may create\n"
	      "                           (suffix K, M, G; default 1G; 0: no quota; see\n"
	      "                           docs/quotas.md); more fails with ENOSPC\n"
	      "  --max-files N            files, directories and symlinks the program may\n"
	      "                           create (default 100000; 0: no limit)\n"
	      "  --mount HOST:SANDBOX[:ro|rw]\n"
	      "                           show host path HOST at SANDBOX, read-only (default)\n"
	      "                           or read-write (rw: changes go to the host; only\n"
	      "                           when pyvisor does not run as root); repeatable\n"
	      "  --hide PATH              remove PATH of the default view (repeatable)\n"
	      "  --json                   print one JSON result object instead of the\n"
	      "                           program's output (see docs/result.md)\n"
	      "  --audit-log FILE         append audit events as JSON Lines to FILE\n"
	      "  --stdin                  give the program pyvisor's stdin (default /dev/null)\n"
	      "\n"
	      "Network (docs/network.md; default: no egress, private loopback):\n"
	      "  --allow-net CIDR:PORT[/tcp]   allow TCP connections to CIDR on PORT ('*': any\n"
	      "                                port), e.g. 10.0.0.0/8:443; repeatable\n"
	      "  --allow-host NAME[:PORT]      resolve NAME now, allow its addresses on PORT\n"
	      "                                (default 443), serve NAME in /etc/hosts\n"
	      "  --allow-host NAME=ADDR:PORT   the same with NAME pinned to ADDR\n"
	      "  --net-max-connections N       egress connections allowed per run\n"
	      "  --net-max-bytes BYTES         egress bytes sent per run; connections end\n"
	      "                                when it is exceeded\n"
	      "Limits (docs/limits.md; the result's `limits` object shows use and peaks):\n"
	      "  --memory MIB             memory of the whole sandbox (default 2048); an\n"
	      "                           allocation beyond it fails inside (MemoryError), a\n"
	      "                           run beyond it ends with status memory_limit\n"
	      "  --cpu-seconds S          CPU time of the whole run (default 60): status\n"
	      "                           cpu_limit\n"
	      "  --max-procs N            tasks (processes and threads) at once (default 256):\n"
	      "                           fork/clone fail with EAGAIN\n"
	      "  --max-open-files N       fds per process (default 1024): EMFILE\n"
	      "  --max-file-size BYTES    size of one file (default 1073741824; K, M, G\n"
	      "                           suffixes): EFBIG\n"
	      "  --require PROTECTION     refuse to run unless this machine can give it\n"
	      "                           (landlock, userns, pidns, netns, ptrace, cgroup,\n"
	      "                           ...: see pyvisor doctor); repeatable\n"
	      "  --allow-exec PROGRAM     let the sandbox exec PROGRAM (a name found in the\n"
	      "                           view's PATH or a view path of a read-only host file)\n"
	      "                           besides the default list; repeatable\n"
	      "  -h, --help               show this help\n"
	      "\n"
	      "Exit status: the program's own; 128+N if it died of signal N; 124 on timeout;\n"
	      "137 on memory_limit; 152 on cpu_limit; 125 if pyvisor itself failed.\n",
	      f);
}

/* Parse a base name for the workspace: one component, no NUL, not . or .. */
static void set_input_name(struct input *in, const char *name)
{
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		die("--input: invalid name '%s' (one file name, no '/')", name);
	if (strlen(name) > NAME_MAX)
		die("--input: name '%.40s...' is longer than %d bytes", name, NAME_MAX);
	snprintf(in->name, sizeof(in->name), "%s", name);
}

static double parse_seconds(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 7 * 86400)
		die("--timeout: '%s' is not a number of seconds between 0 and 604800", s);
	return v;
}

static size_t parse_bytes(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > (1ULL << 30))
		die("--max-output: '%s' is not a byte count between 0 and 1073741824", s);
	return (size_t)v;
}

/* A positive count for option @opt, at most @max; K/M/G (powers of 1024)
 * when @suffixes. */
static uint64_t parse_count(const char *opt, const char *s, uint64_t max, bool suffixes)
{
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (suffixes && end != s && end[0] && !end[1]) {
		switch (end[0]) {
		case 'K': case 'k': mult = 1ULL << 10; end++; break;
		case 'M': case 'm': mult = 1ULL << 20; end++; break;
		case 'G': case 'g': mult = 1ULL << 30; end++; break;
		}
	}
	if (errno || end == s || *end || s[0] == '-' || v == 0 || v > max / mult)
		die("%s: '%s' is not a whole number between 1 and %llu", opt, s,
		    (unsigned long long)max);
	return (uint64_t)v * mult;
}

/* A size with an optional K/M/G/T suffix (powers of 1024). */
static uint64_t parse_size(const char *opt, const char *s, uint64_t max)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end && !end[1]) {
		switch (*end) {
		case 'K': case 'k': shift = 10; end++; break;
		case 'M': case 'm': shift = 20; end++; break;
		case 'G': case 'g': shift = 30; end++; break;
		case 'T': case 't': shift = 40; end++; break;
		default: break;
		}
	}
	if (errno || end == s || *end || s[0] == '-' || v > (max >> shift))
		die("%s: '%s' is not a size between 0 and %llu", opt, s, (unsigned long long)max);
	return (uint64_t)v << shift;
}

static void push_arg(char ***list, size_t *n, char *arg)
{
	*list = realloc(*list, (*n + 1) * sizeof(**list));
	if (!*list)
		die("out of memory");
	(*list)[(*n)++] = arg;
}

static void parse_run(int argc, char **argv, struct run_opts *o)
{
	enum { OPT_INPUT = 256, OPT_OUTPUT, OPT_FORCE, OPT_TIMEOUT, OPT_MAXOUT, OPT_JSON,
	       OPT_AUDIT, OPT_STDIN, OPT_ALLOW_NET, OPT_ALLOW_HOST, OPT_NET_CONNS,
	       OPT_NET_BYTES, OPT_MEMORY, OPT_CPU, OPT_PROCS, OPT_NOFILE, OPT_FSIZE,
	       OPT_REQUIRE, OPT_QUOTA, OPT_MAXFILES, OPT_MOUNT, OPT_HIDE, OPT_ALLOW_EXEC };
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "output-dir", required_argument, NULL, OPT_OUTPUT },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-output", required_argument, NULL, OPT_MAXOUT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "audit-log", required_argument, NULL, OPT_AUDIT },
		{ "stdin", no_argument, NULL, OPT_STDIN },
		{ "allow-net", required_argument, NULL, OPT_ALLOW_NET },
		{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
		{ "net-max-connections", required_argument, NULL, OPT_NET_CONNS },
		{ "net-max-bytes", required_argument, NULL, OPT_NET_BYTES },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "cpu-seconds", required_argument, NULL, OPT_CPU },
		{ "max-procs", required_argument, NULL, OPT_PROCS },
		{ "max-open-files", required_argument, NULL, OPT_NOFILE },
		{ "max-file-size", required_argument, NULL, OPT_FSIZE },
		{ "require", required_argument, NULL, OPT_REQUIRE },
		{ "disk-quota", required_argument, NULL, OPT_QUOTA },
		{ "max-files", required_argument, NULL, OPT_MAXFILES },
		{ "mount", required_argument, NULL, OPT_MOUNT },
		{ "hide", required_argument, NULL, OPT_HIDE },
		{ "allow-exec", required_argument, NULL, OPT_ALLOW_EXEC },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->timeout_s = 60;
	o->max_output = 1 << 20;
	limits_defaults(&o->limits);
	o->disk_quota = 1ULL << 30;
	o->max_files = 100000;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_INPUT: {
			struct input *in;
			char *eq = strchr(optarg, '=');

			o->inputs = realloc(o->inputs, (o->ninputs + 1) * sizeof(*o->inputs));
			if (!o->inputs)
				die("out of memory");
			in = &o->inputs[o->ninputs++];
			if (eq) {
				*eq = '\0';
				set_input_name(in, eq + 1);
			} else {
				char tmp[PATH_MAX];

				snprintf(tmp, sizeof(tmp), "%s", optarg);
				set_input_name(in, basename(tmp));
			}
			in->host = optarg;
			if (!in->host[0])
				die("--input: empty host path");
			break;
		}
		case OPT_OUTPUT:
			o->output_dir = optarg;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_TIMEOUT:
			o->timeout_s = parse_seconds(optarg);
			break;
		case OPT_MAXOUT:
			o->max_output = parse_bytes(optarg);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_AUDIT:
			o->audit_log = optarg;
			break;
		case OPT_STDIN:
			o->pass_stdin = true;
			break;
		case OPT_ALLOW_NET:
		case OPT_ALLOW_HOST: {
			struct pv_error e = { 0 };
			int r = c == OPT_ALLOW_NET ? net_policy_add_net(&o->net, optarg, &e)
						   : net_policy_add_host(&o->net, optarg, &e);

			if (r < 0)
				die("%s", e.msg);
			break;
		}
		case OPT_NET_CONNS:
		case OPT_NET_BYTES: {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || v == 0 ||
			    (c == OPT_NET_CONNS && v > 1000000))
				die("%s: '%s' is not a positive count", argv[optind - 1], optarg);
			if (c == OPT_NET_CONNS)
				o->net.max_conns = (unsigned int)v;
			else
				o->net.max_bytes = v;
			break;
		}
		case OPT_MEMORY:
			/* MiB, up to 1 TiB */
			o->limits.memory_bytes = parse_count("--memory", optarg, 1ULL << 20, false) << 20;
			break;
		case OPT_CPU:
			o->limits.cpu_ms = parse_count("--cpu-seconds", optarg, 7 * 86400, false) * 1000;
			break;
		case OPT_PROCS:
			o->limits.max_procs = parse_count("--max-procs", optarg, 1 << 22, false);
			break;
		case OPT_NOFILE:
			o->limits.max_open_files = parse_count("--max-open-files", optarg, 1 << 20, false);
			break;
		case OPT_FSIZE:
			o->limits.max_file_size = parse_count("--max-file-size", optarg, 1ULL << 40, true);
			break;
		case OPT_REQUIRE:
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				if (!doctor_protection_find(tok))
					die("--require: unknown protection '%s' (see pyvisor doctor)", tok);
				if (o->nrequire == MAX_REQUIRE)
					die("--require: too many protections");
				o->require[o->nrequire++] = tok;
			}
			break;
		case OPT_QUOTA:
			o->disk_quota = parse_size("--disk-quota", optarg, 1ULL << 50);
			break;
		case OPT_MAXFILES:
			o->max_files = parse_size("--max-files", optarg, 1ULL << 32);
			break;
		case OPT_MOUNT:
			push_arg(&o->mounts, &o->nmounts, optarg);
			break;
		case OPT_HIDE:
			push_arg(&o->hides, &o->nhides, optarg);
			break;
		case OPT_ALLOW_EXEC:
			o->allow_exec = realloc(o->allow_exec,
						(o->nallow_exec + 1) * sizeof(*o->allow_exec));
			if (!o->allow_exec)
				die("out of memory");
			o->allow_exec[o->nallow_exec++] = optarg;
			break;
		case 'h':
			usage_run(stdout);
			exit(0);
		case ':':
			die("option '%s' needs a value (see pyvisor run --help)", argv[optind - 1]);
		default:
			die("unknown option '%s' (see pyvisor run --help)", argv[optind - 1]);
		}
	}
	o->program_mode = optind > 1 && !strcmp(argv[optind - 1], "--");
	o->rest = argv + optind;
	o->nrest = argc - optind;
	if (o->nrest < 1)
		die(o->program_mode ? "no PROGRAM after '--'" : "no SCRIPT.py given (see pyvisor run --help)");
}

/* Add a host file to the workspace as @name. */
static void add_input(struct gofer_view *view, const char *host, const char *name, bool script)
{
	char view_path[PATH_MAX];
	struct pv_error err = { 0 };
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = open(host, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("%s %s: %s", script ? "script" : "--input", host, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		die("%s %s: not a regular file", script ? "script" : "--input", host);
	snprintf(view_path, sizeof(view_path), "/workspace/%s", name);
	if (gofer_view_add_mem_file(view, view_path, fd, script ? 0644 : 0644, &err) < 0) {
		if (err.code == EEXIST)
			die("two files would be /workspace/%s (rename one with HOSTPATH=NAME)", name);
		die("cannot copy %s into the workspace: %s", host, err.msg);
	}
}

/* Resolve PROGRAM in the view and return the host path the loader execs. */
static char *resolve_program(struct gofer_view *view, const char *prog)
{
	struct pv_error err = { 0 };
	char host[PATH_MAX];
	struct stat st;
	char *r;

	if (policy_program_resolve(view, prog, host, sizeof(host), &st, &err) < 0)
		die("PROGRAM %s", err.msg);
	r = strdup(host);
	if (!r)
		die("out of memory");
	return r;
}

/* Checks on --output-dir that can be made before the run. */
static void check_output_dir(const char *dir)
{
	struct stat st;
	char tmp[PATH_MAX];

	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			die("--output-dir %s: exists and is not a directory", dir);
		if (access(dir, W_OK | X_OK) < 0)
			die("--output-dir %s: not writable: %s", dir, strerror(errno));
		return;
	}
	if (errno != ENOENT)
		die("--output-dir %s: %s", dir, strerror(errno));
	/* It will be created with its missing parents: the nearest existing
	 * ancestor must be a writable directory. */
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *anc = dirname(tmp);; anc = dirname(anc)) {
		if (stat(anc, &st) == 0) {
			if (!S_ISDIR(st.st_mode) || access(anc, W_OK | X_OK) < 0)
				die("--output-dir %s: cannot be created under %s", dir, anc);
			return;
		}
		if (errno != ENOENT)
			die("--output-dir %s: %s: %s", dir, anc, strerror(errno));
		if (!strcmp(anc, "/") || !strcmp(anc, "."))
			die("--output-dir %s: cannot be created", dir);
	}
}

static int exit_status_of(const struct sentry_outcome *o)
{
	switch (o->status) {
	case SENTRY_STATUS_OK:
	case SENTRY_STATUS_ERROR:
		return o->exit_code;
	case SENTRY_STATUS_TIMEOUT:
		return EXIT_TIMEOUT;
	case SENTRY_STATUS_KILLED:
		return 128 + o->signal;
	case SENTRY_STATUS_MEMORY_LIMIT:
		return EXIT_MEMORY_LIMIT;
	case SENTRY_STATUS_CPU_LIMIT:
		return EXIT_CPU_LIMIT;
	}
	return EXIT_PYVISOR;
}

static int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	struct gofer_config gcfg;
	struct gofer_view *view;
	struct loader_filter filter = { 0 };
	struct sentry_config cfg = { 0 };
	struct sentry_outcome outcome;
	struct result_artifacts arts = { 0 };
	struct pv_error err = { 0 };
	struct sentry_exec_allow *exec_allow = NULL;
	size_t nexec_allow = 0;
	char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin",
			 "HOME=/home/sandbox",
			 "LANG=C.UTF-8",
			 "PYTHONDONTWRITEBYTECODE=1",
			 "MPLBACKEND=Agg",
			 NULL };
	char script_view[PATH_MAX], script_name[NAME_MAX + 1];
	char **sargv;
	char *exec_path;
	const char *failure = NULL;
	int audit_fd = -1, status, landlock_abi = 0;
	bool root = geteuid() == 0, want_landlock = false;

	parse_run(argc, argv, &o);
	limits_supervisor_prepare();
	/* Invariant 8: never run weaker than asked; probe by trying. */
	if (doctor_require(o.require, o.nrequire, &err) < 0)
		die("%s", err.msg);
	for (size_t i = 0; i < o.nrequire; i++)
		want_landlock |= !strcmp(o.require[i], "landlock");
	if (o.output_dir)
		check_output_dir(o.output_dir);

	gcfg.uid = root ? SANDBOX_ID_DEFAULT : getuid();
	gcfg.gid = root ? SANDBOX_ID_DEFAULT : getgid();
	policy_set_hosts_extra(o.net.hosts_text);
	gcfg.quota_bytes = o.disk_quota;
	gcfg.quota_files = o.max_files;
	view = gofer_view_new(&gcfg, &err);
	if (!view || policy_view_default(view, gcfg.uid, gcfg.gid, &err) < 0)
		die("cannot build the sandbox's view: %s", err.msg);
	for (size_t i = 0; i < o.nhides; i++)
		if (policy_view_hide(view, o.hides[i], &err) < 0)
			die("--hide %s: %s", o.hides[i], err.msg);
	for (size_t i = 0; i < o.nmounts; i++)
		if (policy_view_mount(view, o.mounts[i], &err) < 0)
			die("--mount %s: %s", o.mounts[i], err.msg);

	sargv = calloc((size_t)o.nrest + 6, sizeof(*sargv));
	if (!sargv)
		die("out of memory");
	if (o.program_mode) {
		exec_path = resolve_program(view, o.rest[0]);
		for (int i = 0; i < o.nrest; i++)
			sargv[i] = o.rest[i];
	} else {
		char tmp[PATH_MAX];
		int k = 0;

		snprintf(tmp, sizeof(tmp), "%s", o.rest[0]);
		snprintf(script_name, sizeof(script_name), "%s", basename(tmp));
		add_input(view, o.rest[0], script_name, true);
		snprintf(script_view, sizeof(script_view), "/workspace/%s", script_name);
		exec_path = resolve_program(view, SANDBOX_PYTHON);
		sargv[k++] = SANDBOX_PYTHON;
		/* -E: ignore PYTHON* variables; -s: no user site; -B: no .pyc
		 * writes (catalogue SUP-16: nothing runs before the filter, and
		 * the interpreter reads no configuration from the sandbox). */
		sargv[k++] = "-E";
		sargv[k++] = "-s";
		sargv[k++] = "-B";
		sargv[k++] = script_view;
		for (int i = 1; i < o.nrest; i++)
			sargv[k++] = o.rest[i];
	}
	for (size_t i = 0; i < o.ninputs; i++)
		add_input(view, o.inputs[i].host, o.inputs[i].name, false);
	if (gofer_view_snapshot(view, "/workspace", &err) < 0)
		die("cannot record the workspace: %s", err.msg);

	if (o.audit_log) {
		audit_fd = open(o.audit_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (audit_fd < 0)
			die("--audit-log %s: %s", o.audit_log, strerror(errno));
	}
	if (policy_exec_default(view, &exec_allow, &nexec_allow, &err) < 0)
		die("exec policy: %s", err.msg);
	for (size_t i = 0; i < o.nallow_exec; i++)
		if (policy_exec_allow_add(view, o.allow_exec[i], true, &exec_allow, &nexec_allow,
					  &err) < 0)
			die("--allow-exec %s", err.msg);
	if (loader_filter_build(&filter, &err) < 0)
		die("cannot build the seccomp filter: %s", err.msg);

	cfg.exec_path = exec_path;
	cfg.argv = sargv;
	cfg.envp = envp;
	cfg.cwd = "/workspace";
	cfg.timeout_s = o.timeout_s;
	cfg.max_output = o.max_output;
	cfg.stream = !o.json;
	cfg.pass_stdin = o.pass_stdin;
	cfg.uid = gcfg.uid;
	cfg.gid = gcfg.gid;
	cfg.audit_fd = audit_fd;
	cfg.net_policy = &o.net;
	cfg.limits = o.limits;
	/* Landlock is defence in depth: applied whenever the kernel has it,
	 * mandatory with --require landlock (checked above). */
	cfg.landlock_fd = loader_landlock_build(exec_path, &landlock_abi, &err);
	if (cfg.landlock_fd < 0 && (want_landlock || cfg.landlock_fd != -EOPNOTSUPP))
		die("%s", err.msg);
	cfg.landlock = cfg.landlock_fd >= 0;
	/* Every program the sandbox may exec must be executable under the
	 * ruleset too: the kernel checks Landlock on execveat of the sentry's
	 * fd as on any exec. */
	for (size_t i = 0; cfg.landlock && i < nexec_allow; i++)
		if (loader_landlock_allow(cfg.landlock_fd, exec_allow[i].host_path, &err) < 0)
			die("%s", err.msg);
	cfg.exec_allow = exec_allow;
	cfg.nexec_allow = nexec_allow;

	if (sentry_run(&cfg, view, &filter, &outcome, &err) < 0)
		die("%s", err.msg);
	status = exit_status_of(&outcome);

	if (result_artifacts_collect(view, &arts, &err) < 0) {
		failure = err.msg;
	} else if (o.output_dir && result_artifacts_write(&arts, o.output_dir, o.force, &err) < 0) {
		failure = err.msg;
	}
	if (failure)
		status = EXIT_PYVISOR;

	if (o.json) {
		json_t *res = result_json(&outcome, failure ? NULL : &arts, o.audit_log, failure, &cfg);

		if (!res || json_dumpf(res, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII) < 0)
			die("cannot write the result");
		fputc('\n', stdout);
		json_decref(res);
	} else {
		if (outcome.out.truncated || outcome.err.truncated)
			fprintf(stderr, "pyvisor: output truncated at %zu bytes per stream\n",
				o.max_output);
		if (outcome.status == SENTRY_STATUS_TIMEOUT)
			fprintf(stderr, "pyvisor: timed out after %g s\n", o.timeout_s);
		if (outcome.status == SENTRY_STATUS_MEMORY_LIMIT)
			fprintf(stderr, "pyvisor: memory limit of %llu MiB reached\n",
				(unsigned long long)(o.limits.memory_bytes >> 20));
		if (outcome.status == SENTRY_STATUS_CPU_LIMIT)
			fprintf(stderr, "pyvisor: CPU limit of %llu s reached\n",
				(unsigned long long)(o.limits.cpu_ms / 1000));
		if (outcome.violations)
			fprintf(stderr, "pyvisor: %llu action(s) denied%s%s%s\n",
				(unsigned long long)outcome.violations,
				o.audit_log ? " (audit log: " : "", o.audit_log ? o.audit_log : "",
				o.audit_log ? ")" : "");
		if (!failure && o.output_dir)
			fprintf(stderr, "pyvisor: %zu artifact(s) written to %s\n", arts.count,
				o.output_dir);
	}
	fflush(stdout);
	if (failure)
		fprintf(stderr, "pyvisor: error: %s\n", failure);

	result_artifacts_free(&arts);
	sentry_outcome_free(&outcome);
	loader_filter_free(&filter);
	gofer_view_free(view);
	if (audit_fd >= 0)
		close(audit_fd);
	if (cfg.landlock)
		close(cfg.landlock_fd);
	free(exec_path);
	free(sargv);
	free(o.inputs);
	net_policy_free(&o.net);
	free(o.allow_exec);
	policy_exec_free(exec_allow, nexec_allow);
	return status;
}

static int cmd_doctor(int argc, char **argv)
{
	struct doctor_report r;
	bool json = false, ok;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs("Usage: pyvisor doctor [--json]\n"
			      "\n"
			      "Probes, by trying them, the kernel features pyvisor relies on (seccomp\n"
			      "user notification, ADDFD and ADDFD_FLAG_SEND, WAIT_KILLABLE_RECV,\n"
			      "SYNC_WAKE_UP, pidfd_getfd, ptrace, user/pid/net namespaces, Landlock,\n"
			      "openat2, cgroup v2 delegation) and prints them with the protections\n"
			      "that follow.  `pyvisor run --require PROTECTION` refuses to run when a\n"
			      "protection is not available here.\n"
			      "\n"
			      "Options:\n"
			      "  --json       one JSON object instead of the tables\n"
			      "  -h, --help   show this help\n"
			      "\n"
			      "Exit status: 0 when pyvisor run works on this machine, 1 when a\n"
			      "protection every run needs is missing, 125 on a usage error.\n",
			      stdout);
			return 0;
		} else {
			die("doctor: unknown option '%s' (see pyvisor doctor --help)", argv[i]);
		}
	}
	doctor_probe(&r, ~0U);
	if (json) {
		json_t *j = doctor_json(&r);

		if (!j || json_dumpf(j, stdout, JSON_INDENT(2)) < 0)
			die("cannot write the report");
		fputc('\n', stdout);
		ok = json_is_true(json_object_get(j, "ok"));
		json_decref(j);
	} else {
		ok = doctor_table_print(&r, stdout);
	}
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("no command given (see pyvisor --help)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("pyvisor %s\n", PYVISOR_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "doctor"))
		return cmd_doctor(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench")) {
		struct pv_error err = { 0 };

		if (bench_cmd_main(argc - 1, argv + 1, &err) < 0)
			die("%s", err.msg);
		return 0;
	}
	die("unknown command '%s' (see pyvisor --help)", argv[1]);
}
