# id: EXEC-02
# category: exec
# technique: run a host binary (/bin/cat) and the dynamic loader on the host secret
# expect: DENY(ENOENT|EACCES)
# catalogue: 77,78
# race: no
# audit: view.hidden|exec.refused
import subprocess, pvesc, glob

def run(argv):
    try:
        p = subprocess.run(argv, capture_output=True, timeout=10)
        pvesc.out(argv[0], p.returncode, p.stdout, p.stderr[-200:])
        return p
    except OSError as e:
        pvesc.out(argv[0], "->", e)

def attack(c):
    run(["/bin/cat", c["secret"]])
    for ld in glob.glob("/lib64/ld-linux-x86-64.so.2"):
        run([ld, "/bin/cat", c["secret"]])
    run(["/bin/sh", "-c", "cat " + c["secret"]])

def twin(c):
    with open("mine.txt", "w") as f:
        f.write("mine\n")
    p = run(["/bin/cat", "mine.txt"])
    return p is not None and p.stdout == b"mine\n"

pvesc.main(attack, twin)
