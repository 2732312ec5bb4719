# id: EXEC-01
# category: exec
# technique: copy /bin/cat into a memfd, then fexecve it on the host secret (fileless exec)
# expect: DENY(EACCES)
# catalogue: 76,82
# race: no
# audit: exec.refused|view.hidden
import os, shutil, subprocess, pvesc

def attack(c):
    try:
        fd = os.memfd_create("x", 0)
        with open("/bin/cat", "rb") as f:
            os.write(fd, f.read())
    except OSError as e:
        pvesc.out("memfd ->", e)
        return
    pid = os.fork()
    if pid == 0:
        try:
            os.execve(fd, ["cat", c["secret"]], {})
        except OSError as e:
            pvesc.out("fexecve ->", e)
        os._exit(1)
    pvesc.out("status", os.waitpid(pid, 0))

def twin(c):
    with open("mine.txt", "w") as f:
        f.write("mine\n")
    with open("/bin/cat", "rb") as f:
        fd = os.memfd_create("x", 0)
        os.write(fd, f.read())
    # the twin: same binary run from its real path on an allowed file
    p = subprocess.run(["/bin/cat", "mine.txt"], capture_output=True)
    return p.stdout == b"mine\n"

pvesc.main(attack, twin)
