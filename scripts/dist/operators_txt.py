#!/usr/bin/python3
"""operators_txt.py - README-operators.txt of the release archive, made from
docs/operators/*.md: Markdown to plain text for a node's console.

    operators_txt.py --out build/gen/README-operators.txt docs/operators

The pages come in a fixed order (ORDER, then any other page by name), each
heading underlined, paragraphs and list items wrapped at 78 columns, code
kept as it is, indented; links keep their text (and the address when it is
a web address: a path into the repository means nothing on a node). The
output depends on the pages only, so the archive stays reproducible.
"""

import argparse
import os
import re
import sys
import textwrap

ORDER = ["install", "configuration", "least-privilege", "health-and-metrics",
         "troubleshooting", "ami", "daemonset"]
WIDTH = 78
TITLE = "csi-proxy (csi-proxy in C) - the operators' guide"
LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)\)")
LIST = re.compile(r"^(\s*)([-*+]|\d+\.)\s+")


def inline(s):
    s = LINK.sub(lambda m: "%s (%s)" % (m.group(1), m.group(2))
                 if m.group(2).startswith(("http://", "https://")) else m.group(1), s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"\1", s)
    return s.replace("`", "")


def wrap(text, first="", rest=""):
    return textwrap.wrap(inline(text), WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def convert(md):
    out, para, item = [], [], None  # item: (indent, marker, words)

    def flush():
        nonlocal para, item
        if para:
            out.extend(wrap(" ".join(para)))
            para = []
        if item is not None:
            ind, marker, words = item
            out.extend(wrap(" ".join(words), ind + marker + " ", ind + " " * (len(marker) + 1)))
            item = None

    fence = False
    for line in md.splitlines():
        if line.strip().startswith("```"):
            flush()
            fence = not fence
            continue
        if fence:
            out.append(("    " + line).rstrip())
            continue
        if not line.strip():
            flush()
            if out and out[-1] != "":
                out.append("")
            continue
        h = re.match(r"^(#{1,6})\s+(.*)$", line)
        if h:
            flush()
            text = inline(h.group(2))
            if out and out[-1] != "":
                out.append("")
            out += [text, {1: "=", 2: "-"}.get(len(h.group(1)), "~") * len(text)]
            continue
        if line.startswith("|"):
            flush()
            if not re.match(r"^\|[\s:|-]+\|$", line):
                cells = [inline(c.strip()) for c in line.strip().strip("|").split("|")]
                out.append("  " + " | ".join(cells))
            continue
        if line.startswith("    ") and not para and item is None:
            out.append(line.rstrip())
            continue
        m = LIST.match(line)
        if m:
            flush()
            item = (m.group(1), m.group(2), [line[m.end():].strip()])
            continue
        if item is not None:
            item[2].append(line.strip())
        else:
            para.append(line.strip())
    flush()
    while out and out[-1] == "":
        out.pop()
    return out


def pages(folder):
    names = sorted(n[:-3] for n in os.listdir(folder) if n.endswith(".md"))
    return [n for n in ORDER if n in names] + [n for n in names if n not in ORDER]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("folder")
    a = ap.parse_args()
    lines = [TITLE, "=" * len(TITLE), "",
             "Made from docs/operators/ of the source repository, page by page.", ""]
    for name in pages(a.folder):
        with open(os.path.join(a.folder, name + ".md"), encoding="utf-8") as f:
            lines += convert(f.read()) + ["", ""]
    while lines and lines[-1] == "":
        lines.pop()
    text = "\n".join(lines) + "\n"
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
