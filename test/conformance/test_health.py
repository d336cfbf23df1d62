"""csi-proxy-cli health against the native server: every
pipe answering is exit 0; a missing pipe is exit 1 naming it; a pipe that
refuses this caller at open (on Windows: its DACL, ERROR_ACCESS_DENIED;
here: a socket the caller may not write, EACCES) is up, so the node
scripts' check passes on a least-privilege node whose pipes admit no
Administrators."""
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from conftest import BUILD, STORAGE_FIXTURE, Server

CLI = os.path.join(BUILD, "native", "csi-proxy-cli")


def health(sock, *args, user=None):
    cmd = [CLI, "health", "-deadline", "2s", "-socket-dir", sock, *args]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout + p.stderr


@pytest.fixture()
def srv(tmp_path):
    s = Server(str(tmp_path))
    yield s
    s.stop()


def test_all_up(srv):
    rc, out = health(srv.sock)
    assert rc == 0, out
    assert out.count(" ok ") == 23, out


def test_missing_pipe_is_down(srv):
    os.unlink(os.path.join(srv.sock, "csi-proxy-smb-v1.sock"))
    rc, out = health(srv.sock, "smb/v1", "disk/v1")
    assert rc == 1, out
    assert "smb v1 FAIL: no pipe" in out, out
    assert re.search(r"^disk v1 ok \d+ ms$", out, re.M), out  # really called


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to call as another user")
def test_refused_at_open_is_up():
    # a server in a directory the other user can reach (pytest's tmp is 0700)
    base = tempfile.mkdtemp(prefix="csi-proxy-health-")
    os.chmod(base, 0o755)
    srv = Server(base)
    try:
        refused_at_open(srv)
    finally:
        srv.stop()
        shutil.rmtree(base, ignore_errors=True)


def refused_at_open(srv):
    os.chmod(srv.sock, 0o755)
    os.chmod(os.path.join(srv.sock, "csi-proxy-smb-v1.sock"), 0o700)
    os.chmod(os.path.join(srv.sock, "csi-proxy-disk-v1.sock"), 0o777)
    rc, out = health(srv.sock, "smb/v1", "disk/v1", user=65534)
    assert rc == 0, out
    assert "smb v1 ok (the pipe exists; its DACL does not admit this caller)" in out, out
    assert re.search(r"^disk v1 ok \d+ ms$", out, re.M), out  # really called


def test_not_serving_is_named_and_down_with_serving(tmp_path):
    """The CLI asks the standard health service: with the iSCSI simulator's
    initiator service stopped, the iscsi lines say NOT_SERVING (still up:
    the pipes answer); -serving counts them as down, the others stay ok."""
    p = tmp_path / "stopped.yaml"
    with open(STORAGE_FIXTURE) as f:
        p.write_text(f.read().replace("\niscsi:\n", "\niscsi:\n  initiator_stopped: true\n", 1))
    s = Server(str(tmp_path / "srv"), fixture=str(p))
    try:
        rc, out = health(s.sock, "iscsi", "disk/v1")
        assert rc == 0, out
        assert re.search(r"^iscsi v1alpha2 ok \d+ ms \(NOT_SERVING: the pipe answers, its group's "
                         r"back end does not work", out, re.M), out
        assert re.search(r"^disk v1 ok \d+ ms$", out, re.M), out
        rc, out = health(s.sock, "-serving", "iscsi", "disk/v1")
        assert rc == 1, out
        assert out.count("FAIL: NOT_SERVING") == 2, out
        assert re.search(r"^disk v1 ok \d+ ms$", out, re.M), out
    finally:
        s.stop()


def test_config_limits_the_targets(srv, tmp_path):
    # Only what the configuration serves is probed; a group named on the
    # command line that it does not serve is probed anyway, every version.
    cfg = tmp_path / "config.yaml"
    cfg.write_text("groups:\n  filesystem:\n    versions: [v1]\n")
    rc, out = health(srv.sock, "-config", str(cfg))
    assert rc == 0, out
    assert re.findall(r"^(\S+ \S+) ok", out, re.M) == ["filesystem v1"], out
    rc, out = health(srv.sock, "-config", str(cfg), "disk", "filesystem")
    assert rc == 0, out
    assert re.findall(r"^(\S+ \S+) ok", out, re.M) == [
        "filesystem v1", "disk v1alpha1", "disk v1beta1", "disk v1beta2", "disk v1beta3",
        "disk v1"], out


def test_a_retry_without_answer_keeps_the_last_answer(tmp_path):
    """-serving probes a NOT_SERVING pipe again until the deadline (its back
    end may start). A retry that gets no answer in the time left (here a
    server that answers the first Check and stalls the next ones) must not
    turn the pipe's NOT_SERVING into "DEADLINE_EXCEEDED": the operator is
    told what the pipe last said."""
    import threading
    from concurrent import futures

    import grpc

    calls = []
    stalled = threading.Event()

    def check(request, context):
        calls.append(1)
        if len(calls) > 1:
            stalled.wait(5)
        return b"\x08\x02"  # HealthCheckResponse{status: NOT_SERVING}

    handler = grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health",
        {"Check": grpc.unary_unary_rpc_method_handler(check)})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[handler])
    sock_dir = tmp_path / "sock"
    sock_dir.mkdir()
    server.add_insecure_port(f"unix:{sock_dir}/csi-proxy-iscsi-v1alpha2.sock")
    server.start()
    try:
        cmd = [CLI, "health", "-serving", "-deadline", "1s", "-socket-dir", str(sock_dir),
               "iscsi/v1alpha2"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        out = p.stdout + p.stderr
        assert len(calls) >= 2, out  # it did retry
        assert p.returncode == 1, out
        assert "iscsi v1alpha2 FAIL: NOT_SERVING" in out, out
        assert "DEADLINE_EXCEEDED" not in out, out
    finally:
        stalled.set()
        server.stop(0)
