"""One DRIVER-CONTRACTS §9 fact (or a few) per test."""
import concurrent.futures
import importlib
import ntpath
import os
import pkgutil
import re

import grpc
import pytest

from .azuredisk import AzureDisk
from .ebs import EBS
from .facts import FACTS
from .gce import GCE
from .harness import (GIB, NO_MOUNT_FOLDERS, NO_SYMLINKS, OK, UNIX_LINKS, DriverError, ProxyError,
                      staged_volume, wine_cannot)


def test_fact01_pipes_each_driver_dials(srv):
    pipes = srv.pipes()
    for pipe in ["filesystem-v1", "disk-v1", "volume-v1", "smb-v1",
                 "filesystem-v1beta1", "disk-v1beta2", "volume-v1beta1", "volume-v1beta2"]:
        assert pipe in pipes, pipe


def test_fact02_27_ebs_leaked_connections_and_parallel_stages(call, srv):
    """Every FindDevicePath leaks one idle disk-v1 connection (fact 2); two
    EBS stages on different disks at once (fact 27)."""
    d = EBS(call, srv)
    for _ in range(40):
        d.find_device_path("vol-0a1b2c3d4e5f60005")
    assert len(d.leaked) == 40
    jobs = [("vol-0a1b2c3d4e5f60006", d.staging("par6")), ("vol-0a1b2c3d4e5f60007", d.staging("par7"))]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        done = list(ex.map(lambda j: EBS(call, srv).stage(*j), jobs))
    assert done == ["staged", "staged"]
    for _, stg in jobs:
        assert d.unstage(stg) == "unstaged"
    for s in d.leaked:
        s.close()


def test_fact03_errors_carry_their_text(call, srv):
    """Drivers see only "rpc error: code = ... desc = <text>": the text
    names the object and the cause."""
    d = EBS(call, srv)
    with pytest.raises(ProxyError) as ei:
        d.rpc("disk", "GetDiskStats", disk_number=4242)
    assert "4242" in str(ei.value) and "not found" in str(ei.value)
    assert str(ei.value).startswith("rpc error: code = NotFound desc = ")


def test_fact11_rmdir_force(call, srv, tmp_path, gaps):
    """(a) a missing path; (b) a link to a staged folder and a link whose
    target is outside the roots (natively what an SMB link's UNC target
    is): the link goes, the target and its files stay."""
    d = EBS(call, srv)
    d.rpc("filesystem", "Rmdir", path=d.pod("no-such-pod", "pv"), force=True)
    stg, pub = d.staging("rmdir11b"), d.pod("pod-11b", "pv")
    d.kubelet_mkdir(stg)
    d.kubelet_mkdir(ntpath.dirname(pub))
    with open(os.path.join(d.host(stg), "data"), "w") as f:
        f.write("keep")
    if not gaps("11b (Rmdir(force) of a pod symlink to a staged folder)", NO_SYMLINKS):
        d.rpc("filesystem", "CreateSymlink", source_path=stg, target_path=pub)
        d.rpc("filesystem", "Rmdir", path=pub, force=True)
        assert not os.path.lexists(d.host(pub))
        assert open(os.path.join(d.host(stg), "data")).read() == "keep"
    share = tmp_path / "share"
    share.mkdir()
    (share / "file").write_text("remote")
    unc = d.staging("smb-like")
    os.makedirs(os.path.dirname(d.host(unc)), exist_ok=True)
    os.symlink(str(share), d.host(unc))
    if gaps("11b (Rmdir(force) removes a link whose target is outside the roots)", UNIX_LINKS):
        call("filesystem", "v1", "Rmdir", path=unc, force=True)  # its answer is not the fact here
        os.unlink(d.host(unc))
    else:
        d.rpc("filesystem", "Rmdir", path=unc, force=True)
        assert not os.path.lexists(d.host(unc))
    assert (share / "file").read_text() == "remote"  # the target and its files stay
    d.rpc("filesystem", "Rmdir", path=stg, force=True)
    gaps.report()


def test_fact11c_rmdir_mount_folder(call, srv):
    """Rmdir(force) of a mount folder removes the mount point: a new folder
    at the same path is not the old volume's mount point any more."""
    wine_cannot(srv, "11c (Rmdir(force) of a mount folder removes the mount point)", NO_MOUNT_FOLDERS)
    d = AzureDisk(call, srv)
    stg = d.staging("lun3")
    d.kubelet_mkdir(stg)
    assert d.stage(3, stg) == "staged"
    vol = staged_volume(d, stg)
    d.rpc("filesystem", "Rmdir", path=d.normalize(stg), force=True)
    d.kubelet_mkdir(stg)
    r, code, _ = call("volume", "v1", "GetVolumeIDFromTargetPath", target_path=stg)
    assert code != OK, f"{stg} still resolves to {r.volume_id}"
    d.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)  # can be mounted again
    d.rpc("filesystem", "Rmdir", path=d.normalize(stg), force=True)


