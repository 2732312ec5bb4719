"""Per-call cost of single syscalls, measured from inside a process.

Run natively (`python3 emulated.py N`) or inside the sandbox
(`pyvisor run emulated.py N`): the same calls are made through ctypes'
`syscall()` so that Python's own work per call is small and the same in both
places.  Prints one JSON object on stdout: for each measurement the median
(and min, max) over 5 batches of N calls after one warm-up batch, in
nanoseconds per call.

Measurements:
  ctypes_getppid     getppid(): never trapped; the cost of the ctypes call
                     itself plus a plain syscall (subtract it from the others
                     to compare with pv-micro's C numbers)
  stat_host          newfstatat() of a file in the read-only host view
  stat_workspace     newfstatat() of a file in the in-memory workspace
  fstat_host         fstat() of an open host file
  open_host          openat() + close() of a host file (under pyvisor: the
                     fd is opened by the sentry and injected with ADDFD|SEND)
  open_workspace     openat() + close() of a workspace file
  getdents_host      open, getdents64 to the end, close, of a large host
                     directory (/usr/lib/x86_64-linux-gnu); per listing
  getdents_workspace the same for a workspace directory of 2,000 files

Standard library only: this file is copied into the sandbox as the script.
"""
import ctypes
import json
import os
import sys
import time

AT_FDCWD = -100
O_RDONLY = 0
O_DIRECTORY = 0o200000
O_CLOEXEC = 0o2000000
SYS_getppid = 110
SYS_fstat = 5
SYS_openat = 257
SYS_newfstatat = 262
SYS_getdents64 = 217
SYS_close = 3
BATCHES = 5

HOST_FILE = b"/usr/lib/python3.11/os.py"
HOST_DIR = b"/usr/lib/x86_64-linux-gnu"
WS_DIR = "bigdir"
WS_FILES = 2000

libc = ctypes.CDLL(None, use_errno=True)
syscall = libc.syscall
syscall.restype = ctypes.c_long


def check(r, what):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")
    return r


def measure(fn, n):
    for _ in range(n):
        fn()
    per = []
    for _ in range(BATCHES):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        per.append((time.perf_counter_ns() - t0) / n)
    per.sort()
    return {"ns_per_op": round(per[len(per) // 2], 1),
            "ns_min": round(per[0], 1), "ns_max": round(per[-1], 1),
            "iterations": n}


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    buf = ctypes.create_string_buffer(256)
    dbuf = ctypes.create_string_buffer(32768)

    os.makedirs(WS_DIR, exist_ok=True)
    for i in range(WS_FILES):
        with open(os.path.join(WS_DIR, f"f{i:05d}"), "w") as f:
            f.write("x")
    ws_file = os.path.abspath(os.path.join(WS_DIR, "f00000")).encode()
    ws_dir = os.path.abspath(WS_DIR).encode()
    host_fd = os.open(HOST_FILE, os.O_RDONLY)

    def getppid():
        syscall(SYS_getppid)

    def stat_of(path):
        def op():
            check(syscall(SYS_newfstatat, AT_FDCWD, path, buf, 0), "newfstatat")
        return op

    def fstat_host():
        check(syscall(SYS_fstat, host_fd, buf), "fstat")

    def open_of(path):
        def op():
            fd = check(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC),
                       "openat")
            syscall(SYS_close, fd)
        return op

    def getdents_of(path):
        def op():
            fd = check(syscall(SYS_openat, AT_FDCWD, path,
                               O_RDONLY | O_DIRECTORY | O_CLOEXEC), "openat")
            while check(syscall(SYS_getdents64, fd, dbuf, 32768), "getdents64") > 0:
                pass
            syscall(SYS_close, fd)
        return op

    small = max(1, n // 20)
    out = {
        "ctypes_getppid": measure(getppid, n),
        "stat_host": measure(stat_of(HOST_FILE), n),
        "stat_workspace": measure(stat_of(ws_file), n),
        "fstat_host": measure(fstat_host, n),
        "open_host": measure(open_of(HOST_FILE), n),
        "open_workspace": measure(open_of(ws_file), n),
        "getdents_host": measure(getdents_of(HOST_DIR), small),
        "getdents_workspace": measure(getdents_of(ws_dir), small),
    }
    os.close(host_fd)
    for i in range(WS_FILES):
        os.unlink(os.path.join(WS_DIR, f"f{i:05d}"))
    os.rmdir(WS_DIR)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
