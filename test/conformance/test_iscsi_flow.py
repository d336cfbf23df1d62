"""The iSCSI driver flow end to end through a real gRPC client, against the
native build's simulators seeded from test/fixtures/storage.yaml: an
iSCSI login makes the target's LUNs disks of the storage simulator, a
logout removes them. Per iscsi version (its own portal in the fixture):

AddTargetPortal -> DiscoverTargetPortal -> ConnectTarget (CHAP refused
without it, with a wrong secret, then accepted) -> GetTargetDisks -> disk
ListDiskIDs / ListDiskLocations / GetDiskStats -> PartitionDisk -> volume
ListVolumesOnDisk -> IsVolumeFormatted -> FormatVolume -> MountVolume to a
kubelet path -> filesystem IsSymlink / volume GetVolumeIDFromTargetPath ->
UnmountVolume -> DisconnectTarget (the disks leave every listing) ->
RemoveTargetPortal. Then a logout with a volume still mounted (Windows:
the mount point dangles) and a new login that finds the LUN's volume
again."""
import grpc
import pytest

from conftest import STORAGE_FIXTURE, Caller, Server

OK = grpc.StatusCode.OK
VERSIONS = ["v1alpha1", "v1alpha2"]
IQN = "iqn.2003-01.org.linux-iscsi.san:"
SECRET = "Chap-S3cret-16b"
WRONG = "Wr0ng-S3cret-16"
GIB = 1024 ** 3
PLUGINS = "C:\\var\\lib\\kubelet\\plugins\\kubernetes.io\\csi\\iscsi.csi.k8s.io"


@pytest.fixture
def rpc(call, pb):
    def run(group, v, method, address=None, port=0, **fields):
        if address is not None:
            fields["target_portal"] = pb(group, v).TargetPortal(target_address=address,
                                                                target_port=port)
        resp, code, msg = call(group, v, method, **fields)
        return resp, code, msg
    return run


def ok(result):
    resp, code, msg = result
    assert code == OK, msg
    return resp


def disk_ids(rpc):
    return {n: (d.page83, d.serial_number)
            for n, d in ok(rpc("disk", "v1", "ListDiskIDs")).diskIDs.items()}


def locations(rpc):
    return ok(rpc("disk", "v1", "ListDiskLocations")).disk_locations


