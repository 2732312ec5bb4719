#!/usr/bin/env python3
"""Resource limits: each limit ends in its errno inside or its status in
the result, the result's `limits` object reports it, the host is not
affected, and a program within the limit (the benign twin) runs normally."""

import json
import os
import shutil

import pvtest
from pvtest import expect, expect_eq

MIB = 1 << 20

HEAP_BOMB = r"""
import json, sys
limit = int(sys.argv[1])
chunks, got = [], 0
try:
    while got < 8 * limit:
        chunks.append(b"x" * (8 << 20))
        got += 8 << 20
    outcome = "allocated"
except MemoryError:
    outcome = "MemoryError"
print(json.dumps({"outcome": outcome, "bytes": got}))
"""

NUMPY_BOMB = r"""
import json, sys
import numpy as np
n = int(sys.argv[1])
try:
    a = np.ones(n // 8)
    outcome = "allocated %d" % a.nbytes
except MemoryError:
    outcome = "MemoryError"
print(json.dumps({"outcome": outcome}))
"""

# Several processes, each below --memory, together above it: only the
# supervisor's whole-run accounting can see that.
SPREAD = r"""
import os, sys, time
each = int(sys.argv[1])
kids = []
for _ in range(int(sys.argv[2])):
    pid = os.fork()
    if pid == 0:
        data = b"y" * each
        time.sleep(float(sys.argv[3]))
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print("all children done")
"""

# Bytes written to memfds that no process maps are in no RSS figure: the
# supervisor counts the memfds the run holds.
MEMFD_BOMB = r"""
import os, sys, time
fds = []
for i in range(int(sys.argv[1])):
    fd = os.memfd_create("bomb%d" % i)
    for _ in range(int(sys.argv[2])):
        os.write(fd, b"m" * (1 << 20))
    fds.append(fd)
time.sleep(0.5)
print("kept", len(fds))
"""

CPU_BURN = r"""
import os, sys
procs = int(sys.argv[1])
for _ in range(procs - 1):
    if os.fork() == 0:
        break
x = 0
while True:
    x += 1
"""

CPU_SHORT = r"""
import time
t = time.process_time()
x = 0
while time.process_time() - t < 0.3:
    x += 1
print("done")
"""

FORK_BOMB = r"""
import errno, json, os, sys, time
made, err = 0, None
r, w = os.pipe()
while made < int(sys.argv[1]):
    try:
        pid = os.fork()
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)  # wait until the parent is done
        os._exit(0)
    made += 1
os.close(w)
print(json.dumps({"made": made, "errno": err}))
"""

THREADS = r"""
import json, threading
ev = threading.Event()
started, error = 0, None
try:
    while started < 1000:
        threading.Thread(target=ev.wait, daemon=True).start()
        started += 1
except RuntimeError as e:
    error = str(e)
ev.set()
print(json.dumps({"started": started, "error": error}))
"""

FD_EXHAUST = r"""
import errno, json, sys
want = int(sys.argv[1])
fds, err = [], None
try:
    while len(fds) < want:
        fds.append(open("/workspace/f%d" % len(fds), "w"))
except OSError as e:
    err = errno.errorcode.get(e.errno)
print(json.dumps({"opened": len(fds), "errno": err}))
"""

DISK_FILL = r"""
import errno, json, os, sys
want = int(sys.argv[1])
err, done = None, 0
with open("/workspace/big.bin", "wb", buffering=0) as f:
    chunk = b"z" * 65536
    try:
        while done < want:
            done += f.write(chunk)
    except OSError as e:
        err = errno.errorcode.get(e.errno)
print(json.dumps({"written": done, "errno": err,
                  "size": os.path.getsize("/workspace/big.bin")}))
"""

OUTPUT_FLOOD = r"""
import os, sys
n = int(sys.argv[1])
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        chunk = b"%d" % i * 65536
        for _ in range(n):
            os.write(1, chunk)
            os.write(2, chunk)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
"""


def limit_entry(run, key):
    entry = run.result.get("limits", {}).get(key)
    expect(isinstance(entry, dict), f"result limits.{key} missing: "
           f"{run.result.get('limits')!r}")
    return entry


