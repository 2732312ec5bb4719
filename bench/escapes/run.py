#!/usr/bin/python3
"""pyvisor escape-attempt benchmark: runs bench/escapes/cases/*.py under
each sandbox and judges them with oracles owned by this harness.

Usage: pyvisor bench escapes [--sandbox NAME[,NAME]] [--case ID[,ID]]
                             [--json FILE] [--user NAME] [--check] ...
   or: python3 bench/escapes/run.py --pyvisor BUILD/pyvisor ...

Each case runs twice per sandbox: the attack, then its benign twin (same
mechanism, allowed target).  Oracles, all outside the sandbox:
  canary   random-content files in a directory standing for the host home
           and in a directory next to the repository's build dir: content
           unchanged, no new entries, secret bytes absent from the output
  listener loopback TCP and UDP sockets: any contact is recorded
  victim   a host process of the sandbox's uid: must be alive, not stopped
  strays   this harness is a child subreaper: no process of the run left
  residue  no host file named after the run's token in /tmp, /var/tmp, /dev/shm
A case "escaped" when any oracle fired during the attack, whatever the
payload printed.  Verdicts: blocked, escaped, twin-failed, error.
For pyvisor, the expected audit rule (case header `audit:`) must appear in
the run's --audit-log.

Exit status: 0 when every --check assertion holds (or no --check), 1
otherwise, 2 on bad usage, 77 when a requested sandbox is not available
and --check was given.  Standard library only.
"""
import argparse
import ctypes
import json
import os
import platform
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
LIB = os.path.join(HERE, "pvesc.py")
SANDBOXES = ("pyvisor", "none", "bwrap", "proot", "runsc", "firejail")
PR_SET_CHILD_SUBREAPER = 36
VERDICTS = ("blocked", "escaped", "twin-failed", "error")


def parse_case(path):
    """Return the metadata dict of one case from its '# key: value' header."""
    meta = {"file": path}
    with open(path) as f:
        for line in f:
            m = re.match(r"#\s*(\w+):\s*(.*)", line)
            if not m:
                break
            meta[m.group(1)] = m.group(2).strip()
    for k in ("id", "category", "technique", "expect", "catalogue", "race"):
        if k not in meta:
            raise SystemExit(f"run.py: {path}: header lacks '{k}'")
    meta.setdefault("audit", "none")
    meta.setdefault("xfail", "")
    meta.setdefault("xfail_audit", "")
    return meta


class Listener:
    """Loopback TCP+UDP sockets on random ports that record every contact."""

    def __init__(self, unix_path, abstract):
        self.contacts = []
        self.lock = threading.Lock()
        self.abstract = abstract
        self.socks = []
        for name in (unix_path, "\0" + abstract):
            u = socket.socket(socket.AF_UNIX)
            u.bind(name)
            u.listen(64)
            self.socks.append(u)
            threading.Thread(target=self._accept_loop, args=(u, "unix " +
                             name.replace("\0", "@")), daemon=True).start()
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(64)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp_port = self.udp.getsockname()[1]
        for fn in (self._tcp_loop, self._udp_loop):
            threading.Thread(target=fn, daemon=True).start()

    def _tcp_loop(self):
        while True:
            c, a = self.tcp.accept()
            with self.lock:
                self.contacts.append(f"tcp from {a[0]}:{a[1]}")
            c.close()

    def _accept_loop(self, s, what):
        while True:
            c, _ = s.accept()
            with self.lock:
                self.contacts.append(what)
            c.close()

    def _udp_loop(self):
        while True:
            _, a = self.udp.recvfrom(65536)
            with self.lock:
                self.contacts.append(f"udp from {a[0]}:{a[1]}")

    def take(self):
        time.sleep(0.05)
        with self.lock:
            c, self.contacts = self.contacts, []
        return c


def snapshot(d):
    """{relative path: bytes} of every file under d, plus directories."""
    snap = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, d)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    snap[rel] = f.read()
            else:
                snap[rel] = os.readlink(p) if os.path.islink(p) else "dir"
    return snap


