/* health.c - whether each group's back end works, for the standard health
 * service (dispatch/health.h). Each probe asks its host one read-only
 * question that needs the same machinery the group's calls need, the
 * questions client/health.c asks through the pipes:
 *
 *   filesystem  reads the kubelet directory's attributes (missing is fine:
 *               the file system answered)
 *   disk/volume lists the disks (the storage host's enumeration)
 *   smb         asks WMI's MSFT_SmbGlobalMapping for a share nobody maps
 *   system      reads the SMBIOS serial number
 *   iscsi       lists the initiator's target portals (the initiator API and
 *               its service must answer)
 *
 * NOT_FOUND from a host counts as an answer: the back end works. */
#include "groups/health.h"

#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "groups/common/pathrules.h"
#include "groups/common/storagegroup.h"
#include "groups/filesystem/filesystem.h"
#include "groups/iscsi/iscsi.h"
#include "groups/smb/smb.h"
#include "groups/system/system.h"

/* The share the smb probe asks about: a name no DNS resolves (.invalid,
 * RFC 2606), so no server is ever asked. */
#define PROBE_SHARE "\\\\csi-proxy-health.invalid\\probe"

static int answered(int rc)
{
    return rc == CP_E_NOT_FOUND ? CP_OK : rc;
}

static int probe_fs(void *ctx, cp_error *e)
{
    const cp_fs_group_ctx *c = ctx;
    size_t n = cp_pathrules_count(c->rules);
    if (n == 0)
        return CP_OK;
    bool exists = false;
    return answered(c->fs.ops->exists(c->fs.ctx, cp_pathrules_dir(c->rules, n - 1), &exists, e));
}

static void *arena_alloc(void *a, size_t n)
{
    return cp_arena_alloc(a, n);
}

static int probe_storage(void *ctx, cp_error *e)
{
    const cp_storage_group_ctx *c = ctx;
    cp_arena *a = cp_arena_new();
    if (a == NULL)
        return cp_error_set(e, CP_E_NOMEM, "health: out of memory");
    cp_storage_alloc al = {arena_alloc, a};
    cp_disk_info *disks = NULL;
    size_t n = 0;
    int rc = c->storage.ops->list_disks(c->storage.ctx, &al, &disks, &n, e);
    cp_arena_free(a);
    return answered(rc);
}

static int probe_smb(void *ctx, cp_error *e)
{
    const cp_smb_group_ctx *c = ctx;
    cp_smb_state st;
    return answered(c->host.ops->state(c->host.ctx, PROBE_SHARE, &st, e));
}

static int probe_system(void *ctx, cp_error *e)
{
    const cp_system_group_ctx *c = ctx;
    char serial[256];
    return answered(c->host.ops->bios_serial(c->host.ctx, serial, sizeof(serial), e));
}

static int probe_iscsi(void *ctx, cp_error *e)
{
    const cp_iscsi_group_ctx *c = ctx;
    cp_iscsi_portal *p = calloc(CP_ISCSI_LIST_MAX, sizeof(*p));
    if (p == NULL)
        return cp_error_set(e, CP_E_NOMEM, "health: out of memory");
    size_t n = 0;
    int rc = c->host.ops->list_portals(c->host.ctx, p, CP_ISCSI_LIST_MAX, &n, e);
    free(p);
    return answered(rc);
}

cp_health_probe_fn cp_groups_health_probe(const char *group)
{
    static const struct {
        const char *group;
        cp_health_probe_fn fn;
    } probes[] = {{"filesystem", probe_fs}, {"disk", probe_storage},  {"volume", probe_storage},
                  {"smb", probe_smb},       {"system", probe_system}, {"iscsi", probe_iscsi}};
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
        if (strcmp(probes[i].group, group) == 0)
            return probes[i].fn;
    return NULL;
}
