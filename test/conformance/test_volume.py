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


# Volumes Windows needs: the volume's roles come from the
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


# --- driver contracts (DRIVER-CONTRACTS.md §9) -----------------------------
# A server of their own: these tests mount the fixture's formatted, unmounted
# volume STAGED (disk 9) at folders of their own and apply each driver's own
# decision to the answers.

import re

# aws-ebs-csi-driver pkg/mounter/mount_windows.go:152, matched against the
# whole err.Error() of the Go client (our code is not Unknown; EBS looks
# only at the text, so the prefix form upstream's server produced is used).
EBS_NOT_MOUNTED = r"(Get-Item -Path \S+).Target, output: , error: <nil>|because it does not exist"


def ebs_sees_not_mounted(msg):
    return re.search(EBS_NOT_MOUNTED, "rpc error: code = Unknown desc = " + msg) is not None


ID_VERSIONS = ["v1beta1", "v1beta2", "v1beta3", "v1", "v2alpha1"]  # versions with the RPC


@pytest.fixture(scope="module")
def dsrv(tmp_path_factory):
    s = Server(str(tmp_path_factory.mktemp("contracts")))
    yield s
    s.stop()
    assert s.proc.returncode == 0


@pytest.fixture(scope="module")
def d(dsrv, pb):
    return Caller(dsrv, pb)


def stage_dir(name):
    return f"{KUBELET}\\plugins\\kubernetes.io\\csi\\ebs.csi.aws.com\\{name}\\globalmount"


def pod_dir(name):
    return f"{KUBELET}\\pods\\{name}\\volumes\\kubernetes.io~csi\\pvc-{name}\\mount"


def fs_mkdir(d, path):
    _, code, msg = d("filesystem", "v1", "Mkdir", path=path)
    assert code == OK, msg
    return path


def staged_at(d, name):
    """EBS NodeStage: Mkdir the staging dir, then MountVolume there."""
    target = fs_mkdir(d, stage_dir(name))
    _, code, msg = mount(d, "v1", STAGED, target)
    assert code == OK, msg
    return target


@pytest.mark.parametrize("v", ID_VERSIONS)
def test_fact04_empty_staging_dir_text_matches_ebs_regex(d, v):
    target = fs_mkdir(d, stage_dir(f"fact04-{v}"))  # fresh, empty, nothing mounted
    vol, code, msg = id_at(d, v, target)
    assert code == PRECONDITION, msg  # our code and our explanation stay
    assert "not a mounted folder" in msg and target in msg
    assert ebs_sees_not_mounted(msg), msg  # EBS: "not staged yet", NodeStage goes on


@pytest.mark.parametrize("v", ID_VERSIONS)
def test_fact05_missing_path_text_matches_ebs_regex(d, v):
    target = stage_dir(f"fact05-{v}")  # an unstage retry: the directory is gone
    vol, code, msg = id_at(d, v, target)
    assert code == NOT_FOUND, msg
    assert "does not exist" in msg and target in msg
    assert ebs_sees_not_mounted(msg), msg  # EBS: nothing there, NodeUnstage succeeds


@pytest.mark.parametrize("v", ["v1beta3", "v1", "v2alpha1"])
def test_fact06_pod_symlink_resolves_to_staged_volume(d, v):
    target = staged_at(d, f"fact06-{v}")
    pod = pod_dir(f"fact06-{v}")
    fs_mkdir(d, pod.rsplit("\\", 1)[0])
    _, code, msg = d("filesystem", "v1", "CreateSymlink", source_path=target, target_path=pod)
    assert code == OK, msg
    # EBS expand, azuredisk and GCE stats/expand: the id behind the pod path
    assert id_at(d, v, pod)[:2] == (STAGED, OK)
    assert id_at(d, v, target)[:2] == (STAGED, OK)
    r, code, msg = d("volume", v, "GetVolumeStats", volume_id=STAGED)
    assert code == OK and r.total_bytes > 0, msg
    # a link to that link (two steps) leads there too
    pod2 = pod_dir(f"fact06-{v}-2")
    fs_mkdir(d, pod2.rsplit("\\", 1)[0])
    _, code, msg = d("filesystem", "v1", "CreateSymlink", source_path=pod, target_path=pod2)
    assert code == OK, msg
    assert id_at(d, v, pod2)[:2] == (STAGED, OK)


def test_fact06_links_are_confined_and_bounded(d, dsrv):
    # a link leading out of the kubelet directory is refused, not followed
    outside = os.path.join(dsrv.root, "C", "Windows")
    os.makedirs(outside, exist_ok=True)
    out_link = pod_dir("fact06-out")
    os.makedirs(os.path.dirname(dsrv.host(out_link)), exist_ok=True)
    os.symlink(outside, dsrv.host(out_link))
    _, code, msg = id_at(d, "v1", out_link)
    assert code == INVALID and "not within the working directories" in msg, msg
    # a link to a plain directory: not mounted, in EBS's words too
    plain = fs_mkdir(d, stage_dir("fact06-plain"))
    pl = pod_dir("fact06-plain")
    fs_mkdir(d, pl.rsplit("\\", 1)[0])
    assert d("filesystem", "v1", "CreateSymlink", source_path=plain, target_path=pl)[1] == OK
    _, code, msg = id_at(d, "v1", pl)
    assert code == PRECONDITION and ebs_sees_not_mounted(msg), msg
    # a loop answers at once (the host refuses to resolve it)
    loop = pod_dir("fact06-loop")
    os.makedirs(os.path.dirname(dsrv.host(loop)), exist_ok=True)
    os.symlink(dsrv.host(loop), dsrv.host(loop))
    _, code, msg = id_at(d, "v1", loop)
    assert code not in (OK, grpc.StatusCode.DEADLINE_EXCEEDED), msg


