#!/usr/bin/env python3
"""Inputs in, artifacts out: exact bytes, only new or changed files,
subdirectories kept, --input NAME renaming, --stdin."""

import hashlib
import os

import pvtest
from pvtest import expect, expect_eq

DATA = bytes(range(256)) * 3 + b"\nend\xff\xfe"

SCRIPT = r"""
import hashlib, json, os, sys
data = open("data.bin", "rb").read()
with open("reversed.bin", "wb") as f:
    f.write(data[::-1])
os.makedirs("sub", exist_ok=True)
with open("sub/x.txt", "w") as f:
    f.write("hello from a subdirectory\n")
with open("edit-me.txt", "a") as f:
    f.write("appended\n")
with open(f"/tmp/pvtest-scratch-{os.getpid()}.txt", "w") as f:
    f.write("not an artifact\n")
print(json.dumps({
    "cwd": os.getcwd(),
    "listing": sorted(os.listdir(".")),
    "keep": open("renamed.txt").read(),
    "data_sha": hashlib.sha256(data).hexdigest(),
    "stdin": sys.stdin.read(),
}))
"""


def prepare(ctx):
    work = ctx.tmpdir()
    return work, {
        "script": ctx.script(work, "io_probe.py", SCRIPT),
        "data": ctx.write(os.path.join(work, "data.bin"), DATA),
        "keep": ctx.write(os.path.join(work, "keep.txt"), "unchanged\n"),
        "edit": ctx.write(os.path.join(work, "edit-me.txt"), "original\n"),
    }


def io_roundtrip(ctx):
    work, f = prepare(ctx)
    out = os.path.join(work, "out", "nested")  # created by pyvisor
    run = ctx.run_json(["--input", f["data"], "--input",
                        f["keep"] + "=renamed.txt", "--input", f["edit"],
                        "--output-dir", out, f["script"]])
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    expect_eq(report["cwd"], "/workspace", "working directory")
    expect_eq(report["keep"], "unchanged\n", "--input HOST=NAME content")
    expect("keep.txt" not in report["listing"],
           "--input HOST=NAME must use NAME, not the host basename")
    expect_eq(report["stdin"], "", "stdin defaults to /dev/null")
    expect_eq(report["data_sha"], hashlib.sha256(DATA).hexdigest(),
              "input bytes seen inside")

    arts = pvtest.artifact_map(run)
    expect_eq(sorted(arts), ["edit-me.txt", "reversed.bin", "sub/x.txt"],
              "artifacts (new and changed files only; unchanged inputs, "
              "the script and /tmp are not artifacts)")
    with open(os.path.join(out, "reversed.bin"), "rb") as fh:
        expect(fh.read() == DATA[::-1], "reversed.bin bytes differ")
    with open(os.path.join(out, "sub", "x.txt"), "rb") as fh:
        expect_eq(fh.read(), b"hello from a subdirectory\n", "sub/x.txt")
    with open(os.path.join(out, "edit-me.txt"), "rb") as fh:
        expect_eq(fh.read(), b"original\nappended\n", "changed input")
    for rel, art in arts.items():
        host = os.path.join(out, rel)
        expect_eq(art["size_bytes"], os.path.getsize(host),
                  f"{rel} size_bytes")
        expect_eq(art["sha256"], pvtest.sha256_file(host), f"{rel} sha256")
    expect(arts["sub/x.txt"]["mime"].startswith("text/plain"),
           f"sub/x.txt mime: {arts['sub/x.txt']['mime']!r}")
    written = sorted(os.path.relpath(os.path.join(d, n), out)
                     for d, _, names in os.walk(out) for n in names)
    expect_eq(written, ["edit-me.txt", "reversed.bin", "sub/x.txt"],
              "files written to --output-dir")
    # The host originals are untouched: the workspace holds copies.
    with open(f["edit"], "rb") as fh:
        expect_eq(fh.read(), b"original\n", "host input after the run")


def io_stdin(ctx):
    work, f = prepare(ctx)
    run = ctx.run_json(["--stdin", "--input", f["data"], "--input",
                        f["keep"] + "=renamed.txt", "--input", f["edit"],
                        f["script"]], input_bytes=b"piped in\n")
    pvtest.expect_status(run, "ok", 0)
    expect_eq(pvtest.inner_report(run)["stdin"], "piped in\n",
              "--stdin passes pyvisor's stdin")


def io_no_output_dir(ctx):
    # Without --output-dir the artifacts are still reported, and nothing
    # appears next to the inputs.
    work, f = prepare(ctx)
    before = sorted(os.listdir(work))
    run = ctx.run_json(["--input", f["data"], "--input",
                        f["keep"] + "=renamed.txt", "--input", f["edit"],
                        f["script"]])
    pvtest.expect_status(run, "ok", 0)
    expect("reversed.bin" in pvtest.artifact_map(run),
           "artifacts are listed without --output-dir")
    expect_eq(sorted(os.listdir(work)), before,
              "host directory of the inputs after a run without --output-dir")


if __name__ == "__main__":
    pvtest.main([io_roundtrip, io_stdin, io_no_output_dir])
