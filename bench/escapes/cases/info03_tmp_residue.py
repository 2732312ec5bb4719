# id: INFO-03
# category: filesystem
# technique: leave files in the shared temporary directories (/tmp, /var/tmp, /dev/shm) for a later run or a host process to pick up
# expect: EMU (private temporary directories)
# catalogue: 119,99
# race: no
# audit: none
import os, pvesc

def plant(token):
    ok = []
    for d in ("/tmp", "/var/tmp", "/dev/shm"):
        ok.append(pvesc.try_write(os.path.join(d, "pv-residue-" + token), b"left\n", "wb"))
    return ok

def attack(c):
    plant(c["token"])

def twin(c):
    # the sandbox's own /tmp must work (the others may be absent by design)
    ok = plant(c["token"] + "-twin")
    p = "/tmp/pv-residue-" + c["token"] + "-twin"
    return ok[0] and pvesc.try_read(p) == b"left\n"

pvesc.main(attack, twin)
