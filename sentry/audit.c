/*
 * audit.c - audit events: one JSON object per denied action (docs/audit.md).
 *
 * Events go to the --audit-log file as JSON Lines (appended with one
 * write(2) each, O_APPEND, so concurrent runs sharing a file do not
 * interleave within a line) and the first SENTRY_AUDIT_KEEP are kept for
 * the result object.  The sandbox never sees the log: its fd is
 * close-on-exec and opened before the child is forked, and the child closes
 * every fd but 0/1/2 (DESIGN.md invariant 5).
 */
#include "sentry.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <time.h>

#define AUDIT_SCHEMA 1

uint64_t sentry_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

const char *errno_name(int e)
{
#define E(x) \
	case x:  \
		return #x
	switch (e) {
		E(EPERM);
		E(ENOENT);
		E(ESRCH);
		E(EINTR);
		E(EIO);
		E(E2BIG);
		E(ENOEXEC);
		E(EBADF);
		E(ECHILD);
		E(EAGAIN);
		E(ENOMEM);
		E(EACCES);
		E(EFAULT);
		E(EBUSY);
		E(EEXIST);
		E(EXDEV);
		E(ENOTDIR);
		E(EISDIR);
		E(EINVAL);
		E(ENFILE);
		E(EMFILE);
		E(ENOTTY);
		E(EFBIG);
		E(ENOSPC);
		E(ESPIPE);
		E(EROFS);
		E(EMLINK);
		E(ENAMETOOLONG);
		E(ENOSYS);
		E(ENOTEMPTY);
		E(ELOOP);
		E(EOPNOTSUPP);
		E(EAFNOSUPPORT);
		E(ECONNREFUSED);
		E(ENETUNREACH);
		E(ECONNRESET);
		E(EINPROGRESS);
		E(ENOTSOCK);
		E(EDQUOT);
	default:
		return "E?";
	}
#undef E
}

static void time_rfc3339(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

void audit_event_emit(struct syscall_ctx *ctx, const char *verdict, int err, const char *rule,
		      const char *path, const char *address, const char *detail)
{
	struct sentry *s = ctx->sentry;
	struct sentry_outcome *o = s->outcome;
	const char *name = syscall_name(ctx->req->data.nr);
	char when[48];
	json_t *ev;

	if (strcmp(verdict, "allow"))
		o->violations++; /* allowed connections are logged, not counted */
	time_rfc3339(when, sizeof(when));
	ev = json_object();
	if (!ev)
		return;
	json_object_set_new(ev, "schema", json_integer(AUDIT_SCHEMA));
	json_object_set_new(ev, "time", json_string(when));
	json_object_set_new(ev, "run_id", json_string(s->run_id));
	json_object_set_new(ev, "pid", json_integer(ctx->task ? ctx->task->proc->tgid : 0));
	json_object_set_new(ev, "tid", json_integer(ctx->req->pid));
	json_object_set_new(ev, "arch", json_string("x86_64"));
	json_object_set_new(ev, "syscall", json_string(name ? name : "unknown"));
	json_object_set_new(ev, "nr", json_integer(ctx->req->data.nr));
	if (path)
		json_object_set_new(ev, "path", json_string(path));
	if (address)
		json_object_set_new(ev, "address", json_string(address));
	json_object_set_new(ev, "verdict", json_string(verdict));
	if (err) {
		json_object_set_new(ev, "errno", json_string(errno_name(err)));
		json_object_set_new(ev, "errno_num", json_integer(err));
	}
	json_object_set_new(ev, "rule", json_string(rule ? rule : "unspecified"));
	if (detail)
		json_object_set_new(ev, "detail", json_string(detail));

	if (s->cfg->audit_fd >= 0) {
		char *line = json_dumps(ev, JSON_COMPACT | JSON_ENSURE_ASCII);

		if (line) {
			size_t len = strlen(line);

			line[len] = '\n'; /* json_dumps leaves room: replace NUL */
			if (write(s->cfg->audit_fd, line, len + 1) < 0) {
				/* The run continues; the count in the result stays exact. */
			}
			free(line);
		}
	}
	if (json_array_size(o->audit_events) < SENTRY_AUDIT_KEEP)
		json_array_append(o->audit_events, ev);
	else
		o->audit_events_truncated = true;
	json_decref(ev);
}

struct syscall_ret syscall_deny(struct syscall_ctx *ctx, int err, const char *rule,
				const char *path, const char *address, const char *detail)
{
	audit_event_emit(ctx, "deny", err, rule, path, address, detail);
	return syscall_errno(err);
}
