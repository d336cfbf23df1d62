"""The smb group (v1alpha1, v1beta1, v1beta2, v1) through a real gRPC client,
against the native build's simulated SMB host (winapi/smb_sim.c) seeded
from test/fixtures/storage.yaml, whose catch-all servers serve this file:
servers named unreachable* do not answer, stale* stop answering once
mapped, any other server takes any user with the password "Sekr3t-Pa55";
the machine is SIMNODE. Every version gets every refusal. The fixture's
named servers: test_smb_fixture.py."""
import os

import grpc
import pytest

OK = grpc.StatusCode.OK
VERSIONS = ["v1alpha1", "v1beta1", "v1beta2", "v1"]
PLUGINS = "C:\\var\\lib\\kubelet\\plugins"
SECRET = "Sekr3t-Pa55"


def new(call, v, remote, local="", user="CORP\\u", password=SECRET):
    return call("smb", v, "NewSmbGlobalMapping", remote_path=remote, local_path=local,
                username=user, password=password)


def remove(call, v, remote):
    return call("smb", v, "RemoveSmbGlobalMapping", remote_path=remote)


@pytest.mark.parametrize("v", VERSIONS)
def test_map_link_remove(call, server, v):
    os.makedirs(server.host(PLUGINS), exist_ok=True)
    local = f"{PLUGINS}\\smb-{v}"
    _, code, msg = new(call, v, f"//FS-{v}.example.com/Share/pvc-1", local)
    assert code == OK, msg
    # the link's text is the remote path, '\' separated, with a trailing '\'
    assert os.readlink(server.host(local)) == f"\\\\FS-{v}.example.com\\Share\\pvc-1\\"
    # mapping the same root again (another sub-path) is idempotent
    _, code, msg = new(call, v, f"\\\\fs-{v}.example.com\\share\\pvc-2")
    assert code == OK, msg
    # removal reduces a sub-path to the root
    _, code, msg = remove(call, v, f"\\\\fs-{v}.example.com\\share\\pvc-1")
    assert code == OK, msg
    # removing it again succeeds (an unstage retry after csi-driver-smb dropped
    # its refcount; upstream fails it, DRIVER-CONTRACTS Q5)
    _, code, msg = remove(call, v, f"\\\\fs-{v}.example.com\\share")
    assert code == OK, msg


@pytest.mark.parametrize("v", VERSIONS)
def test_upstream_texts(call, v):
    for rpc in (lambda r: new(call, v, r), lambda r: remove(call, v, r)):
        _, code, msg = rpc("")
        assert code == grpc.StatusCode.INVALID_ARGUMENT and msg == "remote path is empty"
        _, code, msg = rpc("//server/")
        assert code == grpc.StatusCode.INVALID_ARGUMENT and msg == "remote path (\\\\server\\) is invalid"


BAD_REMOTES = [
    "\\\\?\\C:\\Windows", "\\\\?\\UNC\\fs1\\share", "\\\\.\\pipe\\csi-proxy-smb-v1",
    "\\\\.\\PhysicalDrive0", "\\\\localhost\\share", "\\\\127.0.0.1\\share", "\\\\::1\\share",
    "\\\\SIMNODE\\share", "\\\\simnode.sim.local\\share", "\\\\fs1\\C$", "\\\\fs1\\ADMIN$",
    "\\\\fs1\\IPC$", "C:\\x\\y",
    # this machine as Windows' resolver reads it (inet_addr's non-strict
    # IPv4 forms, the ipv6-literal.net spellings), and its own addresses
    # (the simulated machine's: 192.0.2.10, 2001:db8::10, fe80::10)
    "\\\\0x7f.1\\share", "\\\\0x7f000001\\share", "\\\\2130706433\\share",
    "\\\\017700000001\\share", "\\\\0177.0.0.1\\share", "\\\\0\\share", "\\\\0.0\\share",
    "\\\\0-0-0-0-0-0-0-1.ipv6-literal.net\\share",
    "\\\\0000-0000-0000-0000-0000-0000-0000-0001.ipv6-literal.net\\share",
    "\\\\192.0.2.10\\share", "\\\\3221225994\\share", "\\\\2001-db8--10.ipv6-literal.net\\share",
    "\\\\fe80--10s3.ipv6-literal.net\\share",
    # administrative shares behind the trailing dots and spaces Windows drops
    "\\\\fs1\\C$.", "\\\\fs1\\C$ ", "\\\\fs1\\ADMIN$.", "\\\\fs1\\IPC$.", "\\\\fs1\\print$ ",
]
# Refused by NewSmbGlobalMapping only: RemoveSmbGlobalMapping reads the root
# from the first two non-empty components, as upstream does.
BAD_FOR_NEW = ["fs1\\share", "\\fs1\\share", "\\\\fs1\\share\\..\\..\\x"]


