# id: FS-03
# category: filesystem
# technique: swap a path component between a real directory and a symlink to the host home while another thread opens through it
# expect: DENY(ENOENT)
# catalogue: 62,63
# race: yes
# audit: view.hidden
import os, threading, time, pvesc

def race(target_dir, seconds=1.5):
    os.makedirs("real", exist_ok=True)
    with open("real/secret.txt", "w") as f:
        f.write("decoy\n")
    stop = [False]
    def swap():
        while not stop[0]:
            try:
                os.rename("real", "tmpd")
                os.symlink(target_dir, "real")
                os.unlink("real")
                os.rename("tmpd", "real")
            except OSError:
                pass
    th = threading.Thread(target=swap)
    th.start()
    seen = set()
    end = time.time() + seconds
    while time.time() < end:
        try:
            with open("real/secret.txt", "rb") as f:
                seen.add(f.read(100))
        except OSError:
            pass
    stop[0] = True
    th.join()
    for s in seen:
        pvesc.out("got", s)
    return seen

def attack(c):
    race(c["home"])

def twin(c):
    os.makedirs("other", exist_ok=True)
    with open("other/secret.txt", "w") as f:
        f.write("other\n")
    seen = race(os.path.abspath("other"), 0.5)
    return b"decoy\n" in seen or b"other\n" in seen

pvesc.main(attack, twin)
