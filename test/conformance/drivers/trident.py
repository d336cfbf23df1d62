"""NetApp Trident's Windows SMB node code (DRIVER-CONTRACTS §11, facts
28-31, 36, 37)."""
import ntpath
import os

from .harness import Driver, DriverError, ProxyError


class Trident(Driver):
    """NetApp Trident's Windows SMB node code (NetApp/trident 71dd716,
    DRIVER-CONTRACTS facts 28-30), csi-proxy v1 clients. Stage
    (utils/mount/mount_windows.go MountSMBPath): an existing staging path
    is removed (Rmdir, Force), the parent made, and the export
    "\\\\\\\\" + SMBServer + SMBPath (utils/mount/mount.go:143, '/' made '\\\\'
    at mount_windows.go:335) mapped with the staging path as LocalPath.
    Unstage (core/node/detach.go detachSMBVolume, mount_windows.go
    UmountSMBPath): Rmdir(Force) of the staging path, then
    RemoveSmbGlobalMapping of "\\\\" + SMBServer + SMBPath
    (utils/filesystem/filesystem_windows.go:62 GetUnmountPath): ONE leading
    backslash. ONTAP NAS volumes have SMBPath "/" + the internal name
    (storage_drivers/ontap/ontap_nas.go:1634).
    Publish (core/node/mount.go:143-172, mount_windows.go:67-95, 168-195):
    PathExists then IsSymlink of the pod path, a local MkdirAll when it is
    missing, then Rmdir(Force) of it and CreateSymlink(staging -> pod).
    Stats (utils/filesystem/filesystem_windows.go:22-38,
    utils/csiutils/csiutils_windows.go:42-66, 431-450): a new filesystem,
    smb and volume client per call (three leaked probe connections, fact
    2), GetVolumeIDFromTargetPath of the normalised pod path, then
    GetVolumeStats; an error is only logged and the stats read 0 bytes."""
    NAME = "Trident"
    PLUGIN = "csi.trident.netapp.io"

    def __init__(self, call, srv):
        super().__init__(call, srv)
        self.leaked, self.errors = [], []

    def stage(self, server, smb_path, stg, link=True, user="CORP\\svc-trident", password="Tr1dent-Pa55"):
        export = f"\\\\{server}{smb_path}".replace("/", "\\")
        stg = self.normalize(stg)
        if self.rpc("filesystem", "PathExists", path=stg).exists:
            self.rpc("filesystem", "Rmdir", path=stg, force=True)
        parent = ntpath.dirname(stg)
        if not self.rpc("filesystem", "PathExists", path=parent).exists:
            self.rpc("filesystem", "Mkdir", path=parent)
        self.rpc("smb", "NewSmbGlobalMapping", remote_path=export, local_path=stg if link else "",
                 username=user, password=password)
        return export

    def unstage(self, server, smb_path, stg):
        mapping = ("\\" + server + smb_path).replace("/", "\\")
        self.rpc("filesystem", "Rmdir", path=self.normalize(stg), force=True)
        self.rpc("smb", "RemoveSmbGlobalMapping", remote_path=mapping)
        return mapping

    def publish(self, stg, pub):
        npub = self.normalize(pub)
        if not self.rpc("filesystem", "PathExists", path=npub).exists:
            os.makedirs(self.host(pub), exist_ok=True)  # local os.MkdirAll
        elif self.rpc("filesystem", "IsSymlink", path=npub).is_symlink:
            return "already published"
        self.rpc("filesystem", "Rmdir", path=npub, force=True)
        self.rpc("filesystem", "CreateSymlink", source_path=self.normalize(stg), target_path=npub)
        return "published"

    def stats(self, pub):
        """(available, capacity, used) as NodeGetVolumeStats reports them."""
        if not os.path.lexists(self.host(pub)):  # local PathExistsWithTimeout
            raise DriverError(self.NAME, "NodeGetVolumeStats", "NotFound", f"could not find volume mount at path: {pub}")
        for group in ("filesystem", "smb", "volume"):  # NewCSIProxyUtils
            self.leaked.append(self.srv.leak_connection(group, "v1"))
        try:
            vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=self.normalize(pub)).volume_id
            s = self.rpc("volume", "GetVolumeStats", volume_id=vol)
            total, used = s.total_bytes, s.used_bytes
        except ProxyError as e:
            self.errors.append(str(e))  # only logged
            total, used = 0, 0
        return total - used, total, used

    def unpublish(self, pub):
        self.rpc("filesystem", "Rmdir", path=self.normalize(pub), force=True)

    def close(self):
        for c in self.leaked:
            c.close()
        self.leaked = []
