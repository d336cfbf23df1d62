"""NetApp Trident's Windows SMB node code (DRIVER-CONTRACTS facts 28-31)."""
import ntpath

from .harness import Driver


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
    (storage_drivers/ontap/ontap_nas.go:1634)."""
    NAME = "Trident"
    PLUGIN = "csi.trident.netapp.io"

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
