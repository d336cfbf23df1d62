"""Every filesystem RPC of every version, through a real gRPC client."""
import os
import threading

import grpc
import pytest

from conftest import KUBELET, WORKDIR

OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
VERSIONS = ["v1alpha1", "v1beta1", "v1beta2", "v1", "v2alpha1"]
LEGACY = {"v1alpha1", "v1beta1"}


def link_rpc(v):
    return ("LinkPath", "IsMountPoint", "is_mount_point") if v in LEGACY else \
        ("CreateSymlink", "IsSymlink", "is_symlink")


@pytest.fixture(params=VERSIONS)
def v(request):
    return request.param


def p(*parts):
    return "\\".join((KUBELET,) + parts)


def test_mkdir_pathexists_rmdir(call, server, v):
    d = p("pods", f"mk-{v}", "a", "b")
    r, code, _ = call("filesystem", v, "PathExists", path=d)
    assert code == OK and r.exists is False
    r, code, msg = call("filesystem", v, "Mkdir", path=d)
    assert code == OK, msg
    assert os.path.isdir(server.host(d))
    r, code, _ = call("filesystem", v, "Mkdir", path=d)  # idempotent
    assert code == OK
    r, code, _ = call("filesystem", v, "PathExists", path=d)
    assert code == OK and r.exists is True
    if v in LEGACY:
        assert r.error == ""
    r, code, msg = call("filesystem", v, "Rmdir", path=d)
    assert code == OK, msg
    assert not os.path.exists(server.host(d))


def test_mkdir_file_in_the_way(call, server, v):
    d = p("pods", f"file-{v}")
    os.makedirs(os.path.dirname(server.host(d)), exist_ok=True)
    open(server.host(d), "w").close()
    _, code, msg = call("filesystem", v, "Mkdir", path=d + "\\sub")
    assert code != OK
    assert f"file-{v}" in msg


def test_rmdir_nonempty_needs_force(call, server, v):
    d = p("pods", f"rm-{v}")
    os.makedirs(server.host(d + "\\x\\y"))
    open(server.host(d + "\\x\\f"), "w").close()
    _, code, msg = call("filesystem", v, "Rmdir", path=d)
    assert code == grpc.StatusCode.FAILED_PRECONDITION, msg
    assert os.path.isdir(server.host(d + "\\x\\y"))  # nothing lost
    _, code, msg = call("filesystem", v, "Rmdir", path=d, force=True)
    assert code == OK, msg
    assert not os.path.exists(server.host(d))
    _, code, _ = call("filesystem", v, "Rmdir", path=d, force=True)  # already gone
    assert code == OK
    _, code, msg = call("filesystem", v, "Rmdir", path=d)
    assert code == grpc.StatusCode.NOT_FOUND, msg


def test_symlink_and_is_symlink(call, server, v):
    create, check, field = link_rpc(v)
    src = p("plugins", f"src-{v}")
    dst = p("pods", f"lnk-{v}")
    os.makedirs(server.host(src))
    os.makedirs(os.path.dirname(server.host(dst)), exist_ok=True)
    _, code, msg = call("filesystem", v, create, source_path=src, target_path=dst)
    assert code == OK, msg
    assert os.path.islink(server.host(dst))
    r, code, _ = call("filesystem", v, check, path=dst)
    assert code == OK and getattr(r, field) is True
    r, code, _ = call("filesystem", v, check, path=src)
    assert code == OK and getattr(r, field) is False
    _, code, msg = call("filesystem", v, create, source_path=src, target_path=dst)
    assert code == grpc.StatusCode.ALREADY_EXISTS, msg
    os.rmdir(server.host(src))  # dangling now: exists, but not a live link
    r, code, _ = call("filesystem", v, "PathExists", path=dst)
    assert code == OK and r.exists is True
    r, code, _ = call("filesystem", v, check, path=dst)
    assert code == OK and getattr(r, field) is False
    _, code, _ = call("filesystem", v, check, path=p("pods", "nope", f"{v}"))
    assert code == grpc.StatusCode.NOT_FOUND


