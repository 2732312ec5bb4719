/*
 * loader.h - builds the seccomp filter and starts the sandboxed process.
 *
 * The loader forks the first process of the run and, in the child, between
 * fork and exec: makes it a session leader without a terminal, wires fds
 * 0/1/2 (stdin /dev/null unless asked) and closes every other fd, turns core
 * dumps off, drops to the sandbox uid/gid when started as root, sets
 * no_new_privs, installs the filter with SECCOMP_FILTER_FLAG_NEW_LISTENER
 * (and WAIT_KILLABLE_RECV where the kernel has it, so that a signal cannot
 * turn a queued notification into a spurious EINTR), hands the listener to
 * the parent and execs the program.  Only this child may print and _exit on
 * failure (STYLE.md); it reports the failing step to the parent over a
 * close-on-exec pipe instead of printing into the program's streams.
 */
#ifndef PYVISOR_LOADER_LOADER_H
#define PYVISOR_LOADER_LOADER_H

#include <linux/filter.h>
#include <stdbool.h>
#include <sys/types.h>

#include "pv_util.h"

struct sentry_config;

/* A classic BPF program ready for seccomp(SECCOMP_SET_MODE_FILTER). */
struct loader_filter {
	struct sock_filter *insns;	/* malloc'd */
	unsigned short len;		/* number of instructions */
};

/*
 * loader_filter_build - generate the filter from syscalls.def: native
 * architecture only (any other arch, and any x32 number, kills the
 * process), PV_ALLOW rows allowed, PV_ALLOW_IF rows allowed when their
 * register rule matches, PV_ENOSYS rows answered ENOSYS, and everything
 * else, including numbers not in the table, sent to the sentry
 * (SECCOMP_RET_USER_NOTIF).  Returns 0 or -errno with @err set.  Free with
 * loader_filter_free().
 */
int loader_filter_build(struct loader_filter *f, struct pv_error *err);

/* loader_filter_free - release @f's program.  Safe on a zeroed struct. */
void loader_filter_free(struct loader_filter *f);

/*
 * loader_filter_allows - evaluate @f for syscall @nr with @args on x86_64
 * in-process (no kernel involved) and return the seccomp action
 * (SECCOMP_RET_ALLOW, SECCOMP_RET_USER_NOTIF, SECCOMP_RET_ERRNO|e,
 * SECCOMP_RET_KILL_PROCESS...).  @arch is the audit arch (AUDIT_ARCH_X86_64
 * for native calls).  Used by tests and `pyvisor doctor`.
 */
unsigned int loader_filter_eval(const struct loader_filter *f, unsigned int arch, int nr,
				const unsigned long long args[6]);

/* The started child. */
struct loader_child {
	pid_t pid;
	int pidfd;	/* pidfd_open(pid) */
	int notify_fd;	/* the seccomp listener, now the supervisor's */
	int out_fd;	/* read end of the child's stdout */
	int err_fd;	/* read end of the child's stderr */
	int status_fd;	/* read end of the close-on-exec status pipe: EOF = exec'd */
};

/*
 * loader_spawn - fork and prepare the child for @cfg with @filter; return
 * once the listener is in the supervisor's hands.  The child is then blocked
 * in its execve(), which reaches the sentry as the run's first notification
 * (the loader's exec).  Returns 0 or -errno with @err naming the failed step
 * (the child, if any, is killed and reaped).
 */
int loader_spawn(const struct sentry_config *cfg, const struct loader_filter *filter,
		 struct loader_child *child, struct pv_error *err);

/*
 * loader_status_read - after the child exec'd or failed: read the status
 * pipe.  Returns 0 when the exec happened (EOF), or -errno of the failed
 * step with @err naming it.
 */
int loader_status_read(int status_fd, struct pv_error *err);

/*
 * Network namespace (loader/netns.c).
 *
 * loader_netns_enter - in the child, before privileges are dropped: enter
 * a private network namespace (with a user namespace of the identity
 * mapping when not privileged) and bring its loopback up.  Async-signal-
 * safe.  Returns 0 or -errno; on failure the process may be left in a new
 * user namespace without a private network one (the sentry checks which
 * namespace the child really is in with loader_netns_inode()).
 */
int loader_netns_enter(void);

/*
 * loader_netns_probe - try loader_netns_enter() in a short-lived child.
 * Returns 0 when a private network namespace with loopback is available,
 * else -errno with @err saying why.  For `pyvisor doctor`.
 */
int loader_netns_probe(struct pv_error *err);

/* loader_netns_inode - the inode of /proc/@pid/ns/net, or 0 if unreadable. */
ino_t loader_netns_inode(pid_t pid);

/*
 * loader_rlimits_apply - set the per-task rlimits of @l on the calling
 * process (the loader child, after dropping privileges and before exec;
 * async-signal-safe): RLIMIT_DATA = memory_bytes (RLIMIT_AS is left
 * alone: it would count reserved address space, see loader/rlimit.c),
 * RLIMIT_CPU = cpu_ms rounded up to seconds (hard limit one second more),
 * RLIMIT_NPROC = max_procs, RLIMIT_NOFILE = max_open_files, RLIMIT_FSIZE =
 * max_file_size.  Zero fields are left alone; a value above the inherited
 * hard limit is lowered to it.  Returns 0 or -errno of the first failure.
 */
struct sentry_limits;
int loader_rlimits_apply(const struct sentry_limits *l);

/*
 * loader_landlock_build - create the Landlock ruleset for the sandboxed
 * tasks (loader/landlock.c): every filesystem access right this kernel's
 * Landlock ABI knows is handled, and only READ_FILE | EXECUTE on
 * @exec_path, on its ELF interpreter and, for a "#!" script, on the script's
 * interpreter and its ELF interpreter is granted, so that the kernel's
 * own execve of the loader works and nothing else is opened by path from
 * inside (the sentry opens files itself and injects the fds, which carry
 * all rights).  On ABI 6 and later, signals and abstract unix sockets are
 * scoped to the sandbox too.  Returns the ruleset fd (O_CLOEXEC, owned by
 * the caller), -EOPNOTSUPP when Landlock is unavailable, or another -errno
 * with @err set.  *@abi receives the ABI version (0 when unavailable).
 */
int loader_landlock_build(const char *exec_path, int *abi, struct pv_error *err);

/*
 * loader_landlock_allow - also grant what the kernel's execve of @path
 * needs (as for the program of loader_landlock_build) in ruleset
 * @ruleset_fd: for every program on the exec allowlist, which the sentry
 * lets the sandbox exec (sentry/exec.c).  Returns 0 or -errno with @err set.
 */
int loader_landlock_allow(int ruleset_fd, const char *path, struct pv_error *err);

/*
 * loader_landlock_apply - restrict the calling process (the loader child)
 * with @ruleset_fd; sets no_new_privs first (landlock_restrict_self(2)
 * requires it).  Async-signal-safe.  Returns 0 or -errno.
 */
int loader_landlock_apply(int ruleset_fd);

/*
 * loader_landlock_abi - the Landlock ABI version of the running kernel,
 * probed with landlock_create_ruleset(NULL, 0, VERSION); 0 when Landlock
 * is not built in or disabled.
 */
int loader_landlock_abi(void);

#endif
