/* filesystem.h - the filesystem group: version-agnostic request handling
 * and the five version tables (v1alpha1, v1beta1, v1beta2, v1, v2alpha1).
 *
 * Every version maps its messages onto cp_fs_request / cp_fs_response by
 * field name; the handlers below are the union of all RPCs (WIRE-API §7.3).
 * Legacy names point at their successors: LinkPath -> CreateSymlink,
 * IsMountPoint -> IsSymlink.
 *
 * Each handler: path rules first (groups/common/pathrules.h), in
 * upstream's order (CreateSymlink: target_path, then source_path); then
 * confinement again after the host resolves links (see "resolution" in
 * filesystem.c); then the host operation (host/fs.h), which for a write
 * judges again, through the handle it writes through, what it reached
 * (cp_fs_guard). Status codes:
 *   INVALID_ARGUMENT     a path rule is broken (the message names the path),
 *                        or Rmdir/RmdirContents/CreateSymlink's target_path
 *                        names a configured directory or an ancestor of one
 *   NOT_FOUND            Rmdir (force=false), RmdirContents or IsSymlink on
 *                        a missing path
 *   ALREADY_EXISTS       CreateSymlink onto an existing target_path
 *   FAILED_PRECONDITION  non-empty directory without force, a file where a
 *                        directory is needed, a dangling link inside a path
 *   others               as the host reports them (PERMISSION_DENIED, ...)
 */
#ifndef CP_GROUPS_FILESYSTEM_H
#define CP_GROUPS_FILESYSTEM_H

#include <stdbool.h>

#include "dispatch/method.h"
#include "host/fs.h"
#include "host/smb_host.h"
#include "groups/common/pathrules.h"

/* The context a filesystem service is bound with (cp_service.ctx). Both
 * members are borrowed: the owner (groups.c) keeps them alive. */
typedef struct cp_fs_group_ctx {
    cp_fs_host fs;
    const cp_pathrules *rules;
    const cp_smb_host *smb; /* SMB mappings a link's source may lead to (smblink.h); may be NULL */
} cp_fs_group_ctx;

/* Internal request: the union of every version's request fields. Strings
 * are borrowed from the decoded message; never NULL after conversion. */
typedef struct cp_fs_request {
    const char *path;
    const char *source_path; /* CreateSymlink/LinkPath: what the link points to */
    const char *target_path; /* CreateSymlink/LinkPath: the link to create */
    bool force;              /* Rmdir */
} cp_fs_request;

/* Internal response: exists / is_symlink / is_mount_point. */
typedef struct cp_fs_response {
    bool result;
} cp_fs_response;

/* Handlers (cp_handler_fn). req is a cp_fs_request, resp a cp_fs_response;
 * return CP_OK or the status recorded with cp_call_fail. */
int cp_fs_handle_path_exists(cp_call *call, const void *req, void *resp);
int cp_fs_handle_mkdir(cp_call *call, const void *req, void *resp);
int cp_fs_handle_rmdir(cp_call *call, const void *req, void *resp);
int cp_fs_handle_rmdir_contents(cp_call *call, const void *req, void *resp);
int cp_fs_handle_create_symlink(cp_call *call, const void *req, void *resp);
int cp_fs_handle_is_symlink(cp_call *call, const void *req, void *resp);

/* Field maps shared by the version tables (terminated by {NULL}). Proto
 * field names are the same in every version that has the field. */
extern const cp_fieldmap cp_fs_map_path[];           /* path */
extern const cp_fieldmap cp_fs_map_path_force[];     /* path, force */
extern const cp_fieldmap cp_fs_map_link[];           /* source_path, target_path */
extern const cp_fieldmap cp_fs_map_exists[];         /* exists */
extern const cp_fieldmap cp_fs_map_is_symlink[];     /* is_symlink */
extern const cp_fieldmap cp_fs_map_is_mount_point[]; /* is_mount_point */

/* The version tables, in catalog order. */
extern const cp_service_def cp_fs_v1alpha1_def;
extern const cp_service_def cp_fs_v1beta1_def;
extern const cp_service_def cp_fs_v1beta2_def;
extern const cp_service_def cp_fs_v1_def;
extern const cp_service_def cp_fs_v2alpha1_def;

#endif
