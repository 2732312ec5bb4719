/*
 * sentry.h - the supervisor: event loop, task table, guest memory, audit
 * log and result of one sandboxed run.
 *
 * One struct sentry supervises one run: it owns the seccomp listener of the
 * sandboxed process tree, the pipes carrying its stdout and stderr, the wall
 * clock timer and the view (gofer).  sentry_run() loops until the first
 * process of the run exits or the timer fires, then kills every process of
 * the run and returns what happened.
 *
 * Kernel interfaces relied on: seccomp_unotify(2) (RECV, SEND, ADDFD with
 * SECCOMP_ADDFD_FLAG_SEND, ID_VALID), pidfd_open(2), pidfd_getfd(2),
 * pidfd_send_signal(2), process_vm_readv(2), PR_SET_CHILD_SUBREAPER
 * (prctl(2)), signalfd(2), timerfd_create(2), epoll(7).
 */
#ifndef PYVISOR_SENTRY_SENTRY_H
#define PYVISOR_SENTRY_SENTRY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "gofer.h"
#include "pv_util.h"
#include "syscalls.h"

/* A process (thread group) of the sandbox. */
struct sentry_proc {
	pid_t tgid;
	int pidfd;		/* pidfd_open(tgid); pins the identity for signals */
	char cwd[PATH_MAX];	/* virtual working directory: canonical view path */
	mode_t umask;		/* emulated umask (the kernel's is never used) */
	unsigned int ntasks;	/* tasks pointing here */
	bool loader_exec;	/* the loader's exec is still to come (first process only) */
	struct sentry_proc *next;
};

/* A task (thread) of the sandbox, as seen in notifications (req->pid) and
 * in ptrace stops. */
struct sentry_task {
	pid_t tid;
	struct sentry_proc *proc;
	bool started;		/* its first ptrace stop (attach) has been seen */
	bool listening;		/* in group-stop, resumed with PTRACE_LISTEN */
	pid_t vfork_child;	/* blocked in vfork until this child execs or exits */
	struct sentry_task *next;	/* hash chain */
};

struct net_policy;
struct net_state;
/* A wait(2) status collected while the sentry waited for one task in
 * particular (sentry/exec.c), kept to be handled in order afterwards. */
struct sentry_wait_event {
	pid_t pid;
	int status;
};

/* Programs the sandbox may exec, by host identity (sentry/execpolicy.c). */
struct sentry_exec_allow {
	dev_t dev;
	ino_t ino;
	char *view_path;	/* for messages */
	char *host_path;	/* the file the kernel execs (Landlock rules) */
};

/* What a run produced.  Strings are owned by the struct; free with
 * sentry_outcome_free(). */
enum sentry_status {
	SENTRY_STATUS_OK,	/* exited 0 */
	SENTRY_STATUS_ERROR,	/* exited non-zero */
	SENTRY_STATUS_TIMEOUT,	/* killed by pyvisor at the wall-clock limit */
	SENTRY_STATUS_KILLED,	/* died of a signal pyvisor did not send */
	SENTRY_STATUS_MEMORY_LIMIT,	/* killed by pyvisor: the run used more than --memory */
	SENTRY_STATUS_CPU_LIMIT,	/* killed at --cpu-seconds (by pyvisor, or RLIMIT_CPU) */
};

/*
 * Resource limits of a run (sentry/limits.c, docs/limits.md).  Byte and
 * count values; 0 means "no limit" for every field.  The loader applies
 * the per-task part as rlimits in the child before exec; the supervisor
 * accounts for the run as a whole (every process of the run) and ends the
 * run when a whole-run limit is crossed.
 */
struct sentry_limits {
	uint64_t memory_bytes;	/* --memory: RLIMIT_DATA per task, run total */
	uint64_t cpu_ms;	/* --cpu-seconds: RLIMIT_CPU per process, run total */
	uint64_t max_procs;	/* --max-procs: tasks (threads count), RLIMIT_NPROC */
	uint64_t max_open_files;	/* --max-open-files: RLIMIT_NOFILE per process */
	uint64_t max_file_size;	/* --max-file-size: RLIMIT_FSIZE (EFBIG) */
};

