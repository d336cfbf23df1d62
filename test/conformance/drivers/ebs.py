"""AWS EBS CSI driver's Windows node code (DRIVER-CONTRACTS §1)."""
from .harness import EBS_REGEX, Driver, DriverError, ProxyError


class EBS(Driver):
    """aws-ebs-csi-driver, csi-proxy v1 mode (DRIVER-CONTRACTS §1)."""
    NAME = "EBS"
    ROOT = "c:\\var\\lib\\kubelet"  # every EBS path is normalised: lower-case c: (fact 8)
    PLUGIN = "ebs.csi.aws.com"

    def find_device_path(self, volume_id):
        """A fresh disk client per call (fact 2: it leaks one idle
        connection each time), ListDiskIDs, serial contains the id without
        dashes (fact 18)."""
        self.leaked.append(self.srv.leak_connection("disk", "v1"))
        want = volume_id.replace("-", "")
        for n, ids in self.rpc("disk", "ListDiskIDs").diskIDs.items():
            if want in ids.serial_number:
                return str(n)
        raise DriverError(self.NAME, "FindDevicePath", "NotFound", f"no disk for {volume_id}")

    def __init__(self, call, srv):
        super().__init__(call, srv)
        self.leaked = []

    def get_device_name_from_mount(self, path, rpc):
        """(device, refcount); a regex match on the error means "not mounted"."""
        try:
            vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=path).volume_id
            n = self.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number
            return str(n), 1
        except ProxyError as e:
            if EBS_REGEX.search(str(e)):
                return "", 0
            raise DriverError(self.NAME, rpc, "Internal",
                              f"error getting device name from mount: {e}") from e

    def stage(self, volume_id, stg):
        stg = self.normalize(stg)
        n = self.find_device_path(volume_id)
        if not self.rpc("filesystem", "PathExists", path=stg).exists:
            self.rpc("filesystem", "Mkdir", path=stg)
        dev, _ = self.get_device_name_from_mount(stg, "NodeStageVolume")
        if dev == n:  # fact 17: the two numbers compared as decimal strings
            return "already staged"
        # FormatAndMount
        self.rpc("disk", "PartitionDisk", disk_number=int(n))
        self.rpc("disk", "SetDiskState", disk_number=int(n), is_online=True)
        vol = self.rpc("volume", "ListVolumesOnDisk", disk_number=int(n)).volume_ids[0]  # no length check
        if not self.rpc("volume", "IsVolumeFormatted", volume_id=vol).formatted:
            self.rpc("volume", "FormatVolume", volume_id=vol)
        self.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)
        # NeedResize (inverted in the driver: true when the disk is not bigger)
        if self.need_resize(n, stg):
            self.resize(stg)
        return "staged"

    def need_resize(self, n, stg):
        try:
            self.rpc("disk", "Rescan")
        except ProxyError:
            pass  # only logged
        disk = self.rpc("disk", "GetDiskStats", disk_number=int(n)).total_bytes
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
        fs = self.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes
        return disk <= fs + 4096

    def resize(self, path):
        try:
            self.rpc("disk", "Rescan")
        except ProxyError:
            pass
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=path).volume_id
        self.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)

    def unstage(self, stg):
        stg = self.normalize(stg)
        _, refs = self.get_device_name_from_mount(stg, "NodeUnstageVolume")
        if refs == 0:
            return "not staged"
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
        self.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
        self.rpc("filesystem", "Rmdir", path=stg, force=True)
        n = self.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number
        self.rpc("disk", "SetDiskState", disk_number=n, is_online=False)
        return "unstaged"

    def publish(self, stg, pub):
        stg, pub = self.normalize(stg), self.normalize(pub)
        if self.rpc("filesystem", "PathExists", path=pub).exists:
            self.rpc("filesystem", "Rmdir", path=pub, force=True)
        if self.rpc("filesystem", "PathExists", path=pub).exists:
            if self.rpc("filesystem", "IsSymlink", path=pub).is_symlink:
                return "already published"
        self.rpc("filesystem", "CreateSymlink", source_path=stg, target_path=pub)
        return "published"

    def stats(self, pub):
        if not self.rpc("filesystem", "PathExists", path=self.normalize(pub)).exists:
            raise DriverError(self.NAME, "NodeGetVolumeStats", "NotFound", pub)
        return "local GetDiskFreeSpaceEx"  # no csi-proxy volume RPC

    def expand(self, volume_id, pub):
        pub = self.normalize(pub)
        self.get_device_name_from_mount(pub, "NodeExpandVolume")
        n = self.find_device_path(volume_id)
        self.resize(pub)
        return self.rpc("disk", "GetDiskStats", disk_number=int(n)).total_bytes

    def unpublish(self, pub):
        self.rpc("filesystem", "Rmdir", path=self.normalize(pub), force=True)
