"""The smb group against the SMB servers of test/fixtures/storage.yaml's
smb: section, through a real gRPC client, as csi-driver-smb calls it on a
node that mounts FSx-like shares: a reachable share mapped with the
credentials it accepts and its link created; an unreachable server; wrong
credentials; a share the server does not offer; and the server mapped at
start by another user (Windows' "multiple connections" case), which is
FAILED_PRECONDITION naming the share until that mapping is removed. Also:
a bad fixture stops the server at start with a message naming the key and
the cause."""
import os
import subprocess

import grpc
import pytest

from conftest import SERVER

OK = grpc.StatusCode.OK
VERSIONS = ["v1alpha1", "v1beta1", "v1beta2", "v1"]
PLUGINS = "C:\\var\\lib\\kubelet\\plugins\\smb.csi.k8s.io"
USER, PASSWORD = "CORP\\svc-fsx", "Fsx-Pa55-w0rd"


def new(call, v, remote, local="", user=USER, password=PASSWORD):
    return call("smb", v, "NewSmbGlobalMapping", remote_path=remote, local_path=local,
                username=user, password=password)


def remove(call, v, remote):
    return call("smb", v, "RemoveSmbGlobalMapping", remote_path=remote)


@pytest.mark.parametrize("v", VERSIONS)
def test_share_mapped_and_linked(call, server, v):
    os.makedirs(server.host(PLUGINS), exist_ok=True)
    local = f"{PLUGINS}\\pv-{v}"
    remote = f"\\\\fsx1.corp.example\\vol1\\pvc-{v}"
    _, code, msg = new(call, v, remote, local)
    assert code == OK, msg
    assert os.readlink(server.host(local)) == remote + "\\"
    # the other share of that server, same credentials: fine
    _, code, msg = new(call, v, "\\\\fsx1.corp.example\\vol2")
    assert code == OK, msg
    for r in ("\\\\fsx1.corp.example\\vol1", "\\\\fsx1.corp.example\\vol2"):
        _, code, msg = remove(call, v, r)
        assert code == OK, msg
    os.unlink(server.host(local))


@pytest.mark.parametrize("v", VERSIONS)
def test_refusals_from_the_server(call, server, v):
    local = f"{PLUGINS}\\refused-{v}"
    os.makedirs(server.host(PLUGINS), exist_ok=True)
    cases = [
        # a server that is down
        ("\\\\gone.corp.example\\vol1", USER, PASSWORD, grpc.StatusCode.UNAVAILABLE,
         "the network path was not found"),
        # wrong password, wrong user
        ("\\\\fsx1.corp.example\\vol1", USER, "Not-The-Pa55", grpc.StatusCode.PERMISSION_DENIED,
         "the user name or password is incorrect"),
        ("\\\\fsx1.corp.example\\vol1", "CORP\\intruder", PASSWORD,
         grpc.StatusCode.PERMISSION_DENIED, "the user name or password is incorrect"),
        # a share the server does not offer
        ("\\\\fsx1.corp.example\\vol9", USER, PASSWORD, grpc.StatusCode.NOT_FOUND,
         "the network name cannot be found"),
    ]
    for remote, user, password, want, text in cases:
        _, code, msg = new(call, v, remote, local, user=user, password=password)
        assert code == want, msg
        assert msg.startswith("NewSmbGlobalMapping failed.") and text in msg, msg
        assert remote.lower() in msg.lower() and password not in msg
        # nothing was linked
        assert not os.path.lexists(server.host(local))


@pytest.mark.parametrize("v", VERSIONS)
def test_mapped_with_other_credentials(call, server, v):
    """fsx2 has \\\\fsx2.corp.example\\logs mapped by CORP\\backup at start."""
    local = f"{PLUGINS}\\data-{v}"
    os.makedirs(server.host(PLUGINS), exist_ok=True)
    _, code, msg = new(call, v, "\\\\fsx2.corp.example\\data", local)
    assert code == grpc.StatusCode.FAILED_PRECONDITION, msg
    assert "\\\\fsx2.corp.example\\data" in msg and "\\\\fsx2.corp.example\\logs" in msg
    assert "other credentials" in msg and PASSWORD not in msg
    assert not os.path.lexists(server.host(local))
    # the same user as the existing mapping is fine
    _, code, msg = new(call, v, "\\\\fsx2.corp.example\\data", user="CORP\\backup",
                       password="Backup-Pa55-w0rd")
    assert code == OK, msg
    assert remove(call, v, "\\\\fsx2.corp.example\\data")[1] == OK


def test_mapping_in_the_way_removed(call, server):
    """Last: once the other user's mapping is gone, CORP\\svc-fsx maps fsx2."""
    v = "v1"
    assert remove(call, v, "\\\\fsx2.corp.example\\logs")[1] == OK
    local = f"{PLUGINS}\\data-after"
    os.makedirs(server.host(PLUGINS), exist_ok=True)
    _, code, msg = new(call, v, "\\\\fsx2.corp.example\\data", local)
    assert code == OK, msg
    assert os.readlink(server.host(local)) == "\\\\fsx2.corp.example\\data\\"
    assert remove(call, v, "\\\\fsx2.corp.example\\data")[1] == OK
    os.unlink(server.host(local))


BAD_FIXTURES = [
    ("iscsi:\n  portals:\n    - {address: 10.0.0.1, port: 70000}\n",
     "iscsi simulator: fixture {f}:3: iscsi.portals[0].port: 70000 is out of range [1, 65535]"),
    ("smb:\n  servers:\n    - {name: fs1, credentials: [{username: u}]}\n",
     "smb simulator: fixture {f}:3: smb.servers[0].credentials[0]: needs username and password"),
    ("iscsi:\n  portals:\n    - address: h\n      targets:\n"
     "        - {iqn: iqn.a:b, luns: [{size: 1GiB}], chap: {username: u, secret: S3cret-tiny}}\n",
     "iscsi simulator: fixture {f}:5: iscsi.portals[0].targets[0].chap.secret: must be 12 to 16 "
     "bytes long, as Windows requires (it has 11)"),
]


@pytest.mark.parametrize("text,want", BAD_FIXTURES)
def test_bad_fixture_is_a_startup_error(tmp_path, text, want):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    (tmp_path / "s").mkdir()
    (tmp_path / "r").mkdir()
    p = subprocess.run([SERVER, "-socket-dir", str(tmp_path / "s"), "-root", str(tmp_path / "r"),
                        "-sim-fixture", str(f)], capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert want.format(f=f) in p.stderr, p.stderr
    assert "S3cret-tiny" not in p.stderr
    assert not [n for n in os.listdir(tmp_path / "s") if n.endswith(".sock")]