/* What the run used, sampled by the supervisor (peaks over the run). */
struct sentry_usage {
	uint64_t memory_peak;	/* bytes: sum over the run's processes of RssAnon + RssShmem */
	uint64_t memory_now;	/* bytes at the last sample */
	uint64_t cpu_ms;	/* user + system CPU of every process of the run */
	uint64_t tasks_peak;	/* most tasks (threads) alive at once */
	uint64_t fds_peak;	/* most fds open in one process */
	uint64_t samples;	/* number of samples taken */
};

struct sentry_stream {
	char *data;		/* captured bytes (malloc'd), at most the cap */
	size_t len;
	bool truncated;		/* more bytes were written than kept */
	uint64_t total;		/* bytes the program wrote to the stream */
};

struct sentry_outcome {
	enum sentry_status status;
	int exit_code;		/* valid when status is OK or ERROR */
	int signal;		/* valid when status is KILLED (or the timeout's SIGKILL) */
	struct sentry_stream out, err;
	uint64_t duration_ms;
	struct sentry_usage usage;	/* sampled by sentry/limits.c */
	uint64_t violations;	/* audit events written (denied actions) */
	void *audit_events;	/* json_t array of up to SENTRY_AUDIT_KEEP events */
	bool audit_events_truncated;
	void *network;		/* json_t "network" object (sentry/net.c), or NULL */
};

#define SENTRY_AUDIT_KEEP 100

/* epoll tag of a process's pidfd: data.u64 = tgid << 8 | SENTRY_TAG_PROC. */
#define SENTRY_TAG_PROC 7
/* epoll tag of a network operation (sentry/net.c): slot << 8 | SENTRY_TAG_NET. */
#define SENTRY_TAG_NET 8
/* epoll tag of the limits sampling timer (sentry/limits.c): exactly this
 * value; the low byte 9 is no other tag's. */
#define SENTRY_TAG_SAMPLE 9

/* How to run.  All strings are borrowed for the duration of sentry_run(). */
struct sentry_config {
	const char *exec_path;	/* host path the loader execs (a file of a host bind) */
	char *const *argv;	/* argv of the program */
	char *const *envp;	/* complete environment */
	const char *cwd;	/* initial virtual working directory */
	double timeout_s;	/* wall clock limit, seconds (> 0) */
	size_t max_output;	/* bytes kept per stream */
	bool stream;		/* copy output to our stdout/stderr as it comes */
	bool pass_stdin;	/* program reads our stdin (else /dev/null) */
	uid_t uid;		/* credentials of the sandboxed program */
	gid_t gid;
	int audit_fd;		/* append audit JSON lines here, or -1 */
	const struct net_policy *net_policy;	/* egress allowlist, or NULL: none */
	struct sentry_limits limits;	/* resource limits (0 fields: none) */
	bool landlock;		/* restrict the child with landlock_fd */
	int landlock_fd;	/* Landlock ruleset (loader_landlock_build) when landlock */
	const struct sentry_exec_allow *exec_allow;	/* programs the sandbox may exec */
	size_t nexec_allow;
};

struct sentry {
	const struct sentry_config *cfg;
	struct gofer_view *view;	/* borrowed */
	int notify_fd;			/* seccomp listener */
	int epoll_fd;
	pid_t child;			/* first process of the run */
	char run_id[17];
	struct sentry_task *tasks[1024];	/* hash by tid */
	struct sentry_proc *procs;
	struct sentry_outcome *outcome;
	uint64_t start_ns;
	bool addfd_send;		/* kernel has SECCOMP_ADDFD_FLAG_SEND */
	struct net_state *net;		/* sentry/net.c */
	struct limits_state *limits;	/* whole-run accounting (sentry/limits.c) */
	bool main_exited;		/* the first process has exited */
	int main_status;		/* its wait(2) status */
	struct sentry_wait_event *deferred;	/* events held back during an exec */
	size_t ndeferred, cap_deferred;
	struct seccomp_notif *held;	/* notifications received during an exec */
	size_t nheld, cap_held;
};

/*
 * sentry_run - run @cfg->argv under the filter @filter (a BPF program built
 * by loader_filter_build) inside @view and fill @outcome.  Returns 0 when the
 * run happened (whatever its status), or a negative errno with @err set when
 * the sandbox could not be built or supervised (the caller reports 125).
 * Every process of the run is gone when it returns, in both cases.
 */
