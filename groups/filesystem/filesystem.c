/* filesystem.c - the filesystem group's logic, shared by every version.
 *
 * Resolution. Textual rules cannot see links: C:\var\lib\kubelet\x may be
 * a link to C:\Windows. So after the rules pass, the host resolves links
 * and the result must still be inside (cp_pathrules_check_resolved). How
 * much is resolved depends on what the operation does with the last
 * component:
 *   ENTRY - it acts on the entry itself and never follows it (exists is an
 *           lstat, Rmdir removes a link rather than its target, Mkdir of an
 *           existing link changes nothing, CreateSymlink's target_path is
 *           created, IsSymlink looks at the link): resolve the parent and
 *           append the name. So a link whose target is outside (an SMB
 *           share, an unmounted volume) can still be inspected and removed.
 *   ALL   - it follows the last component (RmdirContents deletes what the
 *           directory contains; CreateSymlink's source_path is what the new
 *           link will lead to): resolve the whole path.
 * That check is by name; a caller who can write under a root could swap a
 * directory on the way for a link right after it. So the writes (Mkdir,
 * Rmdir, RmdirContents, CreateSymlink's target_path) also hand the host a
 * guard (cp_hostpath_guard): the host acts only through directory handles
 * it opened, and judges again - the same resolved-path and keep-the-roots
 * rules - the real place of the handle it writes through whenever a link
 * may lie on its way there (host/fs.h, cp_fs_guard). What is judged is
 * what is written: a swap after the check is refused, never acted on.
 * The host's removal walks never follow links below that handle: each
 * directory is opened relative to its parent without following a link and
 * emptied through that open directory, which is what makes a recursive
 * delete safe even if a link appears after this check. PathExists and
 * IsSymlink only read, and read by name.
 *
 * Roots. A configured directory (-kubelet-path, -working-dir) may be read
 * (PathExists, IsSymlink) and created when missing (Mkdir), never removed,
 * emptied or replaced: Rmdir, RmdirContents and CreateSymlink's target_path
 * are CP_PATH_REPLACE (groups/common/hostpath.h), which refuses a
 * configured directory or an ancestor of one, as given and as resolved.
 */
#include "groups/filesystem/filesystem.h"

#include "groups/common/hostpath.h"
#include "groups/common/smblink.h"

#include <stddef.h>
#include <string.h>

typedef enum resolve_mode { RESOLVE_ENTRY, RESOLVE_ALL } resolve_mode;

/* "Mkdir" from "/v1.Filesystem/Mkdir": messages name the RPC called. */
static const char *method_name(cp_call *call)
{
    const char *p = cp_call_path(call);
    const char *slash = strrchr(p, '/');
    return slash != NULL ? slash + 1 : p;
}

static int fail(cp_call *call, const cp_error *e)
{
    return cp_call_fail(call, e->status, "%s: %s", method_name(call), e->msg);
}

static const cp_fs_group_ctx *group_ctx(cp_call *call)
{
    return cp_call_ctx(call);
}

static int check_rules(cp_call *call, const char *path)
{
    cp_error e;
    if (cp_pathrules_check(group_ctx(call)->rules, path, &e) != CP_OK)
        return fail(call, &e);
    return CP_OK;
}

/* Second check after link resolution (see the top of this file), shared
 * with the volume group. On success *out is the normalized path the host
 * operation is given. Call only after check_rules() passed for path. */
static int confine(cp_call *call, const char *path, resolve_mode mode, cp_path_intent intent,
                   const char **out)
{
    const cp_fs_group_ctx *ctx = group_ctx(call);
    cp_error e;
    if (cp_hostpath_confine(call, ctx->rules, &ctx->fs, path, mode == RESOLVE_ENTRY, intent, out,
                            &e) != CP_OK)
        return fail(call, &e);
    return CP_OK;
}

