/*
 * main.c - the pyvisor command line.
 *
 *   pyvisor run [OPTIONS] SCRIPT.py [ARGS...]
 *   pyvisor run [OPTIONS] -- PROGRAM [ARGS...]
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
	const char **allow_exec;
	size_t nallow_exec;
	bool program_mode;
	char **rest;	/* SCRIPT ARGS... or PROGRAM ARGS... */
	int nrest;
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
	      "\n"
	      "Options:\n"
	      "  -h, --help     show this help\n"
	      "  --version      show the version\n"
	      "\n"
	      "Run options (details: pyvisor run --help):\n"
	      "  --input HOSTPATH[=NAME]  --output-dir DIR  --force  --timeout SECONDS\n"
	      "  --max-output BYTES  --json  --audit-log FILE  --stdin  --allow-exec PROGRAM\n",
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
	      "  --json                   print one JSON result object instead of the\n"
	      "                           program's output (see docs/result.md)\n"
	      "  --audit-log FILE         append audit events as JSON Lines to FILE\n"
	      "  --stdin                  give the program pyvisor's stdin (default /dev/null)\n"
	      "  --allow-exec PROGRAM     let the sandbox exec PROGRAM (a name found in the\n"
	      "                           view's PATH or a view path of a read-only host file)\n"
	      "                           besides the default list; repeatable\n"
	      "  -h, --help               show this help\n"
	      "\n"
	      "Exit status: the program's own; 128+N if it died of signal N; 124 on timeout;\n"
	      "125 if pyvisor itself failed.\n",
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

static void parse_run(int argc, char **argv, struct run_opts *o)
{
	enum { OPT_INPUT = 256, OPT_OUTPUT, OPT_FORCE, OPT_TIMEOUT, OPT_MAXOUT, OPT_JSON,
	       OPT_AUDIT, OPT_STDIN, OPT_ALLOW_EXEC };
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "output-dir", required_argument, NULL, OPT_OUTPUT },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-output", required_argument, NULL, OPT_MAXOUT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "audit-log", required_argument, NULL, OPT_AUDIT },
		{ "stdin", no_argument, NULL, OPT_STDIN },
		{ "allow-exec", required_argument, NULL, OPT_ALLOW_EXEC },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->timeout_s = 60;
	o->max_output = 1 << 20;
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
	int audit_fd = -1, status;
	bool root = geteuid() == 0;

	parse_run(argc, argv, &o);
	if (o.output_dir)
		check_output_dir(o.output_dir);

	gcfg.uid = root ? SANDBOX_ID_DEFAULT : getuid();
	gcfg.gid = root ? SANDBOX_ID_DEFAULT : getgid();
	view = gofer_view_new(&gcfg, &err);
	if (!view || policy_view_default(view, gcfg.uid, gcfg.gid, &err) < 0)
		die("cannot build the sandbox's view: %s", err.msg);

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
		json_t *res = result_json(&outcome, failure ? NULL : &arts, o.audit_log, failure);

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
	free(exec_path);
	free(sargv);
	free(o.inputs);
	free(o.allow_exec);
	policy_exec_free(exec_allow, nexec_allow);
	return status;
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
	die("unknown command '%s' (see pyvisor --help)", argv[1]);
}
