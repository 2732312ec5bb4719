#!/usr/bin/env python3
"""Exec from the sandbox: allowlisted programs run (subprocess, os.system,
shell pipelines, a Python child, "#!" scripts in the workspace whose
interpreter is allowed) and stay under the same filter and view; other
programs are refused with EACCES and an exec.refused audit event;
--allow-exec extends the list; exec of an fd is refused."""

import json

import pvtest
from pvtest import expect, expect_eq

SCRIPT = r"""
import json, os, subprocess, sys
out = {}
r = subprocess.run(["ls", "/workspace"], capture_output=True, text=True)
out["ls"] = [r.returncode, r.stdout.split()]
r = subprocess.run(["sh", "-c", "echo one two | wc -w; uname -s"],
                   capture_output=True, text=True)
out["pipeline"] = [r.returncode, r.stdout.split()]
out["system"] = os.system("exit 3") >> 8
# The exec'd program is confined like its parent: same view, same filter.
r = subprocess.run(["cat", "/etc/shadow"], capture_output=True, text=True)
out["cat_shadow"] = [r.returncode, "No such file" in r.stderr]
r = subprocess.run([sys.executable, "-c",
    "import os, json\n"
    "try:\n    open('/root/.bashrc')\n    e = 0\n"
    "except OSError as x:\n    e = x.errno\n"
    "print(json.dumps([os.getcwd(), e]))"],
    capture_output=True, text=True)
out["python_child"] = json.loads(r.stdout) if r.returncode == 0 else r.stderr[-500:]
# A "#!" script written by the sandbox, interpreter allowed.
fd = os.open("hello.sh", os.O_WRONLY | os.O_CREAT, 0o755)
os.write(fd, b"#!/bin/sh\necho script \"$1\" from \"$0\"\n")
os.close(fd)
r = subprocess.run(["./hello.sh", "arg"], capture_output=True, text=True)
out["script"] = [r.returncode, r.stdout.strip()]
# Not on the allowlist.
try:
    subprocess.run(["id", "-u"], capture_output=True)
    out["id"] = "ran"
except OSError as e:
    out["id"] = e.errno
# A forked child calling execv directly gets the same answer.
pid = os.fork()
if pid == 0:
    try:
        os.execv("/usr/bin/id", ["id"])
    except OSError as e:
        os._exit(e.errno)
    os._exit(99)
out["child_exec"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
# Exec of an fd (fexecve): refused.
fd = os.open("/usr/bin/true", os.O_RDONLY)
pid = os.fork()
if pid == 0:
    try:
        os.execve(fd, ["true"], {})
    except OSError as e:
        os._exit(e.errno)
    os._exit(99)
out["fexecve"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(out))
"""


def exec_policy(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "exec_probe.py", SCRIPT)
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    expect_eq(report["ls"], [0, ["exec_probe.py"]], "ls /workspace")
    expect_eq(report["pipeline"], [0, ["2", "Linux"]], "sh pipeline")
    expect_eq(report["system"], 3, "os.system exit status")
    expect_eq(report["cat_shadow"], [1, True], "cat /etc/shadow in a child")
    expect_eq(report["python_child"], ["/workspace", 2],
              "python child: cwd inherited, /root hidden")
    expect_eq(report["script"], [0, "script arg from ./hello.sh"],
              "#! script in the workspace")
    expect_eq(report["id"], 13, "errno of exec of a program not allowed")
    expect_eq(report["child_exec"], 13, "errno of execv in a forked child")
    expect_eq(report["fexecve"], 13, "errno of exec of an fd")
    events = run.events("exec.refused")
    expect(any(e.get("path") == "/usr/bin/id" and e["errno"] == "EACCES"
               for e in events),
           f"no exec.refused event for /usr/bin/id: {json.dumps(events)[:800]}")
    hidden = run.events("view.hidden")
    expect(any(e.get("path") == "/etc/shadow" for e in hidden),
           "the child's open of /etc/shadow left no view.hidden event")
    expect(any(e.get("path", "").startswith("/root") for e in hidden),
           "the python child's open under /root left no view.hidden event")
    pids = {e["pid"] for e in hidden}
    expect(len(pids) >= 2, "denials of exec'd children carry their own pids")


ALLOW = r"""
import subprocess
r = subprocess.run(["id", "-u"], capture_output=True, text=True)
print(r.returncode, r.stdout.strip())
"""


def allow_exec(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "allow_probe.py", ALLOW)
    run = ctx.run_json(["--allow-exec", "id", script])
    pvtest.expect_status(run, "ok", 0)
    rc, uid = run.result["stdout"].split()
    expect_eq(rc, "0", "id exit status with --allow-exec id")
    expect(uid != "0", "the exec'd program runs as root")
    bad = ctx.run(["run", "--allow-exec", "no-such-program-xyz", script])
    pvtest.expect_pyvisor_error(bad, "no-such-program-xyz")


if __name__ == "__main__":
    pvtest.main([exec_policy, allow_exec])
