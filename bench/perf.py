#!/usr/bin/env python3
"""pyvisor performance suite: each workload natively and under every sandbox.

Usage: bench/perf.py [--pyvisor PATH] [--micro PATH] [--runs N] [--warmup N]
                     [--workloads A,B] [--sandboxes A,B] [--json FILE]
                     [--smoke] [--no-footprint] [--no-micro]

Every workload runs natively and under each available sandbox (pyvisor,
gVisor's `runsc --platform=ptrace --network=none do`, proot, bubblewrap),
interleaved in rounds (a new random order each round) so that all
sandboxes see the same machine state.
After --warmup untimed rounds, --runs timed rounds follow; each timing is
the wall-clock time of the whole command (start, run, teardown), measured
by this script.  The table gives, per workload and sandbox, the median time
and its ratio to the native median of the same invocation, with the min and
max.  Sandboxes that are not installed (or do not work here) are skipped and
listed with the reason.  A workload that fails in a sandbox is reported as
failed with the program's own error; nothing is retried or faked.

Footprint: after the timed rounds one more run per sandbox and workload
samples, every few milliseconds, the processes of the sandbox other than the
workload's Python (pyvisor's supervisor, proot's tracer, bwrap's monitor,
runsc's sentry, gofer and stubs) and reports their peak RSS and fd count.

Microbenchmarks (pv-micro, bench/micro/emulated.py): per-call costs of an
untrapped syscall, the bare notification round trip, and emulated stat, open
(with fd injection) and getdents under pyvisor, next to the native calls.

Standard library only.  Exit status: 0 on success (also when some sandbox
or workload failed: that is a result), 1 when pyvisor itself cannot run,
2 on bad usage, 77 (smoke mode) when the machine cannot run pyvisor at all.
See docs/performance.md.
"""
import argparse
import csv
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
PYTHON = "/usr/bin/python3"
PY_FLAGS = ["-E", "-s", "-B"]
TRUE = "/usr/bin/true"
SCHEMA = 1

# --------------------------------------------------------------------------
# Workloads.  Each is a Python script (run as SCRIPT.py in the sandbox's
# working directory), or the empty run (a program, no Python).  {scale}
# parameters are filled from FULL or SMOKE.

FULL = {"cpu_iters": 55_000_000, "csv_rows": 200_000, "files": 2000,
         "subprocs": 50, "pool_items": 400, "parallel": 4, "par_iters": 10_000_000}
SMOKE = {"cpu_iters": 200_000, "csv_rows": 2_000, "files": 50,
         "subprocs": 2, "pool_items": 8, "parallel": 2, "par_iters": 100_000}

SCRIPTS = {
    "pass": "pass\n",
    "import": "import numpy, pandas, matplotlib\nprint('ok')\n",
    "csv": '''
import json
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

df = pd.read_csv("sales.csv", parse_dates=["date"])
df["revenue"] = df["units"] * df["price"]
by_region = df.groupby("region")["revenue"].sum().sort_values(ascending=False)
by_product = df.groupby("product")["units"].sum()
monthly = df.set_index("date")["revenue"].resample("M").sum()
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
by_region.plot.bar(ax=axes[0], title="revenue by region")
monthly.plot(ax=axes[1], title="monthly revenue")
fig.tight_layout()
fig.savefig("chart.png", dpi=80)
with open("summary.json", "w") as f:
    json.dump({{"rows": len(df), "revenue": round(float(df["revenue"].sum()), 2),
               "top_region": by_region.index[0],
               "units": {{k: int(v) for k, v in by_product.items()}}}}, f)
print("ok", len(df))
''',
    "cpu": '''
def work(n):
    total = 0
    for i in range(n):
        total = (total * 31 + i) % 1000003
    return total
print("ok", work({cpu_iters}))
''',
    "files": '''
import os
n = {files}
os.mkdir("many")
for i in range(n):
    with open(f"many/f{{i:05d}}.txt", "w") as f:
        f.write("line %d\\n" % i * 8)
size = 0
for i in range(n):
    size += os.stat(f"many/f{{i:05d}}.txt").st_size
for i in range(n):
    with open(f"many/f{{i:05d}}.txt") as f:
        f.read()
for i in range(n):
    os.unlink(f"many/f{{i:05d}}.txt")
os.rmdir("many")
print("ok", size)
''',
    "parallel": '''
import numpy, pandas, matplotlib

def work(n):
    total = 0
    for i in range(n):
        total = (total * 31 + i) % 1000003
    return total
print("ok", work({par_iters}))
''',
    "subprocess": '''
import subprocess
for _ in range({subprocs}):
    subprocess.run(["/usr/bin/true"], check=True)
print("ok")
''',
    "pool": '''
import multiprocessing

def f(x):
    return sum(i * i for i in range(x))

if __name__ == "__main__":
    with multiprocessing.Pool(2) as p:
        print("ok", sum(p.map(f, [20000] * {pool_items})))
''',
}

