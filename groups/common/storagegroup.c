/* storagegroup.c - see storagegroup.h. */
#include "storagegroup.h"

#include <string.h>

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

int cp_sg_refuse_boot(const cp_disk_info *d, const char *what, cp_error *e)
{
    if (d->is_boot || d->is_system)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "disk %u is the %s disk: refusing to %s", (unsigned)d->number,
                            d->is_boot && d->is_system ? "boot and system"
                            : d->is_boot             ? "boot"
                                                     : "system",
                            what);
    return CP_OK;
}
