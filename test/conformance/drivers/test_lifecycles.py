"""Full lifecycles of the block drivers, and kubelet's retries."""
import ntpath
import os

import grpc
import pytest

from .azuredisk import AzureDisk
from .ebs import EBS
from .ecs import ECS
from .gce import GCE
from .harness import GIB, NO_MOUNT_FOLDERS, NO_SYMLINKS, VOLUME_ID, DriverError, staged_volume


def test_ebs_lifecycle(call, srv, gaps):
    """NodeStage (fresh directory probed: facts 4, 8), NodePublish (fact 9),
    stats, expand through the pod symlink (fact 6), unpublish, unstage
    (GetDiskNumberFromVolumeID after the mount point is gone: fact 16)."""
    d = EBS(call, srv)
    stg, pub = d.staging("vol5"), d.pod("pod-ebs-1", "pv-ebs-5")
    d.kubelet_mkdir(ntpath.dirname(pub))
    assert d.stage("vol-0a1b2c3d4e5f60005", stg) == "staged"
    vol = staged_volume(d, stg)
    assert VOLUME_ID.match(vol), vol  # fact 15
    assert vol == d.rpc("volume", "ListVolumesOnDisk", disk_number=5).volume_ids[0]
    # fact 23: GetVolumeStats.TotalBytes is the file-system size
    fs = d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes
    assert 0 < fs <= d.rpc("disk", "GetDiskStats", disk_number=5).total_bytes
    if gaps("6, 9 (publish, stats and expand through the pod symlink)", NO_SYMLINKS):
        # What Wine does show: the stub's "success" is not passed on as one.
        _, code, details = call("filesystem", "v1", "CreateSymlink", source_path=stg, target_path=pub)
        assert code == grpc.StatusCode.INTERNAL and "nothing exists at the link path" in details, details
    else:
        assert d.publish(stg, pub) == "published"
        assert os.path.islink(d.host(pub))  # fact 9: the link is at TargetPath
        assert os.path.realpath(d.host(pub)) == os.path.realpath(d.host(stg))
        assert d.stats(pub) == "local GetDiskFreeSpaceEx"
        # expand after the cloud grew the disk: Rescan shows 12 GiB (fact 21, 6)
        assert d.expand("vol-0a1b2c3d4e5f60005", pub) == 12 * GIB
        assert d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes > fs
    d.unpublish(pub)
    assert not os.path.lexists(d.host(pub))
    assert d.unstage(stg) == "unstaged"
    assert not d.rpc("disk", "GetDiskState", disk_number=5).is_online
    gaps.report()


def test_ebs_kubelet_retries(call, srv, gaps):
    """After a timeout kubelet repeats: stage twice (the second sees the
    same disk number: fact 17), publish twice, unpublish twice, unstage
    twice and after the directory is gone (fact 5)."""
    d = EBS(call, srv)
    stg, pub = d.staging("vol6"), d.pod("pod-ebs-2", "pv-ebs-6")
    d.kubelet_mkdir(ntpath.dirname(pub))
    assert d.stage("vol-0a1b2c3d4e5f60006", stg) == "staged"
    assert d.stage("vol-0a1b2c3d4e5f60006", stg) == "already staged"
    if not gaps("6, 9 (publish twice)", NO_SYMLINKS):
        assert d.publish(stg, pub) == "published"
        assert d.publish(stg, pub) == "published"  # the old link removed, made again
    d.unpublish(pub)
    d.unpublish(pub)  # Rmdir(force) of a missing path: success
    assert d.unstage(stg) == "unstaged"
    assert d.unstage(stg) == "not staged"  # the path is gone: "because it does not exist"
    gaps.report()


def test_ebs_unstage_after_partial_failure(call, srv):
    """Unstage retry after UnmountVolume succeeded but the rest failed: the
    staging directory is a plain directory (the "(Get-Item ...)" text)."""
    d = EBS(call, srv)
    stg = d.staging("vol7")
    assert d.stage("vol-0a1b2c3d4e5f60007", stg) == "staged"
    vol = staged_volume(d, stg)
    d.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
    assert d.unstage(stg) == "not staged"
    d.rpc("filesystem", "Rmdir", path=stg, force=True)


def test_ebs_restage_after_unstage(call, srv):
    """Unstage leaves the disk offline; the next stage calls PartitionDisk
    before SetDiskState(online) (fact 12), and ListVolumesOnDisk right after
    the disk comes online must already list the volume, which the simulator
    announces ARRIVAL_MS later (fact 14)."""
    d = EBS(call, srv)
    stg = d.staging("vol8")
    assert d.stage("vol-0a1b2c3d4e5f60008", stg) == "staged"
    assert d.unstage(stg) == "unstaged"
    assert not d.rpc("disk", "GetDiskState", disk_number=8).is_online
    assert d.stage("vol-0a1b2c3d4e5f60008", stg) == "staged"
    assert d.unstage(stg) == "unstaged"


def test_azuredisk_lifecycle(call, srv, gaps):
    """LUN match (fact 19), PartitionDisk then VolumeIds[0] (fact 14), the
    ResizeVolume by disk number (fact 25), stats and expand through the raw
    pod symlink path (facts 6, 7, 23), unstage by Rmdir(force) of the mount
    folder with no UnmountVolume (fact 11c)."""
    d = AzureDisk(call, srv)
    stg, pub = d.staging("lun1"), d.pod("pod-az-1", "pv-az-1")
    d.kubelet_mkdir(stg)  # the driver does not create it on Windows
    d.kubelet_mkdir(ntpath.dirname(pub))
    assert d.stage(1, stg) == "staged"
    if not gaps("6, 7, 9 (publish, stats and expand through the raw pod symlink path)", NO_SYMLINKS):
        assert d.publish(stg, pub) == "published"
        total, used, avail = d.stats(pub)
        assert total > 0 and 0 <= used <= total and avail == total - used
        assert d.expand(pub, total) >= total
    d.unpublish(pub)
    assert d.unstage(stg) == "unstaged"
    assert not os.path.lexists(d.host(stg))
    gaps.report()