@pytest.mark.parametrize("v", VERSIONS)
def test_iscsi_flow_end_to_end(rpc, server, v):
    portal = f"san-{v}.sim.example"
    data, secure = f"{IQN}{v}-data", f"{IQN}{v}-secure"
    before = disk_ids(rpc)

    ok(rpc("iscsi", v, "AddTargetPortal", portal))
    assert list(ok(rpc("iscsi", v, "DiscoverTargetPortal", portal)).iqns) == [data, secure]

    # CHAP: none, a wrong secret, then the right one
    _, code, msg = rpc("iscsi", v, "ConnectTarget", portal, iqn=secure, auth_type=0)
    assert code == grpc.StatusCode.PERMISSION_DENIED, msg
    assert msg == f"logging in to {secure}: authentication failure"
    _, code, msg = rpc("iscsi", v, "ConnectTarget", portal, iqn=secure, auth_type=1,
                       chap_username="node-a", chap_secret=WRONG)
    assert code == grpc.StatusCode.PERMISSION_DENIED and secure in msg and WRONG not in msg, msg
    assert ok(rpc("iscsi", v, "GetTargetDisks", portal, iqn=secure)).diskIDs == []
    ok(rpc("iscsi", v, "ConnectTarget", portal, iqn=secure, auth_type=1,
           chap_username="node-a", chap_secret=SECRET))
    ok(rpc("iscsi", v, "ConnectTarget", portal, iqn=data, auth_type=0))

    # GetTargetDisks: decimal strings of disks that are new to the host
    ids = list(ok(rpc("iscsi", v, "GetTargetDisks", portal, iqn=data)).diskIDs)
    sec = list(ok(rpc("iscsi", v, "GetTargetDisks", portal, iqn=secure)).diskIDs)
    assert len(ids) == 2 and len(sec) == 1
    nums = [int(i) for i in ids + sec]
    assert [str(n) for n in nums] == ids + sec and len(set(nums)) == 3
    after = disk_ids(rpc)
    assert not set(nums) & set(before) and set(nums) <= set(after)
    # like real LUNs: a unique NAA page 83 ID and serial each; the fixture's serial
    assert all(after[n][0].startswith("600140") and len(after[n][0]) == 32 for n in nums)
    assert len({after[n] for n in nums}) == 3
    assert after[nums[2]][1] == {"v1alpha1": "SECURE-A-0", "v1alpha2": "SECURE-B-0"}[v]
    locs = locations(rpc)
    assert {locs[n].Adapter for n in nums} == {"3"}
    assert [locs[n].LUNID for n in nums[:2]] == ["0", "1"]
    assert locs[nums[0]].Target == locs[nums[1]].Target != locs[nums[2]].Target
    assert ok(rpc("disk", "v1", "GetDiskStats", disk_number=nums[0])).total_bytes == 4 * GIB
    assert ok(rpc("disk", "v1", "GetDiskStats", disk_number=nums[1])).total_bytes == 2 * GIB
    assert ok(rpc("disk", "v1", "GetDiskState", disk_number=nums[0])).is_online

    # stage: partition, format, mount on a kubelet path
    n = nums[0]
    assert list(ok(rpc("volume", "v1", "ListVolumesOnDisk", disk_number=n)).volume_ids) == []
    ok(rpc("disk", "v1", "PartitionDisk", disk_number=n))
    vols = list(ok(rpc("volume", "v1", "ListVolumesOnDisk", disk_number=n)).volume_ids)
    assert len(vols) == 1
    vol = vols[0]
    assert not ok(rpc("volume", "v1", "IsVolumeFormatted", volume_id=vol)).formatted
    ok(rpc("volume", "v1", "FormatVolume", volume_id=vol))
    assert ok(rpc("volume", "v1", "IsVolumeFormatted", volume_id=vol)).formatted
    stg = f"{PLUGINS}\\pv-{v}\\globalmount"
    ok(rpc("filesystem", "v1", "Mkdir", path=stg))
    ok(rpc("volume", "v1", "MountVolume", volume_id=vol, target_path=stg))
    # filesystem checks: the staging folder is a mount point of that volume
    assert ok(rpc("filesystem", "v1", "PathExists", path=stg)).exists
    assert ok(rpc("filesystem", "v1", "IsSymlink", path=stg)).is_symlink
    assert ok(rpc("volume", "v1", "GetVolumeIDFromTargetPath", target_path=stg)).volume_id == vol
    assert ok(rpc("volume", "v1", "GetDiskNumberFromVolumeID", volume_id=vol)).disk_number == n
    stats = ok(rpc("volume", "v1", "GetVolumeStats", volume_id=vol))
    assert 0 < stats.total_bytes <= 4 * GIB

    # unstage, log out: the disks leave every listing
    ok(rpc("volume", "v1", "UnmountVolume", volume_id=vol, target_path=stg))
    assert not ok(rpc("filesystem", "v1", "IsSymlink", path=stg)).is_symlink
    ok(rpc("iscsi", v, "DisconnectTarget", portal, iqn=data))
    ok(rpc("iscsi", v, "DisconnectTarget", portal, iqn=secure))
    assert not set(nums) & set(disk_ids(rpc))
    assert not set(nums) & set(locations(rpc))
    for d in nums:
        _, code, msg = rpc("disk", "v1", "GetDiskStats", disk_number=d)
        assert code == grpc.StatusCode.NOT_FOUND and str(d) in msg, msg
    _, code, msg = rpc("volume", "v1", "IsVolumeFormatted", volume_id=vol)
    assert code == grpc.StatusCode.NOT_FOUND and vol in msg, msg
    assert ok(rpc("iscsi", v, "GetTargetDisks", portal, iqn=data)).diskIDs == []
    ok(rpc("iscsi", v, "RemoveTargetPortal", portal))
    assert portal not in [p.target_address
                          for p in ok(rpc("iscsi", v, "ListTargetPortals")).target_portals]
    ok(rpc("filesystem", "v1", "Rmdir", path=stg, force=True))


