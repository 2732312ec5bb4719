#!/usr/bin/env python3
"""--max-output: a program printing 100 MiB is not slowed down or stopped;
each stream is captured up to the cap and marked truncated."""

import pvtest
from pvtest import expect, expect_eq

MIB = 1 << 20
SCRIPT = r"""
import sys
chunk = b"x" * (1 << 20)
err_mib = int(sys.argv[1])
for _ in range(100):
    sys.stdout.buffer.write(chunk)
sys.stdout.buffer.flush()
for _ in range(err_mib):
    sys.stderr.buffer.write(chunk)
sys.stderr.buffer.flush()
"""


def flood_default_cap(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "flood.py", SCRIPT)
    run = ctx.run_json(["--timeout", "100", script, "0"], timeout=150)
    pvtest.expect_status(run, "ok", 0)
    expect(run.result["stdout_truncated"] is True, "stdout_truncated")
    expect(run.result["stderr_truncated"] is False, "stderr_truncated")
    out = run.result["stdout"].encode("utf-8")
    expect_eq(len(out), MIB, "captured stdout bytes (default cap)")
    expect(out == b"x" * MIB, "captured stdout is not the program's bytes")
    expect(run.elapsed < 100, f"the run took {run.elapsed:.1f} s")


def flood_small_cap(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "flood.py", SCRIPT)
    run = ctx.run_json(["--max-output", "1000", "--timeout", "100", script,
                        "10"], timeout=150)
    pvtest.expect_status(run, "ok", 0)
    for stream in ("stdout", "stderr"):
        expect(run.result[f"{stream}_truncated"] is True,
               f"{stream}_truncated with --max-output 1000")
        expect_eq(len(run.result[stream].encode("utf-8")), 1000,
                  f"captured {stream} bytes with --max-output 1000")


def flood_streamed(ctx):
    # Without --json the streamed output obeys the same per-stream cap.
    work = ctx.tmpdir()
    script = ctx.script(work, "flood.py", SCRIPT)
    run = ctx.run(["run", "--max-output", "1000", "--timeout", "100", script,
                   "1"], timeout=150)
    expect_eq(run.returncode, 0, "exit status")
    expect_eq(len(run.stdout), 1000, "streamed stdout bytes")
    expect(run.stdout == b"x" * 1000, "streamed stdout content")
    # stderr carries the program's 1000 bytes; pyvisor may add a notice
    # about the truncation after them.
    expect(run.stderr.startswith(b"x" * 1000) and
           not run.stderr[1000:].startswith(b"x"),
           f"streamed stderr not capped at 1000 bytes "
           f"({len(run.stderr)} bytes)")


if __name__ == "__main__":
    pvtest.main([flood_default_cap, flood_small_cap, flood_streamed])