struct loader_filter;
int sentry_run(const struct sentry_config *cfg, struct gofer_view *view,
	       const struct loader_filter *filter, struct sentry_outcome *outcome,
	       struct pv_error *err);

/* sentry_outcome_free - release the strings and events of @o. */
void sentry_outcome_free(struct sentry_outcome *o);

/*
 * Task table (sentry/task.c).
 *
 * sentry_task_get - the task for notifying tid @tid, created on first sight:
 * a task is admitted only if it descends from the supervisor (every process
 * of the run does: the supervisor is their child subreaper), found by walking
 * PPid in /proc.  A new process inherits cwd and umask from its parent
 * process when the parent is known.  Returns NULL if @tid is not a sandbox
 * task or has gone (the caller denies).
 */
struct sentry_task *sentry_task_get(struct sentry *s, pid_t tid);

/* sentry_proc_fields - read the proc(5) file @path once (status, fdinfo:
 * "Name:\tvalue" lines, at most 2 KiB) and parse the integer value of each
 * of the @n fields @names into @vals.  Returns 0, -errno when the file
 * cannot be opened, or -EIO when a field is missing. */
int sentry_proc_fields(const char *path, const char *const *names, long *vals, size_t n);

/* sentry_proc_find - the known process with thread group id @tgid, or
 * NULL. */
struct sentry_proc *sentry_proc_find(struct sentry *s, pid_t tgid);

/* sentry_proc_admit - the process @tgid if it is part of the sandbox
 * (known, or a descendant of the supervisor that is admitted now), else
 * NULL. */
struct sentry_proc *sentry_proc_admit(struct sentry *s, pid_t tgid);

/* sentry_proc_reap - forget process @proc and its tasks (it has exited). */
void sentry_proc_reap(struct sentry *s, struct sentry_proc *proc);

/* sentry_tasks_free - forget every task and process. */
void sentry_tasks_free(struct sentry *s);

/*
 * sentry_kill_all - SIGKILL every process of the run (every descendant of
 * the supervisor, whatever its session or process group) and reap them,
 * until none is left.  Uses pidfds so that a recycled pid is never hit.
 */
void sentry_kill_all(struct sentry *s);

/*
 * ptrace platform (sentry/ptrace.c).  The supervisor traces every task of
 * the run: PTRACE_SEIZE of the first process before it execs, with
 * PTRACE_O_TRACEFORK, TRACEVFORK, TRACECLONE (every later task is attached
 * from its creation), TRACEEXEC, TRACESYSGOOD and EXITKILL (if the
 * supervisor dies, the kernel kills every tracee).  Source: ptrace(2).
 */

/* PTRACE_SEIZE options used for the run. */
unsigned long sentry_ptrace_options(void);

/*
 * sentry_ptrace_event - handle one wait(2) status @status of task @pid:
 * register tasks at fork/clone events, follow exec, keep group-stops
 * (PTRACE_LISTEN), deliver signals, forget exited tasks, note the exit of
 * the first process.  Resumes the task as appropriate.
 */
void sentry_ptrace_event(struct sentry *s, pid_t pid, int status);

/* sentry_ptrace_drain - collect every pending wait(2) status (WNOHANG) and
 * handle it, deferred ones first. */
void sentry_ptrace_drain(struct sentry *s);

/*
 * sentry_exec - carry out an exec the handler has checked: @binfd (owned;
 * closed here) is the program the sentry opened and checked, @argv/@envp the
 * sentry's own NULL-terminated copies.  Every task sharing the caller's
 * memory is stopped, the call is rewritten with ptrace into
 * execveat(fd, "", argv', envp', AT_EMPTY_PATH) on memory the sentry wrote
 * and no other task can reach, and only that rewritten call is let through.
 * Returns the answer; .answered is set when the notification was consumed.
 * Design and proof: docs/exec.md.
 */
struct syscall_ret sentry_exec(struct syscall_ctx *ctx, int binfd, char *const *argv,
			       char *const *envp);

