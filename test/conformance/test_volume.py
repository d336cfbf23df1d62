"""Volume group conformance: python3-grpcio calls every volume RPC of every
version (v1alpha1, v1beta1, v1beta2, v1beta3, v1, v2alpha1: 56 RPCs) on the
native build: volumes from the storage simulator (test/fixtures/storage.yaml),
mount directories on the POSIX file-system host under the server's root. A
fresh server per module."""
import os

import grpc
import pytest

from conftest import KUBELET, Caller, Server

OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
OUT_OF_RANGE = grpc.StatusCode.OUT_OF_RANGE

VERSIONS = ["v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1", "v2alpha1"]
OLD = {"v1alpha1", "v1beta1", "v1beta2"}
GIB = 1 << 30
MIB = 1 << 20

BOOT_C = "\\\\?\\Volume{0a6f7c10-1111-4a2b-9c3d-000000000003}\\"
BOOT_ESP = "\\\\?\\Volume{0a6f7c10-1111-4a2b-9c3d-000000000001}\\"
EFI14 = "\\\\?\\Volume{14141414-0014-4000-8000-000000000001}\\"
STAGED = "\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\"
OFFLINE = "\\\\?\\Volume{10101010-0010-4000-8000-000000000001}\\"
REFS = "\\\\?\\Volume{11111111-0011-4000-8000-000000000001}\\"
PAGEFILE_D = "\\\\?\\Volume{15151515-0015-4000-8000-000000000001}\\"
DUMP = "\\\\?\\Volume{15151515-0015-4000-8000-000000000002}\\"
SNAPSHOT_E = "\\\\?\\Volume{16161616-0016-4000-8000-000000000001}\\"
UNKNOWN = "\\\\?\\Volume{00000000-0000-0000-0000-0000000000ff}\\"


def new_volume(n):
    """The ID the simulator gives the partition PartitionDisk creates on disk n."""
    return "\\\\?\\Volume{5157d15c-%04x-4000-8000-000000000001}\\" % n


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    s = Server(str(tmp_path_factory.mktemp("volume")))
    yield s
    s.stop()
    assert s.proc.returncode == 0


@pytest.fixture(scope="module")
def c(srv, pb):
    return Caller(srv, pb)


@pytest.fixture(scope="module")
def mkdir(srv):
    def make(winpath):
        os.makedirs(srv.host(winpath), exist_ok=True)
        return winpath
    return make


# --- per-version field names and legacy RPC names ------------------------

def list_volumes(c, v, disk, partition=0):
    if v in OLD:
        return c("volume", v, "ListVolumesOnDisk", disk_id=str(disk))
    return c("volume", v, "ListVolumesOnDisk", disk_number=disk, partition_number=partition)


def mount(c, v, vol, path):
    key = "path" if v in OLD else "target_path"
    return c("volume", v, "MountVolume", volume_id=vol, **{key: path})


def unmount(c, v, vol, path):
    if v in OLD:
        return c("volume", v, "DismountVolume", volume_id=vol, path=path)
    return c("volume", v, "UnmountVolume", volume_id=vol, target_path=path)


def resize(c, v, vol, size):
    key = "size" if v in OLD else "size_bytes"
    return c("volume", v, "ResizeVolume", volume_id=vol, **{key: size})


def stats(c, v, vol):
    """(total, used) via VolumeStats or GetVolumeStats; None where v has neither."""
    if v == "v1alpha1":
        return None
    if v in OLD:
        r, code, msg = c("volume", v, "VolumeStats", volume_id=vol)
        return ((r.volumeSize, r.volumeUsedSize) if r else None), code, msg
    r, code, msg = c("volume", v, "GetVolumeStats", volume_id=vol)
    return ((r.total_bytes, r.used_bytes) if r else None), code, msg


def disk_of(c, v, vol):
    if v in OLD:
        r, code, msg = c("volume", v, "GetVolumeDiskNumber", volume_id=vol)
        return (r.diskNumber if r else None), code, msg
    r, code, msg = c("volume", v, "GetDiskNumberFromVolumeID", volume_id=vol)
    return (r.disk_number if r else None), code, msg


