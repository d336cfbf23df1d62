#!/usr/bin/python3
"""check_layers.py - the layer rule of `make lint`.

The top folders are layers (docs/design/data-flow.md). A file may include
headers of its own folder and of lower layers, never of a higher one, so no
two folders include each other. Includes of project headers are
root-relative ("base/status.h"). test/ and build/ are not product code.

Known exceptions are listed in EXCEPTIONS with their reason (and in
docs/design/data-flow.md); an exception that no longer occurs is an error
too, so the list stays true.

Prints "ok - ..." / "not ok - ..." and exits 1 on a violation.
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Lower number = lower layer. A layer may include its own rank and lower.
RANK = {
    "base": 0,
    "dispatch": 1, "host": 1,
    "metrics": 2, "sim": 2,
    "groups": 3, "rpc": 3,
    "transport": 4, "client": 4,
    "security": 5,
    "service": 6,
    "cli": 7,
}

# (including file, included header): why it is still there.
EXCEPTIONS = {
}
INC = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer(path):
    top = path.split("/", 1)[0]
    return top if top in RANK else None


def main():
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "--cached", "--others", "--exclude-standard"],
                           stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split()
    relative, up, seen_exc = [], [], set()
    for f in files:
        src = layer(f)
        if not f.endswith((".c", ".h")) or not os.path.isfile(os.path.join(ROOT, f)) \
                or f.startswith(("build/", "test/fuzz/corpus/")):
            continue
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            text = fh.read()
        for inc in INC.findall(text):
            dst = layer(inc)
            if dst is None:
                # a project header named relative to the including file
                if os.path.isfile(os.path.normpath(os.path.join(ROOT, os.path.dirname(f), inc))) \
                        and not os.path.isfile(os.path.join(ROOT, inc)):
                    relative.append('%s: #include "%s"' % (f, inc))
                continue
            if src is None:
                continue
            if RANK[dst] > RANK[src] or (RANK[dst] == RANK[src] and dst != src):
                if (f, inc) in EXCEPTIONS:
                    seen_exc.add((f, inc))
                else:
                    up.append("%s (%s) includes %s (%s)" % (f, src, inc, dst))
    stale = ["%s -> %s" % k for k in sorted(set(EXCEPTIONS) - seen_exc)]
    failed = 0
    for name, found in (("project includes are root-relative", relative),
                        ("no include runs up or across the layers (%d known exceptions)" % len(seen_exc), up),
                        ("every listed exception still occurs (else remove it)", stale)):
        if found:
            failed += 1
            print("not ok - layers: %s" % name)
            for x in found[:40]:
                print("    " + x)
        else:
            print("ok - layers: %s" % name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
