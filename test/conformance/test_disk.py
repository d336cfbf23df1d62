"""Disk group conformance: python3-grpcio (Google's gRPC core) calls every
disk RPC of every version (v1alpha1, v1beta1, v1beta2, v1beta3, v1: 30
RPCs) on the native build, whose disks come from the storage simulator
seeded with test/fixtures/storage.yaml. A fresh server per module, so the
simulator's state is this module's alone."""
import os
import threading
import time

import grpc
import pytest

from conftest import STORAGE_FIXTURE, Caller, Server

OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION

VERSIONS = ["v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1"]
OLD = {"v1alpha1", "v1beta1", "v1beta2"}  # string disk IDs and map keys

# What ListDiskIDs must say for the fixture's disks, byte for byte.
IDS = {
    0: ("6002248069d7a1b6e0c1b4f3a2d91c00", "6002248069d7a1b6e0c1b4f3a2d91c00"),
    1: ("60022480aa00000000000000000000f1", "DATA0001"),
    5: ("eui.0a1b2c3d4e5f6000050000000000000005", "vol0a1b2c3d4e5f60005_00000001."),
    9: ("Google  PersistentDisk  pvc-staged", "pvc-staged"),
    10: ("0025385b71b0a010", "OFFLINE10"),
    11: ("5000c500a1b2c3d4", "MBR11"),
    12: ("", ""),
    13: ("0025385b71b0a013", "S3Z9NB0K123456A"),
    14: ("", "EFI14"),
}
# ListDiskLocations: (Adapter, Bus, Target, LUNID); disks 12 and 14 have none.
LOCATIONS = {
    0: ("0", "", "0", "0"),
    1: ("1", "", "0", "1"),
    4: ("1", "", "0", "4"),
    5: ("5", "", "0", "0"),
    9: ("2", "", "1", "0"),
    11: ("3", "", "0", "11"),
    13: ("4", "", "13", "7"),
}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    s = Server(str(tmp_path_factory.mktemp("disk")))
    yield s
    s.stop()
    assert s.proc.returncode == 0


@pytest.fixture(scope="module")
def c(srv, pb):
    return Caller(srv, pb)


def disk_arg(v, n):
    """The disk-number field of PartitionDisk/DiskStats/... in version v."""
    return {"diskID": str(n)} if v in OLD else {"disk_number": n}


@pytest.mark.parametrize("v", VERSIONS[1:])
def test_list_disk_ids(c, v):
    r, code, msg = c("disk", v, "ListDiskIDs")
    assert code == OK, msg
    assert len(r.diskIDs) == 18  # 0..16 and 19; 20 does not answer
    for n, (page83, serial) in IDS.items():
        if v in OLD:
            ids = r.diskIDs[str(n)].identifiers
            assert dict(ids) == {"page83": page83, "serialNumber": serial}
        else:
            assert r.diskIDs[n].page83 == page83
            assert r.diskIDs[n].serial_number == serial


@pytest.mark.parametrize("v", VERSIONS)
def test_list_disk_locations(c, v):
    r, code, msg = c("disk", v, "ListDiskLocations")
    assert code == OK, msg
    key = str if v in OLD else int
    got = {k: (l.Adapter, l.Bus, l.Target, l.LUNID) for k, l in r.disk_locations.items()}
    for n, loc in LOCATIONS.items():
        assert got[key(n)] == loc
    assert key(12) not in got and key(14) not in got
    assert len(got) == 13


def test_get_disk_number_by_name(c):
    r, code, msg = c("disk", "v1alpha1", "GetDiskNumberByName",
                     disk_name="Google  PersistentDisk  pvc-staged")
    assert code == OK, msg
    assert r.disk_number == "9"
    r, code, msg = c("disk", "v1alpha1", "GetDiskNumberByName",
                     disk_name="eui.0a1b2c3d4e5f6000050000000000000005")
    assert (code, r.disk_number) == (OK, "5")
    _, code, msg = c("disk", "v1alpha1", "GetDiskNumberByName", disk_name="no-such-id")
    assert code == NOT_FOUND
    assert msg == "GetDiskNumberByName: could not find disk with Page83 ID no-such-id"


