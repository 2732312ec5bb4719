/*
 * netns.c - the sandbox's private network namespace (see loader.h).
 *
 * The first process of a run enters a network namespace of its own before
 * it drops privileges, and brings its loopback interface up.  Inside it,
 * 127.0.0.1 and ::1 are the sandbox's own: nothing on the host can connect
 * in, and no host service on the host's loopback is reachable.  Abstract
 * AF_UNIX names are scoped by network namespace too.
 *
 * Started as root, a plain unshare(CLONE_NEWNET) suffices.  Unprivileged,
 * the process first needs a user namespace in which it holds
 * CAP_NET_ADMIN: unshare(CLONE_NEWUSER | CLONE_NEWNET) with the identity
 * mapping of its own uid and gid (so the program keeps its ids, and its
 * capabilities in the new namespace are gone at execve because the uid is
 * not 0 there).  A loader that already made a user namespace (issue 4) can
 * call this after it: the plain unshare is tried first.
 *
 * Sources: unshare(2), user_namespaces(7) (uid_map, gid_map, setgroups),
 * network_namespaces(7), netdevice(7) (SIOCGIFFLAGS, SIOCSIFFLAGS),
 * capabilities(7) (execve of a non-root uid clears the permitted set).
 */
#include "loader.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Write @text to @path (async-signal-safe).  Returns 0 or -errno. */
static int write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n != (ssize_t)len) {
		int e = n < 0 ? errno : EIO;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

/* Format "ID ID 1\n" into @buf without stdio (async-signal-safe). */
static void map_line(char *buf, size_t size, unsigned int id)
{
	char digits[16];
	size_t n = 0, k = 0;

	do {
		digits[n++] = (char)('0' + id % 10);
		id /= 10;
	} while (id && n < sizeof(digits));
	for (int rep = 0; rep < 2; rep++) {
		for (size_t i = n; i > 0 && k + 1 < size; i--)
			buf[k++] = digits[i - 1];
		if (k + 1 < size)
			buf[k++] = ' ';
	}
	if (k + 3 < size) {
		buf[k++] = '1';
		buf[k++] = '\n';
	}
	buf[k] = '\0';
}

static int loopback_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int r = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		r = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			r = -errno;
	}
	close(fd);
	return r;
}

int loader_netns_enter(void)
{
	char uid_map[48], gid_map[48];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int r;

	if (unshare(CLONE_NEWNET) < 0) {
		if (errno != EPERM)
			return -errno;
		map_line(uid_map, sizeof(uid_map), uid);
		map_line(gid_map, sizeof(gid_map), gid);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			return -errno;
		r = write_file("/proc/self/setgroups", "deny");
		if (r == 0)
			r = write_file("/proc/self/uid_map", uid_map);
		if (r == 0)
			r = write_file("/proc/self/gid_map", gid_map);
		if (r < 0)
			return r;
	}
	return loopback_up();
}

int loader_netns_probe(struct pv_error *err)
{
	int status, r;
	pid_t pid = fork();

	if (pid < 0)
		return pv_error_set(err, errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		r = loader_netns_enter();
		_exit(r < 0 ? (-r & 0xff) : 0);
	}
	while ((r = (int)waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return pv_error_set(err, errno, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status))
		return pv_error_set(err, EIO, "network namespace probe died");
	if (WEXITSTATUS(status))
		return pv_error_set(err, WEXITSTATUS(status),
				    "no private network namespace: %s",
				    strerror(WEXITSTATUS(status)));
	return 0;
}

ino_t loader_netns_inode(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &st) < 0)
		return 0;
	return st.st_ino;
}