def id_at(c, v, path):
    if v in OLD:
        r, code, msg = c("volume", v, "GetVolumeIDFromMount", mount=path)
    else:
        r, code, msg = c("volume", v, "GetVolumeIDFromTargetPath", target_path=path)
    return (r.volume_id if r else None), code, msg


# --- the staging flow, every version ------------------------------------

@pytest.mark.parametrize("v,n", list(zip(VERSIONS, [1, 2, 3, 4, 5, 6])))
def test_staging_flow(c, mkdir, v, n):
    vol = new_volume(n)
    _, code, msg = c("disk", "v1", "PartitionDisk", disk_number=n)
    assert code == OK, msg
    r, code, msg = list_volumes(c, v, n)
    assert code == OK, msg
    assert list(r.volume_ids) == [vol]

    r, code, msg = c("volume", v, "IsVolumeFormatted", volume_id=vol)
    assert (code, r.formatted) == (OK, False), msg
    for _ in range(2):  # formatting a formatted volume succeeds, as upstream
        _, code, msg = c("volume", v, "FormatVolume", volume_id=vol)
        assert code == OK, msg
    r, code, msg = c("volume", v, "IsVolumeFormatted", volume_id=vol)
    assert (code, r.formatted) == (OK, True), msg

    target = mkdir(f"{KUBELET}\\plugins\\kubernetes.io\\csi\\pv\\{v}\\globalmount")
    for _ in range(2):  # kubelet's retry: already mounted here is success
        _, code, msg = mount(c, v, vol, target)
        assert code == OK, msg

    if v != "v1alpha1":
        (total, used), code, msg = stats(c, v, vol)
        assert code == OK, msg
        # the partition takes the disk but its first MiB and the GPT backup's
        # (10 GiB, or 12 GiB once an earlier flow's Rescan grew the disks)
        r, _, _ = c("disk", "v1", "GetDiskStats", disk_number=n)
        assert total == r.total_bytes - 2 * MIB and 0 < used < total
        assert disk_of(c, v, vol)[:2] == (n, OK)
        assert id_at(c, v, target)[:2] == (vol, OK)
        assert id_at(c, v, target + "\\")[:2] == (vol, OK)
    if v == "v2alpha1":
        below = mkdir(target + "\\data\\pod")
        r, code, msg = c("volume", v, "GetClosestVolumeIDFromTargetPath", target_path=below)
        assert (code, r.volume_id) == (OK, vol), msg
    if v not in ("v1alpha1", "v1beta1"):
        _, code, msg = c("volume", v, "WriteVolumeCache", volume_id=vol)
        assert code == OK, msg

    # the disk was expanded: Rescan, then grow to the maximum
    _, code, msg = c("disk", "v1", "Rescan")
    assert code == OK, msg
    _, code, msg = resize(c, v, vol, 0)
    assert code == OK, msg
    if v != "v1alpha1":
        (total, _), code, _ = stats(c, v, vol)
        assert total == 12 * GIB - 2 * MIB

    for _ in range(2):  # a retry of an unmount succeeds too
        _, code, msg = unmount(c, v, vol, target)
        assert code == OK, msg
    assert os.path.isdir(c.server.host(target))  # the directory stays
    if v != "v1alpha1":
        _, code, msg = id_at(c, v, target)
        assert code == PRECONDITION and "not a mounted folder" in msg


# --- ListVolumesOnDisk ---------------------------------------------------

@pytest.mark.parametrize("v", VERSIONS)
def test_list_volumes(c, v):
    r, code, msg = list_volumes(c, v, 0)
    assert code == OK, msg
    assert list(r.volume_ids) == [BOOT_ESP, BOOT_C]  # the MSR has no volume
    r, _, _ = list_volumes(c, v, 12)
    assert list(r.volume_ids) == []
    r, _, _ = list_volumes(c, v, 10)  # offline
    assert list(r.volume_ids) == []
    _, code, msg = list_volumes(c, v, 99)
    assert code == NOT_FOUND and msg == "ListVolumesOnDisk: disk 99 not found"


@pytest.mark.parametrize("v", ["v1beta3", "v1", "v2alpha1"])
def test_list_volumes_by_partition(c, v):
    for part, want in ((0, [BOOT_ESP, BOOT_C]), (1, [BOOT_ESP]), (2, []), (3, [BOOT_C]), (9, [])):
        r, code, msg = list_volumes(c, v, 0, part)
        assert code == OK, msg
        assert list(r.volume_ids) == want, part


