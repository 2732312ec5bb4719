/*
 * gofer-internal.h - data structures shared by the gofer's source files.
 *
 * Not included outside gofer/.  See gofer.h for the public contract.
 *
 * The view is a tree of struct gofer_dentry.  Host binds are leaves of the
 * tree: what lies below a bind's root is never cached as dentries, it is
 * looked up on the host at every resolution (component by component with
 * O_PATH|O_NOFOLLOW, or in one openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
 * call), so the tree holds only what the policy built and what the sandbox
 * created in its in-memory trees.
 *
 * Inode table: every fd the view hands out that is not a host object is a
 * memfd (a mem file's own memfd reopened, or a per-open "directory handle"
 * memfd).  The table maps the (st_dev, st_ino) of such memfds to their
 * dentry.  Each entry holds an open fd on the memfd (the dentry's own memfd
 * for files, a private copy for handles), so the inode stays alive and its
 * number cannot be reused by an unrelated memfd while the entry exists.
 * Entries go away with their dentry (unlink, rmdir, replacement by rename,
 * gofer_view_free()).
 */
#ifndef PYVISOR_GOFER_GOFER_INTERNAL_H
#define PYVISOR_GOFER_GOFER_INTERNAL_H

#include <limits.h>
#include <stdint.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "gofer.h"

/* st_dev of every in-memory object of a view (skeleton, mem trees, synth files, symlinks). */
#define GOFER_VIEW_DEV makedev(0, 0x70)

/*
 * Most directory handles (and O_PATH symlink handles) a view keeps open at
 * once: one per in-memory directory or symlink ever opened (every open of
 * it reopens the same handle inode).  Each costs the supervisor one fd and one empty shmem inode (about
 * 1 KiB of kernel memory) until its dentry goes away, whether or not the
 * sandbox still holds its copy; past this count gofer_open() of an
 * in-memory directory fails with -EMFILE instead of exhausting the
 * supervisor's fd table.
 */
#define GOFER_MAX_HANDLES 4096

/* memfd names: "pyvisor-dir" for handles, "pyvisor:<name>" for mem files. */
#define GOFER_MEMFD_PREFIX "pyvisor"
#define GOFER_HANDLE_NAME "pyvisor-dir"
#define GOFER_TMPFILE_NAME "pyvisor:tmpfile"
#define GOFER_LINKABLE_XATTR "user.pyvisor.linkable"

enum gofer_kind {
	GOFER_KIND_SKEL,	/* skeleton directory: root-owned, 0755, read-only to the sandbox */
	GOFER_KIND_MEMDIR,	/* writable in-memory directory */
	GOFER_KIND_MEMFILE,	/* writable in-memory regular file (memfd) */
	GOFER_KIND_SYNTH,	/* sealed read-only memfd */
	GOFER_KIND_DEVICE,	/* host character device (O_PATH fd) */
	GOFER_KIND_SYMLINK,	/* in-memory symlink */
	GOFER_KIND_BIND,	/* read-only host bind (O_PATH fd of its host root) */
	GOFER_KIND_MAGIC,	/* /proc/PID/fd/N of an object without a view path: fd holds it */
	GOFER_KIND_FIFO,	/* named pipe: O_PATH fd of an unnamed FIFO inode of the store */
};

struct gofer_handle;

struct gofer_dentry {
	enum gofer_kind kind;
	char *name;			/* "" for the root */
	struct gofer_dentry *parent;	/* NULL for the root */
	uint64_t ino;			/* per-view inode number */
	mode_t mode;			/* type and permission bits; host mode at build time for BIND/DEVICE */
	uid_t uid;
	gid_t gid;
	bool hidden;			/* SKEL: a miss in it is reported as hidden */
	bool rw;			/* BIND: read-write host bind */
	char **hides;			/* BIND: paths below the root the view hides ("a/b") */
	size_t nhides;
	bool mount_root;		/* root of a mem tree or a bind: EBUSY on removal */
	int fd;				/* memfd (MEMFILE, SYNTH), O_PATH (BIND, DEVICE), else -1 */
	char *host_path;		/* BIND, DEVICE: canonical host path */
	char *target;			/* SYMLINK */
	uint64_t host_ino;		/* BIND, DEVICE: host inode number, for d_ino */
	struct timespec atime, mtime, ctime; /* directories and symlinks */

