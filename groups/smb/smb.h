/* smb.h - the smb group (v1alpha1, v1beta1, v1beta2, v1; WIRE-API §7.4):
 * SMB global mappings of \\server\share roots and the directory link from
 * a host path to the remote path, through winapi/smb.h.
 *
 * Upstream's results for valid input are kept: '/' becomes '\'; an empty
 * remote_path is UNKNOWN "remote path is empty"; fewer than two non-empty
 * components is UNKNOWN "remote path (<path>) is invalid"; the root is
 * "\\<server>\<share>" lower-cased; a root mapped but unreachable is
 * unmapped and mapped again; a failed mapping is "NewSmbGlobalMapping
 * failed. <cause>", a failed link "creating link <local> to <remote>
 * failed with error: <cause>", a failed removal "RemoveSmbGlobalMapping
 * failed. <cause>", each with the host's status code.
 *
 * Beyond upstream (INVALID_ARGUMENT, before anything is mapped):
 * NewSmbGlobalMapping's remote_path must be \\server\share[\path] with a
 * plausible server name (letters, digits, '-', '_', '.'; no '\\?\',
 * '\\.\', device or drive forms, no '.' or '..' component).
 * RemoveSmbGlobalMapping takes what upstream takes, the first two
 * non-empty components as the root (one leading backslash, as NetApp
 * Trident sends, or none, or any sub-path), and the rules are checked on
 * that root alone. For both: a share of this machine is refused (localhost
 * and *.localhost, this computer's NetBIOS or DNS name, and any address
 * that reaches it in any form Windows reads as an address: loopback,
 * unspecified, or one of the addresses the host reports for it, see
 * selfaddr.h), and so is an administrative share (a share name ending in
 * '$' once Windows' trailing dots and spaces are dropped: C$, ADMIN$,
 * IPC$, "C$."), unless groups.smb.allowedServers names that server exactly
 * as written (no wildcard). When allowedServers is set, the server must
 * match one of its entries (exact, or "*.suffix"). A server written as an
 * address when the host cannot list this machine's addresses is refused
 * with the host's status. local_path passes the filesystem rules and is
 * confined (hostpath.h) before any mapping.
 * The password is given only to the host's map(): no error text, log line
 * or audit record carries it (the audit redacts the field "password").
 */
#ifndef CP_GROUPS_SMB_H
#define CP_GROUPS_SMB_H

#include <stdbool.h>
#include <stddef.h>

#include "../../server/method.h"
#include "../../winapi/fs.h"
#include "../../winapi/smb.h"
#include "../common/pathrules.h"

typedef struct cp_smb_policy {
    const char *const *allowed; /* groups.smb.allowedServers (NULL: not set) */
    size_t n_allowed;
    bool restricted;  /* allowedServers was configured */
    const char *self; /* this machine's NetBIOS name ("" unknown) */
    const char *self_dns;
    const cp_smb_addr *local; /* this machine's addresses, for this call */
    size_t n_local;
} cp_smb_policy;

typedef struct cp_smb_group_ctx {
    cp_smb_host host;
    cp_fs_host fs;
    const cp_pathrules *rules;
    bool require_privacy;
    cp_smb_policy policy;
} cp_smb_group_ctx;

typedef struct cp_smb_request {
    const char *remote_path;
    const char *local_path;
    const char *username;
    const char *password;
} cp_smb_request;

typedef struct cp_smb_response {
    const char *error; /* never filled, as upstream */
} cp_smb_response;

/* Upstream's normalisation: '/' -> '\' into norm, the lower-cased root
 * "\\server\share" into root. CP_E_UNKNOWN with upstream's texts. */
int cp_smb_normalize(const char *remote, char *norm, size_t normlen, char *root, size_t rootlen,
                     cp_error *e);
/* The rules beyond upstream on a normalized path (see above). */
int cp_smb_check_remote(const cp_smb_policy *p, const char *norm, cp_error *e);
/* True when server matches pattern ("name" or "*.suffix"), case-insensitive. */
bool cp_smb_server_matches(const char *pattern, const char *server);

int cp_smb_handle_new(cp_call *call, const void *req, void *resp);
int cp_smb_handle_remove(cp_call *call, const void *req, void *resp);

extern const cp_fieldmap cp_smb_map_new[];
extern const cp_fieldmap cp_smb_map_remove[];
extern const cp_fieldmap cp_smb_map_error[];

extern const cp_service_def cp_smb_v1alpha1_def;
extern const cp_service_def cp_smb_v1beta1_def;
extern const cp_service_def cp_smb_v1beta2_def;
extern const cp_service_def cp_smb_v1_def;

#endif