/*
 * Notifications (sentry/supervisor.c).
 *
 * sentry_notif_dispatch - answer notification @req (received by the caller):
 * find the task and the table row, run the handler, and reply (value,
 * errno, injected fd or CONTINUE) unless the handler answered itself.
 */
void sentry_notif_dispatch(struct sentry *s, const struct seccomp_notif *req);

/* sentry_notif_hold - keep @req (copied) to be dispatched by the main loop
 * later, in arrival order.  Returns 0 or -ENOMEM. */
int sentry_notif_hold(struct sentry *s, const struct seccomp_notif *req);

/* sentry_notif_held - true when a held notification belongs to @tid. */
bool sentry_notif_held(struct sentry *s, pid_t tid);

/*
 * Guest memory (sentry/guestmem.c).  All copies are bounded and go through
 * process_vm_readv(2)/process_vm_writev(2) of the notifying task.  After
 * every read the notification id is checked with
 * SECCOMP_IOCTL_NOTIF_ID_VALID (seccomp_unotify(2)), so that a handler
 * never acts on memory of a task that has gone and been replaced.
 */

/* guestmem_read - copy @len bytes at guest address @addr into @buf.
 * Returns 0, -EFAULT (unmapped or partial), -ESRCH (notification gone). */
int guestmem_read(struct syscall_ctx *ctx, uint64_t addr, void *buf, size_t len);

/* guestmem_read_path - copy the NUL-terminated string at @addr into @buf
 * (@size bytes, at most PATH_MAX).  Returns its length, -EFAULT,
 * -ENAMETOOLONG (no NUL within @size - 1 bytes), -ESRCH. */
int guestmem_read_path(struct syscall_ctx *ctx, uint64_t addr, char *buf, size_t size);

/* guestmem_write - copy @len bytes of @buf to guest address @addr.  Returns
 * 0, -EFAULT (unmapped, read-only or partial), -ESRCH. */
int guestmem_write(struct syscall_ctx *ctx, uint64_t addr, const void *buf, size_t len);

/* guestmem_read_str - copy the NUL-terminated string at @addr into @buf
 * (@size bytes).  Returns its length, -EFAULT, -E2BIG (no NUL within @size
 * - 1 bytes), -ESRCH. */
int guestmem_read_str(struct syscall_ctx *ctx, uint64_t addr, char *buf, size_t size);

/* guestmem_write_stopped - copy @len bytes of @buf to @addr in task @tid,
 * which must be in a ptrace-stop of this supervisor (so its identity and
 * memory cannot change under the write).  Returns 0 or -EFAULT. */
int guestmem_write_stopped(pid_t tid, uint64_t addr, const void *buf, size_t len);

/* sentry_notif_valid - 0 if the notification is still pending, else
 * -ESRCH. */
int sentry_notif_valid(struct syscall_ctx *ctx);

/*
 * sentry_task_getfd - duplicate the task's fd @fd into the supervisor with
 * pidfd_getfd(2) (same open file description).  Returns the new fd (owned
 * by the caller, O_CLOEXEC) or -EBADF when the task has no such fd.
 */
int sentry_task_getfd(struct syscall_ctx *ctx, int fd);

/*
 * sentry_at_base - the view path that relative paths of a *at() call with
 * @dirfd resolve against: the process's cwd for AT_FDCWD, else the view path
 * of the directory behind @dirfd.  Writes to @out (PATH_MAX bytes).  Returns
 * 0, -EBADF (no such fd or not from the view), -ENOTDIR, -ENOENT.
 */
int sentry_at_base(struct syscall_ctx *ctx, int dirfd, char *out);

/*
 * Audit log (sentry/audit.c).
 *
 * audit_event_emit - record one denied action of the notifying task: append
 * it as a JSON line to cfg->audit_fd (when set), keep it for the result (the
 * first SENTRY_AUDIT_KEEP), count it in outcome->violations.  @rule,
 * @path, @address and @detail may be NULL.  See docs/audit.md.
 */
void audit_event_emit(struct syscall_ctx *ctx, const char *verdict, int err, const char *rule,
		      const char *path, const char *address, const char *detail);

/*
 * policy_view_default - fill @view (fresh from gofer_view_new) with the
 * default view described in sentry/policy.c for a sandbox running as
 * @uid/@gid.  Returns 0 or -errno with @err naming the path that failed.
 */