/* The guard the host's write judges again through (hostpath.h). */
static const cp_fs_guard *guard(cp_call *call, const char *path, cp_path_intent intent)
{
    return cp_hostpath_guard(call, group_ctx(call)->rules, path, intent);
}

static int no_memory(cp_call *call)
{
    cp_error e;
    cp_error_set(&e, CP_E_NOMEM, "out of memory");
    return fail(call, &e);
}

static int checked(cp_call *call, const char *path, resolve_mode mode, cp_path_intent intent,
                   const char **out)
{
    int rc = check_rules(call, path);
    if (rc != CP_OK)
        return rc;
    return confine(call, path, mode, intent, out);
}

/* checked(), then the guard the host's write judges again through, for
 * the same path and intent. */
static int checked_write(cp_call *call, const char *path, resolve_mode mode, cp_path_intent intent,
                         const char **out, const cp_fs_guard **g)
{
    int rc = checked(call, path, mode, intent, out);
    if (rc != CP_OK)
        return rc;
    *g = guard(call, path, intent);
    return *g != NULL ? CP_OK : no_memory(call);
}

/* --- handlers ------------------------------------------------------------- */

int cp_fs_handle_path_exists(cp_call *call, const void *req, void *resp)
{
    const cp_fs_request *r = req;
    const cp_fs_host *fs = &group_ctx(call)->fs;
    const char *p;
    int rc = checked(call, r->path, RESOLVE_ENTRY, CP_PATH_READ, &p);
    if (rc != CP_OK)
        return rc;
    bool exists = false;
    cp_error e;
    if (fs->ops->exists(fs->ctx, p, &exists, &e) != CP_OK)
        return fail(call, &e);
    ((cp_fs_response *)resp)->result = exists;
    return CP_OK;
}

int cp_fs_handle_mkdir(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_fs_request *r = req;
    const cp_fs_host *fs = &group_ctx(call)->fs;
    const char *p;
    const cp_fs_guard *g;
    int rc = checked_write(call, r->path, RESOLVE_ENTRY, CP_PATH_READ, &p, &g);
    if (rc != CP_OK)
        return rc;
    cp_error e;
    if (fs->ops->mkdir_all(fs->ctx, p, g, &e) != CP_OK)
        return fail(call, &e);
    return CP_OK;
}

int cp_fs_handle_rmdir(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_fs_request *r = req;
    const cp_fs_host *fs = &group_ctx(call)->fs;
    const char *p;
    const cp_fs_guard *g;
    int rc = checked_write(call, r->path, RESOLVE_ENTRY, CP_PATH_REPLACE, &p, &g);
    if (rc != CP_OK)
        return rc;
    cp_error e;
    if (fs->ops->remove(fs->ctx, p, r->force, g, &e) != CP_OK)
        return fail(call, &e);
    return CP_OK;
}

int cp_fs_handle_rmdir_contents(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_fs_request *r = req;
    const cp_fs_host *fs = &group_ctx(call)->fs;
    const char *p;
    const cp_fs_guard *g;
    int rc = checked_write(call, r->path, RESOLVE_ALL, CP_PATH_REPLACE, &p, &g);
    if (rc != CP_OK)
        return rc;
    cp_error e;
    if (fs->ops->remove_contents(fs->ctx, p, g, &e) != CP_OK)
        return fail(call, &e);
    return CP_OK;
}

/* CreateSymlink's source must lead to a place inside the roots, with one
 * exception: a confined link whose links end at an active SMB global
 * mapping (smblink.h), the staging link NewSmbGlobalMapping made, which
 * csi-driver-smb and NetApp Trident link the pod path to (DRIVER-CONTRACTS
 * facts 24, 37; upstream checks the text only). The new link then stores
 * the source's own confined path and reaches the share only through it. */
