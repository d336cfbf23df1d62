/* smblink.c - links that lead to an SMB global mapping (see smblink.h). */
#include "groups/common/smblink.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "groups/common/hostpath.h"

bool cp_smblink_root(const char *unc, char *root, size_t len)
{
    const char *part[2];
    size_t n[2];
    const char *p = unc;
    for (int k = 0; k < 2; k++) {
        while (*p == '\\')
            p++;
        part[k] = p;
        while (*p != '\0' && *p != '\\')
            p++;
        n[k] = (size_t)(p - part[k]);
        if (n[k] == 0)
            return false;
    }
    int w = snprintf(root, len, "\\\\%.*s\\%.*s", (int)n[0], part[0], (int)n[1], part[1]);
    if (w < 0 || (size_t)w >= len)
        return false;
    for (char *c = root; *c != '\0'; c++)
        *c = (char)tolower((unsigned char)*c);
    return true;
}

/* A share's path as a link stores it: "\\server\...", not "\\?\" or
 * "\\.\" (device and long-path forms). */
static bool is_unc(const char *t)
{
    return t[0] == '\\' && t[1] == '\\' && t[2] != '\0' && t[2] != '?' && t[2] != '.' &&
           t[2] != '\\';
}

int cp_smblink_find(cp_call *call, const cp_pathrules *rules, const cp_fs_host *fs,
                    const cp_smb_host *smb, const char *path, cp_smblink *out, cp_error *e)
{
    if (smb == NULL || smb->ops == NULL || smb->ops->state == NULL || fs->ops->read_link == NULL)
        return CP_SMBLINK_NONE;
    const char *cur = path;
    for (int step = 0; step < CP_SMBLINK_STEPS; step++) {
        cp_error e2;
        /* No link here (any more), or one that cannot be read: no share;
         * the caller answers as it would without SMB links. */
        if (fs->ops->read_link(fs->ctx, cur, out->target, sizeof(out->target), &e2) != CP_OK)
            return CP_SMBLINK_NONE;
        if (!is_unc(out->target)) {
            /* a local target: the rules again, as for any path a caller
             * names; one that leads outside is no share link */
            const char *next;
            if (cp_hostpath_confine_entry(call, rules, fs, out->target, CP_PATH_READ, &next, &e2) !=
                CP_OK)
                return CP_SMBLINK_NONE;
            cur = next;
            continue;
        }
        if (!cp_smblink_root(out->target, out->root, sizeof(out->root)))
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s leads to %s, which names no share",
                                path, out->target);
        cp_smb_state st;
        int rc = smb->ops->state(smb->ctx, out->root, &st, e);
        if (rc != CP_OK)
            return rc;
        if (st == CP_SMB_MAPPED)
            return CP_OK;
        if (st == CP_SMB_UNREACHABLE)
            return cp_error_set(e, CP_E_UNAVAILABLE,
                                "%s leads to %s: the SMB global mapping of %s does not answer",
                                path, out->target, out->root);
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "%s leads to %s: %s is not an SMB global mapping", path, out->target,
                            out->root);
    }
    return CP_SMBLINK_NONE; /* too many links: not a chain NewSmbGlobalMapping and a driver make */
}
