#!/usr/bin/python3
"""pe_times.py EXE: exit 1 (naming where) if the PE file carries a build time:
the COFF header's TimeDateStamp, the resource directory's TimeDateStamp
(windres), or a debug directory entry's TimeDateStamp. Reads the file
directly (PE/COFF specification layout), no tools needed."""
import struct
import sys


def main(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:2] != b"MZ":
        sys.exit(f"{path}: not a PE file")
    pe = struct.unpack_from("<I", b, 0x3C)[0]
    if b[pe:pe + 4] != b"PE\0\0":
        sys.exit(f"{path}: no PE signature")
    coff = pe + 4
    nsec, stamp = struct.unpack_from("<HI", b, coff + 2)
    optsize = struct.unpack_from("<H", b, coff + 16)[0]
    opt = coff + 20
    magic = struct.unpack_from("<H", b, opt)[0]
    ddir = opt + (112 if magic == 0x20B else 96)
    ndirs = struct.unpack_from("<I", b, ddir - 4)[0]
    dirs = [struct.unpack_from("<II", b, ddir + 8 * i) for i in range(ndirs)]
    secs = []
    for i in range(nsec):
        s = opt + optsize + 40 * i
        name = b[s:s + 8].rstrip(b"\0").decode()
        vsize, va, rsize, raw = struct.unpack_from("<IIII", b, s + 8)
        secs.append((name, va, max(vsize, rsize), raw))

    def off(rva):
        for _, va, size, raw in secs:
            if va <= rva < va + size:
                return raw + rva - va
        return None

    found = []
    if stamp:
        found.append(f"COFF header TimeDateStamp {stamp:#x}")
    if ndirs > 2 and dirs[2][0]:  # resource directory
        o = off(dirs[2][0])
        t = struct.unpack_from("<I", b, o + 4)[0]
        if t:
            found.append(f"resource directory TimeDateStamp {t:#x}")
    if ndirs > 6 and dirs[6][0]:  # debug directory
        o = off(dirs[6][0])
        for i in range(dirs[6][1] // 28):
            t = struct.unpack_from("<I", b, o + 28 * i + 4)[0]
            if t:
                found.append(f"debug directory entry {i} TimeDateStamp {t:#x}")
    if found:
        sys.exit(f"{path}: " + "; ".join(found))
    print(f"{path}: no timestamps ({nsec} sections)")


if __name__ == "__main__":
    main(sys.argv[1])
