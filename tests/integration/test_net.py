#!/usr/bin/env python3
"""Network (docs/network.md): private loopback, policy-checked egress,
names served through /etc/hosts, refused families, budgets.

A real HTTP server runs in this test process on the host's loopback on a
free port.  The default policy cannot reach it (fast ECONNREFUSED, audit
event); --allow-net and --allow-host NAME=ADDR:PORT can; an in-sandbox
server and client work; the host cannot connect in; UDP and TCP Fast Open
to other destinations and the exotic families are refused with audit
events; without network namespaces loopback is refused, never the host's.
"""

import http.server
import json
import os
import socket
import subprocess
import threading
import time

import pvtest
from pvtest import expect, expect_eq

BODY = b"pyvisor network test page\n"


class Handler(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):
        Handler.hits += 1
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


def host_server(ctx):
    """Start the host HTTP server; returns its port."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    ctx.cleanups.append(srv.server_close)
    ctx.cleanups.append(srv.shutdown)
    return srv.server_address[1]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


PRELUDE = r"""
import json, socket, sys, time, urllib.request
def probe(f):
    t = time.monotonic()
    try:
        r = f()
    except socket.gaierror as e:
        r = ["gaierror", e.errno]
    except OSError as e:
        r = [type(e).__name__, e.errno if e.errno is not None else
             getattr(getattr(e, "reason", None), "errno", None)]
    return [r, round(time.monotonic() - t, 2)]
def fetch(url):
    return urllib.request.urlopen(url, timeout=10).read().decode()
out = {}
"""


def run_probe(ctx, body, args=(), extra=()):
    work = ctx.tmpdir()
    script = ctx.script(work, "net_probe.py", PRELUDE + body +
                        "\nprint(json.dumps(out))\n")
    run = ctx.run_json(list(extra) + [script] + [str(a) for a in args])
    pvtest.expect_status(run, "ok", 0)
    return run, pvtest.inner_report(run)


def net_events(run, rule, address=None):
    return [e for e in run.events(rule)
            if address is None or e.get("address") == address]


def default_policy_cannot_reach_host(ctx):
    port = host_server(ctx)
    before = Handler.hits
    run, rep = run_probe(ctx, r"""
port = int(sys.argv[1])
out["urllib"] = probe(lambda: fetch(f"http://127.0.0.1:{port}/"))
s = socket.socket()
out["blocking"] = probe(lambda: s.connect(("127.0.0.1", port)))
out["v6mapped"] = probe(lambda: socket.socket(socket.AF_INET6).connect(
    ("::ffff:127.0.0.1", port)))
out["external"] = probe(lambda: socket.create_connection(("192.0.2.1", 80),
                                                         timeout=10))
""", [port])
    expect_eq(Handler.hits, before, "requests the host server saw")
    for key in ("urllib", "blocking", "v6mapped"):
        expect(rep[key][0] == ["ConnectionRefusedError", 111] or
               rep[key][0] == ["URLError", 111],
               f"{key}: expected ECONNREFUSED, got {rep[key]}")
        expect(rep[key][1] < 3, f"{key}: not a fast failure: {rep[key]}")
    expect_eq(rep["external"][0], ["OSError", 101], "connect to 192.0.2.1:80")
    expect(rep["external"][1] < 3, f"external: not fast: {rep['external']}")
    expect(net_events(run, "net.refused", f"127.0.0.1:{port}"),
           "no net.refused audit event for the host server's address")
    expect(net_events(run, "net.refused", "192.0.2.1:80"),
           "no net.refused audit event for 192.0.2.1:80")
    expect_eq(run.result["network"]["connections"], [], "network.connections")


def allowlist_reaches_host(ctx):
    port = host_server(ctx)
    before = Handler.hits
    run, rep = run_probe(ctx, r"""
