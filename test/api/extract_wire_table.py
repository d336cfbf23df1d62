#!/usr/bin/python3
"""Extract the wire fact table of upstream csi-proxy from WIRE-API.md.

Reads section 7 ("Per group and version") of WIRE-API.md and writes
test/api/wire_table.tsv, the committed oracle that test_wire_api.py compares
the compiled api/**/api.proto descriptors against.

Usage:
    /usr/bin/python3 test/api/extract_wire_table.py [WIRE-API.md] [-o OUT|-]

Defaults: input  <repo root>/docs/reference/WIRE-API.md
          output test/api/wire_table.tsv (next to this script); "-" = stdout

Line kinds in the table (tab separated, '#' starts a comment line):
    file    <group> <version> <package> <service> <#rpcs> <#messages> <#enums>
    rpc     <group> <version> <full method path> <request msg> <response msg>
    message <group> <version> <Message> <declaration index, 0-based>
    field   <group> <version> <Message> <field name> <number> <type> <label>
    enum    <group> <version> <Enum> <VALUE> <number>

<type> is a scalar type name (string, bool, int64, uint32, ...),
message:<Name>, enum:<Name>, or map<K,V> where K is a scalar and V is any of
those forms.  <label> is singular, repeated or map.  Message/enum names are
unqualified; they always live in the file's own package.
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_INPUT = os.path.join(REPO_ROOT, "docs", "reference", "WIRE-API.md")
DEFAULT_OUTPUT = os.path.join(HERE, "wire_table.tsv")

SCALARS = {
    "double", "float", "int32", "int64", "uint32", "uint64", "sint32",
    "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string",
    "bytes",
}
GROUP_SERVICE = {
    "disk": "Disk", "volume": "Volume", "filesystem": "Filesystem",
    "smb": "Smb", "system": "System", "iscsi": "Iscsi",
}

RE_VERSION_HDR = re.compile(r"^### (\w+) (v\w+)\s*$")
RE_SECTION_HDR = re.compile(r"^## ")
RE_PACKAGE = re.compile(r"`package (\w+);`")
RE_SERVICE = re.compile(
    r"^- service: `(\w+)\.(\w+)` - (\d+) unary RPCs, (\d+) top-level messages, (\d+) enums\s*$")
RE_RPC_ROW = re.compile(
    r"^\| (\d+) \| (\w+) \| `(/[\w.]+/\w+)` \| `(\w+)` \| `(\w+)` \|\s*$")
RE_EMPTY_MSG = re.compile(r"^- `(\w+)`: no fields\b")
RE_MSG_HDR = re.compile(r"^`(\w+)`\s*$")
RE_ENUM_HDR = re.compile(r"^enum `(\w+)`\s*$")
RE_FIELD_ROW = re.compile(r"^\| `(\w+)` \| (\d+) \| `([^`]+)` \| (\w+) \|\s*$")
RE_ENUM_ROW = re.compile(r"^\| `(\w+)` \| (-?\d+) \|\s*$")
RE_MAP = re.compile(r"^map<(\w+), *(\w+)>$")
RE_ENUM_TYPE = re.compile(r"^(\w+) \(enum\)$")


class ParseError(Exception):
    pass


def _type_token(doc_type, label, messages_known, enums_known):
    """Convert a doc type cell into the table's canonical type token."""
    m = RE_MAP.match(doc_type)
    if m:
        if label != "map":
            raise ParseError("map type %r with label %r" % (doc_type, label))
        key, val = m.group(1), m.group(2)
        if key not in SCALARS:
            raise ParseError("map key %r is not a scalar" % key)
        if val in SCALARS:
            vtok = val
        else:
            # map values can only be messages here (doc shows no enum values);
            # a value type is resolved later against the file's declarations.
            vtok = "message:" + val
        return "map<%s,%s>" % (key, vtok)
    if label == "map":
        raise ParseError("label map but type %r" % doc_type)
    m = RE_ENUM_TYPE.match(doc_type)
    if m:
        return "enum:" + m.group(1)
    if doc_type in SCALARS:
        return doc_type
    if re.match(r"^\w+$", doc_type):
        return "message:" + doc_type
    raise ParseError("unrecognised type cell %r" % doc_type)