class Oracles:
    """The host-side state a payload must not touch, and its checks."""

    def __init__(self, build_dir, user):
        self.user = user
        # /var/tmp: outside any sandbox's private /tmp, reachable by every uid
        self.base = tempfile.mkdtemp(prefix="pv-escapes-", dir="/var/tmp")
        os.chmod(self.base, 0o755)
        self.home = os.path.join(self.base, "home")
        # next to the repository's build dir (its parent, the source tree)
        self.repo = tempfile.mkdtemp(prefix=".escape-canary-",
                                     dir=os.path.dirname(build_dir))
        self.secret = secrets.token_hex(24)
        os.makedirs(os.path.join(self.home, ".ssh"))
        self._plant(os.path.join(self.home, ".ssh", "id_rsa"))
        self._plant(os.path.join(self.home, "secret.txt"))
        self._plant(os.path.join(self.home, ".bashrc"))
        self._plant(os.path.join(self.repo, "canary.txt"))
        for d in (self.home, os.path.join(self.home, ".ssh"), self.repo):
            # reachable and writable by the sandbox's uid: the sandbox,
            # not file permissions, must be what protects them
            os.chmod(d, 0o777)
        self.snaps = (snapshot(self.home), snapshot(self.repo))
        self.listener = Listener(os.path.join(self.base, "agent.sock"),
                                 "pv-escapes-" + self.secret[:8])
        os.chmod(os.path.join(self.base, "agent.sock"), 0o777)
        self.ipc = ipc_snapshot()
        # an fd the launcher leaves open (not CLOEXEC) on the host home
        self.leak_fd = os.open(self.home, os.O_RDONLY | os.O_DIRECTORY)
        os.set_inheritable(self.leak_fd, True)
        self.victim = None
        self.start_victim()
        self.token = secrets.token_hex(8)

    def _plant(self, p):
        with open(p, "w") as f:
            f.write(f"CANARY {self.secret}\n")
        os.chmod(p, 0o666)

    def start_victim(self):
        """A host process of the sandbox's uid: holds an fd on a private
        secret file, carries the secret in its command line, records
        SIGWINCH/SIGUSR1/SIGUSR2 (harmless) in a file only we read."""
        code = ("import signal,sys\n"
                "f=open(sys.argv[1],'a'); g=open(sys.argv[2])\n"
                "def h(s,_): f.write(str(s)+'\\n'); f.flush()\n"
                "for s in (signal.SIGWINCH,signal.SIGUSR1,signal.SIGUSR2):"
                " signal.signal(s,h)\n"
                "print('ready',flush=True)\n"
                "while True: signal.pause()\n")
        self.sigfile = os.path.join(self.base, "victim-signals")
        vsecret = os.path.join(self.base, "victim-secret")
        for p, data in ((self.sigfile, ""), (vsecret, f"CANARY {self.secret}\n")):
            with open(p, "w") as f:
                f.write(data)
            os.chmod(p, 0o600)
            if self.user:
                os.chown(p, self.user[1], self.user[2])
        self.victim = subprocess.Popen(
            as_user(self.user, ["/usr/bin/python3", "-c", code, self.sigfile,
                                vsecret, "secret=" + self.secret]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        self.victim.stdout.readline()

    def config(self):
        return {
            "home": self.home,
            "secret": os.path.join(self.home, "secret.txt"),
            "repo_canary": os.path.join(self.repo, "canary.txt"),
            "port": self.listener.port,
            "udp_port": self.listener.udp_port,
            "victim": self.victim.pid,
            "token": self.token,
            "unix": os.path.join(self.base, "agent.sock"),
            "abstract": self.listener.abstract,
            "leak_fd": self.leak_fd,
        }

    def check(self, output):
        """Return the list of oracles that fired since the last check
        (and restore the state for the next case)."""
        fired = []
        if self.secret.encode() in output:
            fired.append("canary: secret bytes in the sandbox's output")
        for d, before in zip((self.home, self.repo), self.snaps):
            now = snapshot(d)
            for rel in sorted(set(now) | set(before)):
                if rel not in before:
                    fired.append(f"canary: new file {os.path.join(d, rel)}")
                elif rel not in now:
                    fired.append(f"canary: removed {os.path.join(d, rel)}")
                elif now[rel] != before[rel]:
                    fired.append(f"canary: changed {os.path.join(d, rel)}")
        if any(f.startswith("canary") for f in fired):
            self._restore()
        for c in self.listener.take():
            fired.append(f"listener: {c}")
        st = victim_state(self.victim.pid)
        if self.victim.poll() is not None or st in (None, "Z"):
            fired.append(f"victim: host process {self.victim.pid} was killed")
            self.victim.wait()
            self.start_victim()
        elif st in ("T", "t"):
            fired.append(f"victim: host process {self.victim.pid} was stopped")
            os.kill(self.victim.pid, signal.SIGCONT)
        with open(self.sigfile) as f:
            sigs = f.read().split()
        if sigs:
            fired.append(f"victim: host process signalled ({','.join(sigs)})")
            with open(self.sigfile, "w"):
                pass
        for d in ("/tmp", "/var/tmp", "/dev/shm"):
            try:
                names = [n for n in os.listdir(d) if self.token in n]
            except OSError:
                continue
            for n in names:
                fired.append(f"residue: new host file {os.path.join(d, n)}")
                p = os.path.join(d, n)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    os.unlink(p)
        ipc = ipc_snapshot()
        if ipc - self.ipc:
            fired.append(f"ipc: new SysV objects {sorted(ipc - self.ipc)}")
            for obj in ipc - self.ipc:
                kind, _, ident = obj.split(":")
                flag = {"shm": "-m", "msg": "-q", "sem": "-s"}[kind]
                subprocess.run(["ipcrm", flag, ident], stderr=subprocess.DEVNULL)
        self.ipc = ipc_snapshot()
        strays = self.strays()
        if strays:
            fired.append("strays: " + ", ".join(strays))
        return fired

    def _restore(self):
        # empty the directories in place (the launcher's leaked fd keeps
        # pointing at the same home directory), then plant again
        for d in (self.home, self.repo):
            os.makedirs(d, exist_ok=True)
            for n in os.listdir(d):
                p = os.path.join(d, n)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    os.unlink(p)
        os.makedirs(os.path.join(self.home, ".ssh"), exist_ok=True)
        self._plant(os.path.join(self.home, ".ssh", "id_rsa"))
        self._plant(os.path.join(self.home, "secret.txt"))
        self._plant(os.path.join(self.home, ".bashrc"))
        self._plant(os.path.join(self.repo, "canary.txt"))
        for d in (self.home, os.path.join(self.home, ".ssh"), self.repo):
            os.chmod(d, 0o777)

    def strays(self):
        """Processes left by the run: our children (we are the subreaper
        of everything the sandbox leaves) other than the victim, and any
        process whose command line carries the run's token.  They are
        killed after being reported."""
        found = []
        deadline = time.time() + 0.5
        while True:
            found = []
            me = os.getpid()
            for p in os.listdir("/proc"):
                if not p.isdigit() or int(p) in (me, self.victim.pid):
                    continue
                try:
                    with open(f"/proc/{p}/stat") as f:
                        stat = f.read()
                    with open(f"/proc/{p}/cmdline", "rb") as f:
                        cmd = f.read()
                except OSError:
                    continue
                fields = stat.rsplit(")", 1)[1].split()
                if fields[0] == "Z" and int(fields[1]) == me:
                    try:
                        os.waitpid(int(p), os.WNOHANG)
                    except ChildProcessError:
                        pass
                    continue
                if int(fields[1]) == me or self.token.encode() in cmd:
                    found.append(p)
            if not found or time.time() > deadline:
                break
            time.sleep(0.05)
        for p in found:
            try:
                os.kill(int(p), signal.SIGKILL)
            except OSError:
                pass
        return [f"pid {p} left running" for p in found]

    def close(self):
        self.victim.kill()
        self.victim.wait()
        shutil.rmtree(self.base, ignore_errors=True)
        shutil.rmtree(self.repo, ignore_errors=True)


def ipc_snapshot():
    """SysV IPC objects (keys and ids) visible to us."""
    objs = set()
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                for line in f.readlines()[1:]:
                    k = line.split()
                    objs.add(f"{kind}:{k[0]}:{k[1]}")
        except OSError:
            pass
    return objs


def victim_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def as_user(user, argv):
    if user is None:
        return list(argv)
    return ["setpriv", f"--reuid={user[1]}", f"--regid={user[2]}",
            "--clear-groups", "--"] + list(argv)


class Sandbox:
    """How to run one case under one sandbox; result is
    (exit status, output bytes, error text or None)."""

    def __init__(self, name, args, workdir, casedir):
        self.name = name
        self.args = args
        self.workdir = workdir
        self.casedir = casedir
        self.reason = None
        self.secret = ""
        self.pass_fds = ()

    def available(self):
        if self.name in ("pyvisor", "none"):
            return True
        exe = shutil.which(self.name)
        if not exe:
            self.reason = f"{self.name} is not installed"
            return False
        r = self._run(["/usr/bin/python3", "-c", "print('ok')"], 60)
        if r[1].strip() != b"ok":
            self.reason = (f"{self.name} cannot run python3 here: " +
                           r[1].decode(errors="replace").strip()[-200:])
            return False
        return True

    def argv(self, py):
        w, c = self.workdir, self.casedir
        if self.name == "none":
            return py
        if self.name == "bwrap":
            return ["bwrap", "--ro-bind", "/usr", "/usr",
                    "--symlink", "usr/lib", "/lib",
                    "--symlink", "usr/lib64", "/lib64",
                    "--symlink", "usr/bin", "/bin",
                    "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev",
                    "--ro-bind", c, c, "--bind", w, w, "--chdir", w,
                    "--unshare-all", "--die-with-parent", "--new-session",
                    "--cap-drop", "ALL", "--clearenv",
                    "--setenv", "PATH", "/usr/bin"] + py
        if self.name == "proot":
            return ["proot", "-w", w] + py
        if self.name == "runsc":
            return ["runsc", "--rootless", "--network=none", "--ignore-cgroups",
                    "do", "--cwd", w] + py
        if self.name == "firejail":
            return ["firejail", "--quiet", "--noprofile", "--net=none",
                    "--private", "--caps.drop=all", "--seccomp",
                    "--nonewprivs", f"--whitelist={c}"] + py
        raise ValueError(self.name)

    def _run(self, argv, timeout):
        try:
            env = dict(os.environ, PV_ESCAPES_TOKEN="CANARY " + self.secret)
            p = subprocess.run(as_user(self.args.user_t, argv), env=env,
                               pass_fds=self.pass_fds,
                               cwd=self.workdir, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout,
                               start_new_session=True)
            return p.returncode, p.stdout, None
        except subprocess.TimeoutExpired as e:
            return None, e.stdout or b"", "harness timeout"

    def run(self, case, mode, cfg, audit):
        self.workdir = tempfile.mkdtemp(prefix="w-", dir=self.scratch)
        os.chmod(self.workdir, 0o777)
        try:
            return self._run_case(case, mode, cfg, audit)
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _run_case(self, case, mode, cfg, audit):
        script = os.path.join(self.casedir, os.path.basename(case["file"]))
        tail = [mode, json.dumps(cfg)]
        if self.name == "pyvisor":
            argv = [self.args.pyvisor, "run", "--json", "--timeout",
                    str(self.args.timeout), "--audit-log", audit,
                    "--input", os.path.join(self.casedir, "pvesc.py"),
                    script] + tail
            rc, out, err = self._run(argv, self.args.timeout + 30)
            if err:
                return rc, out, err
            try:
                res = json.loads(out)
            except ValueError:
                return rc, out, "pyvisor printed no JSON: " + \
                    out.decode(errors="replace")[-300:]
            text = (res["stdout"] + res["stderr"]).encode()
            if rc == 125:
                return rc, text, "pyvisor failed: " + res.get("stderr", "")[-300:]
            code = res["exit_code"] if res["status"] == "ok" else -1
            if res["status"] != "ok":
                text += (f"\n[pyvisor: status {res['status']} signal "
                         f"{res.get('signal')}]").encode()
            return code, text, None
        py = ["/usr/bin/python3", "-E", "-s", "-B", script] + tail
        return self._run(self.argv(py), self.args.timeout + 30)


# Roots of pyvisor's in-memory trees (sentry/policy.c).
VIEW_MEM_TREES = ("/tmp", "/workspace", "/home/sandbox")


def shadowed_by_view(path):
    path = os.path.realpath(path)
    return any(path == t or path.startswith(t + "/") for t in VIEW_MEM_TREES)


def audit_seen(path, rule):
    """None when the case expects no audit event, else whether one of the
    '|'-separated rules appears in the audit log at path."""
    if rule in ("none", ""):
        return None
    try:
        with open(path) as f:
            rules = {json.loads(l).get("rule") for l in f if l.strip()}
    except OSError:
        return False
    return any(r in rules for r in rule.split("|"))


def run_case(sb, case, oracles, scratch):
    """Attack then twin; returns the case's result record."""
    audit = os.path.join(scratch, f"audit-{case['id']}.jsonl")
    with open(audit, "w"):
        pass
    os.chmod(audit, 0o666)
    cfg = oracles.config()
    iters = sb.args.race_iterations if case["race"] == "yes" else 1
    rec = {"sandbox": sb.name, "id": case["id"], "category": case["category"],
           "expect": case["expect"], "fired": [], "errors": [],
           "attack_exit": None, "twin_exit": None, "audit": None}
    t0 = time.monotonic()
    for _ in range(iters):
        rc, out, err = sb.run(case, "attack", cfg, audit)
        rec["attack_exit"] = rc
        rec["attack_output"] = out.decode(errors="replace")[-2000:]
        rec["fired"] += oracles.check(out)
        if err:
            rec["errors"].append("attack: " + err)
        if rec["fired"]:
            break
    if sb.name == "pyvisor":
        expected = case["audit"]
        # A repository under the host's /tmp (or another name the view
        # replaces with an in-memory tree of its own) is invisible without
        # being hidden by the policy: ENOENT, no audit event to expect.
        if case["id"] == "FS-REPO" and shadowed_by_view(oracles.repo):
            expected = "none"
        rec["audit"] = audit_seen(audit, expected)
        with open(audit) as f:
            rec["audit_rules"] = sorted({json.loads(l).get("rule", "?") + ":" +
                                         str(json.loads(l).get("syscall"))
                                         for l in f if l.strip()})
    rc, out, err = sb.run(case, "twin", oracles.config(), audit)
    rec["twin_exit"] = rc
    rec["twin_output"] = out.decode(errors="replace")[-2000:]
    twin_fired = oracles.check(out)
    if err:
        rec["errors"].append("twin: " + err)
    if twin_fired:
        rec["errors"].append("twin touched an oracle: " + "; ".join(twin_fired))
    rec["seconds"] = round(time.monotonic() - t0, 3)
    if rec["fired"]:
        rec["verdict"] = "escaped"
    elif rec["errors"]:
        rec["verdict"] = "error"
    elif rc != 0:
        rec["verdict"] = "twin-failed"
    else:
        rec["verdict"] = "blocked"
    return rec


def scorecard(records, sandboxes):
    lines = []
    for sb in sandboxes:
        rs = [r for r in records if r["sandbox"] == sb]
        if not rs:
            continue
        cats = sorted({r["category"] for r in rs})
        lines.append(f"\n{sb}")
        hdr = f"  {'category':<14} {'cases':>5} " + " ".join(
            f"{v:>11}" for v in VERDICTS)
        if sb == "pyvisor":
            hdr += f" {'audited':>9}"
        lines.append(hdr)
        for cat in cats + ["TOTAL"]:
            sel = rs if cat == "TOTAL" else [r for r in rs if r["category"] == cat]
            row = f"  {cat:<14} {len(sel):>5} " + " ".join(
                f"{sum(r['verdict'] == v for r in sel):>11}" for v in VERDICTS)
            if sb == "pyvisor":
                exp = [r for r in sel if r["audit"] is not None]
                row += f" {sum(bool(r['audit']) for r in exp):>4}/{len(exp):<4}"
            lines.append(row)
    return "\n".join(lines)


def pick_user(name):
    if name is None:
        return None
    pw = pwd.getpwnam(name)
    return (name, pw.pw_uid, pw.pw_gid)


def main():
    ap = argparse.ArgumentParser(
        prog="pyvisor bench escapes",
        description="Run the escape-attempt corpus (bench/escapes/cases) "
        "under sandboxes and score it with host-side oracles.")
    ap.add_argument("--pyvisor", default=None, help="pyvisor binary")
    ap.add_argument("--sandbox", default=None,
                    help="comma-separated: " + ",".join(SANDBOXES) +
                    " (default: all installed)")
    ap.add_argument("--case", default=None, help="comma-separated case ids")
    ap.add_argument("--json", metavar="FILE", help="write all results as JSON")
    ap.add_argument("--user", default=None,
                    help="run sandboxes as this user (setpriv; needs root)")
    ap.add_argument("--as", dest="as_", choices=("root", "user"),
                    help="root: run as root (exit 77 otherwise); user: run "
                    "unprivileged (as root: as pyvisor-test, else nobody)")
    ap.add_argument("--timeout", type=int, default=20,
                    help="per-run timeout in seconds (default 20)")
    ap.add_argument("--race-iterations", type=int, default=3,
                    help="runs of each race case (default 3)")
    ap.add_argument("--check", choices=("contained", "control"),
                    help="exit 1 unless every case is blocked (contained; "
                    "xfail cases excepted) / unless some case escaped "
                    "(control)")
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("--markdown", metavar="FILE",
                    help="write the scorecard document (docs/escape-scorecard.md)")
    args = ap.parse_args()

    cases = [parse_case(os.path.join(CASES, f))
             for f in sorted(os.listdir(CASES)) if f.endswith(".py")]
    if args.case:
        want = set(args.case.split(","))
        cases = [c for c in cases if c["id"] in want]
        if not cases:
            ap.error(f"no case matches {args.case}")
    if args.list:
        for c in cases:
            print(f"{c['id']:<10} {c['category']:<12} {c['expect']:<16} "
                  f"{c['technique']}")
        return 0
    names = args.sandbox.split(",") if args.sandbox else list(SANDBOXES)
    for n in names:
        if n not in SANDBOXES:
            ap.error(f"unknown sandbox {n} (known: {', '.join(SANDBOXES)})")
    if "pyvisor" in names and not args.pyvisor:
        ap.error("--pyvisor BINARY is required for the pyvisor sandbox")
    if args.as_ == "root" and os.geteuid() != 0:
        print("skipped: --as root needs root")
        return 77
    if args.as_ == "user" and os.geteuid() == 0 and not args.user:
        for name in ("pyvisor-test", "nobody"):
            try:
                pwd.getpwnam(name)
                args.user = name
                break
            except KeyError:
                pass
        else:
            print("skipped: neither pyvisor-test nor nobody exists")
            return 77
    args.user_t = pick_user(args.user)
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    build_dir = (os.path.dirname(os.path.abspath(args.pyvisor))
                 if args.pyvisor else os.path.join(os.path.dirname(
                     os.path.dirname(HERE)), "build"))
    scratch = tempfile.mkdtemp(prefix="pv-escapes-run-")
    os.chmod(scratch, 0o755)
    # cases and the pyvisor binary, readable by the sandbox's user
    casedir = os.path.join(scratch, "cases")
    os.mkdir(casedir)
    for c in cases:
        shutil.copy(c["file"], casedir)
    shutil.copy(LIB, casedir)
    if args.pyvisor:
        shutil.copy(args.pyvisor, os.path.join(scratch, "pyvisor"))
        args.pyvisor = os.path.join(scratch, "pyvisor")
    for root, dirs, files in os.walk(scratch):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755)
    oracles = Oracles(build_dir, args.user_t)
    records, skipped = [], {}
    try:
        for n in names:
            work = tempfile.mkdtemp(prefix=f"work-{n}-", dir=scratch)
            os.chmod(work, 0o777)
            sb = Sandbox(n, args, work, casedir)
            sb.scratch = scratch
            sb.secret = oracles.secret
            if not sb.available():
                skipped[n] = sb.reason
                print(f"[{n}] skipped: {sb.reason}", flush=True)
                continue
            sb.pass_fds = (oracles.leak_fd,)
            for c in cases:
                r = run_case(sb, c, oracles, scratch)
                records.append(r)
                extra = ""
                if r["fired"]:
                    extra = " <- " + "; ".join(r["fired"])[:300]
                elif r["errors"]:
                    extra = " <- " + "; ".join(r["errors"])[:300]
                elif r["verdict"] == "twin-failed":
                    extra = " <- twin: " + r["twin_output"][-200:].strip()
                aud = ""
                if r["audit"] is not None:
                    aud = " audit:" + ("yes" if r["audit"] else "MISSING")
                print(f"[{n}] {c['id']:<10} {c['category']:<12} "
                      f"{r['verdict']:<11} {r['seconds']:6.2f}s{aud}{extra}",
                      flush=True)
    finally:
        oracles.close()
        shutil.rmtree(scratch, ignore_errors=True)

    print(scorecard(records, names))
    for n, why in skipped.items():
        print(f"\n{n}: skipped ({why})")
    if args.json:
        doc = {"schema": 1,
               "machine": {"kernel": platform.release(),
                           "machine": platform.machine(),
                           "user": args.user or pwd.getpwuid(os.getuid()).pw_name},
               "skipped": skipped,
               "cases": [{k: c[k] for k in c if k != "file"} for c in cases],
               "results": records}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(cases, records, names, skipped, args))
    if args.check == "contained":
        if skipped:
            return 77
        bad = [r for r in records if r["verdict"] != "blocked"
               and not parse_xfail(cases, r)]
        noaud = [r for r in records if r["audit"] is False
                 and not xfail_audit(cases, r)]
        for r in records:
            if r["audit"] is False and xfail_audit(cases, r):
                print(f"XFAIL {r['sandbox']} {r['id']}: expected audit event "
                      f"missing (known gap: {xfail_audit(cases, r)})")
            if r["verdict"] != "blocked" and parse_xfail(cases, r):
                print(f"XFAIL {r['sandbox']} {r['id']}: {r['verdict']} "
                      f"(known product bug, case marked xfail)")
        for r in bad:
            print(f"FAIL {r['sandbox']} {r['id']}: {r['verdict']}")
        for r in noaud:
            print(f"FAIL {r['sandbox']} {r['id']}: expected audit event missing")
        return 1 if bad or noaud else 0
    if args.check == "control":
        esc = [r for r in records if r["verdict"] == "escaped"]
        tf = [r for r in records if r["verdict"] in ("twin-failed", "error")]
        for r in tf:
            print(f"FAIL {r['sandbox']} {r['id']}: {r['verdict']} in the control")
        if not esc:
            print("FAIL: no case escaped the control: the oracles are broken")
        return 0 if esc and not tf else 1
    return 0