port = int(sys.argv[1])
out["urllib"] = probe(lambda: fetch(f"http://127.0.0.1:{port}/"))
s = socket.socket()
s.connect(("127.0.0.1", port))
out["peer"] = list(s.getpeername())
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
out["raw"] = data.split(b"\r\n\r\n", 1)[-1].decode()
# loose source route via 192.0.2.9: would send the packets there first
lsrr = bytes([131, 7, 4]) + socket.inet_aton("192.0.2.9") + bytes([1])
out["lsrr"] = probe(lambda: s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, lsrr))[0]
out["tos"] = probe(lambda: s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x10) or "set")[0]
out["other_port"] = probe(lambda: socket.create_connection(("10.0.0.1", port),
                                                           timeout=5))
""", [port], ["--allow-net", f"127.0.0.1/32:{port}/tcp"])
    # A rule for the whole network does not open the host's loopback.
    run2, rep2 = run_probe(ctx, r"""
port = int(sys.argv[1])
out["wide"] = probe(lambda: socket.create_connection(("127.0.0.1", port), timeout=5))[0]
""", [port], ["--allow-net", "0.0.0.0/0:*"])
    expect_eq(rep2["wide"], ["ConnectionRefusedError", 111],
              "host loopback under --allow-net 0.0.0.0/0:*")
    expect_eq(rep["urllib"][0], BODY.decode(), "page fetched with urllib")
    expect_eq(rep["raw"], BODY.decode(), "page fetched with a blocking socket")
    expect_eq(rep["peer"], ["127.0.0.1", port], "getpeername of the injected socket")
    expect_eq(rep["lsrr"], ["PermissionError", 13], "IP_OPTIONS source route")
    expect_eq(rep["tos"], "set", "IP_TOS (benign twin)")
    expect_eq(rep["other_port"][0], ["OSError", 101], "a destination not allowed")
    expect_eq(Handler.hits - before, 2, "requests the host server saw")
    net = run.result["network"]
    expect_eq(len(net["connections"]), 2, "network.connections")
    for c in net["connections"]:
        expect_eq(c["destination"], f"127.0.0.1:{port}", "connection destination")
        expect(c["bytes_sent"] > 0 and c["bytes_received"] > len(BODY),
               f"connection bytes: {c}")
    expect(net["bytes_received"] >= 2 * len(BODY), f"network totals: {net}")
    allowed = net_events(run, "net.allowed", f"127.0.0.1:{port}")
    expect(len(allowed) >= 2 and all(e["verdict"] == "allow" for e in allowed),
           f"net.allowed events: {allowed}")
    expect(all(e["rule"] != "net.allowed" for e in run.events()
               if e["verdict"] == "deny"), "allowed events are not denials")
    expect_eq(run.result["violations"],
              len([e for e in run.events() if e["verdict"] != "allow"]),
              "violations count denials only")


def pinned_name_resolves(ctx):
    port = host_server(ctx)
    run, rep = run_probe(ctx, r"""
port = int(sys.argv[1])
out["gai"] = sorted({a[4][0] for a in socket.getaddrinfo("api.pyvisor.test", port)})
out["urllib"] = probe(lambda: fetch(f"http://api.pyvisor.test:{port}/"))
out["other_name"] = probe(lambda: socket.getaddrinfo("other.pyvisor.test", 80))
out["public_name"] = probe(lambda: socket.getaddrinfo("example.com", 443))
out["hosts"] = open("/etc/hosts").read()
""", [port], ["--allow-host", f"api.pyvisor.test=127.0.0.1:{port}"])
    expect_eq(rep["gai"], ["127.0.0.1"], "getaddrinfo of the pinned name")
    expect_eq(rep["urllib"][0], BODY.decode(), "page fetched by name")
    expect_eq(rep["other_name"][0], ["gaierror", socket.EAI_NONAME],
              "another name")
    expect_eq(rep["public_name"][0], ["gaierror", socket.EAI_NONAME],
              "a public name")
    expect("127.0.0.1\tapi.pyvisor.test" in rep["hosts"],
           f"/etc/hosts lacks the pinned name: {rep['hosts']!r}")
    conns = run.result["network"]["connections"]
    expect(conns and conns[0]["host"] == "api.pyvisor.test",
           f"connection not attributed to the name: {conns}")


def in_sandbox_server_and_client(ctx):
    run, rep = run_probe(ctx, r"""