# disk 20 answers nothing (ERROR_NOT_READY on Windows: an
# empty virtual-media drive, a disk vanishing mid-detach). The listings
# leave it out and answer for every other disk; calls naming it fail
# UNAVAILABLE, naming it and the cause; the server logs the skip.
@pytest.mark.parametrize("v", VERSIONS)
def test_unreadable_disk_is_skipped_not_fatal(srv, c, v):
    key = str if v in OLD else int
    if v != "v1alpha1":
        r, code, msg = c("disk", v, "ListDiskIDs")
        assert code == OK, msg
        assert key(20) not in r.diskIDs and key(19) in r.diskIDs and key(13) in r.diskIDs
    r, code, msg = c("disk", v, "ListDiskLocations")
    assert code == OK, msg
    assert key(20) not in r.disk_locations and key(13) in r.disk_locations
    if v == "v1alpha1":
        r, code, msg = c("disk", v, "GetDiskNumberByName",
                         disk_name="eui.0a1b2c3d4e5f6000050000000000000005")
        assert (code, r.disk_number) == (OK, "5"), msg
        _, code, msg = c("disk", v, "GetDiskNumberByName",
                         disk_name="60022480aa00000000000000000000ee")
        assert code == NOT_FOUND, msg
    if v != "v1alpha1":
        _, code, msg = stats(c, v, 20)
        assert code == grpc.StatusCode.UNAVAILABLE
        assert "disk 20" in msg and "not ready" in msg
    srv.log.flush()
    with open(srv.log.name) as f:
        assert "skipping IOCTL_DISK_GET_LENGTH_INFO disk 20: The device is not ready" in f.read()


@pytest.mark.parametrize("v", VERSIONS)
def test_rescan(c, v):
    _, code, msg = c("disk", v, "Rescan")
    assert code == OK, msg


def stats(c, v, n):
    if v in ("v1beta1", "v1beta2"):
        r, code, msg = c("disk", v, "DiskStats", diskID=str(n))
        return (r.diskSize if r else None), code, msg
    r, code, msg = c("disk", v, "GetDiskStats", disk_number=n)
    return (r.total_bytes if r else None), code, msg


@pytest.mark.parametrize("v", ["v1beta1", "v1beta2", "v1beta3", "v1"])
def test_disk_stats(c, v):
    assert stats(c, v, 9)[:2] == (8 << 30, OK)
    assert stats(c, v, 0)[:2] == (128 << 30, OK)
    size, code, msg = stats(c, v, 77)
    assert code == NOT_FOUND
    assert "disk 77 not found" in msg


def test_disk_stats_bad_string_ids(c):
    _, code, msg = c("disk", "v1beta1", "DiskStats", diskID="disk1")
    assert code == INVALID
    assert msg == ('DiskStats: Failed to format DiskStatsRequest.DiskID with err: '
                   'strconv.ParseUint: parsing "disk1": invalid syntax')


def get_state(c, v, n):
    if v == "v1beta2":
        r, code, msg = c("disk", v, "GetAttachState", diskID=str(n))
        return (r.isOnline if r else None), code, msg
    r, code, msg = c("disk", v, "GetDiskState", disk_number=n)
    return (r.is_online if r else None), code, msg


def set_state(c, v, n, online):
    if v == "v1beta2":
        return c("disk", v, "SetAttachState", diskID=str(n), isOnline=online)
    return c("disk", v, "SetDiskState", disk_number=n, is_online=online)


@pytest.mark.parametrize("v", ["v1beta2", "v1beta3", "v1"])
def test_disk_state(c, v):
    # disk 10 starts offline; its volume shows only while it is online
    assert get_state(c, v, 10)[:2] == (False, OK)
    for online in (True, True, False, False, True):  # repeats are no-ops
        _, code, msg = set_state(c, v, 10, online)
        assert code == OK, msg
        assert get_state(c, v, 10)[:2] == (online, OK)
        r, code, _ = c("volume", "v1", "ListVolumesOnDisk", disk_number=10)
        assert len(r.volume_ids) == (1 if online else 0)
    _, code, _ = set_state(c, v, 10, False)
    assert code == OK
    _, code, msg = set_state(c, v, 404, True)
    assert code == NOT_FOUND and "disk 404 not found" in msg
    _, code, msg = get_state(c, v, 404)
    assert code == NOT_FOUND


@pytest.mark.parametrize("v", ["v1beta2", "v1beta3", "v1"])
def test_boot_and_system_disks_stay_online(c, v):
    for n, what in ((0, "boot and system"), (14, "system")):
        _, code, msg = set_state(c, v, n, False)
        assert code == PRECONDITION, msg
        assert f"disk {n} is the {what} disk: refusing to take it offline" in msg
        assert get_state(c, v, n)[:2] == (True, OK)
        _, code, msg = set_state(c, v, n, True)  # online is harmless
        assert code == OK, msg


