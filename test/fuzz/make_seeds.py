#!/usr/bin/env python3
"""Builds the committed seed corpora under test/fuzz/corpus/ (run by hand;
the output is committed, `make test` only reads it).

  conn/      the grpc-go captures (test/captures/*.bin), and grpcio traffic
             recorded here: a Unix-socket proxy between python3-grpcio and
             the native server writes the client->server bytes of each
             connection. Each file starts with the two harness bytes of
             fuzz_conn.c (service index, flags).
  messages/  one request per method (fields filled by reflection), plus the
             request messages found in the recorded connections; byte 0 is
             the method index of fuzz_messages.c.
  pathrules/ request paths from the conformance suite's rule table, and
             configurations for the rules constructor.

usage: make_seeds.py [--server build/native/csi-proxy]
"""
import argparse
import glob
import importlib
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")

# groups/catalog.c order: the fuzz_conn service index and the method order
CATALOG = [
    ("filesystem", v) for v in ("v1alpha1", "v1beta1", "v1beta2", "v1", "v2alpha1")] + [
    ("disk", v) for v in ("v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1")] + [
    ("volume", v) for v in ("v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1", "v2alpha1")] + [
    ("smb", v) for v in ("v1alpha1", "v1beta1", "v1beta2", "v1")] + [
    ("system", "v1alpha1"), ("iscsi", "v1alpha1"), ("iscsi", "v1alpha2")]
SERVICE = {"filesystem": "Filesystem", "disk": "Disk", "volume": "Volume", "smb": "Smb",
           "system": "System", "iscsi": "Iscsi"}
KUBELET = "C:\\var\\lib\\kubelet"


def write(sub, name, data):
    d = os.path.join(CORPUS, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def gen_python(out):
    protos = [f"{g}/{v}/api.proto" for g, v in CATALOG]
    for g, v in CATALOG:
        for d in (g, f"{g}/{v}"):
            os.makedirs(os.path.join(out, d), exist_ok=True)
            open(os.path.join(out, d, "__init__.py"), "a").close()
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "api"), f"--python_out={out}"] + protos,
                   check=True)
    sys.path.insert(0, out)
    return lambda g, v: importlib.import_module(f"{g}.{v}.api_pb2")


def methods(pb):
    """[(index, group, version, method descriptor)] in fuzz_messages order."""
    out = []
    for g, v in CATALOG:
        svc = pb(g, v).DESCRIPTOR.services_by_name[SERVICE[g]]
        for m in svc.methods:
            out.append((len(out), g, v, m))
    return out


# ---- messages: filled by reflection ---------------------------------------

def fill(msg, depth=0):
    from google.protobuf.descriptor import FieldDescriptor as F
    for f in msg.DESCRIPTOR.fields:
        rep = f.label == F.LABEL_REPEATED
        if f.type == F.TYPE_MESSAGE:
            if f.message_type.GetOptions().map_entry:
                getattr(msg, f.name)["k"] = ("v" if f.message_type.fields_by_name["value"].type
                                             == F.TYPE_STRING else 1) \
                    if f.message_type.fields_by_name["value"].type != F.TYPE_MESSAGE else None
                continue
            if depth < 3:
                sub = getattr(msg, f.name).add() if rep else getattr(msg, f.name)
                fill(sub, depth + 1)
            continue
        if f.type == F.TYPE_STRING:
            val = KUBELET + "\\pods\\seed"
        elif f.type == F.TYPE_BOOL:
            val = True
        elif f.type == F.TYPE_ENUM:
            val = f.enum_type.values[-1].number
        elif f.type == F.TYPE_BYTES:
            val = b"\x00\x01"
        elif f.type in (F.TYPE_DOUBLE, F.TYPE_FLOAT):
            val = 1.5
        else:
            val = 7
        if rep:
            getattr(msg, f.name).extend([val, val])
        else:
            setattr(msg, f.name, val)


def message_seeds(pb):
    for idx, g, v, m in methods(pb):
        cls = getattr(pb(g, v), m.input_type.name)
        msg = cls()
        try:
            fill(msg)
        except Exception:  # a map with message values etc.: keep what was set
            pass
        write("messages", f"{idx:03d}-{g}-{v}-{m.name}", bytes([idx]) + msg.SerializeToString())
        write("messages", f"{idx:03d}-{g}-{v}-{m.name}-empty", bytes([idx]))


# ---- conn: the grpc-go captures ------------------------------------------

def data_frames(b):
    """gRPC messages in DATA frames of a client byte stream, in order."""
    off, msgs = 24, []
    buf = {}
    while off + 9 <= len(b):
        n = int.from_bytes(b[off:off + 3], "big")
        typ, sid = b[off + 3], int.from_bytes(b[off + 5:off + 9], "big") & 0x7fffffff
        if typ == 0:
            buf.setdefault(sid, b"")
            buf[sid] += b[off + 9:off + 9 + n]
        off += 9 + n
    for sid in sorted(buf):
        d = buf[sid]
        while len(d) >= 5:
            ln = int.from_bytes(d[1:5], "big")
            msgs.append(d[5:5 + ln])
            d = d[5 + ln:]
    return msgs


