#!/usr/bin/env python3
"""Processes and signals: fork and spawn multiprocessing, threads, signal
handlers inside; signals cannot leave the sandbox (a host process of the
sandbox's own uid survives kill, kill(-1) and process-group kills, with a
signal.outside audit event); every process of a run is gone at its end
(setsid, double fork, stopped, zombie); and when the supervisor itself is
killed with SIGKILL, the whole sandbox dies with it."""

import os
import signal
import subprocess
import time
import uuid

import pvtest
from pvtest import expect, expect_eq

WORK = r"""
import concurrent.futures, json, multiprocessing as mp, os, signal, sys, time

def child(conn, x):
    conn.send((os.getpid(), x * x))
    conn.close()

def main():
  out = {}
  with open("/proc/self/status") as f:
      out["sigblk"] = f.read().split("SigBlk:")[1].split()[0]
  for method in ("fork", "spawn", "forkserver"):
      ctx = mp.get_context(method)
      a, b = ctx.Pipe()
      p = ctx.Process(target=child, args=(b, 7))
      p.start()
      pid, val = a.recv()
      p.join()
      out[method] = [val, p.exitcode, pid != os.getpid()]

  with concurrent.futures.ThreadPoolExecutor(4) as ex:
      out["threads"] = sorted(ex.map(lambda x: x + 1, range(8)))

  got = []
  signal.signal(signal.SIGALRM, lambda *a: got.append("alrm"))
  signal.setitimer(signal.ITIMER_REAL, 0.05)
  time.sleep(0.5)
  try:
      os.kill(os.getpid(), signal.SIGINT)
      time.sleep(0.2)
  except KeyboardInterrupt:
      got.append("int")
  out["signals"] = got

  # Signal another sandbox process: allowed.
  pid = os.fork()
  if pid == 0:
      time.sleep(60)
      os._exit(0)
  os.kill(pid, signal.SIGTERM)
  out["kill_child"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
  # The same through a pidfd.
  pid = os.fork()
  if pid == 0:
      time.sleep(60)
      os._exit(0)
  fd = os.pidfd_open(pid)
  signal.pidfd_send_signal(fd, signal.SIGUSR1)
  out["pidfd_child"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
  print(json.dumps(out))

if __name__ == "__main__":
  main()
"""

OUTWARD = r"""
import json, os, signal, sys
victim = int(sys.argv[1])
out = {}
for name, fn in [("kill", lambda: os.kill(victim, signal.SIGKILL)),
                 ("kill0", lambda: os.kill(victim, 0)),
                 # the victim leads its own session and group (pgid == pid)
                 ("pgrp", lambda: os.killpg(victim, signal.SIGKILL)),
                 ("getpgid", lambda: os.getpgid(victim)),
                 ("pidfd_open", lambda: os.pidfd_open(victim)),
                 ("supervisor", lambda: os.kill(os.getppid(), signal.SIGKILL))]:
    try:
        fn()
        out[name] = "sent"
    except OSError as e:
        out[name] = e.errno
# kill(-1): every process the caller may signal; inside: the sandbox only.
pid = os.fork()
if pid == 0:
    signal.pause()
    os._exit(0)
try:
    os.kill(-1, signal.SIGKILL)
except OSError as e:
    out["all"] = e.errno
out["sibling"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(out))
"""

TREE = r"""
import os, signal, sys, time
marker = sys.argv[1]
def sleeper():
    os.execv("/bin/sleep", ["sleep", "600", marker])
# double fork + setsid
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        sleeper()
    os._exit(0)
# stopped process
pid = os.fork()
if pid == 0:
    sleeper()
time.sleep(0.2)
os.kill(pid, signal.SIGSTOP)
# zombie: exited child never waited for
if os.fork() == 0:
    os._exit(0)
# a thread-heavy child
if os.fork() == 0:
    import threading
    for _ in range(4):
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
    time.sleep(600)
time.sleep(0.5)
print("parent done", flush=True)
"""

DEATH = r"""
import os, sys, time
marker = sys.argv[1]
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        os.execv("/bin/sleep", ["sleep", "600", marker])
print("ready", flush=True)
time.sleep(600)
"""


X32 = r"""
import ctypes, mmap, sys
# syscall(__X32_SYSCALL_BIT | nr) from raw machine code: mov eax, imm32;
# syscall; ret.  Catalogue FLT-01: the filter kills the process.
nr = 0x40000000 | int(sys.argv[1])
code = b"\xb8" + nr.to_bytes(4, "little") + b"\x0f\x05\xc3"
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
print("before", flush=True)
ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()
print("after", flush=True)
"""