WORKLOADS = [
    # name, description, kind
    ("pass", "python3 -c pass (an empty script)", "script"),
    ("import", "import numpy, pandas, matplotlib", "script"),
    ("csv", "pandas CSV analysis with a chart ({csv_rows:,} rows)", "script"),
    ("cpu", "pure-Python CPU work ({cpu_iters:,} loop iterations)", "script"),
    ("files", "create, write, stat, read, delete {files:,} small files", "script"),
    ("subprocess", "{subprocs} subprocess runs of /usr/bin/true", "script"),
    ("pool", "multiprocessing.Pool(2).map over {pool_items} items", "script"),
    ("empty", "start and teardown of an empty run (/usr/bin/true)", "program"),
    ("parallel", "{parallel} concurrent runs: import numpy, pandas, matplotlib and "
     "{par_iters:,} loop iterations each", "parallel"),
]

# --------------------------------------------------------------------------
# Sandboxes.  Each turns (program argv, workdir, script?, inputs) into the
# command line that runs it there.


def native_cmd(args, wd, script, inputs):
    return [PYTHON] + PY_FLAGS + [script] + args if script else args


def make_pyvisor_cmd(binary, run_args=()):
    """pyvisor run [RUN_ARGS] ...: RUN_ARGS select a backend or other options."""
    def cmd(args, wd, script, inputs):
        base = [binary, "run", *run_args, "--timeout", "900"]
        if not script:
            return base + ["--"] + args
        extra = []
        for name in inputs:
            extra += ["--input", os.path.join(wd, name)]
        return base + extra + [script] + args
    return cmd


def runsc_cmd(args, wd, script, inputs):
    base = ["runsc", "--platform=ptrace", "--network=none"]
    if os.geteuid() != 0:
        base.append("--rootless")
    base.append("do")
    return base + (native_cmd(args, wd, script, inputs))


def proot_cmd(args, wd, script, inputs):
    return ["proot", "-w", wd] + native_cmd(args, wd, script, inputs)


def bwrap_cmd(args, wd, script, inputs):
    return (["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--tmpfs", "/tmp", "--bind", wd, wd, "--chdir", wd,
             "--unshare-all", "--die-with-parent", "--new-session"]
            + native_cmd(args, wd, script, inputs))


