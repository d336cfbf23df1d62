"""Azure Disk CSI driver's Windows node code (DRIVER-CONTRACTS §3)."""
import os

from .harness import GIB, Driver, DriverError, ProxyError


class AzureDisk(Driver):
    """azuredisk-csi-driver, csi-proxy v1 mode (DRIVER-CONTRACTS §3)."""
    NAME = "AzureDisk"
    ROOT = "C:\\var\\lib\\kubelet"
    PLUGIN = "disk.csi.azure.com"

    def device_with_lun(self, lun):
        try:
            self.rpc("disk", "Rescan")
        except ProxyError:
            pass
        for n, loc in self.rpc("disk", "ListDiskLocations").disk_locations.items():
            if loc.LUNID.lower() == str(lun).lower():  # strings.EqualFold (fact 19)
                return str(n)
        raise DriverError(self.NAME, "NodeStageVolume", "Internal", f"no disk at LUN {lun}")

    def stage(self, lun, stg):
        n = self.device_with_lun(lun)
        nstg = self.normalize(stg)
        if self.rpc("filesystem", "PathExists", path=nstg).exists:
            if self.rpc("filesystem", "IsSymlink", path=nstg).is_symlink:
                os.listdir(self.host(stg))  # the driver's local ReadDir
                return "already staged"
        # formatAndMount: no SetDiskState
        self.rpc("disk", "PartitionDisk", disk_number=int(n))
        vol = self.rpc("volume", "ListVolumesOnDisk", disk_number=int(n)).volume_ids[0]
        if not self.rpc("volume", "IsVolumeFormatted", volume_id=vol).formatted:
            self.rpc("volume", "FormatVolume", volume_id=vol)
        self.rpc("volume", "MountVolume", volume_id=vol, target_path=nstg)
        # needResizeVolume is always true on Windows: ResizeVolume(source = "<N>")
        try:
            self.rpc("volume", "ResizeVolume", volume_id=n, size_bytes=0)
        except ProxyError as e:
            raise DriverError(self.NAME, "NodeStageVolume", "Internal", str(e)) from e
        return "staged"

    def unstage(self, stg):
        try:  # raw path; errors only logged
            vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
            try:
                self.rpc("volume", "WriteVolumeCache", volume_id=vol)
            except ProxyError:
                pass
        except ProxyError:
            pass
        self.rpc("filesystem", "Rmdir", path=self.normalize(stg), force=True)
        return "unstaged"

    def publish(self, stg, pub):
        stg, pub = self.normalize(stg), self.normalize(pub)
        if self.rpc("filesystem", "PathExists", path=pub).exists:
            self.rpc("filesystem", "Rmdir", path=pub, force=True)
        if self.rpc("filesystem", "PathExists", path=pub).exists:
            return "already published"
        self.rpc("filesystem", "CreateSymlink", source_path=stg, target_path=pub)
        return "published"

    def stats(self, pub):
        """Raw pod symlink path (fact 6, 7); Available = Total - Used."""
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=pub).volume_id
        s = self.rpc("volume", "GetVolumeStats", volume_id=vol)
        return s.total_bytes, s.used_bytes, s.total_bytes - s.used_bytes

    def expand(self, pub, required_bytes):
        try:
            vol = self.rpc("volume", "GetVolumeIDFromTargetPath",
                           target_path=self.normalize(pub)).volume_id
        except ProxyError as e:
            raise DriverError(self.NAME, "NodeExpandVolume", "NotFound", str(e)) from e
        gib = lambda b: (b + GIB - 1) // GIB  # noqa: E731
        total = self.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes  # fact 23, Q3
        if gib(total) < gib(required_bytes):
            raise DriverError(self.NAME, "NodeExpandVolume", "Unavailable", "block size too small")
        self.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
        return self.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes

    def unpublish(self, pub):
        self.rpc("filesystem", "Rmdir", path=self.normalize(pub), force=True)
