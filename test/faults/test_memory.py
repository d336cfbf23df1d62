"""What one request may cost in memory. Runs the plain
native server (build/native/csi-proxy, or $CSI_PROXY_NATIVE_SERVER; not
ASan, whose shadow memory and quarantine would swamp the measurement) and
reads its peak resident size (VmHWM) from /proc/<pid>/status.

A 4 MiB PathExists request made of ~1.39 million empty unknown fields used
to cost the server ~80 MB while it was decoded (protobuf-c keeps every
unknown field), so 32 at once peaked near 600 MB."""
import os
import subprocess
import threading
import time

import grpc
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NATIVE = os.path.abspath(os.environ.get("CSI_PROXY_NATIVE_SERVER") or
                         os.path.join(ROOT, "build", "native", "csi-proxy"))
KUBELET = "C:\\var\\lib\\kubelet"
EXISTS = "/v1.Filesystem/PathExists"
MAX_MSG = 4 * 1024 * 1024
PEAK_LIMIT_KB = 64 * 1024


def pb_string(field, b):
    return _varint(field << 3 | 2) + _varint(len(b)) + b


def _varint(v):
    out = b""
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


PATH_FIELD = pb_string(1, (KUBELET + "\\pods").encode())


def filler(unit, total=MAX_MSG):
    """PATH_FIELD followed by as many copies of unit as fit in total."""
    return PATH_FIELD + unit * ((total - len(PATH_FIELD)) // len(unit))


# An empty length-delimited field number 1000 (not in PathExistsRequest):
# tag c2 3e, length 00.
UNKNOWN_EMPTY = b"\xc2\x3e\x00"


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(key + " not found")


@pytest.fixture
def native(tmp_path):
    if not os.access(NATIVE, os.X_OK):
        pytest.skip(f"{NATIVE} not built")
    sock = tmp_path / "s"
    root = tmp_path / "r"
    sock.mkdir()
    (root / "C" / "var" / "lib" / "kubelet" / "pods").mkdir(parents=True)
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen([NATIVE, "-socket-dir", str(sock), "-root", str(root)],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while len([f for f in os.listdir(sock) if f.endswith(".sock")]) < 23:
        assert proc.poll() is None and time.time() < deadline, "server did not start"
        time.sleep(0.02)
    proc.sock = str(sock / "csi-proxy-filesystem-v1.sock")
    yield proc
    proc.terminate()
    assert proc.wait(30) == 0
    log.close()


def call_many(path, request, n):
    """n concurrent PathExists calls, one channel each; returns
    [(status code, details, response)]."""
    out = [None] * n
    start = threading.Barrier(n)

    def one(i):
        ch = grpc.insecure_channel(f"unix:{path}",
                                   options=[("grpc.max_send_message_length", 8 << 20)])
        stub = ch.unary_unary(EXISTS, request_serializer=lambda b: b,
                              response_deserializer=lambda b: b)
        start.wait()
        try:
            out[i] = (grpc.StatusCode.OK, "", stub(request, timeout=120))
        except grpc.RpcError as e:
            out[i] = (e.code(), e.details(), None)
        finally:
            ch.close()

    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def test_unknown_fields_cost_no_memory(native):
    req = filler(UNKNOWN_EMPTY)
    assert len(req) <= MAX_MSG and len(req) > MAX_MSG - 3
    results = call_many(native.sock, req, 32)
    hwm = status_kb(native.pid, "VmHWM")
    # Unknown fields are ignored, as before: the call still answers.
    for code, details, resp in results:
        assert code == grpc.StatusCode.OK, details
        assert resp == b"\x08\x01"
    print(f"\n32 x {len(req)} bytes of unknown fields: server VmHWM {hwm} kB")
    assert hwm < PEAK_LIMIT_KB, f"peak RSS {hwm} kB"


def test_repeated_known_field_refused_by_count(native):
    # The same known field (path, empty) 1.39 million times: proto3 keeps
    # the last, but decoding each copy costs memory. Refused with a status
    # that names the method and the limit, before the request is buffered.
    req = filler(b"\x0a\x00")
    results = call_many(native.sock, req, 32)
    hwm = status_kb(native.pid, "VmHWM")
    for code, details, resp in results:
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
        assert EXISTS in details and "1000 fields" in details, details
    print(f"\n32 x {len(req)} bytes of repeated fields: server VmHWM {hwm} kB")
    assert hwm < PEAK_LIMIT_KB, f"peak RSS {hwm} kB"


def test_few_unknown_fields_still_work(native):
    # What a newer client may send: unknown fields of every wire type
    # around the known one. Answered exactly as without them.
    extra = (_varint(1000 << 3 | 0) + b"\x07" +        # field 1000, varint 7
             _varint(1012 << 3 | 1) + b"\x01" * 8 +    # field 1012, fixed64
             _varint(1013 << 3 | 5) + b"\x02" * 4 +    # field 1013, fixed32
             pb_string(1001, b"new-field"))             # field 1001, bytes
    for req in (extra + PATH_FIELD, PATH_FIELD + extra, extra + PATH_FIELD + extra):
        (code, details, resp), = call_many(native.sock, req, 1)
        assert code == grpc.StatusCode.OK, details
        assert resp == b"\x08\x01"
    # an unknown field that is not well-formed is refused as before
    (code, details, _), = call_many(native.sock, PATH_FIELD + b"\xc2\x3e\x05ab", 1)
    assert code == grpc.StatusCode.INTERNAL and "unmarshalling" in details, details