def sandbox_uid(ctx):
    return ctx.user[1] if ctx.user is not None else (65534 if os.geteuid() == 0 else os.getuid())


def start_victim(ctx, marker):
    """A host process with the sandbox's own uid (so only pyvisor stands
    between the sandbox and it)."""
    argv = ["sh", "-c", f"sleep 300; : {marker}"]
    if os.geteuid() == 0:
        uid = sandbox_uid(ctx)
        argv = ["setpriv", f"--reuid={uid}", f"--regid={uid if uid == 65534 else ctx.user[2]}",
                "--clear-groups", "--"] + argv
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def inside(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "procs.py", WORK)
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    expect_eq(report["fork"], [49, 0, True], "multiprocessing fork")
    expect_eq(report["spawn"], [49, 0, True], "multiprocessing spawn")
    expect_eq(report["forkserver"], [49, 0, True], "multiprocessing forkserver")
    expect_eq(report["sigblk"], "0000000000000000",
              "signal mask the program starts with (the supervisor's must not leak)")
    expect_eq(report["pidfd_child"], -signal.SIGUSR1, "pidfd_send_signal to a sandbox child")
    expect_eq(report["threads"], list(range(1, 9)), "thread pool")
    expect_eq(report["signals"], ["alrm", "int"], "SIGALRM handler, KeyboardInterrupt")
    expect_eq(report["kill_child"], -signal.SIGTERM, "SIGTERM to a sandbox child")


def outward(ctx):
    marker = "pvvictim-" + uuid.uuid4().hex
    victim = start_victim(ctx, marker)
    try:
        time.sleep(0.2)
        work = ctx.tmpdir()
        script = ctx.script(work, "outward.py", OUTWARD)
        run = ctx.run_json([script, str(victim.pid)])
        pvtest.expect_status(run, "ok", 0)
        report = pvtest.inner_report(run)
        for name in ("kill", "kill0", "pgrp", "supervisor"):
            expect_eq(report[name], 1, f"errno of {name} toward a host process")
        expect_eq(report["getpgid"], 3, "getpgid of a host process (ESRCH: not visible)")
        expect_eq(report["pidfd_open"], 3, "pidfd_open of a host process (ESRCH)")
        expect_eq(report["sibling"], -signal.SIGKILL, "kill(-1) reached the sandbox sibling")
        expect(victim.poll() is None, "the host process was killed")
        events = run.events("signal.outside")
        expect(any(str(victim.pid) in e.get("detail", "") for e in events),
               "no signal.outside audit event names the host process")
    finally:
        try:
            os.killpg(victim.pid, signal.SIGKILL)  # sh and its sleep
        except OSError:
            pass
        victim.wait()


def tree(ctx):
    marker = "pvtree-" + uuid.uuid4().hex
    work = ctx.tmpdir()
    script = ctx.script(work, "tree.py", TREE)
    run = ctx.run_json([script, marker])
    pvtest.expect_status(run, "ok", 0)
    left = pvtest.processes_with(marker)
    expect(not left, f"processes of the run left: {left}")


def supervisor_death(ctx):
    marker = "pvdeath-" + uuid.uuid4().hex
    work = ctx.tmpdir()
    script = ctx.script(work, "death.py", DEATH)
    argv = ctx._as_user([ctx.pyvisor, "run", script, marker])
    sup = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    try:
        line = sup.stdout.readline()
        expect_eq(line.strip(), b"ready", "sandbox start")
        deadline = time.monotonic() + 20  # three execs; slow on a loaded machine
        while len(pvtest.processes_with(marker)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        expect(len(pvtest.processes_with(marker)) >= 3, "sleepers not started")
        os.kill(sup.pid, signal.SIGKILL)
        sup.wait()
        deadline = time.monotonic() + 3
        while pvtest.processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = pvtest.processes_with(marker)
        expect(not left, f"processes survived the supervisor: {left}")
    finally:
        pvtest.kill_marked(marker)
        if sup.poll() is None:
            sup.kill()
            sup.wait()


def filter_kill(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "x32.py", X32)
    for nr in ("39", "257"):  # getpid, openat
        run = ctx.run_json([script, nr])
        pvtest.expect_status(run, "killed", 128 + signal.SIGSYS)
        expect_eq(run.result["stdout"], "before\n", "output of the killed program")
        events = run.events("filter.kill")
        expect(len(events) == 1 and events[0]["verdict"] == "kill",
               f"one filter.kill audit event for x32 number {nr}: {run.events()}")


if __name__ == "__main__":
    pvtest.main([inside, outward, tree, supervisor_death, filter_kill])
