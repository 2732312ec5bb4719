#!/usr/bin/env python3
"""Exec TOCTOU (catalogue SUP-01, SUP-02): while a task execs a path held
in memory, another thread of it (or another process, through MAP_SHARED
memory) flips the bytes between an allowed program (/usr/bin/true) and one
that is not allowed (/usr/bin/touch, which would create a canary file in
the workspace).  The denied program must never run: the canary never
appears, in any iteration."""

import os

import pvtest
from pvtest import expect, expect_eq

# 10,000 tries as root; the unprivileged variant runs the same mechanism a
# fifth as often to keep the suite's time in bounds.
ITERATIONS = {"root": 10000, "user": 2000}

SCRIPT = r"""
import ctypes, json, mmap, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
n = int(sys.argv[1])
ALLOWED = b"/usr/bin/true\0\0"
DENIED = b"/usr/bin/touch\0"
argv = (ctypes.c_char_p * 3)(b"x", b"/workspace/canary", None)
shared = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED)
shared_addr = ctypes.addressof(ctypes.c_char.from_buffer(shared))
outcomes = {}

def flip_bytes(addr, stop):
    while not stop.is_set():
        ctypes.memmove(addr, DENIED, len(DENIED))
        ctypes.memmove(addr, ALLOWED, len(ALLOWED))

for i in range(n):
    by_process = i % 2 == 1
    if by_process:
        ctypes.memmove(shared_addr, ALLOWED, len(ALLOWED))
        flipper = os.fork()
        if flipper == 0:
            while True:
                shared[0:len(DENIED)] = DENIED
                shared[0:len(ALLOWED)] = ALLOWED
    pid = os.fork()
    if pid == 0:
        if by_process:
            path = ctypes.c_char_p(shared_addr)
        else:
            buf = ctypes.create_string_buffer(ALLOWED, 32)
            stop = threading.Event()
            threading.Thread(target=flip_bytes, args=(ctypes.addressof(buf), stop),
                             daemon=True).start()
            path = ctypes.c_char_p(ctypes.addressof(buf))
        libc.execv(path, argv)
        os._exit(ctypes.get_errno())
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if by_process:
        os.kill(flipper, 9)
        os.waitpid(flipper, 0)
    outcomes[code] = outcomes.get(code, 0) + 1
    if os.path.exists("/workspace/canary"):
        break
print(json.dumps({"outcomes": outcomes, "canary": os.path.exists("/workspace/canary")}))
"""


def exec_race(ctx):
    iterations = int(os.environ.get("PYVISOR_RACE_ITERATIONS", ITERATIONS[ctx.mode]))
    work = ctx.tmpdir()
    script = ctx.script(work, "race.py", SCRIPT)
    # 10,000 forks and execs: more CPU than the default 60 s on a busy machine.
    run = ctx.run_json(["--timeout", "600", "--cpu-seconds", "600", script, str(iterations)],
                       timeout=700)
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    expect(not report["canary"], "the denied program ran: the canary exists")
    expect("canary" not in pvtest.artifact_map(run),
           "the denied program ran: canary listed as an artifact")
    outcomes = {int(k): v for k, v in report["outcomes"].items()}
    expect_eq(sum(outcomes.values()), iterations, "iterations completed")
    # Each attempt ran the allowed program (0), was refused (13), or, on a
    # loaded machine, failed closed because a stop did not come in time
    # (EAGAIN, 11).
    expect(set(outcomes) <= {0, 11, 13}, f"unexpected exec outcomes: {outcomes}")
    expect(outcomes.get(0, 0) > 0, f"the allowed program never ran: {outcomes}")


if __name__ == "__main__":
    pvtest.main([exec_race])
