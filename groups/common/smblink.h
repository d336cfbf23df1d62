/* smblink.h - a confined directory link that leads to an active SMB global
 * mapping, shared by the filesystem group (CreateSymlink's source) and the
 * volume group (GetVolumeIDFromTargetPath, GetVolumeStats).
 *
 * NewSmbGlobalMapping makes its local_path a directory symbolic link to
 * \\server\share\... (the smb group); drivers then link a pod path to that
 * staging link (csi-driver-smb, NetApp Trident: DRIVER-CONTRACTS facts
 * 24, 37). Such a chain is read link by link from what each link stores
 * (fs.h read_link), never opened through: every local target is confined
 * again by the path rules, and the chain counts only when its last link
 * stores a UNC path whose share root the SMB host reports mapped and
 * answering. A root is upstream's: the first two non-empty components,
 * lower-cased.
 */
#ifndef CP_GROUPS_SMBLINK_H
#define CP_GROUPS_SMBLINK_H

#include "dispatch/method.h"
#include "host/fs.h"
#include "host/smb_host.h"
#include "groups/common/pathrules.h"

#define CP_SMBLINK_STEPS 8 /* links read at most, as GetVolumeIDFromTargetPath follows */
#define CP_SMBLINK_ROOT_MAX (2 * CP_SMB_NAME_MAX + 4)
#define CP_SMBLINK_TARGET_MAX 1024

/* The answer for no share at all: path is no link, or its links end at a
 * local path. Positive, so never a cp_status. */
#define CP_SMBLINK_NONE 1

typedef struct cp_smblink {
    char root[CP_SMBLINK_ROOT_MAX];     /* "\\server\share", lower-cased */
    char target[CP_SMBLINK_TARGET_MAX]; /* the UNC path the last link stores */
} cp_smblink;

/* Reads path's links (path itself confined already by the caller): CP_OK
 * and *out when they lead to a mapped share that answers;
 * CP_SMBLINK_NONE when they lead to no share: path is no link, a link
 * cannot be read, or a local link leads outside the configured
 * directories (the caller then answers as it would without SMB links);
 * FAILED_PRECONDITION (not mapped) or UNAVAILABLE (mapped, not answering)
 * naming path and the share; INVALID_ARGUMENT for a UNC target with no
 * share; the SMB host's error as it came. A host without read_link, or
 * smb NULL, has no share links: CP_SMBLINK_NONE. */
int cp_smblink_find(cp_call *call, const cp_pathrules *rules, const cp_fs_host *fs,
                    const cp_smb_host *smb, const char *path, cp_smblink *out, cp_error *e);

/* Upstream's root of a UNC path ("\\server\share\x" -> "\\server\share",
 * lower-cased) into root; false when it has no two components. */
bool cp_smblink_root(const char *unc, char *root, size_t len);

#endif
