/*
 * store.c - the per-run file store: where the bytes of in-memory files
 * live, and how the disk quota is enforced (docs/quotas.md).
 *
 * With a quota (gofer_config.quota_bytes > 0) every regular file the
 * sandbox creates is an unnamed inode (O_TMPFILE) of a private tmpfs
 * mounted for this run with size=QUOTA and nr_inodes=FILES+1.  The mount
 * is made without root: a short-lived helper process enters a new user
 * and mount namespace (where it holds CAP_SYS_ADMIN), creates the tmpfs
 * with the new mount API (fsopen(2)/fsconfig(2)/fsmount(2)) and sends the
 * detached mount's fd back over a socket pair.  The supervisor keeps only
 * that fd: the mount is attached to no namespace, no path leads to it, and
 * it disappears with the last fd on its files.  Writes to the injected fds
 * run natively and the kernel's tmpfs accounting refuses any byte beyond
 * the quota with ENOSPC (mmap stores past it: SIGBUS), exactly as a tmpfs
 * of that size would.
 *
 * Without a quota the store is plain memfds (memfd_create(2)).
 * Sources: user_namespaces(7), fsopen(2), fsconfig(2), fsmount(2),
 * tmpfs(5), open(2) O_TMPFILE, unix(7) SCM_RIGHTS.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compat.h"
#include "gofer-internal.h"

#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#define FSCONFIG_SET_STRING 1
#define FSCONFIG_CMD_CREATE 6
#define FSMOUNT_CLOEXEC 0x00000001
#endif
#ifndef MOUNT_ATTR_NOSUID
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* In the helper: make the tmpfs and return the mount fd, or -errno. */
static int helper_mount(uid_t uid, gid_t gid, uint64_t bytes, uint64_t files)
{
	char map[64], opt[32];
	int fsfd, mfd;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -errno;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		return -EPERM;
	if (write_file("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
		return -EPERM;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		return -EPERM;
	fsfd = (int)syscall(__NR_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return -errno;
	snprintf(opt, sizeof(opt), "%llu", (unsigned long long)bytes);
	if (syscall(__NR_fsconfig, fsfd, FSCONFIG_SET_STRING, "size", opt, 0) < 0)
		goto fail;
	/* The root, the files, and one directory per directory handle. */
	snprintf(opt, sizeof(opt), "%llu",
		 files ? (unsigned long long)files + 1 + GOFER_MAX_HANDLES : 0ULL);	/* 0: unlimited */
	if (syscall(__NR_fsconfig, fsfd, FSCONFIG_SET_STRING, "nr_inodes", opt, 0) < 0)
		goto fail;
	if (syscall(__NR_fsconfig, fsfd, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0)
		goto fail;
	if (syscall(__NR_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		goto fail;
	mfd = (int)syscall(__NR_fsmount, fsfd, FSMOUNT_CLOEXEC,
			   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mfd < 0)
		goto fail;
	close(fsfd);
	return mfd;
fail:
	mfd = -errno;
	close(fsfd);
	return mfd;
}

static int send_fd(int sock, int fd, int err)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static int recv_fd(int sock, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	int err = 0;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != sizeof(err))
		return -EIO;
	if (err)
		return err < 0 ? err : -err;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EIO;
	memcpy(fd, CMSG_DATA(c), sizeof(int));
	return 0;
}

/*
 * gofer_store_open - mount the per-run tmpfs of @v (v->cfg.quota_bytes,
 * v->cfg.quota_files) and keep its root in v->store_fd.  Returns 0 or
 * -errno with @err saying why (the caller refuses to run: invariant 8).
 */
int gofer_store_open(struct gofer_view *v, struct pv_error *err)
{
	int sv[2], status, fd = -1, rc;
	struct stat st;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return pv_error_set(err, errno, "gofer: socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(sv[0]);
		close(sv[1]);
		return pv_error_set(err, -rc, "gofer: fork: %s", strerror(-rc));
	}
	if (pid == 0) {
		int m = helper_mount(geteuid(), getegid(), v->cfg.quota_bytes, v->cfg.quota_files);

		close(sv[0]);
		_exit(send_fd(sv[1], m, m < 0 ? m : 0) < 0 ? 1 : 0);
	}
	close(sv[1]);
	rc = recv_fd(sv[0], &fd);
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return pv_error_set(err, -rc,
				    "gofer: cannot create the workspace store for --disk-quota "
				    "(a tmpfs in a new user namespace): %s; run with "
				    "--disk-quota=0 to go without a quota",
				    strerror(-rc));
	if (fstat(fd, &st) < 0) {
		close(fd);
		return pv_error_set(err, errno, "gofer: store: %s", strerror(errno));
	}
	v->store_fd = fd;
	v->store_dev = st.st_dev;
	return 0;
}

/*
 * gofer_file_new - a new empty regular file for the view: an unnamed inode
 * of the store (quota) or a memfd named "pyvisor:@name".  The fd is
 * read-write, close-on-exec.  -ENOSPC when the store has no inode left.
 */
int gofer_file_new(struct gofer_view *v, const char *name, int *out)
{
	char mname[256];
	int fd;

	if (v->store_fd < 0) {
		snprintf(mname, sizeof(mname), GOFER_MEMFD_PREFIX ":%.200s", name);
		return gofer_memfd_new(mname, out);
	}
	fd = openat(v->store_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	*out = fd;
	return 0;
}

/*
 * gofer_quota_check - may one more object (file, directory or symlink) be
 * created?  The store's own inode count (files, open unlinked ones
 * included) plus the directories and symlinks the sandbox made must stay
 * within quota_files.  Returns 0 or -ENOSPC.
 */
int gofer_quota_check(const struct gofer_view *v)
{
	struct statfs sf;
	uint64_t files = 0;

	if (!v->cfg.quota_files)
		return 0;
	if (v->store_fd >= 0 && fstatfs(v->store_fd, &sf) == 0)
		/* minus the root and the directory handles the view holds */
		files = (uint64_t)(sf.f_files - sf.f_ffree) - 1 - v->nstore_dirs;
	else
		files = v->nfiles;
	return files + v->nobjs >= v->cfg.quota_files ? -ENOSPC : 0;
}

/* gofer_is_store_file - @st (of some fd) is a regular file of the view's store or memfd files. */
bool gofer_is_store_file(const struct gofer_view *v, const struct stat *st)
{
	return v->store_fd >= 0 && st->st_dev == v->store_dev && S_ISREG(st->st_mode);
}

/* gofer_is_store_dir - @st is a directory handle of the store (held or left over). */
bool gofer_is_store_dir(const struct gofer_view *v, const struct stat *st)
{
	return v->store_fd >= 0 && st->st_dev == v->store_dev && S_ISDIR(st->st_mode);
}