def test_fact12_14_16_offline_restage(call, srv):
    """The restage sequence on a disk unstage left offline, without the
    path probes: PartitionDisk on the offline partitioned disk is a no-op
    (fact 12), ListVolumesOnDisk right after SetDiskState(online) lists the
    volume although the simulator announces it ARRIVAL_MS later (fact 14),
    GetDiskNumberFromVolumeID after the mount point is gone (fact 16)."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    stg = d.staging("fact12")
    d.kubelet_mkdir(stg)
    d.rpc("disk", "PartitionDisk", disk_number=13)
    vol = d.rpc("volume", "ListVolumesOnDisk", disk_number=13).volume_ids[0]
    d.rpc("volume", "FormatVolume", volume_id=vol)
    d.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)
    d.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
    d.rpc("filesystem", "Rmdir", path=stg, force=True)
    assert d.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number == 13
    d.rpc("disk", "SetDiskState", disk_number=13, is_online=False)
    for _ in range(2):
        d.rpc("disk", "PartitionDisk", disk_number=13)
        assert not d.rpc("disk", "GetDiskState", disk_number=13).is_online
        d.rpc("disk", "SetDiskState", disk_number=13, is_online=True)
        assert d.rpc("volume", "ListVolumesOnDisk", disk_number=13).volume_ids == [vol]
        assert d.rpc("volume", "IsVolumeFormatted", volume_id=vol).formatted
        d.rpc("disk", "SetDiskState", disk_number=13, is_online=False)


def test_fact13_set_disk_state_same_state(call, srv):
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    d.rpc("disk", "SetDiskState", disk_number=4, is_online=True)
    d.rpc("disk", "SetDiskState", disk_number=4, is_online=True)
    d.rpc("disk", "SetDiskState", disk_number=10, is_online=False)  # offline already
    assert not d.rpc("disk", "GetDiskState", disk_number=10).is_online


def test_fact18_disk_matching(call, srv):
    assert EBS(call, srv).find_device_path("vol-0a1b2c3d4e5f60007") == "7"
    g = GCE(call, srv, "C:\\var\\lib\\kubelet")
    assert g.device_path("pvc-gce-legacy") == "17"
    assert g.device_path("pvc-gce-nvme", nvme_ns=0x12) == "18"
    assert g.device_path("pvc-staged") == "9"  # "Google  PersistentDisk  pvc-staged"


def test_fact19_lunid_decimal(call, srv):
    d = AzureDisk(call, srv)
    locs = d.rpc("disk", "ListDiskLocations").disk_locations
    assert locs[11].LUNID == "11" and locs[1].LUNID == "1"
    for loc in locs.values():
        assert re.fullmatch(r"0|[1-9][0-9]*", loc.LUNID), loc
    assert d.device_with_lun(4) == "4"


def test_fact20_mount_volume_idempotent(call, srv):
    """MountVolume on an existing empty directory, then again (same volume,
    already mounted): both succeed; another volume there is refused."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    stg = d.staging("fact20")
    d.kubelet_mkdir(stg)
    vol = "\\\\?\\Volume{16161616-0016-4000-8000-000000000001}\\"  # disk 16, E:
    d.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)
    d.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)
    assert staged_volume(d, stg) == vol
    other = "\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\"
    _, code, details = call("volume", "v1", "MountVolume", volume_id=other, target_path=stg)
    assert code == grpc.StatusCode.FAILED_PRECONDITION and vol in details, details
    d.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
    d.rpc("filesystem", "Rmdir", path=d.normalize(stg), force=True)


def test_fact21_resize_zero_noop(call, srv):
    """ResizeVolume(0) on a volume that fills its partition: success, no change."""
    d = EBS(call, srv)
    vol = "\\\\?\\Volume{11111111-0011-4000-8000-000000000001}\\"  # MBR11, 4000 MiB of 4 GiB
    before = d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes
    d.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
    d.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
    assert d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes == before


