/* scm_win.c - see scm_win.h. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "service/scm_win.h"

#include "base/winutil_win.h"
#include "base/log.h"

#define START_WAIT_HINT_MS 10000
#define SHUTDOWN_DRAIN_MS 3000 /* SHUTDOWN leaves a service only a few seconds */

/* ServiceMain gets no context pointer: the SCM state lives here, set
 * before the dispatcher starts and guarded by lock afterwards. */
static struct {
    const cp_scm_app *app;
    wchar_t *name;
    SERVICE_STATUS_HANDLE handle;
    SERVICE_STATUS status;
    SRWLOCK lock;
    int exit_code;
} scm = {.lock = SRWLOCK_INIT};

/* Caller holds scm.lock. */
static void report(DWORD state, DWORD wait_hint)
{
    scm.status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
    scm.status.dwCurrentState = state;
    scm.status.dwControlsAccepted = state == SERVICE_RUNNING
                                        ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN |
                                              SERVICE_ACCEPT_PRESHUTDOWN
                                        : 0;
    scm.status.dwWaitHint = wait_hint;
    if (state == SERVICE_START_PENDING || state == SERVICE_STOP_PENDING)
        scm.status.dwCheckPoint++;
    else
        scm.status.dwCheckPoint = 0;
    if (!SetServiceStatus(scm.handle, &scm.status)) {
        DWORD err = GetLastError();
        char why[256];
        CP_LOG_ERROR("SetServiceStatus(state %lu): %s (error %lu)", (unsigned long)state,
                     cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
}

static DWORD WINAPI on_control(DWORD control, DWORD event_type, LPVOID event_data, LPVOID ctx)
{
    (void)event_type;
    (void)event_data;
    (void)ctx;
    int64_t drain = scm.app->drain_ms;
    switch (control) {
    case SERVICE_CONTROL_INTERROGATE:
        return NO_ERROR;
    case SERVICE_CONTROL_SHUTDOWN:
        if (drain > SHUTDOWN_DRAIN_MS)
            drain = SHUTDOWN_DRAIN_MS;
        /* fall through */
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_PRESHUTDOWN:
        AcquireSRWLockExclusive(&scm.lock);
        bool running = scm.status.dwCurrentState == SERVICE_RUNNING;
        if (running)
            report(SERVICE_STOP_PENDING, (DWORD)drain + 5000);
        ReleaseSRWLockExclusive(&scm.lock);
        if (running) {
            CP_LOG_INFO("service control %lu: stopping (drain up to %lld ms)",
                        (unsigned long)control, (long long)drain);
            scm.app->stop(scm.app->ctx, drain);
        }
        return NO_ERROR;
    default:
        return ERROR_CALL_NOT_IMPLEMENTED;
    }
}

static void WINAPI service_main(DWORD argc, LPWSTR *argv)
{
    (void)argc;
    (void)argv;
    SERVICE_STATUS_HANDLE h = RegisterServiceCtrlHandlerExW(scm.name, on_control, NULL);
    if (h == NULL) {
        DWORD err = GetLastError();
        char why[256];
        CP_LOG_ERROR("RegisterServiceCtrlHandlerExW: %s (error %lu)",
                     cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
        scm.exit_code = 1;
        return;
    }
    AcquireSRWLockExclusive(&scm.lock);
    scm.handle = h;
    report(SERVICE_START_PENDING, START_WAIT_HINT_MS);
    ReleaseSRWLockExclusive(&scm.lock);

    cp_error e;
    cp_error_clear(&e);
    int rc = scm.app->start(scm.app->ctx, &e);
    if (rc == CP_OK) {
        AcquireSRWLockExclusive(&scm.lock);
        report(SERVICE_RUNNING, 0);
        ReleaseSRWLockExclusive(&scm.lock);
        CP_LOG_INFO("running as a Windows service");
        rc = scm.app->run(scm.app->ctx);
        if (rc != CP_OK)
            CP_LOG_ERROR("service stopped on an error: %s", cp_status_name(rc));
    } else {
        CP_LOG_ERROR("%s", e.msg);
    }

    AcquireSRWLockExclusive(&scm.lock);
    scm.exit_code = rc == CP_OK ? 0 : 1;
    scm.status.dwWin32ExitCode = rc == CP_OK ? NO_ERROR : ERROR_SERVICE_SPECIFIC_ERROR;
    scm.status.dwServiceSpecificExitCode = rc == CP_OK ? 0 : 1;
    report(SERVICE_STOPPED, 0);
    ReleaseSRWLockExclusive(&scm.lock);
}

int cp_scm_run(const wchar_t *name, const cp_scm_app *app, cp_error *e)
{
    size_t n = wcslen(name) + 1;
    scm.name = malloc(n * sizeof(wchar_t));
    if (scm.name == NULL)
        return cp_error_set(e, CP_E_NOMEM, "service: out of memory"), 1;
    memcpy(scm.name, name, n * sizeof(wchar_t));
    scm.app = app;
    SERVICE_TABLE_ENTRYW table[] = {{scm.name, service_main}, {NULL, NULL}};
    if (!StartServiceCtrlDispatcherW(table)) {
        DWORD err = GetLastError();
        char why[256];
        if (err == ERROR_FAILED_SERVICE_CONTROLLER_CONNECT)
            cp_error_set(e, CP_E_FAILED_PRECONDITION,
                         "-windows-service: not started by the service control manager (run "
                         "without -windows-service in a console)");
        else
            cp_error_set(e, CP_E_UNKNOWN, "StartServiceCtrlDispatcherW: %s (error %lu)",
                         cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
        free(scm.name);
        scm.name = NULL;
        return 1;
    }
    AcquireSRWLockShared(&scm.lock);
    int code = scm.exit_code;
    ReleaseSRWLockShared(&scm.lock);
    free(scm.name);
    scm.name = NULL;
    return code;
}
