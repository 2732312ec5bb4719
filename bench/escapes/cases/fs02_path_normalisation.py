# id: FS-02
# category: filesystem
# technique: path normalisation variants: //, /./, .., trailing /, /proc/self/root, /proc/thread-self/root, /dev/fd/N/
# expect: DENY(ENOENT)
# catalogue: 61
# race: no
# audit: view.hidden
import os, pvesc

def variants(path, dirpath):
    d, b = os.path.split(path)
    out = ["/" + path, path.replace("/", "//"), path.replace("/", "/./"),
           d + "/../" + os.path.basename(d) + "/" + b,
           "/proc/self/root" + path, "/proc/thread-self/root" + path,
           "/proc/%d/root%s" % (os.getpid(), path),
           path + "/."]
    try:
        fd = os.open(dirpath, os.O_RDONLY | os.O_DIRECTORY)
        out.append("/dev/fd/%d/%s" % (fd, b))
        out.append("/proc/self/fd/%d/%s" % (fd, b))
    except OSError as e:
        pvesc.out("open dir ->", e)
    return out

def attack(c):
    for p in variants(c["secret"], c["home"]):
        pvesc.try_read(p)

def twin(c):
    with open("allowed.txt", "w") as f:
        f.write("mine\n")
    here = os.path.abspath("allowed.txt")
    ok = [pvesc.try_read(p) == b"mine\n" for p in variants(here, os.getcwd())]
    # the trailing "/." variant must fail (ENOTDIR) like the kernel does;
    # /proc/thread-self/root (index 5) is documented as absent in pyvisor's
    # /proc (sentry/procfs.c): its result is printed, not required
    return all(ok[:5] + ok[6:7] + ok[8:]) and not ok[7]

pvesc.main(attack, twin)
