/*
 * landlock.c - a Landlock ruleset on the sandboxed tasks (see loader.h).
 *
 * Defence in depth behind the seccomp filter: the sandbox never needs to
 * open a host path itself (every path call is trapped, the sentry opens the
 * file and injects the fd, and fds opened outside a Landlock domain keep all
 * their rights), so the ruleset handles every filesystem right the kernel
 * knows and grants only what the kernel's own execve of the loader needs:
 * READ_FILE and EXECUTE on the program and on its ELF interpreter (for a
 * "#!" script: the script, its interpreter and that one's ELF
 * interpreter).  Should a
 * filter or handler bug ever let an open, a mkdir, a rename or an exec
 * reach the kernel, it fails with EACCES.  On ABI 6 and later the tasks can
 * also no longer signal processes outside the sandbox or connect to
 * abstract unix sockets created outside it.
 *
 * Sources: landlock(7), landlock_create_ruleset(2), landlock_add_rule(2),
 * landlock_restrict_self(2), elf(5) (PT_INTERP).
 */
#include "loader.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"

int loader_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return v < 0 ? 0 : (int)v;
}

/* Every filesystem right known to @abi. */
static __u64 fs_rights(int abi)
{
	__u64 r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0-12 */

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

/* The PT_INTERP path of the ELF file @fd into @out (@size bytes).  Returns
 * 0, or -ENOENT for a static binary (no interpreter), or -errno. */
static int elf_interp(int fd, char *out, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -EIO;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph))
		return -ENOEXEC;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			return -EIO;
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz == 0 || ph.p_filesz > size)
			return -ENAMETOOLONG;
		if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			return -EIO;
		out[ph.p_filesz - 1] = '\0';
		return 0;
	}
	return -ENOENT;
}

/* Grant READ_FILE | EXECUTE on the file at @path. */
static int allow_exec(int ruleset, const char *path, struct pv_error *err)
{
	struct landlock_path_beneath_attr pb = {
		.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE,
	};
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0)
		return pv_error_set(err, errno, "Landlock: %s: %s", path, strerror(errno));
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return pv_error_set(err, errno, "Landlock: rule for %s: %s", path, strerror(errno));
	return 0;
}

/* The interpreter of a "#!" script @fd into @out (@size bytes).  Returns
 * 0, -ENOEXEC when @fd is not a script, or -errno. */
static int script_interp(int fd, char *out, size_t size)
{
	char line[256];
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
	size_t len;
	char *p;

	if (n < 2 || line[0] != '#' || line[1] != '!')
		return -ENOEXEC;
	line[n] = '\0';
	p = line + 2;
	p += strspn(p, " \t");
	len = strcspn(p, " \t\n");
	if (len == 0 || p[0] != '/' || len >= size)
		return -ENOEXEC;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

/* Grant what the kernel's execve of @path needs: @path itself, its ELF
 * interpreter, and for a script its interpreter (one level, as
 * binfmt_script(5) allows the interpreter to be a binary only). */
static int allow_program(int ruleset, const char *path, int depth, struct pv_error *err)
{
	char interp[PATH_MAX];
	_cleanup_close_ int exe = -1;
	int r;

	r = allow_exec(ruleset, path, err);
	if (r < 0)
		return r;
	exe = open(path, O_RDONLY | O_CLOEXEC);
	if (exe < 0)
		return pv_error_set(err, errno, "Landlock: %s: %s", path, strerror(errno));
	r = script_interp(exe, interp, sizeof(interp));
	if (r == 0)
		return depth ? 0 : allow_program(ruleset, interp, depth + 1, err);
	r = elf_interp(exe, interp, sizeof(interp));
	if (r == 0)
		return allow_exec(ruleset, interp, err);
	if (r == -ENOENT || r == -ENOEXEC)
		return 0; /* static binary, or not ELF: nothing more to grant */
	return pv_error_set(err, -r, "Landlock: reading %s: %s", path, strerror(-r));
}

int loader_landlock_build(const char *exec_path, int *abi, struct pv_error *err)
{
	struct pv_landlock_ruleset_attr attr = { 0 };
	int ruleset, r;

	*abi = loader_landlock_abi();
	if (*abi < 1)
		return pv_error_set(err, EOPNOTSUPP, "Landlock is not available on this kernel");
	attr.handled_access_fs = fs_rights(*abi);
	if (*abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return pv_error_set(err, errno, "landlock_create_ruleset: %s", strerror(errno));

	r = allow_program(ruleset, exec_path, 0, err);
	if (r < 0) {
		close(ruleset);
		return r;
	}
	return ruleset;
}

int loader_landlock_allow(int ruleset_fd, const char *path, struct pv_error *err)
{
	return allow_program(ruleset_fd, path, 0, err);
}

int loader_landlock_apply(int ruleset_fd)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0) < 0)
		return -errno;
	return 0;
}