static int confine_source(cp_call *call, const char *path, const char **out)
{
    const cp_fs_group_ctx *ctx = group_ctx(call);
    cp_error e, e2;
    if (cp_hostpath_confine(call, ctx->rules, &ctx->fs, path, false, CP_PATH_READ, out, &e) ==
        CP_OK)
        return CP_OK;
    const char *entry;
    cp_smblink *l = cp_call_alloc(call, sizeof(*l));
    if (l == NULL)
        return no_memory(call);
    if (cp_hostpath_confine(call, ctx->rules, &ctx->fs, path, true, CP_PATH_READ, &entry, &e2) ==
            CP_OK &&
        cp_smblink_find(call, ctx->rules, &ctx->fs, ctx->smb, entry, l, &e2) == CP_OK) {
        *out = entry;
        return CP_OK;
    }
    return fail(call, &e);
}

int cp_fs_handle_create_symlink(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_fs_request *r = req;
    const cp_fs_host *fs = &group_ctx(call)->fs;
    /* Upstream's order: the rules on target_path, then on source_path. */
    int rc = check_rules(call, r->target_path);
    if (rc == CP_OK)
        rc = check_rules(call, r->source_path);
    const char *link = NULL, *source = NULL;
    if (rc == CP_OK)
        rc = confine(call, r->target_path, RESOLVE_ENTRY, CP_PATH_REPLACE, &link);
    if (rc == CP_OK)
        rc = confine_source(call, r->source_path, &source);
    if (rc != CP_OK)
        return rc;
    const cp_fs_guard *g = guard(call, r->target_path, CP_PATH_REPLACE);
    if (g == NULL)
        return no_memory(call);
    cp_error e;
    if (fs->ops->symlink(fs->ctx, link, source, CP_FS_LINK_AUTO, g, &e) != CP_OK)
        return fail(call, &e);
    return CP_OK;
}

int cp_fs_handle_is_symlink(cp_call *call, const void *req, void *resp)
{
    const cp_fs_request *r = req;
    const cp_fs_host *fs = &group_ctx(call)->fs;
    /* Upstream checks no rules here; we do (drivers only ask about paths
     * under the kubelet directory). GCE sends kubelet's raw path, which
     * may lack the drive letter (fact 7): the system drive is prefixed
     * first (cp_hostpath_with_drive), then every rule applies. */
    const char *p;
    const char *path = cp_hostpath_with_drive(call, r->path);
    if (path == NULL)
        return no_memory(call);
    int rc = checked(call, path, RESOLVE_ENTRY, CP_PATH_READ, &p);
    if (rc != CP_OK)
        return rc;
    bool is_link = false;
    cp_error e;
    if (fs->ops->is_link(fs->ctx, p, &is_link, &e) != CP_OK)
        return fail(call, &e);
    ((cp_fs_response *)resp)->result = is_link;
    return CP_OK;
}

/* --- field maps -------------------------------------------------------- */

const cp_fieldmap cp_fs_map_path[] = {
    {"path", offsetof(cp_fs_request, path), CP_F_STRING},
    {NULL},
};
const cp_fieldmap cp_fs_map_path_force[] = {
    {"path", offsetof(cp_fs_request, path), CP_F_STRING},
    {"force", offsetof(cp_fs_request, force), CP_F_BOOL},
    {NULL},
};
const cp_fieldmap cp_fs_map_link[] = {
    {"source_path", offsetof(cp_fs_request, source_path), CP_F_STRING},
    {"target_path", offsetof(cp_fs_request, target_path), CP_F_STRING},
    {NULL},
};
const cp_fieldmap cp_fs_map_exists[] = {
    {"exists", offsetof(cp_fs_response, result), CP_F_BOOL},
    {NULL},
};
const cp_fieldmap cp_fs_map_is_symlink[] = {
    {"is_symlink", offsetof(cp_fs_response, result), CP_F_BOOL},
    {NULL},
};
const cp_fieldmap cp_fs_map_is_mount_point[] = {
    {"is_mount_point", offsetof(cp_fs_response, result), CP_F_BOOL},
    {NULL},
};
