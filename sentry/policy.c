/*
 * policy.c - the default view: what a sandboxed Python program sees.
 *
 * Read-only host binds: /usr (the interpreter, its libraries, the
 * data-science set, fonts, zoneinfo) and a short list of /etc entries the
 * runtime reads (dynamic linker cache, certificates, fontconfig,
 * matplotlibrc, Python's site configuration, alternatives).  Top-level
 * host symlinks such as /bin -> usr/bin are mirrored as view symlinks.
 * Synthesized: /etc/passwd, group, hostname, hosts, host.conf, resolv.conf,
 * nsswitch.conf (names come from /etc/hosts only: docs/network.md).  Devices:
 * null, zero, full, random, urandom.  In memory and writable: /workspace
 * (the working directory), /tmp, /home/sandbox (HOME), /dev/shm (POSIX
 * semaphores and shared memory of multiprocessing).  Everything else,
 * /root, other homes, /proc, /sys, /run, /var, the rest of /etc, does not
 * exist.
 */
#include "sentry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Host paths exposed read-only when present on the host. */
static const char *const host_ro[] = {
	"/usr",
	"/etc/ld.so.cache",
	"/etc/localtime",
	"/etc/timezone",
	"/etc/ssl",
	"/etc/ca-certificates",
	"/etc/fonts",
	"/etc/matplotlibrc",
	"/etc/python3",
	"/etc/python3.11",
	"/etc/python3.12",
	"/etc/python3.13",
	"/etc/alternatives",
	"/etc/mime.types",
	"/etc/locale.alias",
	/* fontconfig's system cache (derived from the fonts under /usr):
	 * fc-list, which matplotlib runs, reads it instead of rescanning. */
	"/var/cache/fontconfig",
};

/* Host files copied into the view as read-only synthesized files (not
 * bound: /sys as a whole stays out).  glibc's get_nprocs() and OpenBLAS
 * read these; without them glibc falls back to /proc/stat. */
static const char *const host_copies[] = {
	"/sys/devices/system/cpu/online",
	"/sys/devices/system/cpu/possible",
	"/sys/devices/system/cpu/present",
};

/* Names whose absence is expected and not worth an audit event: the
 * dynamic linker probes its preload list in every process, the zoneinfo
 * module probes an old tz path. */
static const char *const quiet_misses[] = {
	"/etc/ld.so.preload",
	"/etc/zoneinfo",
};

bool policy_miss_is_quiet(const char *view_path)
{
	for (size_t i = 0; i < PV_ARRAY_SIZE(quiet_misses); i++)
		if (!strcmp(view_path, quiet_misses[i]))
			return true;
	return false;
}

/* Top-level names that are symlinks on merged-/usr systems. */
static const char *const top_links[] = { "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" };

static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
				       "/dev/urandom" };

/* Expose host @path: a symlink becomes a view symlink with the same target
 * (resolved in the view), anything else a read-only bind.  Missing host
 * paths are skipped. */
static int expose(struct gofer_view *view, const char *path, struct pv_error *err)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : pv_error_set(err, errno,
			"cannot inspect host path %s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			return pv_error_set(err, errno, "readlink %s: %s", path, strerror(errno));
		target[n] = '\0';
		return gofer_view_add_symlink(view, path, target, err);
	}
	return gofer_view_bind_host(view, path, path, err);
}

/* Copy the small host file @path into the view (skipped if missing). */
static int copy_host_file(struct gofer_view *view, const char *path, struct pv_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[4096];
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return pv_error_set(err, errno, "cannot read host file %s: %s", path, strerror(errno));
	return gofer_view_add_synth_file(view, path, buf, (size_t)n, err);
}

static int add_text(struct gofer_view *view, const char *path, const char *text,
		    struct pv_error *err)
{
	return gofer_view_add_synth_file(view, path, text, strlen(text), err);
}

static const char *hosts_extra;

void policy_set_hosts_extra(const char *lines)
{
	hosts_extra = lines;
}

