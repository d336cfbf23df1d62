#!/usr/bin/python3
"""sbom.py - the SPDX 2.3 SBOM (JSON) of the release archive, reproducible.

    sbom.py --version-header build/gen/cp_version.h --out build/dist \
            --mtime EPOCH --versions build/deps/win/VERSIONS \
            --map csi-proxy.exe=build/win/csi-proxy.exe.map ...

Reads OUT/csi-proxy-<version>-windows-amd64.zip (mkdist.py's) and writes
OUT/csi-proxy-<version>-windows-amd64.spdx.json describing:

  * package csi-proxy <version>: our code, every file of the zip with its
    SHA-1 and SHA-256 (the package verification code over them);
  * one package per Debian source package a program of the zip links
    statically, at the version scripts/build-deps.sh recorded in VERSIONS
    (the libraries it cross-built, the mingw-w64 runtime and libgcc of the
    compiler), kept only when the program's linker map (ld -Map) shows its
    library linked: cmocka, built for the tests only, is left out;
  * <program> STATIC_LINK <package> for each.

Reproducible: the creation time is EPOCH (the commit's), the namespace is
derived from the archive's SHA-256, entries are in sorted order.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import time
import urllib.parse
import zipfile

PLATFORM = "windows-amd64"

# Debian source package -> (the static library the linker map names, the
# licence the package declares for that library's code).
LIBRARIES = {
    "nghttp2": ("libnghttp2.a", "MIT"),
    "protobuf-c": ("libprotobuf-c.a", "BSD-2-Clause"),
    "libyaml": ("libyaml.a", "MIT"),
    "mingw-w64": ("libmingwex.a", "NOASSERTION"),
    "gcc-mingw-w64": ("libgcc.a", "GPL-3.0-or-later WITH GCC-exception-3.1"),
}


def read_version(header):
    with open(header, encoding="utf-8") as f:
        m = re.search(r'^#define CP_VERSION "([A-Za-z0-9._+-]+)"$', f.read(), re.M)
    if not m:
        sys.exit(f"sbom: no CP_VERSION in {header}")
    return m.group(1)


def spdx_id(prefix, name):
    return f"SPDXRef-{prefix}-" + re.sub(r"[^A-Za-z0-9.-]", "-", name)


def read_versions(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 2:
                sys.exit(f"sbom: {path}:{n}: not \"package version\": {line!r}")
            out[parts[0]] = parts[1]
    return out


def linked(map_path):
    """The LIBRARIES packages whose library the linker map shows linked."""
    with open(map_path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return sorted(p for p, (lib, _) in LIBRARIES.items() if "/" + lib in text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version-header", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mtime", type=int, default=315532800)
    ap.add_argument("--versions", required=True)
    ap.add_argument("--map", action="append", default=[], metavar="PROGRAM=MAPFILE")
    a = ap.parse_args()

    version = read_version(a.version_header)
    base = f"csi-proxy-{version}-{PLATFORM}"
    zpath = os.path.join(a.out, base + ".zip")
    with open(zpath, "rb") as f:
        zdigest = hashlib.sha256(f.read()).hexdigest()
    versions = read_versions(a.versions)

    files, sha1s = [], []
    with zipfile.ZipFile(zpath) as z:
        for name in sorted(z.namelist()):
            data = z.read(name)
            sha1s.append(hashlib.sha1(data).hexdigest())
            files.append({
                "fileName": "./" + name,
                "SPDXID": spdx_id("File", name),
                "checksums": [
                    {"algorithm": "SHA1", "checksumValue": sha1s[-1]},
                    {"algorithm": "SHA256", "checksumValue": hashlib.sha256(data).hexdigest()},
                ],
                "licenseConcluded": "NOASSERTION",
                "copyrightText": "NOASSERTION",
            })
    ids = {f["fileName"][2:]: f["SPDXID"] for f in files}

    ours = {
        "SPDXID": "SPDXRef-Package-csi-proxy",
        "name": "csi-proxy",
        "versionInfo": version,
        "primaryPackagePurpose": "APPLICATION",
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": True,
        "packageVerificationCode": {
            "packageVerificationCodeValue": hashlib.sha1("".join(sorted(sha1s)).encode()).hexdigest()
        },
        "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "Apache-2.0",
        "copyrightText": "NOASSERTION",
        "hasFiles": [f["SPDXID"] for f in files],
    }
    rels = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
             "relatedSpdxElement": ours["SPDXID"]}]
    used = set()
    for m in sorted(a.map):
        program, _, path = m.partition("=")
        if program not in ids:
            sys.exit(f"sbom: --map {m}: {program} is not in {zpath}")
        for pkg in linked(path):
            if pkg not in versions:
                sys.exit(f"sbom: {program} links {LIBRARIES[pkg][0]} but {a.versions} has no {pkg}")
            used.add(pkg)
            rels.append({"spdxElementId": ids[program], "relationshipType": "STATIC_LINK",
                         "relatedSpdxElement": spdx_id("Package-deb", pkg)})
    packages = [ours]
    for pkg in sorted(used):
        v = versions[pkg]
        q = urllib.parse.quote(v, safe="")
        packages.append({
            "SPDXID": spdx_id("Package-deb", pkg),
            "name": pkg,
            "versionInfo": v,
            "supplier": "Organization: Debian",
            "downloadLocation": f"https://snapshot.debian.org/package/{pkg}/{q}/",
            "filesAnalyzed": False,
            "licenseConcluded": "NOASSERTION",
            "licenseDeclared": LIBRARIES[pkg][1],
            "copyrightText": "NOASSERTION",
            "comment": f"Debian source package; its {LIBRARIES[pkg][0]} is linked statically.",
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                              "referenceLocator": f"pkg:deb/debian/{pkg}@{q}?arch=source"}],
        })
    doc = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": base,
        "documentNamespace": f"https://spdx.org/spdxdocs/{base}-{zdigest}",
        "creationInfo": {
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(a.mtime)),
            "creators": ["Tool: csi-proxy-scripts/dist/sbom.py"],
        },
        "packages": packages,
        "files": files,
        "relationships": rels,
    }
    out = os.path.join(a.out, base + ".spdx.json")
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(out + ".tmp", out)
    print(out)


if __name__ == "__main__":
    main()
