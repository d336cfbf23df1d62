/* iscsidsc_win.c - loading the iSCSI initiator API (see iscsidsc_win.h). */
#include "host/iscsidsc_win.h"

#include <stdio.h>
#include <string.h>

#include "host/iscsi_isdsc.h"

#define DLL_TEXT "the iSCSI initiator API (iscsidsc.dll in system32)"

/* GetProcAddress's FARPROC through void (*)(void), the cast GCC's
 * -Wcast-function-type accepts, to the entry's own type. */
#define RESOLVE(d, name)                                                                           \
    ((d)->name = (__typeof__((d)->name))(void (*)(void))GetProcAddress((d)->dll, #name))

int cp_isdsc_load(cp_isdsc *out, cp_error *e)
{
    if (out->dll != NULL)
        return CP_OK;
    /* "LoadLibraryExW function": LOAD_LIBRARY_SEARCH_SYSTEM32 looks in
     * %windows%\system32 only, never in the application's directory or on
     * the search path, so no other file of that name is ever loaded.
     * The iSCSI initiator ships iscsidsc.dll there on every Windows Server
     * edition; Wine 8 has none (LoadLibraryExW fails with error 126). */
    HMODULE m = LoadLibraryExW(L"iscsidsc.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (m == NULL) {
        DWORD err = GetLastError();
        char text[256];
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "%s is not installed: loading it failed: %s (error %lu)", DLL_TEXT,
                            cp_win_errtext(err, text, sizeof(text)), (unsigned long)err);
    }
    cp_isdsc d = {.dll = m};
    RESOLVE(&d, AddIScsiSendTargetPortalW);
    RESOLVE(&d, RemoveIScsiSendTargetPortalW);
    RESOLVE(&d, ReportIScsiSendTargetPortalsExW);
    RESOLVE(&d, RefreshIScsiSendTargetPortalW);
    RESOLVE(&d, ReportIScsiTargetsW);
    RESOLVE(&d, GetIScsiTargetInformationW);
    RESOLVE(&d, LoginIScsiTargetW);
    RESOLVE(&d, LogoutIScsiTarget);
    RESOLVE(&d, GetIScsiSessionListW);
    RESOLVE(&d, GetDevicesForIScsiSessionW);
    RESOLVE(&d, SetIScsiInitiatorCHAPSharedSecret);
    RESOLVE(&d, ReportIScsiPersistentLoginsW);
    RESOLVE(&d, RemoveIScsiPersistentTargetW);
    *out = d;
    return CP_OK;
}

int cp_isdsc_need(const void *fn, const char *name, cp_error *e)
{
    if (fn != NULL)
        return CP_OK;
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s has no %s", DLL_TEXT, name);
}

int cp_isdsc_error(cp_error *e, ULONG rc, const char *api, const char *object)
{
    const char *cause = NULL;
    switch (rc) {
    case CP_ISDSC_SERVICE_NOT_RUNNING:
        cause = "ISDSC_SERVICE_NOT_RUNNING";
        break;
    /* The DLL reaches the service by RPC ("iSCSI Initiator" service,
     * MSiSCSI, manual start by default): these are RPC's answers when no
     * server listens. Which one a stopped MSiSCSI gives has not been
     * observed here (see test/windows/iscsi.ps1). */
    case RPC_S_SERVER_UNAVAILABLE:
        cause = "RPC_S_SERVER_UNAVAILABLE";
        break;
    case EPT_S_NOT_REGISTERED:
        cause = "EPT_S_NOT_REGISTERED";
        break;
    default:
        break;
    }
    if (cause != NULL) {
        int st = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "%s%s%s: the iSCSI initiator service (MSiSCSI) is not running "
                              "(%s, error 0x%08lx); start it and set it to start automatically",
                              api, object[0] != '\0' ? " " : "", object, cause, (unsigned long)rc);
        SetLastError(rc);
        return st;
    }
    const cp_isdsc_code *isdsc = cp_isdsc_lookup(rc);
    if (isdsc == NULL)
        return cp_win_error(e, rc, api, object);
    /* The initiator's codes are not in the system's message table. */
    char text[512];
    if (!cp_win_systext(rc, text, sizeof(text)))
        snprintf(text, sizeof(text), "%s (%s)", isdsc->text, isdsc->name);
    return cp_win_error_as(e, isdsc->status, rc, text, api, object);
}

int cp_isdsc_status(ULONG rc)
{
    const cp_isdsc_code *isdsc = cp_isdsc_lookup(rc);
    return isdsc != NULL ? isdsc->status : cp_win_status(rc);
}

void cp_isdsc_unload(cp_isdsc *d)
{
    if (d->dll != NULL)
        FreeLibrary(d->dll);
    memset(d, 0, sizeof(*d));
}