def parse(text):
    """Parse WIRE-API.md; return a list of per-file dicts in document order."""
    lines = text.splitlines()
    files = []
    cur = None
    in_section7 = False
    pending = None  # ("message"|"enum", name) awaiting its table
    for lineno, line in enumerate(lines, 1):
        try:
            if line.startswith("## 7."):
                in_section7 = True
            elif RE_SECTION_HDR.match(line) and not line.startswith("## 7"):
                in_section7 = False
                cur = None
            if not in_section7:
                continue
            m = RE_VERSION_HDR.match(line)
            if m:
                cur = {
                    "group": m.group(1), "version": m.group(2),
                    "package": None, "service": None, "declared": None,
                    "rpcs": [], "messages": [], "enums": [],
                }
                files.append(cur)
                pending = None
                continue
            if line.startswith("## 7."):
                cur = None
                continue
            if cur is None:
                continue
            m = RE_PACKAGE.search(line)
            if m and line.startswith("- proto file:"):
                cur["package"] = m.group(1)
                continue
            m = RE_SERVICE.match(line)
            if m:
                if m.group(1) != cur["version"]:
                    raise ParseError("service package %r != version %r"
                                     % (m.group(1), cur["version"]))
                cur["service"] = m.group(2)
                cur["declared"] = tuple(int(m.group(i)) for i in (3, 4, 5))
                continue
            m = RE_RPC_ROW.match(line)
            if m:
                num, name, path, req, resp = m.groups()
                if int(num) != len(cur["rpcs"]) + 1:
                    raise ParseError("RPC row number out of sequence")
                expect = "/%s.%s/%s" % (cur["version"], cur["service"], name)
                if path != expect:
                    raise ParseError("path %r != %r" % (path, expect))
                cur["rpcs"].append((path, req, resp))
                continue
            m = RE_EMPTY_MSG.match(line)
            if m:
                cur["messages"].append((m.group(1), []))
                pending = None
                continue
            m = RE_ENUM_HDR.match(line)
            if m:
                cur["enums"].append((m.group(1), []))
                pending = "enum"
                continue
            m = RE_MSG_HDR.match(line)
            if m:
                cur["messages"].append((m.group(1), []))
                pending = "message"
                continue
            m = RE_FIELD_ROW.match(line)
            if m:
                if pending != "message":
                    raise ParseError("field row outside a message table")
                fname, num, dtype, label = m.groups()
                if label not in ("singular", "repeated", "map"):
                    raise ParseError("unknown label %r" % label)
                tok = _type_token(dtype, label, None, None)
                cur["messages"][-1][1].append((fname, int(num), tok, label))
                continue
            m = RE_ENUM_ROW.match(line)
            if m:
                if pending != "enum":
                    raise ParseError("enum row outside an enum table")
                cur["enums"][-1][1].append((m.group(1), int(m.group(2))))
                continue
            if line.startswith("| field |") or line.startswith("| value name |") \
                    or line.startswith("|---") or line.startswith("| # |"):
                continue
            if line.startswith("|"):
                raise ParseError("unrecognised table row")
        except ParseError as e:
            raise ParseError("WIRE-API.md:%d: %s: %r" % (lineno, e, line))
    _validate(files)
    return files