int policy_view_default(struct gofer_view *view, uid_t uid, gid_t gid, struct pv_error *err);

/*
 * Result (sentry/result.c, docs/result.md).
 */
struct result_artifact {
	char *rel_path;		/* relative to /workspace */
	int fd;			/* memfd with the bytes (owned) */
	uint64_t size;		/* bytes */
	char sha256[65];	/* lowercase hex */
	char mime[128];		/* libmagic's MIME type */
};

struct result_artifacts {
	struct result_artifact *items;
	size_t count, cap;
};

/* result_artifacts_collect - list the files of /workspace that are new or
 * changed since gofer_view_snapshot(), with digests and MIME types.  Returns
 * 0 or -errno with @err set.  Free with result_artifacts_free(). */
int result_artifacts_collect(struct gofer_view *view, struct result_artifacts *list,
			     struct pv_error *err);

/* result_artifacts_free - release @list's strings and fds. */
void result_artifacts_free(struct result_artifacts *list);

/*
 * result_artifacts_write - write every artifact into @dir (created if
 * missing), keeping sub-directories.  Without @force an existing file is a
 * conflict: -EEXIST, and nothing is written.  Returns 0 or -errno with @err
 * set.
 */
int result_artifacts_write(const struct result_artifacts *list, const char *dir, bool force,
			   struct pv_error *err);

/*
 * result_json - the result object of a run (a new jansson reference, NULL
 * on allocation failure).  @arts, @audit_path and @error may be NULL; with
 * @cfg (the run's configuration) the object carries `limits`
 * (limits_json).
 */
struct json_t;
struct json_t *result_json(const struct sentry_outcome *o, const struct result_artifacts *arts,
			   const char *audit_path, const char *error,
			   const struct sentry_config *cfg);

/*
 * policy_set_hosts_extra - lines (borrowed, "ADDR\tNAME\n"...) that
 * policy_view_default() appends to the synthesized /etc/hosts: the names
 * --allow-host serves (sentry/netpolicy.c).  NULL for none.
 */
void policy_set_hosts_extra(const char *lines);

/*
 * policy_view_mount - add the user's "HOST:SANDBOX[:ro]" mount @spec to
 * @view (a read-only host bind, read-write with ":rw"; SANDBOX absolute and
 * canonical).  Returns 0 or -errno with @err saying why.
 */
int policy_view_mount(struct gofer_view *view, const char *spec, struct pv_error *err);

/* policy_view_hide - remove @path (a name of the view itself, not inside
 * a host bind) and everything below it.  Returns 0 or -errno with @err. */
int policy_view_hide(struct gofer_view *view, const char *path, struct pv_error *err);

/*
 * /proc (sentry/procfs.c).  procfs_register() makes the view's /proc and
 * registers the provider that fills it for the calling task;
 * procfs_enter() tells it which call is being handled (NULL after).
 */
int procfs_register(struct gofer_view *view, struct pv_error *err);
void procfs_enter(struct syscall_ctx *ctx);

/*
 * policy_program_resolve - find program @name in the view (a view path, or
 * a name searched in /usr/local/bin, /usr/bin, /bin), executable by the
 * sandbox and a file of a read-only host bind.  Writes its host path to
 * @host (@host_size bytes) and its metadata to @st.  Returns 0, -ENOENT or
 * -EPERM (an in-memory file) with @err set.
 */
int policy_program_resolve(struct gofer_view *view, const char *name, char *host,
			   size_t host_size, struct stat *st, struct pv_error *err);

/*
 * policy_exec_allow_add - allow the sandbox to exec program @name (resolved
 * as by policy_program_resolve) by appending its identity to *@list
 * (realloc'd; *@n entries).  A missing program is an error only when
 * @required.  Returns 0 or -errno with @err set.
 */
int policy_exec_allow_add(struct gofer_view *view, const char *name, bool required,
			  struct sentry_exec_allow **list, size_t *n, struct pv_error *err);

/* policy_exec_default - add the default exec allowlist (the interpreter and
 * common tools present on the host) to *@list. */
int policy_exec_default(struct gofer_view *view, struct sentry_exec_allow **list, size_t *n,
			struct pv_error *err);

