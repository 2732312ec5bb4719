#!/usr/bin/env python3
"""Workspace quotas (docs/quotas.md): --disk-quota bounds the bytes of the
files the program creates and --max-files the number of names; the writer
gets ENOSPC at the limit, data written before stays intact, and the twin
run without the limit succeeds with the same program."""

import hashlib
import os

import pvtest
from pvtest import expect, expect_eq

BYTES = r"""
import errno, hashlib, json, os, mmap
out = {}
block = b"a" * 65536
with open("first.bin", "wb") as f:
    for _ in range(8):          # 512 KiB
        f.write(block)
out["first"] = os.path.getsize("first.bin")
written = 0
try:
    with open("second.bin", "wb", buffering=0) as f:
        for _ in range(16):     # up to 1 MiB more: past the 1 MiB quota
            written += f.write(block)
    out["second"] = "no error"
except OSError as e:
    out["second"] = errno.errorcode[e.errno]
out["written_before_error"] = written
out["first_sha"] = hashlib.sha256(open("first.bin", "rb").read()).hexdigest()
try:
    os.truncate("first.bin", 8 << 20)
    with open("first.bin", "r+b") as f:
        f.seek((8 << 20) - 1)
        f.write(b"x")
    out["sparse"] = "no error"
except OSError as e:
    out["sparse"] = errno.errorcode[e.errno]
os.truncate("first.bin", 512 * 1024)
# space comes back when files go away
os.unlink("second.bin")
with open("third.bin", "wb") as f:
    f.write(block * 4)
out["third"] = os.path.getsize("third.bin")
st = os.statvfs("/workspace")
out["statvfs_total"] = st.f_blocks * st.f_frsize
print(json.dumps(out))
"""

FILES = r"""
import errno, json, os
out = {"made": 0}
try:
    for i in range(50):
        if i % 2:
            os.mkdir("d%d" % i)
        else:
            open("f%d" % i, "w").close()
        out["made"] += 1
    out["err"] = "no error"
except OSError as e:
    out["err"] = errno.errorcode[e.errno]
try:
    os.symlink("x", "one-more")
    out["symlink"] = "no error"
except OSError as e:
    out["symlink"] = errno.errorcode[e.errno]
os.unlink("f0")
open("again", "w").close()
out["after_unlink"] = "ok"
print(json.dumps(out))
"""


def disk_quota(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "quota.py", BYTES)
    run = ctx.run_json(["--disk-quota", "1M", script])
    pvtest.expect_status(run, "ok", 0)
    out = pvtest.inner_report(run)
    expect_eq(out["first"], 512 * 1024, "first file size")
    expect_eq(out["second"], "ENOSPC", "write past the quota")
    # The script itself (a few KiB) and the first file share the 1 MiB.
    expect(448 * 1024 <= out["written_before_error"] < 512 * 1024,
           f"bytes accepted before ENOSPC: {out['written_before_error']}")
    expect_eq(out["first_sha"], hashlib.sha256(b"a" * 512 * 1024).hexdigest(),
              "first file intact after ENOSPC")
    expect_eq(out["sparse"], "ENOSPC", "writing at 8 MiB of a sparse file")
    expect_eq(out["third"], 256 * 1024, "space freed by unlink is reusable")
    expect_eq(out["statvfs_total"], 1 << 20, "statvfs of /workspace shows the quota")
    # benign twin: the default quota (1 GiB) lets the same program write it all
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    expect_eq(pvtest.inner_report(run)["second"], "no error", "same writes without --disk-quota 1M")


def max_files(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "files.py", FILES)
    # The script itself is one file of the workspace.
    run = ctx.run_json(["--max-files", "11", script])
    pvtest.expect_status(run, "ok", 0)
    out = pvtest.inner_report(run)
    expect_eq(out["made"], 10, "names created before the limit")
    expect_eq(out["err"], "ENOSPC", "creation past --max-files")
    expect_eq(out["symlink"], "ENOSPC", "symlink past --max-files")
    expect_eq(out["after_unlink"], "ok", "a name freed by unlink is reusable")
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    expect_eq(pvtest.inner_report(run)["made"], 50, "same program with the default limit")


def bad_values(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "nothing.py", "pass\n")
    for opt in (["--disk-quota", "lots"], ["--disk-quota", "-1"], ["--max-files", "1x"]):
        run = ctx.run(["run"] + opt + [script])
        pvtest.expect_pyvisor_error(run, " ".join(opt))
    run = ctx.run_json(["--disk-quota", "0", "--max-files", "0", script])
    pvtest.expect_status(run, "ok", 0)


if __name__ == "__main__":
    pvtest.main([disk_quota, max_files, bad_values])
