"""Shared helpers for pyvisor's integration tests.

Every test file is a script run by CTest as

    /usr/bin/python3 test_NAME.py --pyvisor BUILD/pyvisor \
        --source-dir SRC --mode root|user

and calls pvtest.main(checks), where checks are functions taking a Context.
Mode "root" runs pyvisor as root and skips (exit 77) when not root.  Mode
"user" runs pyvisor unprivileged: as root it switches to the test user
(pyvisor-test, else nobody) with setpriv; otherwise it runs as the current
user.  Exit status: 0 all checks passed, 1 a check failed, 77 skipped.

Standard library only.
"""

import argparse
import errno as errno_mod
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

SKIP = 77
PYVISOR_ERROR = 125
PYVISOR_TIMEOUT = 124
TEST_USERS = ("pyvisor-test", "nobody")

RESULT_FIELDS = {
    "status", "exit_code", "signal", "stdout", "stderr",
    "stdout_truncated", "stderr_truncated", "duration_ms", "artifacts",
    "violations", "audit_log", "audit_events", "audit_events_truncated",
    "limits",
}
STATUSES = ("ok", "error", "timeout", "killed", "memory_limit", "cpu_limit")
AUDIT_RULES = {
    "view.hidden", "view.read_only", "syscall.unknown", "syscall.refused",
    "net.refused", "exec.refused", "signal.outside", "process.outside",
    "ioctl.refused",
    "prctl.refused", "guestmem.unreadable", "net.allowed", "net.budget",
    "filter.kill",
}
# RFC 3339, UTC, milliseconds: 2024-05-01T12:34:56.789Z
TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(Z|\+00:00)$")
RUN_ID_RE = re.compile(r"^[0-9a-f]{16}$")


class Failure(Exception):
    """A check found an outcome that contradicts the contract."""


class Skip(Exception):
    """The test cannot run here; the message says why."""


def expect(cond, msg):
    """Fail the current check with msg unless cond holds."""
    if not cond:
        raise Failure(msg)


def expect_eq(got, want, what):
    if got != want:
        raise Failure(f"{what}: expected {want!r}, got {got!r}")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _short(data, limit=2000):
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if len(data) > limit:
        return data[:limit] + f"... [{len(data) - limit} more chars]"
    return data


class Run:
    """One finished pyvisor invocation."""

    def __init__(self, argv, proc, elapsed):
        self.argv = argv
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.elapsed = elapsed
        self.result = None  # parsed --json object, when requested

    def describe(self):
        lines = [f"  command: {' '.join(self.argv)}",
                 f"  exit status: {self.returncode} "
                 f"(after {self.elapsed:.1f} s)",
                 f"  stderr: {_short(self.stderr)!r}"]
        if self.result is not None:
            brief = {k: v for k, v in self.result.items()
                     if k not in ("stdout", "stderr", "audit_events")}
            lines.append(f"  result: {_short(json.dumps(brief))}")
            lines.append(f"  program stdout: "
                         f"{_short(self.result.get('stdout', ''))!r}")
            lines.append(f"  program stderr: "
                         f"{_short(self.result.get('stderr', ''))!r}")
            events = self.result.get("audit_events") or []
            lines.append(f"  audit events ({len(events)}): "
                         f"{_short(json.dumps(events[:20]))}")
        else:
            lines.append(f"  stdout: {_short(self.stdout)!r}")
        return "\n".join(lines)

    def stderr_lines(self):
        return self.stderr.decode("utf-8", "replace").splitlines()

    def events(self, rule=None):
        """Audit events of the --json result, optionally of one rule."""
        events = (self.result or {}).get("audit_events") or []
        return [e for e in events if rule is None or e.get("rule") == rule]