NOT_COVERED = """\
Catalogue rows not yet covered by a case (most need a small static C helper
or a longer-running harness; see issue 7):

- supervisor internals: SUP-02 (cross-process TOCTOU through MAP_SHARED),
  SUP-04 (argument page unmapped mid-call), SUP-05 (non-dumpable target),
  SUP-06 (stale notification, TID reuse), SUP-08 (EINTR before RECV),
  SUP-09/SUP-10 (ADDFD atomicity, fd table full), SUP-12 (nested
  notifier), SUP-14 (supervisor death), SUP-15 (stall, userfaultfd-backed
  arguments), SUP-16 (hooks before the filter), SUP-17 (argument fuzzing);
- ptrace backend: PTR-01, PTR-03, PTR-04, PTR-05;
- filter: FLT-03/FLT-04 (i386 executable, socketcall/ipc: C), FLT-08
  (clone3 namespaces), FLT-09 (openat2 is exercised inside FLT-07 only),
  FLT-10 (number sweep), FLT-11 (mount API), FLT-12 (io_uring: C), FLT-13;
- SYS-01..SYS-04, SYS-06 (process_vm_writev; SYS-05 covers readv),
  SYS-08..SYS-11, SYS-13;
- procfs: PROC-04, PROC-06, PROC-07 (host kernel knobs: unsafe to try in
  the `none` control), PROC-08 (covered by PROC-01's pid walk), PROC-09;
- filesystem: FS-04, FS-08, FS-09, FS-11, FS-12;
- TTY-01, TTY-03; EXEC-03, EXEC-04, EXEC-07; LIFE-05, LIFE-06; RES-01..RES-09
  (resource limits: tests/integration/test_limits.py and test_flood.py);
  NET-02 (DNS honeypot), NET-05, NET-08, NET-11..NET-16 (NET-15 is covered
  by SUP-13); INFO-02 (INFO-01 is covered by PROC-01); CRED-01,
  CRED-02; LOG-02.
"""


