/*
 * internal.h - helpers shared by the handler files of syscalls/ (private to
 * this directory).
 */
#ifndef PYVISOR_SYSCALLS_INTERNAL_H
#define PYVISOR_SYSCALLS_INTERNAL_H

#include <fcntl.h>

#include "sentry.h"
#include "syscalls.h"

/* Argument @i of the notification, as the kernel's types see it. */
#define ARG(i) (ctx->req->data.args[(i)])
#define ARG_INT(i) ((int)(ctx->req->data.args[(i)] & 0xffffffffULL))
#define ARG_UINT(i) ((unsigned int)(ctx->req->data.args[(i)] & 0xffffffffULL))

/*
 * copy_path - copy the path argument at @addr into @buf (PATH_MAX bytes).
 * Returns 0, or fills *@ret with the answer (EFAULT with an audit event,
 * ENAMETOOLONG, or ESRCH when the notification is gone) and returns < 0.
 */
int copy_path(struct syscall_ctx *ctx, uint64_t addr, char *buf, struct syscall_ret *ret);

/*
 * view_result - turn a gofer result @r (>= 0 or -errno) into the answer,
 * writing an audit event when the failure came from the policy (a hidden
 * name: view.hidden; a write into a read-only part: view.read_only).
 */
struct syscall_ret view_result(struct syscall_ctx *ctx, int64_t r,
			       const struct gofer_lookup_info *info, const char *path);

/*
 * at_base - like sentry_at_base(), but for an absolute @path any dirfd is
 * ignored (as the kernel does), so that a bad dirfd does not fail it.
 */
int at_base(struct syscall_ctx *ctx, int dirfd, const char *path, char *out);

/* stat_to_statx - fill a struct statx from @st for @mask (fields Linux
 * fills for a regular filesystem). */
struct statx;
void stat_to_statx(const struct stat *st, struct statx *stx);

#endif
