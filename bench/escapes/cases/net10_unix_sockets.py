# id: NET-10
# category: network
# technique: connect to a host pathname UNIX socket (agent/D-Bus stand-in) and to a host abstract UNIX socket
# expect: DENY(ENOENT|ECONNREFUSED)
# catalogue: 110,90
# race: no
# audit: net.refused|view.hidden
import os, socket, pvesc

def attack(c):
    for name in (c["unix"], "\0" + c["abstract"]):
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(name)
            pvesc.out("connected", repr(name))
        except OSError as e:
            pvesc.out("connect", repr(name), "->", e)

def twin(c):
    ok = True
    for name in (os.path.abspath("my.sock"), "\0pv-twin-%d" % os.getpid()):
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(name)
        srv.listen(1)
        cl = socket.socket(socket.AF_UNIX)
        cl.connect(name)
        a, _ = srv.accept()
        cl.sendall(b"hi")
        ok = ok and a.recv(2) == b"hi"
    return ok

pvesc.main(attack, twin)