@pytest.mark.parametrize("v", sorted(OLD))
def test_list_volumes_string_disk_ids(c, v):
    for bad, why in (("", '""'), ("zero", '"zero"'), ("-0", '"-0"')):
        _, code, msg = c("volume", v, "ListVolumesOnDisk", disk_id=bad)
        assert code == INVALID
        assert msg == ("ListVolumesOnDisk: Failed to parse diskId: err=strconv.ParseUint: "
                       f"parsing {why}: invalid syntax")


# --- formats and sizes ---------------------------------------------------

@pytest.mark.parametrize("v", VERSIONS)
def test_is_volume_formatted_any_file_system(c, v):
    for vol in (BOOT_C, BOOT_ESP, REFS, STAGED):  # NTFS, FAT32, ReFS, NTFS
        r, code, msg = c("volume", v, "IsVolumeFormatted", volume_id=vol)
        assert (code, r.formatted) == (OK, True), msg


# Volumes Windows needs (issue 8 item 2): the volume's roles come from the
# fixture (test/fixtures/storage.yaml), the disk's boot/system flags too.
NEEDED = [
    (BOOT_ESP, "is the system volume (the boot loader's) and is on disk 0, the boot and system disk"),
    (BOOT_C, "is the boot volume (it holds Windows), holds the page file, holds the crash dump "
             "file and is on disk 0, the boot and system disk"),
    (EFI14, "is the system volume (the boot loader's) and is on disk 14, the system disk"),
    (PAGEFILE_D, "holds the page file"),
    (DUMP, "holds the crash dump file"),
]


def changes(c, v, vol, target):
    """Every call of version v that changes a volume: (what, (resp, code, msg))."""
    out = [("mount it", mount(c, v, vol, target)),
           ("unmount it", unmount(c, v, vol, target)),
           ("format it", c("volume", v, "FormatVolume", volume_id=vol)),
           ("resize it", resize(c, v, vol, 0))]
    if v not in ("v1alpha1", "v1beta1"):
        out.append(("flush its cache", c("volume", v, "WriteVolumeCache", volume_id=vol)))
    return out


@pytest.mark.parametrize("v", VERSIONS)
def test_volumes_windows_needs_are_refused(c, mkdir, v):
    target = mkdir(f"{KUBELET}\\pods\\needed-{v}\\volumes\\x")
    for vol, why in NEEDED:
        for what, (_, code, msg) in changes(c, v, vol, target):
            assert code == PRECONDITION, (vol, what, msg)
            assert f"volume {vol} {why}: refusing to {what}" in msg, msg
    # nothing happened: the directory is no mount point, D: is as it was
    if v != "v1alpha1":
        _, code, msg = id_at(c, v, target)
        assert code == PRECONDITION and "not a mounted folder" in msg
        (total, used), code, _ = stats(c, v, PAGEFILE_D)
        assert (code, total, used) == (OK, 8 * GIB, 4 * GIB)
    # the read-only calls still answer for them
    for vol, _ in NEEDED:
        r, code, msg = c("volume", v, "IsVolumeFormatted", volume_id=vol)
        assert (code, r.formatted) == (OK, True), msg
        if v != "v1alpha1":
            assert stats(c, v, vol)[1] == OK
            assert disk_of(c, v, vol)[1] == OK
    r, code, _ = list_volumes(c, v, 15)
    assert (code, list(r.volume_ids)) == (OK, [PAGEFILE_D, DUMP])


@pytest.mark.parametrize("v", VERSIONS)
def test_data_volume_with_a_drive_letter_works(c, mkdir, v):
    """A restored snapshot that Windows gave E: is a data volume like any other."""
    target = mkdir(f"{KUBELET}\\pods\\snapshot-{v}\\volumes\\e")
    for what, (_, code, msg) in changes(c, v, SNAPSHOT_E, target):
        assert code == OK, (what, msg)
    assert mount(c, v, SNAPSHOT_E, target)[1] == OK
    if v != "v1alpha1":
        assert id_at(c, v, target)[:2] == (SNAPSHOT_E, OK)
    assert unmount(c, v, SNAPSHOT_E, target)[1] == OK


