/* storagegroup.c - see storagegroup.h. */
#include "groups/common/storagegroup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/fssig.h"

const char *cp_sg_method(cp_call *call)
{
    const char *p = cp_call_path(call);
    const char *slash = strrchr(p, '/');
    return slash != NULL ? slash + 1 : p;
}

int cp_sg_fail(cp_call *call, const cp_error *e)
{
    return cp_call_fail(call, e->status, "%s: %s", cp_sg_method(call), e->msg);
}

static void *arena_alloc(void *actx, size_t n)
{
    return cp_call_alloc(actx, n);
}

cp_storage_alloc cp_sg_alloc(cp_call *call)
{
    cp_storage_alloc a = {arena_alloc, call};
    return a;
}

/* "boot and system", "boot" or "system". */
static const char *disk_kind(const cp_disk_info *d)
{
    return d->is_boot && d->is_system ? "boot and system" : d->is_boot ? "boot" : "system";
}

int cp_sg_refuse_boot(const cp_disk_info *d, const char *what, cp_error *e)
{
    if (d->is_boot || d->is_system)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is the %s disk: refusing to %s",
                            (unsigned)d->number, disk_kind(d), what);
    return CP_OK;
}

int cp_sg_refuse_volume(const char *id, const cp_volume_use *u, const cp_disk_info *disks,
                        const char *what, cp_error *e)
{
    static const struct {
        unsigned bit;
        const char *why;
    } roles[] = {
        {CP_VOLUME_ROLE_SYSTEM, "is the system volume (the boot loader's)"},
        {CP_VOLUME_ROLE_BOOT, "is the boot volume (it holds Windows)"},
        {CP_VOLUME_ROLE_PAGEFILE, "holds the page file"},
        {CP_VOLUME_ROLE_CRASHDUMP, "holds the crash dump file"},
    };
    char why[CP_VOLUME_DISKS_MAX * 48 + 256];
    const char *reason[sizeof(roles) / sizeof(roles[0]) + CP_VOLUME_DISKS_MAX];
    char disk_reason[CP_VOLUME_DISKS_MAX][48];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
        if ((u->roles & roles[i].bit) != 0)
            reason[n++] = roles[i].why;
    for (size_t i = 0; disks != NULL && i < u->n_disks && i < CP_VOLUME_DISKS_MAX; i++)
        if (disks[i].is_boot || disks[i].is_system) {
            snprintf(disk_reason[i], sizeof(disk_reason[i]), "is on disk %u, the %s disk",
                     (unsigned)disks[i].number, disk_kind(&disks[i]));
            reason[n++] = disk_reason[i];
        }
    if (n == 0)
        return CP_OK;
    size_t at = 0;
    why[0] = '\0';
    for (size_t i = 0; i < n && at < sizeof(why); i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " and " : ", ";
        int k = snprintf(why + at, sizeof(why) - at, "%s%s", sep, reason[i]);
        at += k > 0 ? (size_t)k : 0;
    }
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "volume %s %s: refusing to %s", id, why, what);
}

int cp_sg_refuse_needed_volumes(const cp_storage_host *h, uint32_t disk, const cp_storage_alloc *a,
                                const char *what, cp_error *e)
{
    char **ids = NULL;
    size_t n = 0;
    int rc = h->ops->list_volumes(h->ctx, disk, 0, a, &ids, &n, e);
    for (size_t i = 0; rc == CP_OK && i < n; i++) {
        cp_volume_use u;
        rc = h->ops->volume_use(h->ctx, ids[i], &u, e);
        u.n_disks = 0; /* the disk itself: the caller's cp_sg_refuse_boot */
        if (rc == CP_OK)
            rc = cp_sg_refuse_volume(ids[i], &u, NULL, what, e);
    }
    return rc;
}

int cp_sg_refuse_foreign(const cp_storage_host *h, const char *id, cp_error *e)
{
    uint8_t *head = malloc(CP_FSSIG_HEAD_BYTES);
    if (head == NULL)
        return cp_error_set(e, CP_E_NOMEM, "out of memory reading volume %s", id);
    size_t got = 0;
    int rc = h->ops->read_volume_head(h->ctx, id, head, CP_FSSIG_HEAD_BYTES, &got, e);
    const char *sig = rc == CP_OK ? cp_fssig_foreign(head, got) : NULL;
    if (sig != NULL)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                          "volume %s holds %s, which Windows does not mount: refusing to format "
                          "over it (groups.volume.formatForeignFilesystems: true allows it)",
                          id, sig);
    free(head);
    return rc;
}