	/* Directories: children sorted by name, and in listing order. */
	struct gofer_dentry **by_name;
	struct gofer_dentry **by_seq;
	size_t nchild;
	size_t cap;
	uint64_t next_seq;		/* listing position of the next child (>= 2) */
	uint64_t seq;			/* this dentry's listing position in its parent */

	struct gofer_handle *handles;	/* inode table entries pointing here */

	/* MEMFILE: ring of the hard links sharing this memfd (each holds its
	 * own dup of it); a dentry alone points to itself.  Mode, owner and
	 * group are kept equal on every member. */
	struct gofer_dentry *link_next;
	bool counted;			/* counts in view->nobjs (quota) */
	bool magic;			/* SYMLINK: a /proc magic link (fd, cwd, exe, root) */
	bool proc_root;			/* SKEL: /proc, filled by the provider on entry */
};

/* First inode number of view dentries that are not memfd-backed files.
 * Memfd-backed files report the memfd's own inode number (shmem numbers
 * are 32-bit), so the two ranges never meet and an fd whose dentry has
 * gone still reports the inode number stat() gave. */
#define GOFER_INO_BASE (1ULL << 32)

struct gofer_handle {
	dev_t dev;
	ino_t ino;
	struct gofer_dentry *d;
	int fd;				/* held handle memfd, or -1 when d owns the memfd */
	struct gofer_handle *next;	/* hash bucket chain */
	struct gofer_handle *d_next;	/* list of d's entries */
};

struct gofer_snapshot_entry {
	char *rel;
	unsigned char sha256[32];
};

struct gofer_snapshot {
	char *root;
	struct gofer_snapshot_entry *entries;	/* sorted by rel */
	size_t n;
};

struct gofer_view {
	struct gofer_config cfg;
	struct gofer_dentry *root;
	uint64_t next_ino;
	bool fast_host;			/* openat2 fast path usable (see resolve.c) */

	struct gofer_handle **buckets;
	size_t nbuckets;
	size_t nentries;
	size_t nheld;			/* entries holding a handle fd */

	struct gofer_dentry **mounts;	/* binds and devices, for fd -> view path */
	size_t nmounts;
	size_t cap_mounts;

	struct gofer_snapshot *snaps;
	size_t nsnaps;

	int store_fd;			/* root of the per-run tmpfs (store.c), or -1: memfds */
	dev_t store_dev;
	uint64_t nobjs;			/* directories and symlinks the sandbox created */
	uint64_t nfiles;		/* regular files with a name (memfd mode count) */
	uint64_t nstore_dirs;		/* directory handles held as store directories */

	const struct gofer_proc_provider *proc;	/* /proc contents, or NULL */
	void *proc_opaque;
	struct gofer_dentry *proc_root;
};

/* Result of a path resolution (resolve.c). */
enum gofer_last {
	GOFER_LAST_NORM,
	GOFER_LAST_DOT,
	GOFER_LAST_DOTDOT,
	GOFER_LAST_ROOT,
};

struct gofer_res {
	bool exists;
	struct gofer_dentry *d;		/* the object's dentry (a bind root included), else NULL */
	int hfd;			/* owned O_PATH fd of a host object below a bind root, else -1 */
	struct gofer_dentry *bind;	/* bind holding the host object or the host parent */
	struct gofer_dentry *pd;	/* parent dentry when the parent is a view directory */
	bool parent_host;		/* parent is a host directory (in @bind) */
	bool hidden;			/* a miss in a hidden skeleton directory */
	int last;			/* enum gofer_last */
	bool trailing_slash;
	int phfd;			/* owned O_PATH fd of the host parent (PARENT walks), else -1 */
	bool follow_magic;		/* d is a MAGIC link reached with FOLLOW: the object */
	char name[NAME_MAX + 1];	/* last component (LAST_NORM) */
	char path[PATH_MAX];		/* canonical view path reached */
};

