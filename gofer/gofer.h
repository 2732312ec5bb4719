/*
 * gofer.h - the filesystem view.
 *
 * The view is what the sandbox sees as its filesystem.  It is a tree of
 * dentries rooted at "/" built from a mount list:
 *
 *   - skeleton directories (/, /etc, /dev, /home, ...) that exist only in
 *     memory, owned by root, mode 0755, holding the mounts below;
 *   - read-only host binds (for example /usr -> host /usr): a host subtree,
 *     resolved component by component on the host without ever leaving the
 *     bind (symlinks are read and resolved again inside the view);
 *   - in-memory writable trees (/workspace, /tmp, /home/sandbox) whose
 *     regular files are memfds, so reads and writes on an injected fd run
 *     natively;
 *   - synthesized read-only files (/etc/passwd, ...) held in sealed memfds;
 *   - device nodes (/dev/null, zero, full, random, urandom) opened from the
 *     host's own device nodes;
 *   - symlinks held in memory (/bin -> usr/bin, ...).
 *
 * Everything not in the view does not exist (ENOENT).  Paths are resolved
 * with Linux semantics: "." and ".." per component (".." of "/" is "/"),
 * symlinks followed except for the final component when the caller asks
 * for NOFOLLOW, at most GOFER_MAX_SYMLINKS symlinks per resolution (ELOOP),
 * ENAMETOOLONG for a path over PATH_MAX - 1 bytes or a component over
 * NAME_MAX bytes, ENOTDIR when a non-final component is not a directory.
 * Sources: path_resolution(7), openat2(2), open(2), stat(2).
 *
 * Permission checks use the sandbox's credentials (gofer_config.uid/gid),
 * never the supervisor's: the supervisor may run as root.  Write access to a
 * host bind fails with EROFS before any permission check (as Linux's
 * may_open() does for a read-only mount).
 *
 * All functions are single-threaded (the sentry's event loop calls them) and
 * never block on anything but local filesystem calls.  Errors are returned as
 * negative errno values, exactly the errno Linux would give for the same
 * operation on an equivalent real tree.
 */
#ifndef PYVISOR_GOFER_GOFER_H
#define PYVISOR_GOFER_GOFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "pv_util.h"

#define GOFER_MAX_SYMLINKS 40

struct gofer_view;

/* Identity and limits of the sandboxed user, as the view presents them. */
struct gofer_config {
	uid_t uid;	/* sandbox uid: owner of in-memory trees */
	gid_t gid;	/* sandbox gid */
	/* Workspace quota (docs/quotas.md): total bytes of the files the
	 * sandbox creates (0: no byte quota; files are plain memfds), and
	 * most files + directories + symlinks it may create (0: no limit). */
	uint64_t quota_bytes;
	uint64_t quota_files;
};

/*
 * gofer_view_new - create an empty view holding only the skeleton root "/".
 * Returns NULL with @err set on allocation failure.  Free with
 * gofer_view_free().
 */
struct gofer_view *gofer_view_new(const struct gofer_config *cfg, struct pv_error *err);

/* gofer_view_free - release the view, its dentries, memfds and host fds.  NULL is a no-op. */
void gofer_view_free(struct gofer_view *view);

/*
 * Building the view.  All @view_path arguments are absolute, canonical
 * ("/etc/ssl/certs": no "." / ".." / "//" / trailing "/").  Missing parent
 * directories are created as skeleton directories (root-owned, 0755).
 * They return 0, or a negative errno with @err naming the path and cause
 * (EEXIST when the path is already taken, ENOENT/EACCES/... from the host).
 */

/* Bind host directory or file @host_path read-only at @view_path.  The host
 * object is opened once now (O_PATH); later renames on the host of anything
 * above it do not change what the view shows. */
int gofer_view_bind_host(struct gofer_view *view, const char *host_path,
			 const char *view_path, struct pv_error *err);

/* Bind host directory or file @host_path read-write at @view_path: the
 * sandbox's changes below it are made on the host, component by component
 * from O_PATH fds of the walk (no host symlink is ever followed), by the
 * supervisor with the sandbox's own credentials, so the host kernel
 * decides access.  -EPERM when the supervisor's credentials are not the
 * sandbox's (pyvisor started as root).  Not counted in the quota. */
int gofer_view_bind_host_rw(struct gofer_view *view, const char *host_path,
			    const char *view_path, struct pv_error *err);

/* Create an empty writable in-memory directory at @view_path owned by the
 * sandbox uid/gid with @mode. */
int gofer_view_add_mem_dir(struct gofer_view *view, const char *view_path, mode_t mode,
			   struct pv_error *err);

