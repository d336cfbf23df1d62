/* smbvol.h - SMB shares in the volume group: the volume ID of a share and
 * its stats (volume.h).
 *
 * GetVolumeIDFromTargetPath (and GetVolumeIDFromMount) of a confined
 * directory link that leads to an active SMB global mapping (smblink.h)
 * answers the share's ID, "\\?\UNC\<server>\<share>\" with the root
 * lower-cased, so the same share always has the same ID whatever link or
 * sub-path led to it. GetVolumeStats (and VolumeStats) of that ID answers
 * the share's size and used bytes (the SMB host's space(): the share root
 * as GetDiskFreeSpaceExW reports it) while the mapping exists. Every call
 * that acts on a disk volume refuses the ID with INVALID_ARGUMENT naming it
 * (the code any ID that is not "\\?\Volume{GUID}\" gets), so a block
 * driver that met one would decide as before. groups.smb.volumeStats:
 * false turns the first two off.
 */
#ifndef CP_GROUPS_VOLUME_SMBVOL_H
#define CP_GROUPS_VOLUME_SMBVOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "host/smb_host.h"

/* The ID of share root "\\server\share" into out; false when it does not fit. */
bool cp_smbvol_id(const char *root, char *out, size_t len);

/* True when id has the form of a share's ID; root then gets
 * "\\server\share", lower-cased. */
bool cp_smbvol_parse(const char *id, char *root, size_t len);

/* The share's stats while it is mapped: total = its size, used = size -
 * free. NOT_FOUND when root is no SMB global mapping (any more),
 * UNAVAILABLE when it does not answer; e names the share. */
int cp_smbvol_stats(const cp_smb_host *smb, const char *id, const char *root, int64_t *total,
                    int64_t *used, cp_error *e);

#endif
