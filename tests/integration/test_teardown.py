#!/usr/bin/env python3
"""When the program exits, every process it started is killed, including
a double-forked, setsid'd grandchild."""

import os
import time
import uuid

import pvtest
from pvtest import expect, expect_eq

SCRIPT = r"""
import os, sys, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        print(os.getpid(), flush=True)
        os.write(w, b"x")
        time.sleep(600)
        os._exit(0)
    os._exit(0)
os.waitpid(pid, 0)
os.read(r, 1)  # the grandchild has printed its pid
print("parent exits", flush=True)
sys.exit(0)
"""


def alive_with_marker(pid, marker):
    """True if pid is a live (non-zombie) process carrying marker.  The
    pid was printed inside the sandbox; in a pid namespace it may name an
    unrelated host process, hence the marker check."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return marker.encode() in cmdline and state != "Z"


def teardown(ctx):
    marker = "pvtest-teardown-" + uuid.uuid4().hex
    ctx.cleanups.append(lambda: pvtest.kill_marked(marker))
    work = ctx.tmpdir()
    script = ctx.script(work, "double_fork.py", SCRIPT)
    run = ctx.run_json(["--timeout", "60", script, marker], timeout=90)
    pvtest.expect_status(run, "ok", 0)
    expect(run.elapsed < 30,
           f"pyvisor waited {run.elapsed:.1f} s for the sleeping grandchild")
    words = run.result["stdout"].split()
    expect(len(words) == 3 and words[0].isdigit() and
           words[1:] == ["parent", "exits"],
           f"expected the grandchild's pid, then 'parent exits'; got "
           f"{run.result['stdout']!r}")
    pid = int(words[0])

    deadline = time.monotonic() + 2
    while True:
        left = pvtest.processes_with(marker)
        gone = not alive_with_marker(pid, marker)
        if gone and not left:
            break
        if time.monotonic() > deadline:
            raise pvtest.Failure(
                f"grandchild pid {pid} alive: {not gone}; processes of the "
                f"run still present after pyvisor returned: {left}")
        time.sleep(0.05)
    if os.path.exists(f"/proc/{pid}"):
        # The same number may be reused only by a process of another run.
        expect(not alive_with_marker(pid, marker),
               f"pid {pid} is still the grandchild")


def teardown_plain(ctx):
    # Without --json the parent's output is streamed and the run still
    # ends when the parent exits.
    marker = "pvtest-teardown-" + uuid.uuid4().hex
    ctx.cleanups.append(lambda: pvtest.kill_marked(marker))
    work = ctx.tmpdir()
    script = ctx.script(work, "double_fork.py", SCRIPT)
    run = ctx.run(["run", "--timeout", "60", script, marker], timeout=90)
    expect_eq(run.returncode, 0, "exit status")
    expect(run.elapsed < 30, f"pyvisor took {run.elapsed:.1f} s")
    deadline = time.monotonic() + 2
    while pvtest.processes_with(marker):
        if time.monotonic() > deadline:
            raise pvtest.Failure(f"processes of the run left: "
                                 f"{pvtest.processes_with(marker)}")
        time.sleep(0.05)


if __name__ == "__main__":
    pvtest.main([teardown, teardown_plain])
