"""csi-driver-smb's Windows node code (DRIVER-CONTRACTS §2)."""
import ntpath
import os

from .harness import Driver


class SMB(Driver):
    """csi-driver-smb, csi-proxy v1 mode (DRIVER-CONTRACTS §2, fact 24): the
    staging path is normalised and removed before the mapping; the remote
    path has no trailing backslash; the user is DOMAIN\\user; unstage reads
    the link back (os.Readlink) and unmaps what it names, sub-path and all."""
    NAME = "SMB"
    PLUGIN = "smb.csi.k8s.io"

    def stage(self, source, stg, user="AZURE\\account", password="smb-Pa55"):
        stg = self.normalize(stg)
        self.rpc("filesystem", "Rmdir", path=stg, force=True)  # LocalPath must not exist
        self.kubelet_mkdir(ntpath.dirname(stg))
        self.rpc("smb", "NewSmbGlobalMapping", remote_path=source.rstrip("\\"),
                 local_path=stg, username=user, password=password)
        return stg

    def unstage(self, stg):
        target = os.readlink(self.host(stg))  # what Go's os.Readlink gives the driver
        self.rpc("filesystem", "Rmdir", path=stg, force=True)
        self.rpc("smb", "RemoveSmbGlobalMapping", remote_path=target)
        return target