def test_resize_rules(c):
    """Disk 9: a 2 GiB NTFS partition on an 8 GiB GPT disk."""
    def size():
        return stats(c, "v1", STAGED)[0][0]
    assert size() == 2 * GIB
    assert resize(c, "v1beta3", STAGED, 2 * GIB + 99 * MIB)[1] == OK  # under 100 MiB: skipped
    assert size() == 2 * GIB
    assert resize(c, "v1", STAGED, 1 * GIB)[1] == OK  # never shrinks
    assert size() == 2 * GIB
    assert resize(c, "v1alpha1", STAGED, 3 * GIB)[1] == OK  # `size` of old versions, in bytes
    assert size() == 3 * GIB
    _, code, msg = resize(c, "v1", STAGED, 9 * GIB)
    assert code == OUT_OF_RANGE and "can grow to 8587837440 bytes at most" in msg
    _, code, msg = resize(c, "v1beta1", STAGED, -5)
    assert code == INVALID and "is negative" in msg
    assert resize(c, "v2alpha1", STAGED, 0)[1] == OK  # 0: the maximum
    assert size() == 8 * GIB - 2 * MIB
    assert resize(c, "v1", STAGED, 0)[1] == OK  # nothing left: skipped
    (total, used), _, _ = stats(c, "v1beta2", STAGED)
    assert (total, used) == (8 * GIB - 2 * MIB, 512 * MIB)


# --- mounts --------------------------------------------------------------

def test_mount_rules(c, mkdir):
    a = mkdir(f"{KUBELET}\\pods\\p1\\volumes\\a")
    b = mkdir(f"{KUBELET}\\pods\\p1\\volumes\\b")
    assert mount(c, "v1", REFS, a)[1] == OK
    # a directory holding another volume's mount point
    _, code, msg = mount(c, "v1", STAGED, a)
    assert code == PRECONDITION and f"is already the mount point of volume {REFS}" in msg
    _, code, msg = unmount(c, "v1", STAGED, a)
    assert code == PRECONDITION and f"is the mount point of volume {REFS}" in msg
    # one volume in two places
    assert mount(c, "v1beta1", REFS, b)[1] == OK
    assert id_at(c, "v1beta2", b)[:2] == (REFS, OK)
    # a missing directory, an unknown or malformed volume
    _, code, msg = mount(c, "v1", REFS, f"{KUBELET}\\pods\\p1\\missing")
    assert code == NOT_FOUND and "does not exist" in msg
    _, code, msg = mount(c, "v1", UNKNOWN, b)
    assert code == NOT_FOUND and msg == f"MountVolume: volume {UNKNOWN} not found"
    _, code, msg = mount(c, "v1", "Volume{1234}", b)
    assert code == INVALID and "is not a volume GUID path" in msg
    # an offline disk's volume is not there
    _, code, msg = mount(c, "v1", OFFLINE, b)
    assert code == NOT_FOUND
    assert unmount(c, "v1beta2", REFS, a)[1] == OK
    assert unmount(c, "v2alpha1", REFS, b)[1] == OK


@pytest.mark.parametrize("v", VERSIONS)
def test_path_rules(c, v):
    outside = ["C:\\Windows\\System32", f"{KUBELET}-evil\\x", f"{KUBELET}\\..\\x",
               "\\\\server\\share\\x", "\\\\?\\C:\\var\\lib\\kubelet\\x", "relative\\x",
               f"{KUBELET}\\a/b", f"{KUBELET}\\x:stream"]
    for p in outside:
        _, code, msg = mount(c, v, STAGED, p)
        assert code == INVALID, (p, msg)
        _, code, msg = unmount(c, v, STAGED, p)
        assert code == INVALID, (p, msg)
        if v != "v1alpha1":
            _, code, msg = id_at(c, v, p)
            assert code == INVALID, (p, msg)
        if v == "v2alpha1":
            _, code, msg = c("volume", v, "GetClosestVolumeIDFromTargetPath", target_path=p)
            assert code == INVALID, (p, msg)
    _, code, msg = mount(c, v, STAGED, "C:\\Windows")
    assert "is not within the working directories: [C:\\csi-work C:\\var\\lib\\kubelet]" in msg