def test_azuredisk_kubelet_retries(call, srv, gaps):
    """A re-stage sees IsSymlink true on the mounted staging folder (fact
    10) and stops there; unstage twice. (Under Wine IsSymlink says false
    and the re-stage repeats every step, which must succeed again.)"""
    d = AzureDisk(call, srv)
    stg = d.staging("lun2")
    d.kubelet_mkdir(stg)
    assert d.stage(2, stg) == "staged"
    if gaps("10 (IsSymlink true on a mounted staging folder)", NO_MOUNT_FOLDERS):
        assert d.stage(2, stg) == "staged"
    else:
        assert d.stage(2, stg) == "already staged"
    assert d.unstage(stg) == "unstaged"
    assert d.unstage(stg) == "unstaged"
    gaps.report()


@pytest.mark.parametrize("root", ["C:\\var\\lib\\kubelet", "\\var\\lib\\kubelet"],
                         ids=["C-root", "driveless-root"])
def test_gce_lifecycle(call, srv, root, gaps):
    """Legacy Page83 match, GetDiskStats before formatting (fact 22),
    SetDiskState(online) on an online disk (fact 13), MountVolume and
    ResizeVolume(0) on the raw staging path (facts 7, 21), stats and expand
    on the raw pod symlink (fact 6), unstage (fact 16)."""
    d = GCE(call, srv, root)
    tag = "c" if root.startswith("C") else "nodrive"
    stg, pub = d.staging(f"gce-{tag}"), d.pod(f"pod-gce-{tag}", "pv-gce")
    d.kubelet_mkdir(stg)
    assert d.stage("pvc-gce-legacy", stg) == "staged"
    if not gaps("6, 9 (publish, stats and expand through the raw pod symlink path)", NO_SYMLINKS):
        assert d.publish(stg, pub) == "published"
        assert os.path.islink(d.host(pub))
        total, used = d.stats(pub)
        assert total > 0 and used <= total
        assert d.expand("pvc-gce-legacy", pub, 10 * GIB) >= 10 * GIB
    d.unpublish(pub)
    assert d.unstage(stg) == "unstaged"
    gaps.report()


def test_gce_kubelet_retries(call, srv, gaps):
    """NVMe match by the serial's EUI-64; re-stage stops at IsSymlink true on
    the mount folder (fact 10); unstage twice (PathExists false: success)."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    stg = d.staging("gce-nvme")
    d.kubelet_mkdir(stg)
    assert d.device_path("pvc-gce-nvme", nvme_ns=0x12) == "18"
    assert d.stage("pvc-gce-nvme", stg, nvme_ns=0x12) == "staged"
    if gaps("10 (IsSymlink true on a mounted staging folder)", NO_MOUNT_FOLDERS):
        assert d.stage("pvc-gce-nvme", stg, nvme_ns=0x12) == "staged"  # every step again
    else:
        assert d.stage("pvc-gce-nvme", stg, nvme_ns=0x12) == "already staged"
    assert d.unstage(stg) == "unstaged"
    assert d.unstage(stg) == "not staged"
    gaps.report()


def test_ecs_lifecycle(call, srv):
    """The ECS agent's EBS daemon: a staging path under the agent's own
    directory (fact 38), a new disk client per ListDiskIDs (facts 2, 32),
    the fresh directory probed with the EBS regex (facts 4, 32), NeedResize
    without Rescan (fact 39), a repeated NodeStage, stats by PathExists
    only, unstage and its retry (fact 5)."""
    d = ECS(call, srv)
    stg = d.staging("ecs-task-1-data")
    assert d.stage("vol-0ec5a1b2c3d4e50021", stg) == "staged"
    vol = staged_volume(d, stg)
    assert VOLUME_ID.match(vol), vol
    assert d.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number == 21
    assert d.stage("vol-0ec5a1b2c3d4e50021", stg) == "already staged"
    assert len(d.leaked) == 2  # one idle disk-v1 connection per ListDiskIDs
    assert d.stats(stg) == "local statfs"
    assert d.unstage(stg) == "unstaged"
    assert not d.rpc("disk", "GetDiskState", disk_number=21).is_online
    assert d.unstage(stg) == "not staged"
    with pytest.raises(DriverError, match="NodeGetVolumeStats: NotFound"):
        d.stats(stg)
    for c in d.leaked:
        c.close()


def test_ecs_restage_after_unstage(call, srv):
    """The task's next run stages the disk its last run left offline:
    PartitionDisk before SetDiskState(online) (fact 12), VolumeIds[0] right
    after (fact 14), the same volume (fact 15); an unknown volume id is
    the daemon's Internal, not EBS's NotFound (fact 39)."""
    d = ECS(call, srv)
    stg = d.staging("ecs-task-2-data")
    assert d.stage("vol-0ec5a1b2c3d4e50022", stg) == "staged"
    vol = staged_volume(d, stg)
    assert d.unstage(stg) == "unstaged"
    assert d.stage("vol-0ec5a1b2c3d4e50022", stg) == "staged"
    assert staged_volume(d, stg) == vol
    assert d.unstage(stg) == "unstaged"
    with pytest.raises(DriverError, match="NodeStageVolume: Internal"):
        d.stage("vol-0ec5ffffffffffff99", d.staging("ecs-task-3-data"))
    for c in d.leaked:
        c.close()