def test_rmdir_contents_v2alpha1(call, server):
    d = p("pods", "contents")
    outside = os.path.join(server.root, "outside")
    os.makedirs(outside)
    open(os.path.join(outside, "keep"), "w").close()
    os.makedirs(server.host(d + "\\a\\b"))
    open(server.host(d + "\\f"), "w").close()
    os.symlink(outside, server.host(d + "\\escape"))
    _, code, msg = call("filesystem", "v2alpha1", "RmdirContents", path=d)
    assert code == OK, msg
    assert os.listdir(server.host(d)) == []
    assert os.path.exists(os.path.join(outside, "keep")), "followed a link out of the directory"
    _, code, _ = call("filesystem", "v2alpha1", "RmdirContents", path=p("pods", "missing"))
    assert code == grpc.StatusCode.NOT_FOUND


def test_working_dir_is_allowed(call, server, v):
    d = WORKDIR + f"\\w-{v}"
    _, code, msg = call("filesystem", v, "Mkdir", path=d)
    assert code == OK, msg
    assert os.path.isdir(server.host(d))


# --- the configured directories themselves ----------------

# Every spelling the rules accept for the two roots: as configured, with a
# trailing separator, in another letter case.
ROOTS = [KUBELET, KUBELET + "\\", "c:\\VAR\\lib\\Kubelet", "c:\\var\\lib\\KUBELET\\",
         WORKDIR, "c:\\CSI-WORK\\"]
ROOT_RULE = "never removed, emptied, replaced or mounted over"
REFS = "\\\\?\\Volume{11111111-0011-4000-8000-000000000001}\\"  # a data volume of the fixture


def refused(code, msg, path):
    assert code == INVALID, msg
    assert path in msg and "is the configured directory" in msg and ROOT_RULE in msg, msg


def keep_marker(server):
    """A file in each root that every refused call must leave in place."""
    files = [server.host(p("pods", "root-marker", "data")), server.host(WORKDIR + "\\root-marker")]
    for f in files:
        os.makedirs(os.path.dirname(f), exist_ok=True)
        open(f, "w").close()
    return files


@pytest.mark.parametrize("root", ROOTS)
def test_root_is_not_removed_emptied_or_replaced(call, server, v, root):
    markers = keep_marker(server)
    create = link_rpc(v)[0]
    for rpc, fields in (("Rmdir", {"path": root, "force": True}),
                        ("Rmdir", {"path": root}),
                        (create, {"source_path": p("pods"), "target_path": root})):
        _, code, msg = call("filesystem", v, rpc, **fields)
        refused(code, msg, root)
    if v == "v2alpha1":
        _, code, msg = call("filesystem", v, "RmdirContents", path=root)
        refused(code, msg, root)
    for f in markers:
        assert os.path.exists(f), f"{f} was lost"


@pytest.mark.parametrize("root", ROOTS)
def test_root_may_be_read_and_created(call, server, v, root):
    _, code, msg = call("filesystem", v, "Mkdir", path=root)
    assert code == OK, msg
    r, code, msg = call("filesystem", v, "PathExists", path=root)
    assert code == OK, msg
    if root in (KUBELET, KUBELET + "\\", WORKDIR):  # the POSIX host is case-sensitive
        assert r.exists is True
        _, check, field = link_rpc(v)
        r, code, msg = call("filesystem", v, check, path=root)
        assert code == OK and getattr(r, field) is False, msg


@pytest.mark.parametrize("root", ROOTS)
@pytest.mark.parametrize("vv", ["v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1", "v2alpha1"])
def test_volume_not_mounted_over_a_root(call, server, vv, root):
    markers = keep_marker(server)
    old = vv in ("v1alpha1", "v1beta1", "v1beta2")
    key = "path" if old else "target_path"
    _, code, msg = call("volume", vv, "MountVolume", volume_id=REFS, **{key: root})
    refused(code, msg, root)
    unmount = "DismountVolume" if old else "UnmountVolume"
    _, code, msg = call("volume", vv, unmount, volume_id=REFS, **{key: root})
    refused(code, msg, root)
    for f in markers:
        assert os.path.exists(f), f"{f} was lost"


