#!/usr/bin/python3
"""layouts.py - the release layouts other than the zip, and the SBOM, each
checked the way its consumer reads it.

    layouts.py DIST VERSION MTIME VERSIONS-FILE EXE-MAP

DIST is build/dist, holding csi-proxy-VERSION-windows-amd64.zip (checked
by test/dist/run.sh), and beside it:

  * csi-proxy-VERSION-windows-amd64.tar.gz (+ .sha256): AKS's node set-up
    (AgentBaker staging/cse/windows/configfunc.ps1) and aks-engine
    (parts/k8s/windowscsiproxyfunc.ps1) run `tar -xzf` and copy
    bin\\csi-proxy.exe; Rancher's wins (pkg/csiproxy/csi.go) streams the
    gzip'd tar and writes every member whose name contains "csi-proxy.exe"
    into the one exe, so exactly one member may. Checked: unpacked with tar,
    bin/csi-proxy.exe is the zip's; fixed owner, mode and date; the gzip
    header carries no name and no time (gzip -n).
  * VERSION/csi-proxy.exe (+ csi-proxy.exe.sha256): what GKE's kube-up
    (cluster/gce/windows/k8s-node-setup.psm1) downloads from
    <storage>/<version>/csi-proxy.exe. Checked: the zip's exe.
  * csi-proxy-VERSION-windows-amd64.spdx.json: SPDX 2.3; every file of the
    zip has an entry whose SHA-1 and SHA-256 match; one package for our
    code (verification code matching) and one per Debian source package
    csi-proxy.exe links, as VERSIONS-FILE (scripts/build-deps.sh) records
    them and the exe's link map shows them linked; nothing else.

Prints "ok - ..." / "not ok - ..." lines; exit 0 only when all passed.
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

results = []


def check(name, cond, detail=""):
    results.append(bool(cond))
    print(("ok - " if cond else "not ok - ") + name)
    if not cond and detail:
        for line in str(detail).splitlines()[:20]:
            print("    " + line)


def sha(data, algo="sha256"):
    return hashlib.new(algo, data).hexdigest()


def sum_file_ok(path, want_name):
    """A sha256sum line "<hex>  <name>" naming want_name and matching it."""
    if not os.path.isfile(path + ".sha256"):
        return False, f"no {path}.sha256"
    with open(path + ".sha256", encoding="ascii") as f:
        text = f.read()
    with open(path, "rb") as f:
        want = f"{sha(f.read())}  {want_name}\n"
    return text == want, f"{path}.sha256: {text!r}, want {want!r}"


def check_tar(dist, version, mtime, exe):
    name = f"csi-proxy-{version}-windows-amd64.tar.gz"
    path = os.path.join(dist, name)
    check(f"make dist wrote {name}", os.path.isfile(path))
    if not os.path.isfile(path):
        return
    ok, why = sum_file_ok(path, name)
    check(f"{name}.sha256 checks out", ok, why)
    with open(path, "rb") as f:
        raw = f.read()
    # RFC 1952: ID1 ID2 CM FLG MTIME(4) XFL OS; FNAME is FLG bit 3.
    check(f"{name}: gzip header without a file name or a time (gzip -n)",
          raw[:3] == b"\x1f\x8b\x08" and not raw[3] & 0x08 and raw[4:8] == b"\0\0\0\0",
          f"header {raw[:10].hex()}")
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(["tar", "-xzf", path, "-C", d], capture_output=True, text=True)
        check(f"tar -xzf {name} (as AKS and aks-engine do)", r.returncode == 0, r.stderr)
        got = sorted(os.path.relpath(os.path.join(a, f), d) for a, _, fs in os.walk(d) for f in fs)
        check(f"{name} unpacks to exactly bin/csi-proxy.exe", got == ["bin/csi-proxy.exe"], got)
        p = os.path.join(d, "bin", "csi-proxy.exe")
        same = os.path.isfile(p) and open(p, "rb").read() == exe
        check(f"{name}: bin/csi-proxy.exe is the zip's csi-proxy.exe", same)
    with tarfile.open(path, "r:gz") as t:
        members = t.getmembers()
    hits = [m for m in members if "csi-proxy.exe" in m.name]
    check(f"{name}: one member's name holds \"csi-proxy.exe\", a file (Rancher wins copies each such member)",
          len(hits) == 1 and hits[0].isfile(), [m.name for m in hits])
    bad = [f"{m.name}: uid {m.uid} gid {m.gid} {m.uname!r}/{m.gname!r} mtime {m.mtime} mode {m.mode:o}"
           for m in members
           if (m.uid, m.gid, m.uname, m.gname, m.mtime, m.mode) != (0, 0, "root", "root", mtime, 0o755)]
    check(f"{name}: every member owned by root (0/0), mode 0755, dated {mtime}", not bad, "\n".join(bad))


def check_bare(dist, version, exe):
    path = os.path.join(dist, version, "csi-proxy.exe")
    check(f"make dist wrote {version}/csi-proxy.exe (GKE's <storage>/<version>/csi-proxy.exe)",
          os.path.isfile(path))
    if not os.path.isfile(path):
        return
    check(f"{version}/csi-proxy.exe is the zip's csi-proxy.exe", open(path, "rb").read() == exe)
    ok, why = sum_file_ok(path, "csi-proxy.exe")
    check(f"{version}/csi-proxy.exe.sha256 checks out", ok, why)


def linked_packages(versions_file, exe_map):
    """{source package: version} for what csi-proxy.exe links, per the map."""
    libs = {"nghttp2": "libnghttp2.a", "protobuf-c": "libprotobuf-c.a", "libyaml": "libyaml.a",
            "mingw-w64": "libmingwex.a", "gcc-mingw-w64": "libgcc.a"}
    with open(exe_map, encoding="utf-8", errors="replace") as f:
        linked = f.read()
    out = {}
    with open(versions_file, encoding="utf-8") as f:
        for line in f:
            pkg, ver = line.split()
            if pkg in libs and "/" + libs[pkg] in linked:
                out[pkg] = ver
    return out


def check_sbom(dist, version, mtime, z, versions_file, exe_map):
    name = f"csi-proxy-{version}-windows-amd64.spdx.json"
    path = os.path.join(dist, name)
    check(f"make dist wrote {name}", os.path.isfile(path))
    if not os.path.isfile(path):
        return
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except ValueError as e:
        check(f"{name} parses as JSON", False, e)
        return
    check(f"{name}: SPDX-2.3, CC0-1.0, SPDXRef-DOCUMENT",
          (doc.get("spdxVersion"), doc.get("dataLicense"), doc.get("SPDXID")) ==
          ("SPDX-2.3", "CC0-1.0", "SPDXRef-DOCUMENT"))
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime))
    check(f"{name}: created at the commit's time ({created}), so two builds agree",
          doc.get("creationInfo", {}).get("created") == created, doc.get("creationInfo"))
    files = {f.get("fileName"): f for f in doc.get("files", [])}
    members = sorted(z.namelist())
    bad = []
    sha1s = []
    for m in members:
        data = z.read(m)
        f = files.get("./" + m)
        sums = {c.get("algorithm"): c.get("checksumValue") for c in (f or {}).get("checksums", [])}
        if f is None:
            bad.append(f"{m}: no file entry")
        elif sums.get("SHA256") != sha(data) or sums.get("SHA1") != sha(data, "sha1"):
            bad.append(f"{m}: checksums {sums} do not match")
        sha1s.append(sha(data, "sha1"))
    extra = sorted(set(files) - {"./" + m for m in members})
    check(f"{name}: each of the zip's {len(members)} files has an entry whose SHA-1 and SHA-256 match",
          not bad and not extra, "\n".join(bad + [f"{e}: not in the zip" for e in extra]))
    pkgs = {p.get("name"): p for p in doc.get("packages", [])}
    ours = pkgs.get("csi-proxy", {})
    vcode = sha("".join(sorted(sha1s)).encode(), "sha1")
    check(f"{name}: package csi-proxy {version}, its verification code the zip's files'",
          ours.get("versionInfo") == version
          and ours.get("packageVerificationCode", {}).get("packageVerificationCodeValue") == vcode, ours)
    want = linked_packages(versions_file, exe_map)
    got = {n: p.get("versionInfo") for n, p in pkgs.items() if n != "csi-proxy"}
    check(f"{name}: the Debian source packages csi-proxy.exe links, at build-deps.sh's versions "
          f"({', '.join(f'{k} {v}' for k, v in sorted(want.items()))})",
          got == want and len(want) == 5, f"SBOM: {got}\nbuild: {want}")
    rel = {(r.get("spdxElementId"), r.get("relationshipType"), r.get("relatedSpdxElement"))
           for r in doc.get("relationships", [])}
    ours_id = ours.get("SPDXID")
    exe_id = files.get("./csi-proxy.exe", {}).get("SPDXID")
    need = {("SPDXRef-DOCUMENT", "DESCRIBES", ours_id)}
    need |= {(exe_id, "STATIC_LINK", pkgs[n].get("SPDXID")) for n in want if n in pkgs}
    check(f"{name}: the document describes csi-proxy; csi-proxy.exe statically links each package",
          ours_id and exe_id and need <= rel, sorted(need - rel))


def main():
    dist, version, mtime, versions_file, exe_map = sys.argv[1:6]
    mtime = int(mtime)
    zpath = os.path.join(dist, f"csi-proxy-{version}-windows-amd64.zip")
    with open(zpath, "rb") as f:
        z = zipfile.ZipFile(io.BytesIO(f.read()))
    exe = z.read("csi-proxy.exe")
    check_tar(dist, version, mtime, exe)
    check_bare(dist, version, exe)
    check_sbom(dist, version, mtime, z, versions_file, exe_map)
    return 0 if all(results) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a crash is a failed check, never a silent pass
        check(f"layouts.py ran to its end ({type(e).__name__}: {e})", False)
        sys.exit(1)