class Context:
    """What a check needs: where pyvisor is and how to run it."""

    def __init__(self, args):
        self.source_dir = os.path.abspath(args.source_dir)
        self.mode = args.mode
        self.is_root = os.geteuid() == 0
        self.last_run = None
        self.cleanups = []
        self.user = None  # (name, uid, gid) when switching users
        if self.mode == "root" and not self.is_root:
            raise Skip("root variant: needs to be run as root "
                       "(the user variant covers the unprivileged case)")
        if self.mode == "user" and self.is_root:
            self.user = self._pick_user()
        self.pyvisor = os.path.abspath(args.pyvisor)
        if not os.path.isfile(self.pyvisor):
            raise Failure(f"pyvisor binary not found at {self.pyvisor} "
                          "(build it first: cmake --build build)")
        if self.user is not None and not self._user_can_exec(self.pyvisor):
            # The build directory is not reachable for the test user
            # (for example under /root): run a private copy instead.
            copy_dir = self.tmpdir(prefix="pvbin-")
            copy = os.path.join(copy_dir, "pyvisor")
            shutil.copy2(self.pyvisor, copy)
            os.chmod(copy, 0o755)
            self.pyvisor = copy

    # -- users ---------------------------------------------------------

    @staticmethod
    def _pick_user():
        for name in TEST_USERS:
            try:
                pw = pwd.getpwnam(name)
            except KeyError:
                continue
            return (name, pw.pw_uid, pw.pw_gid)
        raise Skip("user variant as root: neither pyvisor-test nor nobody "
                   "exists (run scripts/deps.sh)")

    def _as_user(self, argv):
        if self.user is None:
            return list(argv)
        _, uid, gid = self.user
        setpriv = shutil.which("setpriv")
        if setpriv:
            return [setpriv, f"--reuid={uid}", f"--regid={gid}",
                    "--clear-groups", "--"] + list(argv)
        runuser = shutil.which("runuser")
        if runuser:
            return [runuser, "-u", self.user[0], "--"] + list(argv)
        raise Skip("user variant as root: neither setpriv nor runuser found")

    def _user_can_exec(self, path):
        probe = self._as_user(["/bin/sh", "-c", 'test -x "$1"', "sh", path])
        return subprocess.run(probe, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0

    def describe_user(self):
        if self.user is not None:
            return f"user {self.user[0]} (uid {self.user[1]})"
        return f"uid {os.geteuid()}"

    # -- files ---------------------------------------------------------

    def _give(self, path):
        """Make path usable by the user pyvisor runs as."""
        if self.user is not None:
            os.chown(path, self.user[1], self.user[2])

    def tmpdir(self, prefix="pvtest-"):
        """A fresh directory owned by (or open to) the pyvisor user,
        removed when the test ends."""
        path = tempfile.mkdtemp(prefix=prefix)
        os.chmod(path, 0o755)
        self._give(path)
        self.cleanups.append(lambda: shutil.rmtree(path, ignore_errors=True))
        return path

    def write(self, path, data, mode=0o644):
        """Create path with data (str or bytes), readable by the user."""
        parent = os.path.dirname(path)
        if parent and not os.path.isdir(parent):
            os.makedirs(parent, mode=0o755)
            self._give(parent)
        if isinstance(data, str):
            data = data.encode("utf-8")
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)
        self._give(path)
        return path

    def script(self, directory, name, text):
        """Write a Python script for the sandbox; returns its host path."""
        return self.write(os.path.join(directory, name), text)

    # -- running -------------------------------------------------------

    def run(self, args, timeout=120, input_bytes=None, cwd=None):
        """Run pyvisor with args (list, without the binary) and return a
        Run.  stdin is /dev/null unless input_bytes is given."""
        return self.run_raw([self.pyvisor] + list(args), timeout=timeout,
                            input_bytes=input_bytes, cwd=cwd)

    def run_raw(self, command, timeout=120, input_bytes=None, cwd=None):
        """Run command (a full argv, for example a wrapper around pyvisor)
        as the pyvisor user and return a Run."""
        argv = self._as_user(list(command))
        start = time.monotonic()
        try:
            proc = subprocess.run(
                argv,
                input=input_bytes,
                stdin=subprocess.DEVNULL if input_bytes is None else None,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                timeout=timeout, cwd=cwd or tempfile.gettempdir())
        except subprocess.TimeoutExpired as e:
            raise Failure(f"pyvisor did not return within {timeout} s: "
                          f"{' '.join(argv)}\n  stderr so far: "
                          f"{_short(e.stderr or b'')!r}")
        run = Run(argv, proc, time.monotonic() - start)
        self.last_run = run
        return run

    def run_json(self, args, timeout=120, input_bytes=None, cwd=None):
        """pyvisor run --json ARGS; parses and validates the result."""
        run = self.run(["run", "--json"] + list(args), timeout=timeout,
                       input_bytes=input_bytes, cwd=cwd)
        text = run.stdout.decode("utf-8", "replace").strip()
        try:
            run.result = json.loads(text)
        except ValueError as e:
            raise Failure(f"--json stdout is not one JSON object ({e}); "
                          f"exit {run.returncode}")
        check_result_shape(run.result)
        return run

    def cleanup(self):
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception:  # noqa: BLE001 - best effort
                traceback.print_exc()