def test_link_to_root_is_not_emptied(call, server):
    markers = keep_marker(server)
    up = p("pods", "up-to-root")
    os.symlink(server.host(KUBELET), server.host(up))
    _, code, msg = call("filesystem", "v2alpha1", "RmdirContents", path=up)
    assert code == INVALID and f"(it resolves to {KUBELET}) is the configured directory" in msg, msg
    for f in markers:
        assert os.path.exists(f), f"{f} was lost"
    _, code, msg = call("filesystem", "v1", "Rmdir", path=up, force=True)  # the link itself
    assert code == OK, msg
    assert not os.path.lexists(server.host(up))
    for f in markers:
        assert os.path.exists(f), f"{f} was lost"


BAD = [
    ("C:\\var\\lib\\kubelet-evil\\x", "not within"),
    ("C:\\var\\lib\\kubelet\\..\\..\\Windows", ".."),
    ("\\\\server\\share\\x", "\\"),
    ("\\\\?\\C:\\var\\lib\\kubelet\\x", "\\"),
    ("\\\\.\\PhysicalDrive0", "\\"),
    ("C:\\var\\lib\\kubelet\\x:stream", "invalid"),
    ("var\\lib\\kubelet\\x", "absolute"),
    ("", "absolute"),
    ("C:\\Windows\\System32", "not within"),
    ("C:\\var\\lib\\kubelet\\" + "a" * 300, "exceeds"),
]


@pytest.mark.parametrize("path,why", BAD)
def test_path_rules(call, server, v, path, why):
    for rpc in ("PathExists", "Mkdir", "Rmdir"):
        _, code, msg = call("filesystem", v, rpc, path=path)
        assert code == INVALID, (rpc, msg)
        assert why in msg, msg
    create = link_rpc(v)[0]
    _, code, msg = call("filesystem", v, create, source_path=p("ok"), target_path=path)
    assert code == INVALID, msg
    _, code, msg = call("filesystem", v, create, source_path=path, target_path=p("ok2"))
    assert code == INVALID, msg
    assert not os.path.exists(server.host(p("ok2")))


def test_unknown_method_and_wrong_service(call):
    _, code, msg = call.raw("filesystem", "v1", "/v1.Filesystem/Format", b"")
    assert code == grpc.StatusCode.UNIMPLEMENTED
    assert msg == "unknown method Format for service v1.Filesystem"
    _, code, msg = call.raw("filesystem", "v1", "/v1.Disk/ListDiskIDs", b"")
    assert code == grpc.StatusCode.UNIMPLEMENTED
    assert msg == "unknown service v1.Disk"


def test_other_groups_pipes_answer_unimplemented(call):
    # every RPC of every group is implemented: an unknown method on another
    # group's pipe is what still answers UNIMPLEMENTED
    _, code, msg = call.raw("iscsi", "v1alpha2", "/v1alpha2.Iscsi/Format", b"")
    assert code == grpc.StatusCode.UNIMPLEMENTED
    assert msg == "unknown method Format for service v1alpha2.Iscsi"


def test_malformed_message(call):
    _, code, msg = call.raw("filesystem", "v1", "/v1.Filesystem/PathExists", b"\x0a\x7f\x41")
    assert code == grpc.StatusCode.INTERNAL
    assert "unmarshalling" in msg


def test_oversized_message(call):
    _, code, msg = call("filesystem", "v1", "PathExists", path="C:\\" + "x" * (4 * 1024 * 1024 + 10))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, msg
    r, code, _ = call("filesystem", "v1", "PathExists", path=p("after-oversize"))
    assert code == OK and r.exists is False  # the connection still serves