/* policy_exec_free - release a list built by the functions above. */
void policy_exec_free(struct sentry_exec_allow *list, size_t n);

/* policy_miss_is_quiet - true when a lookup of @view_path failing as hidden
 * is expected of benign programs and gets no audit event. */
bool policy_miss_is_quiet(const char *view_path);

/* errno_name - the symbolic name of errno value @e ("ENOENT"), or "E?" */
const char *errno_name(int e);

/* sentry_now_ns - CLOCK_MONOTONIC in nanoseconds. */
uint64_t sentry_now_ns(void);


/*
 * Network (sentry/net.c, sentry/netpolicy.c, docs/network.md): the egress
 * policy (allowlist rules and pinned names), the run's network state
 * (private namespace or not, notifications kept pending while a connect
 * completes, connection accounting and budgets) and the result's "network"
 * object.  syscalls/socket.c is the user.
 *
 * Kernel interfaces: socket(7), ip(7), ipv6(7), tcp(7) (TCP_INFO),
 * seccomp_unotify(2) (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SETFD,
 * SECCOMP_IOCTL_NOTIF_SEND), netdevice(7) (SIOCGSKNS), proc(5)
 * (/proc/PID/fd, /proc/PID/fdinfo, /proc/PID/ns/net).
 */

/* One allow rule: destinations in family/addr/prefix, on port (0: any),
 * for protocol proto (IPPROTO_TCP). */
struct net_rule {
	int family;			/* AF_INET or AF_INET6 */
	unsigned char addr[16];		/* network byte order, 4 or 16 bytes */
	unsigned int prefix;		/* bits */
	uint16_t port;			/* host order; 0 = any */
	int proto;			/* IPPROTO_TCP */
	char host[256];			/* the --allow-host name, or "" */
};

/* The egress policy of a run.  Zero-initialise; free with
 * net_policy_free(). */
struct net_policy {
	struct net_rule *rules;		/* malloc'd */
	size_t nrules;
	char *hosts_text;		/* extra /etc/hosts lines (malloc'd) or NULL */
	uint64_t max_bytes;		/* egress budget, bytes sent; 0 = unlimited */
	unsigned int max_conns;		/* egress connections; 0 = unlimited */
};

/*
 * net_policy_add_net - parse "CIDR:PORT[/PROTO]" (PORT a number or "*",
 * PROTO "tcp"; IPv6 CIDRs in brackets: "[2001:db8::/32]:443") and add the
 * rule.  Returns 0, or -EINVAL with @err saying what is wrong.
 */
int net_policy_add_net(struct net_policy *p, const char *spec, struct pv_error *err);

/*
 * net_policy_add_host - parse "NAME[:PORT]" (PORT defaults to 443; NAME is
 * resolved now with the host's resolver) or "NAME=ADDR:PORT" (NAME pinned
 * to ADDR, no resolution) and add one rule per address plus the /etc/hosts
 * lines.  Returns 0 or -errno (-EINVAL bad syntax, -ENOENT NAME does not
 * resolve) with @err set.
 */
int net_policy_add_host(struct net_policy *p, const char *spec, struct pv_error *err);

/* net_policy_free - release @p's rules and text. */
void net_policy_free(struct net_policy *p);

/*
 * net_policy_match - the rule that allows @proto to @family address @addr
 * (4 or 16 bytes, network order; IPv4-mapped IPv6 must already be
 * normalised to AF_INET) port @port (host order), or NULL.
 */
const struct net_rule *net_policy_match(const struct net_policy *p, int family,
					const void *addr, uint16_t port, int proto);

/*
 * Run state.  net_start() after the child is spawned: learns whether the
 * child is in a network namespace of its own (compares /proc/PID/ns/net
 * with ours).  net_finish() at the end: final accounting, closes
 * everything and stores the "network" object in the outcome.
 */
int net_start(struct sentry *s, pid_t child, struct pv_error *err);
void net_finish(struct sentry *s);

/* net_private - true when the sandbox has its own network namespace. */
bool net_private(const struct sentry *s);

/*
 * net_sock_in_sandbox - true when the socket @fd (a sentry copy of a
 * sandbox fd) belongs to the sandbox's private network namespace; false
 * for host-side sockets (the injected egress connections) and when there
 * is no private namespace.
 */
