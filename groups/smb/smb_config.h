/* smb_config.h - the smb group's own settings (groups.smb in the
 * configuration file and -require-privacy; the service fills them).
 * Portable C. */
#ifndef CP_SMB_CONFIG_H
#define CP_SMB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cp_smb_config {
    /* -require-privacy=false: mappings without SMB encryption (the zero
     * value keeps upstream's default, RequirePrivacy true). */
    bool privacy_off;
    /* groups.smb.allowedServers: when servers_restricted (the key was
     * given, even as []), the only servers NewSmbGlobalMapping may map
     * ("name" or "*.suffix"). The groups copy the list. */
    bool servers_restricted;
    const char *const *allowed_servers;
    size_t n_allowed_servers;
    /* groups.smb.volumeStats: false: GetVolumeIDFromTargetPath and
     * GetVolumeStats do not answer for SMB shares (groups/volume/smbvol.h). */
    bool volume_stats_off;
} cp_smb_config;

#endif
