"""Fault suite fixtures: one native server under ASan + UBSan (build/asan, or
$CSI_PROXY_SERVER) for the whole session, raw HTTP/2 connections to its
Unix sockets, and a grpcio client to show it still serves others. At the
end the server gets SIGTERM and must exit 0 with no sanitizer report
(LeakSanitizer runs at exit)."""
import os
import resource
import subprocess
import sys
import time

import grpc
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
SERVER = os.path.abspath(os.environ.get("CSI_PROXY_SERVER") or
                         os.path.join(ROOT, "build", "asan", "csi-proxy"))
KUBELET = "C:\\var\\lib\\kubelet"
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "SUMMARY: UndefinedBehaviorSanitizer")

# 1,000 idle connections need more descriptors than the usual 1,024 on both
# ends; the server inherits this limit.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if _soft < 4096:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, _hard), _hard))


class Server:
    def __init__(self, base):
        self.sock = os.path.join(base, "s")
        self.root = os.path.join(base, "r")
        os.makedirs(self.sock)
        os.makedirs(os.path.join(self.root, "C", "var", "lib", "kubelet", "pods"))
        self.log_path = os.path.join(base, "server.log")
        self.log = open(self.log_path, "w")
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "halt_on_error=1:detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
        self.proc = subprocess.Popen(
            [SERVER, "-socket-dir", self.sock, "-root", self.root],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 20
        while time.time() < deadline:
            if len([f for f in os.listdir(self.sock) if f.endswith(".sock")]) == 23:
                return
            assert self.proc.poll() is None, "server exited at start:\n" + self.read_log()
            time.sleep(0.02)
        raise AssertionError("server did not open its 23 sockets")

    def path(self, group="filesystem", version="v1"):
        return os.path.join(self.sock, f"csi-proxy-{group}-{version}.sock")

    def read_log(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.log.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    s = Server(str(tmp_path_factory.mktemp("faults")))
    yield s
    s.stop()
    log = s.read_log()
    marks = [m for m in SANITIZER_MARKS if m in log]
    assert not marks, "sanitizer report from the server:\n" + log[-20000:]
    assert s.proc.returncode == 0, f"server exit {s.proc.returncode}:\n{log[-5000:]}"


@pytest.fixture(scope="session")
def healthy(server):
    """healthy() makes one grpcio PathExists call on a fresh channel and
    asserts it succeeds: the service still answers other clients."""
    def check(version="v1"):
        assert server.alive(), "server died:\n" + server.read_log()[-5000:]
        ch = grpc.insecure_channel(f"unix:{server.path('filesystem', version)}")
        try:
            stub = ch.unary_unary(f"/{version}.Filesystem/PathExists",
                                  request_serializer=lambda b: b,
                                  response_deserializer=lambda b: b)
            path = (KUBELET + "\\pods").encode()
            resp = stub(b"\x0a" + bytes([len(path)]) + path, timeout=10)
            # PathExistsResponse{exists: true}: field 1 (v1) or 2 (v1alpha1, v1beta1)
            assert resp in (b"\x08\x01", b"\x10\x01"), resp
        finally:
            ch.close()
    return check
