#!/usr/bin/python3
"""mkdist.py - write the release archive, byte for byte reproducible.

    mkdist.py --version-header build/gen/cp_version.h --out build/dist \
              --mtime EPOCH FILE...

Writes OUT/csi-proxy-<version>-windows-amd64.zip holding FILE... flat (each
under its base name), plus SHA256SUMS (sha256sum -c format) listing them,
and OUT/<zip name>.sha256 for the archive itself. The version is read from
the header the programs were compiled with, so the archive's name and
`csi-proxy.exe -version` cannot disagree.

Reproducible: entries in sorted order, every entry dated EPOCH (the commit's
time; zip stores local time without a zone, we store UTC), fixed permissions
(0755 for .exe/.cmd, 0644 otherwise), fixed compression level, no extra
fields, no archive comment.
"""
import argparse
import hashlib
import os
import re
import sys
import time
import zipfile

PLATFORM = "windows-amd64"


def read_version(header):
    with open(header, encoding="utf-8") as f:
        m = re.search(r'^#define CP_VERSION "([A-Za-z0-9._+-]+)"$', f.read(), re.M)
    if not m:
        sys.exit(f"mkdist: no CP_VERSION in {header}")
    return m.group(1)


def entry(name, date_time, executable):
    zi = zipfile.ZipInfo(name, date_time)
    zi.compress_type = zipfile.ZIP_DEFLATED
    zi.create_system = 3  # Unix, so that the permission bits below mean something
    zi.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
    return zi


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version-header", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mtime", type=int, default=315532800)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()

    version = read_version(a.version_header)
    # zip cannot store a date before 1980.
    date_time = time.gmtime(max(a.mtime, 315532800))[:6]

    members = {}
    for path in a.files:
        name = os.path.basename(path)
        if name in members:
            sys.exit(f"mkdist: two files named {name}: {members[name]} and {path}")
        members[name] = path
    if "SHA256SUMS" in members:
        sys.exit("mkdist: SHA256SUMS is written by mkdist itself")

    blobs = {}
    for name, path in members.items():
        with open(path, "rb") as f:
            blobs[name] = f.read()
    sums = "".join(
        f"{hashlib.sha256(blobs[n]).hexdigest()}  {n}\n" for n in sorted(blobs)
    ).encode()
    blobs["SHA256SUMS"] = sums

    os.makedirs(a.out, exist_ok=True)
    zname = f"csi-proxy-{version}-{PLATFORM}.zip"
    zpath = os.path.join(a.out, zname)
    tmp = zpath + ".tmp"
    with zipfile.ZipFile(tmp, "w") as z:
        for name in sorted(blobs):
            executable = name.lower().endswith((".exe", ".cmd"))
            z.writestr(entry(name, date_time, executable), blobs[name], compresslevel=9)
    os.replace(tmp, zpath)
    with open(zpath, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(zpath + ".sha256", "w", encoding="ascii") as f:
        f.write(f"{digest}  {zname}\n")
    print(f"{zpath}\n{digest}  {zname}")


if __name__ == "__main__":
    main()
