# id: LIFE-01
# category: process
# technique: double fork plus setsid; the grandchild (and an exec'd sleep) outlive the run
# expect: KILL (tree killed at the end)
# catalogue: 83
# race: no
# audit: none
import os, sys, time, pvesc

def attack(c):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            # a daemon lets go of the run's stdio
            null = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            if os.fork() == 0:
                try:
                    os.execv("/bin/sleep", ["sleep", "300", c["token"]])
                except OSError:
                    pass
            time.sleep(300)
        os._exit(0)
    time.sleep(0.2)
    pvesc.out("daemon started")

def twin(c):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os._exit(7)
    _, st = os.waitpid(pid, 0)
    return os.WEXITSTATUS(st) == 7

pvesc.main(attack, twin)
