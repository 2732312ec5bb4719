#!/usr/bin/env python3
"""Names outside the view do not exist: open and stat give ENOENT, each
attempt is an audit event with rule view.hidden, in the result and in the
--audit-log file."""

import json
import os
import pwd

import pvtest
from pvtest import expect, expect_eq

SCRIPT = r"""
import json, os, sys
attempts = json.loads(sys.argv[1])
results = []
for op, path in attempts:
    try:
        if op == "open":
            open(path, "rb").close()
        elif op == "stat":
            os.stat(path)
        elif op == "listdir":
            os.listdir(path)
        results.append([op, path, "no error"])
    except OSError as e:
        results.append([op, path, type(e).__name__, e.errno])
# benign twins: visible names still work
with open("/etc/hostname") as f:
    hostname = f.read()
print(json.dumps({"results": results, "hostname": hostname,
                  "python": os.path.exists("/usr/bin/python3"),
                  "home": sorted(os.listdir("/home"))}))
"""


def host_home():
    """A home directory that exists on the host, outside the view."""
    candidates = []
    try:
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    candidates += sorted(pw.pw_dir for pw in pwd.getpwall())
    for path in candidates:
        if path.startswith("/home/") and path != "/home/sandbox" \
                and os.path.isdir(path):
            return path
    for name in sorted(os.listdir("/home")) if os.path.isdir("/home") else []:
        if name != "sandbox":
            return os.path.join("/home", name)
    return None


def repo_file(source_dir):
    for name in ("CMakeLists.txt", "README.md", "Makefile"):
        if os.path.isfile(os.path.join(source_dir, name)):
            return os.path.join(source_dir, name)
    for name in sorted(os.listdir(source_dir)):
        if os.path.isfile(os.path.join(source_dir, name)):
            return os.path.join(source_dir, name)
    raise pvtest.Failure(f"no file found in {source_dir}")


# Roots of the view's own in-memory trees (sentry/policy.c).  A host path
# below one of these names (a checkout in the host's /tmp, say) is invisible
# because the sandbox has its own, empty tree there: ENOENT, but not a
# policy hide, so no audit event is expected for it.
MEM_TREES = ("/tmp", "/workspace", "/home/sandbox", "/dev/shm")


def audited(path):
    return not any(path == t or path.startswith(t + "/") for t in MEM_TREES)


def attempts_for(ctx):
    attempts = [("open", "/etc/shadow"), ("stat", "/etc/shadow"),
                ("stat", "/root"), ("listdir", "/root"),
                ("stat", ctx.source_dir), ("open", repo_file(ctx.source_dir)),
                ("open", "/proc/1/status"), ("stat", "/proc/1"),
                ("open", "/proc/self/mem"), ("open", "/proc/self/environ")]
    home = host_home()
    if home is not None:
        attempts += [("stat", home), ("listdir", home)]
    return attempts


def matches(event_path, path):
    # The event names the path the call named, or the first hidden
    # component of it (e.g. /proc for /proc/self/status).
    if not event_path or event_path == "/":
        return False
    if path.startswith("/proc/self/"):
        # /proc/self resolves to the caller's pid directory.
        parts = event_path.split("/")
        return (len(parts) == 4 and parts[1] == "proc" and parts[2].isdigit()
                and parts[3] == path.split("/")[3])
    return event_path == path or path.startswith(event_path.rstrip("/") + "/")


def hidden(ctx):
    work = ctx.tmpdir()
    script = ctx.script(work, "hidden_probe.py", SCRIPT)
    attempts = attempts_for(ctx)
    log = os.path.join(work, "audit.jsonl")
    # The log is appended to: a line from an earlier run must survive.
    previous = json.dumps({"schema": 1, "note": "earlier run"})
    ctx.write(log, previous + "\n")
    run = ctx.run_json(["--audit-log", log, script, json.dumps(attempts)])
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    for entry in report["results"]:
        op, path, outcome = entry[0], entry[1], entry[2:]
        expect(outcome == ["FileNotFoundError", 2],
               f"{op}({path}) inside the sandbox: expected "
               f"FileNotFoundError errno 2, got {outcome}")
    expect(report["hostname"].strip() != "", "/etc/hostname unreadable")
    expect(report["python"], "/usr/bin/python3 not visible")
    home = host_home()
    if home is not None:
        expect(os.path.basename(home) not in report["home"],
               f"host home {home} listed in /home: {report['home']}")

    result = run.result
    attempts = [(op, path) for op, path in attempts if audited(path)]
    expect(result["violations"] >= len(attempts),
           f"violations {result['violations']} < {len(attempts)} attempts")
    events = run.events("view.hidden")
    for op, path in attempts:
        expect(any(matches(e.get("path", ""), path) for e in events),
               f"no view.hidden audit event with path {path} ({op})")
    for e in events:
        expect_eq(e["errno"], "ENOENT", "errno of a view.hidden event")
        expect_eq(e["errno_num"], 2, "errno_num of a view.hidden event")
        expect_eq(e["verdict"], "deny", "verdict of a view.hidden event")

    # The --audit-log file: same events, one JSON object per line.
    expect(result["audit_log"] is not None and
           os.path.realpath(result["audit_log"]) == os.path.realpath(log),
           f"result audit_log {result['audit_log']!r} is not {log}")
    with open(log) as f:
        lines = f.read().splitlines()
    expect_eq(lines[0], previous, "first line of the appended audit log")
    logged = []
    for n, line in enumerate(lines[1:], 2):
        try:
            logged.append(json.loads(line))
        except ValueError:
            raise pvtest.Failure(f"audit log line {n} is not JSON: {line!r}")
    for ev in logged:
        pvtest.check_audit_event(ev)
    expect_eq(len(logged), result["violations"],
              "audit log lines vs violations")
    expect_eq(len({ev["run_id"] for ev in logged}), 1,
              "one run_id per run in the audit log")
    if result["audit_events_truncated"]:
        expect_eq(len(result["audit_events"]), 100,
                  "audit_events when truncated")
        expect_eq(logged[:100], result["audit_events"],
                  "first 100 logged events vs result audit_events")
    else:
        expect_eq(logged, result["audit_events"],
                  "audit log events vs result audit_events")
    for op, path in attempts:
        expect(any(e["rule"] == "view.hidden" and
                   matches(e.get("path", ""), path) for e in logged),
               f"audit log lacks a view.hidden event for {path}")


def hidden_no_log(ctx):
    # Without --audit-log the result still carries the events.
    work = ctx.tmpdir()
    script = ctx.script(work, "hidden_probe.py", SCRIPT)
    run = ctx.run_json([script, json.dumps([["open", "/etc/shadow"]])])
    pvtest.expect_status(run, "ok", 0)
    expect_eq(run.result["audit_log"], None, "audit_log without --audit-log")
    expect(any(e.get("path") == "/etc/shadow"
               for e in run.events("view.hidden")),
           "no view.hidden event for /etc/shadow")


if __name__ == "__main__":
    pvtest.main([hidden, hidden_no_log])
