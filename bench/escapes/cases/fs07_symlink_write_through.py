# id: FS-07
# category: filesystem
# technique: symlink in a writable directory pointing at host files, then read and write through it (also hard link)
# expect: DENY(ENOENT)|EMU
# catalogue: 66
# race: no
# audit: view.hidden
import os, pvesc

def attack(c):
    for name, target in (("l1", c["secret"]), ("l2", c["home"])):
        try:
            os.symlink(target, name)
        except OSError as e:
            pvesc.out("symlink ->", e)
    pvesc.try_read("l1")
    pvesc.try_write("l1", b"pwned\n")
    pvesc.try_write("l2/planted.txt", b"x\n", "wb")
    try:
        os.link(c["secret"], "hard")
        pvesc.try_read("hard")
        pvesc.try_write("hard", b"pwned\n")
    except OSError as e:
        pvesc.out("link ->", e)

def twin(c):
    os.makedirs("sub", exist_ok=True)
    with open("target.txt", "w") as f:
        f.write("a\n")
    os.symlink(os.path.abspath("target.txt"), "l1")
    os.symlink(os.path.abspath("sub"), "l2")
    os.link("target.txt", "hard")
    return pvesc.try_write("l1", b"b\n") and pvesc.try_write("l2/x", b"x", "wb") \
        and pvesc.try_read("hard") == b"a\nb\n"

pvesc.main(attack, twin)
