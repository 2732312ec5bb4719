#!/usr/bin/env python3
"""Exit status propagation: the program's code, 128+N for signal N."""

import pvtest
from pvtest import expect_eq


def exit_code(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "three.py", "import sys\nsys.exit(3)\n")
    run = ctx.run_json([script])
    pvtest.expect_status(run, "error", 3)
    expect_eq(run.result["exit_code"], 3, "exit_code")
    expect_eq(run.result["signal"], None, "signal")
    run = ctx.run(["run", script])
    expect_eq(run.returncode, 3, "exit status without --json")


def exit_zero(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "zero.py", "print('fine')\n")
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    expect_eq(run.result["signal"], None, "signal")
    expect_eq(run.result["stdout"], "fine\n", "stdout")


def killed(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "suicide.py",
                        "import os\nos.kill(os.getpid(), 9)\n")
    run = ctx.run_json([script])
    pvtest.expect_status(run, "killed", 137)
    expect_eq(run.result["signal"], 9, "signal")
    expect_eq(run.result["exit_code"], None, "exit_code")
    run = ctx.run(["run", script])
    expect_eq(run.returncode, 137, "exit status without --json")


def stderr_and_args(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "args.py",
                        "import sys\nprint(sys.argv[1:])\n"
                        "sys.stderr.write('caf\\u00e9\\n')\n")
    run = ctx.run_json([script, "a b", "--json"])
    pvtest.expect_status(run, "ok", 0)
    expect_eq(run.result["stdout"], "['a b', '--json']\n",
              "arguments after SCRIPT reach the program unchanged")
    expect_eq(run.result["stderr"], "caf\u00e9\n", "stderr")


def invalid_utf8(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "bad.py",
                        "import sys\nsys.stdout.buffer.write(b'a\\xffb')\n")
    run = ctx.run_json([script])
    pvtest.expect_status(run, "ok", 0)
    expect_eq(run.result["stdout"], "a\ufffdb",
              "invalid UTF-8 replaced by U+FFFD")


if __name__ == "__main__":
    pvtest.main([exit_code, exit_zero, killed, stderr_and_args, invalid_utf8])