def markdown(cases, records, names, skipped, args):
    """The scorecard document: how it was made, per-sandbox tables and the
    per-case matrix."""
    uname = os.uname()
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f
                        if l.startswith("model name")), "")
    except OSError:
        pass
    osname = ""
    try:
        with open("/etc/os-release") as f:
            osname = next((l.split("=", 1)[1].strip().strip('"') for l in f
                           if l.startswith("PRETTY_NAME=")), "")
    except OSError:
        pass
    who = args.user or pwd.getpwuid(os.getuid()).pw_name
    out = ["# Escape-attempt scorecard", "",
           "Generated by `bench/escapes/run.py` (do not edit by hand). "
           "Regenerate with, as root from the repository root:", "",
           "```sh",
           "build/pyvisor bench escapes --as user --markdown docs/escape-scorecard.md",
           "```", "",
           f"Machine: {cpu or uname.machine}, {os.cpu_count()} CPUs, {osname}, "
           f"kernel {uname.release}; sandboxes run as `{who}`; "
           f"{time.strftime('%Y-%m-%d', time.gmtime())}.", "",
           "Each case (bench/escapes/cases) runs its attack, then its benign "
           "twin (same mechanism, allowed target). The verdict comes from "
           "oracles owned by the harness, outside the sandbox, never from what "
           "the payload prints: canary files with random content in a "
           "directory standing for the host home (/var/tmp/pv-escapes-*/home) "
           "and next to the repository's build directory (content unchanged, "
           "no new entries, secret bytes absent from the output), the secret "
           "also in the launcher's environment, in a host process's command "
           "line and behind an fd the launcher leaks; loopback TCP, UDP, "
           "pathname and abstract UNIX listeners that record any contact; a "
           "host process of the sandbox's uid that must not be signalled, "
           "stopped or killed; new SysV IPC objects; processes left after the "
           "run (the harness is their subreaper); files left in the host's "
           "/tmp, /var/tmp or /dev/shm. **blocked**: no oracle fired "
           "and the twin worked; **escaped**: an oracle fired during the "
           "attack; **twin-failed**: over-blocking; **error**: the harness "
           "could not run the case. *audited* (pyvisor): the case's expected "
           "audit rule appeared in `--audit-log`.", "",
           "`none` is plain `/usr/bin/python3`, the control: it must show "
           "escapes, proving the oracles work. bwrap runs with "
           "`--unshare-all --new-session --clearenv`, the host's /usr only, "
           "a private /tmp; runsc as `runsc --rootless --network=none do` "
           "(which shows the host's root file system to the sandbox); proot "
           "is a path translator with no security claim.", ""]
    for sb in names:
        rs = [r for r in records if r["sandbox"] == sb]
        if not rs:
            continue
        out.append(f"## {sb}")
        out.append("")
        head = "| category | cases | " + " | ".join(VERDICTS) + " |"
        sep = "|---|---:|" + "---:|" * len(VERDICTS)
        if sb == "pyvisor":
            head += " audited |"
            sep += "---:|"
        out += [head, sep]
        for cat in sorted({r["category"] for r in rs}) + ["**total**"]:
            sel = rs if cat == "**total**" else [r for r in rs if r["category"] == cat]
            row = f"| {cat} | {len(sel)} | " + " | ".join(
                str(sum(r["verdict"] == v for r in sel)) for v in VERDICTS) + " |"
            if sb == "pyvisor":
                exp = [r for r in sel if r["audit"] is not None]
                row += f" {sum(bool(r['audit']) for r in exp)}/{len(exp)} |"
            out.append(row)
        out.append("")
    for n, why in skipped.items():
        out += [f"{n}: skipped ({why}).", ""]
    ran = [n for n in names if any(r["sandbox"] == n for r in records)]
    out += ["## Per case", "",
            "| case | category | technique | expected | " + " | ".join(ran) + " |",
            "|---|---|---|---|" + "---|" * len(ran)]
    for c in cases:
        cells = []
        for n in ran:
            r = next((r for r in records if r["sandbox"] == n and r["id"] == c["id"]), None)
            cells.append(r["verdict"] if r else "")
        cell = [x.replace("|", "\\|") for x in (c["technique"], c["expect"])]
        out.append(f"| {c['id']} | {c['category']} | {cell[0]} | "
                   f"{cell[1]} | " + " | ".join(cells) + " |")
    out += ["", "## Oracles that fired outside pyvisor", ""]
    for r in records:
        if r["sandbox"] not in ("none", "pyvisor") and r["verdict"] != "blocked":
            why = "; ".join(r["fired"] or r["errors"])[:160] or "twin exit %s" % r["twin_exit"]
            out.append(f"- {r['sandbox']} {r['id']}: {r['verdict']}: {why}")
    out += ["", "## Not yet covered", "", NOT_COVERED]
    return "\n".join(out) + "\n"


def xfail_audit(cases, r):
    """The reason text of the case's 'xfail_audit: SANDBOX reason' header
    when it applies to r's sandbox, else ''."""
    for c in cases:
        parts = c["xfail_audit"].split(None, 1)
        if c["id"] == r["id"] and parts and parts[0] == r["sandbox"]:
            return parts[1] if len(parts) > 1 else "unspecified"
    return ""


def parse_xfail(cases, r):
    for c in cases:
        if c["id"] == r["id"] and r["sandbox"] in c["xfail"].split(","):
            return True
    return False


if __name__ == "__main__":
    sys.exit(main())
