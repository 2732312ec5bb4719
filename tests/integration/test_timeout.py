#!/usr/bin/env python3
"""--timeout: a busy loop is stopped after the wall-clock limit with exit
124 and status timeout."""

import pvtest
from pvtest import expect, expect_eq

SCRIPT = "while True:\n    pass\n"


def timeout_json(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "spin.py", SCRIPT)
    run = ctx.run_json(["--timeout", "2", script], timeout=60)
    pvtest.expect_status(run, "timeout", pvtest.PYVISOR_TIMEOUT)
    expect_eq(run.result["exit_code"], None, "exit_code on timeout")
    ms = run.result["duration_ms"]
    expect(1500 <= ms <= 30000, f"duration_ms {ms} not in [1500, 30000]")
    expect(run.elapsed < 30, f"pyvisor took {run.elapsed:.1f} s to stop")


def timeout_plain(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "spin.py", SCRIPT)
    run = ctx.run(["run", "--timeout", "2", script], timeout=60)
    expect_eq(run.returncode, pvtest.PYVISOR_TIMEOUT,
              "exit status on timeout without --json")
    expect(1.5 <= run.elapsed < 30,
           f"pyvisor returned after {run.elapsed:.1f} s, not about 2 s")


def timeout_not_hit(ctx):
    # benign twin: a quick program under a short timeout is not stopped
    work = ctx.tmpdir()
    script = ctx.script(work, "quick.py", "print('done')\n")
    run = ctx.run_json(["--timeout", "20", script], timeout=60)
    pvtest.expect_status(run, "ok", 0)
    expect_eq(run.result["stdout"], "done\n", "stdout")


if __name__ == "__main__":
    pvtest.main([timeout_json, timeout_plain, timeout_not_hit])
