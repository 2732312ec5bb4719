"""Helpers for escape-case payloads (bench/escapes/cases/*.py).

A case is run as   python3 CASE.py attack|twin CONFIG_JSON
CONFIG_JSON comes from the harness (run.py) and names the oracle targets:
  home        host directory standing for $HOME (canary files inside)
  secret      path of the canary file in home (random content)
  repo_canary path of the canary file next to the repository's build dir
  port        loopback TCP port of the harness listener
  udp_port    loopback UDP port of the harness listener
  victim      pid of a host process of the sandbox's uid
  token       random string identifying this run (process checks)
The payload prints what it observed; the harness never trusts it for the
verdict.  Twin mode must exit 0 when the allowed operation worked.
Standard library only (ctypes for raw system calls).
"""
import ctypes
import errno as E
import json
import mmap
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def sc(nr, *args):
    """Raw syscall(2) through libc; returns (result, errno name or '')."""
    a = [ctypes.c_long(x) if isinstance(x, int) else x for x in args]
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *a)
    e = ctypes.get_errno() if r == -1 else 0
    return r, (E.errorcode.get(e, str(e)) if e else "")


_SYSCALL = bytes.fromhex(
    "4889f8" "4889f7" "4889d6" "4889ca" "4d89c2" "4d89c8"
    "4c8b4c2408" "0f05" "c3")
_INT80 = bytes.fromhex("53" "4889f8" "4989d3" "4889f3" "4889ca" "4c89d9"
               "cd80" "5b" "c3")
_code = []


def _fn(code, nargs):
    buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE |
            mmap.PROT_EXEC)
    buf.write(code)
    _code.append(buf)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    return ctypes.CFUNCTYPE(ctypes.c_long, *([ctypes.c_long] * nargs))(addr)


def raw(nr, *args):
    """The `syscall` instruction from an RWX page (no libc); returns
    the kernel's value (negative errno on failure)."""
    a = [int(x) for x in args] + [0] * (6 - len(args))
    return _fn(_SYSCALL, 7)(nr, *a)


def int80(nr, a=0, b=0, c=0):
    """An i386 system call through `int 0x80`; returns eax."""
    return _fn(_INT80, 4)(nr, a, b, c)


def cstr(s):
    if isinstance(s, str):
        s = s.encode()
    return ctypes.create_string_buffer(s)


def addr(buf):
    return ctypes.addressof(buf)


def out(*a):
    print(*a, flush=True)


def try_read(path, n=4096):
    """Read path (non-blocking: a pipe or tty never hangs the case);
    print and return the bytes, or None on error."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            data = os.read(fd, n)
        finally:
            os.close(fd)
        out("read", path, data)
        return data
    except OSError as e:
        out("read", path, "->", E.errorcode.get(e.errno, e.errno))
        return None


def try_write(path, data=b"escaped\n", mode="ab"):
    try:
        with open(path, mode) as f:
            f.write(data)
        out("wrote", path)
        return True
    except OSError as e:
        out("write", path, "->", E.errorcode.get(e.errno, e.errno))
        return False


def main(attack, twin):
    """Run attack(cfg) or twin(cfg) per argv; twin's falsy result or
    exception exits 1."""
    mode = sys.argv[1]
    cfg = json.loads(sys.argv[2])
    if mode == "attack":
        attack(cfg)
        sys.exit(0)
    ok = twin(cfg)
    out("twin", "ok" if ok else "FAILED")
    sys.exit(0 if ok else 1)
