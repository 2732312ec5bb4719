# id: NET-07
# category: network
# technique: connect to a service listening on the host's loopback (libc connect and a raw syscall instruction)
# expect: DENY(ECONNREFUSED)
# catalogue: 107,101,80
# race: no
# audit: net.refused
import ctypes, socket, struct, pvesc

def attack(c):
    try:
        s = socket.create_connection(("127.0.0.1", c["port"]), timeout=3)
        pvesc.out("connected", s.getpeername())
    except OSError as e:
        pvesc.out("connect ->", e)
    s = socket.socket()
    sa = ctypes.create_string_buffer(struct.pack("!HH4s8x", 0, c["port"], socket.inet_aton("127.0.0.1")))
    ctypes.memmove(sa, struct.pack("=H", socket.AF_INET), 2)
    pvesc.out("raw connect", pvesc.raw(42, s.fileno(), pvesc.addr(sa), 16))

def twin(c):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cl = socket.create_connection(srv.getsockname(), timeout=3)
    a, _ = srv.accept()
    cl.sendall(b"ping")
    return a.recv(4) == b"ping"

pvesc.main(attack, twin)
