"""Wire-API conformance of api/**/api.proto against upstream csi-proxy.

Compiles every api/<group>/<version>/api.proto with protoc into a
FileDescriptorSet and compares it, in both directions, with the committed
fact table test/api/wire_table.tsv (extracted from WIRE-API.md by
extract_wire_table.py): files, packages, services, method paths, request and
response types, streaming flags, messages (declaration order), fields
(name, number, type incl. message/enum/map key+value types, label) and enum
values.

Run: /usr/bin/python3 -m pytest -q test/api
"""

import collections
import os
import re
import shutil
import subprocess
import sys

import pytest
from google.protobuf import descriptor_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
API_ROOT = os.path.join(REPO_ROOT, "api")
TABLE = os.path.join(HERE, "wire_table.tsv")

# The fact sheet the table is extracted from.
WIRE_DOC = os.path.join(REPO_ROOT, "docs", "reference", "WIRE-API.md")

EXPECTED_FILES = 23
EXPECTED_METHODS = 139
EXPECTED_MESSAGES = 289
EXPECTED_FIELDS = 301
EXPECTED_ENUM_VALUES = 23

FDP = descriptor_pb2.FieldDescriptorProto
SCALAR_NAMES = {
    FDP.TYPE_DOUBLE: "double", FDP.TYPE_FLOAT: "float",
    FDP.TYPE_INT64: "int64", FDP.TYPE_UINT64: "uint64",
    FDP.TYPE_INT32: "int32", FDP.TYPE_UINT32: "uint32",
    FDP.TYPE_FIXED64: "fixed64", FDP.TYPE_FIXED32: "fixed32",
    FDP.TYPE_SFIXED32: "sfixed32", FDP.TYPE_SFIXED64: "sfixed64",
    FDP.TYPE_SINT32: "sint32", FDP.TYPE_SINT64: "sint64",
    FDP.TYPE_BOOL: "bool", FDP.TYPE_STRING: "string", FDP.TYPE_BYTES: "bytes",
}


# --------------------------------------------------------------------------
# helpers

def find_protos(api_root):
    """Relative paths (to api_root) of every api.proto below api_root."""
    out = []
    for dirpath, _dirs, files in os.walk(api_root):
        for name in files:
            if name == "api.proto":
                out.append(os.path.relpath(os.path.join(dirpath, name), api_root))
    return sorted(p.replace(os.sep, "/") for p in out)