@pytest.mark.parametrize("v", VERSIONS)
@pytest.mark.parametrize("remote", BAD_REMOTES)
def test_refused_remote(call, v, remote):
    _, code, msg = new(call, v, remote)
    assert code == grpc.StatusCode.INVALID_ARGUMENT, msg
    assert SECRET not in msg
    _, code, msg = remove(call, v, remote)
    assert code == grpc.StatusCode.INVALID_ARGUMENT, msg


@pytest.mark.parametrize("v", VERSIONS)
@pytest.mark.parametrize("remote", BAD_FOR_NEW)
def test_remove_takes_upstream_root_forms(call, v, remote):
    """New wants \\\\server\\share[\\path]; Remove unmaps the root of what
    upstream's getRootMappingPath takes: one leading backslash (NetApp
    Trident's unstage), none, or a sub-path it drops."""
    _, code, msg = new(call, v, remote)
    assert code == grpc.StatusCode.INVALID_ARGUMENT, msg
    _, code, msg = new(call, v, f"\\\\fs1\\share-{v}")
    assert code == OK, msg
    _, code, msg = remove(call, v, remote.replace("share", f"share-{v}", 1))
    assert code == OK, msg
    # the root is gone: other credentials may map it now
    _, code, msg = new(call, v, f"\\\\fs1\\share-{v}", user="CORP\\other")
    assert code == OK, msg
    assert remove(call, v, f"\\\\fs1\\share-{v}")[1] == OK


@pytest.mark.parametrize("v", VERSIONS)
def test_refused_local_path_maps_nothing(call, v):
    remote = f"\\\\conf-{v}.example.com\\share"
    _, code, msg = new(call, v, remote, "C:\\Windows\\System32\\x")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and SECRET not in msg
    # nothing was mapped: other credentials may map the share (a mapping with
    # CORP\u would make this FAILED_PRECONDITION)
    _, code, msg = new(call, v, remote, user="CORP\\other")
    assert code == OK, msg
    assert remove(call, v, remote)[1] == OK


@pytest.mark.parametrize("v", VERSIONS)
def test_existing_link_is_upstream_text(call, server, v):
    os.makedirs(server.host(f"{PLUGINS}\\busy-{v}"), exist_ok=True)
    _, code, msg = new(call, v, f"\\\\busy-{v}.example.com\\share", f"{PLUGINS}\\busy-{v}")
    assert code != OK
    assert msg.startswith(f"creating link {PLUGINS}\\busy-{v} to ") and SECRET not in msg
    remove(call, v, f"\\\\busy-{v}.example.com\\share")


@pytest.mark.parametrize("v", VERSIONS)
def test_other_credentials(call, v):
    _, code, msg = new(call, v, f"\\\\cred-{v}.example.com\\a", user="CORP\\alice")
    assert code == OK, msg
    _, code, msg = new(call, v, f"\\\\cred-{v}.example.com\\b", user="CORP\\bob")
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert f"\\\\cred-{v}.example.com\\b" in msg and SECRET not in msg
    assert remove(call, v, f"\\\\cred-{v}.example.com\\a")[1] == OK


@pytest.mark.parametrize("v", VERSIONS)
def test_host_failures(call, v):
    _, code, msg = new(call, v, f"\\\\unreachable-{v}\\share")
    assert code == grpc.StatusCode.UNAVAILABLE and msg.startswith("NewSmbGlobalMapping failed.")
    _, code, msg = new(call, v, f"\\\\pw-{v}\\share", password="wrong")
    assert code == grpc.StatusCode.PERMISSION_DENIED and "wrong" not in msg


@pytest.mark.parametrize("v", VERSIONS)
def test_remap_unreachable_root(call, v):
    # stale* servers stop answering once mapped: the second call unmaps and
    # maps again (the order is asserted in test/unit/test_smb.c)
    _, code, msg = new(call, v, f"\\\\stale-{v}\\share", user="CORP\\a")
    assert code == OK, msg
    _, code, msg = new(call, v, f"\\\\stale-{v}\\share", user="CORP\\b")
    assert code == OK, msg
    assert remove(call, v, f"\\\\stale-{v}\\share")[1] == OK
