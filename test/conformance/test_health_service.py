"""The standard gRPC health service (grpc.health.v1.Health) on every pipe of
the native build, called with python3-grpcio and the standard health.proto:

- Check of "" and of the pipe's own service ("v1.Filesystem") is SERVING
  while the group's back end works, NOT_SERVING while it does not (the iSCSI
  simulator's initiator service stopped; the kubelet directory unreadable);
  any other name is NOT_FOUND naming it;
- Watch sends the status at once, a message on each change, SERVICE_UNKNOWN
  for an unknown name without ending, and ends with OK after NOT_SERVING when
  the server stops, which still exits 0;
- unary calls on the same connection keep working while a Watch is open;
- List names both; an unknown health method is UNIMPLEMENTED."""
import os
import queue
import signal
import threading
import time

import grpc
import pytest

from conftest import KUBELET, STORAGE_FIXTURE, Server

OK = grpc.StatusCode.OK
NOT_FOUND = grpc.StatusCode.NOT_FOUND
UNIMPLEMENTED = grpc.StatusCode.UNIMPLEMENTED

CATALOG = [("filesystem", v) for v in ("v1alpha1", "v1beta1", "v1beta2", "v1", "v2alpha1")] + \
    [("disk", v) for v in ("v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1")] + \
    [("volume", v) for v in ("v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1", "v2alpha1")] + \
    [("smb", v) for v in ("v1alpha1", "v1beta1", "v1beta2", "v1")] + \
    [("system", "v1alpha1")] + [("iscsi", v) for v in ("v1alpha1", "v1alpha2")]
SERVICE = {"filesystem": "Filesystem", "disk": "Disk", "volume": "Volume", "smb": "Smb",
           "system": "System", "iscsi": "Iscsi"}


def name(group, version):
    return f"{version}.{SERVICE[group]}"


def check(s, hpb, group, version, service, timeout=5):
    ch = s.channel(group, version)
    try:
        f = ch.unary_unary("/grpc.health.v1.Health/Check",
                           request_serializer=hpb.HealthCheckRequest.SerializeToString,
                           response_deserializer=hpb.HealthCheckResponse.FromString)
        try:
            return OK, f(hpb.HealthCheckRequest(service=service), timeout=timeout).status, ""
        except grpc.RpcError as e:
            return e.code(), None, e.details()
    finally:
        ch.close()


class Watch:
    """A Watch call whose messages a thread collects into a queue."""

    def __init__(self, s, hpb, group, version, service):
        self.ch = s.channel(group, version)
        f = self.ch.unary_stream("/grpc.health.v1.Health/Watch",
                                 request_serializer=hpb.HealthCheckRequest.SerializeToString,
                                 response_deserializer=hpb.HealthCheckResponse.FromString)
        self.call = f(hpb.HealthCheckRequest(service=service), timeout=60)
        self.q = queue.Queue()
        self.end = None
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        try:
            for m in self.call:
                self.q.put(m.status)
            self.end = OK
        except grpc.RpcError as e:
            self.end = e.code()
        self.q.put(None)

    def next(self, timeout):
        return self.q.get(timeout=timeout)

    def close(self):
        self.call.cancel()
        self.ch.close()


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    s = Server(str(tmp_path_factory.mktemp("healthsvc")))
    yield s
    s.stop()
    assert s.proc.returncode == 0


def test_every_pipe_serves_health(srv, hpb):
    SERVING = hpb.HealthCheckResponse.SERVING
    for g, v in CATALOG:
        for svc in ("", name(g, v)):
            code, status, msg = check(srv, hpb, g, v, svc)
            assert (code, status) == (OK, SERVING), (g, v, svc, code, msg)


def test_unknown_service_is_not_found(srv, hpb):
    code, _, msg = check(srv, hpb, "filesystem", "v1", "v1.Nope")
    assert code == NOT_FOUND, msg
    assert '"v1.Nope"' in msg and "v1.Filesystem" in msg, msg
    # another pipe's service is not this pipe's
    code, _, msg = check(srv, hpb, "filesystem", "v1", "v1.Disk")
    assert code == NOT_FOUND, msg


