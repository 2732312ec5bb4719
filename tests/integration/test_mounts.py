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
    for args in (["--mount", f"{work}"],
                 ["--mount", f"relative:/data"], ["--mount", f"{work}:/data:rx"],
                 ["--hide", "/usr/lib/../bin"], ["--hide", "/nonexistent"], ["--hide", "/"],
                 ["--hide", "/etc/passwd/x"]):
        run = ctx.run(["run"] + args + [script])
        pvtest.expect_pyvisor_error(run, " ".join(args))


HIDE_SCRIPT = r"""
import errno, os
out = {}
def attempt(name, fn):
    try:
        r = fn()
        out[name] = r if r is not None else "no error"
    except OSError as e:
        out[name] = errno.errorcode[e.errno]
attempt("listed", lambda: "json" in os.listdir("/usr/lib/python3.11"))
attempt("stat", lambda: os.stat("/usr/lib/python3.11/json"))
attempt("open", lambda: open("/usr/lib/python3.11/json/__init__.py"))
attempt("walk_through", lambda: open("/usr/lib/python3.11/json/../csv.py").read(3))
attempt("twin_listed", lambda: "csv.py" in os.listdir("/usr/lib/python3.11"))
attempt("twin_open", lambda: len(open("/usr/lib/python3.11/csv.py").read()) > 0)
attempt("fd_listing", lambda: "json" in os.listdir(os.open("/usr/lib/python3.11", os.O_RDONLY)))
try:
    import json
    out["import"] = "imported"
except ImportError:
    out["import"] = "ImportError"
import sys
sys.stdout.write(repr(out) + "\n")
"""


def hide_in_bind(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "hide.py", HIDE_SCRIPT)
    run = ctx.run_json(["--hide", "/usr/lib/python3.11/json", script])
    pvtest.expect_status(run, "ok", 0)
    import ast
    out = ast.literal_eval(run.result["stdout"].strip().splitlines()[-1])
    expect_eq(out["listed"], False, "hidden name in the listing of its host directory")
    expect_eq(out["stat"], "ENOENT", "stat of the hidden name")
    expect_eq(out["open"], "ENOENT", "open below the hidden name")
    expect_eq(out["walk_through"], "ENOENT", "a path through the hidden name")
    expect_eq(out["twin_listed"], True, "neighbour still listed")
    expect_eq(out["twin_open"], True, "neighbour still readable")
    expect_eq(out["fd_listing"], False, "hidden name in a listing through an fd")
    expect_eq(out["import"], "ImportError", "import of the hidden package")
    paths = {e.get("path") for e in run.events("view.hidden")}
    expect("/usr/lib/python3.11/json" in paths,
           f"no view.hidden event for the hidden package: {sorted(map(str, paths))}")


RW_SCRIPT = r"""
import errno, json, os
out = {}
def attempt(name, fn):
    try:
        r = fn()
        out[name] = r if r is not None else "no error"
    except OSError as e:
        out[name] = errno.errorcode[e.errno]
os.chdir("/rw")
attempt("create", lambda: open("new.txt", "w").write("made inside\n"))
attempt("excl", lambda: os.open("new.txt", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
attempt("append", lambda: open("in.txt", "a").write("more\n"))
attempt("mkdir", lambda: os.mkdir("sub"))
attempt("rename", lambda: os.rename("new.txt", "sub/moved.txt"))
attempt("symlink", lambda: os.symlink("moved.txt", "sub/link"))
attempt("read_link", lambda: open("sub/link").read())
attempt("hardlink", lambda: (os.link("sub/moved.txt", "hard.txt"), os.stat("hard.txt").st_nlink)[1])
attempt("chmod", lambda: (os.chmod("hard.txt", 0o600), oct(os.stat("sub/moved.txt").st_mode))[1])
attempt("utime", lambda: (os.utime("hard.txt", (5, 6)), os.stat("hard.txt").st_mtime)[1])
attempt("truncate", lambda: (os.truncate("in.txt", 4), open("in.txt").read())[1])
attempt("unlink", lambda: os.unlink("hard.txt"))
attempt("rmdir_nonempty", lambda: os.rmdir("sub"))
attempt("escape_chmod", lambda: os.chmod("escape", 0o777))
attempt("escape_open", lambda: open("escape", "w"))
attempt("escape_lchown", lambda: os.lchown("escape", os.getuid(), os.getgid()))
attempt("escape_link", lambda: os.link("escape", "escape-hard", follow_symlinks=False))
attempt("outside_ro", lambda: open("/usr/lib/pv-rw-probe", "w"))
print(json.dumps(out))
"""


