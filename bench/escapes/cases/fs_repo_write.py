# id: FS-REPO
# category: filesystem
# technique: overwrite and create files next to the repository's build directory
# expect: DENY(ENOENT)
# catalogue: 60,91
# race: no
# audit: view.hidden|view.read_only
import os, pvesc

def attack(c):
    pvesc.try_write(c["repo_canary"], b"overwritten\n", "wb")
    pvesc.try_write(os.path.join(os.path.dirname(c["repo_canary"]), "new.py"),
                    b"print('x')\n", "wb")

def twin(c):
    return pvesc.try_write("new.py", b"print('x')\n", "wb") and \
        pvesc.try_write("new.py", b"print('y')\n", "wb")

pvesc.main(attack, twin)