def limits_shape(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "p.py", "print('hi')\n")
    run = ctx.run_json(["--memory", "300", "--cpu-seconds", "7", "--max-procs",
                        "40", "--max-open-files", "100", "--max-file-size",
                        "3M", script])
    pvtest.expect_status(run, "ok", 0)
    want = {"memory_bytes": 300 * MIB, "cpu_ms": 7000, "wall_ms": 60000,
            "tasks": 40, "open_files": 100, "file_size_bytes": 3 * MIB,
            "stdout_bytes": MIB, "stderr_bytes": MIB}
    limits = run.result.get("limits")
    expect(isinstance(limits, dict), "result has no limits object")
    expect_eq(sorted(limits), sorted(want), "limits keys")
    for key, value in want.items():
        entry = limits[key]
        expect_eq(entry.get("limit"), value, f"limits.{key}.limit")
        expect(type(entry.get("peak")) is int and entry["peak"] >= 0,
               f"limits.{key}.peak must be a non-negative int: {entry!r}")
    expect_eq(limits["stdout_bytes"]["peak"], 3, "stdout bytes written")
    expect(1 <= limits["tasks"]["peak"] <= 40, f"tasks peak {limits['tasks']}")
    expect(limits["memory_bytes"]["peak"] > MIB,
           f"memory peak of a python run: {limits['memory_bytes']}")


def defaults(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "p.py", "import resource, json\n"
                        "print(json.dumps([resource.getrlimit(r) for r in ("
                        "resource.RLIMIT_DATA, resource.RLIMIT_CPU, "
                        "resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE, "
                        "resource.RLIMIT_FSIZE)]))\n")
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect_eq(got, [[2048 * MIB] * 2, [60, 61], [256, 256], [1024, 1024],
                    [1024 * MIB] * 2], "rlimits inside with the defaults")
    limits = run.result["limits"]
    expect_eq(limits["memory_bytes"]["limit"], 2048 * MIB, "default memory")
    expect_eq(limits["cpu_ms"]["limit"], 60000, "default cpu")


def heap_bomb(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "bomb.py", HEAP_BOMB)
    run = ctx.run_json(["--memory", "256", script, str(256 * MIB)])
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect_eq(got["outcome"], "MemoryError", "heap bomb outcome inside")
    expect(got["bytes"] < 256 * MIB, f"allocated {got['bytes']} bytes "
           "under --memory 256")
    # The benign twin: 100 MiB fit in 256.
    script = ctx.script(work, "twin.py", HEAP_BOMB.replace(
        "8 * limit", "limit"))
    run = ctx.run_json(["--memory", "256", script, str(100 * MIB)])
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect_eq(got["outcome"], "allocated", "100 MiB under --memory 256")


def numpy_bomb(ctx):
    work = ctx.tmpdir()
    probe = ctx.run_json([ctx.script(work, "np.py", "import numpy\n")])
    if probe.result["status"] != "ok":
        raise pvtest.Skip("numpy is not importable in the sandbox")
    script = ctx.script(work, "npbomb.py", NUMPY_BOMB)
    run = ctx.run_json(["--memory", "512", script, str(600 * MIB)])
    pvtest.expect_status(run, "ok", 0)
    expect_eq(pvtest.inner_report(run)["outcome"], "MemoryError",
              "numpy 600 MiB under --memory 512")
    run = ctx.run_json(["--memory", "512", script, str(100 * MIB)])
    pvtest.expect_status(run, "ok", 0)
    expect_eq(pvtest.inner_report(run)["outcome"], f"allocated {100 * MIB}",
              "numpy 100 MiB under --memory 512")