def test_fact22_disk_stats_every_listed_disk(call, srv):
    """GCE dereferences the answer before the error: every disk ListDiskIDs
    names (offline, identity-less, boot) must answer GetDiskStats."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    numbers = list(d.rpc("disk", "ListDiskIDs").diskIDs.keys())
    assert {0, 10, 12, 17, 18} <= set(numbers)
    for n in numbers:
        assert d.rpc("disk", "GetDiskStats", disk_number=n).total_bytes > 0, n


def test_fact25_azuredisk_resize_by_disk_number(call, srv):
    """Azure Disk's NodeStage sends ResizeVolume(VolumeId = "<disk number>"):
    the disk's single volume is grown (a no-op when at its maximum); a disk
    with no volume, several volumes, or the boot disk are refused with text
    naming the disk."""
    d = AzureDisk(call, srv)
    vol = "\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\"  # disk 9: 2 of 8 GiB
    d.rpc("volume", "ResizeVolume", volume_id="9", size_bytes=0)
    assert d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes > 7 * GIB
    d.rpc("volume", "ResizeVolume", volume_id="9", size_bytes=0)  # at its maximum: no-op
    _, code, details = call("volume", "v1", "ResizeVolume", volume_id="12", size_bytes=0)
    assert code == grpc.StatusCode.NOT_FOUND and "disk 12" in details, details
    _, code, details = call("volume", "v1", "ResizeVolume", volume_id="15", size_bytes=0)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "disk 15" in details, details
    _, code, details = call("volume", "v1", "ResizeVolume", volume_id="0", size_bytes=0)
    assert code == grpc.StatusCode.FAILED_PRECONDITION, details
    _, code, details = call("volume", "v1", "ResizeVolume", volume_id="4242", size_bytes=0)
    assert code == grpc.StatusCode.NOT_FOUND and "4242" in details, details


def test_fact26_probes_during_a_long_stage(call, srv):
    """No deadlines: a stage waiting for its volume to arrive (the disk just
    came online) finishes on its own while PathExists/IsSymlink probes of
    the same path are answered meanwhile."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    stg = d.staging("fact26")
    d.kubelet_mkdir(stg)
    d.rpc("disk", "PartitionDisk", disk_number=4)
    d.rpc("disk", "SetDiskState", disk_number=4, is_online=False)
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        fut = ex.submit(_format_and_mount, call, srv, 4, stg)
        for _ in range(5):
            assert d.rpc("filesystem", "PathExists", path=d.normalize(stg)).exists
        assert fut.result(timeout=30) == "staged"
    assert d.unstage(stg) == "unstaged"


def _format_and_mount(call, srv, n, stg):
    """GCE's formatAndMount on disk n, an offline partitioned disk."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    d.rpc("disk", "PartitionDisk", disk_number=n)
    d.rpc("disk", "SetDiskState", disk_number=n, is_online=True)
    vols = d.rpc("volume", "ListVolumesOnDisk", disk_number=n).volume_ids
    if not vols:
        raise DriverError("GCE", "NodeStageVolume", "Internal", f"no volume on disk {n}")
    if not d.rpc("volume", "IsVolumeFormatted", volume_id=vols[0]).formatted:
        d.rpc("volume", "FormatVolume", volume_id=vols[0])
    d.rpc("volume", "MountVolume", volume_id=vols[0], target_path=stg)
    return "staged"


def test_every_fact_is_named():
    """Every numbered fact of DRIVER-CONTRACTS §9 names a test that exists:
    a test function of test/conformance (this package or beside it) or a
    check of a shell suite."""
    here = os.path.dirname(__file__)
    conformance = os.path.dirname(here)
    root = os.path.dirname(os.path.dirname(conformance))
    names = set()
    for m in pkgutil.iter_modules([here]):
        if m.name.startswith("test_"):
            mod = importlib.import_module(f"{__package__}.{m.name}")
            names |= {n for n, v in vars(mod).items() if n.startswith("test_") and callable(v)}
    for f in os.listdir(conformance):
        if f.startswith("test_") and f.endswith(".py"):
            with open(os.path.join(conformance, f)) as src:
                names |= set(re.findall(r"^def (test_\w+)", src.read(), re.M))
    with open(os.path.join(root, "docs", "reference", "DRIVER-CONTRACTS.md")) as doc:
        text = doc.read()
    s9 = text[text.index("## 9."):]
    s9 = s9[:s9.index("\n## ", 1)]
    numbered = {int(n) for n in re.findall(r"^(\d+)\. \*\*", s9, re.M)}
    assert numbered, "no numbered fact found in DRIVER-CONTRACTS §9"
    for fact in sorted(numbered | set(FACTS)):
        assert FACTS.get(fact), f"fact {fact} has no test"
        for t in FACTS[fact]:
            if ": " in t:
                path, check = t.split(": ", 1)
                with open(os.path.join(root, path)) as src:
                    assert f'"{check}"' in src.read(), f"fact {fact}: {path} has no check {check!r}"
            else:
                assert t in names, f"fact {fact}: no test named {t}"