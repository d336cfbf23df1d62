/* scm_win.h - running under the Service Control Manager (-windows-service).
 *
 * The SCM calls ServiceMain on a thread of its own and the control handler
 * on the thread that called cp_scm_run. ServiceMain reports START_PENDING,
 * calls app->start, reports RUNNING (accepting STOP, SHUTDOWN and
 * PRESHUTDOWN) and calls app->run until it returns. A STOP, SHUTDOWN or
 * PRESHUTDOWN control reports STOP_PENDING and calls app->stop, which must
 * make run return after draining. Then STOPPED. Windows build only.
 */
#ifndef CP_SCM_WIN_H
#define CP_SCM_WIN_H

#include <stddef.h> /* wchar_t */
#include <stdint.h>

#include "base/status.h"

typedef struct cp_scm_app {
    void *ctx;
    int (*start)(void *ctx, cp_error *e);      /* CP_OK, or a status with e set */
    int (*run)(void *ctx);                     /* serves until stopped; CP_OK or a status */
    void (*stop)(void *ctx, int64_t drain_ms); /* thread-safe; may come before start */
    int64_t drain_ms;                          /* for STOP and PRESHUTDOWN */
} cp_scm_app;

/* Runs app as the service name (SERVICE_WIN32_OWN_PROCESS). Returns the
 * process exit code: 0 after a clean stop; 1 when start or run failed
 * (logged, and reported to the SCM as a service-specific exit code 1) or
 * when the process was not started by the SCM (e says so). app must
 * outlive the call. */
int cp_scm_run(const wchar_t *name, const cp_scm_app *app, cp_error *e);

#endif
