#!/usr/bin/env python3
"""execve from the sandboxed program is refused with EACCES (rule
exec.refused); fork and wait still work."""

import json

import pvtest
from pvtest import expect, expect_eq

SCRIPT = r"""
import json, os, subprocess
out = {}
try:
    subprocess.run(["/bin/true"])
    out["subprocess"] = "no error"
except OSError as e:
    out["subprocess"] = [type(e).__name__, e.errno]
try:
    rc = os.system("/bin/true")
    out["system"] = rc
except OSError as e:
    out["system"] = [type(e).__name__, e.errno]
# benign twin: fork without exec
pid = os.fork()
if pid == 0:
    os._exit(7)
_, status = os.waitpid(pid, 0)
out["fork_status"] = os.waitstatus_to_exitcode(status)
# a forked child calling execv directly also gets EACCES
pid = os.fork()
if pid == 0:
    try:
        os.execv("/bin/true", ["/bin/true"])
    except OSError as e:
        os._exit(100 + e.errno)
    os._exit(99)
_, status = os.waitpid(pid, 0)
out["child_exec"] = os.waitstatus_to_exitcode(status) - 100
print(json.dumps(out))
"""


def exec_refused(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "exec_probe.py", SCRIPT)
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    expect_eq(report["subprocess"], ["PermissionError", 13],
              "subprocess.run(['/bin/true'])")
    expect(report["system"] != 0,
           f"os.system('/bin/true') succeeded ({report['system']})")
    expect_eq(report["fork_status"], 7, "fork child exit status (benign twin)")
    expect_eq(report["child_exec"], 13, "errno of execv in a forked child")
    events = run.events("exec.refused")
    expect(len(events) >= 2,
           f"expected >= 2 exec.refused audit events, got "
           f"{json.dumps(run.events())[:800]}")
    for e in events:
        expect_eq(e["errno"], "EACCES", "errno of an exec.refused event")
    expect(any(e.get("path") in ("/bin/true", "/usr/bin/true")
               for e in events),
           "no exec.refused event names /bin/true")


if __name__ == "__main__":
    pvtest.main([exec_refused])
