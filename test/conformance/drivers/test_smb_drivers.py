"""The SMB drivers: csi-driver-smb and NetApp Trident."""
import ntpath
import os

import grpc

from .harness import GIB, NO_SYMLINKS, staged_volume, wine_cannot
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



def test_fact29_37_trident_publish(call, srv):
    """Trident's SMB publish: the pod path (kubelet made its parent) is
    probed, made locally, removed (Rmdir Force, fact 29) and made a link
    to the staging link (fact 37); a republish succeeds; unpublish removes
    only the pod link and unstage only the staging link (fact 11b)."""
    wine_cannot(srv, "29, 37", "the staging and pod paths are directory symlinks, and " + NO_SYMLINKS)
    d = Trident(call, srv)
    stg, pub = d.staging("trident_pvc_pub"), d.pod("pod-trident-1", "pv-trident-1")
    d.kubelet_mkdir(ntpath.dirname(pub))
    export = d.stage("svm2.corp.example", "/trident_pvc_pub", stg)
    assert d.publish(stg, pub) == "published"
    assert os.readlink(d.host(stg)) == export + "\\"
    assert os.path.realpath(d.host(pub)) == os.path.realpath(d.host(stg))
    assert d.publish(stg, pub) in ("published", "already published")  # kubelet retries
    d.unpublish(pub)
    assert not os.path.lexists(d.host(pub)) and os.path.lexists(d.host(stg))
    d.unpublish(pub)  # Rmdir(Force) of a missing path
    d.unstage("svm2.corp.example", "/trident_pvc_pub", stg)
    assert not os.path.lexists(d.host(stg))


SHARE_TOTAL, SHARE_FREE = 100 * GIB, 60 * GIB  # the smb simulator's default share size


def test_fact31_36_trident_smb_stats(call, srv):
    """Trident's NodeGetVolumeStats on a published SMB volume: three new
    clients (fact 36), GetVolumeIDFromTargetPath of the pod path (a link to
    the staging link to the share, fact 37) answers the share's ID, and
    GetVolumeStats of it the share's size and used bytes (fact 31), where
    upstream fails and Trident reports an empty volume. The same ID from
    the staging path and a deeper path of the same share; every call that
    acts on a disk volume refuses it by name; once unstaged, the ID is
    NOT_FOUND and the paths are gone."""
    wine_cannot(srv, "31, 36, 37", "the staging and pod paths are directory symlinks, and " + NO_SYMLINKS)
    d = Trident(call, srv)
    stg, pub = d.staging("trident_pvc_st"), d.pod("pod-trident-2", "pv-trident-2")
    d.kubelet_mkdir(ntpath.dirname(pub))
    d.stage("svm3.corp.example", "/trident_pvc_st", stg)
    assert d.publish(stg, pub) == "published"
    available, capacity, used = d.stats(pub)
    assert not d.errors, d.errors
    assert (capacity, used, available) == (SHARE_TOTAL, SHARE_TOTAL - SHARE_FREE, SHARE_FREE)
    assert len(d.leaked) == 3
    share_id = "\\\\?\\UNC\\svm3.corp.example\\trident_pvc_st\\"
    assert staged_volume(d, pub) == share_id
    assert staged_volume(d, stg) == share_id  # the staging link itself
    for version, method, fields in [
            ("v1", "GetDiskNumberFromVolumeID", {}), ("v1", "IsVolumeFormatted", {}),
            ("v1", "FormatVolume", {}), ("v1", "ResizeVolume", {"size_bytes": 0}),
            ("v1", "MountVolume", {"target_path": d.staging("other")}),
            ("v1", "UnmountVolume", {"target_path": stg}), ("v1", "WriteVolumeCache", {})]:
        r, code, details = call("volume", version, method, volume_id=share_id, **fields)
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (method, code, details)
        assert share_id in details and "SMB share" in details, (method, details)
    d.unpublish(pub)
    d.unstage("svm3.corp.example", "/trident_pvc_st", stg)
    _, code, details = call("volume", "v1", "GetVolumeStats", volume_id=share_id)
    assert code == grpc.StatusCode.NOT_FOUND and "svm3.corp.example" in details, details
    d.close()


def test_fact24_31_csi_driver_smb_publish_and_volume_id(call, srv):
    """csi-driver-smb's NodePublish: CreateSymlink(staging link -> pod path)
    succeeds (fact 24; the source leads to a mapped share), and the pod
    path resolves to the share's ID; a link to a share that is not mapped
    stays refused as a CreateSymlink source and answers no ID."""
    wine_cannot(srv, "24, 31", "the staging and pod paths are directory symlinks, and " + NO_SYMLINKS)
    d = SMB(call, srv)
    stg, pub = d.staging("smb-pub"), d.pod("pod-smb-1", "pv-smb-1")
    d.kubelet_mkdir(ntpath.dirname(pub))
    s = d.stage("\\\\fs2.example.com\\Share2\\pvc-9", stg)
    d.rpc("filesystem", "CreateSymlink", source_path=s, target_path=d.normalize(pub))
    assert staged_volume(d, pub) == "\\\\?\\UNC\\fs2.example.com\\share2\\"
    total = d.rpc("volume", "GetVolumeStats", volume_id=staged_volume(d, pub)).total_bytes
    assert total == SHARE_TOTAL
    d.rpc("filesystem", "Rmdir", path=d.normalize(pub), force=True)
    d.unstage(s)
    # a link to a share nobody mapped
    os.symlink("\\\\fs2.example.com\\share2\\pvc-9\\", d.host(stg))
    _, code, details = call("filesystem", "v1", "CreateSymlink", source_path=s, target_path=d.normalize(pub))
    assert code != grpc.StatusCode.OK and not os.path.lexists(d.host(pub)), details
    _, code, details = call("volume", "v1", "GetVolumeIDFromTargetPath", target_path=s)
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "not an SMB global mapping" in details, details
    os.unlink(d.host(stg))
