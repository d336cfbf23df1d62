#!/usr/bin/python3
"""check_docs.py - the documentation checks of `make lint`.

  1. every relative link in a tracked Markdown file resolves to a file or
     folder of the repository (anchors and web addresses are not followed);
  2. no tracked file points outside the repository (a path into a folder
     beside the checkout, such as ../shared/);
  3. the README stays a newcomer's page: under 200 lines.

Prints "ok - ..." / "not ok - ..." lines; exit status 1 when one fails.
Run from anywhere: python3 scripts/check_docs.py
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
OUTSIDE = re.compile(r"\.\./shared/|\.\./\.\./shared\b")
README_MAX = 200


def tracked():
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "--cached", "--others", "--exclude-standard"],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return [f for f in out.splitlines() if f and not f.startswith("build/")]


def broken_links(files):
    bad = []
    for f in files:
        if not f.endswith(".md"):
            continue
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            text = fh.read()
        for n, line in enumerate(text.splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                path = target.split("#", 1)[0]
                full = os.path.normpath(os.path.join(ROOT, os.path.dirname(f), path))
                if not full.startswith(ROOT + os.sep) or not os.path.exists(full):
                    bad.append("%s:%d: %s" % (f, n, target))
    return bad


def outside_refs(files):
    bad = []
    me = os.path.relpath(os.path.abspath(__file__), ROOT)
    for f in files:
        if f == me:
            continue
        try:
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                text = fh.read()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                bad.append("%s:%d: %s" % (f, n, line.strip()[:100]))
    return bad


def main():
    files = tracked()
    failed = 0
    for name, found in (("every relative Markdown link resolves", broken_links(files)),
                        ("no reference points outside the repository", outside_refs(files))):
        if found:
            failed += 1
            print("not ok - docs: %s" % name)
            for b in found[:40]:
                print("    " + b)
        else:
            print("ok - docs: %s" % name)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        lines = sum(1 for _ in fh)
    if lines < README_MAX:
        print("ok - docs: README.md is %d lines (under %d)" % (lines, README_MAX))
    else:
        failed += 1
        print("not ok - docs: README.md is %d lines (a newcomer's page is under %d; the rest goes to docs/)"
              % (lines, README_MAX))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
