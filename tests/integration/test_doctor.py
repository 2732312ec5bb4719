#!/usr/bin/env python3
"""`pyvisor doctor` reports what this machine can enforce, and `pyvisor
run` refuses (exit 125, one line naming the missing feature) when asked for
a protection the machine cannot give: here, inside an outer seccomp filter
that denies new user namespaces, like common container runtimes do."""

import json
import os
import shutil
import sys

import pvtest
from pvtest import expect, expect_eq

FEATURES = {
    "seccomp_user_notif", "wait_killable_recv", "sync_wake_up", "addfd",
    "addfd_send", "pidfd_getfd", "ptrace", "userns", "pidns", "netns",
    "landlock", "openat2", "cgroup_delegation",
}
PROTECTIONS = {
    "interposition", "safe-artifacts", "killable-wait", "fast-wakeups",
    "landlock", "userns", "pidns", "netns", "ptrace", "cgroup",
}


def deny_helper(ctx):
    """The pv-deny-userns binary built next to pyvisor, usable by the user
    pyvisor runs as."""
    built = None
    argv = sys.argv
    if "--pyvisor" in argv:
        built = os.path.join(os.path.dirname(os.path.abspath(
            argv[argv.index("--pyvisor") + 1])), "pv-deny-userns")
    if not built or not os.path.isfile(built):
        raise pvtest.Failure(f"helper pv-deny-userns not built at {built}")
    if ctx.user is not None and not ctx._user_can_exec(built):
        copy = os.path.join(os.path.dirname(ctx.pyvisor), "pv-deny-userns")
        if not os.path.exists(copy):
            shutil.copy2(built, copy)
            os.chmod(copy, 0o755)
        built = copy
    return built


def doctor_json(ctx, wrap=None):
    argv = [ctx.pyvisor, "doctor", "--json"]
    if wrap:
        argv = [wrap] + argv
    run = ctx.run_raw(argv)
    try:
        report = json.loads(run.stdout)
    except ValueError as e:
        raise pvtest.Failure(f"doctor --json is not JSON ({e}): "
                             f"{run.stdout[:300]!r}")
    return run, report


def doctor_report(ctx):
    run, report = doctor_json(ctx)
    expect_eq(run.returncode, 0 if report.get("ok") else 1,
              "doctor exit status vs ok")
    expect(report.get("ok") is True,
           f"this machine runs pyvisor, doctor says: {report}")
    expect_eq(set(report["features"]), FEATURES, "doctor features")
    expect_eq(set(report["protections"]), PROTECTIONS, "doctor protections")
    for name, f in report["features"].items():
        expect(type(f.get("available")) is bool and
               isinstance(f.get("detail"), str) and f["detail"],
               f"feature {name}: {f!r}")
    for name in ("seccomp_user_notif", "addfd", "addfd_send", "pidfd_getfd",
                 "openat2"):
        expect(report["features"][name]["available"],
               f"{name} must be available where the suite runs")
    ll = report["features"]["landlock"]
    expect(type(ll.get("abi")) is int and (ll["abi"] > 0) == ll["available"],
           f"landlock abi: {ll!r}")
    for name, p in report["protections"].items():
        expect(type(p.get("available")) is bool and
               isinstance(p.get("needs"), list) and p["needs"],
               f"protection {name}: {p!r}")
        expect((p["missing"] is None) == p["available"],
               f"protection {name}: missing vs available: {p!r}")
    # The table for people carries the same verdicts.
    table = ctx.run(["doctor"])
    expect_eq(table.returncode, 0, "doctor exit status")
    text = table.stdout.decode()
    for line in ("seccomp user notification", "SECCOMP_ADDFD_FLAG_SEND",
                 "Landlock", "interposition", "enforced"):
        expect(line in text, f"doctor table lacks {line!r}:\n{text}")
    helptext = ctx.run(["doctor", "--help"])
    expect_eq(helptext.returncode, 0, "doctor --help")
    expect(b"--json" in helptext.stdout, "doctor --help mentions --json")
    bad = ctx.run(["doctor", "--bogus"])
    pvtest.expect_pyvisor_error(bad, "doctor --bogus")


