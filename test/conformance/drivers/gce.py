"""GCE PD CSI driver's Windows node code (DRIVER-CONTRACTS §4)."""
import os
import re

from .harness import Driver, DriverError, ProxyError


class GCE(Driver):
    """gcp-compute-persistent-disk-csi-driver (DRIVER-CONTRACTS §4). Its
    manifest mounts the drive-less kubelet root; IsSymlink, MountVolume and
    the stats/resize GetVolumeIDFromTargetPath get raw paths."""
    NAME = "GCE"
    PLUGIN = "pd.csi.storage.gke.io"

    def __init__(self, call, srv, root):
        super().__init__(call, srv)
        self.ROOT = root

    def device_path(self, device_name, nvme_ns=None):
        if nvme_ns is not None:
            for n, ids in self.rpc("disk", "ListDiskIDs").diskIDs.items():
                if ids.page83.startswith("eui."):
                    eui = ids.page83
                else:
                    s = ids.serial_number
                    s = (s[:-1] if s.endswith(".") else s).replace("_", "")
                    if len(s) != 32 or re.fullmatch(r"[0-9a-fA-F]{32}", s) is None:
                        continue
                    eui = "eui." + s
                try:
                    if int(eui[4:20], 16) == nvme_ns:
                        return str(n)
                except ValueError:
                    continue
        for n, ids in self.rpc("disk", "ListDiskIDs").diskIDs.items():
            if ids.page83 and ids.page83.split()[-1] == device_name:
                return str(n)
        raise DriverError(self.NAME, "NodeStageVolume", "Internal", f"no disk for {device_name}")

    def stage(self, device_name, stg, nvme_ns=None):
        n = int(self.device_path(device_name, nvme_ns))
        try:  # raw path; an error means "not mounted"
            if self.rpc("filesystem", "IsSymlink", path=stg).is_symlink:
                return "already staged"
        except ProxyError:
            pass
        # GCE reads .TotalBytes before the error: an error is a nil dereference (fact 22).
        size = self.rpc("disk", "GetDiskStats", disk_number=n).total_bytes
        assert size > 0
        self.rpc("disk", "PartitionDisk", disk_number=n)
        self.rpc("disk", "SetDiskState", disk_number=n, is_online=True)
        vols = self.rpc("volume", "ListVolumesOnDisk", disk_number=n).volume_ids
        if not vols:
            raise DriverError(self.NAME, "NodeStageVolume", "Internal", f"no volume on disk {n}")
        vol = vols[0]
        if not self.rpc("volume", "IsVolumeFormatted", volume_id=vol).formatted:
            self.rpc("volume", "FormatVolume", volume_id=vol)
        self.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)  # raw
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id  # raw
        self.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
        return "staged"

    def unstage(self, stg):
        stg = self.normalize(stg)
        if not self.rpc("filesystem", "PathExists", path=stg).exists:
            return "not staged"
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
        self.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
        self.rpc("filesystem", "Rmdir", path=stg, force=True)
        n = self.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number
        self.rpc("disk", "SetDiskState", disk_number=n, is_online=False)
        return "unstaged"

    def publish(self, stg, pub):
        npub = self.normalize(pub)
        if self.rpc("filesystem", "PathExists", path=npub).exists:
            self.rpc("filesystem", "Rmdir", path=npub, force=True)
        os.makedirs(os.path.dirname(self.host(pub)), exist_ok=True)  # local MkdirAll(parent)
        try:
            self.rpc("filesystem", "CreateSymlink", source_path=self.normalize(stg), target_path=npub)
        except ProxyError:
            if self.rpc("filesystem", "IsSymlink", path=pub).is_symlink:
                self.rpc("filesystem", "Rmdir", path=npub)
            raise
        return "published"

    def stats(self, pub):
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=pub).volume_id
        s = self.rpc("volume", "GetVolumeStats", volume_id=vol)
        return s.total_bytes, s.used_bytes

    def expand(self, device_name, pub, required_bytes, nvme_ns=None):
        n = int(self.device_path(device_name, nvme_ns))
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=pub).volume_id
        self.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
        total = self.rpc("disk", "GetDiskStats", disk_number=n).total_bytes
        if total < required_bytes:
            raise DriverError(self.NAME, "NodeExpandVolume", "Internal", f"{total} < {required_bytes}")
        return total

    def unpublish(self, pub):
        self.rpc("filesystem", "Rmdir", path=self.normalize(pub), force=True)