@pytest.mark.parametrize("v", ["v1beta2", "v1beta3", "v1"])
def test_disk_with_page_file_or_dump_volume_stays_online(c, v):
    """Disk 15 is a data disk (as Azure's temporary disk) holding the page
    file on D: and a dedicated dump file: taking it offline is refused."""
    _, code, msg = set_state(c, v, 15, False)
    assert code == PRECONDITION, msg
    assert ("volume \\\\?\\Volume{15151515-0015-4000-8000-000000000001}\\ holds the page file: "
            "refusing to take disk 15 offline") in msg
    assert get_state(c, v, 15)[:2] == (True, OK)
    # a data disk whose volume Windows gave E: goes offline and back
    for online in (False, True):
        assert set_state(c, v, 16, online)[1] == OK
        assert get_state(c, v, 16)[:2] == (online, OK)


def test_attach_state_bad_ids(c):
    _, code, msg = c("disk", "v1beta2", "SetAttachState", diskID="", isOnline=True)
    assert code == INVALID
    assert msg == ('SetAttachState: Failed to format SetAttachStateRequest.DiskID with err: '
                   'strconv.ParseUint: parsing "": invalid syntax')
    _, code, msg = c("disk", "v1beta2", "GetAttachState", diskID="99999999999999999999")
    assert code == INVALID
    assert msg.endswith('strconv.ParseUint: parsing "99999999999999999999": value out of range')


# One fresh disk per version: 1..5.
@pytest.mark.parametrize("v,n", list(zip(VERSIONS, [1, 2, 3, 4, 5])))
def test_partition_disk(c, v, n):
    r, code, _ = c("volume", "v1", "ListVolumesOnDisk", disk_number=n)
    assert code == OK and list(r.volume_ids) == []
    for _ in range(2):  # a retry changes nothing
        _, code, msg = c("disk", v, "PartitionDisk", **disk_arg(v, n))
        assert code == OK, msg
        r, code, _ = c("volume", "v1", "ListVolumesOnDisk", disk_number=n)
        assert list(r.volume_ids) == ["\\\\?\\Volume{5157d15c-%04x-4000-8000-000000000001}\\" % n]


@pytest.mark.parametrize("v", VERSIONS)
def test_partition_disk_refusals(c, v):
    # a system disk it would change (an ESP, no basic partition): refused
    _, code, msg = c("disk", v, "PartitionDisk", **disk_arg(v, 14))
    assert code == PRECONDITION
    assert "PartitionDisk: disk 14 is the system disk: refusing to partition it" == msg
    r, _, _ = c("volume", "v1", "ListVolumesOnDisk", disk_number=14)
    assert len(r.volume_ids) == 1
    # an offline partitioned disk needs nothing
    _, code, msg = c("disk", v, "PartitionDisk", **disk_arg(v, 10))
    assert code == OK, msg
    _, code, msg = c("disk", v, "PartitionDisk", **disk_arg(v, 4242))
    assert code == NOT_FOUND and msg == "PartitionDisk: disk 4242 not found"
    # already partitioned (GPT, MBR): success, nothing changes
    for n in (9, 11):
        _, code, msg = c("disk", v, "PartitionDisk", **disk_arg(v, n))
        assert code == OK, msg
        r, _, _ = c("volume", "v1", "ListVolumesOnDisk", disk_number=n)
        assert len(r.volume_ids) == 1


# drivers call PartitionDisk before SetDiskState(online),
# and a SAN policy may keep a new disk offline. A RAW offline disk is
# brought online (it has no volume to expose) and partitioned; the
# SetDiskState(online) that follows is a no-op.
@pytest.mark.parametrize("v,n", list(zip(VERSIONS, [6, 7, 8, 12])))
def test_partition_disk_raw_offline(c, v, n):
    _, code, _ = c("disk", "v1", "SetDiskState", disk_number=n, is_online=False)
    assert code == OK
    _, code, msg = c("disk", v, "PartitionDisk", **disk_arg(v, n))
    assert code == OK, msg
    r, code, _ = c("disk", "v1", "GetDiskState", disk_number=n)
    assert code == OK and r.is_online
    _, code, _ = c("disk", "v1", "SetDiskState", disk_number=n, is_online=True)
    assert code == OK
    r, _, _ = c("volume", "v1", "ListVolumesOnDisk", disk_number=n)
    assert len(r.volume_ids) == 1