def refuses_without_userns(ctx):
    helper = deny_helper(ctx)
    run, report = doctor_json(ctx, wrap=helper)
    expect(report["features"]["userns"]["available"] is False,
           f"userns under the deny filter: {report['features']['userns']}")
    expect(report["protections"]["userns"]["available"] is False,
           "userns protection under the deny filter")
    expect(report["ok"] is True and run.returncode == 0,
           "pyvisor still works without user namespaces")
    work = ctx.tmpdir()
    script = ctx.script(work, "p.py", "print('ran')\n")
    for prot in ("userns", "pidns", "netns"):
        run = ctx.run_raw([helper, ctx.pyvisor, "run", "--require", prot,
                           script])
        line = pvtest.expect_pyvisor_error(run, f"--require {prot} "
                                           "without user namespaces")
        expect(f"'{prot}'" in line and "user namespaces" in line,
               f"the refusal must name the protection and the missing "
               f"feature: {line!r}")
        expect(run.stdout == b"", f"nothing may run: stdout {run.stdout!r}")
    # The default workspace quota needs a user namespace (docs/quotas.md):
    # without one pyvisor refuses, naming the quota, rather than run
    # without it.
    run = ctx.run_raw([helper, ctx.pyvisor, "run", script])
    line = pvtest.expect_pyvisor_error(run, "default disk quota without user namespaces")
    expect("--disk-quota" in line, f"the refusal must name the quota: {line!r}")
    expect(run.stdout == b"", f"nothing may run: stdout {run.stdout!r}")
    # Benign twins: asking for no quota, the run works inside the same
    # filter, and --require userns works outside it.
    run = ctx.run_raw([helper, ctx.pyvisor, "run", "--disk-quota", "0", script])
    expect_eq((run.returncode, run.stdout), (0, b"ran\n"),
              "run with --disk-quota 0 under the deny filter")
    _, plain = doctor_json(ctx)
    if not plain["features"]["userns"]["available"]:
        raise pvtest.Skip("user namespaces unavailable even without the "
                          "filter: the twin cannot run")
    run = ctx.run(["run", "--require", "userns", script])
    expect_eq((run.returncode, run.stdout), (0, b"ran\n"),
              "--require userns where user namespaces exist")


def require_landlock(ctx):
    _, report = doctor_json(ctx)
    work = ctx.tmpdir()
    script = ctx.script(work, "p.py", "print('ran')\n")
    run = ctx.run(["run", "--require", "landlock,interposition", script])
    if report["features"]["landlock"]["available"]:
        expect_eq((run.returncode, run.stdout), (0, b"ran\n"),
                  "--require landlock on a Landlock kernel")
        # A "#!" program: the ruleset lets the kernel exec its interpreter.
        if os.path.exists("/usr/bin/pydoc3"):
            run = ctx.run(["run", "--require", "landlock", "--", "pydoc3",
                           "len"])
            expect(run.returncode == 0 and b"len(obj" in run.stdout,
                   f"pydoc3 under Landlock: exit {run.returncode}, "
                   f"stderr {run.stderr[-300:]!r}")
    else:
        line = pvtest.expect_pyvisor_error(run, "--require landlock")
        expect("landlock" in line.lower(), line)
    if not report["features"]["cgroup_delegation"]["available"]:
        run = ctx.run(["run", "--require", "cgroup", script])
        line = pvtest.expect_pyvisor_error(run, "--require cgroup")
        expect("'cgroup'" in line and "cgroup v2" in line, line)
    run = ctx.run(["run", "--require", "telepathy", script])
    line = pvtest.expect_pyvisor_error(run, "--require telepathy")
    expect("telepathy" in line, line)


if __name__ == "__main__":
    pvtest.main([doctor_report, refuses_without_userns, require_landlock])
