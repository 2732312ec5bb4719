#!/usr/bin/env python3
"""Teardown under load: 200 runs in a row (clean exits, crashes, orphans,
runs ended by the memory limit) and pairs of concurrent runs leave no
process, file, shared-memory object or IPC object behind; inside one long
run the supervisor's fds and memory stay flat while the program creates and
ends thousands of processes, threads and files."""

import os
import subprocess
import threading
import time
import uuid

import pvtest
from pvtest import expect, expect_eq

MIB = 1 << 20

WORK = r"""
import os, sys, threading, time
kind = sys.argv[2]
if kind == "crash":
    os.abort()
if kind == "orphan":
    if os.fork() == 0:
        os.setsid()
        time.sleep(600)
        os._exit(0)
if kind == "memory":
    kids = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            data = b"m" * (120 << 20)
            time.sleep(600)
            os._exit(0)
        kids.append(pid)
    time.sleep(600)
# Every kind also leaves a file in /tmp, a memfd, a pipe and a thread open.
with open("/tmp/left-behind", "w") as f:
    f.write("x" * 4096)
mfd = os.memfd_create("left")
os.write(mfd, b"y" * 65536)
r, w = os.pipe()
t = threading.Thread(target=time.sleep, args=(0.01,))
t.start()
t.join()
print("done", kind)
"""

STEADY = r"""
import os, sys, threading, time

def round_trip(i):
    pid = os.fork()
    if pid == 0:
        with open("/tmp/child-%d" % (i % 7), "w") as f:
            f.write("c")
        os._exit(0)
    os.waitpid(pid, 0)
    with open("/workspace/w-%d" % (i % 5), "w") as f:
        f.write("w" * 100)
    os.unlink("/workspace/w-%d" % (i % 5))
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    os.listdir("/usr/lib")

for i in range(int(sys.argv[2])):
    round_trip(i)
print("warm", flush=True)
time.sleep(1)  # the test reads the supervisor's usage now
for i in range(int(sys.argv[3])):
    round_trip(i)
print("done", flush=True)
time.sleep(600)
"""


def host_state():
    """What a run could leave behind on the host, outside our tmpdirs."""
    state = {}
    for d in ("/dev/shm", "/tmp", "/var/tmp"):
        try:
            state[d] = {e for e in os.listdir(d) if not e.startswith("pvtest-")
                        and not e.startswith("pvbin-")}
        except OSError:
            state[d] = set()
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                state[f"sysv-{kind}"] = set(f.read().splitlines()[1:])
        except OSError:
            state[f"sysv-{kind}"] = set()
    return state


def expect_no_leftovers(before, marker, what):
    deadline = time.monotonic() + 3
    while pvtest.processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = pvtest.processes_with(marker)
    expect(not left, f"{what}: processes of the runs left: {left}")
    after = host_state()
    for key, entries in after.items():
        new = entries - before.get(key, set())
        # Other tests (and other programs) may run concurrently: look for
        # the names the sandboxed program used and pyvisor's own temporary
        # names.
        ours = {e for e in new if e.startswith(".pyvisor-") or "left" in e
                or e.startswith("child-") or e.startswith("memfd")}
        expect(not ours, f"{what}: {key} gained {sorted(ours)}")


def run_kind(ctx, script, marker, kind):
    args = ["--timeout", "60"]
    if kind == "memory":
        args += ["--memory", "256"]
    run = ctx.run_json(args + [script, marker, kind], timeout=90)
    status = run.result["status"]
    want = {"crash": "killed", "memory": "memory_limit"}.get(kind, "ok")
    expect_eq(status, want, f"status of a {kind} run")
    if kind == "crash":
        expect_eq(run.result["signal"], 6, "signal of os.abort()")
    return run


def many_runs(ctx):
    marker = "pvtest-many-" + uuid.uuid4().hex
    ctx.cleanups.append(lambda: pvtest.kill_marked(marker))
    work = ctx.tmpdir()
    script = ctx.script(work, "work.py", WORK)
    before = host_state()
    kinds = ["plain", "orphan", "crash", "plain", "plain", "orphan", "plain",
             "plain", "plain", "plain"]
    for i in range(200):
        kind = "memory" if i % 25 == 24 else kinds[i % len(kinds)]
        run_kind(ctx, script, marker, kind)
        if i % 50 == 49:
            expect_no_leftovers(before, marker, f"after {i + 1} runs")
    expect_no_leftovers(before, marker, "after 200 runs")


def concurrent_runs(ctx):
    marker = "pvtest-pair-" + uuid.uuid4().hex
    ctx.cleanups.append(lambda: pvtest.kill_marked(marker))
    work = ctx.tmpdir()
    script = ctx.script(work, "work.py", WORK)
    before = host_state()
    for kinds in (("orphan", "memory"), ("crash", "plain"),
                  ("orphan", "orphan"), ("memory", "crash")):
        errors = []

        def one(kind):
            try:
                run_kind(ctx, script, marker, kind)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=one, args=(k,)) for k in kinds]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
    expect_no_leftovers(before, marker, "after concurrent runs")


def supervisor_usage(pid):
    # The supervisor opens /proc files for a few ms every 100 ms (limits
    # sampling): the lowest of several readings is its steady count.
    fds = None
    for _ in range(8):
        n = len(os.listdir(f"/proc/{pid}/fd"))
        fds = n if fds is None else min(fds, n)
        time.sleep(0.037)
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return fds, rss


def supervisor_steady(ctx):
    marker = "pvtest-steady-" + uuid.uuid4().hex
    ctx.cleanups.append(lambda: pvtest.kill_marked(marker))
    work = ctx.tmpdir()
    script = ctx.script(work, "steady.py", STEADY)
    argv = ctx._as_user([ctx.pyvisor, "run", "--timeout", "300", script,
                         marker, "300", "1500"])
    # Under AddressSanitizer, freed memory sits in a quarantine that would
    # read as growth: turn it off (no effect on a normal build).
    env = dict(os.environ, ASAN_OPTIONS="quarantine_size_mb=0:"
               "thread_local_quarantine_size_kb=0")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ctx.cleanups.append(lambda: proc.poll() is None and proc.kill())
    try:
        line = proc.stdout.readline()
        expect_eq(line, b"warm\n", "first line of the long run")
        # Let the supervisor handle the exit of the last child (its pidfd
        # is closed on that event).
        time.sleep(0.5)
        warm = supervisor_usage(proc.pid)
        line = proc.stdout.readline()
        expect_eq(line, b"done\n", "second line of the long run")
        time.sleep(0.5)
        done = supervisor_usage(proc.pid)
    finally:
        if proc.poll() is None:
            proc.terminate()
        _, err = proc.communicate(timeout=30)
    expect_eq(done[0], warm[0],
              "supervisor fds after 1500 more rounds (fork, thread, files)")
    expect(done[1] - warm[1] < 4 * MIB,
           f"supervisor RSS grew from {warm[1]} to {done[1]} bytes over 1500 "
           f"rounds")
    expect_eq(proc.returncode, 128 + 15, "pyvisor stopped with SIGTERM")
    deadline = time.monotonic() + 3
    while pvtest.processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    expect(not pvtest.processes_with(marker),
           "processes left after SIGTERM to pyvisor")


if __name__ == "__main__":
    pvtest.main([many_runs, concurrent_runs, supervisor_steady])
