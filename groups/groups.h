/* groups.h - every (group, version) service this build serves, bound to
 * its runtime context. The transports create one listener per entry, in
 * upstream's order (filesystem, disk, volume, smb, system, iscsi; oldest
 * version first). Groups not implemented yet keep their service definition
 * (all methods known from the proto) with an empty table, so their pipes
 * exist and their calls answer UNIMPLEMENTED naming the method. */
#ifndef CP_GROUPS_H
#define CP_GROUPS_H

#include <stddef.h>

#include "dispatch/method.h"
#include "metrics/metrics.h"
#include "host/fs.h"
#include "host/iscsi_host.h"
#include "host/storage.h"
#include "host/smb_host.h"
#include "host/system_host.h"

#define CP_DEFAULT_KUBELET_PATH "C:\\var\\lib\\kubelet"

typedef struct cp_groups_config {
    const char *kubelet_path;        /* NULL: CP_DEFAULT_KUBELET_PATH */
    const char *const *working_dirs; /* -working-dir values */
    size_t n_working_dirs;
    cp_fs_host fs; /* borrowed: must outlive the cp_groups */
    /* Disk and volume host (borrowed). ops NULL: the groups open this
     * build's default host (cp_storage_host_open_default: Win32 in
     * csi-proxy.exe, the simulator elsewhere) and release it. */
    cp_storage_host storage;
    /* System group host (borrowed); ops NULL: this build's default
     * (cp_system_host_open_default), opened and released by the groups. */
    cp_system_host system;
    /* groups.system.allowedServices: when services_restricted, the only
     * services StartService/StopService may touch (copied). */
    bool services_restricted;
    const char *const *allowed_services;
    size_t n_allowed_services;
    /* SMB host (borrowed); ops NULL: this build's default
     * (cp_smb_host_open_default), opened and released by the groups. */
    cp_smb_host smb;
    /* -require-privacy=false: mappings without SMB encryption (the zero
     * value keeps upstream's default, RequirePrivacy true). */
    bool smb_privacy_off;
    /* groups.smb.allowedServers: when smb_servers_restricted, the only
     * servers NewSmbGlobalMapping may map (copied). */
    bool smb_servers_restricted;
    const char *const *allowed_smb_servers;
    size_t n_allowed_smb_servers;
    /* iSCSI initiator host (borrowed); ops NULL: this build's default
     * (cp_iscsi_host_open_default), opened and released by the groups. */
    cp_iscsi_host iscsi;
    /* groups.iscsi.allowedPortals: when iscsi_portals_restricted, the only
     * portals the initiator may be sent to (copied); entries named exactly
     * also lift the loopback, link-local and unspecified rule. */
    bool iscsi_portals_restricted;
    const char *const *allowed_iscsi_portals;
    size_t n_allowed_iscsi_portals;
    /* groups.volume.formatForeignFilesystems: FormatVolume formats a volume
     * whose first bytes carry a file system or container Windows does not
     * mount (host/fssig.h); the zero value refuses it. */
    bool format_foreign_filesystems;
} cp_groups_config;

typedef struct cp_groups cp_groups;

/* NULL with e set on a bad configuration (e.g. a relative working dir:
 * INVALID_ARGUMENT) or a service table that fails its self-test
 * (INTERNAL). Strings in cfg are copied. Free with cp_groups_free. */
cp_groups *cp_groups_new(const cp_groups_config *cfg, cp_error *e);
void cp_groups_free(cp_groups *g);

size_t cp_groups_count(const cp_groups *g);
const cp_service *cp_groups_service(const cp_groups *g, size_t i);

/* Counts every service's calls in m (cp_metrics_add_service) and adds the
 * groups' own families: csi_proxy_path_refusals_total (paths the path
 * rules refused) and csi_proxy_disk_waiting_calls{disk} (calls queued
 * behind a disk's lock, for each disk held now). Before serving. 0, or -1
 * when m is full or out of memory. */
int cp_groups_add_metrics(cp_groups *g, cp_metrics *m) __attribute__((warn_unused_result));

/* "csi-proxy-<group>-<version>" */
void cp_groups_pipe_name(const cp_service_def *def, char *out, size_t outlen);

#endif
