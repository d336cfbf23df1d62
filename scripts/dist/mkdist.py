#!/usr/bin/python3
"""mkdist.py - write the release archive, byte for byte reproducible.

    mkdist.py --version-header build/gen/cp_version.h --out build/dist \
              --mtime EPOCH FILE...

Writes OUT/csi-proxy-<version>-windows-amd64.zip holding FILE... flat (each
under its base name), plus SHA256SUMS (sha256sum -c format) listing them,
and OUT/<zip name>.sha256 for the archive itself. The version is read from
the header the programs were compiled with, so the archive's name and
`csi-proxy.exe -version` cannot disagree.

The same csi-proxy.exe in the layouts the platforms download, each with
its .sha256 beside it:
  OUT/csi-proxy-<version>-windows-amd64.tar.gz   bin/csi-proxy.exe only:
      AKS's node set-up and aks-engine run `tar -xzf` and copy
      bin\csi-proxy.exe; Rancher's wins writes every member whose name
      contains "csi-proxy.exe" into one file, so no other member may.
  OUT/<version>/csi-proxy.exe   the bare exe, as GKE's kube-up downloads it
      from <storage>/<version>/csi-proxy.exe.
The tar is dated EPOCH, owned by root (0/0), mode 0755; its gzip header
has no file name and no time (as gzip -n).

Reproducible: entries in sorted order, every entry dated EPOCH (the commit's
time; zip stores local time without a zone, we store UTC), fixed permissions
(0755 for .exe/.cmd, 0644 otherwise), fixed compression level, no extra
fields, no archive comment.
"""
import argparse
import gzip
import hashlib
import io
import os
import re
import sys
import tarfile
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


def write_with_sum(path, data, name):
    """path gets data (atomically), path.sha256 "<hex>  name"."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    digest = hashlib.sha256(data).hexdigest()
    with open(path + ".sha256", "w", encoding="ascii") as f:
        f.write(f"{digest}  {name}\n")
    return digest


def tar_gz(exe, mtime):
    """bin/ and bin/csi-proxy.exe, ustar, root-owned, dated mtime; gzip -n."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in (("bin", None), ("bin/csi-proxy.exe", exe)):
            ti = tarfile.TarInfo(name)
            ti.mtime = mtime
            ti.mode = 0o755
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = "root"
            if data is None:
                ti.type = tarfile.DIRTYPE
                t.addfile(ti)
            else:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as g:
        g.write(buf.getvalue())
    return out.getvalue()


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

    exe = blobs.get("csi-proxy.exe")
    if exe is None:
        sys.exit("mkdist: no csi-proxy.exe among the files")
    tname = f"csi-proxy-{version}-{PLATFORM}.tar.gz"
    digest = write_with_sum(os.path.join(a.out, tname), tar_gz(exe, max(a.mtime, 0)), tname)
    print(f"{os.path.join(a.out, tname)}\n{digest}  {tname}")
    os.makedirs(os.path.join(a.out, version), exist_ok=True)
    bare = os.path.join(a.out, version, "csi-proxy.exe")
    digest = write_with_sum(bare, exe, "csi-proxy.exe")
    print(f"{bare}\n{digest}  csi-proxy.exe")


if __name__ == "__main__":
    main()
