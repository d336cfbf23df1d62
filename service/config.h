/* config.h - the YAML configuration file (-config PATH; by default
 * C:\ProgramData\csi-proxy\config.yaml when that file exists). The
 * documented example is config/csi-proxy.example.yaml; its shape:
 *
 *   kubeletPath: C:\var\lib\kubelet
 *   workingDirs: [C:\csi]
 *   security:                     # every group, unless the group says otherwise
 *     allowedCallers: [SYSTEM, BUILTIN\Administrators]
 *     pipeSecurity: "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)" # optional; derived from allowedCallers
 *     allowBroadCallers: false    # true: admit Everyone, Users, ... (broad.h), with a warning
 *   groups:                       # present: only the groups listed are served
 *     filesystem: {}
 *     smb: {versions: [v1], allowedCallers: [S-1-5-21-1-2-3-1104]}
 *     system: {allowedServices: [w32time]}
 *     iscsi: {allowedPortals: [10.0.0.5, '*.san.example.com']}
 *   limits: {maxMessageBytes: 4194304, maxConnections: 2048, idleTimeout: 0s,
 *            drainTimeout: 10s, workerThreads: 0}
 *   log: {v: 2, file: C:\etc\kubernetes\logs\csi-proxy.log, toStderr: false,
 *         redactFields: [username]}
 *
 * Strict: an unknown or repeated key, a value of the wrong kind, an
 * unknown group or version, a bad SID, account name or SDDL is an error
 * naming file:line and the key path; the service then refuses to start.
 * So is a broad group (broad.h: Everyone, Authenticated Users, Users, ...)
 * in a served group's allowedCallers or in the allow entries of its
 * pipeSecurity, unless security.allowBroadCallers is true.
 * Command-line flags override the file (cp_config_fill_flags). Portable C
 * (libyaml); account names beyond the well-known ones are resolved by the
 * caller's resolver (LookupAccountNameW on Windows).
 */
#ifndef CP_CONFIG_H
#define CP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "groups/iscsi/iscsi_config.h"
#include "groups/smb/smb_config.h"
#include "groups/system/system_config.h"
#include "groups/volume/volume_config.h"
#include "service/flags.h"
#include "security/sid.h"

#define CP_CONFIG_DEFAULT_PATH "C:\\ProgramData\\csi-proxy\\config.yaml"
#define CP_CONFIG_MAX_FILE (1024 * 1024) /* larger files are refused */
#define CP_CONFIG_MAX_LIST 256           /* items in any list */
#define CP_CONFIG_N_GROUPS 6

/* Default limits (also what an absent key means). */
#define CP_CONFIG_DEFAULT_MAX_MESSAGE (4u * 1024 * 1024)
#define CP_CONFIG_DEFAULT_DRAIN_MS 10000
/* Open connections at most, over every pipe: a node's plugins use a few
 * each, and each connection may hold a bounded amount of memory for its
 * client (conn.h: 64 streams, answers held), so this bounds the total. */
#define CP_CONFIG_DEFAULT_MAX_CONNECTIONS 2048

/* Resolves an account name that is not a SID string and not in the
 * well-known table. Returns true and fills out, or false with why set. */
typedef bool (*cp_config_resolve_fn)(void *ctx, const char *account, cp_sid *out, char *why,
                                     size_t cap);

typedef struct cp_config_group {
    const char *name; /* "filesystem", "disk", "volume", "smb", "system", "iscsi" */
    bool served;
    char **versions; /* versions to serve; n_versions == 0: all of them */
    size_t n_versions;
    cp_sid *allowed; /* callers allowed (CheckTokenMembership on any) */
    size_t n_allowed;
    char *pipe_sddl;    /* effective pipe security, never NULL after load/defaults */
    int pipe_sddl_line; /* line it came from, 0 when derived from allowed */
    int line;           /* line of the group's entry, 0 when not in the file */
} cp_config_group;

typedef struct cp_config_limits {
    uint64_t max_message_bytes; /* default 4 MiB; 1 KiB .. 64 MiB */
    uint32_t max_connections;   /* 0: unlimited; default CP_CONFIG_DEFAULT_MAX_CONNECTIONS */
    int64_t idle_timeout_ms;    /* 0: never close idle connections */
    int64_t drain_timeout_ms;   /* default 10 s; stop, shutdown, Ctrl+C */
    uint32_t worker_threads;    /* 0: 2 x CPUs, at least 4 */
} cp_config_limits;

/* Logging; -1 / NULL: not in the file. */
typedef struct cp_config_log {
    int v;
    char *file;
    char *dir;
    int to_stderr, also_to_stderr, skip_headers;
    int64_t file_max_size_mb;
    int stderr_threshold; /* CP_SEV_* */
    char **redact_fields; /* more request fields kept out of logs (redact.h) */
    size_t n_redact_fields;
} cp_config_log;

typedef struct cp_config {
    char *path;         /* the file loaded; NULL for defaults only */
    char *kubelet_path; /* NULL: not in the file */
    char **working_dirs;
    size_t n_working_dirs;
    bool working_dirs_given;
    cp_config_group groups[CP_CONFIG_N_GROUPS];
    /* The groups' own keys, in each group's settings (groups/<g>/
     * <g>_config.h; the lists are owned by the config). smb.privacy_off
     * is not a key: the service sets it from -require-privacy. */
    cp_system_config system;
    cp_smb_config smb;
    cp_iscsi_config iscsi;
    cp_volume_config volume;
    bool allow_broad_callers; /* security.allowBroadCallers: broad groups admitted */
    cp_config_limits limits;
    cp_config_log log;
} cp_config;

/* Defaults without a file: every group and version served, callers
 * SYSTEM and BUILTIN\Administrators, pipe security
 * "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)", default limits. Returns CP_OK or
 * CP_E_NOMEM. Free with cp_config_free in every case. */
int cp_config_defaults(cp_config *c)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

/* Loads the file at path over the defaults (c is initialised here).
 * Returns CP_OK; CP_E_NOT_FOUND when the file does not exist; CP_E_IO when
 * it cannot be read; CP_E_INVALID_ARGUMENT with e->msg "<path>:<line>: ..."
 * for any content error. resolve may be NULL (well-known names only).
 * Free c with cp_config_free in every case. */
int cp_config_load_file(cp_config *c, const char *path, cp_config_resolve_fn resolve, void *ctx,
                        cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

/* The same from memory; name stands for the file in messages. */
int cp_config_load_string(cp_config *c, const char *name, const char *yaml, size_t len,
                          cp_config_resolve_fn resolve, void *ctx, cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

void cp_config_free(cp_config *c);

/* The group's entry (always present), or NULL for an unknown group. */
const cp_config_group *cp_config_group_of(const cp_config *c, const char *group);

/* When g admits a broad group (broad.h) by its allowed callers or its
 * pipe security: true, with which ("groups.smb.allowedCallers: S-1-5-32-545
 * (BUILTIN\Users)"-like, without the key). */
bool cp_config_group_broad(const cp_config_group *g, char *which, size_t cap);

/* Whether (group, version) is served. */
bool cp_config_serves(const cp_config *c, const char *group, const char *version);

/* out[i] = whether cp_catalog[i] (groups/catalog.h) is served; out has
 * room for cp_catalog_len entries. */
void cp_config_served_set(const cp_config *c, bool *out);

/* Copies into f the settings the command line did not give (per
 * cp_flags_given): kubelet path, working dirs, log settings. Strings point
 * into c (which must outlive f), except working dirs, copied into f.
 * Returns CP_OK or CP_E_NOMEM. */
int cp_config_fill_flags(const cp_config *c, cp_flags *f);

#endif