def memory_whole_run(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "spread.py", SPREAD)
    run = ctx.run_json(["--memory", "256", "--timeout", "60", script,
                        str(100 * MIB), "4", "30"], timeout=90)
    pvtest.expect_status(run, "memory_limit", 137)
    expect_eq(run.result["signal"], 9, "signal of a memory_limit run")
    expect(run.elapsed < 30, f"memory_limit took {run.elapsed:.1f} s")
    peak = limit_entry(run, "memory_bytes")["peak"]
    expect(peak > 256 * MIB, f"memory peak {peak} not above the limit")
    # Twin: the same processes with room for all of them.
    run = ctx.run_json(["--memory", "1024", script, str(20 * MIB), "4",
                        "0.5"], timeout=90)
    pvtest.expect_status(run, "ok", 0)
    expect(run.result["stdout"].strip() == "all children done",
           f"twin output {run.result['stdout']!r}")


def memfd_bomb(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "memfd.py", MEMFD_BOMB)
    run = ctx.run_json(["--memory", "256", script, "8", "100"], timeout=90)
    pvtest.expect_status(run, "memory_limit", 137)
    expect(limit_entry(run, "memory_bytes")["peak"] > 256 * MIB,
           f"memory peak {run.result['limits']['memory_bytes']}")
    run = ctx.run_json(["--memory", "256", script, "4", "10"], timeout=90)
    pvtest.expect_status(run, "ok", 0)
    expect_eq(run.result["stdout"], "kept 4\n", "40 MiB of memfds in 256")
    peak = limit_entry(run, "memory_bytes")["peak"]
    expect(peak >= 40 * MIB, f"memfd bytes not counted: peak {peak}")


WORKSPACE_FILL = r"""
import sys
n = int(sys.argv[1])
for i in range(n):
    with open("/workspace/blob%d" % i, "wb") as f:
        f.write(b"w" * (10 << 20))
print("wrote", n * 10, "MiB")
"""


def workspace_fill(ctx):
    # The workspace lives in memory (memfds the supervisor holds): files
    # written and closed count toward --memory, even when the program is
    # done before the next sample.
    work = ctx.tmpdir()
    script = ctx.script(work, "fill.py", WORKSPACE_FILL)
    run = ctx.run_json(["--memory", "256", script, "30"], timeout=90)
    pvtest.expect_status(run, "memory_limit", 137)
    expect(limit_entry(run, "memory_bytes")["peak"] > 256 * MIB,
           f"memory peak {run.result['limits']['memory_bytes']}")
    run = ctx.run_json(["--memory", "256", script, "10"], timeout=90)
    pvtest.expect_status(run, "ok", 0)
    expect_eq(len(run.result["artifacts"]), 10, "artifacts of 100 MiB")
    expect(limit_entry(run, "memory_bytes")["peak"] >= 100 * MIB,
           f"workspace bytes not counted: {run.result['limits']}")


def cpu_burn(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "burn.py", CPU_BURN)
    run = ctx.run_json(["--cpu-seconds", "1", "--timeout", "60", script, "1"],
                       timeout=90)
    pvtest.expect_status(run, "cpu_limit", 152)
    cpu = limit_entry(run, "cpu_ms")["peak"]
    expect(cpu >= 900, f"cpu_limit after only {cpu} ms of CPU")
    expect(run.elapsed < 20, f"a 1 s CPU limit took {run.elapsed:.1f} s")
    twin = ctx.script(work, "short.py", CPU_SHORT)
    run = ctx.run_json(["--cpu-seconds", "5", twin])
    pvtest.expect_status(run, "ok", 0)


def cpu_whole_run(ctx):
    # Two processes burning together cross 2 s of CPU in about 1 s of wall
    # time, before either reaches its own RLIMIT_CPU: the supervisor ends
    # the run.
    if (os.cpu_count() or 1) < 2:
        raise pvtest.Skip("needs 2 CPUs")
    work = ctx.tmpdir()
    script = ctx.script(work, "burn.py", CPU_BURN)
    run = ctx.run_json(["--cpu-seconds", "2", "--timeout", "60", script, "2"],
                       timeout=90)
    pvtest.expect_status(run, "cpu_limit", 152)
    cpu = limit_entry(run, "cpu_ms")["peak"]
    expect(cpu >= 1900, f"cpu_limit after only {cpu} ms of CPU")


