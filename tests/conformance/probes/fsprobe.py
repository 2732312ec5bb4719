"""Filesystem probes in the strace/gVisor style (stdlib + ctypes only).

Usage: python3 fsprobe.py DIR

Runs every probe in the empty, writable directory DIR and prints one JSON
object {probe: outcome}.  An outcome is a small value (a mode, a count, a
boolean) or the errno name of the failure, never an inode number or a
time, so that the same probes give the same JSON natively on a tmpfs and
inside pyvisor (tests/integration/test_fsprobe.py compares them).
"""
import ctypes
import errno
import json
import os
import stat
import sys

OUT = {}
libc = ctypes.CDLL(None, use_errno=True)


def probe(name):
    def deco(fn):
        try:
            OUT[name] = fn()
        except OSError as e:
            OUT[name] = errno.errorcode.get(e.errno, str(e.errno))
        return fn
    return deco


def cerr(rc):
    if rc < 0:
        return errno.errorcode.get(ctypes.get_errno(), "?")
    return rc


def touch(name, data=b""):
    with open(name, "wb") as f:
        f.write(data)


def main():
    os.chdir(sys.argv[1])
    os.umask(0o022)
    touch("f", b"hello")
    os.mkdir("d")

    # symlink
    probe("symlink")(lambda: (os.symlink("f", "s"), os.readlink("s"), open("s").read())[1:])
    probe("symlink_exists")(lambda: os.symlink("x", "f"))
    probe("symlink_dangling_stat")(lambda: (os.symlink("nowhere", "dang"), os.stat("dang")))
    probe("symlink_dangling_lstat")(lambda: stat.S_ISLNK(os.lstat("dang").st_mode))
    probe("symlink_missing_parent")(lambda: os.symlink("f", "nodir/s"))
    probe("symlink_empty_target")(lambda: cerr(libc.symlink(b"", b"e")))
    probe("symlink_trailing_slash")(lambda: os.symlink("f", "s2/"))
    probe("symlink_mode")(lambda: oct(os.lstat("s").st_mode))
    probe("symlink_size")(lambda: os.lstat("s").st_size)

    # link
    probe("link")(lambda: (os.link("f", "h"), os.stat("f").st_nlink,
                           os.stat("f").st_ino == os.stat("h").st_ino)[1:])
    probe("link_exists")(lambda: os.link("f", "h"))
    probe("link_dir")(lambda: os.link("d", "d2"))
    probe("link_missing")(lambda: os.link("nope", "n2"))
    probe("link_chmod_shared")(lambda: (os.chmod("h", 0o600), oct(os.stat("f").st_mode))[1])
    probe("link_write_shared")(lambda: (open("h", "ab").write(b"!"), open("f").read())[1])
    probe("link_unlink_one")(lambda: (os.unlink("h"), os.stat("f").st_nlink)[1])
    probe("link_symlink_nofollow")(lambda: (os.link("s", "hs", follow_symlinks=False),
                                            stat.S_ISLNK(os.lstat("hs").st_mode))[1])
    probe("link_symlink_follow")(lambda: (os.link("s", "hf", follow_symlinks=True),
                                          stat.S_ISREG(os.lstat("hf").st_mode),
                                          os.stat("f").st_nlink)[1:])

    # chmod family
    probe("chmod")(lambda: (os.chmod("f", 0o640), oct(os.stat("f").st_mode))[1])
    probe("chmod_dir")(lambda: (os.chmod("d", 0o700), oct(os.stat("d").st_mode))[1])
    probe("chmod_missing")(lambda: os.chmod("nope", 0o600))
    probe("chmod_suid_bits")(lambda: (os.chmod("f", 0o4755), oct(os.stat("f").st_mode))[1])
    probe("fchmod")(lambda: fchmod_probe())
    probe("fchmodat_nofollow_symlink")(
        lambda: cerr(libc.syscall(452, -100, b"s", 0o600, 0x100)))  # fchmodat2
    probe("chmod_via_symlink")(lambda: (os.chmod("s", 0o644), oct(os.stat("f").st_mode))[1])

    # chown family
    uid, gid = os.getuid(), os.getgid()
    probe("chown_self")(lambda: os.chown("f", uid, gid))
    probe("chown_noop")(lambda: os.chown("f", -1, -1))
    probe("chown_root")(lambda: os.chown("f", 0, -1))
    probe("chgrp_root")(lambda: os.chown("f", -1, 0))
    probe("lchown_symlink")(lambda: os.lchown("s", uid, gid))
    probe("fchown")(lambda: fchown_probe(uid))
    probe("chown_clears_suid")(lambda: (os.chmod("f", 0o4755), os.chown("f", uid, gid),
                                        oct(os.stat("f").st_mode))[2])

    # times
    probe("utime")(lambda: (os.utime("f", (1, 2)), os.stat("f").st_atime, os.stat("f").st_mtime)[1:])
    probe("utime_ns")(lambda: (os.utime("f", ns=(5, 1000000007)), os.stat("f").st_mtime_ns)[1])
    probe("utime_dir")(lambda: (os.utime("d", (3, 4)), os.stat("d").st_mtime)[1])
    probe("utime_symlink_nofollow")(lambda: (os.utime("s", (7, 8), follow_symlinks=False),
                                             os.lstat("s").st_mtime, os.stat("s").st_mtime)[1:])
    probe("utime_now")(lambda: (os.utime("f"), os.stat("f").st_mtime > 1000)[1])
    probe("utime_missing")(lambda: os.utime("nope", (1, 1)))
    probe("utimensat_bad_nsec")(lambda: utimensat_bad())

    # truncate
    probe("truncate_shrink")(lambda: (os.truncate("f", 2), open("f").read())[1])
    probe("truncate_grow")(lambda: (os.truncate("f", 10), os.stat("f").st_size)[1])
    probe("truncate_dir")(lambda: os.truncate("d", 0))
    probe("truncate_negative")(lambda: os.truncate("f", -1))
    probe("truncate_missing")(lambda: os.truncate("nope", 0))
    probe("truncate_symlink")(lambda: (os.truncate("s", 1), os.stat("f").st_size)[1])

    # mknod
    probe("mknod_reg")(lambda: (os.mknod("m", 0o640 | stat.S_IFREG), oct(os.stat("m").st_mode))[1])
    probe("mknod_default")(lambda: (os.mknod("m2"), oct(os.stat("m2").st_mode))[1])
    probe("mknod_chr")(lambda: os.mknod("c", 0o600 | stat.S_IFCHR, os.makedev(1, 3)))
    probe("mknod_exists")(lambda: os.mknod("m"))
    probe("mkfifo")(lambda: (os.mkfifo("fifo", 0o640), oct(os.stat("fifo").st_mode),
                             os.stat("fifo").st_size)[1:])
    probe("mkfifo_io")(lambda: fifo_io())
    probe("mkfifo_exists")(lambda: os.mkfifo("fifo"))
    probe("mkfifo_listed")(lambda: "fifo" in os.listdir("."))
    probe("mknod_bad_type")(lambda: cerr(libc.mknod(b"bad", 0o170000 | 0o600, 0)))

    # open flags
    probe("open_excl_exists")(lambda: os.open("f", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    probe("open_directory_file")(lambda: os.open("f", os.O_RDONLY | os.O_DIRECTORY))
    probe("open_dir_write")(lambda: os.open("d", os.O_WRONLY))
    probe("open_nofollow")(lambda: os.open("s", os.O_RDONLY | os.O_NOFOLLOW))
    probe("open_creat_trailing_slash")(lambda: os.open("new/", os.O_CREAT | os.O_WRONLY))
    probe("tmpfile")(lambda: tmpfile_probe())
    probe("tmpfile_rdonly")(lambda: os.open(".", os.O_TMPFILE | os.O_RDONLY, 0o600))
    probe("tmpfile_on_file")(lambda: os.open("f", os.O_TMPFILE | os.O_RDWR, 0o600))
    probe("unlinked_nlink")(lambda: unlinked_probe())
    probe("rmdir_nonempty")(lambda: (touch("d/x"), os.rmdir("d")))
    probe("unlink_dir")(lambda: os.unlink("d"))

    # rename
    probe("rename_exchange")(lambda: exchange_probe())
    probe("rename_exchange_missing")(lambda: cerr(libc.renameat2(-100, b"f", -100, b"zz", 2)))
    probe("rename_noreplace")(lambda: cerr(libc.renameat2(-100, b"f", -100, b"m", 1)))
    probe("rename_exchange_noreplace")(lambda: cerr(libc.renameat2(-100, b"f", -100, b"m", 3)))
    probe("rename_dir_into_self")(lambda: (os.mkdir("p"), os.rename("p", "p/q")))

    # xattrs (trusted/security names: same answer on any tmpfs for a user)
    probe("getxattr_trusted")(lambda: os.getxattr("f", "trusted.x"))
    probe("setxattr_trusted")(lambda: os.setxattr("f", "trusted.x", b"1"))
    probe("getxattr_security")(lambda: os.getxattr("f", "security.x"))
    probe("getxattr_badns")(lambda: os.getxattr("f", "bogus.x"))
    probe("getxattr_empty_name")(lambda: os.getxattr("f", ""))
    probe("getxattr_long_name")(lambda: os.getxattr("f", "trusted." + "a" * 300))
    probe("setxattr_flags")(lambda: cerr(libc.setxattr(b"f", b"trusted.x", b"1", 1, 7)))
    probe("getxattr_missing")(lambda: os.getxattr("nope", "trusted.x"))

    # openat2 and RESOLVE_*
    probe("openat2_plain")(lambda: oa2(-100, b"f", os.O_RDONLY, 0, 0))
    probe("openat2_beneath_dotdot")(lambda: oa2(dfd(), b"../f", os.O_RDONLY, 0, 0x08))
    probe("openat2_beneath_abs")(lambda: oa2(dfd(), b"/etc/hostname", os.O_RDONLY, 0, 0x08))
    probe("openat2_beneath_inside")(lambda: oa2(dfd(), b"x", os.O_RDONLY, 0, 0x08))
    probe("openat2_beneath_abs_symlink")(lambda: (os.symlink("/etc", "d/abs"),
                                                  oa2(dfd(), b"abs/hostname", os.O_RDONLY, 0, 0x08))[1])
    probe("openat2_in_root_abs")(lambda: oa2(dfd(), b"/x", os.O_RDONLY, 0, 0x10))
    probe("openat2_in_root_dotdot")(lambda: oa2(dfd(), b"../../x", os.O_RDONLY, 0, 0x10))
    probe("openat2_no_symlinks")(lambda: oa2(-100, b"s", os.O_RDONLY, 0, 0x04))
    probe("openat2_no_symlinks_nofollow")(
        lambda: oa2(-100, b"s", os.O_PATH | os.O_NOFOLLOW, 0, 0x04))
    probe("openat2_no_magiclinks")(lambda: oa2(-100, b"/proc/self/fd/0", os.O_RDONLY, 0, 0x02))
    probe("openat2_no_xdev_same")(lambda: oa2(-100, b"d/x", os.O_RDONLY, 0, 0x01))
    probe("openat2_no_xdev_proc")(lambda: oa2(-100, b"/proc/self/status", os.O_RDONLY, 0, 0x01))
    probe("openat2_cached_creat")(lambda: oa2(-100, b"nc", os.O_CREAT | os.O_WRONLY, 0o600, 0x20))
    probe("openat2_bad_resolve")(lambda: oa2(-100, b"f", os.O_RDONLY, 0, 0x400))
    probe("openat2_beneath_in_root")(lambda: oa2(-100, b"f", os.O_RDONLY, 0, 0x18))
    probe("openat2_mode_without_creat")(lambda: oa2(-100, b"f", os.O_RDONLY, 0o600, 0))
    probe("openat2_small_size")(lambda: oa2(-100, b"f", os.O_RDONLY, 0, 0, size=16))
    probe("openat2_big_size_nonzero")(lambda: oa2(-100, b"f", os.O_RDONLY, 0, 0, size=40, tail=1))
    probe("openat2_big_size_zero")(lambda: oa2(-100, b"f", os.O_RDONLY, 0, 0, size=40))

    # statfs
    probe("statvfs")(lambda: (os.statvfs(".").f_namemax, os.statvfs(".").f_bsize))
    print(json.dumps(OUT, sort_keys=True))


_DFD = []


def dfd():
    if not _DFD:
        if not os.path.exists("d/x"):
            touch("d/x")
        _DFD.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY))
    return _DFD[0]