def test_closest_volume(c, mkdir):
    # nothing mounted on the way up: the volume of drive C:
    deep = mkdir(f"{KUBELET}\\pods\\p2\\volumes\\x\\y")
    for p in (deep, KUBELET, "C:\\csi-work"):
        r, code, msg = c("volume", "v2alpha1", "GetClosestVolumeIDFromTargetPath", target_path=p)
        assert (code, r.volume_id) == (OK, BOOT_C), msg
    _, code, msg = c("volume", "v2alpha1", "GetClosestVolumeIDFromTargetPath",
                     target_path=f"{KUBELET}\\pods\\nope")
    assert code == NOT_FOUND


# --- empty fields: upstream's texts, every version ------------------------

@pytest.mark.parametrize("v", VERSIONS)
def test_empty_fields(c, v):
    legacy = v in OLD

    def expect(rpc, text, **fields):
        _, code, msg = c("volume", v, rpc, **fields)
        assert code == INVALID, (rpc, msg)
        assert msg == f"{rpc}: {text}", msg

    expect("MountVolume", "MountVolumeRequest.VolumeId is empty")
    expect("MountVolume", "MountVolumeRequest.TargetPath is empty", volume_id=STAGED)
    if legacy:
        expect("DismountVolume", "Forward to UnmountVolume failed, err=volume id empty")
        expect("DismountVolume", "Forward to UnmountVolume failed, err=target path empty",
               volume_id=STAGED)
    else:
        expect("UnmountVolume", "volume id empty")
        expect("UnmountVolume", "target path empty", volume_id=STAGED)
    for rpc in ("IsVolumeFormatted", "FormatVolume", "ResizeVolume"):
        expect(rpc, "volume id empty")
    if v in ("v1beta1", "v1beta2"):
        expect("VolumeStats", "Forward to GetVolumeStats failed, err=volume id empty")
        expect("GetVolumeDiskNumber", "Forward to GetDiskNumberFromVolumeID failed, err=volume id empty")
        expect("GetVolumeIDFromMount",
               "Forward to GetVolumeIDFromTargetPath failed, err=target path is empty")
    if not legacy:
        expect("GetVolumeStats", "volume id empty")
        expect("GetDiskNumberFromVolumeID", "volume id empty")
        expect("GetVolumeIDFromTargetPath", "target path is empty")
    if v not in ("v1alpha1", "v1beta1"):
        expect("WriteVolumeCache", "volume id empty")
    if v == "v2alpha1":
        expect("GetClosestVolumeIDFromTargetPath", "target path is empty")


@pytest.mark.parametrize("v", VERSIONS)
def test_unknown_volume_is_not_found(c, v):
    rpcs = ["IsVolumeFormatted", "FormatVolume"]
    if v in ("v1beta1", "v1beta2"):
        rpcs += ["VolumeStats", "GetVolumeDiskNumber"]
    if v not in OLD:
        rpcs += ["GetVolumeStats", "GetDiskNumberFromVolumeID"]
    if v not in ("v1alpha1", "v1beta1"):
        rpcs += ["WriteVolumeCache"]
    for rpc in rpcs:
        _, code, msg = c("volume", v, rpc, volume_id=UNKNOWN)
        assert code == NOT_FOUND, (rpc, msg)
        assert f"volume {UNKNOWN} not found" in msg
    _, code, msg = resize(c, v, UNKNOWN, 0)
    assert code == NOT_FOUND


def test_offline_disk_volume_appears_when_online(c):
    assert c("volume", "v1", "IsVolumeFormatted", volume_id=OFFLINE)[1] == NOT_FOUND
    assert c("disk", "v1", "SetDiskState", disk_number=10, is_online=True)[1] == OK
    r, code, _ = c("volume", "v1", "IsVolumeFormatted", volume_id=OFFLINE)
    assert (code, r.formatted) == (OK, True)
    assert disk_of(c, "v1beta1", OFFLINE)[:2] == (10, OK)
    assert c("disk", "v1", "SetDiskState", disk_number=10, is_online=False)[1] == OK
    assert c("volume", "v1", "GetVolumeStats", volume_id=OFFLINE)[1] == NOT_FOUND