def fork_bomb(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "forks.py", FORK_BOMB)
    run = ctx.run_json(["--max-procs", "16", script, "1000"], timeout=90)
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect_eq(got["errno"], "EAGAIN", "fork beyond --max-procs")
    expect(got["made"] < 16, f"{got['made']} forks under --max-procs 16")
    expect(limit_entry(run, "tasks")["peak"] <= 16,
           f"tasks peak {run.result['limits']['tasks']}")
    # Twin: 10 children fit.
    run = ctx.run_json(["--max-procs", "128", script, "10"], timeout=90)
    pvtest.expect_status(run, "ok", 0)
    expect_eq(pvtest.inner_report(run), {"made": 10, "errno": None},
              "10 forks under --max-procs 128")


def threads_within_memory(ctx):
    # The benign twin of the memory limit: reserved address space (thread
    # stacks not yet touched, malloc arenas) is not what --memory limits, so
    # a thread pool still starts under a small limit.
    work = ctx.tmpdir()
    script = ctx.script(work, "threads.py", THREADS)
    run = ctx.run_json(["--memory", "512", script], timeout=90)
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect(got["started"] >= 48, f"threads under --memory 512: {got}")


def thread_bomb(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "threads.py", THREADS)
    run = ctx.run_json(["--max-procs", "16", script], timeout=90)
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect(got["error"] is not None and got["started"] < 16,
           f"threads under --max-procs 16: {got}")


def fd_exhaustion(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "fds.py", FD_EXHAUST)
    run = ctx.run_json(["--max-open-files", "40", script, "1000"])
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect_eq(got["errno"], "EMFILE", "open beyond --max-open-files")
    expect(got["opened"] < 40, f"opened {got['opened']} under 40")
    expect(limit_entry(run, "open_files")["peak"] <= 40,
           f"open files peak {run.result['limits']['open_files']}")
    run = ctx.run_json(["--max-open-files", "40", script, "20"])
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect_eq((got["opened"], got["errno"]), (20, None), "20 files under 40")


def disk_fill(ctx):
    work = ctx.tmpdir()
    out = os.path.join(work, "out")
    script = ctx.script(work, "fill.py", DISK_FILL)
    run = ctx.run_json(["--max-file-size", "1M", "--output-dir", out, script,
                        str(4 * MIB)])
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect_eq(got["errno"], "EFBIG", "write beyond --max-file-size")
    expect_eq(got["size"], MIB, "file size at the limit")
    arts = pvtest.artifact_map(run)
    expect_eq(arts["big.bin"]["size_bytes"], MIB, "artifact size")
    expect_eq(os.path.getsize(os.path.join(out, "big.bin")), MIB,
              "written artifact size")
    expect_eq(limit_entry(run, "file_size_bytes")["peak"], MIB,
              "largest file")
    run = ctx.run_json(["--max-file-size", "1M", script, str(512 * 1024)])
    got = pvtest.inner_report(run)
    expect_eq((got["errno"], got["size"]), (None, 512 * 1024),
              "512 KiB under a 1 MiB file size limit")


def output_flood(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "flood.py", OUTPUT_FLOOD)
    run = ctx.run_json(["--max-output", "1000", script, "80"], timeout=120)
    pvtest.expect_status(run, "ok", 0)
    total = 4 * 80 * 65536
    for stream in ("stdout", "stderr"):
        expect(run.result[f"{stream}_truncated"] is True, f"{stream} truncated")
        expect_eq(len(run.result[stream].encode()), 1000, f"{stream} kept")
        expect_eq(limit_entry(run, f"{stream}_bytes")["peak"], total,
                  f"{stream} bytes written by 4 processes")