def oa2(dirfd, path, flags, mode, resolve, size=24, tail=0):
    buf = (ctypes.c_uint64 * 5)(flags, mode, resolve, tail, 0)
    fd = libc.syscall(437, dirfd, ctypes.c_char_p(path), buf, ctypes.c_size_t(size))
    if fd < 0:
        return errno.errorcode.get(ctypes.get_errno(), "?")
    os.close(fd)
    return "ok"


def fifo_io():
    r = os.open("fifo", os.O_RDONLY | os.O_NONBLOCK)
    w = os.open("fifo", os.O_WRONLY)
    os.write(w, b"ping")
    got = os.read(r, 10)
    # Not probed: EOF right after the writer closes.  The sentry closes its
    # copy of an injected fd just after the task resumes (ADDFD|SEND), so
    # for a moment the FIFO still has a writer (docs/compat.md).
    os.close(w)
    os.close(r)
    return [got.decode(), stat.S_ISFIFO(os.fstat(os.open("fifo", os.O_RDONLY | os.O_NONBLOCK)).st_mode)]


def fchmod_probe():
    fd = os.open("f", os.O_RDONLY)
    try:
        os.fchmod(fd, 0o604)
        return oct(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def fchown_probe(uid):
    fd = os.open("f", os.O_RDONLY)
    try:
        os.fchown(fd, uid, -1)
        try:
            os.fchown(fd, 0, -1)
        except OSError as e:
            return errno.errorcode[e.errno]
        return "no error"
    finally:
        os.close(fd)


class Timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


def utimensat_bad():
    ts = (Timespec * 2)((1, 2000000000), (1, 0))
    return cerr(libc.utimensat(-100, b"f", ts, 0))


def tmpfile_probe():
    fd = os.open(".", os.O_TMPFILE | os.O_RDWR, 0o640)
    try:
        os.write(fd, b"abc")
        st = os.fstat(fd)
        return [oct(st.st_mode), st.st_nlink, st.st_size, "tmp" in os.listdir(".")]
    finally:
        os.close(fd)


def unlinked_probe():
    touch("u", b"xyz")
    os.chmod("u", 0o604)
    fd = os.open("u", os.O_RDONLY)
    try:
        os.unlink("u")
        st = os.fstat(fd)
        return [st.st_nlink, oct(st.st_mode), st.st_size, os.read(fd, 3).decode()]
    finally:
        os.close(fd)


def exchange_probe():
    touch("ea", b"A")
    os.mkdir("eb")
    rc = cerr(libc.renameat2(-100, b"ea", -100, b"eb", 2))
    return [rc, os.path.isdir("ea"), open("eb").read()]


if __name__ == "__main__":
    main()
