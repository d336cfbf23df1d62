/* iscsi_win32.c - iscsi.h on Windows. Not implemented yet: every call
 * answers FAILED_PRECONDITION naming what is missing (after the group's
 * portable checks), so csi-proxy.exe keeps serving its other groups. The
 * intended back-end is the iSCSI initiator API (iscsidsc.dll:
 * AddIScsiSendTargetPortalW, ReportIScsiTargetsW, LoginIScsiTargetW,
 * LogoutIScsiTarget, GetDevicesForIScsiSessionW,
 * SetIScsiInitiatorCHAPSharedSecret), loaded at run time from system32 so
 * that the service starts where the initiator is absent. */
#include "iscsi.h"

#include <windows.h>

#define MISSING "the iSCSI initiator API (iscsidsc.dll) is not used by this build yet"
#define ABSENT "the iSCSI initiator API (iscsidsc.dll) is not installed in system32"

/* Which of the two a caller is told: the DLL is looked for in system32
 * only (LOAD_LIBRARY_SEARCH_SYSTEM32, LoadLibraryExW's documented flag),
 * never on the search path, and released at once. */
static const char *why(void)
{
    HMODULE h = LoadLibraryExW(L"iscsidsc.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (h == NULL)
        return ABSENT;
    FreeLibrary(h);
    return MISSING;
}

static int missing_portal(const cp_iscsi_portal *p, cp_error *e)
{
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "target portal %s:%u: %s", p->address,
                        (unsigned)p->port, why());
}

static int missing_target(const char *iqn, cp_error *e)
{
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "target %s: %s", iqn, why());
}

static int w_add(void *ctx, const cp_iscsi_portal *p, cp_error *e)
{
    (void)ctx;
    return missing_portal(p, e);
}

static int w_remove(void *ctx, const cp_iscsi_portal *p, cp_error *e)
{
    (void)ctx;
    return missing_portal(p, e);
}

static int w_list(void *ctx, cp_iscsi_portal *out, size_t max, size_t *n, cp_error *e)
{
    (void)ctx;
    (void)out;
    (void)max;
    *n = 0;
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "listing target portals: %s", why());
}

static int w_discover(void *ctx, const cp_iscsi_portal *p, char (*iqns)[CP_ISCSI_NAME_MAX],
                      size_t max, size_t *n, cp_error *e)
{
    (void)ctx;
    (void)iqns;
    (void)max;
    *n = 0;
    return missing_portal(p, e);
}

static int w_connect(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_iscsi_auth auth,
                     const char *user, const char *secret, cp_error *e)
{
    (void)ctx;
    (void)p;
    (void)auth;
    (void)user;
    (void)secret;
    return missing_target(iqn, e);
}

/* Not NOT_FOUND: the group would take that for "not connected" and
 * answer success without having asked Windows. */
static int w_disconnect(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_error *e)
{
    (void)ctx;
    (void)p;
    return missing_target(iqn, e);
}

static int w_disks(void *ctx, const cp_iscsi_portal *p, const char *iqn, uint32_t *out, size_t max,
                   size_t *n, cp_error *e)
{
    (void)ctx;
    (void)p;
    (void)out;
    (void)max;
    *n = 0;
    return missing_target(iqn, e);
}

static int w_set_mutual(void *ctx, const char *secret, cp_error *e)
{
    (void)ctx;
    (void)secret;
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "setting the mutual CHAP secret: %s", MISSING);
}

static void w_destroy(void *ctx)
{
    (void)ctx;
}

static const cp_iscsi_ops win_ops = {
    .add_portal = w_add,
    .remove_portal = w_remove,
    .list_portals = w_list,
    .discover = w_discover,
    .connect = w_connect,
    .disconnect = w_disconnect,
    .disks = w_disks,
    .set_mutual_chap_secret = w_set_mutual,
    .destroy = w_destroy,
};

int cp_iscsi_host_open_default(cp_iscsi_host *out, cp_error *e)
{
    (void)e;
    out->ops = &win_ops;
    out->ctx = NULL;
    return CP_OK;
}