def sysconf_shows_limit(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "si.py", "import os, json\n"
                        "pg = os.sysconf('SC_PAGE_SIZE')\n"
                        "print(json.dumps([os.sysconf('SC_PHYS_PAGES') * pg,"
                        " os.sysconf('SC_AVPHYS_PAGES') * pg]))\n")
    run = ctx.run_json(["--memory", "300", script])
    pvtest.expect_status(run, "ok", 0)
    total, avail = pvtest.inner_report(run)
    expect_eq(total, 300 * MIB, "SC_PHYS_PAGES under --memory 300")
    expect(0 < avail <= 300 * MIB, f"SC_AVPHYS_PAGES {avail}")
    # Twin: a limit above the host's RAM shows the host's RAM.
    host = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    run = ctx.run_json(["--memory", str(1 << 20), script])
    total, _ = pvtest.inner_report(run)
    expect_eq(total, host, "SC_PHYS_PAGES with a limit above the host RAM")


CAPS = r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
class Hdr(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]
hdr = Hdr(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
data = (Data * 2)()
r = libc.capget(ctypes.byref(hdr), data)
print(json.dumps({"r": r, "caps": [getattr(d, f) for d in data for f in
                  ("effective", "permitted", "inheritable")],
                  "nnp": libc.prctl(39, 0, 0, 0, 0),  # PR_GET_NO_NEW_PRIVS
                  "uid": os.getuid(), "euid": os.geteuid()}))
"""


def no_capabilities(ctx):
    # Whether pyvisor is started as root or not, the program holds no
    # capability, cannot gain one (no_new_privs) and is not uid 0.
    work = ctx.tmpdir()
    script = ctx.script(work, "caps.py", CAPS)
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    got = pvtest.inner_report(run)
    expect_eq((got["r"], got["caps"], got["nnp"]), (0, [0] * 6, 1),
              "capget and no_new_privs inside")
    expect(got["uid"] != 0 and got["euid"] != 0, f"uid inside: {got}")


def many_files(ctx):
    # The view holds one fd per in-memory file: pyvisor raises its own soft
    # fd limit, so a workspace of thousands of files works even when
    # started with the usual soft limit of 1024; the sandbox keeps its own.
    prlimit = shutil.which("prlimit")
    if not prlimit:
        raise pvtest.Skip("prlimit (util-linux) not found")
    work = ctx.tmpdir()
    script = ctx.script(work, "many.py", "import os\n"
                        "for i in range(3000):\n"
                        "    with open('/workspace/f%04d' % i, 'w') as f:\n"
                        "        f.write('x')\n"
                        "print('made', len(os.listdir('/workspace')))\n")
    run = ctx.run_raw([prlimit, "--nofile=1024:", ctx.pyvisor, "run",
                       "--json", script])
    expect_eq(run.returncode, 0, f"exit status; stderr {run.stderr[-300:]!r}")
    result = json.loads(run.stdout)
    expect_eq((result["status"], result["stdout"]), ("ok", "made 3001\n"),
              "3000 files in the workspace")
    expect_eq(len(result["artifacts"]), 3000, "artifacts")
    expect_eq(result["limits"]["open_files"]["limit"], 1024,
              "the sandbox's own fd limit")


def bad_values(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "p.py", "print(1)\n")
    for args in (["--memory", "0"], ["--memory", "lots"],
                 ["--cpu-seconds", "-1"], ["--max-procs", "0"],
                 ["--max-open-files", "1x"], ["--max-file-size", "5T"]):
        run = ctx.run(["run"] + args + [script])
        line = pvtest.expect_pyvisor_error(run, " ".join(args))
        expect(args[0] in line, f"error does not name {args[0]}: {line!r}")


def help_mentions_limits(ctx):
    run = ctx.run(["run", "--help"])
    expect_eq(run.returncode, 0, "run --help exit")
    text = run.stdout.decode()
    for opt in ("--memory", "--cpu-seconds", "--max-procs", "--max-open-files",
                "--max-file-size", "--require"):
        expect(opt in text, f"run --help lacks {opt}")


if __name__ == "__main__":
    pvtest.main([limits_shape, defaults, heap_bomb, numpy_bomb,
                 memory_whole_run, memfd_bomb, workspace_fill, cpu_burn, cpu_whole_run, fork_bomb,
                 thread_bomb, threads_within_memory, fd_exhaustion, disk_fill, output_flood,
                 sysconf_shows_limit, no_capabilities, many_files,
                 bad_values, help_mentions_limits])