bool net_sock_in_sandbox(const struct sentry *s, int fd);

/*
 * net_loop_connect - connect the sandbox's socket @fd (a sentry copy; the
 * socket lives in the sandbox's namespace) to @sa: the connect runs
 * non-blocking; when the sandbox's socket is blocking and the connect is in
 * progress, the notification is kept pending (the return has .pending) and
 * answered when the socket becomes writable.  Takes ownership of @fd.
 */
struct syscall_ret net_loop_connect(struct syscall_ctx *ctx, int fd, const struct sockaddr *sa,
				    socklen_t len);

/*
 * net_egress_connect - create a host-side socket like the sandbox's @fd
 * (family, type, protocol, O_NONBLOCK, a few options), connect it to @sa
 * and install it over the sandbox's fd number @guest_fd with ADDFD|SETFD;
 * blocking sockets keep the notification pending until the connect
 * completes.  @dest and @rule describe the connection for the log.  Takes
 * ownership of @fd.  Refuses with an audit event when the connection
 * budget is used up.
 */
struct syscall_ret net_egress_connect(struct syscall_ctx *ctx, int fd, int guest_fd,
				      const struct sockaddr *sa, socklen_t len, const char *dest,
				      const struct net_rule *rule);

/* net_event - an epoll event with tag SENTRY_TAG_NET for slot @slot. */
void net_event(struct sentry *s, unsigned int slot, uint32_t events);

/* net_tick - periodic accounting (closed connections, budgets); called by
 * the event loop every NET_TICK_MS while connections are open. */
void net_tick(struct sentry *s);
bool net_needs_tick(const struct sentry *s);
#define NET_TICK_MS 100

/*
 * Limits and accounting (sentry/limits.c, docs/limits.md).
 */

/* limits_supervisor_prepare - raise the supervisor's own soft
 * RLIMIT_NOFILE to its hard limit (the view holds one fd per in-memory
 * file).  Best effort: failures leave the limit as it was. */
void limits_supervisor_prepare(void);

/* limits_defaults - fill @l with the defaults of `pyvisor run` (the
 * numbers are in docs/limits.md). */
void limits_defaults(struct sentry_limits *l);

/*
 * limits_start - begin accounting for run @s (after the first process was
 * spawned).  Allocates s->limits (freed by limits_stop).  Returns 0 or
 * -ENOMEM.
 */
int limits_start(struct sentry *s);

/*
 * limits_sample - take one sample of every process descending from the
 * supervisor (one pass over /proc: stat, status, fd), update
 * s->outcome->usage, and return the status the run must end with because a
 * whole-run limit was crossed (SENTRY_STATUS_MEMORY_LIMIT or
 * SENTRY_STATUS_CPU_LIMIT), SENTRY_STATUS_KILLED when the run could not be
 * accounted for in three samples in a row (fail closed), or
 * SENTRY_STATUS_OK when within limits.
 * Sources: proc(5) /proc/PID/stat (utime, stime, cutime, cstime,
 * num_threads), /proc/PID/status (RssAnon, RssShmem), /proc/PID/fd;
 * getrusage(2) RUSAGE_CHILDREN for the processes already reaped.
 */
enum sentry_status limits_sample(struct sentry *s);

/* limits_stop - final accounting once every process is gone (CPU of the
 * reaped processes; the view's in-memory files, which a burst of writes at
 * the end of a run may have grown between two samples) and release
 * s->limits.  Returns SENTRY_STATUS_MEMORY_LIMIT when the view alone holds
 * more than the memory limit, else SENTRY_STATUS_OK.  Safe when
 * limits_start was not called. */
enum sentry_status limits_stop(struct sentry *s);

/*
 * limits_memory_total - the memory limit of the run of @s in bytes (0:
 * none): what the sandbox should see as its total memory (/proc/meminfo
 * MemTotal, sysinfo totalram).  limits_memory_used - bytes the run used at
 * the last sample.  Both safe to call from handlers.
 */
uint64_t limits_memory_total(const struct sentry *s);
uint64_t limits_memory_used(const struct sentry *s);

/* limits_status_name - the result's name of @st ("memory_limit"). */
const char *limits_status_name(enum sentry_status st);