# --------------------------------------------------------------------------


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def machine_info(pyvisor):
    info = {"kernel": platform.release(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "cpu_model": None, "mem_total_kb": None,
            "python": None, "versions": {}}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["mem_total_kb"] = int(line.split()[1])
    except OSError:
        pass
    try:
        with open("/etc/debian_version") as f:
            info["debian"] = f.read().strip()
    except OSError:
        pass
    info["python"] = subprocess.run([PYTHON, "--version"], capture_output=True,
                                    text=True).stdout.strip()
    for name, argv in (("pyvisor", [pyvisor, "--version"]),
                       ("runsc", ["runsc", "--version"]),
                       ("proot", ["proot", "--version"]),
                       ("bwrap", ["bwrap", "--version"])):
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=20)
            text = (p.stdout or p.stderr).strip().splitlines()
            info["versions"][name] = next((ln.strip() for ln in text if ln.strip()), None)
        except (OSError, subprocess.TimeoutExpired):
            info["versions"][name] = None
    try:
        p = subprocess.run(["git", "-C", SOURCE, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        info["pyvisor_commit"] = p.stdout.strip() or None
    except OSError:
        info["pyvisor_commit"] = None
    return info


def make_csv(path, rows):
    rng = random.Random(42)
    regions = ["North", "South", "East", "West", "Central"]
    products = ["Widget", "Gadget", "Doohickey", "Gizmo", "Thingamajig", "Sprocket"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["date", "region", "product", "units", "price"])
        for i in range(rows):
            day = 1 + (i * 7919) % 365
            month, dom = 1 + (day - 1) // 31 % 12, 1 + (day - 1) % 28
            w.writerow([f"2025-{month:02d}-{dom:02d}", rng.choice(regions),
                        rng.choice(products), rng.randint(1, 40),
                        f"{rng.uniform(2, 80):.2f}"])


class Job:
    """One (workload, sandbox) pair: its command and its timings."""

    def __init__(self, workload, sandbox):
        self.workload = workload
        self.sandbox = sandbox
        self.times = []
        self.error = None
        self.footprint = None


def prepare_workdir(root, wl, scripts, inputs):
    wd = tempfile.mkdtemp(prefix=f"{wl}-", dir=root)
    if wl in scripts:
        with open(os.path.join(wd, f"bench_{wl}.py"), "w") as f:
            f.write(scripts[wl])
    for name, src in inputs.get(wl, {}).items():
        shutil.copyfile(src, os.path.join(wd, name))
    return wd


def command_for(job, wd, sandboxes, kind, inputs):
    builder = sandboxes[job.sandbox]
    if kind == "program":
        return builder([TRUE], wd, None, [])
    return builder([], wd, f"bench_{job.workload}.py", list(inputs.get(job.workload, {})))


def error_of(p):
    text = (p.stderr or b"").decode(errors="replace").strip().splitlines()
    # The last line of a Python traceback names the error; pyvisor's own
    # failures are one line starting with "pyvisor: error:"; its other
    # "pyvisor: " lines are summaries (denials, truncation) that come last.
    lines = [ln for ln in text
             if not ln.startswith("pyvisor: ") or ln.startswith("pyvisor: error:")]
    line = lines[-1] if lines else (text[-1] if text else f"exit status {p.returncode}")
    denied = [ln[len("pyvisor: "):] for ln in text if "denied" in ln and
              ln.startswith("pyvisor: ")]
    if denied:
        line += f" ({denied[-1]})"
    return f"exit {p.returncode}: {line[:200]}"


def run_once(argv, wd, timeout):
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=wd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return time.perf_counter() - t0, p


def run_parallel(cmds, timeout):
    """Start every (argv, wd) at once; the time until the last one ends and
    the first failed process (or the last one)."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(argv, cwd=wd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for argv, wd in cmds]
    done = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    dt = time.perf_counter() - t0
    bad = [p for p in done if p.returncode != 0 or not p.stdout.startswith(b"ok")]
    return dt, (bad[0] if bad else done[-1])


def workload_ok(kind, p):
    if p.returncode != 0:
        return False
    return kind == "program" or p.stdout.startswith(b"ok") or p.stdout == b""


# --- footprint --------------------------------------------------------------


def proc_children(pid):
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return kids


def proc_sample(pid):
    """(rss_kb, fds, is_workload) of one process, or None if gone."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        exe = ""
    try:
        rss = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                    break
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    workload = os.path.basename(exe).startswith("python3") or exe == TRUE
    return rss, fds, workload


def footprint(argv, wd, timeout):
    """Run once, sampling the sandbox's own processes; returns a dict."""
    peak = {"rss_kb": 0, "fds": 0, "processes": 0, "samples": 0}
    p = subprocess.Popen(argv, cwd=wd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while p.poll() is None and time.monotonic() < deadline:
        todo, seen, rss, fds, nproc = [p.pid], set(), 0, 0, 0
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            s = proc_sample(pid)
            if s is None:
                continue
            if not s[2]:
                rss, fds, nproc = rss + s[0], fds + s[1], nproc + 1
            todo += proc_children(pid)
        if nproc:
            peak["rss_kb"] = max(peak["rss_kb"], rss)
            peak["fds"] = max(peak["fds"], fds)
            peak["processes"] = max(peak["processes"], nproc)
            peak["samples"] += 1
        time.sleep(0.003)
    if p.poll() is None:
        p.kill()
    p.wait()
    return peak


# --- micro ------------------------------------------------------------------


def run_micro(micro, pyvisor, iters, root, extras):
    out = {"native": {}, "pyvisor": {}, "errors": []}
    if micro and os.access(micro, os.X_OK):
        for mode in ("syscall", "filtered", "roundtrip"):
            p = subprocess.run([micro, mode, str(iters * 10)], capture_output=True,
                               text=True, timeout=300)
            if p.returncode != 0:
                out["errors"].append(f"pv-micro {mode}: {p.stderr.strip()[:200]}")
                continue
            for line in p.stdout.splitlines():
                d = json.loads(line)
                out["native"]["c_" + d["bench"]] = d
    else:
        out["errors"].append("pv-micro not built: C microbenchmarks skipped")
    script = os.path.join(HERE, "micro", "emulated.py")
    wd = tempfile.mkdtemp(prefix="micro-", dir=root)
    shutil.copyfile(script, os.path.join(wd, "emulated.py"))
    for where, argv in (("native", [PYTHON] + PY_FLAGS + ["emulated.py", str(iters)]),
                        ("pyvisor", [pyvisor, "run", "--timeout", "600", "emulated.py",
                                     str(iters)])):
        p = subprocess.run(argv, cwd=wd, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            out["errors"].append(f"emulated.py ({where}): {p.stderr.strip()[-200:]}")
            continue
        try:
            out[where].update(json.loads(p.stdout.strip().splitlines()[-1]))
        except (ValueError, IndexError) as e:
            out["errors"].append(f"emulated.py ({where}): unreadable output: {e}")
    for name, (binary, run_args) in extras.items():
        p = subprocess.run([binary, "run", *run_args, "--timeout", "600", "emulated.py",
                            str(iters)],
                           cwd=wd, capture_output=True, text=True, timeout=900)
        if p.returncode == 0:
            try:
                out[name] = json.loads(p.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError) as e:
                out["errors"].append(f"emulated.py ({name}): unreadable output: {e}")
        else:
            out["errors"].append(f"emulated.py ({name}): {p.stderr.strip()[-200:]}")
    # Derived: per-call cost inside pyvisor with the ctypes overhead taken
    # out, next to the bare round trip (the floor of a trapped call).
    nat, pv = out["native"], out["pyvisor"]
    rt = nat.get("c_roundtrip_epoll_sync") or nat.get("c_roundtrip_epoll")
    sc = nat.get("c_syscall")
    derived = {}
    if rt and sc and "ctypes_getppid" in pv:
        # What ctypes adds to a call: the fastest untrapped getppid through
        # ctypes minus the fastest one from C (minimums: least disturbed by
        # other load on the machine).
        ct = min(pv["ctypes_getppid"]["ns_min"],
                 nat.get("ctypes_getppid", pv["ctypes_getppid"])["ns_min"])
        overhead = max(0.0, ct - sc["ns_min"])
        derived["roundtrip_ns"] = rt["ns_per_op"]
        derived["ctypes_overhead_ns"] = round(overhead, 1)
        for k in ("stat_host", "stat_workspace", "fstat_host", "open_host",
                  "open_workspace"):
            if k in pv:
                net = pv[k]["ns_per_op"] - overhead
                derived[k] = {"ns_per_op": round(net, 1),
                              "x_roundtrip": round(net / rt["ns_per_op"], 2)}
                if k in nat:
                    derived[k]["x_native"] = round(
                        pv[k]["ns_per_op"] / nat[k]["ns_per_op"], 2)
        for k in ("getdents_host", "getdents_workspace"):
            if k in pv and k in nat:
                derived[k] = {"ns_per_listing": pv[k]["ns_per_op"],
                              "x_native": round(pv[k]["ns_per_op"] / nat[k]["ns_per_op"], 2)}
    out["derived"] = derived
    return out


# --- report -----------------------------------------------------------------


def summarize(job, native_median, native_min):
    if not job.times:
        return None
    t = job.times
    s = {"median_s": round(statistics.median(t), 4), "min_s": round(min(t), 4),
         "max_s": round(max(t), 4), "runs": len(t)}
    if native_median:
        s["ratio"] = round(s["median_s"] / native_median, 3)
        s["ratio_min"] = round(s["min_s"] / native_median, 3)
        s["ratio_max"] = round(s["max_s"] / native_median, 3)
        s["delta_ms"] = round((s["median_s"] - native_median) * 1000, 2)
        # Best against best: less sensitive to other load on the machine.
        s["ratio_best"] = round(s["min_s"] / native_min, 3)
        s["delta_best_ms"] = round((s["min_s"] - native_min) * 1000, 2)
    return s


def table(result):
    sbs = result["sandboxes_used"]
    lines = []
    head = f"{'workload':<12}" + "".join(f"{s:>22}" for s in sbs)
    lines.append(head)
    lines.append("-" * len(head))
    for wl in result["workloads"]:
        row = f"{wl['name']:<12}"
        for sb in sbs:
            r = wl["results"].get(sb, {})
            if r.get("error"):
                cell = "failed"
            elif sb == "native" and r.get("median_s") is not None:
                cell = f"{r['median_s'] * 1000:.1f} ms"
            elif r.get("ratio") is not None:
                cell = f"{r['ratio']:.2f}x ({r['ratio_min']:.2f}-{r['ratio_max']:.2f})"
            else:
                cell = "-"
            row += f"{cell:>22}"
        lines.append(row)
    lines.append("")
    lines.append("native: median wall time; sandboxes: median ratio to native "
                 "(min-max ratio over runs)")
    fails = [(wl["name"], sb, r["error"]) for wl in result["workloads"]
             for sb, r in wl["results"].items() if r.get("error")]
    for name, sb, err in fails:
        lines.append(f"failed: {name} under {sb}: {err}")
    for sb, why in result["sandboxes_skipped"].items():
        lines.append(f"skipped: {sb}: {why}")
    fp = [(wl["name"], sb, r["footprint"]) for wl in result["workloads"]
          for sb, r in wl["results"].items() if r.get("footprint")]
    if fp:
        lines.append("")
        lines.append("supervisor footprint (peak over one run; processes other than "
                     "the workload's):")
        lines.append(f"{'workload':<12}{'sandbox':<10}{'RSS MiB':>10}{'fds':>6}{'procs':>7}")
        for name, sb, f in fp:
            lines.append(f"{name:<12}{sb:<10}{f['rss_kb'] / 1024:>10.1f}{f['fds']:>6}"
                         f"{f['processes']:>7}")
    m = result.get("micro")
    if m:
        lines.append("")
        lines.append("microbenchmarks (ns per call, median):")
        nat, pv, d = m["native"], m["pyvisor"], m["derived"]
        for k in ("c_syscall", "c_filtered", "c_roundtrip_poll", "c_roundtrip_epoll",
                  "c_roundtrip_poll_sync", "c_roundtrip_epoll_sync",
                  "c_roundtrip_recv_sync"):
            if k in nat:
                lines.append(f"  {k[2:]:<34}{nat[k]['ns_per_op']:>12.1f}")
        if d:
            lines.append(f"  {'ctypes call overhead (pyvisor)':<34}"
                         f"{d['ctypes_overhead_ns']:>12.1f}")
            lines.append(f"  {'call':<34}{'native':>12}{'pyvisor':>12}{'x native':>10}"
                         f"{'x round trip':>14}")
            for k in ("stat_host", "stat_workspace", "fstat_host", "open_host",
                      "open_workspace"):
                if k in d:
                    lines.append(f"  {k:<34}{nat[k]['ns_per_op']:>12.1f}"
                                 f"{d[k]['ns_per_op']:>12.1f}{d[k].get('x_native', 0):>10.2f}"
                                 f"{d[k]['x_roundtrip']:>14.2f}")
            for k in ("getdents_host", "getdents_workspace"):
                if k in d:
                    lines.append(f"  {k + ' (per listing)':<34}{nat[k]['ns_per_op']:>12.0f}"
                                 f"{pv[k]['ns_per_op']:>12.0f}{d[k]['x_native']:>10.2f}")
        for name in result["sandboxes_used"]:
            if name in m and name not in ("native", "pyvisor"):
                lines.append(f"  {name} (raw, ns per call incl. ctypes): " + ", ".join(
                    f"{k} {v['ns_per_op']:.0f}" for k, v in m[name].items()))
        for e in m["errors"]:
            lines.append(f"  error: {e}")
    return "\n".join(lines)


def check_shape(result):
    """Smoke mode: the JSON has the documented shape."""
    assert result["schema"] == SCHEMA
    for key in ("machine", "settings", "sandboxes_used", "sandboxes_skipped", "workloads"):
        assert key in result, key
    assert "native" in result["sandboxes_used"] and "pyvisor" in result["sandboxes_used"]
    names = [w["name"] for w in result["workloads"]]
    for w in result["workloads"]:
        for sb, r in w["results"].items():
            assert sb in result["sandboxes_used"]
            if r.get("error"):
                continue
            assert r["runs"] == result["settings"]["runs"], (w["name"], sb)
            assert r["min_s"] <= r["median_s"] <= r["max_s"]
            if sb != "native" and "ratio" in r:
                assert r["ratio"] > 0
    # Workloads pyvisor is expected to run today must have run.
    for must in ("pass", "import", "cpu", "files", "empty"):
        if must in names:
            w = next(x for x in result["workloads"] if x["name"] == must)
            assert not w["results"]["pyvisor"].get("error"), (must, w["results"]["pyvisor"])
    m = result.get("micro")
    if m is not None:
        assert not m["errors"], m["errors"]
        assert m["derived"]["roundtrip_ns"] > 0


def main():
    ap = argparse.ArgumentParser(
        description="pyvisor performance suite (see docs/performance.md)")
    ap.add_argument("--pyvisor", default=os.path.join(SOURCE, "build", "pyvisor"),
                    help="the pyvisor binary (default: build/pyvisor)")
    ap.add_argument("--micro", default=os.path.join(SOURCE, "build", "bench", "pv-micro"),
                    help="the pv-micro binary (default: build/bench/pv-micro)")
    ap.add_argument("--extra-pyvisor", action="append", default=[],
                    metavar="NAME=PATH [RUN-OPTIONS]",
                    help="also measure another pyvisor binary, or the same one with other "
                    "`pyvisor run` options (a backend), as sandbox NAME; for example "
                    "'base=/tmp/old/pyvisor' or 'other=build/pyvisor --backend=X'; "
                    "repeatable")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per pair (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    ap.add_argument("--workloads", default=",".join(w[0] for w in WORKLOADS),
                    help="comma-separated workloads (default: all)")
    ap.add_argument("--sandboxes", default="native,pyvisor,runsc,proot,bwrap",
                    help="comma-separated sandboxes (default: all available)")
    ap.add_argument("--json", metavar="FILE", help="write the result as JSON to FILE "
                    "('-' for stdout, then the table goes to stderr)")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny workloads, 1 run, no warm-up; checks the JSON shape")
    ap.add_argument("--no-footprint", action="store_true", help="skip footprint runs")
    ap.add_argument("--no-micro", action="store_true", help="skip microbenchmarks")
    ap.add_argument("--micro-iterations", type=int, default=2000,
                    help="calls per batch in emulated.py (pv-micro: 10x; default 2000)")
    ap.add_argument("--timeout", type=float, default=600, help="per run, seconds")
    a = ap.parse_args()

    scale = SMOKE if a.smoke else FULL
    if a.smoke:
        a.runs, a.warmup = 1, 0
        a.micro_iterations = min(a.micro_iterations, 200)
    if a.runs < 1 or a.warmup < 0:
        ap.error("--runs must be >= 1 and --warmup >= 0")
    known = {w[0]: w for w in WORKLOADS}
    wanted = [w for w in a.workloads.split(",") if w]
    for w in wanted:
        if w not in known:
            ap.error(f"unknown workload '{w}' (known: {', '.join(known)})")
    pyvisor = os.path.abspath(a.pyvisor)
    builders = {"native": native_cmd, "pyvisor": make_pyvisor_cmd(pyvisor),
                "runsc": runsc_cmd, "proot": proot_cmd, "bwrap": bwrap_cmd}
    asked = [s for s in a.sandboxes.split(",") if s]
    extras, extra_args = {}, {}
    for spec in a.extra_pyvisor:
        name, sep, rest = spec.partition("=")
        words = shlex.split(rest) if sep else []
        if not sep or not name or not words or name in builders:
            ap.error(f"--extra-pyvisor '{spec}': want NAME=PATH [RUN-OPTIONS] with a new NAME")
        extras[name] = os.path.abspath(words[0])
        extra_args[name] = words[1:]
        builders[name] = make_pyvisor_cmd(extras[name], words[1:])
        asked.insert(asked.index("pyvisor") + 1 if "pyvisor" in asked else len(asked), name)
    for s in asked:
        if s not in builders:
            ap.error(f"unknown sandbox '{s}' (known: {', '.join(builders)})")
    if "native" not in asked:
        asked.insert(0, "native")

    root = tempfile.mkdtemp(prefix="pyvisor-bench-")
    try:
        return run_suite(a, scale, known, wanted, builders, asked, pyvisor, root, extras,
                         extra_args)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_suite(a, scale, known, wanted, builders, asked, pyvisor, root, extras, extra_args):
    scripts = {k: v.format(**scale) for k, v in SCRIPTS.items()}
    csv_path = os.path.join(root, "sales.csv")
    inputs = {}
    if "csv" in wanted:
        log(f"bench: writing a {scale['csv_rows']:,}-row CSV")
        make_csv(csv_path, scale["csv_rows"])
        inputs["csv"] = {"sales.csv": csv_path}

    # Probe each sandbox with the empty run; skip those that do not work.
    sandboxes, skipped = {}, {}
    for sb in asked:
        pv = pyvisor if sb == "pyvisor" else extras.get(sb)
        exe = pv or {"native": PYTHON, "runsc": "runsc", "proot": "proot",
                     "bwrap": "bwrap"}[sb]
        if pv and not os.access(pv, os.X_OK):
            skipped[sb] = f"{pv} not found (build it first)"
        elif not pv and not shutil.which(exe):
            skipped[sb] = f"{exe} not installed"
        else:
            wd = prepare_workdir(root, "pass", scripts, {})
            argv = builders[sb]([], wd, "bench_pass.py", [])
            try:
                _, p = run_once(argv, wd, 120)
                if p.returncode != 0:
                    skipped[sb] = f"does not work here: {error_of(p)}"
            except (OSError, subprocess.TimeoutExpired) as e:
                skipped[sb] = f"does not work here: {e}"
            shutil.rmtree(wd, ignore_errors=True)
        if sb in skipped:
            log(f"bench: skipping {sb}: {skipped[sb]}")
        else:
            sandboxes[sb] = builders[sb]
    if "pyvisor" not in sandboxes:
        log(f"bench: pyvisor cannot run: {skipped.get('pyvisor')}")
        return 77 if a.smoke else 1

    result = {"schema": SCHEMA, "machine": machine_info(pyvisor),
              "settings": {"runs": a.runs, "warmup": a.warmup, "smoke": a.smoke,
                           "scale": scale, "timing": "wall clock of the whole command, "
                           "perf_counter, measured by bench/perf.py"},
              "sandboxes_used": list(sandboxes), "sandboxes_skipped": skipped,
              "workloads": []}
    m = result["machine"]
    log(f"bench: kernel {m['kernel']}, {m['cpus']} CPUs ({m['cpu_model']}), "
        f"{len(wanted)} workloads x {len(sandboxes)} sandboxes, "
        f"{a.warmup} warm-up + {a.runs} timed runs")

    for i, wl in enumerate(wanted, 1):
        _, desc, kind = known[wl]
        desc = desc.format(**scale)
        jobs = {sb: Job(wl, sb) for sb in sandboxes}
        log(f"[{i}/{len(wanted)}] {wl}: {desc}")
        order = list(jobs.items())
        shuffle = random.Random(f"{wl}")
        for rnd in range(a.warmup + a.runs):
            # A new order every round: no sandbox always runs right after
            # another one (page cache, CPU frequency, other load).
            shuffle.shuffle(order)
            for sb, job in order:
                if job.error:
                    continue
                copies = scale["parallel"] if kind == "parallel" else 1
                wds = [prepare_workdir(root, wl, scripts, inputs) for _ in range(copies)]
                try:
                    if kind == "parallel":
                        dt, p = run_parallel(
                            [(command_for(job, wd, sandboxes, "script", inputs), wd)
                             for wd in wds], a.timeout)
                    else:
                        dt, p = run_once(command_for(job, wds[0], sandboxes, kind, inputs),
                                         wds[0], a.timeout)
                    if not workload_ok(kind, p):
                        job.error = error_of(p)
                    elif rnd >= a.warmup:
                        job.times.append(dt)
                except subprocess.TimeoutExpired:
                    job.error = f"timed out after {a.timeout:g} s"
                for wd in wds:
                    shutil.rmtree(wd, ignore_errors=True)
        native_med = statistics.median(jobs["native"].times) if jobs["native"].times else None
        native_min = min(jobs["native"].times) if jobs["native"].times else None
        entry = {"name": wl, "description": desc, "results": {}}
        for sb, job in jobs.items():
            r = {"error": job.error} if job.error else summarize(job, native_med, native_min)
            if not job.error and sb != "native" and not a.no_footprint and \
                    kind != "parallel":
                wd = prepare_workdir(root, wl, scripts, inputs)
                r["footprint"] = footprint(command_for(job, wd, sandboxes, kind, inputs),
                                           wd, a.timeout)
                shutil.rmtree(wd, ignore_errors=True)
            entry["results"][sb] = r
            if job.error:
                log(f"    {sb:<8} failed: {job.error}")
            elif sb == "native":
                log(f"    {sb:<8} median {r['median_s'] * 1000:9.1f} ms")
            else:
                log(f"    {sb:<8} median {r['median_s'] * 1000:9.1f} ms  "
                    f"ratio {r.get('ratio', float('nan')):.3f} "
                    f"({r.get('ratio_min', 0):.2f}-{r.get('ratio_max', 0):.2f})  "
                    f"+{r.get('delta_ms', 0):.1f} ms  best/best {r.get('ratio_best', 0):.3f}")
        result["workloads"].append(entry)

    if not a.no_micro:
        log("[micro] pv-micro and emulated.py (native and under pyvisor)")
        result["micro"] = run_micro(a.micro, pyvisor, a.micro_iterations, root,
                                    {k: (v, extra_args[k]) for k, v in extras.items()
                                     if k in sandboxes})
        for e in result["micro"]["errors"]:
            log(f"    error: {e}")

    text = table(result)
    if a.json == "-":
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
        sys.stderr.write(text + "\n")
    else:
        print(text)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(result, f, indent=2)
                f.write("\n")
            log(f"bench: JSON written to {a.json}")
    if a.smoke:
        check_shape(result)
        log("bench: smoke ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