import http.server, os, threading
os.makedirs("site", exist_ok=True)
open("site/index.txt", "w").write("inside")
class H(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory="site", **k)
    def log_message(self, *a):
        pass
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    class S(http.server.ThreadingHTTPServer):
        address_family = fam
    srv = S((host, 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    url = f"http://{host}:{port}/index.txt" if fam == socket.AF_INET else \
          f"http://[{host}]:{port}/index.txt"
    out[str(fam)] = fetch(url)
    srv.shutdown()
# AF_UNIX: a pathname socket in /workspace and an abstract one.
for name in ("/workspace/app.sock", "\0pyvisor-abstract"):
    ls = socket.socket(socket.AF_UNIX)
    ls.bind(name)
    ls.listen(1)
    c = socket.socket(socket.AF_UNIX)
    c.connect(name)
    a, _ = ls.accept()
    c.sendall(b"unix ok")
    out[repr(name)] = a.recv(100).decode()
out["placeholder"] = os.path.exists("/workspace/app.sock")
out["rebind"] = probe(lambda: socket.socket(socket.AF_UNIX).bind("app.sock"))[0]
os.unlink("/workspace/app.sock")
out["rebind_after_unlink"] = probe(lambda: socket.socket(socket.AF_UNIX).bind(
    "app.sock") or "bound")[0]
for k, p in (("dbus", "/run/dbus/system_bus_socket"),
             ("docker", "/var/run/docker.sock"), ("none", "/tmp/none.sock")):
    out[k] = probe(lambda: socket.socket(socket.AF_UNIX).connect(p))[0]
from multiprocessing.connection import Listener, Client
with Listener(family="AF_UNIX", authkey=b"k") as lst:
    def serve():
        with lst.accept() as conn:
            conn.send(conn.recv() * 2)
    th = threading.Thread(target=serve)
    th.start()
    with Client(lst.address, family="AF_UNIX", authkey=b"k") as cl:
        cl.send(21)
        out["mp"] = cl.recv()
    th.join()
out["ifaces"] = [n for _, n in socket.if_nameindex()]
""")
    expect_eq(rep["placeholder"], True, "the bound path exists in the view")
    expect_eq(rep["rebind"], ["OSError", 98], "bind to a taken path (EADDRINUSE)")
    expect_eq(rep["rebind_after_unlink"], "bound", "bind after unlink")
    for k in ("dbus", "docker", "none"):
        expect_eq(rep[k], ["FileNotFoundError", 2], f"connect to the {k} socket")
    expect_eq(rep["mp"], 42, "multiprocessing.connection over AF_UNIX")
    expect_eq(rep[str(int(socket.AF_INET))], "inside", "IPv4 in-sandbox server")
    expect_eq(rep[str(int(socket.AF_INET6))], "inside", "IPv6 in-sandbox server")
    expect_eq(rep["'/workspace/app.sock'"], "unix ok", "pathname AF_UNIX")
    expect_eq(rep["'\\x00pyvisor-abstract'"], "unix ok", "abstract AF_UNIX")
    expect_eq(rep["ifaces"], ["lo"], "interfaces inside")
    expect_eq(run.events("net.refused"), [], "net.refused events")
    hidden = [e for e in run.events("view.hidden") if e["syscall"] == "connect"]
    expect(any(e.get("path") == "/run" for e in hidden),
           f"no view.hidden event for the dbus socket's connect: {hidden}")


def host_cannot_connect_in(ctx):
    port = free_port()
    work = ctx.tmpdir()
    script = ctx.script(work, "listen.py", r"""
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(8)
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
a, _ = s.accept()
print("listening", flush=True)
time.sleep(2)
""")
    argv = ctx._as_user([ctx.pyvisor, "run", script, str(port)])
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    ctx.cleanups.append(proc.kill)
    line = proc.stdout.readline()
    expect_eq(line, b"listening\n", "the sandbox's own listener works")
    for host in ("127.0.0.1", "::1"):
        try:
            socket.create_connection((host, port), timeout=2).close()
            raise pvtest.Failure(f"the host connected into the sandbox "
                                 f"at {host}:{port}")
        except (ConnectionRefusedError, OSError):
            pass
    proc.communicate(timeout=30)
    expect_eq(proc.returncode, 0, "in-sandbox listener run")


def udp_and_fastopen_refused(ctx):
    run, rep = run_probe(ctx, r"""
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
out["sendto"] = probe(lambda: u.sendto(b"x", ("192.0.2.7", 53)))
out["connect"] = probe(lambda: u.connect(("192.0.2.7", 53)))
m = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
out["mapped"] = probe(lambda: m.sendto(b"x", ("::ffff:192.0.2.7", 53)))
out["sendmsg"] = probe(lambda: u.sendmsg([b"x"], [], 0, ("192.0.2.10", 53)))
t = socket.socket()
out["tfo"] = probe(lambda: t.sendto(b"GET /", socket.MSG_FASTOPEN,
                                    ("192.0.2.8", 80)))
# benign twin: UDP on the private loopback
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a.bind(("127.0.0.1", 0))
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
b.sendto(b"udp inside", a.getsockname())
out["loop"] = a.recv(100).decode()
b.connect(a.getsockname())
b.send(b"connected udp")
out["loop_connected"] = a.recv(100).decode()
b.sendmsg([b"via ", b"sendmsg"])
out["loop_sendmsg"] = a.recv(100).decode()
# fd passing over an AF_UNIX pair (SCM_RIGHTS), as multiprocessing does
import array, os
p, q = socket.socketpair()
r, w = os.pipe()
p.sendmsg([b"f"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [w]))])
msg, anc, _, _ = q.recvmsg(1, socket.CMSG_SPACE(4))
fd = array.array("i", anc[0][2])[0]
os.write(fd, b"passed")
out["scm_rights"] = os.read(r, 10).decode()
""")
    for key in ("sendto", "connect", "mapped", "tfo", "sendmsg"):
        expect_eq(rep[key][0], ["OSError", 101], f"{key} (ENETUNREACH)")
    expect_eq(rep["loop"], "udp inside", "UDP on the private loopback")
    expect_eq(rep["loop_connected"], "connected udp", "connected UDP inside")
    expect_eq(rep["loop_sendmsg"], "via sendmsg", "sendmsg on the private loopback")
    expect_eq(rep["scm_rights"], "passed", "fd passing with sendmsg")
    addrs = {e.get("address") for e in run.events("net.refused")}
    for want in ("192.0.2.7:53", "[::ffff:192.0.2.7]:53", "192.0.2.8:80",
                 "192.0.2.10:53"):
        expect(want in addrs, f"no net.refused event for {want}: {addrs}")


def exotic_families_refused(ctx):
    run, rep = run_probe(ctx, r"""
