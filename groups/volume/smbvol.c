/* smbvol.c - the volume ID and the stats of an SMB share (smbvol.h). */
#include "groups/volume/smbvol.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define PREFIX "\\\\?\\UNC\\"

bool cp_smbvol_id(const char *root, char *out, size_t len)
{
    if (strncmp(root, "\\\\", 2) != 0)
        return false;
    int n = snprintf(out, len, PREFIX "%s\\", root + 2);
    return n > 0 && (size_t)n < len;
}

bool cp_smbvol_parse(const char *id, char *root, size_t len)
{
    size_t pl = strlen(PREFIX);
    if (strncasecmp(id, PREFIX, pl) != 0)
        return false;
    const char *server = id + pl, *sep = strchr(server, '\\');
    if (sep == NULL || sep == server)
        return false;
    const char *share = sep + 1, *end = strchr(share, '\\');
    if (end == NULL || end == share || end[1] != '\0')
        return false;
    for (const char *c = server; c < end; c++)
        if ((unsigned char)*c < 0x20 || *c == '/')
            return false;
    int n = snprintf(root, len, "\\\\%.*s", (int)(end - server), server);
    if (n < 0 || (size_t)n >= len)
        return false;
    for (char *c = root; *c != '\0'; c++)
        *c = (char)tolower((unsigned char)*c);
    return true;
}

int cp_smbvol_stats(const cp_smb_host *smb, const char *id, const char *root, int64_t *total,
                    int64_t *used, cp_error *e)
{
    cp_smb_state st;
    int rc = smb->ops->state(smb->ctx, root, &st, e);
    if (rc != CP_OK)
        return rc;
    if (st == CP_SMB_UNMAPPED)
        return cp_error_set(e, CP_E_NOT_FOUND, "volume %s: %s is not an SMB global mapping", id,
                            root);
    if (st == CP_SMB_UNREACHABLE)
        return cp_error_set(e, CP_E_UNAVAILABLE,
                            "volume %s: the SMB global mapping of %s does not answer", id, root);
    uint64_t size = 0, free_bytes = 0;
    if (smb->ops->space == NULL)
        return cp_error_set(e, CP_E_UNIMPLEMENTED, "volume %s: no share sizes on this host", id);
    rc = smb->ops->space(smb->ctx, root, &size, &free_bytes, e);
    if (rc != CP_OK)
        return rc;
    if (size > INT64_MAX)
        size = INT64_MAX;
    *total = (int64_t)size;
    *used = (int64_t)(size - (free_bytes < size ? free_bytes : size));
    return CP_OK;
}