# a boot or system disk is refused only when PartitionDisk
# would change it. Disk 19 is a restored boot-disk snapshot attached as
# data (ESP, MSR, a basic NTFS volume); the boot disk 0 has its C: volume.
# Both are already what PartitionDisk makes: success, nothing changes.
@pytest.mark.parametrize("v", VERSIONS)
def test_partition_disk_boot_or_system_noop(c, v):
    for n in (19, 0):
        before, code, _ = c("volume", "v1", "ListVolumesOnDisk", disk_number=n)
        assert code == OK and len(before.volume_ids) >= 1
        _, code, msg = c("disk", v, "PartitionDisk", **disk_arg(v, n))
        assert code == OK, msg
        after, _, _ = c("volume", "v1", "ListVolumesOnDisk", disk_number=n)
        assert list(after.volume_ids) == list(before.volume_ids)


@pytest.mark.parametrize("v", sorted(OLD))
def test_partition_disk_string_ids(c, v):
    for bad, why in (("", 'parsing "": invalid syntax'), ("1 ", 'parsing "1 ": invalid syntax'),
                     ("-1", 'parsing "-1": invalid syntax'), ("0x1", 'parsing "0x1": invalid syntax'),
                     ("18446744073709551616", 'parsing "18446744073709551616": value out of range')):
        _, code, msg = c("disk", v, "PartitionDisk", diskID=bad)
        assert code == INVALID
        assert msg == (f"PartitionDisk: Failed to convert {v}.PartitionDiskRequest.DiskID to "
                       f"uint32: strconv.ParseUint: {why}")
    # upstream truncates 2^32 + 9 to disk 9; we refuse it
    _, code, msg = c("disk", v, "PartitionDisk", diskID="4294967305")
    assert code == INVALID and "out of range" in msg


def test_rescan_reveals_grown_disks(tmp_path, pb):
    """Disks 1-8 of the fixture grow from 10 to 12 GiB at the first Rescan,
    as a disk expanded by the cloud does when the host rescans."""
    s = Server(str(tmp_path))
    try:
        c = Caller(s, pb)
        assert stats(c, "v1", 6)[:2] == (10 << 30, OK)
        _, code, _ = c("disk", "v1beta1", "Rescan")
        assert code == OK
        assert stats(c, "v1", 6)[:2] == (12 << 30, OK)
    finally:
        s.stop()


# --- serialization per disk, parallelism across disks -------------------

def slow_fixture(tmp_path, ms):
    p = tmp_path / "slow.yaml"
    with open(STORAGE_FIXTURE) as f:
        p.write_text(f"latency_ms: {ms}\n" + f.read())
    return str(p)


def test_calls_on_one_disk_are_serialized_different_disks_parallel(tmp_path, pb):
    lat = 300
    s = Server(str(tmp_path / "srv"), fixture=slow_fixture(tmp_path, lat))
    try:
        c = Caller(s, pb)

        def run(calls):
            out = [None] * len(calls)

            def one(i, args):
                out[i] = c(*args[0], **args[1])[1:]
            ts = [threading.Thread(target=one, args=(i, a)) for i, a in enumerate(calls)]
            t0 = time.time()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            return time.time() - t0, out

        # 8 disks partitioned at once (init GPT + create: 2 operations each)
        took, res = run([(("disk", "v1", "PartitionDisk"), {"disk_number": n}) for n in range(1, 9)])
        assert all(r == (OK, "") for r in res), res
        assert took < 8 * 2 * lat / 1000 / 2, took
        # 4 formats of one volume at once: each waits for the previous (the
        # simulator refuses overlapping operations on a disk, with ABORTED).
        # Four versions: identical calls in flight share one run
        # (test_inflight.py), different ones queue.
        vol = "\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\"
        took, res = run([(("volume", v, "FormatVolume"), {"volume_id": vol})
                         for v in ("v1", "v1beta3", "v1beta2", "v1beta1")])
        assert all(r == (OK, "") for r in res), res
        assert took >= 4 * lat / 1000 * 0.95, took
        # and 4 formats on 4 disks at once do not wait for each other
        vols = ["\\\\?\\Volume{5157d15c-%04x-4000-8000-000000000001}\\" % n for n in (1, 2, 3, 4)]
        took, res = run([(("volume", "v1", "FormatVolume"), {"volume_id": v}) for v in vols])
        assert all(r == (OK, "") for r in res), res
        assert took < 3 * lat / 1000, took
    finally:
        s.stop()