def test_list_and_unknown_method(srv, hpb):
    ch = srv.channel("disk", "v1")
    f = ch.unary_unary("/grpc.health.v1.Health/List",
                       request_serializer=hpb.HealthListRequest.SerializeToString,
                       response_deserializer=hpb.HealthListResponse.FromString)
    r = f(hpb.HealthListRequest(), timeout=5)
    assert dict((k, v.status) for k, v in r.statuses.items()) == {
        "": hpb.HealthCheckResponse.SERVING, "v1.Disk": hpb.HealthCheckResponse.SERVING}
    g = ch.unary_unary("/grpc.health.v1.Health/Nope")
    with pytest.raises(grpc.RpcError) as e:
        g(b"", timeout=5)
    assert e.value.code() == UNIMPLEMENTED
    assert "Nope" in e.value.details() and "grpc.health.v1.Health" in e.value.details()
    ch.close()


def test_watch_unknown_service_stays_open(srv, hpb):
    w = Watch(srv, hpb, "smb", "v1", "v1.Nope")
    try:
        assert w.next(5) == hpb.HealthCheckResponse.SERVICE_UNKNOWN
        with pytest.raises(queue.Empty):
            w.next(1.0)  # not ended
    finally:
        w.close()


def test_unary_calls_while_watching(srv, hpb, pb):
    """A Watch open on a connection leaves its unary calls alone."""
    mod = pb("filesystem", "v1")
    ch = srv.channel("filesystem", "v1")
    watch = ch.unary_stream("/grpc.health.v1.Health/Watch",
                            request_serializer=hpb.HealthCheckRequest.SerializeToString,
                            response_deserializer=hpb.HealthCheckResponse.FromString)
    stream = watch(hpb.HealthCheckRequest(service=""), timeout=30)
    assert next(stream).status == hpb.HealthCheckResponse.SERVING
    pe = ch.unary_unary("/v1.Filesystem/PathExists",
                        request_serializer=mod.PathExistsRequest.SerializeToString,
                        response_deserializer=mod.PathExistsResponse.FromString)
    for _ in range(20):
        assert pe(mod.PathExistsRequest(path=KUBELET), timeout=5).exists
    stream.cancel()
    ch.close()


def test_iscsi_initiator_stopped_is_not_serving(tmp_path, hpb):
    p = tmp_path / "stopped.yaml"
    with open(STORAGE_FIXTURE) as f:
        p.write_text(f.read().replace("\niscsi:\n", "\niscsi:\n  initiator_stopped: true\n", 1))
    s = Server(str(tmp_path / "srv"), fixture=str(p))
    try:
        for g, v in CATALOG:
            code, status, msg = check(s, hpb, g, v, "")
            want = hpb.HealthCheckResponse.NOT_SERVING if g == "iscsi" else \
                hpb.HealthCheckResponse.SERVING
            assert (code, status) == (OK, want), (g, v, code, status, msg)
    finally:
        s.stop()


def test_watch_follows_the_back_end_and_ends_on_stop(tmp_path, hpb):
    """The kubelet directory made unreadable (a symbolic-link loop at
    C:\\var: ELOOP) and restored: NOT_SERVING, then SERVING again; then the
    server stops: NOT_SERVING and the stream ends with OK."""
    s = Server(str(tmp_path / "srv"))
    SERVING, NOT = hpb.HealthCheckResponse.SERVING, hpb.HealthCheckResponse.NOT_SERVING
    w = Watch(s, hpb, "filesystem", "v1", "v1.Filesystem")
    try:
        assert w.next(5) == SERVING
        var = os.path.join(s.root, "C", "var")
        os.rename(var, var + ".away")
        os.symlink("var", var)  # C/var -> C/var: every path under it is ELOOP
        code, status, _ = check(s, hpb, "filesystem", "v1", "")
        assert (code, status) == (OK, NOT)
        assert w.next(10) == NOT
        os.unlink(var)
        os.rename(var + ".away", var)
        assert w.next(10) == SERVING
        with pytest.raises(queue.Empty):
            w.next(3)  # no change, no message
        s.proc.send_signal(signal.SIGTERM)
        assert w.next(10) == NOT
        assert w.next(10) is None and w.end == OK, w.end
        assert s.proc.wait(10) == 0
    finally:
        w.close()
        s.stop()
