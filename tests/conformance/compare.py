"""Compare CPython test outcomes natively and inside pyvisor (cpython.sh).

Reads two JSON Lines files written by runner.py, prints a per-module
table, and for every test that passes natively but not inside names the
reason: the first entry of REASONS whose pattern matches the inside
message (or the test id).  Exit status 1 when a difference has no reason.
"""
import argparse
import collections
import json
import re
import sys

PASSING = {"pass", "xfail"}

# (pattern over "test_id | inside message", reason).  Each reason is a
# deliberate property of the sandbox or a known, tracked limitation.
REASONS = [
    (r"SignalsTest\.test_interrupted_",
     "timing: interrupts a blocking write with an alarm; depends on the machine's load "
     "(each trapped call adds a round trip), passes when it is idle"),
    (r"Permission denied: '/(usr/)?bin/|exit(ed with)? code 127|127 != |"
     r"spawn|subprocess|Popen|test_fork|script_helper|exec|"
     r"Permission denied: '(tar|zip|unzip|sh|python3?)'|child process reports failure 127",
     "exec: the program is not on the exec allowlist (docs/exec.md: the default "
     "list is the interpreter and common tools; tar, zip and the like are not on it)"),
    (r"socket|Errno 13\] Permission denied$|SendfileTests|TestSendfile|AF_UNIX|bind_unix",
     "network: a socket operation the network policy refuses (docs/network.md)"),
    (r"openpty|/dev/pt|ptmx|tty", "no terminals: /dev/pts and /dev/ptmx are not in the view (deliberate)"),
    (r"/proc", "/proc shows the sandbox's own processes and a subset of files"),
    (r"mkfifo|FIFO|fifo", "named pipes: a blocking open of a FIFO does not wait for the other end"),
    (r"xattr|extended attribute",
     "in-memory trees are a tmpfs without user extended attributes (user.* is ENOTSUP)"),
    (r"pidfd_open", "pidfd_open of a process outside the sandbox answers ESRCH"),
    (r"test_setres[ug]id|test_setre[ug]id|setgroups",
     "credential-changing calls are refused, even no-op ones (deliberate)"),
    (r"test_fcntl_64_bit|F_NOTIFY",
     "fcntl(F_NOTIFY) (directory change notification) is refused by the fcntl filter"),
    (r"O_PATH", "O_PATH fds are injected as read-only opens (seccomp ADDFD refuses O_PATH files)"),
    (r"getpwuid|getpwnam|pwd\.|grp\.", "identity: only root, sandbox and nobody exist in /etc/passwd"),
    (r"tcsetpgrp|tcgetpgrp", "ioctl on a bad fd answers ENOTTY before EBADF (ioctl filter, not the view)"),
]


def load(path):
    res = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                d = json.loads(line)
            except ValueError:
                continue
            res[d["module"]] = d
    return res


def reason_for(tid, msg):
    text = f"{tid} | {msg}"
    for pat, why in REASONS:
        if re.search(pat, text, re.I):
            return why
    return None


BEGIN = "<!-- BEGIN cpython.sh output -->"
END = "<!-- END cpython.sh output -->"


def write_out(path, text):
    """Write text to path, or between the BEGIN/END markers of an existing
    document (docs/compat.md keeps its prose around the generated part)."""
    try:
        with open(path, encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + BEGIN + "\n" + text + END + tail
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--native", required=True)
    ap.add_argument("--inside", required=True)
    ap.add_argument("--modules", required=True)
    ap.add_argument("--out")
    ap.add_argument("--json")
    a = ap.parse_args()
    native, inside = load(a.native), load(a.inside)
    rows, details, unexplained, summary = [], [], 0, []
    for m in a.modules.split():
        n = native.get(m, {"tests": {}, "messages": {}, "error": "no result"})
        i = inside.get(m, {"tests": {}, "messages": {},
                           "error": "no result (pyvisor run failed or timed out)"})
        npass = sum(1 for v in n["tests"].values() if v in PASSING)
        ipass = sum(1 for v in i["tests"].values() if v in PASSING)
        lost = sorted(t for t, v in n["tests"].items()
                      if v in PASSING and i["tests"].get(t) not in PASSING)
        gained = sorted(t for t, v in i["tests"].items()
                        if v in PASSING and n["tests"].get(t) not in PASSING)
        by_reason = collections.defaultdict(list)
        if i.get("error") and not i["tests"]:
            why = reason_for(m, i["error"]) or None
            for t in lost:
                by_reason[why].append((t, i["error"]))
        else:
            for t in lost:
                msg = i["messages"].get(t, i["tests"].get(t, "missing"))
                by_reason[reason_for(t, msg)].append((t, msg))
        unexpl = len(by_reason.get(None, []))
        unexplained += unexpl
        rows.append((m, len(n["tests"]), npass, len(i["tests"]), ipass, len(lost),
                     len(gained), unexpl))
        summary.append({"module": m, "native_tests": len(n["tests"]), "native_pass": npass,
                        "inside_tests": len(i["tests"]), "inside_pass": ipass,
                        "lost": lost, "gained": gained,
                        "reasons": {str(k): [t for t, _ in v] for k, v in by_reason.items()},
                        "native_error": n.get("error"), "inside_error": i.get("error")})
        if lost or gained or i.get("error") or n.get("error"):
            details.append(f"\n### {m}\n")
            if n.get("error"):
                details.append(f"- native run: {n['error']}")
            if i.get("error"):
                details.append(f"- inside run: {i['error']}")
            for why, items in sorted(by_reason.items(), key=lambda kv: (kv[0] is None, str(kv[0]))):
                label = why or "**UNEXPLAINED** (a bug of the view until proven otherwise)"
                details.append(f"- {len(items)} test(s): {label}")
                for t, msg in items:
                    short = t.split(".", 2)[-1]
                    details.append(f"  - `{short}`: {str(msg)[:160]}")
            if gained:
                details.append(f"- {len(gained)} test(s) pass inside but not natively: "
                               + ", ".join(f"`{t.split('.', 2)[-1]}`" for t in gained[:20]))
    lines = ["| module | tests (native) | passed natively | tests (inside) | passed inside "
             "| passed natively, not inside | passed inside only | unexplained |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    tot = [0] * 7
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
        for k in range(7):
            tot[k] += r[k + 1]
    lines.append("| **total** | " + " | ".join(f"**{x}**" for x in tot) + " |")
    table = "\n".join(lines)
    text = table + "\n\n## Differences\n" + "\n".join(details) + "\n"
    print(table)
    if a.out:
        write_out(a.out, text)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    print(f"\n{unexplained} unexplained difference(s)")
    if unexplained:
        for line in details:
            if "UNEXPLAINED" in line or line.startswith("###"):
                print(line)
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