def test_deadline(call, server):
    # Far-future deadline: the header is parsed and the call succeeds.
    _, code, _ = call("filesystem", "v1", "PathExists", path=p("x"), timeout=3600)
    assert code == OK
    # A call slower than its deadline (deleting 4000 entries in 5 ms) ends
    # DEADLINE_EXCEEDED; the server-side expiry itself is covered by
    # test_conn's deadline test. Then the server keeps serving.
    d = p("pods", "slow")
    base = server.host(d)
    for i in range(4000):
        os.makedirs(os.path.join(base, f"d{i}"))
    _, code, _ = call("filesystem", "v2alpha1", "RmdirContents", path=d, timeout=0.005)
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED
    r, code, _ = call("filesystem", "v1", "PathExists", path=d)
    assert code == OK and r.exists is True


def test_concurrent_calls_one_channel(call, server):
    errors = []

    def worker(i):
        d = p("pods", f"conc-{i}")
        for rpc in ("Mkdir", "PathExists", "Rmdir"):
            r, code, msg = call("filesystem", "v1", rpc, path=d)
            if code != OK:
                errors.append((rpc, msg))
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# --- driver contracts (DRIVER-CONTRACTS.md §9) -----------------------------
# Mount-point folders (facts 10, 11c) need the volume group: test_volume.py.

@pytest.mark.parametrize("vv", ["v1beta2", "v1", "v2alpha1"])
def test_fact07_is_symlink_accepts_driveless_raw_path(call, server, vv):
    # GCE passes kubelet's raw path to IsSymlink; with a drive-less kubelet
    # root it is "\var\lib\kubelet\...": the system drive (C:) is prefixed
    src = p("plugins", f"f07-{vv}", "globalmount")
    link = p("pods", f"f07-{vv}", "mount")
    assert call("filesystem", vv, "Mkdir", path=src)[1] == OK
    assert call("filesystem", vv, "Mkdir", path=p("pods", f"f07-{vv}"))[1] == OK
    _, code, msg = call("filesystem", vv, "CreateSymlink", source_path=src, target_path=link)
    assert code == OK, msg
    r, code, msg = call("filesystem", vv, "IsSymlink", path=link[2:])
    assert code == OK and r.is_symlink is True, msg
    r, code, msg = call("filesystem", vv, "IsSymlink", path=src[2:])
    assert code == OK and r.is_symlink is False, msg
    # every rule still holds after the prefix: outside, UNC, "..", device paths
    for bad in ("\\Windows\\System32", "\\\\host\\share\\x", "\\var\\lib\\kubelet\\..\\x",
                "\\\\.\\PhysicalDrive0"):
        _, code, msg = call("filesystem", vv, "IsSymlink", path=bad)
        assert code == INVALID, (bad, msg)
    # PathExists, Mkdir, Rmdir, CreateSymlink keep upstream's rule: drivers
    # normalise those paths, a drive-less one is refused
    _, code, msg = call("filesystem", vv, "PathExists", path=src[2:])
    assert code == INVALID, msg


def test_fact08_lowercase_kubelet_prefix_on_every_rpc(call, server, v):
    # mount-utils' NormalizeWindowsPath sends "c:\var\lib\kubelet\..."
    low = "c" + p("pods", f"f08-{v}", "vol")[1:]
    link = "c" + p("pods", f"f08-{v}", "link")[1:]
    _, code, msg = call("filesystem", v, "Mkdir", path=low)
    assert code == OK, msg
    r, code, msg = call("filesystem", v, "PathExists", path=low)
    assert code == OK and r.exists, msg
    make, probe, field = link_rpc(v)
    _, code, msg = call("filesystem", v, make, source_path=low, target_path=link)
    assert code == OK, msg
    r, code, msg = call("filesystem", v, probe, path=link)
    assert code == OK and getattr(r, field) is True, msg
    _, code, msg = call("filesystem", v, "Rmdir", path=link, force=True)
    assert code == OK, msg
    assert os.path.isdir(server.host(low))  # the link went, not its target
    # the root stays protected in lower case too
    _, code, msg = call("filesystem", v, "Rmdir", path="c:\\var\\lib\\kubelet\\", force=True)
    assert code == INVALID and "configured directory" in msg, msg
