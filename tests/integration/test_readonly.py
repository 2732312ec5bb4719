#!/usr/bin/env python3
"""The host view under /usr is read-only: writes give EROFS (errno 30)
and an audit event with rule view.read_only; reads still work."""

import json
import os

import pvtest
from pvtest import expect, expect_eq

CANARY = "/usr/lib/pyvisor-test"

SCRIPT = r"""
import json, os
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "no error"
    except OSError as e:
        out[name] = [type(e).__name__, e.errno]
attempt("open_w", lambda: open("/usr/lib/pyvisor-test", "w"))
attempt("mkdir", lambda: os.mkdir("/usr/x"))
# benign twins: reading under /usr works, writing in the workspace works
with open("/usr/bin/python3", "rb") as f:
    out["elf"] = f.read(4) == b"\x7fELF"
with open("ok.txt", "w") as f:
    f.write("fine\n")
print(json.dumps(out))
"""


def remove_canaries():
    if os.path.isfile(CANARY):
        os.unlink(CANARY)
    if os.path.isdir("/usr/x") and not os.listdir("/usr/x"):
        os.rmdir("/usr/x")


def readonly(ctx):
    expect(not os.path.exists(CANARY), f"{CANARY} exists before the run")
    expect(not os.path.exists("/usr/x"), "/usr/x exists before the run")
    # Should the view leak, do not leave the canaries on the host.
    ctx.cleanups.append(remove_canaries)
    work = ctx.tmpdir()
    script = ctx.script(work, "readonly_probe.py", SCRIPT)
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    expect_eq(report["open_w"], ["OSError", 30],
              f"open({CANARY!r}, 'w') inside")
    expect_eq(report["mkdir"], ["OSError", 30], "os.mkdir('/usr/x') inside")
    expect(report["elf"], "reading /usr/bin/python3 failed inside")
    expect("ok.txt" in pvtest.artifact_map(run),
           "workspace write (benign twin) is not an artifact")
    expect(not os.path.exists(CANARY), f"{CANARY} was created on the host")
    expect(not os.path.exists("/usr/x"), "/usr/x was created on the host")

    events = run.events("view.read_only")
    for path in (CANARY, "/usr/x"):
        expect(any(e.get("path") == path for e in events),
               f"no view.read_only audit event with path {path}; "
               f"got {json.dumps(events)[:500]}")
    for e in events:
        expect_eq(e["errno"], "EROFS", "errno of a view.read_only event")
        expect_eq(e["errno_num"], 30, "errno_num of a view.read_only event")
    expect(run.result["violations"] >= 2,
           f"violations {run.result['violations']} < 2")


if __name__ == "__main__":
    pvtest.main([readonly])
