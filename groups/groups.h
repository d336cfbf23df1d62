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
#include "groups/iscsi/iscsi_config.h"
#include "groups/smb/smb_config.h"
#include "groups/system/system_config.h"
#include "groups/volume/volume_config.h"

#define CP_DEFAULT_KUBELET_PATH "C:\\var\\lib\\kubelet"

typedef struct cp_groups_config {
    /* The path rules every group applies (pathrules.h). */
    const char *kubelet_path;        /* NULL: CP_DEFAULT_KUBELET_PATH */
    const char *const *working_dirs; /* -working-dir values */
    size_t n_working_dirs;
    /* The hosts (borrowed: they must outlive the cp_groups). fs is
     * required; for the others ops NULL means this build's default
     * (cp_*_host_open_default: Win32 in csi-proxy.exe, the simulators
     * elsewhere), opened and released by the groups. storage serves the
     * disk and volume groups. */
    cp_fs_host fs;
    cp_storage_host storage;
    cp_system_host system_host;
    cp_smb_host smb_host;
    cp_iscsi_host iscsi_host;
    /* Each group's own settings. */
    cp_system_config system;
    cp_smb_config smb;
    cp_iscsi_config iscsi;
    cp_volume_config volume;
} cp_groups_config;

typedef struct cp_groups cp_groups;

/* NULL with e set on a bad configuration (e.g. a relative working dir:
 * INVALID_ARGUMENT) or a service table that fails its self-test
 * (INTERNAL). Strings in cfg are copied. Free with cp_groups_free. */
cp_groups *cp_groups_new(const cp_groups_config *cfg, cp_error *e);
void cp_groups_free(cp_groups *g);

size_t cp_groups_count(const cp_groups *g);
const cp_service *cp_groups_service(const cp_groups *g, size_t i);

/* Counts every service's calls in m (cp_metrics_add_service) and those
 * of the health service every pipe serves (cp_metrics_add_shared_service),
 * and adds the groups' own families: csi_proxy_path_refusals_total (paths
 * the path rules refused) and csi_proxy_disk_waiting_calls{disk} (calls
 * queued behind a disk's lock, for each disk held now). Before serving. 0,
 * or -1 when m is full or out of memory. */
int cp_groups_add_metrics(cp_groups *g, cp_metrics *m) __attribute__((warn_unused_result));

/* "csi-proxy-<group>-<version>" */
void cp_groups_pipe_name(const cp_service_def *def, char *out, size_t outlen);

#endif
