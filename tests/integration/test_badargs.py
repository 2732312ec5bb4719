#!/usr/bin/env python3
"""pyvisor's own failures: exit 125 with exactly one 'pyvisor: error: '
line on stderr; output-dir conflicts write nothing; --help and --version."""

import os

import pvtest
from pvtest import expect, expect_eq

OK_SCRIPT = "print('hi')\n"
WRITER = r"""
for name in ("out.txt", "other.txt"):
    with open(name, "w") as f:
        f.write("from the sandbox\n")
"""


def unknown_option(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "ok.py", OK_SCRIPT)
    run = ctx.run(["run", "--no-such-option", script])
    line = pvtest.expect_pyvisor_error(run, "unknown option")
    expect("--no-such-option" in line, f"error does not name the option: "
           f"{line!r}")
    run = ctx.run(["--no-such-option"])
    pvtest.expect_pyvisor_error(run, "unknown top-level option")
    run = ctx.run(["no-such-command"])
    pvtest.expect_pyvisor_error(run, "unknown command")
    run = ctx.run(["run"])
    pvtest.expect_pyvisor_error(run, "run without a script")


def missing_input(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "ok.py", OK_SCRIPT)
    missing = os.path.join(work, "no-such-input.csv")
    run = ctx.run(["run", "--input", missing, script])
    line = pvtest.expect_pyvisor_error(run, "missing --input file")
    expect("no-such-input.csv" in line,
           f"error does not name the missing file: {line!r}")


def missing_script(ctx):
    work = ctx.tmpdir()
    missing = os.path.join(work, "no-such-script.py")
    run = ctx.run(["run", missing])
    line = pvtest.expect_pyvisor_error(run, "missing script")
    expect("no-such-script.py" in line,
           f"error does not name the missing script: {line!r}")


def bad_numbers(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "ok.py", OK_SCRIPT)
    for args in (["--timeout", "abc"], ["--timeout", "-1"],
                 ["--max-output", "lots"]):
        run = ctx.run(["run"] + args + [script])
        line = pvtest.expect_pyvisor_error(run, " ".join(args))
        expect(args[0] in line, f"error does not name {args[0]}: {line!r}")


def output_conflict(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "writer.py", WRITER)
    out = os.path.join(work, "out")
    os.mkdir(out)
    os.chmod(out, 0o755)
    ctx._give(out)
    existing = ctx.write(os.path.join(out, "out.txt"), "canary\n")
    run = ctx.run(["run", "--output-dir", out, script])
    line = pvtest.expect_pyvisor_error(run, "output-dir conflict")
    expect("out.txt" in line, f"error does not name the file: {line!r}")
    with open(existing) as f:
        expect_eq(f.read(), "canary\n", "existing file after a conflict")
    expect_eq(sorted(os.listdir(out)), ["out.txt"],
              "files in --output-dir after a conflict (nothing written)")
    # benign twin: --force overwrites
    run = ctx.run(["run", "--force", "--output-dir", out, script])
    expect_eq(run.returncode, 0, "exit status with --force")
    with open(existing) as f:
        expect_eq(f.read(), "from the sandbox\n", "file after --force")
    expect_eq(sorted(os.listdir(out)), ["other.txt", "out.txt"],
              "files in --output-dir after --force")


def help_and_version(ctx):
    for args in (["--help"], ["run", "--help"]):
        run = ctx.run(args)
        expect_eq(run.returncode, 0, f"exit status of pyvisor {' '.join(args)}")
        expect(b"--input" in run.stdout,
               f"pyvisor {' '.join(args)} does not mention --input on stdout")
    run = ctx.run(["--version"])
    expect_eq(run.returncode, 0, "exit status of pyvisor --version")
    expect(b"pyvisor" in run.stdout and run.stdout.strip(),
           f"pyvisor --version printed {run.stdout!r}")


if __name__ == "__main__":
    pvtest.main([unknown_option, missing_input, missing_script, bad_numbers,
                 output_conflict, help_and_version])