/* Create a writable in-memory regular file at @view_path (owned by the
 * sandbox, @mode) holding a copy of the bytes read from @host_fd (read from
 * offset 0 to EOF; the fd stays the caller's).  Used for --input files. */
int gofer_view_add_mem_file(struct gofer_view *view, const char *view_path, int host_fd,
			    mode_t mode, struct pv_error *err);

/* Create a read-only synthesized file (root-owned, 0644) with @len bytes of
 * @data, held in a memfd sealed against write, grow and shrink. */
int gofer_view_add_synth_file(struct gofer_view *view, const char *view_path,
			      const void *data, size_t len, struct pv_error *err);

/* Make host device node @host_path (a character device such as /dev/null)
 * appear at @view_path. */
int gofer_view_add_device(struct gofer_view *view, const char *host_path,
			  const char *view_path, struct pv_error *err);

/* Create an in-memory symlink at @view_path pointing to @target (stored as
 * given, resolved inside the view when followed). */
int gofer_view_add_symlink(struct gofer_view *view, const char *view_path,
			   const char *target, struct pv_error *err);

/* gofer_view_hide - make @view_path (canonical) and its subtree absent:
 * a name the view holds is removed; a name below a host bind's root is
 * recorded in the bind, so lookups of it (and through it) fail with ENOENT
 * as hidden and listings of its host directory leave it out.  -ENOENT when
 * the view has no such entry, -EINVAL for "/", a bind root or a path that
 * is not canonical. */
int gofer_view_hide(struct gofer_view *view, const char *view_path, struct pv_error *err);

/*
 * /proc.  The gofer knows nothing of tasks: the sentry registers a
 * provider, and every resolution that enters /proc first asks it to
 * (re)build /proc's contents for the calling task with the
 * gofer_proc_add_* functions (paths relative to /proc, parents created as
 * needed).  Files are sealed snapshots taken at that moment, links are
 * in-memory symlinks; an fd link whose object has no view path (a pipe,
 * a socket, an unlinked file) is a "magic" link holding the supervisor's
 * copy of the fd: opening it reopens that object, as Linux does.
 */
struct gofer_proc_provider {
	/* Rebuild /proc for the current call: gofer_proc_reset() then adds.
	 * Returns 0 or -errno (the resolution then fails with it). */
	int (*refresh)(void *opaque, struct gofer_view *view);
};

/* gofer_view_set_proc - create the empty /proc and register @p (borrowed, with @opaque). */
int gofer_view_set_proc(struct gofer_view *view, const struct gofer_proc_provider *p,
			void *opaque, struct pv_error *err);

/* gofer_proc_reset - remove everything below /proc. */
void gofer_proc_reset(struct gofer_view *view);

/* gofer_proc_release_fds - close the task fds that /proc/PID/fd entries
 * hold (gofer_proc_add_fd) once the call that built them is answered: a
 * copy kept longer would keep a pipe's write end open after the task closed
 * it (the reader would never see EOF).  The entries stay, as dangling magic
 * links (readlink works; following one gives ENOENT) until /proc is rebuilt
 * by the next call that looks into it. */
void gofer_proc_release_fds(struct gofer_view *view);

/* gofer_proc_add_file - file @rel under /proc with @len bytes of @data (mode 0444, or 0400 when @private). */
int gofer_proc_add_file(struct gofer_view *view, const char *rel, const void *data, size_t len,
			bool private_file);

/* gofer_proc_add_symlink - symlink @rel under /proc pointing to @target;
 * @magic: a magic link of Linux's procfs (fd, cwd, exe, root), which
 * RESOLVE_NO_MAGICLINKS refuses to follow. */
int gofer_proc_add_symlink(struct gofer_view *view, const char *rel, const char *target,
			   bool magic);

/* gofer_proc_add_dir - directory @rel under /proc (mode 0555); a top-level one
 * (a pid directory) reports misses in it as hidden, like /proc itself. */
int gofer_proc_add_dir(struct gofer_view *view, const char *rel);

/* gofer_proc_add_fd - /proc/PID/fd/N entry @rel for the supervisor's copy
 * @fd of a task's fd (always consumed): a symlink to the view path when the
 * object has one, else a magic link showing @text (e.g. "pipe:[123]"). */
int gofer_proc_add_fd(struct gofer_view *view, const char *rel, int fd, const char *text);

/*
 * Marks a skeleton directory so that a lookup of a missing name in it is
 * reported as hidden (see gofer_lookup_info.hidden): the name may exist on
 * the host but the policy keeps it out of the view.  gofer_view_new() marks
 * "/" already; skeleton directories created on the way to a mount inherit
 * the mark.  In-memory writable trees and host binds are never marked.
 */