# -- contract checks -----------------------------------------------------

def check_result_shape(result):
    """Assert the --json result has every field with the right type."""
    expect(isinstance(result, dict), f"result is not an object: {result!r}")
    missing = RESULT_FIELDS - set(result)
    expect(not missing, f"result lacks fields {sorted(missing)}")
    expect(result["status"] in STATUSES,
           f"bad status {result['status']!r}")
    for key in ("exit_code", "signal"):
        expect(result[key] is None or type(result[key]) is int,
               f"{key} must be int or null, got {result[key]!r}")
    for key in ("stdout", "stderr"):
        expect(isinstance(result[key], str), f"{key} must be a string")
    for key in ("stdout_truncated", "stderr_truncated",
                "audit_events_truncated"):
        expect(type(result[key]) is bool, f"{key} must be a bool")
    expect(type(result["duration_ms"]) is int and result["duration_ms"] >= 0,
           f"duration_ms must be a non-negative int: {result['duration_ms']!r}")
    expect(type(result["violations"]) is int and result["violations"] >= 0,
           f"violations must be a non-negative int: {result['violations']!r}")
    expect(result["audit_log"] is None or isinstance(result["audit_log"], str),
           "audit_log must be a string or null")
    expect(isinstance(result["artifacts"], list), "artifacts must be a list")
    for art in result["artifacts"]:
        for key, typ in (("path", str), ("size_bytes", int), ("sha256", str),
                         ("mime", str)):
            expect(isinstance(art.get(key), typ),
                   f"artifact {art!r}: {key} must be {typ.__name__}")
        expect(not art["path"].startswith("/") and ".." not in
               art["path"].split("/"),
               f"artifact path must be relative to the workspace: "
               f"{art['path']!r}")
        expect(re.fullmatch(r"[0-9a-f]{64}", art["sha256"]) is not None,
               f"artifact sha256 not 64 hex chars: {art['sha256']!r}")
    events = result["audit_events"]
    expect(isinstance(events, list), "audit_events must be a list")
    expect(len(events) <= 100,
           f"audit_events holds at most 100 events, got {len(events)}")
    for ev in events:
        check_audit_event(ev)
    if result["status"] == "ok":
        expect(result["exit_code"] == 0, "status ok needs exit_code 0")
    if result["status"] in ("killed", "timeout", "memory_limit", "cpu_limit"):
        expect(result["exit_code"] is None,
               f"exit_code must be null when {result['status']}")


def check_audit_event(ev):
    """Assert one audit event carries every required field."""
    expect(isinstance(ev, dict), f"audit event is not an object: {ev!r}")
    expect(ev.get("schema") == 1, f"audit event schema must be 1: {ev!r}")
    expect(isinstance(ev.get("time"), str) and TIME_RE.match(ev["time"]),
           f"audit event time not RFC 3339 UTC with ms: {ev.get('time')!r}")
    expect(isinstance(ev.get("run_id"), str) and RUN_ID_RE.match(ev["run_id"]),
           f"audit event run_id not 16 hex chars: {ev.get('run_id')!r}")
    for key in ("pid", "tid", "nr"):
        expect(type(ev.get(key)) is int, f"audit event {key} must be int: {ev!r}")
    expect(ev.get("arch") == "x86_64", f"audit event arch: {ev!r}")
    expect(isinstance(ev.get("syscall"), str) and ev["syscall"],
           f"audit event syscall must be a name: {ev!r}")
    expect(ev.get("verdict") in ("deny", "kill", "allow"),
           f"audit event verdict must be deny, kill or allow: {ev!r}")
    expect(ev.get("rule") in AUDIT_RULES,
           f"audit event rule unknown: {ev.get('rule')!r}")
    expect(isinstance(ev.get("detail"), str),
           f"audit event detail must be a string: {ev!r}")
    if ev["verdict"] == "deny" or "errno" in ev:
        name, num = ev.get("errno"), ev.get("errno_num")
        expect(isinstance(name, str) and type(num) is int,
               f"audit event needs errno (name) and errno_num (int): {ev!r}")
        expect(getattr(errno_mod, name, None) == num,
               f"audit event errno {name} does not match errno_num {num}")
    if "path" in ev:
        expect(isinstance(ev["path"], str), f"audit path must be str: {ev!r}")
    if "address" in ev:
        expect(isinstance(ev["address"], str) and ":" in ev["address"],
               f"audit address must be host:port: {ev!r}")