@pytest.mark.parametrize("v", ["v1", "v2alpha1"])
def test_fact07_driveless_raw_kubelet_paths_on_volume_rpcs(d, dsrv, v):
    target = fs_mkdir(d, stage_dir(f"fact07-{v}"))
    raw = target[2:]  # "\var\lib\kubelet\...": kubelet's root without a drive
    assert raw.startswith("\\var\\")
    _, code, msg = mount(d, v, STAGED, raw)
    assert code == OK, msg
    assert id_at(d, v, raw)[:2] == (STAGED, OK)
    assert id_at(d, v, target)[:2] == (STAGED, OK)  # the same folder
    r, code, msg = d("volume", v, "GetClosestVolumeIDFromTargetPath", target_path=raw) \
        if v == "v2alpha1" else (None, OK, "")
    assert code == OK, msg
    _, code, msg = unmount(d, v, STAGED, raw)
    assert code == OK, msg
    _, code, msg = id_at(d, v, raw)
    assert code == PRECONDITION and ebs_sees_not_mounted(msg), msg
    # confinement holds for drive-less paths: outside, UNC, and the root itself
    for bad in ("\\Windows\\System32", "\\\\host\\share\\x", "\\var\\lib\\kubelet"):
        _, code, msg = mount(d, v, STAGED, bad)
        assert code == INVALID, (bad, msg)


@pytest.mark.parametrize("v", ["v1", "v2alpha1"])
def test_fact08_lowercase_drive_on_volume_rpcs(d, v):
    target = fs_mkdir(d, stage_dir(f"fact08-{v}"))
    low = "c" + target[1:]  # mount-utils' NormalizeWindowsPath form
    _, code, msg = mount(d, v, STAGED, low)
    assert code == OK, msg
    assert id_at(d, v, target)[:2] == (STAGED, OK)
    assert id_at(d, v, low)[:2] == (STAGED, OK)
    _, code, msg = unmount(d, v, STAGED, low)
    assert code == OK, msg
    _, code, msg = mount(d, v, STAGED, "c:\\var\\lib\\kubelet\\")  # a root, any case
    assert code == INVALID and "configured directory" in msg, msg


@pytest.mark.parametrize("v", ["v1alpha1", "v1beta1", "v1beta2", "v1", "v2alpha1"])
def test_fact10_is_symlink_true_on_mounted_staging_folder(d, v):
    method, field = ("IsMountPoint", "is_mount_point") if v in ("v1alpha1", "v1beta1") \
        else ("IsSymlink", "is_symlink")
    target = staged_at(d, f"fact10-{v}")
    for p in (target, "c" + target[1:]):
        r, code, msg = d("filesystem", v, method, path=p)
        assert code == OK and getattr(r, field) is True, msg  # azuredisk/GCE: already staged
    if v in ("v1", "v2alpha1"):  # GCE sends the raw path (fact 7)
        r, code, msg = d("filesystem", v, method, path=target[2:])
        assert code == OK and getattr(r, field) is True, msg
    _, code, msg = unmount(d, "v1", STAGED, target)
    assert code == OK, msg
    r, code, msg = d("filesystem", v, method, path=target)
    assert code == OK and getattr(r, field) is False, msg
    _, code, msg = d("filesystem", v, method, path=target + "-missing")
    assert code != OK, msg  # an error, not false, for a missing path


def test_fact11c_rmdir_force_of_mount_folder_removes_the_mount_not_the_files(d, dsrv):
    target = staged_at(d, "fact11c")
    with open(os.path.join(dsrv.host(target), "volume-data.txt"), "w") as f:
        f.write("kept")
    (total, used), code, msg = stats(d, "v1", STAGED)
    assert code == OK, msg
    # azuredisk NodeUnstage: Rmdir(force) with no UnmountVolume
    _, code, msg = d("filesystem", "v1", "Rmdir", path=target, force=True)
    assert code == OK, msg
    assert not os.path.exists(dsrv.host(target))
    fs_mkdir(d, target)  # a new folder at the same path is not the old mount
    _, code, msg = id_at(d, "v1", target)
    assert code == PRECONDITION and ebs_sees_not_mounted(msg), msg
    r, code, msg = d("filesystem", "v1", "IsSymlink", path=target)
    assert code == OK and r.is_symlink is False, msg
    # the volume and its files are intact
    assert stats(d, "v1", STAGED) == ((total, used), OK, "")
    r, code, msg = d("volume", "v1", "IsVolumeFormatted", volume_id=STAGED)
    assert code == OK and r.formatted, msg
    kept = [os.path.join(root, f) for root, _, files in
            os.walk(os.path.join(dsrv.root, ".sim-volumes")) for f in files]
    assert any(p.endswith("volume-data.txt") and open(p).read() == "kept" for p in kept)
    # a parent removed with force takes the mount point inside with it
    again = staged_at(d, "fact11c-parent")
    _, code, msg = d("filesystem", "v1", "Rmdir", path=again.rsplit("\\", 1)[0], force=True)
    assert code == OK, msg
    fs_mkdir(d, again)
    _, code, msg = id_at(d, "v1", again)
    assert code == PRECONDITION, msg
    _, code, msg = mount(d, "v1", STAGED, again)  # and the volume mounts again
    assert code == OK, msg