cases = {
    "packet": (socket.AF_PACKET, socket.SOCK_RAW, 0),
    "raw": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW),
    "raw6": (socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6),
    "ping": (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
    "netlink_audit": (socket.AF_NETLINK, socket.SOCK_RAW, 9),
    "vsock": (40, socket.SOCK_STREAM, 0),
    "alg": (38, socket.SOCK_SEQPACKET, 0),
    "unix_dgram": (socket.AF_UNIX, socket.SOCK_DGRAM, 0),
    "sctp": (socket.AF_INET, socket.SOCK_STREAM, 132),
}
for k, (f, t, p) in cases.items():
    out[k] = probe(lambda: socket.socket(f, t, p) and "created")[0]
out["netlink_route"] = probe(lambda: socket.socket(socket.AF_NETLINK,
    socket.SOCK_RAW, 0) and "created")[0]
out["ifaces"] = [n for _, n in socket.if_nameindex()]
""")
    for k, v in rep.items():
        if k in ("netlink_route", "ifaces"):
            continue
        expect_eq(v, ["PermissionError", 13], f"socket() of {k}")
    expect_eq(rep["netlink_route"], "created", "NETLINK_ROUTE (getifaddrs)")
    expect_eq(rep["ifaces"], ["lo"], "if_nameindex")
    events = [e for e in run.events("net.refused") if e["syscall"] == "socket"]
    expect(len(events) >= 9, f"expected 9 refused socket() events, got {events}")


def budgets(ctx):
    port = host_server(ctx)
    sink = socket.socket()
    sink.bind(("127.0.0.1", 0))
    sink.listen(4)
    sink_port = sink.getsockname()[1]
    ctx.cleanups.append(sink.close)

    def drain():
        while True:
            try:
                c, _ = sink.accept()
            except OSError:
                return
            threading.Thread(target=lambda: [None for _ in iter(
                lambda: c.recv(65536), b"")], daemon=True).start()
    threading.Thread(target=drain, daemon=True).start()

    run, rep = run_probe(ctx, r"""