def capture_seeds(pb):
    idx_of = {(g, v, m.name): i for i, g, v, m in methods(pb)}
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "captures", "*.bin"))):
        b = open(path, "rb").read()
        if not b:
            continue
        name = os.path.basename(path)[:-4]
        _, g, v, method = name.split("-")[:4]
        svc = CATALOG.index((g, v))
        write("conn", f"gogrpc-{name}", bytes([svc, 0]) + b)
        write("conn", f"gogrpc-{name}-bytewise", bytes([svc, 1]) + b)
        write("conn", f"gogrpc-{name}-close-inflight", bytes([svc, 0x10 | 5]) + b)
        write("conn", f"gogrpc-{name}-tight-limits", bytes([svc, 0x80 | 0x40]) + b)
        if (g, v, method) in idx_of:
            for k, body in enumerate(data_frames(b)):
                write("messages", f"gogrpc-{name}-{k}", bytes([idx_of[(g, v, method)]]) + body)


# ---- conn: grpcio traffic through a recording proxy -----------------------

class Recorder:
    """Listens on <front>/<name>.sock for each service, forwards to the
    server's socket, and keeps the client->server bytes per connection."""

    def __init__(self, front, back):
        self.front, self.back = front, back
        self.conns = []  # (name, bytearray)
        self.lock = threading.Lock()
        self.stop = False
        self.listeners = []
        for g, v in CATALOG:
            name = f"csi-proxy-{g}-{v}"
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(os.path.join(front, name + ".sock"))
            s.listen(16)
            self.listeners.append((s, name))
            threading.Thread(target=self.accept, args=(s, name), daemon=True).start()

    def accept(self, s, name):
        while not self.stop:
            try:
                c, _ = s.accept()
            except OSError:
                return
            rec = bytearray()
            with self.lock:
                self.conns.append((name, rec))
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            up.connect(os.path.join(self.back, name + ".sock"))
            threading.Thread(target=self.pump, args=(c, up, rec), daemon=True).start()

    @staticmethod
    def pump(c, up, rec):
        socks = [c, up]
        while True:
            r, _, _ = select.select(socks, [], [], 1.0)
            for s in r:
                try:
                    d = s.recv(65536)
                except OSError:
                    d = b""
                if not d:
                    c.close()
                    up.close()
                    return
                if s is c:
                    rec.extend(d)
                    up.sendall(d)
                else:
                    c.sendall(d)