/*
 * What a resolution touched, for the audit log.  Filled by every call that
 * takes one (may be NULL).
 */
struct gofer_lookup_info {
	char view_path[4096];	/* canonical view path reached (best effort on error) */
	bool hidden;		/* failed because the policy hides the name (ENOENT in a skeleton dir) */
	bool read_only;		/* failed with EROFS: write into a read-only part of the view */
};

/*
 * gofer_open - open @path (relative paths resolve against @base, an absolute
 * canonical view path: the task's cwd or the view path of a dirfd) with
 * open(2) @flags and @mode (already masked by the task's umask).
 *
 * On success returns a new fd owned by the caller, opened in the
 * supervisor with O_CLOEXEC and otherwise the access mode and status flags
 * of the request (O_RDONLY/O_WRONLY/O_RDWR, O_APPEND, O_NONBLOCK, O_PATH,
 * O_DIRECTORY...), ready to be injected into the task:
 *   - in-memory file: a new open file description of the node's memfd
 *     (reopened through /proc/self/fd), so the offset is private;
 *   - host file or directory: the host object opened by the supervisor;
 *   - in-memory or skeleton directory: a directory handle (see
 *     gofer_fd_getdents) that gofer_fd_lookup maps back to the dentry.
 * Honours O_CREAT, O_EXCL (atomic: EEXIST), O_TRUNC (on memfds: ftruncate),
 * O_DIRECTORY (ENOTDIR), O_NOFOLLOW (ELOOP on a final symlink), O_PATH.
 * Errors: -ENOENT, -EACCES, -EROFS, -EEXIST, -EISDIR (directory opened for
 * writing), -ENOTDIR, -ELOOP, -ENAMETOOLONG, -EINVAL (O_TMPFILE is not
 * supported yet: -EOPNOTSUPP), -ENOMEM, -EMFILE/-ENFILE from the host.
 */
int gofer_open(struct gofer_view *view, const char *base, const char *path, int flags,
	       mode_t mode, struct gofer_lookup_info *info);

/*
 * gofer_open2 - gofer_open with openat2(2) @resolve flags (Linux's
 * RESOLVE_* values): NO_SYMLINKS and NO_MAGICLINKS (-ELOOP), BENEATH
 * (-EXDEV for an absolute path, an absolute symlink or ".." above @base),
 * IN_ROOT (@base stands for "/"), NO_XDEV (-EXDEV when crossing into or out
 * of a bind, an in-memory tree or /proc), CACHED (-EAGAIN with O_CREAT,
 * O_TRUNC or O_TMPFILE).  Unknown bits or BENEATH|IN_ROOT: -EINVAL.  With
 * BENEATH or IN_ROOT, @base must be the dirfd's view path even for an
 * absolute @path.
 */
int gofer_open2(struct gofer_view *view, const char *base, const char *path, int flags,
		mode_t mode, uint64_t resolve, struct gofer_lookup_info *info);

/*
 * gofer_stat - stat(2)/lstat(2) of @path against @base.  @nofollow: do not
 * follow a final symlink.  Fills @st as the sandbox should see it: host
 * objects keep their host metadata; in-memory objects report a stable
 * per-view device number, a per-dentry inode number, the dentry's mode,
 * owner and link count, and size and times from the memfd.
 * Errors as gofer_open.
 */
int gofer_stat(struct gofer_view *view, const char *base, const char *path, bool nofollow,
	       struct stat *st, struct gofer_lookup_info *info);

/*
 * gofer_access - access(2)/faccessat2(2): check @amode (F_OK or R_OK|W_OK|
 * X_OK) for the sandbox uid (@flags may hold AT_SYMLINK_NOFOLLOW,
 * AT_EACCESS; both use the sandbox credentials).  W_OK on a host bind
 * gives -EROFS.  Returns 0 or -errno.
 */
int gofer_access(struct gofer_view *view, const char *base, const char *path, int amode,
		 int flags, struct gofer_lookup_info *info);

/*
 * gofer_readlink - readlink(2): copy the target of symlink @path (never
 * followed) into @buf (no NUL added, truncated to @size).  Returns the byte
 * count or -EINVAL (not a symlink), -ENOENT, ...
 */
ssize_t gofer_readlink(struct gofer_view *view, const char *base, const char *path,
		       char *buf, size_t size, struct gofer_lookup_info *info);

