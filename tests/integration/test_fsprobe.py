#!/usr/bin/env python3
"""Filesystem probes (tests/conformance/probes/fsprobe.py) give the same
outcome natively, on a host tmpfs, and inside pyvisor, run as the same
user; the policy-denied twins (the same calls on the read-only host view)
fail with EROFS and leave an audit event naming the resolved path."""

import json
import os
import subprocess

import pvtest
from pvtest import expect, expect_eq

PROBE = "tests/conformance/probes/fsprobe.py"

INSIDE = r"""
import os, runpy, sys
os.makedirs("/tmp/probe")
sys.argv = ["fsprobe.py", "/tmp/probe"]
runpy.run_path("/workspace/fsprobe.py", run_name="__main__")
"""

DENIED = r"""
import errno, json, os
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "no error"
    except OSError as e:
        out[name] = errno.errorcode[e.errno]
attempt("chmod", lambda: os.chmod("/usr/bin/python3", 0o777))
attempt("utime", lambda: os.utime("/usr/lib", (1, 1)))
attempt("symlink", lambda: os.symlink("/etc/passwd", "/usr/lib/pv-link"))
attempt("truncate", lambda: os.truncate("/usr/bin/python3", 0))
attempt("setxattr", lambda: os.setxattr("/usr/bin/python3", "trusted.x", b"1"))
# benign twins in the workspace
open("twin", "w").write("x")
attempt("chmod_twin", lambda: os.chmod("twin", 0o600))
attempt("utime_twin", lambda: os.utime("twin", (1, 1)))
attempt("symlink_twin", lambda: os.symlink("twin", "twin-link"))
attempt("truncate_twin", lambda: os.truncate("twin", 0))
print(json.dumps(out))
"""


def native_run(ctx, probe):
    shm = "/dev/shm"
    if not os.path.isdir(shm) or os.statvfs(shm).f_bsize <= 0:
        raise pvtest.Skip("no /dev/shm tmpfs on the host for the native side")
    work = ctx.tmpdir()
    d = os.path.join(shm, "pvprobe-%d" % os.getpid())
    os.mkdir(d, 0o755)
    ctx._give(d)
    ctx.cleanups.append(lambda: subprocess.run(["rm", "-rf", d]))
    if ctx.user is None and os.geteuid() == 0:
        # pyvisor started as root runs the program as 65534:65534
        # (sentry/main.c): probe natively with the same credentials.
        os.chown(d, 65534, 65534)
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                "/usr/bin/python3", "-B", probe, d]
    else:
        argv = ctx._as_user(["/usr/bin/python3", "-B", probe, d])
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       cwd=work)
    expect(p.returncode == 0, f"native probe failed: {p.stderr[-2000:]!r}")
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def same_as_native(ctx):
    work = ctx.tmpdir()
    probe = ctx.write(os.path.join(work, "fsprobe.py"),
                      open(os.path.join(ctx.source_dir, PROBE)).read())
    native = native_run(ctx, probe)
    script = ctx.script(work, "probe_inside.py", INSIDE)
    run = ctx.run_json(["--input", probe, script])
    pvtest.expect_status(run, "ok", 0)
    inside = pvtest.inner_report(run)
    diffs = [f"{k}: native {native.get(k)!r}, inside {inside.get(k)!r}"
             for k in sorted(set(native) | set(inside)) if native.get(k) != inside.get(k)]
    expect(len(native) >= 70, f"only {len(native)} probes ran natively")
    expect(not diffs, "probes differ:\n  " + "\n  ".join(diffs))


def denied_twins(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "denied.py", DENIED)
    before = os.stat("/usr/bin/python3")
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    out = pvtest.inner_report(run)
    for name in ("chmod", "utime", "symlink", "truncate", "setxattr"):
        expect_eq(out[name], "EROFS", f"{name} on the read-only host view")
    for name in ("chmod_twin", "utime_twin", "symlink_twin", "truncate_twin"):
        expect_eq(out[name], "no error", f"benign twin {name}")
    after = os.stat("/usr/bin/python3")
    expect_eq((after.st_mode, after.st_size), (before.st_mode, before.st_size),
              "host /usr/bin/python3 metadata")
    expect(not os.path.lexists("/usr/lib/pv-link"), "symlink created on the host")
    paths = {ev.get("path") for ev in run.events("view.read_only")}
    for p in (os.path.realpath("/usr/bin/python3"), "/usr/lib", "/usr/lib/pv-link"):
        expect(p in paths, f"no view.read_only audit event for {p}: {sorted(map(str, paths))}")


STDIN_PROBE = r"""
import errno, json, os
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "no error"
    except OSError as e:
        out[name] = errno.errorcode[e.errno]
attempt("fchmod_stdin", lambda: os.fchmod(0, 0o777))
attempt("fchown_stdin", lambda: os.fchown(0, os.getuid(), -1))
attempt("futimes_stdin", lambda: os.utime(0, (1, 1)))
r, w = os.pipe()
attempt("fchmod_own_pipe", lambda: os.fchmod(w, 0o600))
print(json.dumps(out))
"""


def foreign_fd_metadata(ctx):
    """A host file given as stdin (--stdin) is not the sandbox's: fchmod,
    fchown and futimens on it fail with EPERM and the host file keeps its
    metadata, even when pyvisor runs as root; the twin on the sandbox's own
    pipe works."""
    if not ctx.is_root:
        raise pvtest.Skip("needs a host file the sandbox user does not own")
    work = ctx.tmpdir()
    script = ctx.script(work, "stdin_probe.py", STDIN_PROBE)
    host = os.path.join(work, "root-owned.txt")
    with open(host, "w") as f:
        f.write("secret\n")
    os.chown(host, 0, 0)
    os.chmod(host, 0o644)
    before = os.stat(host)
    with open(host, "rb") as f:
        data = f.read()
    run = ctx.run_json(["--stdin", script], input_bytes=data)
    pvtest.expect_status(run, "ok", 0)
    # input_bytes arrives through a pipe; run again with the file itself.
    argv = ctx._as_user([ctx.pyvisor, "run", "--json", "--stdin", script])
    with open(host, "rb") as f:
        p = subprocess.run(argv, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
    result = json.loads(p.stdout)
    out = json.loads(result["stdout"].strip().splitlines()[-1])
    for name in ("fchmod_stdin", "fchown_stdin", "futimes_stdin"):
        expect_eq(out[name], "EPERM", f"{name} on a root-owned host file")
    expect_eq(out["fchmod_own_pipe"], "no error", "fchmod of the sandbox's own pipe")
    after = os.stat(host)
    expect_eq((after.st_mode, after.st_uid, after.st_mtime_ns),
              (before.st_mode, before.st_uid, before.st_mtime_ns), "host file metadata")


if __name__ == "__main__":
    pvtest.main([same_as_native, denied_twins, foreign_fd_metadata])
