"""The SMB drivers: csi-driver-smb and NetApp Trident."""
import os

from .harness import NO_SYMLINKS, wine_cannot
from .smb import SMB
from .trident import Trident


def test_fact24_smb_global_mapping(call, srv):
    """NewSmbGlobalMapping maps the root idempotently and makes a directory
    link at LocalPath that reads back as \\\\host\\share\\...; two volumes on one
    share; RemoveSmbGlobalMapping with the link's full text (a sub-path and a
    trailing backslash) reduces it to the root; an unstage retry succeeds."""
    wine_cannot(srv, 24, "NewSmbGlobalMapping makes a directory symlink at LocalPath, and " + NO_SYMLINKS)
    d = SMB(call, srv)
    s1 = d.stage("\\\\fs1.example.com\\share\\pvc-1", d.staging("smb-1"))
    s2 = d.stage("\\\\FS1.example.com\\share\\pvc-2", d.staging("smb-2"))
    assert os.readlink(d.host(s1)) == "\\\\fs1.example.com\\share\\pvc-1\\"
    assert os.readlink(d.host(s2)) == "\\\\FS1.example.com\\share\\pvc-2\\"
    assert d.unstage(s2).startswith("\\\\FS1.example.com\\share\\pvc-2")
    assert not os.path.lexists(d.host(s2))
    target = d.unstage(s1)
    # kubelet retries an unstage whose response it lost: the link is gone,
    # the mapping too, and both calls still succeed (Q5)
    d.rpc("filesystem", "Rmdir", path=s1, force=True)
    d.rpc("smb", "RemoveSmbGlobalMapping", remote_path=target)


def test_fact28_trident_filesystem_windows_go_62_unstage_one_backslash(call, srv, gaps):
    """Trident's NodeUnstage sends RemoveSmbGlobalMapping with one leading
    backslash (`\\svm1\\trident_pvc_1` on the wire; trident
    utils/filesystem/filesystem_windows.go:62). Upstream takes the first two
    non-empty components as the root and unmaps it, so every Trident SMB
    unstage depends on it: the call succeeds, the root mapping is gone (the
    share maps again under other credentials), a retry succeeds, and a
    qtree volume's deeper path and a snapshot path reduce to their root."""
    d = Trident(call, srv)
    no_link = gaps(24, "NewSmbGlobalMapping's LocalPath is a directory symlink, and " + NO_SYMLINKS)
    for server, smb_path in [("svm1.corp.example", "/trident_pvc_1"),
                             ("svm1.corp.example", "/share/trident_qtree_pool/pvc_2"),
                             ("anf1.corp.example", "/vol1/~snapshot/snap1")]:
        stg = d.staging(smb_path.rsplit("/", 1)[-1])
        export = d.stage(server, smb_path, stg, link=not no_link)
        if not no_link:
            assert os.readlink(d.host(stg)) == export + "\\"
        mapping = d.unstage(server, smb_path, stg)
        assert mapping.startswith("\\" + server + "\\") and not mapping.startswith("\\\\"), mapping
        assert not os.path.lexists(d.host(stg))
        root = "\\\\" + server + "\\" + smb_path.strip("/").split("/")[0]
        # unmapped: the simulated server takes one user name per server, as
        # Windows does, so another user maps the root only once it is gone
        d.rpc("smb", "NewSmbGlobalMapping", remote_path=root, username="CORP\\other", password="x")
        d.rpc("smb", "RemoveSmbGlobalMapping", remote_path=root)
        d.unstage(server, smb_path, stg)  # kubelet retries: still success
    gaps.report()