/* Flags of gofer_resolve(). */
#define GOFER_WALK_FOLLOW 0x1	/* follow a final symlink */
#define GOFER_WALK_PARENT 0x2	/* caller may create/remove the final name: parent info needed */
/* openat2(2) RESOLVE_* restrictions (gofer_open2). */
#define GOFER_WALK_NO_SYMLINKS 0x10	/* ELOOP on any symlink to follow */
#define GOFER_WALK_NO_MAGICLINKS 0x20	/* ELOOP on /proc magic links */
#define GOFER_WALK_BENEATH 0x40		/* EXDEV on leaving the base (.., absolute) */
#define GOFER_WALK_IN_ROOT 0x80		/* the base is "/" for this resolution */
#define GOFER_WALK_NO_XDEV 0x200	/* EXDEV on crossing a mount */
#define GOFER_WALK_RESOLVE_MASK 0x2f0

/* ops.c: helpers shared with meta.c */
void gofer_info_init(struct gofer_lookup_info *info);
int gofer_finish(struct gofer_lookup_info *info, struct gofer_res *r, int rc);
/* gofer_resolve_existing - start an operation on the existing object at
 * @path (following a final symlink unless @nofollow): 0 with @r resolved,
 * or -errno (-ENOENT when it does not exist) already finished into @info. */
int gofer_resolve_existing(struct gofer_view *view, const char *base, const char *path,
			   bool nofollow, struct gofer_res *r, struct gofer_lookup_info *info);
int gofer_res_attr(const struct gofer_res *r, mode_t *mode, uid_t *uid, gid_t *gid);
bool gofer_res_is_host(const struct gofer_res *r);
bool gofer_res_host_rw(const struct gofer_res *r);
int gofer_create_file(struct gofer_view *v, struct gofer_res *r, mode_t mode,
		      struct gofer_dentry **out);
int gofer_may_modify_parent(const struct gofer_view *v, const struct gofer_res *r);
int gofer_check_sticky(const struct gofer_view *v, const struct gofer_dentry *dir,
		       const struct gofer_dentry *child);

/* store.c */
struct stat;
int gofer_store_open(struct gofer_view *v, struct pv_error *err);
int gofer_file_new(struct gofer_view *v, const char *name, int *out);
int gofer_quota_check(const struct gofer_view *v);
bool gofer_is_store_file(const struct gofer_view *v, const struct stat *st);
bool gofer_is_store_dir(const struct gofer_view *v, const struct stat *st);

int gofer_tmpfile_at(struct gofer_view *view, const char *base, const char *path, int flags,
		     mode_t mode, unsigned int wf, struct gofer_lookup_info *info);

/* resolve.c */
int gofer_resolve(struct gofer_view *v, const char *base, const char *path, unsigned int flags,
		  struct gofer_res *r);
void gofer_res_release(struct gofer_res *r);
int gofer_perm_check(const struct gofer_view *v, mode_t mode, uid_t uid, gid_t gid, int want);

/* view.c */
struct gofer_dentry *gofer_dentry_new(struct gofer_view *v, enum gofer_kind kind,
				      const char *name, mode_t mode, uid_t uid, gid_t gid);
void gofer_dentry_free(struct gofer_view *v, struct gofer_dentry *d);
struct gofer_dentry *gofer_dentry_find(const struct gofer_dentry *dir, const char *name);
size_t gofer_dentry_seek(const struct gofer_dentry *dir, uint64_t seq);
int gofer_dentry_attach(struct gofer_dentry *dir, struct gofer_dentry *child);
int gofer_dentry_reserve(struct gofer_dentry *dir);
void gofer_dentry_detach(struct gofer_dentry *child);
bool gofer_dentry_is_dir(const struct gofer_dentry *d);
bool gofer_dentry_is_view_dir(const struct gofer_dentry *d);
int gofer_dentry_path(const struct gofer_dentry *d, char *out, size_t size);
int gofer_dentry_stat(const struct gofer_view *v, const struct gofer_dentry *d, struct stat *st);
void gofer_dentry_touch(struct gofer_dentry *dir);
int gofer_table_add(struct gofer_view *v, struct gofer_dentry *d, int fd, bool held);
struct gofer_handle *gofer_table_find(const struct gofer_view *v, dev_t dev, ino_t ino);
int gofer_memfd_new(const char *name, int *out);
int gofer_reopen(int fd, int flags);
size_t gofer_link_count(const struct gofer_dentry *d);
bool gofer_is_view_file(const struct gofer_view *v, int fd);
const struct gofer_dentry *gofer_fd_bind(const struct gofer_view *view, int fd);
bool gofer_bind_hides(const struct gofer_dentry *bind, const char *rel);

#endif
