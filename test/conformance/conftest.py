"""Conformance fixtures: Debian's python3-grpcio (Google's gRPC core) calls
the native csi-proxy build over Unix sockets.

The native build serves every pipe as <socket-dir>/csi-proxy-<group>-<version>.sock
and maps Windows paths C:\\x onto <root>/C/x of a temporary directory."""
import importlib
import os
import subprocess
import sys
import time

import grpc
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
# CSI_PROXY_SERVER picks another build of the server (e.g. build/asan/csi-proxy).
SERVER = os.path.abspath(os.environ.get("CSI_PROXY_SERVER") or os.path.join(BUILD, "native", "csi-proxy"))
KUBELET = "C:\\var\\lib\\kubelet"
WORKDIR = "C:\\csi-work"
# Disks and volumes come from the storage simulator seeded with this fixture.
STORAGE_FIXTURE = os.path.join(ROOT, "test", "fixtures", "storage.yaml")


HEALTH_PROTO_DIR = os.path.join(ROOT, "api", "grpc", "health", "v1")


def _generate_python(out):
    protos = []
    for group in sorted(os.listdir(os.path.join(ROOT, "api"))):
        for version in sorted(os.listdir(os.path.join(ROOT, "api", group))):
            if not os.path.exists(os.path.join(ROOT, "api", group, version, "api.proto")):
                continue  # api/grpc/health/v1/health.proto: see hpb
            protos.append(f"{group}/{version}/api.proto")
            for d in (group, f"{group}/{version}"):
                os.makedirs(os.path.join(out, d), exist_ok=True)
                open(os.path.join(out, d, "__init__.py"), "a").close()
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "api"), f"--python_out={out}"] + protos,
                   check=True)


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    """pb(group, version) -> the generated module of that proto."""
    out = str(tmp_path_factory.mktemp("pygen"))
    _generate_python(out)
    sys.path.insert(0, out)
    return lambda g, v: importlib.import_module(f"{g}.{v}.api_pb2")


@pytest.fixture(scope="session")
def hpb(tmp_path_factory):
    """The generated module of the standard health.proto (grpc.health.v1),
    as a top-level module (the package name grpc is grpcio's)."""
    out = str(tmp_path_factory.mktemp("pyhealth"))
    subprocess.run(["protoc", "-I", HEALTH_PROTO_DIR, f"--python_out={out}", "health.proto"],
                   check=True)
    sys.path.insert(0, out)
    return importlib.import_module("health_pb2")


class Server:
    def __init__(self, base, fixture=STORAGE_FIXTURE, working_dirs=(WORKDIR,)):
        self.sock = os.path.join(base, "s")
        self.root = os.path.join(base, "r")
        os.makedirs(self.sock)
        os.makedirs(os.path.join(self.root, "C", "var", "lib", "kubelet"))
        for d in working_dirs:
            os.makedirs(self.host(d))
        self.log = open(os.path.join(base, "server.log"), "w")
        self.proc = subprocess.Popen(
            [SERVER, "-socket-dir", self.sock, "-root", self.root, "-working-dir", ",".join(working_dirs),
             "-sim-fixture", fixture],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            if len([f for f in os.listdir(self.sock) if f.endswith(".sock")]) == 23:
                return
            assert self.proc.poll() is None, "server exited at start"
            time.sleep(0.02)
        raise AssertionError("server did not open its 23 sockets")

    def host(self, winpath):
        """Host path of a Windows path under the server's root."""
        drive, rest = winpath.split(":", 1)
        return os.path.join(self.root, drive.upper(), *[p for p in rest.split("\\") if p])

    def channel(self, group, version):
        return grpc.insecure_channel(f"unix:{self.sock}/csi-proxy-{group}-{version}.sock")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.log.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    s = Server(str(tmp_path_factory.mktemp("srv")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "server did not stop cleanly on SIGTERM"


class Caller:
    def __init__(self, server, pb):
        self.server, self.pb, self.channels = server, pb, {}

    def __call__(self, group, version, method, timeout=10, **fields):
        """Returns (response or None, grpc.StatusCode, details)."""
        mod = self.pb(group, version)
        service = mod.DESCRIPTOR.services_by_name[
            {"filesystem": "Filesystem", "disk": "Disk", "volume": "Volume", "smb": "Smb",
             "iscsi": "Iscsi", "system": "System"}[group]]
        m = service.methods_by_name[method]
        req_cls = getattr(mod, m.input_type.name)
        resp_cls = getattr(mod, m.output_type.name)
        key = (group, version)
        if key not in self.channels:
            self.channels[key] = self.server.channel(group, version)
        stub = self.channels[key].unary_unary(
            f"/{version}.{service.name}/{method}",
            request_serializer=req_cls.SerializeToString,
            response_deserializer=resp_cls.FromString)
        try:
            return stub(req_cls(**fields), timeout=timeout), grpc.StatusCode.OK, ""
        except grpc.RpcError as e:
            return None, e.code(), e.details()

    def raw(self, group, version, path, payload, timeout=10):
        key = (group, version)
        if key not in self.channels:
            self.channels[key] = self.server.channel(group, version)
        stub = self.channels[key].unary_unary(path, request_serializer=lambda b: b,
                                              response_deserializer=lambda b: b)
        try:
            return stub(payload, timeout=timeout), grpc.StatusCode.OK, ""
        except grpc.RpcError as e:
            return None, e.code(), e.details()


@pytest.fixture(scope="session")
def call(server, pb):
    return Caller(server, pb)
