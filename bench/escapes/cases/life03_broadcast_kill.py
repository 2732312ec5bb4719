# id: LIFE-03
# category: process
# technique: broadcast signal kill(-1, SIGWINCH) reaching every process of the uid (harmless signal; the host victim records it)
# expect: DENY(EPERM)|contained to the sandbox (ESRCH)
# catalogue: 85
# race: no
# audit: none
import os, signal, time, pvesc

def attack(c):
    try:
        os.kill(-1, signal.SIGWINCH)
        pvesc.out("kill(-1) ok")
    except OSError as e:
        pvesc.out("kill(-1) ->", e)
    time.sleep(0.2)

def twin(c):
    got = []
    signal.signal(signal.SIGWINCH, lambda s, f: got.append(s))
    os.kill(os.getpid(), signal.SIGWINCH)
    os.killpg(os.getpgrp(), signal.SIGWINCH)
    time.sleep(0.1)
    return len(got) >= 1

pvesc.main(attack, twin)