def compile_protos(api_root, out_dir):
    """Run protoc over every api.proto; return the FileDescriptorSet."""
    protoc = shutil.which("protoc")
    if protoc is None:
        pytest.fail("protoc not found on PATH (install protobuf-compiler)")
    rels = find_protos(api_root)
    out = os.path.join(out_dir, "all.pb")
    proc = subprocess.run(
        [protoc, "-I", api_root, "--descriptor_set_out=" + out] + rels,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        pytest.fail("protoc failed (rc=%d):\n%s" % (proc.returncode, proc.stderr))
    fds = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as fh:
        fds.ParseFromString(fh.read())
    return fds


def load_table(path):
    lines = []
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            raw = raw.rstrip("\n")
            if not raw or raw.startswith("#"):
                continue
            lines.append(tuple(raw.split("\t")))
    return lines


def _local_name(type_name, pkg, problems, where):
    """'.pkg.Name' -> 'Name' (or 'Msg.Entry' for nested)."""
    prefix = "." + pkg + "."
    if not type_name.startswith(prefix):
        problems.append("%s: type %s is not in package %s" % (where, type_name, pkg))
        return type_name
    return type_name[len(prefix):]


def _type_token(field, pkg, problems, where):
    if field.type in SCALAR_NAMES:
        return SCALAR_NAMES[field.type]
    if field.type == FDP.TYPE_MESSAGE:
        return "message:" + _local_name(field.type_name, pkg, problems, where)
    if field.type == FDP.TYPE_ENUM:
        return "enum:" + _local_name(field.type_name, pkg, problems, where)
    problems.append("%s: unsupported field type %d" % (where, field.type))
    return "?%d" % field.type


def descriptor_lines(fds):
    """Render a FileDescriptorSet into (table lines, structural problems).

    The lines use the same vocabulary as wire_table.tsv; structural problems
    are properties the table cannot express but which must hold everywhere
    (unary only, proto3, no imports, one service, only map-entry nesting...).
    """
    lines = []
    problems = []
    for fd in fds.file:
        m = re.match(r"^(\w+)/(\w+)/api\.proto$", fd.name)
        if not m:
            problems.append("unexpected proto file name %r" % fd.name)
            continue
        group, version = m.groups()
        gv = (group, version)
        pkg = fd.package
        where = fd.name
        if fd.syntax != "proto3":
            problems.append("%s: syntax %r, want proto3" % (where, fd.syntax))
        if pkg != version:
            problems.append("%s: package %r, want %r" % (where, pkg, version))
        if list(fd.dependency):
            problems.append("%s: has imports %r" % (where, list(fd.dependency)))
        if fd.extension:
            problems.append("%s: declares extensions" % where)
        if len(fd.service) != 1:
            problems.append("%s: %d services, want 1" % (where, len(fd.service)))
        n_rpcs = sum(len(s.method) for s in fd.service)
        svc_name = fd.service[0].name if fd.service else "?"
        lines.append(("file",) + gv + (pkg, svc_name, str(n_rpcs),
                                       str(len(fd.message_type)),
                                       str(len(fd.enum_type))))
        for svc in fd.service:
            for meth in svc.method:
                mw = "%s: rpc %s.%s" % (where, svc.name, meth.name)
                if meth.client_streaming or meth.server_streaming:
                    problems.append("%s: streaming (client=%s server=%s), want unary"
                                    % (mw, meth.client_streaming, meth.server_streaming))
                path = "/%s.%s/%s" % (pkg, svc.name, meth.name)
                lines.append(("rpc",) + gv + (
                    path,
                    _local_name(meth.input_type, pkg, problems, mw),
                    _local_name(meth.output_type, pkg, problems, mw)))
        for idx, msg in enumerate(fd.message_type):
            lines.append(("message",) + gv + (msg.name, str(idx)))
            mw = "%s: message %s" % (where, msg.name)
            if msg.enum_type:
                problems.append("%s: nested enum(s)" % mw)
            if msg.oneof_decl:
                problems.append("%s: oneof(s)" % mw)
            if msg.extension or msg.extension_range or msg.reserved_range \
                    or msg.reserved_name:
                problems.append("%s: extensions/reserved present" % mw)
            entries = {}
            for nested in msg.nested_type:
                if not nested.options.map_entry:
                    problems.append("%s: nested non-map message %s" % (mw, nested.name))
                    continue
                entries[nested.name] = nested
            used_entries = set()
            for field in msg.field:
                fw = "%s.%s" % (mw, field.name)
                if field.HasField("oneof_index") or field.proto3_optional:
                    problems.append("%s: optional/oneof field" % fw)
                if field.HasField("default_value"):
                    problems.append("%s: default value" % fw)
                if field.options.deprecated or field.options.HasField("packed"):
                    problems.append("%s: field options set" % fw)
                label = None
                tok = None
                entry = None
                if field.label == FDP.LABEL_REPEATED and field.type == FDP.TYPE_MESSAGE:
                    local = _local_name(field.type_name, pkg, problems, fw)
                    if local.startswith(msg.name + "."):
                        entry = entries.get(local[len(msg.name) + 1:])
                if entry is not None:
                    used_entries.add(entry.name)
                    kv = {f.name: f for f in entry.field}
                    if sorted(kv) != ["key", "value"] or kv["key"].number != 1 \
                            or kv["value"].number != 2:
                        problems.append("%s: malformed map entry %s" % (fw, entry.name))
                        tok = "map<?>"
                    else:
                        tok = "map<%s,%s>" % (
                            _type_token(kv["key"], pkg, problems, fw),
                            _type_token(kv["value"], pkg, problems, fw))
                    label = "map"
                else:
                    tok = _type_token(field, pkg, problems, fw)
                    if field.label == FDP.LABEL_OPTIONAL:
                        label = "singular"
                    elif field.label == FDP.LABEL_REPEATED:
                        label = "repeated"
                    else:
                        label = "required?"
                        problems.append("%s: label %d" % (fw, field.label))
                lines.append(("field",) + gv + (msg.name, field.name,
                                                str(field.number), tok, label))
            for unused in sorted(set(entries) - used_entries):
                problems.append("%s: unused map entry type %s" % (mw, unused))
        for enum in fd.enum_type:
            if enum.options.HasField("allow_alias") or enum.reserved_range \
                    or enum.reserved_name:
                problems.append("%s: enum %s has options/reserved" % (where, enum.name))
            for val in enum.value:
                lines.append(("enum",) + gv + (enum.name, val.name, str(val.number)))
    return lines, problems


def compare(table_lines, proto_lines, problems=()):
    """Return a human-readable list of mismatches (empty list == identical)."""
    report = list(problems)
    want = collections.Counter(table_lines)
    got = collections.Counter(proto_lines)
    missing = sorted((want - got).elements())
    extra = sorted((got - want).elements())
    if missing:
        report.append("in wire_table.tsv but NOT in compiled protos (%d):" % len(missing))
        report.extend("  - " + "  ".join(l) for l in missing)
    if extra:
        report.append("in compiled protos but NOT in wire_table.tsv (%d):" % len(extra))
        report.extend("  + " + "  ".join(l) for l in extra)
    if not missing and not extra:
        # Same content: declaration order (rpcs, messages, fields, enum
        # values) must match as well, per group/version.
        def by_file(lines):
            d = collections.OrderedDict()
            for l in lines:
                d.setdefault(l[1:3], []).append(l)
            return d
        w, g = by_file(table_lines), by_file(proto_lines)
        for key in w:
            if w[key] != g.get(key):
                for i, (a, b) in enumerate(zip(w[key], g.get(key, []))):
                    if a != b:
                        report.append("%s %s: declaration order differs at item %d: "
                                      "table has %r, protos have %r"
                                      % (key[0], key[1], i, "  ".join(a), "  ".join(b)))
                        break
    return report


def count(lines, kind):
    return sum(1 for l in lines if l[0] == kind)


# --------------------------------------------------------------------------
# fixtures

@pytest.fixture(scope="module")
def table():
    return load_table(TABLE)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compile_protos(API_ROOT, str(tmp_path_factory.mktemp("pb")))


# --------------------------------------------------------------------------
# tests

def test_table_totals(table):
    assert count(table, "file") == EXPECTED_FILES
    assert count(table, "rpc") == EXPECTED_METHODS
    assert count(table, "message") == EXPECTED_MESSAGES
    assert count(table, "field") == EXPECTED_FIELDS
    assert count(table, "enum") == EXPECTED_ENUM_VALUES


def test_proto_file_layout():
    rels = find_protos(API_ROOT)
    assert len(rels) == EXPECTED_FILES, rels
    for rel in rels:
        assert re.match(r"^\w+/v\w+/api\.proto$", rel), rel


def test_compiled_totals(compiled):
    assert len(compiled.file) == EXPECTED_FILES
    methods = [m for f in compiled.file for s in f.service for m in s.method]
    assert len(methods) == EXPECTED_METHODS
    assert not [m.name for m in methods if m.client_streaming or m.server_streaming]
    for f in compiled.file:
        assert f.package == f.name.split("/")[1], f.name
    assert sum(len(f.message_type) for f in compiled.file) == EXPECTED_MESSAGES
    assert sum(len(m.field) for f in compiled.file
               for m in f.message_type) == EXPECTED_FIELDS
    assert sum(len(e.value) for f in compiled.file
               for e in f.enum_type) == EXPECTED_ENUM_VALUES


def test_protos_match_wire_table(table, compiled):
    proto_lines, problems = descriptor_lines(compiled)
    report = compare(table, proto_lines, problems)
    if report:
        pytest.fail("api/**/api.proto differ from upstream wire table:\n"
                    + "\n".join(report), pytrace=False)


def test_no_method_path_collisions(compiled):
    paths = ["/%s.%s/%s" % (f.package, s.name, m.name)
             for f in compiled.file for s in f.service for m in s.method]
    assert len(paths) == len(set(paths))


def test_table_in_sync_with_wire_doc():
    """wire_table.tsv is what extract_wire_table.py makes of WIRE-API.md."""
    wire_doc = WIRE_DOC
    sys.path.insert(0, HERE)
    try:
        import extract_wire_table as x
    finally:
        sys.path.pop(0)
    with open(wire_doc, encoding="utf-8") as fh:
        regenerated = x.render(x.parse(fh.read()))
    with open(TABLE, encoding="utf-8") as fh:
        assert fh.read() == regenerated, \
            "wire_table.tsv is stale against %s: rerun test/api/extract_wire_table.py" % wire_doc


# --------------------------------------------------------------------------
# the checker must be able to fail

PROTO_MUTATIONS = [
    # (file, old text, new text, substring expected in the report)
    ("disk/v1/api.proto", "bool is_online = 2;", "bool is_online = 3;",
     "SetDiskStateRequest  is_online  3"),
    ("disk/v1beta2/api.proto", "map<string, DiskLocation> disk_locations = 1;",
     "map<uint32, DiskLocation> disk_locations = 1;",
     "map<uint32,message:DiskLocation>"),
    ("volume/v2alpha1/api.proto", "int64 ", "uint64 ", "uint64"),
    ("iscsi/v1alpha2/api.proto", "repeated string iqns = 1;", "string iqns = 1;",
     "iqns  1  string  singular"),
    ("system/v1alpha1/api.proto", "PAUSED = 7;", "PAUSED = 8;", "PAUSED  8"),
    ("filesystem/v1/api.proto", "rpc Rmdir(RmdirRequest)",
     "rpc RemoveDir(RmdirRequest)", "/v1.Filesystem/RemoveDir"),
    ("smb/v1/api.proto", "rpc NewSmbGlobalMapping(NewSmbGlobalMappingRequest)",
     "rpc NewSmbGlobalMapping(stream NewSmbGlobalMappingRequest)", "streaming"),
    ("filesystem/v1alpha1/api.proto", "PathContext context = 2;\n  bool force",
     "string context = 2;\n  bool force", "RmdirRequest  context  2  string"),
]


@pytest.mark.parametrize("rel,old,new,expect", PROTO_MUTATIONS,
                         ids=[m[0] + ":" + m[2] for m in PROTO_MUTATIONS])
def test_checker_detects_altered_proto(table, tmp_path, rel, old, new, expect):
    api_copy = str(tmp_path / "api")
    shutil.copytree(API_ROOT, api_copy)
    target = os.path.join(api_copy, rel)
    # Some mutations (int64 -> uint64) may legitimately touch several lines.
    with open(target, encoding="utf-8") as fh:
        text = fh.read()
    assert old in text, (rel, old)
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new))
    fds = compile_protos(api_copy, str(tmp_path))
    proto_lines, problems = descriptor_lines(fds)
    report = compare(table, proto_lines, problems)
    assert report, "checker did not notice %s: %r -> %r" % (rel, old, new)
    assert expect in "\n".join(report), "\n".join(report)


