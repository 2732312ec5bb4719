# id: LIFE-08
# category: process
# technique: create SysV shared memory, semaphore and message queue objects that outlive the run
# expect: DENY|private IPC namespace
# catalogue: 90
# race: no
# audit: none
import ctypes, pvesc

IPC_CREAT, IPC_RMID = 0o1000, 0

def make():
    ids = {}
    ids["shm"] = pvesc.sc(29, 0, 4096, IPC_CREAT | 0o600)   # shmget(IPC_PRIVATE)
    ids["sem"] = pvesc.sc(64, 0, 1, IPC_CREAT | 0o600)      # semget
    ids["msg"] = pvesc.sc(68, 0, IPC_CREAT | 0o600)         # msgget
    pvesc.out(ids)
    return ids

def attack(c):
    make()

def twin(c):
    ids = make()
    if any(r < 0 for r, _ in ids.values()):
        # refusing SysV IPC altogether is a valid policy: nothing to clean
        return all(e for _, e in ids.values())
    ok = pvesc.sc(31, ids["shm"][0], IPC_RMID, 0)[0] == 0
    ok &= pvesc.sc(66, ids["sem"][0], 0, IPC_RMID)[0] == 0
    ok &= pvesc.sc(71, ids["msg"][0], IPC_RMID, 0)[0] == 0
    return ok

pvesc.main(attack, twin)
