#!/usr/bin/env python3
"""The sandbox's environment: exact env, /workspace as cwd, a private
HOME, only view entries at /, only fds 0/1/2, uid 65534 under root."""

import json
import os
import subprocess

import pvtest
from pvtest import expect, expect_eq

EXPECTED_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/home/sandbox",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg",
}
# The default view (sentry/policy.c): merged-/usr links as the host has them
# (lib32 and libx32 on multilib hosts), and /sys only for the CPU lists.
VIEW_ROOT = {"usr", "bin", "lib", "lib64", "lib32", "libx32", "sbin", "etc", "dev",
             "sys", "var", "workspace", "tmp", "home", "proc"}

SCRIPT = r"""
import errno, json, os, sys
out = {"env": dict(os.environ), "cwd": os.getcwd(),
       "argv0": sys.argv[0], "executable": sys.executable,
       "flags": [sys.flags.ignore_environment, sys.flags.no_user_site,
                 sys.flags.dont_write_bytecode],
       "uid": os.getuid(), "gid": os.getgid(),
       "root": sorted(os.listdir("/"))}
home = os.environ.get("HOME", "/home/sandbox")
with open(os.path.join(home, "in-home.txt"), "w") as f:
    f.write("home is writable\n")
out["home_file"] = open(os.path.join(home, "in-home.txt")).read()
open_fds = []
for fd in range(3, 65):
    try:
        os.fstat(fd)
        open_fds.append(fd)
    except OSError as e:
        if e.errno != errno.EBADF:
            open_fds.append([fd, e.errno])
out["extra_fds"] = open_fds
out["std_fds"] = [os.fstat(fd) is not None for fd in (0, 1, 2)]
print(json.dumps(out))
"""


def environment(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "env_probe.py", SCRIPT)
    # Variables of the caller must not leak in.
    os.environ["PYVISOR_TEST_SECRET"] = "leak"
    try:
        run = ctx.run_json(["--output-dir", os.path.join(work, "out"),
                            script])
    finally:
        del os.environ["PYVISOR_TEST_SECRET"]
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    env = dict(report["env"])
    env.pop("LC_CTYPE", None)  # Python may set it for the C.UTF-8 locale
    expect_eq(env, EXPECTED_ENV, "environment inside the sandbox")
    expect_eq(report["cwd"], "/workspace", "os.getcwd()")
    expect_eq(report["argv0"], "/workspace/env_probe.py", "sys.argv[0]")
    expect_eq(report["flags"], [1, 1, 1], "python flags -E -s -B")
    expect(os.path.realpath(report["executable"]) == "/usr/bin/python3" or
           report["executable"].startswith("/usr/bin/python3"),
           f"sys.executable {report['executable']!r}")
    expect_eq(report["home_file"], "home is writable\n", "HOME writable")
    expect("in-home.txt" not in
           {os.path.basename(a["path"]) for a in run.result["artifacts"]},
           "a file written in HOME is listed as an artifact")
    expect(not os.path.exists(os.path.join(work, "out", "in-home.txt")),
           "a file written in HOME reached --output-dir")
    root = set(report["root"])
    # /var holds only fontconfig's system cache (sentry/policy.c).
    expect("root" not in root and "run" not in root,
           f"/ lists hidden entries: {sorted(root)}")
    expect(root <= VIEW_ROOT,
           f"/ lists entries outside the view: {sorted(root - VIEW_ROOT)}")
    expect({"usr", "etc", "workspace", "tmp", "dev"} <= root,
           f"/ lacks view entries: {sorted(root)}")
    expect_eq(report["extra_fds"], [], "fds open besides 0/1/2 (3..64)")
    if ctx.is_root and ctx.mode == "root":
        expect_eq((report["uid"], report["gid"]), (65534, 65534),
                  "uid/gid of the program when pyvisor runs as root")
    expect(report["uid"] != 0, "the program runs with uid 0")


def no_secret_fd(ctx):
    # An fd open in pyvisor's caller is not inherited by the program.
    work = ctx.tmpdir()
    script = ctx.script(work, "env_probe.py", SCRIPT)
    secret = os.open(script, os.O_RDONLY)
    try:
        os.set_inheritable(secret, True)
        argv = ctx._as_user([ctx.pyvisor, "run", "--json", script])
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              close_fds=False, timeout=120, cwd="/tmp")
    finally:
        os.close(secret)
    expect_eq(proc.returncode, 0,
              f"exit status (stderr {proc.stderr[-500:]!r})")
    result = json.loads(proc.stdout)
    report = json.loads(result["stdout"].strip().splitlines()[-1])
    expect_eq(report["extra_fds"], [],
              f"inherited fd {secret} visible inside")


if __name__ == "__main__":
    pvtest.main([environment, no_secret_fd])