def _validate(files):
    for f in files:
        where = "%s %s" % (f["group"], f["version"])
        if f["package"] != f["version"]:
            raise ParseError("%s: package %r != version" % (where, f["package"]))
        if f["service"] != GROUP_SERVICE.get(f["group"]):
            raise ParseError("%s: service %r" % (where, f["service"]))
        got = (len(f["rpcs"]), len(f["messages"]), len(f["enums"]))
        if got != f["declared"]:
            raise ParseError("%s: parsed (rpcs, messages, enums) %r but doc "
                             "declares %r" % (where, got, f["declared"]))
        msg_names = [m for m, _ in f["messages"]]
        enum_names = [e for e, _ in f["enums"]]
        if len(set(msg_names + enum_names)) != len(msg_names) + len(enum_names):
            raise ParseError("%s: duplicate type name" % where)
        for path, req, resp in f["rpcs"]:
            for t in (req, resp):
                if t not in msg_names:
                    raise ParseError("%s: RPC %s uses undeclared %s" % (where, path, t))
        for mname, fields in f["messages"]:
            nums = [n for _, n, _, _ in fields]
            names = [n for n, _, _, _ in fields]
            if len(set(nums)) != len(nums) or len(set(names)) != len(names):
                raise ParseError("%s: %s has duplicate field" % (where, mname))
            for fname, _, tok, _ in fields:
                for ref in re.findall(r"(message|enum):(\w+)", tok):
                    pool = msg_names if ref[0] == "message" else enum_names
                    if ref[1] not in pool:
                        raise ParseError("%s: %s.%s refers to undeclared %s %s"
                                         % (where, mname, fname, ref[0], ref[1]))
        for ename, values in f["enums"]:
            if not values or values[0][1] != 0:
                raise ParseError("%s: enum %s must start at 0" % (where, ename))
    keys = [(f["group"], f["version"]) for f in files]
    if len(set(keys)) != len(keys):
        raise ParseError("duplicate group/version block")


def table_lines(files):
    out = []
    for f in files:
        g, v = f["group"], f["version"]
        out.append(["file", g, v, f["package"], f["service"],
                    str(len(f["rpcs"])), str(len(f["messages"])),
                    str(len(f["enums"]))])
        for path, req, resp in f["rpcs"]:
            out.append(["rpc", g, v, path, req, resp])
        for i, (mname, fields) in enumerate(f["messages"]):
            out.append(["message", g, v, mname, str(i)])
            for fname, num, tok, label in fields:
                out.append(["field", g, v, mname, fname, str(num), tok, label])
        for ename, values in f["enums"]:
            for vname, num in values:
                out.append(["enum", g, v, ename, vname, str(num)])
    return out


def render(files):
    lines = table_lines(files)
    n_rpc = sum(1 for l in lines if l[0] == "rpc")
    n_msg = sum(1 for l in lines if l[0] == "message")
    n_field = sum(1 for l in lines if l[0] == "field")
    n_enumv = sum(1 for l in lines if l[0] == "enum")
    hdr = [
        "# csi-proxy wire fact table, generated by test/api/extract_wire_table.py",
        "# from docs/reference/WIRE-API.md section 7 (upstream client/api/<group>/<version>/api.proto).",
        "# Do not edit by hand; regenerate with: /usr/bin/python3 test/api/extract_wire_table.py",
        "# files=%d rpcs=%d messages=%d fields=%d enum_values=%d"
        % (len(files), n_rpc, n_msg, n_field, n_enumv),
        "# kinds: file group version package service n_rpcs n_messages n_enums",
        "#        rpc group version method_path request response",
        "#        message group version Message decl_index",
        "#        field group version Message field number type label",
        "#        enum group version Enum VALUE number",
    ]
    return "\n".join(hdr + ["\t".join(l) for l in lines]) + "\n"


def main(argv):
    args = list(argv[1:])
    out = DEFAULT_OUTPUT
    if "-o" in args:
        i = args.index("-o")
        out = args[i + 1]
        del args[i:i + 2]
    src = args[0] if args else DEFAULT_INPUT
    with open(src, encoding="utf-8") as fh:
        files = parse(fh.read())
    text = render(files)
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
        sys.stderr.write("wrote %s (%s)\n" % (out, text.splitlines()[3][2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