def test_checker_detects_extra_message(table, tmp_path):
    api_copy = str(tmp_path / "api")
    shutil.copytree(API_ROOT, api_copy)
    with open(os.path.join(api_copy, "disk/v1/api.proto"), "a") as fh:
        fh.write("\nmessage Extra {}\n")
    proto_lines, problems = descriptor_lines(compile_protos(api_copy, str(tmp_path)))
    report = "\n".join(compare(table, proto_lines, problems))
    assert "+ message  disk  v1  Extra" in report, report


def test_checker_detects_missing_table_line(table, compiled):
    proto_lines, problems = descriptor_lines(compiled)
    assert not compare(table, proto_lines, problems)
    for drop in ("rpc", "field", "enum", "message"):
        idx = next(i for i, l in enumerate(table) if l[0] == drop)
        altered = table[:idx] + table[idx + 1:]
        report = "\n".join(compare(altered, proto_lines, problems))
        assert "+ " + "  ".join(table[idx]) in report, report


def test_checker_detects_reordering(table, compiled):
    proto_lines, problems = descriptor_lines(compiled)
    i = next(i for i, l in enumerate(table) if l[0] == "rpc")
    swapped = list(table)
    swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
    report = "\n".join(compare(swapped, proto_lines, problems))
    assert "declaration order differs" in report, report