def expect_status(run, status, exit_status=None):
    """Assert the result status and pyvisor's own exit status."""
    got = run.result["status"]
    expect(got == status, f"result status: expected {status!r}, got {got!r}")
    if exit_status is not None:
        expect(run.returncode == exit_status,
               f"pyvisor exit status: expected {exit_status}, "
               f"got {run.returncode}")


def inner_report(run):
    """Parse the last stdout line of the sandboxed program as JSON (the
    probe scripts print their observations that way)."""
    lines = run.result["stdout"].strip().splitlines()
    expect(lines, "the sandboxed program printed nothing; its stderr: "
           f"{_short(run.result['stderr'])!r}")
    try:
        return json.loads(lines[-1])
    except ValueError:
        raise Failure(f"sandboxed program's last line is not JSON: "
                      f"{lines[-1]!r}")


def expect_pyvisor_error(run, what):
    """Assert exit 125 and exactly one 'pyvisor: error: ' line on stderr."""
    lines = run.stderr_lines()
    expect(run.returncode == PYVISOR_ERROR,
           f"{what}: expected exit 125, got {run.returncode}")
    expect(len(lines) == 1,
           f"{what}: expected exactly one stderr line, got {len(lines)}: "
           f"{lines!r}")
    expect(lines[0].startswith("pyvisor: error: "),
           f"{what}: stderr must start with 'pyvisor: error: ': {lines[0]!r}")
    return lines[0]


def artifact_map(run):
    return {a["path"]: a for a in run.result["artifacts"]}


def processes_with(marker):
    """Host pids (other than ours) whose command line contains marker."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def kill_marked(marker):
    for pid in processes_with(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# -- driver --------------------------------------------------------------

def main(checks):
    """Parse the CTest arguments and run each check; exit 0/1/77."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--pyvisor", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--mode", choices=("root", "user"), required=True)
    args = parser.parse_args()
    name = os.path.basename(sys.argv[0])
    try:
        ctx = Context(args)
    except Skip as e:
        print(f"SKIP {name} [{args.mode}]: {e}")
        sys.exit(SKIP)
    except Failure as e:
        print(f"FAIL {name} [{args.mode}]: {e}")
        sys.exit(1)
    print(f"{name} [{args.mode}]: pyvisor {ctx.pyvisor} as "
          f"{ctx.describe_user()}")
    failed = skipped = 0
    try:
        for check in checks:
            label = check.__name__
            ctx.last_run = None
            try:
                check(ctx)
            except Skip as e:
                skipped += 1
                print(f"SKIP {label}: {e}")
            except Failure as e:
                failed += 1
                print(f"FAIL {label}: {e}")
                if ctx.last_run is not None:
                    print("  last pyvisor run:")
                    print(ctx.last_run.describe())
            except Exception:  # noqa: BLE001 - a bug is a failure too
                failed += 1
                print(f"FAIL {label}: unexpected exception")
                traceback.print_exc(file=sys.stdout)
                if ctx.last_run is not None:
                    print(ctx.last_run.describe())
            else:
                print(f"ok   {label}")
    finally:
        ctx.cleanup()
    if failed:
        print(f"{failed} of {len(checks)} checks failed")
        sys.exit(1)
    if skipped == len(checks):
        sys.exit(SKIP)
    sys.exit(0)
