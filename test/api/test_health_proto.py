"""api/grpc/health/v1/health.proto is gRPC's standard health checking
protocol, an extra besides the 23 api.proto files of upstream's wire table
(test_wire_api.py counts only those): its package, service, methods (Watch the
only server-streaming one), messages, field numbers and enum values are the
ones grpc-health-probe and every gRPC health client send and expect."""
import os
import shutil
import subprocess

import pytest
from google.protobuf import descriptor_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "api", "grpc", "health", "v1")
FDP = descriptor_pb2.FieldDescriptorProto


@pytest.fixture(scope="module")
def fd(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("health") / "h.pb")
    protoc = shutil.which("protoc")
    assert protoc, "protoc not found on PATH"
    subprocess.run([protoc, "-I", PROTO_DIR, "--descriptor_set_out=" + out, "health.proto"],
                   check=True)
    fds = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as f:
        fds.ParseFromString(f.read())
    assert len(fds.file) == 1
    return fds.file[0]


def test_service_and_methods(fd):
    assert fd.package == "grpc.health.v1" and fd.syntax == "proto3"
    assert [s.name for s in fd.service] == ["Health"]
    got = {m.name: (m.input_type, m.output_type, m.client_streaming, m.server_streaming)
           for m in fd.service[0].method}
    p = ".grpc.health.v1."
    assert got == {
        "Check": (p + "HealthCheckRequest", p + "HealthCheckResponse", False, False),
        "List": (p + "HealthListRequest", p + "HealthListResponse", False, False),
        "Watch": (p + "HealthCheckRequest", p + "HealthCheckResponse", False, True),
    }


def test_messages(fd):
    msgs = {m.name: m for m in fd.message_type}
    req = msgs["HealthCheckRequest"]
    assert [(f.name, f.number, f.type) for f in req.field] == [("service", 1, FDP.TYPE_STRING)]
    resp = msgs["HealthCheckResponse"]
    assert [(f.name, f.number, f.type, f.type_name) for f in resp.field] == [
        ("status", 1, FDP.TYPE_ENUM, ".grpc.health.v1.HealthCheckResponse.ServingStatus")]
    (enum,) = resp.enum_type
    assert [(v.name, v.number) for v in enum.value] == [
        ("UNKNOWN", 0), ("SERVING", 1), ("NOT_SERVING", 2), ("SERVICE_UNKNOWN", 3)]
    lst = msgs["HealthListResponse"]
    assert [(f.name, f.number, f.label) for f in lst.field] == [
        ("statuses", 1, FDP.LABEL_REPEATED)]
    assert not msgs["HealthListRequest"].field
