# id: PROC-01
# category: procfs
# technique: read environ and cmdline of every visible pid (the supervisor's environment and a host process carry the secret)
# expect: DENY(ENOENT)
# catalogue: 51,58,117
# race: no
# audit: none
import os, pvesc

def dump(pids, files=("environ", "cmdline", "status")):
    n = 0
    for p in pids:
        for f in files:
            try:
                with open("/proc/%s/%s" % (p, f), "rb") as fh:
                    pvesc.out(p, f, fh.read(65536))
                    n += 1
            except OSError as e:
                pvesc.out(p, f, "->", e)
    return n

def attack(c):
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    pids += [str(os.getppid()), str(c["victim"]), "1"]
    dump(pids)
    pvesc.out("environ", dict(os.environ))

def twin(c):
    # own cmdline and status must be readable (own environ is hidden by
    # design in pyvisor, sentry/procfs.c, and carries the control's secret)
    return dump(["self", str(os.getpid())], ("cmdline", "status")) == 4

pvesc.main(attack, twin)
