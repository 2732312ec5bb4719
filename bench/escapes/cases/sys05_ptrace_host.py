# id: SYS-05
# category: syscalls
# technique: PTRACE_ATTACH / PTRACE_SEIZE a host process of the same uid, then PTRACE_KILL it; process_vm_readv on it
# expect: DENY(EPERM)
# catalogue: 41,42
# race: no
# audit: none
import ctypes, os, pvesc

def attack(c):
    v = c["victim"]
    pvesc.out("attach", pvesc.sc(101, 16, v, 0, 0))
    pvesc.out("seize", pvesc.sc(101, 0x4206, v, 0, 0))
    try:
        os.waitpid(v, 0)
    except OSError:
        pass
    pvesc.out("kill", pvesc.sc(101, 8, v, 0, 0))
    buf = ctypes.create_string_buffer(64)
    iov = ctypes.create_string_buffer(16)
    pvesc.out("process_vm_readv", pvesc.sc(310, v, iov, 1, iov, 1, 0))

def twin(c):
    pid = os.fork()
    if pid == 0:
        os._exit(3)
    _, st = os.waitpid(pid, 0)
    return os.WEXITSTATUS(st) == 3

pvesc.main(attack, twin)
