#!/usr/bin/env python3
"""Sockets: 127.0.0.1 and ::1 are the sandbox's private loopback, so a
connect to a host listener's port fails at once with ECONNREFUSED (rule
net.refused, the address in the event) and the host listener sees
nothing; AF_UNIX sockets and socketpairs work (test_net.py has the
rest)."""

import json
import socket

import pvtest
from pvtest import expect, expect_eq

SCRIPT = r"""
import json, socket, sys
port = int(sys.argv[1])
out = {}
def inet(family, addr):
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
    except OSError as e:
        return ["socket", type(e).__name__, e.errno]
    try:
        s.settimeout(5)
        s.connect(addr)
        return ["connect", "no error"]
    except OSError as e:
        return ["connect", type(e).__name__, e.errno]
    finally:
        s.close()
out["inet_9"] = inet(socket.AF_INET, ("127.0.0.1", 9))
out["inet_listener"] = inet(socket.AF_INET, ("127.0.0.1", port))
out["inet6"] = inet(socket.AF_INET6, ("::1", 9))
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
    out["unix"] = "no error"
except OSError as e:
    out["unix"] = [type(e).__name__, e.errno]
a, b = socket.socketpair()
a.sendall(b"ping over socketpair")
out["pair"] = b.recv(100).decode()
print(json.dumps(out))
"""


def sockets(ctx):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    ctx.cleanups.append(listener.close)

    work = ctx.tmpdir()
    script = ctx.script(work, "socket_probe.py", SCRIPT)
    run = ctx.run_json([script, str(port)])
    pvtest.expect_status(run, "ok", 0)
    report = pvtest.inner_report(run)
    for key in ("inet_9", "inet_listener", "inet6"):
        got = report[key]
        expect(got == ["connect", "ConnectionRefusedError", 111],
               f"{key}: expected ECONNREFUSED at connect(), got {got}")
    expect_eq(report["unix"], "no error", "AF_UNIX socket() (benign twin)")
    expect_eq(report["pair"], "ping over socketpair",
              "socketpair send/recv (benign twin)")
    try:
        conn, peer = listener.accept()
        conn.close()
        raise pvtest.Failure(f"host listener on port {port} got a "
                             f"connection from {peer}")
    except BlockingIOError:
        pass
    events = run.events("net.refused")
    expect(len(events) >= 3,
           f"expected >= 3 net.refused audit events, got "
           f"{json.dumps(events)[:500]}")
    for e in events:
        expect_eq(e["errno"], "ECONNREFUSED", "errno of a net.refused event")
        expect_eq(e["errno_num"], 111, "errno_num of a net.refused event")
    expect(any(e.get("address") == f"127.0.0.1:{port}" for e in events),
           f"no event names 127.0.0.1:{port}")


if __name__ == "__main__":
    pvtest.main([sockets])