def grpcio_seeds(pb, server):
    tmp = tempfile.mkdtemp(prefix="cp-seeds-")
    try:
        back, front, root = (os.path.join(tmp, x) for x in ("back", "front", "root"))
        for d in (back, front, os.path.join(root, "C", "var", "lib", "kubelet", "pods")):
            os.makedirs(d)
        proc = subprocess.Popen([server, "-socket-dir", back, "-root", root],
                                stderr=subprocess.DEVNULL)
        t0 = time.time()
        while len(glob.glob(os.path.join(back, "*.sock"))) < 23:
            if time.time() - t0 > 10:
                raise SystemExit("server did not start")
            time.sleep(0.02)
        rec = Recorder(front, back)
        plan = []  # (group, version, [method, ...]) per connection, in order

        def run(g, v, calls):
            plan.append((g, v, [c[0] for c in calls]))
            ch = grpc.insecure_channel(f"unix:{front}/csi-proxy-{g}-{v}.sock")
            mod = pb(g, v)
            svc = mod.DESCRIPTOR.services_by_name[SERVICE[g]]
            for method, fields, timeout in calls:
                m = svc.methods_by_name[method]
                req, resp = getattr(mod, m.input_type.name), getattr(mod, m.output_type.name)
                stub = ch.unary_unary(f"/{v}.{svc.name}/{method}",
                                      request_serializer=req.SerializeToString,
                                      response_deserializer=resp.FromString)
                try:
                    stub(req(**fields), timeout=timeout)
                except grpc.RpcError:
                    pass
            ch.close()

        for v in ("v1alpha1", "v1beta1", "v1beta2", "v1", "v2alpha1"):
            legacy = v in ("v1alpha1", "v1beta1")
            d = f"{KUBELET}\\pods\\{v}"
            link, check = ("LinkPath", "IsMountPoint") if legacy else ("CreateSymlink", "IsSymlink")
            calls = [("PathExists", {"path": d}, 5),
                     ("Mkdir", {"path": d + "\\a"}, 5),
                     ("PathExists", {"path": d + "\\a"}, None),
                     (link, {"source_path": d + "\\a", "target_path": d + "\\l"}, 5),
                     (check, {"path": d + "\\l"}, 5),
                     ("Rmdir", {"path": d + "\\l"}, 5),
                     ("Mkdir", {"path": "C:\\var\\lib\\kubelet-evil\\x"}, 5),
                     ("Rmdir", {"path": d, "force": True}, 5)]
            if v == "v2alpha1":
                calls.insert(6, ("RmdirContents", {"path": d}, 5))
            run("filesystem", v, calls)
        run("disk", "v1", [("ListDiskIDs", {}, 5), ("GetDiskStats", {"disk_number": 1}, 5)])
        run("volume", "v2alpha1", [("MountVolume", {"volume_id": "\\\\?\\Volume{x}\\",
                                                    "target_path": KUBELET + "\\m"}, 5)])
        run("smb", "v1", [("NewSmbGlobalMapping", {"remote_path": "\\\\srv\\share",
                                                   "username": "u", "password": "p"}, 5)])
        run("system", "v1alpha1", [("GetBIOSSerialNumber", {}, 5)])
        run("iscsi", "v1alpha2", [("ListTargetPortals", {}, 5)])
        time.sleep(0.3)
        rec.stop = True
        proc.terminate()
        proc.wait(10)
        idx_of = {(g, v, m.name): i for i, g, v, m in methods(pb)}
        assert len(rec.conns) == len(plan), (len(rec.conns), len(plan))
        for k, ((name, b), (g, v, calls)) in enumerate(zip(rec.conns, plan)):
            assert name == f"csi-proxy-{g}-{v}", (name, g, v)
            svc = CATALOG.index((g, v))
            write("conn", f"grpcio-{k:02d}-{g}-{v}", bytes([svc, 0]) + bytes(b))
            write("conn", f"grpcio-{k:02d}-{g}-{v}-chunked", bytes([svc, 0x20 | 4]) + bytes(b))
            for j, (body, method) in enumerate(zip(data_frames(bytes(b)), calls)):
                write("messages", f"grpcio-{k:02d}-{g}-{v}-{j}-{method}",
                      bytes([idx_of[(g, v, method)]]) + body)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- pathrules ------------------------------------------------------------

def pathrules_seeds():
    paths = [
        KUBELET, KUBELET + "\\", KUBELET + "\\pods\\x", "c:\\VAR\\lib\\KUBELET\\x", "D:\\work",
        "D:\\work\\a\\b", "C:\\var\\lib\\other\\y",
        "C:\\var\\lib\\kubelet-evil\\x", "C:\\var\\lib\\kubelet\\..\\..\\Windows",
        "\\\\server\\share\\x", "\\\\?\\C:\\var\\lib\\kubelet\\x", "\\\\.\\PhysicalDrive0",
        "C:\\var\\lib\\kubelet\\x:stream", "var\\lib\\kubelet\\x", "",
        "C:\\Windows\\System32", KUBELET + "\\" + "a" * 300, KUBELET + "\\a\\\\b",
        KUBELET + "\\.\\a", KUBELET + "\\a.", KUBELET + "\\a ", KUBELET + "\\a/b",
        KUBELET + "\\a*", KUBELET + "\\\x01", KUBELET + "\\caf\u00e9", (KUBELET + "\\").encode() + b"\xc0\xae",
    ]
    for i, p in enumerate(paths):
        b = p.encode("utf-8", "surrogateescape") if isinstance(p, str) else p
        write("pathrules", f"path-{i:02d}", b"\x00" + b + b"\x00" + KUBELET.encode() + b"\\r")
    configs = [(KUBELET, "D:\\w", KUBELET + "\\x"), ("C:\\", "D:\\w\\", "C:\\anything"),
               ("C:\\k\\\\", "", "C:\\k\\x"), ("c:\\K", "D:\\w", "C:\\k\\x"),
               ("relative", "D:\\w", "D:\\w\\x")]
    for i, (k, w, p) in enumerate(configs):
        write("pathrules", f"config-{i:02d}", b"\x01" + b"\x00".join(
            x.encode() for x in (k, w, p)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(ROOT, "build", "native", "csi-proxy"))
    a = ap.parse_args()
    for sub in ("conn", "messages", "pathrules"):
        shutil.rmtree(os.path.join(CORPUS, sub), ignore_errors=True)
    tmp = tempfile.mkdtemp(prefix="cp-pygen-")
    try:
        pb = gen_python(tmp)
        message_seeds(pb)
        capture_seeds(pb)
        grpcio_seeds(pb, a.server)
        pathrules_seeds()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for sub in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, sub))
        size = sum(os.path.getsize(os.path.join(CORPUS, sub, f)) for f in files)
        print(f"{sub}: {len(files)} files, {size} bytes")


if __name__ == "__main__":
    main()
