# id: SUP-13
# category: supervisor
# technique: enumerate every fd, fchdir/openat through inherited directory fds (the launcher leaks an fd on the host home)
# expect: absent (only stdio)
# catalogue: 13,115
# race: no
# audit: none
import os, pvesc

def probe(name, fds=range(3, 1024)):
    found = []
    for fd in fds:
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
        try:
            pvesc.out(fd, os.readlink("/proc/self/fd/%d" % fd))
        except OSError:
            pass
        try:
            r = os.open(name, os.O_RDONLY, dir_fd=fd)
            pvesc.out("openat", fd, os.read(r, 200))
        except OSError as e:
            pvesc.out("openat", fd, "->", e)
    return found

def attack(c):
    probe("secret.txt")
    pvesc.try_read("/proc/self/fd/%d/secret.txt" % c["leak_fd"])

def twin(c):
    os.mkdir("d")
    with open("d/secret.txt", "w") as f:
        f.write("mine\n")
    fd = os.open("d", os.O_RDONLY | os.O_DIRECTORY)
    # the same enumeration and openat, on a directory fd of its own
    return probe("secret.txt", [fd]) == [fd]

pvesc.main(attack, twin)
