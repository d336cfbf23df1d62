"""The storage guards over gRPC (python3-grpcio) against the native build on
the storage simulator, every version that has the call:

  * a disk that comes back read-only (DISK_ATTRIBUTE_READ_ONLY) is made
    writable by SetDiskState / SetAttachState (online) and by PartitionDisk;
    write-protected media is FAILED_PRECONDITION naming the disk, and the
    disk is left as it was;
  * FormatVolume refuses a volume whose first bytes hold a file system or
    container Windows does not mount, naming it, while IsVolumeFormatted keeps
    upstream's answer (false). (groups.volume.formatForeignFilesystems: the
    native build reads no configuration file; test_storage_guards (unit)
    covers the key.)

Each case has its own disk, so the order of the tests does not matter."""
import struct

import grpc
import pytest

from conftest import Caller, Server

OK = grpc.StatusCode.OK
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION

DISK_VERSIONS = ["v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1"]
VOLUME_VERSIONS = ["v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1", "v2alpha1"]
OLD = {"v1alpha1", "v1beta1", "v1beta2"}


def hexat(offset, data):
    return f"'{offset}:{data.hex()}'"


# The first bytes each format's tools write (test_fssig has the layouts).
SIGNATURES = {
    "ext": ("ext2/3/4 (superblock magic 0xEF53 at byte 1080)",
            [hexat(1024, struct.pack("<II", 65536, 262144)), hexat(1048, struct.pack("<I", 2)),
             hexat(1080, struct.pack("<HH", 0xEF53, 1))]),
    "xfs": ("XFS", [hexat(0, b"XFSB" + struct.pack(">I", 4096))]),
    "btrfs": ("Btrfs", [hexat(65536 + 48, struct.pack("<Q", 65536)), hexat(65600, b"_BHRfS_M")]),
    "lvm": ("LVM2", [hexat(512, b"LABELONE" + struct.pack("<QII", 1, 0, 32) + b"LVM2 001")]),
    "luks": ("LUKS", [hexat(0, b"LUKS\xba\xbe\x00\x02luks2")]),
    "zfs": ("ZFS", [hexat(128 * 1024 + 3 * 1024, struct.pack("<QQ", 0x00BAB10C, 5000))]),
    "swap": ("Linux swap", [hexat(1024, struct.pack("<I", 1)), hexat(4086, b"SWAPSPACE2")]),
    "gpt": ("GPT partition table", [hexat(512, b"EFI PART" + struct.pack("<II", 0x10000, 92))]),
    "mbr": ("MBR partition table",
            [hexat(446, struct.pack("<B3xB3xII", 0x80, 0x83, 2048, 1 << 20)),
             hexat(510, b"\x55\xaa")]),
}
NAMES = list(SIGNATURES)


def guid(disk, part):
    return f"{disk:08x}-{disk:04x}-4000-8000-{part:012x}"


def volume_id(disk, part):
    return "\\\\?\\Volume{" + guid(disk, part) + "}\\"


FIXTURE = "disks:\n" + "".join(
    # 40 + i: offline and read-only, a RAW volume (one per disk version)
    f"  - {{number: {40 + i}, size: 2GiB, online: false, read_only: true, style: gpt,"
    f" partitions: [{{size: 1GiB, volume: {{guid: '{{{guid(40 + i, 1)}}}'}}}}]}}\n"
    # 50 + i: online, RAW, read-only (PartitionDisk)
    f"  - {{number: {50 + i}, size: 2GiB, read_only: true}}\n"
    for i in range(len(DISK_VERSIONS))) + \
    "  - {number: 60, size: 2GiB, online: false, write_protected: true}\n" + \
    "".join(
        # 70 + v: one volume per signature, one disk per volume version
        f"  - {{number: {70 + v}, size: 8GiB, style: gpt, partitions: ["
        + ", ".join(f"{{size: 256MiB, volume: {{guid: '{{{guid(70 + v, p + 1)}}}',"
                    f" bytes: [{', '.join(SIGNATURES[n][1])}]}}}}"
                    for p, n in enumerate(NAMES))
        + "]}\n"
        for v in range(len(VOLUME_VERSIONS)))


@pytest.fixture(scope="module")
def c(tmp_path_factory, pb):
    base = tmp_path_factory.mktemp("guards")
    fx = base / "guards.yaml"
    fx.write_text(FIXTURE)
    s = Server(str(base / "srv"), fixture=str(fx))
    yield Caller(s, pb)
    s.stop()
    assert s.proc.returncode == 0


def disk_arg(v, n):
    return {"diskID": str(n)} if v in OLD else {"disk_number": n}


def set_online(c, v, n, online=True):
    if v == "v1beta2":
        return c("disk", v, "SetAttachState", diskID=str(n), isOnline=online)
    return c("disk", v, "SetDiskState", disk_number=n, is_online=online)


def is_online(c, n):
    r, code, details = c("disk", "v1", "GetDiskState", disk_number=n)
    assert code == OK, details
    return r.is_online


def format_volume(c, v, vid):
    return c("volume", v, "FormatVolume", volume_id=vid)


def is_formatted(c, v, vid):
    r, code, details = c("volume", v, "IsVolumeFormatted", volume_id=vid)
    assert code == OK, details
    return r.formatted


@pytest.mark.parametrize("v", ["v1beta2", "v1beta3", "v1"])
def test_online_makes_a_read_only_disk_writable(c, v):
    n = 40 + DISK_VERSIONS.index(v)
    _, code, details = set_online(c, v, n)
    assert code == OK, details
    assert is_online(c, n)
    # writes work: its volume formats
    _, code, details = format_volume(c, "v1", volume_id(n, 1))
    assert code == OK, details
    assert is_formatted(c, "v1", volume_id(n, 1))


@pytest.mark.parametrize("v", DISK_VERSIONS)
def test_partition_disk_makes_a_read_only_disk_writable(c, v):
    n = 50 + DISK_VERSIONS.index(v)
    _, code, details = c("disk", v, "PartitionDisk", **disk_arg(v, n))
    assert code == OK, details
    r, code, details = c("volume", "v1", "ListVolumesOnDisk", disk_number=n)
    assert code == OK and len(r.volume_ids) == 1, details


@pytest.mark.parametrize("v", ["v1beta2", "v1beta3", "v1"])
def test_write_protected_media_is_refused(c, v):
    _, code, details = set_online(c, v, 60)
    assert code == PRECONDITION
    assert "disk 60 is write-protected at the hardware (the media is write protected)" in details
    assert not is_online(c, 60)


@pytest.mark.parametrize("v", DISK_VERSIONS)
def test_write_protected_media_is_not_partitioned(c, v):
    _, code, details = c("disk", v, "PartitionDisk", **disk_arg(v, 60))
    assert code == PRECONDITION
    assert "disk 60 is write-protected at the hardware" in details
    assert not is_online(c, 60)


@pytest.mark.parametrize("v", VOLUME_VERSIONS)
@pytest.mark.parametrize("name", NAMES)
def test_format_volume_refuses_a_foreign_file_system(c, v, name):
    vid = volume_id(70 + VOLUME_VERSIONS.index(v), NAMES.index(name) + 1)
    assert not is_formatted(c, v, vid)  # upstream's answer
    _, code, details = format_volume(c, v, vid)
    assert code == PRECONDITION, details
    assert SIGNATURES[name][0] in details and vid in details, details
    assert "refusing to format over it" in details, details
    assert not is_formatted(c, v, vid)
