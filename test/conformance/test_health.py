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
