# id: EXEC-05
# category: exec
# technique: raw syscall instructions from an RWX page (no libc, no Python audit hooks): openat + read of the host secret
# expect: DENY(ENOENT)
# catalogue: 80
# race: no
# audit: view.hidden
import ctypes, os, pvesc

def rd(path):
    p = pvesc.cstr(path)
    fd = pvesc.raw(257, -100, pvesc.addr(p), 0, 0)
    pvesc.out("raw openat", fd)
    if fd < 0:
        return None
    buf = ctypes.create_string_buffer(200)
    n = pvesc.raw(0, fd, pvesc.addr(buf), 200)
    pvesc.out("raw read", buf.raw[:max(n, 0)])
    return buf.raw[:max(n, 0)]

def attack(c):
    rd(c["secret"])

def twin(c):
    with open("mine.txt", "w") as f:
        f.write("mine\n")
    return rd(os.path.abspath("mine.txt")) == b"mine\n"

pvesc.main(attack, twin)
