# id: FLT-07
# category: filter
# technique: sweep path-taking syscalls (stat, access, readlink, truncate, rename, unlink, link, chmod, chown, utime, xattr, mkdir, mknod, symlink, creat, openat2, inotify) against a host file
# expect: DENY(ENOENT)
# catalogue: 29
# race: no
# audit: view.hidden
import ctypes, os, struct, pvesc

def sweep(path, d):
    """Every call in turn on path (a file) in directory d; returns the
    list of (name, "" on success or the error text)."""
    res = []
    def t(name, fn):
        try:
            r = fn()
            res.append((name, ""))
            pvesc.out(name, "ok", r if isinstance(r, (int, str, bytes)) else "")
        except OSError as e:
            res.append((name, str(e) or "error"))
            pvesc.out(name, "->", e)
    t("stat", lambda: os.stat(path).st_size)
    t("lstat", lambda: os.lstat(path).st_size)
    t("access", lambda: int(os.access(path, os.R_OK)) or (_ for _ in ()).throw(OSError(13, "no")))
    t("statx", lambda: _statx(path))
    t("openat2", lambda: _openat2_read(path))
    t("truncate", lambda: os.truncate(path, 3))
    t("chmod", lambda: os.chmod(path, 0o644))
    t("chown", lambda: os.chown(path, os.getuid(), os.getgid()))
    t("utime", lambda: os.utime(path, (1, 1)))
    t("setxattr", lambda: os.setxattr(path, "user.pv", b"1"))
    t("link", lambda: os.link(path, os.path.join(d, "hl")))
    t("symlink", lambda: os.symlink("/", os.path.join(d, "sl")))
    t("mkdir", lambda: os.mkdir(os.path.join(d, "newdir")))
    t("mkfifo", lambda: os.mkfifo(os.path.join(d, "fifo")))
    t("creat", lambda: os.close(os.open(os.path.join(d, "created"), os.O_CREAT | os.O_WRONLY, 0o644)))
    t("inotify_add_watch", lambda: _inotify(d))
    t("rename", lambda: os.rename(path, path + ".moved"))
    t("rename-back", lambda: os.rename(path + ".moved", path))
    t("unlink", lambda: os.unlink(path))
    return res

def _statx(path):
    buf = ctypes.create_string_buffer(256)
    r, e = pvesc.sc(332, -100, pvesc.cstr(path), 0, 0x7ff, buf)
    if r < 0:
        raise OSError(0, e)
    return r

def _openat2_read(path):
    how = ctypes.create_string_buffer(struct.pack("QQQ", os.O_RDONLY, 0, 0))
    fd, e = pvesc.sc(437, -100, pvesc.cstr(path), how, 24)
    if fd < 0:
        raise OSError(0, e)
    data = os.read(fd, 200)
    os.close(fd)
    return data

def _inotify(d):
    fd, e = pvesc.sc(253)  # inotify_init
    if fd < 0:
        raise OSError(0, e)
    r, e = pvesc.sc(254, fd, pvesc.cstr(d), 0x100)
    os.close(fd)
    if r < 0:
        raise OSError(0, e)
    return r

def attack(c):
    sweep(c["secret"], c["home"])

def twin(c):
    os.mkdir("d")
    with open("d/f", "w") as f:
        f.write("hello\n")
    res = dict(sweep(os.path.abspath("d/f"), os.path.abspath("d")))
    # openat2 may be refused as a whole with ENOSYS (catalogue row 31)
    if "ENOSYS" in res["openat2"]:
        res["openat2"] = ""
    # xattrs and chown may be refused on the allowed target by design
    need = ("stat", "lstat", "access", "statx", "openat2", "truncate", "chmod",
            "utime", "link", "symlink", "mkdir", "creat", "rename",
            "rename-back", "unlink")
    return all(res[n] == "" for n in need)

pvesc.main(attack, twin)
