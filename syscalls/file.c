/*
 * file.c - open, openat, openat2, creat.
 *
 * The sentry resolves the path in the view and opens the object itself,
 * then injects the fd into the task with SECCOMP_IOCTL_NOTIF_ADDFD and
 * SECCOMP_ADDFD_FLAG_SEND (seccomp_unotify(2)): the kernel never re-reads
 * the path, so a racing thread cannot swap it (catalogue SUP-01).
 * Sources: open(2), openat2(2).
 */
#include "internal.h"

#include <errno.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Flags open(2) accepts; anything else is EINVAL for openat2 (openat
 * ignores unknown bits, as the kernel does). */
#define OPEN_VALID_FLAGS                                                               \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK |  \
	 O_DSYNC | O_SYNC | O_ASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | \
	 O_NOATIME | O_CLOEXEC | O_PATH | O_TMPFILE)

/* A read-only, non-blocking-free stand-in for O_PATH fd @fd (see do_openat). */
static int open_path_standin(int fd)
{
	char p[64];
	int r, fl;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (r < 0)
		return errno == ELOOP ? -ELOOP : -errno;
	fl = fcntl(r, F_GETFL);
	if (fl >= 0)
		(void)fcntl(r, F_SETFL, fl & ~O_NONBLOCK);
	return r;
}

static struct syscall_ret do_openat(struct syscall_ctx *ctx, int dirfd, uint64_t path_addr,
				    int flags, mode_t mode, uint64_t resolve)
{
	struct gofer_lookup_info info = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct syscall_ret ret;
	int fd, r;

	if (copy_path(ctx, path_addr, path, &ret) < 0)
		return ret;
	if (path[0] == '\0')
		return syscall_errno(ENOENT);
	/* BENEATH and IN_ROOT are relative to the dirfd even for "/..." */
	if (resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT))
		r = sentry_at_base(ctx, dirfd, base);
	else
		r = at_base(ctx, dirfd, path, base);
	if (r < 0)
		return syscall_errno(-r);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = (mode & 07777) & ~ctx->task->proc->umask;
	fd = gofer_open2(ctx->sentry->view, base, path, flags & ~O_CLOEXEC, mode, resolve, &info);
	if (fd < 0)
		return view_result(ctx, fd, &info, path);
	if (flags & O_PATH) {
		/*
		 * SECCOMP_IOCTL_NOTIF_ADDFD takes its file with fget(), which
		 * refuses O_PATH files (EBADF).  Inject a read-only open of
		 * the same object instead: it works as a dirfd, for fstat and
		 * fchdir as an O_PATH fd does, but read() on it succeeds and
		 * F_GETFL lacks O_PATH (docs/compat.md).  Objects the
		 * supervisor may not read stay unreachable: the open fails.
		 */
		struct stat st;
		unsigned int bits;
		int ro;

		/* The stand-in can be read: only when the sandbox may read it. */
		if (gofer_fd_stat(ctx->sentry->view, fd, &st) < 0) {
			close(fd);
			return syscall_errno(EACCES);
		}
		bits = st.st_uid == ctx->sentry->cfg->uid   ? (st.st_mode >> 6) & 7 :
		       st.st_gid == ctx->sentry->cfg->gid ? (st.st_mode >> 3) & 7 :
							    st.st_mode & 7;
		if (!(bits & 4)) {
			close(fd);
			return syscall_errno(EACCES);
		}
		ro = open_path_standin(fd);
		close(fd);
		if (ro < 0)
			return syscall_errno(-ro);
		fd = ro;
	}
	return syscall_inject(fd, flags & O_CLOEXEC);
}

SYSCALL_HANDLER(open)
{
	return do_openat(ctx, AT_FDCWD, ARG(0), ARG_INT(1), (mode_t)ARG(2), 0);
}

SYSCALL_HANDLER(openat)
{
	return do_openat(ctx, ARG_INT(0), ARG(1), ARG_INT(2), (mode_t)ARG(3), 0);
}

SYSCALL_HANDLER(creat)
{
	return do_openat(ctx, AT_FDCWD, ARG(0), O_CREAT | O_WRONLY | O_TRUNC, (mode_t)ARG(1), 0);
}

SYSCALL_HANDLER(openat2)
{
	struct open_how how = { 0 };
	size_t size = ARG(3);
	int r;

	/* openat2(2): size must cover at least the first version of the
	 * struct; larger structs are accepted only if the extra bytes are
	 * zero (we read up to our own size and check the rest). */
	if (size < OPEN_HOW_SIZE_VER0)
		return syscall_errno(EINVAL);
	if (size > 4096)
		return syscall_errno(E2BIG);
	r = guestmem_read(ctx, ARG(2), &how, size < sizeof(how) ? size : sizeof(how));
	if (r == -EFAULT)
		return syscall_deny(ctx, EFAULT, "guestmem.unreadable", NULL, NULL,
				    "open_how unreadable");
	if (r < 0)
		return syscall_errno(-r);
	if (size > sizeof(how)) {
		unsigned char extra[4096 - sizeof(how)];
		size_t n = size - sizeof(how);

		r = guestmem_read(ctx, ARG(2) + sizeof(how), extra, n);
		if (r < 0)
			return syscall_errno(r == -EFAULT ? EFAULT : -r);
		for (size_t i = 0; i < n; i++)
			if (extra[i])
				return syscall_errno(E2BIG);
	}
	if (how.flags & ~(uint64_t)OPEN_VALID_FLAGS)
		return syscall_errno(EINVAL);
	if (how.mode & ~(uint64_t)07777)
		return syscall_errno(EINVAL);
	if (how.mode && !(how.flags & (O_CREAT | O_TMPFILE)))
		return syscall_errno(EINVAL);
	/* RESOLVE_* restrict the walk in the view (gofer_open2). */
	if (how.resolve & ~(uint64_t)(RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |
				      RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_CACHED))
		return syscall_errno(EINVAL);
	if ((how.resolve & RESOLVE_BENEATH) && (how.resolve & RESOLVE_IN_ROOT))
		return syscall_errno(EINVAL);
	return do_openat(ctx, ARG_INT(0), ARG(1), (int)how.flags, (mode_t)how.mode, how.resolve);
}