int policy_view_default(struct gofer_view *view, uid_t uid, gid_t gid, struct pv_error *err)
{
	char passwd[512], group[256], hosts[8192];
	int r;

	for (size_t i = 0; i < PV_ARRAY_SIZE(top_links); i++) {
		r = expose(view, top_links[i], err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < PV_ARRAY_SIZE(host_ro); i++) {
		r = expose(view, host_ro[i], err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < PV_ARRAY_SIZE(host_copies); i++) {
		r = copy_host_file(view, host_copies[i], err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < PV_ARRAY_SIZE(devices); i++) {
		r = gofer_view_add_device(view, devices[i], devices[i], err);
		if (r < 0)
			return r;
	}

	/* /etc/hosts: loopback names, then the names the network policy
	 * serves (docs/network.md: the sandbox has no resolver). */
	r = snprintf(hosts, sizeof(hosts), "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost\n%s",
		     hosts_extra ? hosts_extra : "");
	if (r < 0 || (size_t)r >= sizeof(hosts))
		return pv_error_set(err, E2BIG, "/etc/hosts: too many --allow-host names");

	/* Identity files: the sandbox user is "sandbox" with its real ids. */
	snprintf(passwd, sizeof(passwd),
		 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		 "sandbox:x:%u:%u:pyvisor sandbox:/home/sandbox:/bin/sh\n%s",
		 (unsigned)uid, (unsigned)gid,
		 uid == 65534 ? "" : "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	snprintf(group, sizeof(group), "root:x:0:\nsandbox:x:%u:\n%s", (unsigned)gid,
		 gid == 65534 ? "" : "nogroup:x:65534:\n");
	if ((r = add_text(view, "/etc/passwd", passwd, err)) < 0 ||
	    (r = add_text(view, "/etc/group", group, err)) < 0 ||
	    (r = add_text(view, "/etc/hostname", "sandbox\n", err)) < 0 ||
	    (r = add_text(view, "/etc/hosts", hosts, err)) < 0 ||
	    (r = add_text(view, "/etc/host.conf", "multi on\n", err)) < 0 ||
	    (r = add_text(view, "/etc/nsswitch.conf",
			  "passwd: files\ngroup: files\nshadow: files\nhosts: files\n"
			  "networks: files\nprotocols: files\nservices: files\n", err)) < 0 ||
	    (r = add_text(view, "/etc/resolv.conf",
			  "# pyvisor: no name resolution inside the sandbox\n", err)) < 0)
		return r;

	if ((r = gofer_view_add_mem_dir(view, "/workspace", 0755, err)) < 0 ||
	    (r = gofer_view_add_mem_dir(view, "/tmp", 01777, err)) < 0 ||
	    (r = gofer_view_add_mem_dir(view, "/home/sandbox", 0755, err)) < 0 ||
	    (r = gofer_view_add_mem_dir(view, "/dev/shm", 01777, err)) < 0)
		return r;

	/* /proc for the calling task, and the /dev links into it. */
	if ((r = procfs_register(view, err)) < 0 ||
	    (r = gofer_view_add_symlink(view, "/dev/fd", "/proc/self/fd", err)) < 0 ||
	    (r = gofer_view_add_symlink(view, "/dev/stdin", "/proc/self/fd/0", err)) < 0 ||
	    (r = gofer_view_add_symlink(view, "/dev/stdout", "/proc/self/fd/1", err)) < 0 ||
	    (r = gofer_view_add_symlink(view, "/dev/stderr", "/proc/self/fd/2", err)) < 0)
		return r;
	return 0;
}

int policy_view_mount(struct gofer_view *view, const char *spec, struct pv_error *err)
{
	char buf[2 * PATH_MAX + 8], *host, *sandbox, *mode;

	if (strlen(spec) >= sizeof(buf))
		return pv_error_set(err, ENAMETOOLONG, "mount specification too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	host = buf;
	sandbox = strchr(buf, ':');
	if (!sandbox)
		return pv_error_set(err, EINVAL, "expected HOST:SANDBOX[:ro]");
	*sandbox++ = '\0';
	mode = strchr(sandbox, ':');
	if (mode) {
		*mode++ = '\0';
		if (strcmp(mode, "ro") && strcmp(mode, "rw"))
			return pv_error_set(err, EINVAL, "mode '%s' is not ro or rw", mode);
	}
	if (host[0] != '/')
		return pv_error_set(err, EINVAL, "host path '%s' is not absolute", host);
	if (mode && !strcmp(mode, "rw"))
		return gofer_view_bind_host_rw(view, host, sandbox, err);
	return gofer_view_bind_host(view, host, sandbox, err);
}

int policy_view_hide(struct gofer_view *view, const char *path, struct pv_error *err)
{
	return gofer_view_hide(view, path, err);
}

/* Programs the sandbox may exec by default (issue: "the interpreter and a
 * small list of common tools"), when the host has them. */
static const char *const default_exec[] = {
	"python3", "sh", "ls", "cat", "head", "tail", "wc", "sort", "grep", "env",
	"uname", "date", "true", "false", "echo", "sleep", "fc-list",
};

int policy_program_resolve(struct gofer_view *view, const char *name, char *host,
			   size_t host_size, struct stat *st, struct pv_error *err)
{
	static const char *const path_dirs[] = { "/usr/local/bin", "/usr/bin", "/bin" };
	bool has_slash = strchr(name, '/') != NULL;
	char candidate[PATH_MAX], link[64];

	for (size_t i = 0; i < (has_slash ? 1 : PV_ARRAY_SIZE(path_dirs)); i++) {
		struct gofer_lookup_info info = { 0 };
		_cleanup_close_ int fd = -1;
		ssize_t n;

		if (has_slash)
			snprintf(candidate, sizeof(candidate), "%s", name);
		else
			snprintf(candidate, sizeof(candidate), "%s/%s", path_dirs[i], name);
		if (gofer_access(view, "/workspace", candidate, X_OK, 0, &info) < 0)
			continue;
		fd = gofer_open(view, "/workspace", candidate, O_PATH, 0, &info);
		if (fd < 0 || fstat(fd, st) < 0 || !S_ISREG(st->st_mode))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, host, host_size - 1);
		if (n <= 0)
			continue;
		host[n] = '\0';
		/* Only files of read-only host binds have an identity the sandbox
		 * cannot change; in-memory files are the sandbox's own. */
		if (host[0] != '/' || strstr(host, "memfd:"))
			return pv_error_set(err, EPERM,
					    "%s: only programs from the read-only host part of the "
					    "view can be run", name);
		return 0;
	}
	return pv_error_set(err, ENOENT, "%s: not found in the sandbox's view (or not executable)",
			    name);
}

int policy_exec_allow_add(struct gofer_view *view, const char *name, bool required,
			  struct sentry_exec_allow **list, size_t *n, struct pv_error *err)
{
	struct sentry_exec_allow *l;
	char host[PATH_MAX];
	struct stat st;
	int r = policy_program_resolve(view, name, host, sizeof(host), &st, err);

	if (r < 0)
		return required ? r : 0;
	for (size_t i = 0; i < *n; i++)
		if ((*list)[i].dev == st.st_dev && (*list)[i].ino == st.st_ino)
			return 0;
	l = realloc(*list, (*n + 1) * sizeof(*l));
	if (!l)
		return pv_error_set(err, ENOMEM, "out of memory");
	*list = l;
	l[*n].dev = st.st_dev;
	l[*n].ino = st.st_ino;
	l[*n].view_path = strdup(name);
	l[*n].host_path = strdup(host);
	if (!l[*n].view_path || !l[*n].host_path) {
		free(l[*n].view_path);
		free(l[*n].host_path);
		return pv_error_set(err, ENOMEM, "out of memory");
	}
	(*n)++;
	return 0;
}

int policy_exec_default(struct gofer_view *view, struct sentry_exec_allow **list, size_t *n,
			struct pv_error *err)
{
	for (size_t i = 0; i < PV_ARRAY_SIZE(default_exec); i++) {
		int r = policy_exec_allow_add(view, default_exec[i], false, list, n, err);

		if (r < 0)
			return r;
	}
	return 0;
}

void policy_exec_free(struct sentry_exec_allow *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].view_path);
		free(list[i].host_path);
	}
	free(list);
}
