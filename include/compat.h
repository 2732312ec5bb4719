/*
 * compat.h - kernel constants newer than Debian 12's headers.
 *
 * The one place where pyvisor defines kernel ABI values itself.  Every value
 * is the kernel's own (source named beside it); features are still probed at
 * run time by trying them (`pyvisor doctor`), never inferred from these.
 */
#ifndef PYVISOR_INCLUDE_COMPAT_H
#define PYVISOR_INCLUDE_COMPAT_H

#include <linux/seccomp.h>
#include <linux/openat2.h>
#include <sys/syscall.h>

/* include/uapi/linux/seccomp.h (Linux 6.6) */
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
/* include/uapi/linux/seccomp.h (Linux 5.19) */
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
/* include/uapi/linux/seccomp.h (Linux 5.14) */
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

/* include/uapi/linux/pidfd.h (Linux 6.9) */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* include/uapi/linux/fcntl.h (Linux 6.6): fchmodat2 */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
/* arch/x86/entry/syscalls/syscall_64.tbl (Linux 6.x) */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack 453
#endif
#ifndef __NR_futex_wake
#define __NR_futex_wake 454
#endif
#ifndef __NR_futex_wait
#define __NR_futex_wait 455
#endif
#ifndef __NR_futex_requeue
#define __NR_futex_requeue 456
#endif
#ifndef __NR_statmount
#define __NR_statmount 457
#endif
#ifndef __NR_listmount
#define __NR_listmount 458
#endif
#ifndef __NR_lsm_get_self_attr
#define __NR_lsm_get_self_attr 459
#endif
#ifndef __NR_lsm_set_self_attr
#define __NR_lsm_set_self_attr 460
#endif
#ifndef __NR_lsm_list_modules
#define __NR_lsm_list_modules 461
#endif
#ifndef __NR_mseal
#define __NR_mseal 462
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_getxattrat
#define __NR_getxattrat 464
#endif
#ifndef __NR_listxattrat
#define __NR_listxattrat 465
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif
#ifndef __NR_file_getattr
#define __NR_file_getattr 468
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif

/* include/linux/fcntl.h (kernel-internal): first published struct open_how */
#ifndef OPEN_HOW_SIZE_VER0
#define OPEN_HOW_SIZE_VER0 24
#endif

/* include/uapi/linux/landlock.h (Linux 6.2 TRUNCATE = ABI 3, 6.10 IOCTL_DEV
 * = ABI 5, 6.12 scopes = ABI 6).  Debian 12's header stops at ABI 2. */
#include <linux/types.h>
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
/* struct landlock_ruleset_attr as of ABI 6; older kernels accept the
 * larger size when the fields they do not know are zero. */
struct pv_landlock_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
	__u64 scoped;
};

/* Highest syscall number the dispatch table covers (exclusive). */
#define PV_SYSCALL_MAX 512

#endif
