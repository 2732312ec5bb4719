/*
 * guestmem.c - the one module that touches the sandbox's memory.
 *
 * Copies go through process_vm_readv(2)/process_vm_writev(2), which honour
 * the target's page protections and fail cleanly on unmapped pages.  Every
 * read is followed by SECCOMP_IOCTL_NOTIF_ID_VALID (seccomp_unotify(2),
 * "Caveats regarding the use of /proc/[tid]/mem"): if the notifying task
 * died and its tid was reused, the bytes may belong to another process and
 * must not be acted on.  Handlers copy once and act on the copy only
 * (DESIGN.md invariants 2 and 4).
 */
#include "sentry.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

#define PAGE_SIZE_GUEST 4096UL

int sentry_notif_valid(struct syscall_ctx *ctx)
{
	__u64 id = ctx->req->id;

	if (ioctl(ctx->sentry->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
		return -ESRCH;
	return 0;
}

/* One bounded copy that must not cross into a page we were not asked for. */
static ssize_t vm_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

int guestmem_read(struct syscall_ctx *ctx, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (len == 0)
		return sentry_notif_valid(ctx);
	if (addr == 0 || addr + len < addr)
		return -EFAULT;
	n = vm_read(ctx->req->pid, addr, buf, len);
	if (n < 0 || (size_t)n != len)
		return sentry_notif_valid(ctx) < 0 ? -ESRCH : -EFAULT;
	return sentry_notif_valid(ctx);
}

int guestmem_read_path(struct syscall_ctx *ctx, uint64_t addr, char *buf, size_t size)
{
	int r;

	if (size > PATH_MAX)
		size = PATH_MAX;
	r = guestmem_read_str(ctx, addr, buf, size);
	return r == -E2BIG ? -ENAMETOOLONG : r;
}

int guestmem_read_str(struct syscall_ctx *ctx, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	if (addr == 0)
		return -EFAULT;
	/* Read page by page: a path may end just before an unmapped page. */
	while (got < size) {
		uint64_t cur = addr + got;
		size_t chunk = PAGE_SIZE_GUEST - (cur % PAGE_SIZE_GUEST);
		ssize_t n;
		char *nul;

		if (cur < addr)
			return -EFAULT;
		if (chunk > size - got)
			chunk = size - got;
		n = vm_read(ctx->req->pid, cur, buf + got, chunk);
		if (n <= 0)
			return sentry_notif_valid(ctx) < 0 ? -ESRCH : -EFAULT;
		nul = memchr(buf + got, '\0', (size_t)n);
		if (nul) {
			int r = sentry_notif_valid(ctx);

			return r < 0 ? r : (int)(nul - buf);
		}
		got += (size_t)n;
	}
	return sentry_notif_valid(ctx) < 0 ? -ESRCH : -E2BIG;
}

int guestmem_write(struct syscall_ctx *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { .iov_base = (void *)buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (len == 0)
		return 0;
	if (addr == 0 || addr + len < addr)
		return -EFAULT;
	/* Check first: never write into a task that is no longer the caller. */
	if (sentry_notif_valid(ctx) < 0)
		return -ESRCH;
	n = process_vm_writev(ctx->req->pid, &local, 1, &remote, 1, 0);
	if (n < 0 || (size_t)n != len)
		return -EFAULT;
	return 0;
}

int guestmem_write_stopped(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { .iov_base = (void *)buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_writev(tid, &local, 1, &remote, 1, 0);

	return n >= 0 && (size_t)n == len ? 0 : -EFAULT;
}
