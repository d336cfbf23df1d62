/* system_win.c - system.h on Windows: the SMBIOS table for the BIOS
 * serial, the Service Control Manager for services. No WMI, no child
 * process. Each function names the documentation it follows. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "host/smbios.h"
#include "host/system_host.h"

#define POLL_MS 200
#define RAW_SMBIOS_HEADER 8 /* RawSMBIOSData: 4 version bytes, DWORD Length */

/* An SCM error: cp_win_error (winutil_win.h) maps it with the other Win32
 * errors ("<op> <service>: <system text> (error <n>)"). */
static int svc_error(cp_error *e, DWORD err, const char *op, const char *name)
{
    return cp_win_error(e, err, op, name);
}

/* "GetSystemFirmwareTable function" (sysinfoapi.h) with provider 'RSMB':
 * a RawSMBIOSData header, then the structure table; the serial is string
 * 0x07 of the System Information structure (type 1), which is what WMI's
 * Win32_BIOS.SerialNumber shows. */
static int w32_bios_serial(void *ctx, char *out, size_t outlen, cp_error *e)
{
    (void)ctx;
    const DWORD rsmb = 0x52534D42; /* 'RSMB' */
    char why[256];
    UINT n = GetSystemFirmwareTable(rsmb, 0, NULL, 0);
    if (n == 0) {
        DWORD err = GetLastError();
        return cp_error_set(e, CP_E_UNAVAILABLE,
                            "GetBIOSSerialNumber: no SMBIOS table: %s (error %lu)",
                            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    uint8_t *buf = malloc(n);
    if (buf == NULL)
        return cp_error_set(e, CP_E_NOMEM, "GetBIOSSerialNumber: out of memory");
    UINT got = GetSystemFirmwareTable(rsmb, 0, buf, n);
    int rc = CP_OK;
    if (got == 0 || got > n) {
        DWORD err = got == 0 ? GetLastError() : ERROR_INSUFFICIENT_BUFFER;
        rc = cp_error_set(e, CP_E_UNAVAILABLE,
                          "GetBIOSSerialNumber: reading the SMBIOS table: %s (error %lu)",
                          cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    } else {
        DWORD len = 0;
        if (got >= RAW_SMBIOS_HEADER)
            memcpy(&len, buf + 4, sizeof(len));
        if (got < RAW_SMBIOS_HEADER || len > got - RAW_SMBIOS_HEADER ||
            cp_smbios_string(buf + RAW_SMBIOS_HEADER, len, CP_SMBIOS_TYPE_SYSTEM,
                             CP_SMBIOS_SYSTEM_SERIAL, out, outlen) < 0)
            rc = cp_error_set(e, CP_E_INTERNAL,
                              "GetBIOSSerialNumber: the SMBIOS table is malformed");
    }
    free(buf);
    return rc;
}

/* "OpenSCManagerW" and "OpenServiceW" (winsvc.h) with only the access the
 * operation needs. NULL with e set on failure; close both handles. */
static SC_HANDLE open_service(const char *name, DWORD access, const char *op, SC_HANDLE *scm,
                              cp_error *e)
{
    *scm = NULL;
    wchar_t *w = cp_win_utf8_to_wide(name);
    if (w == NULL) {
        cp_error_set(e, CP_E_NOMEM, "%s %s: out of memory", op, name);
        return NULL;
    }
    SC_HANDLE s = NULL;
    *scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
    if (*scm == NULL)
        svc_error(e, GetLastError(), op, name);
    else if ((s = OpenServiceW(*scm, w, access)) == NULL)
        svc_error(e, GetLastError(), op, name);
    free(w);
    if (s == NULL && *scm != NULL) {
        CloseServiceHandle(*scm);
        *scm = NULL;
    }
    return s;
}

static void close_service(SC_HANDLE s, SC_HANDLE scm)
{
    if (s != NULL)
        CloseServiceHandle(s);
    if (scm != NULL)
        CloseServiceHandle(scm);
}

static bool query_status(SC_HANDLE s, SERVICE_STATUS_PROCESS *st)
{
    DWORD need = 0;
    return QueryServiceStatusEx(s, SC_STATUS_PROCESS_INFO, (BYTE *)st, sizeof(*st), &need) != 0;
}

static const char *state_name(DWORD state)
{
    static const char *const names[] = {"UNKNOWN",       "STOPPED", "START_PENDING",
                                        "STOP_PENDING",  "RUNNING", "CONTINUE_PENDING",
                                        "PAUSE_PENDING", "PAUSED"};
    return state < sizeof(names) / sizeof(names[0]) ? names[state] : "UNKNOWN";
}

/* Polls QueryServiceStatusEx every POLL_MS until the service is in want,
 * for at most CP_SERVICE_WAIT_MS (upstream's loop). A service that falls
 * back to STOPPED with an exit code while starting has failed: say why. */
static int wait_state(SC_HANDLE s, DWORD want, const char *op, const char *name, cp_error *e)
{
    ULONGLONG until = GetTickCount64() + CP_SERVICE_WAIT_MS;
    SERVICE_STATUS_PROCESS st;
    for (;;) {
        if (!query_status(s, &st))
            return svc_error(e, GetLastError(), op, name);
        if (st.dwCurrentState == want)
            return CP_OK;
        if (want == SERVICE_RUNNING && st.dwCurrentState == SERVICE_STOPPED &&
            st.dwWin32ExitCode != NO_ERROR) {
            DWORD code = st.dwWin32ExitCode == ERROR_SERVICE_SPECIFIC_ERROR
                             ? st.dwServiceSpecificExitCode
                             : st.dwWin32ExitCode;
            return cp_error_set(e, CP_E_UNKNOWN,
                                "%s %s: the service stopped while starting (exit code %lu)", op,
                                name, (unsigned long)code);
        }
        if (GetTickCount64() >= until)
            return cp_error_set(e, CP_E_DEADLINE_EXCEEDED, "%s %s: not %s after %d s (state %s)",
                                op, name, state_name(want), CP_SERVICE_WAIT_MS / 1000,
                                state_name(st.dwCurrentState));
        Sleep(POLL_MS);
    }
}

/* "QueryServiceConfigW" (display name, start type) and
 * "QueryServiceStatusEx" (state). */
static int w32_get(void *ctx, const char *name, cp_service_info *out, cp_error *e)
{
    (void)ctx;
    SC_HANDLE scm,
        s = open_service(name, SERVICE_QUERY_CONFIG | SERVICE_QUERY_STATUS, "GetService", &scm, e);
    if (s == NULL)
        return e->status;
    int rc = CP_OK;
    QUERY_SERVICE_CONFIGW *cfg = NULL;
    DWORD need = 0, err = ERROR_SUCCESS;
    if (QueryServiceConfigW(s, NULL, 0, &need) ||
        (err = GetLastError()) != ERROR_INSUFFICIENT_BUFFER)
        err = err != ERROR_SUCCESS ? err : ERROR_INVALID_DATA; /* a zero-size config cannot be */
    else if ((cfg = malloc(need)) == NULL)
        err = ERROR_NOT_ENOUGH_MEMORY;
    else if (!QueryServiceConfigW(s, cfg, need, &need))
        err = GetLastError();
    else
        err = ERROR_SUCCESS;
    if (err == ERROR_SUCCESS) {
        char *dn = cp_win_wide_to_utf8(cfg->lpDisplayName != NULL ? cfg->lpDisplayName : L"");
        if (dn == NULL) {
            rc = cp_error_set(e, CP_E_NOMEM, "GetService %s: out of memory", name);
        } else {
            snprintf(out->display_name, sizeof(out->display_name), "%s", dn);
            free(dn);
        }
        out->start_type = (int)cfg->dwStartType;
    } else {
        rc = svc_error(e, err, "GetService", name);
    }
    SERVICE_STATUS_PROCESS st;
    if (rc == CP_OK) {
        if (query_status(s, &st))
            out->state = (int)st.dwCurrentState;
        else
            rc = svc_error(e, GetLastError(), "GetService", name);
    }
    free(cfg);
    close_service(s, scm);
    return rc;
}

/* "StartServiceW", then wait for SERVICE_RUNNING ("Starting a Service"). */
static int w32_start(void *ctx, const char *name, cp_error *e)
{
    (void)ctx;
    SC_HANDLE scm,
        s = open_service(name, SERVICE_START | SERVICE_QUERY_STATUS, "StartService", &scm, e);
    if (s == NULL)
        return e->status;
    int rc = CP_OK;
    if (!StartServiceW(s, 0, NULL)) {
        DWORD err = GetLastError();
        if (err != ERROR_SERVICE_ALREADY_RUNNING)
            rc = svc_error(e, err, "StartService", name);
    }
    if (rc == CP_OK)
        rc = wait_state(s, SERVICE_RUNNING, "StartService", name, e);
    close_service(s, scm);
    return rc;
}

/* ControlService(SERVICE_CONTROL_STOP) and wait for SERVICE_STOPPED; a
 * service that is not running is done. */
static int stop_one(SC_HANDLE s, const char *name, cp_error *e, DWORD *refused)
{
    SERVICE_STATUS st;
    *refused = NO_ERROR;
    if (!ControlService(s, SERVICE_CONTROL_STOP, &st)) {
        DWORD err = GetLastError();
        if (err == ERROR_SERVICE_NOT_ACTIVE)
            return CP_OK;
        *refused = err;
        return svc_error(e, err, "StopService", name);
    }
    return wait_state(s, SERVICE_STOPPED, "StopService", name, e);
}

/* The running services that depend on s, from "EnumDependentServicesW"
 * (winsvc.h): "in reverse order of start", i.e. the order to stop them
 * in. Returns a malloc'd array (caller frees) or NULL with e set. */
static ENUM_SERVICE_STATUSW *running_dependents(SC_HANDLE s, const char *name, DWORD *count,
                                                cp_error *e)
{
    DWORD need = 0;
    *count = 0;
    if (EnumDependentServicesW(s, SERVICE_ACTIVE, NULL, 0, &need, count)) {
        ENUM_SERVICE_STATUSW *none = malloc(sizeof(*none));
        if (none == NULL)
            cp_error_set(e, CP_E_NOMEM, "StopService %s: out of memory", name);
        return none;
    }
    if (GetLastError() != ERROR_MORE_DATA) {
        svc_error(e, GetLastError(), "StopService (dependents of)", name);
        return NULL;
    }
    ENUM_SERVICE_STATUSW *deps = malloc(need);
    if (deps == NULL) {
        cp_error_set(e, CP_E_NOMEM, "StopService %s: out of memory", name);
        return NULL;
    }
    if (!EnumDependentServicesW(s, SERVICE_ACTIVE, deps, need, &need, count)) {
        svc_error(e, GetLastError(), "StopService (dependents of)", name);
        free(deps);
        return NULL;
    }
    return deps;
}

/* "Stopping a Service": the running services that depend on this one
 * (EnumDependentServicesW) are refused by name without force, and stopped
 * first with it; then the service. Asked up front rather than on the
 * SCM's ERROR_DEPENDENT_SERVICES_RUNNING, so the answer is the same on
 * every SCM (Wine's stops a service under running dependents); a
 * dependent started in between still gets that refusal. */
static int w32_stop(void *ctx, const char *name, bool force, cp_error *e)
{
    (void)ctx;
    SC_HANDLE scm,
        s = open_service(name, SERVICE_STOP | SERVICE_QUERY_STATUS | SERVICE_ENUMERATE_DEPENDENTS,
                         "StopService", &scm, e);
    if (s == NULL)
        return e->status;
    DWORD n = 0, refused = NO_ERROR;
    int rc = CP_OK;
    ENUM_SERVICE_STATUSW *deps = running_dependents(s, name, &n, e);
    if (deps == NULL) {
        rc = e->status;
    } else if (n > 0 && !force) {
        char list[512] = "";
        for (DWORD i = 0; i < n; i++) {
            char *dn = cp_win_wide_to_utf8(deps[i].lpServiceName);
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                     dn != NULL ? dn : "?");
            free(dn);
        }
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                          "StopService %s: running services depend on it: %s (stop them first, or "
                          "set force)",
                          name, list);
    } else {
        for (DWORD i = 0; rc == CP_OK && i < n; i++) {
            char *dn = cp_win_wide_to_utf8(deps[i].lpServiceName);
            const char *shown = dn != NULL ? dn : "?";
            SC_HANDLE d =
                OpenServiceW(scm, deps[i].lpServiceName, SERVICE_STOP | SERVICE_QUERY_STATUS);
            if (d == NULL) {
                rc = svc_error(e, GetLastError(), "StopService (dependent)", shown);
            } else {
                rc = stop_one(d, shown, e, &refused);
                CloseServiceHandle(d);
            }
            free(dn);
        }
        if (rc == CP_OK)
            rc = stop_one(s, name, e, &refused);
    }
    free(deps);
    close_service(s, scm);
    return rc;
}

static void w32_destroy(void *ctx)
{
    (void)ctx;
}

static const cp_system_ops w32_ops = {
    .bios_serial = w32_bios_serial,
    .service_get = w32_get,
    .service_start = w32_start,
    .service_stop = w32_stop,
    .destroy = w32_destroy,
};

int cp_system_host_open_default(cp_system_host *out, cp_error *e)
{
    (void)e;
    out->ops = &w32_ops;
    out->ctx = NULL;
    return CP_OK;
}