/* gofer_mkdir - mkdir(2) in an in-memory tree with @mode (umask applied by
 * the caller).  -EEXIST, -ENOENT, -ENOTDIR, -EROFS (host bind), -EACCES
 * (skeleton directory). */
int gofer_mkdir(struct gofer_view *view, const char *base, const char *path, mode_t mode,
		struct gofer_lookup_info *info);

/* gofer_unlink - unlink(2), or rmdir(2) when @rmdir.  -EISDIR (unlink of a
 * directory), -ENOTDIR, -ENOTEMPTY, -EBUSY (a mount point or "/"), -EROFS,
 * -EACCES, -ENOENT, -EINVAL (rmdir of "." as last component). */
int gofer_unlink(struct gofer_view *view, const char *base, const char *path, bool rmdir,
		 struct gofer_lookup_info *info);

/* gofer_rename - renameat2(2) inside one in-memory tree: @flags 0 or
 * RENAME_NOREPLACE or RENAME_EXCHANGE (both names must exist).  Atomic.  -EXDEV
 * across trees or mounts, -EEXIST, -ENOTEMPTY, -EISDIR, -ENOTDIR, -EINVAL
 * (directory into its own subtree), -EROFS, -EACCES, -ENOENT. */
int gofer_rename(struct gofer_view *view, const char *old_base, const char *old_path,
		 const char *new_base, const char *new_path, unsigned int flags,
		 struct gofer_lookup_info *info);

/*
 * gofer_chdir_resolve - resolve @path as a directory the sandbox may enter
 * (search permission) and write its canonical view path to @out
 * (@out_size >= 4096).  -ENOTDIR, -ENOENT, -EACCES, ...
 */
int gofer_chdir_resolve(struct gofer_view *view, const char *base, const char *path,
			char *out, size_t out_size, struct gofer_lookup_info *info);

/*
 * Metadata and link operations (meta.c).  All follow the errno order of
 * Linux (see meta.c); host binds are read-only (EROFS), skeleton
 * directories and synthesized files are root's (EPERM/EACCES), in-memory
 * trees behave as a tmpfs without user extended attributes.
 */

/* gofer_symlink - symlink(2): create @path holding @target (stored as given). */
int gofer_symlink(struct gofer_view *view, const char *target, const char *base,
		  const char *path, struct gofer_lookup_info *info);

/* gofer_link - link(2)/linkat(2): a new name @new_path for @old_path
 * (@follow: AT_SYMLINK_FOLLOW).  -EXDEV across trees, -EPERM for a
 * directory or (protected_hardlinks) a file the sandbox may not read and
 * write, -EEXIST, -EROFS, -EACCES. */
int gofer_link(struct gofer_view *view, const char *old_base, const char *old_path,
	       const char *new_base, const char *new_path, bool follow,
	       struct gofer_lookup_info *info);

/* gofer_fd_link - linkat(fd, "", ..., AT_EMPTY_PATH) or linkat of
 * /proc/self/fd/N: give O_TMPFILE file @fd (supervisor's copy) a name.
 * -ENOENT when @fd is not a linkable O_TMPFILE file of the view. */
int gofer_fd_link(struct gofer_view *view, int fd, const char *new_base, const char *new_path,
		  struct gofer_lookup_info *info);

/* gofer_mknod - mknod(2): regular files in memory, FIFOs as FIFO inodes
 * of the run's store (-EPERM without a store); -EPERM for device nodes
 * (no CAP_MKNOD) and socket nodes; -EINVAL for an unknown type. */
int gofer_mknod(struct gofer_view *view, const char *base, const char *path, mode_t mode,
		dev_t dev, struct gofer_lookup_info *info);

/* gofer_tmpfile - open(O_TMPFILE): an unnamed file in directory @path;
 * returns the fd (owned by the caller) or -errno (-EINVAL without write
 * access mode, -ENOTDIR, -EROFS, -EACCES, -ENOSPC). */
int gofer_tmpfile(struct gofer_view *view, const char *base, const char *path, int flags,
		  mode_t mode, struct gofer_lookup_info *info);

/* gofer_setattr - chmod (@mode != (mode_t)-1, @uid/@gid ignored) or chown
 * (@mode == (mode_t)-1; -1 leaves an id unchanged) of @path.  @nofollow:
 * act on a final symlink itself (chmod of a symlink: -EOPNOTSUPP). */
int gofer_setattr(struct gofer_view *view, const char *base, const char *path, bool nofollow,
		  mode_t mode, uid_t uid, gid_t gid, struct gofer_lookup_info *info);

/* gofer_fd_setattr - fchmod/fchown of the object behind @fd. */
int gofer_fd_setattr(struct gofer_view *view, int fd, mode_t mode, uid_t uid, gid_t gid);

