# id: LIFE-04
# category: process
# technique: signal a host process of the same uid: kill, tgkill, pidfd_send_signal (SIGUSR1, SIGSTOP, SIGKILL)
# expect: DENY(EPERM|ESRCH)
# catalogue: 86,14
# race: no
# audit: signal.outside
import os, signal, time, pvesc

def hit(pid):
    for name, fn in (("kill USR1", lambda: os.kill(pid, signal.SIGUSR1)),
                     ("tgkill USR2", lambda: pvesc.sc(234, pid, pid, signal.SIGUSR2)),
                     ("pidfd", lambda: _pidfd(pid)),
                     ("kill STOP", lambda: os.kill(pid, signal.SIGSTOP)),
                     ("kill KILL", lambda: os.kill(pid, signal.SIGKILL))):
        try:
            pvesc.out(name, fn())
        except OSError as e:
            pvesc.out(name, "->", e)

def _pidfd(pid):
    fd, e = pvesc.sc(434, pid, 0)
    if fd < 0:
        return ("pidfd_open", e)
    return pvesc.sc(424, fd, signal.SIGUSR1, 0, 0)

def attack(c):
    hit(c["victim"])

def twin(c):
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGUSR1, lambda *a: None)
        signal.signal(signal.SIGUSR2, lambda *a: None)
        while True:
            signal.pause()
    time.sleep(0.1)
    hit(pid)
    _, st = os.waitpid(pid, 0)
    return os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL

pvesc.main(attack, twin)