def rw_bind(ctx):
    work = ctx.tmpdir()
    data = ctx.tmpdir()
    outside = ctx.tmpdir()
    canary = ctx.write(os.path.join(outside, "canary.txt"), "canary\n", mode=0o640)
    ctx.write(os.path.join(data, "in.txt"), "host data\n")
    os.symlink(canary, os.path.join(data, "escape"))
    if ctx.user is not None:
        os.lchown(os.path.join(data, "escape"), ctx.user[1], ctx.user[2])
    script = ctx.script(work, "rw.py", RW_SCRIPT)
    if ctx.user is None and os.geteuid() == 0:
        run = ctx.run(["run", "--mount", f"{data}:/rw:rw", script])
        pvtest.expect_pyvisor_error(run, "--mount ...:rw as root")
        return
    run = ctx.run_json(["--mount", f"{data}:/rw:rw", script])
    pvtest.expect_status(run, "ok", 0)
    out = pvtest.inner_report(run)
    expect_eq(out["create"], len("made inside\n"), "create in the rw bind")
    expect_eq(out["excl"], "EEXIST", "O_EXCL on an existing host file")
    expect_eq(out["mkdir"], "no error", "mkdir")
    expect_eq(out["rename"], "no error", "rename")
    expect_eq(out["read_link"], "made inside\n", "symlink inside the bind")
    expect_eq(out["hardlink"], 2, "hard link nlink")
    expect_eq(out["chmod"], "0o100600", "chmod seen through the other name")
    expect_eq(out["utime"], 6.0, "utime")
    expect_eq(out["truncate"], "host", "truncate")
    expect_eq(out["unlink"], "no error", "unlink")
    expect_eq(out["rmdir_nonempty"], "ENOTEMPTY", "rmdir of a non-empty host dir")
    # The host symlink points outside the view: resolved in the view it
    # names nothing, and nothing follows it on the host.
    expect_eq(out["escape_chmod"], "ENOENT", "chmod through a host symlink out of the view")
    expect_eq(out["escape_open"], "ENOENT", "open through a host symlink out of the view")
    expect_eq(out["escape_lchown"], "no error", "lchown of the symlink itself")
    expect_eq(out["outside_ro"], "EROFS", "the rest of the view stays read-only")
    with open(os.path.join(data, "sub", "moved.txt")) as f:
        expect_eq(f.read(), "made inside\n", "host file written through the bind")
    with open(os.path.join(data, "in.txt")) as f:
        expect_eq(f.read(), "host", "host file truncated through the bind")
    st = os.stat(canary)
    expect_eq(oct(st.st_mode & 0o7777), "0o640", "canary mode outside the bind")
    with open(canary) as f:
        expect_eq(f.read(), "canary\n", "canary content")
    if os.path.lexists(os.path.join(data, "escape-hard")):
        expect(os.path.islink(os.path.join(data, "escape-hard")),
               "link of the escape symlink became a hard link to the canary")
    expect(not os.path.exists("/usr/lib/pv-rw-probe"), "file created under host /usr")


if __name__ == "__main__":
    pvtest.main([mount_and_hide, refused, rw_bind, hide_in_bind])
