#!/usr/bin/env python3
"""--mount HOST:SANDBOX[:ro] adds a read-only host bind (reads work, writes
give EROFS and an audit event, the host is unchanged); --hide PATH removes
a name of the default view (ENOENT and a view.hidden event); malformed
values and read-write binds are refused with exit 125 and one line."""

import os

import pvtest
from pvtest import expect, expect_eq

SCRIPT = r"""
import errno, json, os
out = {}
def attempt(name, fn):
    try:
        r = fn()
        out[name] = r if r is not None else "no error"
    except OSError as e:
        out[name] = errno.errorcode[e.errno]
attempt("read", lambda: open("/data/in.txt").read())
attempt("list", lambda: sorted(os.listdir("/data")))
attempt("write", lambda: open("/data/in.txt", "w"))
attempt("create", lambda: open("/data/new.txt", "w"))
attempt("hidden", lambda: open("/etc/passwd").read())
attempt("hidden_twin", lambda: len(open("/etc/group").read()) > 0)
print(json.dumps(out))
"""


def mount_and_hide(ctx):
    work = ctx.tmpdir()
    data = ctx.tmpdir()
    ctx.write(os.path.join(data, "in.txt"), "host data\n")
    script = ctx.script(work, "mounts.py", SCRIPT)
    run = ctx.run_json(["--mount", f"{data}:/data:ro", "--hide", "/etc/passwd", script])
    pvtest.expect_status(run, "ok", 0)
    out = pvtest.inner_report(run)
    expect_eq(out["read"], "host data\n", "read through the bind")
    expect_eq(out["list"], ["in.txt"], "listing of the bind")
    expect_eq(out["write"], "EROFS", "write into the bind")
    expect_eq(out["create"], "EROFS", "create in the bind")
    expect_eq(out["hidden"], "ENOENT", "--hide /etc/passwd")
    expect_eq(out["hidden_twin"], True, "/etc/group still there")
    expect_eq(sorted(os.listdir(data)), ["in.txt"], "host directory after the run")
    with open(os.path.join(data, "in.txt")) as f:
        expect_eq(f.read(), "host data\n", "host file after the run")
    expect(any(e.get("path") == "/data/in.txt" for e in run.events("view.read_only")),
           "no view.read_only event for /data/in.txt")
    expect(any(e.get("path") == "/etc/passwd" for e in run.events("view.hidden")),
           "no view.hidden event for /etc/passwd")


def refused(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "nothing.py", "pass\n")
    for args in (["--mount", f"{work}:/data:rw"], ["--mount", f"{work}"],
                 ["--mount", f"relative:/data"], ["--mount", f"{work}:/data:rx"],
                 ["--hide", "/usr/lib"], ["--hide", "/nonexistent"], ["--hide", "/"]):
        run = ctx.run(["run"] + args + [script])
        pvtest.expect_pyvisor_error(run, " ".join(args))


if __name__ == "__main__":
    pvtest.main([mount_and_hide, refused])