port, sink = int(sys.argv[1]), int(sys.argv[2])
out["first"] = probe(lambda: fetch(f"http://127.0.0.1:{port}/"))[0]
s = socket.create_connection(("127.0.0.1", sink))
sent = 0
def pump():
    global sent
    for _ in range(400):
        sent += s.send(b"x" * 16384)
        time.sleep(0.01)
    return "all sent"
out["pump"] = probe(pump)[0]
out["sent"] = sent
out["third"] = probe(lambda: socket.create_connection(("127.0.0.1", port)))[0]
""", [port, sink_port],
        ["--allow-net", f"127.0.0.1/32:{port}", "--allow-net",
         f"127.0.0.1:{sink_port}", "--net-max-bytes", "100000",
         "--net-max-connections", "2"])
    expect_eq(rep["first"], BODY.decode(), "first connection")
    expect(rep["pump"] != "all sent" and rep["pump"][0] in
           ("BrokenPipeError", "ConnectionResetError", "OSError"),
           f"the byte budget did not end the connection: {rep['pump']}")
    expect(rep["sent"] < 400 * 16384, f"sent {rep['sent']} bytes")
    expect_eq(rep["third"], ["PermissionError", 13], "connection over budget")
    budget = run.events("net.budget")
    expect(len(budget) >= 2, f"net.budget events: {budget}")
    net = run.result["network"]
    expect_eq(net["max_bytes"], 100000, "network.max_bytes")
    expect_eq(net["max_connections"], 2, "network.max_connections")
    expect(any(c["status"] == "budget" for c in net["connections"]),
           f"no connection ended by the budget: {net['connections']}")


def pending_connect_does_not_stall(ctx):
    """A blocking connect in progress keeps only its own thread waiting:
    the sentry goes on serving the other threads' trapped calls."""
    full = socket.socket()
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    port = full.getsockname()[1]
    ctx.cleanups.append(full.close)
    for _ in range(3):  # fill the accept queue: further SYNs are dropped
        f = socket.socket()
        f.setblocking(False)
        f.connect_ex(("127.0.0.1", port))
        ctx.cleanups.append(f.close)
    time.sleep(0.2)
    run, rep = run_probe(ctx, r"""
import os, threading
port = int(sys.argv[1])
def blocked():
    s = socket.socket()
    s.connect(("127.0.0.1", port))
    out["connected"] = True
th = threading.Thread(target=blocked, daemon=True)
th.start()
time.sleep(0.3)
n = 0
for i in range(200):
    open(f"/tmp/f{i}", "w").close()
    n += 1
out["served"] = n
out["still_blocked"] = th.is_alive()
print(json.dumps(out), flush=True)
os._exit(0)
""", [port], ["--allow-net", f"127.0.0.1:{port}"])
    expect_eq(rep["served"], 200, "trapped calls served during the connect")
    expect_eq(rep["still_blocked"], True, "the connecting thread waits")
    conns = run.result["network"]["connections"]
    expect(len(conns) == 1 and conns[0]["status"] in ("connecting", "failed"),
           f"pending connection at the end: {conns}")


