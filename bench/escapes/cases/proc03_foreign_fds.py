# id: PROC-03
# category: procfs
# technique: open a host process's files through /proc/PID/fd/N, /proc/PID/root and /proc/PID/cwd
# expect: DENY(ENOENT|EACCES)
# catalogue: 53
# race: no
# audit: none
import os, pvesc

def attack(c):
    v = c["victim"]
    for n in range(0, 8):
        pvesc.try_read("/proc/%d/fd/%d" % (v, n))
    pvesc.try_read("/proc/%d/root%s" % (v, c["secret"]))
    pvesc.try_read("/proc/%d/cwd/%s" % (v, "secret.txt"))
    pvesc.try_read("/proc/%d/root%s" % (os.getppid(), c["secret"]))

def twin(c):
    fd = os.open("mine.txt", os.O_CREAT | os.O_RDWR, 0o600)
    os.write(fd, b"mine\n")
    return pvesc.try_read("/proc/self/fd/%d" % fd) == b"mine\n" and \
        pvesc.try_read("/proc/%d/fd/%d" % (os.getpid(), fd)) == b"mine\n"

pvesc.main(attack, twin)
