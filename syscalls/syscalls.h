/*
 * syscalls.h - the syscall table and the handler interface.
 *
 * The table comes from syscalls.def (X-macro rows).  The sentry looks up the
 * row of each notification, calls its handler with a struct syscall_ctx and
 * answers the kernel with the struct syscall_ret the handler returns.  The
 * loader builds the seccomp filter from the same rows (loader/filter.c).
 *
 * Handlers run in the sentry's event loop: they must not block, must read
 * guest memory only through the guestmem helpers in sentry.h (bounded
 * copies, notification id rechecked after every read) and must act on the
 * copies only.  A handler that cannot complete denies (fail closed).
 */
#ifndef PYVISOR_SYSCALLS_SYSCALLS_H
#define PYVISOR_SYSCALLS_SYSCALLS_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>

#include "compat.h"

struct sentry;
struct sentry_task;

enum syscall_class {
	PV_ALLOW,	/* allowed in BPF */
	PV_ALLOW_IF,	/* allowed in BPF when registers match; else handler */
	PV_ENOSYS,	/* ENOSYS in BPF, no audit */
	PV_EMULATE,	/* always the handler */
	PV_REFUSE,	/* EPERM + audit event, in the sentry */
};

enum syscall_args {
	PV_ARGS_REG,	/* registers or plain data buffers only */
	PV_ARGS_MEM,	/* a pointer the kernel interprets (path, sockaddr, struct) */
};

/* One notification being handled.  Owned by the sentry for the duration of
 * the handler call. */
struct syscall_ctx {
	struct sentry *sentry;
	const struct seccomp_notif *req;	/* req->data.args: the raw arguments */
	struct sentry_task *task;		/* the notifying task (never NULL) */
	const struct syscall_entry *entry;	/* the table row */
};

/*
 * What the sentry answers.  Exactly one of:
 *   error != 0         the call fails with -error;
 *   inject_fd >= 0     the fd (owned by the sentry, closed after) is
 *                      installed in the task with SECCOMP_IOCTL_NOTIF_ADDFD
 *                      and SECCOMP_ADDFD_FLAG_SEND, so that the call returns
 *                      the new fd number atomically; inject_cloexec sets
 *                      O_CLOEXEC on it;
 *   pending            nothing now: the handler answers later;
 *   cont               SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel runs the
 *                      call itself.  Only for decisions made on register
 *                      values alone (DESIGN.md invariant 2);
 *   otherwise          the call returns val.
 */
struct syscall_ret {
	int64_t val;
	int error;
	int inject_fd;
	bool inject_cloexec;
	bool cont;
	bool pending;	/* the handler keeps the notification and answers it
			 * later itself (sentry/net.c) */
	bool answered;	/* the handler already answered the notification itself */
};

typedef struct syscall_ret (*syscall_handler_fn)(struct syscall_ctx *ctx);

#define SYSCALL_HANDLER(name) struct syscall_ret sys_##name(struct syscall_ctx *ctx)

/* Result constructors for handlers. */
static inline struct syscall_ret syscall_value(int64_t v)
{
	return (struct syscall_ret){ .val = v, .inject_fd = -1 };
}

static inline struct syscall_ret syscall_errno(int e)
{
	return (struct syscall_ret){ .error = e, .inject_fd = -1 };
}

/* Turn a kernel-style result (>= 0 value or -errno) into a syscall_ret. */
static inline struct syscall_ret syscall_result(int64_t r)
{
	return r < 0 ? syscall_errno((int)-r) : syscall_value(r);
}

static inline struct syscall_ret syscall_inject(int fd, bool cloexec)
{
	return (struct syscall_ret){ .inject_fd = fd, .inject_cloexec = cloexec };
}

/* Let the kernel run the call.  Callers must state, at the call site, why the
 * decision rests on register values only. */
static inline struct syscall_ret syscall_continue(void)
{
	return (struct syscall_ret){ .inject_fd = -1, .cont = true };
}

/* One row of syscalls.def. */
struct syscall_entry {
	const char *name;
	int nr;
	syscall_handler_fn handler;	/* sys_none for `none` */
	enum syscall_class class;
	enum syscall_args args;
	const char *note;
};

/* The generic handler of rows whose handler column is `none`: PV_REFUSE rows
 * get EPERM and an audit event; any other row that reaches it (the filter
 * should have decided) is denied with ENOSYS and an audit event. */
SYSCALL_HANDLER(none);

/*
 * syscall_table - the rows of syscalls.def in file order; *count receives the
 * number of rows.  Static storage, never freed.
 */
const struct syscall_entry *syscall_table(size_t *count);

/*
 * syscall_lookup - the row for syscall number @nr (x86_64), or NULL when the
 * number is not in the table (the sentry then answers ENOSYS with an audit
 * event).  O(1).
 */
const struct syscall_entry *syscall_lookup(int nr);

/* syscall_name - the name of @nr, or NULL when not in the table. */
const char *syscall_name(int nr);

/*
 * syscall_deny - answer -@err and write an audit event for the task's call
 * with @rule (see docs/audit.md), the resolved @path or @address (either may
 * be NULL) and a short @detail.  Returns the syscall_ret to give back.
 */
struct syscall_ret syscall_deny(struct syscall_ctx *ctx, int err, const char *rule,
				const char *path, const char *address, const char *detail);

#endif
