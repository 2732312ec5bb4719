# id: FS-01
# category: filesystem
# technique: read host secrets in the home directory (~/.ssh/id_rsa, secret.txt)
# expect: DENY(ENOENT)
# catalogue: 60
# race: no
# audit: view.hidden
import os, pvesc

def attack(c):
    pvesc.try_read(c["secret"])
    pvesc.try_read(os.path.join(c["home"], ".ssh", "id_rsa"))
    try:
        pvesc.out("listdir", os.listdir(c["home"]))
    except OSError as e:
        pvesc.out("listdir ->", e)

def twin(c):
    with open("allowed.txt", "w") as f:
        f.write("mine\n")
    return pvesc.try_read("allowed.txt") == b"mine\n" and \
        pvesc.try_read(os.__file__) is not None

pvesc.main(attack, twin)