NO_NETNS = r"""
echo 1 > /proc/sys/user/max_user_namespaces &&
echo 0 > /proc/sys/user/max_net_namespaces &&
exec unshare --user --map-user=1000 --map-group=1000 "$@"
"""


def without_namespaces(ctx):
    """Where no network namespace can be made: loopback and bind are
    refused (never the host's loopback), allowed egress still works."""
    if subprocess.run(["unshare", "--user", "--map-root-user", "true"],
                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        raise pvtest.Skip("unshare --user is not available here")
    port = host_server(ctx)
    other = host_server(ctx)
    work = ctx.tmpdir()
    wrapper = ctx.write(os.path.join(work, "nons.sh"), NO_NETNS)
    script = ctx.script(work, "probe.py", PRELUDE + r"""
port, other = int(sys.argv[1]), int(sys.argv[2])
out["bind"] = probe(lambda: socket.socket().bind(("127.0.0.1", 0)))[0]
out["listen"] = probe(lambda: socket.socket().listen(1))[0]
out["loopback"] = probe(lambda: socket.create_connection(("127.0.0.1", other)))[0]
out["udp"] = probe(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))[0]
out["abstract"] = probe(lambda: socket.socket(socket.AF_UNIX).connect("\0x"))[0]
out["allowed"] = probe(lambda: fetch(f"http://127.0.0.1:{port}/"))[0]
print(json.dumps(out))
""")
    argv = ctx._as_user(["unshare", "--user", "--map-root-user", "sh", wrapper,
                         ctx.pyvisor, "run", "--json", "--allow-net",
                         f"127.0.0.1:{port}",
                         # no namespaces: no private tmpfs for a quota either
                         "--disk-quota", "0",
                         script, str(port), str(other)])
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        raise pvtest.Failure(f"no JSON result: {proc.stderr[-2000:]!r}")
    expect_eq(result["network"]["loopback"], "refused", "network.loopback")
    rep = json.loads(result["stdout"].strip().splitlines()[-1])
    expect_eq(rep["bind"], ["PermissionError", 13], "bind")
    expect_eq(rep["listen"], ["PermissionError", 13], "listen")
    expect_eq(rep["loopback"], ["ConnectionRefusedError", 111], "loopback connect")
    expect_eq(rep["udp"], ["PermissionError", 13], "UDP socket")
    expect_eq(rep["abstract"], ["ConnectionRefusedError", 111], "abstract AF_UNIX")
    expect_eq(rep["allowed"], BODY.decode(), "allowed egress")
    refused = [e for e in result["audit_events"] if e["rule"] == "net.refused"]
    expect(len(refused) >= 5, f"net.refused events: {refused}")


def bad_options(ctx):
    for args in (["--allow-net", "10.0.0.0/8"], ["--allow-net", "10.0.0.0/33:80"],
                 ["--allow-net", "10.0.0.0/8:443/udp"],
                 ["--allow-host", "bad name=1.2.3.4:80"],
                 ["--allow-host", "x.test=1.2.3.4"],
                 ["--net-max-bytes", "-1"]):
        run = ctx.run(["run"] + args + ["x.py"])
        pvtest.expect_pyvisor_error(run, " ".join(args))


if __name__ == "__main__":
    pvtest.main([default_policy_cannot_reach_host, allowlist_reaches_host,
                 pinned_name_resolves, in_sandbox_server_and_client,
                 host_cannot_connect_in, udp_and_fastopen_refused,
                 exotic_families_refused, budgets, pending_connect_does_not_stall,
                 without_namespaces,
                 bad_options])