/* gofer_utimens - utimensat(2) of @path with @ts (2 entries, UTIME_NOW /
 * UTIME_OMIT honoured) or NULL for now. */
struct timespec;
int gofer_utimens(struct gofer_view *view, const char *base, const char *path, bool nofollow,
		  const struct timespec *ts, struct gofer_lookup_info *info);

/* gofer_fd_utimens - futimens(3) of the object behind @fd. */
int gofer_fd_utimens(struct gofer_view *view, int fd, const struct timespec *ts);

/* gofer_truncate - truncate(2) of @path to @length bytes (-ENOSPC/-EFBIG
 * past the quota). */
int gofer_truncate(struct gofer_view *view, const char *base, const char *path, int64_t length,
		   struct gofer_lookup_info *info);

/*
 * gofer_xattr / gofer_fd_xattr - extended attribute call @op: 'g' get
 * (@name, into @buf of @size), 's' set (@name, value @buf/@size, @flags
 * XATTR_CREATE/REPLACE), 'l' list (into @buf), 'r' remove.  Returns the
 * byte count (get, list), 0, or -errno.  View objects have none (tmpfs
 * without user xattrs: user.* -EOPNOTSUPP, trusted.* and security.*
 * -ENODATA to read, -EPERM to write); host objects are read through.
 */
ssize_t gofer_xattr(struct gofer_view *view, const char *base, const char *path, bool nofollow,
		    char op, const char *name, void *buf, size_t size, int flags,
		    struct gofer_lookup_info *info);
ssize_t gofer_fd_xattr(struct gofer_view *view, int fd, char op, const char *name, void *buf,
		       size_t size, int flags);

/* gofer_statfs - statfs(2) of @path: host binds report the host
 * filesystem with ST_RDONLY, the rest gofer_view_statfs(). */
struct statfs;
int gofer_statfs(struct gofer_view *view, const char *base, const char *path, struct statfs *sf,
		 struct gofer_lookup_info *info);

/* gofer_view_statfs - the in-memory trees as a tmpfs: the store's size
 * and free space under a quota. */
void gofer_view_statfs(const struct gofer_view *view, struct statfs *sf);

/*
 * Working with fds the sandbox holds.  The sentry fetches the task's fd with
 * pidfd_getfd(2), so @fd below is the supervisor's own duplicate of the same
 * open file description (shared offset).
 */

/* gofer_fd_view_path - canonical view path of the object behind @fd (a
 * directory for *at() calls and fchdir, or any file).  -ENOENT when the
 * object was removed from the view, -EBADF when @fd is not something the
 * view handed out (a pipe, a socket, an anonymous memfd). */
int gofer_fd_view_path(struct gofer_view *view, int fd, char *out, size_t out_size);

/* gofer_fd_stat - fstat(2) of @fd as the sandbox should see it (see
 * gofer_stat).  Objects the view did not hand out (pipes, sockets, the
 * sandbox's own memfds) are reported as the host kernel reports them. */
int gofer_fd_stat(struct gofer_view *view, int fd, struct stat *st);

/*
 * gofer_fd_getdents - getdents64(2) on directory fd @fd: fill @buf (@size
 * bytes) with struct linux_dirent64 records of the view's entries ("." and
 * ".." included), advancing the directory position stored in the open file
 * description (lseek on @fd), so that repeated calls and dup'd fds behave
 * as on Linux.  Returns the number of bytes written, 0 at the end, -EINVAL
 * when @size is too small for the next record, -ENOTDIR, -EBADF.
 */
ssize_t gofer_fd_getdents(struct gofer_view *view, int fd, void *buf, size_t size);

/*
 * Artifacts.  gofer_view_snapshot() records the current content (SHA-256)
 * of every regular file under @root (an in-memory tree such as
 * "/workspace"); gofer_view_walk_changed() later calls @fn for every
 * regular file under @root that is new or whose content differs from the
 * snapshot, in path order, with the path relative to @root, the memfd
 * holding its bytes (read with pread; owned by the view), its size and its
 * SHA-256 digest.  A non-zero return from @fn stops the walk and is
 * returned.
 */
struct gofer_artifact {
	const char *rel_path;
	int fd;
	uint64_t size;
	unsigned char sha256[32];
};
int gofer_view_snapshot(struct gofer_view *view, const char *root, struct pv_error *err);
int gofer_view_walk_changed(struct gofer_view *view, const char *root,
			    int (*fn)(const struct gofer_artifact *a, void *opaque), void *opaque,
			    struct pv_error *err);

#endif