/*
 * limits_json - the result's `limits` object for a run configured with
 * @cfg that produced @o; @largest_file is the size in bytes of the largest
 * artifact (0 when none).  A new jansson reference, NULL on allocation
 * failure.
 */
struct json_t *limits_json(const struct sentry_config *cfg, const struct sentry_outcome *o,
			   uint64_t largest_file);

/*
 * Doctor (sentry/doctor.c): kernel features probed by trying them, the
 * protections that follow, and the refusal of runs that ask for a
 * protection this machine cannot give.
 */
enum doctor_feature {
	DOCTOR_UNOTIFY,		/* seccomp user notification */
	DOCTOR_WAIT_KILLABLE,	/* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV */
	DOCTOR_SYNC_WAKE_UP,	/* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP */
	DOCTOR_ADDFD,		/* SECCOMP_IOCTL_NOTIF_ADDFD */
	DOCTOR_ADDFD_SEND,	/* SECCOMP_ADDFD_FLAG_SEND */
	DOCTOR_PIDFD_GETFD,	/* pidfd_open + pidfd_getfd */
	DOCTOR_PTRACE,		/* PTRACE_SEIZE of a child (Yama) */
	DOCTOR_USERNS,		/* unshare(CLONE_NEWUSER) */
	DOCTOR_PIDNS,		/* unshare(CLONE_NEWPID) in a user namespace */
	DOCTOR_NETNS,		/* unshare(CLONE_NEWNET) in a user namespace */
	DOCTOR_LANDLOCK,	/* Landlock ABI >= 1 */
	DOCTOR_OPENAT2,		/* openat2 with RESOLVE_* */
	DOCTOR_CGROUP,		/* cgroup v2 delegation with memory and pids */
	DOCTOR_NFEATURES
};

struct doctor_report {
	struct {
		bool probed, ok;
		char detail[192];	/* what the probe saw, one line */
	} f[DOCTOR_NFEATURES];
	int landlock_abi;	/* 0 when unavailable */
};

/* A protection and the features it needs (bit 1 << enum doctor_feature). */
struct doctor_protection {
	const char *name;	/* as given to --require */
	const char *description;
	uint32_t needs;
	bool always;		/* every run needs it */
};

/* doctor_probe - probe the features in the bit mask @features (1 <<
 * enum doctor_feature; ~0U for all) into @r.  Each probe runs in a child
 * process that is reaped before this returns. */
void doctor_probe(struct doctor_report *r, uint32_t features);

/* doctor_protections - the table of protections (static storage); *@n
 * receives its length. */
const struct doctor_protection *doctor_protections(size_t *n);

/* doctor_protection_find - the protection called @name, or NULL. */
const struct doctor_protection *doctor_protection_find(const char *name);

/* doctor_protection_ok - true when every feature @p needs is in @r. */
bool doctor_protection_ok(const struct doctor_report *r, const struct doctor_protection *p);

/* doctor_feature_name - the JSON name of feature @f ("addfd_send"). */
const char *doctor_feature_name(enum doctor_feature f);

/*
 * doctor_require - probe what the protections every run needs, plus the
 * @n protections named in @names (valid names: doctor_protection_find),
 * need.  Returns 0 when all are available, else -EOPNOTSUPP with @err
 * naming the first protection that cannot be given and the missing
 * feature (one line, for `pyvisor run` to print before refusing).
 */
int doctor_require(const char *const *names, size_t n, struct pv_error *err);

/* doctor_json - {"ok", "features", "protections"} for @r (a new jansson
 * reference, NULL on allocation failure). */
struct json_t *doctor_json(const struct doctor_report *r);

/* doctor_table_print - print @r as two tables for people to @out.
 * Returns true when every always-needed protection is available. */
bool doctor_table_print(const struct doctor_report *r, FILE *out);

/*
 * bench_cmd_main - `pyvisor bench ARGS...` (@argv[0] is "bench"): execs the
 * performance suite bench/perf.py (`perf`) or the escape-attempt corpus
 * bench/escapes/run.py (`escapes`) on this binary.  Returns 0 after --help;
 * otherwise only returns on failure, -errno with @err set.
 */
int bench_cmd_main(int argc, char **argv, struct pv_error *err);

#endif