def test_logout_with_a_volume_mounted(rpc, server):
    """Windows logs out and leaves the mount point dangling; the LUN keeps
    its partition and file system, and a new login brings them back."""
    v, portal = "v1alpha2", "san-v1alpha2.sim.example"
    data = f"{IQN}{v}-data"
    ok(rpc("iscsi", v, "AddTargetPortal", portal))
    ok(rpc("iscsi", v, "ConnectTarget", portal, iqn=data))
    n = int(ok(rpc("iscsi", v, "GetTargetDisks", portal, iqn=data)).diskIDs[1])
    ok(rpc("disk", "v1", "PartitionDisk", disk_number=n))
    vol = ok(rpc("volume", "v1", "ListVolumesOnDisk", disk_number=n)).volume_ids[0]
    ok(rpc("volume", "v1", "FormatVolume", volume_id=vol))
    stg = f"{PLUGINS}\\pv-dangling\\globalmount"
    ok(rpc("filesystem", "v1", "Mkdir", path=stg))
    ok(rpc("volume", "v1", "MountVolume", volume_id=vol, target_path=stg))

    ok(rpc("iscsi", v, "DisconnectTarget", portal, iqn=data))
    assert n not in disk_ids(rpc)
    # dangling: the folder stays, it is no longer a link to a volume
    assert ok(rpc("filesystem", "v1", "PathExists", path=stg)).exists
    assert not ok(rpc("filesystem", "v1", "IsSymlink", path=stg)).is_symlink
    _, code, msg = rpc("volume", "v1", "UnmountVolume", volume_id=vol, target_path=stg)
    assert code == grpc.StatusCode.NOT_FOUND and vol in msg, msg

    # the LUN comes back with its volume, formatted, and the mount point works again
    ok(rpc("iscsi", v, "ConnectTarget", portal, iqn=data))
    n2 = int(ok(rpc("iscsi", v, "GetTargetDisks", portal, iqn=data)).diskIDs[1])
    assert list(ok(rpc("volume", "v1", "ListVolumesOnDisk", disk_number=n2)).volume_ids) == [vol]
    assert ok(rpc("volume", "v1", "IsVolumeFormatted", volume_id=vol)).formatted
    assert ok(rpc("volume", "v1", "GetVolumeIDFromTargetPath", target_path=stg)).volume_id == vol
    ok(rpc("volume", "v1", "UnmountVolume", volume_id=vol, target_path=stg))
    ok(rpc("filesystem", "v1", "Rmdir", path=stg, force=True))
    ok(rpc("iscsi", v, "DisconnectTarget", portal, iqn=data))
    ok(rpc("iscsi", v, "RemoveTargetPortal", portal))


AT_START = """iscsi:
  portals:
    - address: 192.0.2.20
      port: 3261
      registered: true
      targets:
        - {iqn: "iqn.2003-01.org.linux-iscsi.boot:persistent", luns: [{size: 2GiB, serial: PERSIST-0}]}
  sessions:
    - {address: 192.0.2.20, port: 3261, iqn: "iqn.2003-01.org.linux-iscsi.boot:persistent"}
"""


def test_login_at_start(tmp_path, pb):
    """A fixture's login that exists at start: its portal registered, its
    LUN a disk of the storage simulator from the start (the disks: of the
    repository's fixture come first, so it gets the lowest free number)."""
    f = tmp_path / "fixture.yaml"
    with open(STORAGE_FIXTURE) as src:
        text = src.read()
    f.write_text(AT_START + text[text.index("\ndisks:\n") + 1:])
    srv = Server(str(tmp_path / "srv"), fixture=str(f))
    try:
        call = Caller(srv, pb)
        v = "v1alpha2"
        portals = call("iscsi", v, "ListTargetPortals")[0].target_portals
        assert [(p.target_address, p.target_port) for p in portals] == [("192.0.2.20", 3261)]
        tp = pb("iscsi", v).TargetPortal(target_address="192.0.2.20", target_port=3261)
        resp, code, msg = call("iscsi", v, "GetTargetDisks", target_portal=tp,
                               iqn="iqn.2003-01.org.linux-iscsi.boot:persistent")
        assert code == OK and len(resp.diskIDs) == 1, msg
        n = int(resp.diskIDs[0])
        ids = call("disk", "v1", "ListDiskIDs")[0].diskIDs
        assert ids[n].serial_number == "PERSIST-0" and n == 17  # fixture disks: 0-16, 19, 20
        assert call("disk", "v1", "GetDiskStats", disk_number=n)[0].total_bytes == 2 * GIB
    finally:
        srv.stop()


def test_unreachable_portal(rpc):
    _, code, msg = rpc("iscsi", "v1alpha2", "AddTargetPortal", "192.0.2.99")
    assert code == grpc.StatusCode.UNAVAILABLE
    assert msg == "target portal 192.0.2.99:3260 does not answer"
