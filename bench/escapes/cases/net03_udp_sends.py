# id: NET-03
# category: network
# technique: connect-less UDP to a host loopback port through sendto, sendmsg and sendmmsg
# expect: DENY(ECONNREFUSED|EACCES)|EMU (delivered to the sandbox's private loopback)
# catalogue: 103,102
# race: no
# audit: none
import ctypes, socket, struct, pvesc

def sends(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dst = ("127.0.0.1", port)
    for name, fn in (("sendto", lambda: s.sendto(b"exfil", dst)),
                     ("sendmsg", lambda: s.sendmsg([b"exfil"], [], 0, dst))):
        try:
            pvesc.out(name, fn())
        except OSError as e:
            pvesc.out(name, "->", e)
    # sendmmsg with one message carrying its own destination
    sa = ctypes.create_string_buffer(struct.pack("=H", 2) + struct.pack("!H4s8x", port, socket.inet_aton("127.0.0.1")))
    data = ctypes.create_string_buffer(b"exfil")
    iov = ctypes.create_string_buffer(struct.pack("QQ", ctypes.addressof(data), 5))
    msg = ctypes.create_string_buffer(struct.pack("QIxxxxQQQQixxxxI4x", ctypes.addressof(sa), 16,
                                                  ctypes.addressof(iov), 1, 0, 0, 0, 0))
    pvesc.out("sendmmsg", pvesc.sc(307, s.fileno(), msg, 1, 0))
    return s

def attack(c):
    sends(c["udp_port"])

def twin(c):
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    r.bind(("127.0.0.1", 0))
    r.settimeout(3)
    sends(r.getsockname()[1])
    got = [r.recv(100) for _ in range(3)]
    return got == [b"exfil"] * 3

pvesc.main(attack, twin)
