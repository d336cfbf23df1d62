"""The Amazon ECS agent's Windows EBS daemon (DRIVER-CONTRACTS §12, facts
32, 38-40)."""
from .ebs import EBS
from .harness import ECS_ROOT, DriverError, ProxyError


class ECS(EBS):
    """aws/amazon-ecs-agent 8dfceca, ecs-agent/daemonimages/csidriver
    (csi-proxy client v1.1.3; disk-v1, filesystem-v1, volume-v1 mounted as
    npipe volumes, manageddaemon/managed_daemon_windows.go:34-42). The
    agent calls NodeStageVolume with a staging path under
    C:\\ProgramData\\Amazon\\ECS\\ebs (agent/ebs/watcher_windows.go:21,
    watcher.go:255-256) and binds that directory into the task itself: no
    NodePublish, no NodeExpand. The calls are the EBS driver's, with
    these differences (driver/node.go, driver/mount_windows.go,
    mounter/safe_mounter_windows.go):
      - ListDiskIDs on a new disk client per call (mount_windows.go:184-196,
        fact 2), serial contains the id without dashes (node_windows.go:57-78);
        no match is Internal (node.go:169-172), not NotFound;
      - the same error-text regex (mount_windows.go:66, facts 4, 5);
      - NeedResize and Resize make no Rescan call (mount_windows.go:110-130,
        resizefs/resizefs_windows.go:22-25), ResizeVolume leaves SizeBytes
        unset (safe_mounter_windows.go:414-436);
      - NodeGetVolumeStats: PathExists of the volume path through csi-proxy,
        then a local statfs (node.go:345-400)."""
    NAME = "ECS"
    ROOT = ECS_ROOT
    PLUGIN = "ebs.csi.aws.com"

    def staging(self, name):
        """watcher.go:256: filepath.Join(hostMountDir, SourceVolumeHostPath)."""
        return f"{self.ROOT}\\{name}"

    def find_device_path(self, volume_id):
        try:
            return super().find_device_path(volume_id)
        except DriverError as e:
            raise DriverError(self.NAME, "NodeStageVolume", "Internal", str(e)) from e

    def need_resize(self, n, stg):
        disk = self.rpc("disk", "GetDiskStats", disk_number=int(n)).total_bytes
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
        fs = self.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes
        return disk <= fs + 4096

    def resize(self, path):
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=self.normalize(path)).volume_id
        self.rpc("volume", "ResizeVolume", volume_id=vol)

    def stats(self, path):
        try:
            exists = self.rpc("filesystem", "PathExists", path=self.normalize(path)).exists
        except ProxyError as e:
            raise DriverError(self.NAME, "NodeGetVolumeStats", "Internal", str(e)) from e
        if not exists:
            raise DriverError(self.NAME, "NodeGetVolumeStats", "NotFound", f"path {path} does not exist")
        return "local statfs"  # no csi-proxy volume RPC

    def publish(self, stg, pub):
        raise NotImplementedError("the ECS daemon has no NodePublishVolume: the task binds the staging path")

    def expand(self, volume_id, pub):
        raise NotImplementedError("the ECS daemon has no NodeExpandVolume")
