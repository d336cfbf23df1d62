/* wmi_retry.h - what the WMI client (wmi_win32.c) decides about a failed
 * call that does not need Windows, so the native unit tests check it:
 *
 *   - which HRESULTs mean the connection to the WMI service (winmgmt) is
 *     gone, so the cached IWbemServices proxy must be rebuilt, and whether
 *     the failed call may have run on the server before the connection
 *     went;
 *   - one retry of a WMI operation after such a failure, on a rebuilt
 *     connection, where that is safe (cp_wmi_call).
 *
 * The WMI service restarts (an update, a crash, "winmgmt /resyncperf",
 * Restart-Service winmgmt) while this service runs; every proxy it handed
 * out is then dead, and each call on one fails at the RPC or COM layer
 * until a new connection is made. Upstream csi-proxy connects per call,
 * so it never sees a dead proxy twice. */
#ifndef CP_WINAPI_WMI_RETRY_H
#define CP_WINAPI_WMI_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "../server/status.h"

typedef enum cp_wmi_hr_class {
    CP_WMI_HR_OTHER = 0,     /* not a lost connection: keep the proxy */
    CP_WMI_HR_LOST_NOT_RUN,  /* connection lost; the call did not run */
    CP_WMI_HR_LOST_MAYBE_RUN /* connection lost; the call may have run */
} cp_wmi_hr_class;

/* The class of a failed HRESULT (see wmi_retry.c for each code and its
 * source). */
cp_wmi_hr_class cp_wmi_classify(uint32_t hr);

/* The symbolic name of a connection-lost HRESULT ("RPC_E_DISCONNECTED"),
 * or NULL for any other. */
const char *cp_wmi_hr_name(uint32_t hr);

/* How a WMI operation may be repeated after a lost connection. */
typedef enum cp_wmi_retry {
    /* Running it twice leaves the same state and gives the same answer
     * (a query, a cache refresh): retried whether or not it ran. */
    CP_WMI_RETRY_IDEMPOTENT,
    /* It must not run twice (a mapping made, a volume formatted): retried
     * only when it cannot have run, because the step that failed came
     * before the one with the effect or the code says the call did not
     * execute; otherwise the failure goes to the caller (UNAVAILABLE),
     * whose own retry starts by looking at the state again. */
    CP_WMI_RETRY_IF_NOT_RUN,
} cp_wmi_retry;

/* What an attempt reports about its failure. */
typedef struct cp_wmi_failure {
    uint32_t hr; /* the HRESULT of the WMI step that failed; 0: none */
    bool effect; /* that step was the one with the effect (the method call) */
} cp_wmi_failure;

/* One attempt of a WMI operation: CP_OK, or a status with e and *f set. */
typedef int (*cp_wmi_attempt_fn)(void *arg, cp_wmi_failure *f, cp_error *e);
/* Drops the cached connection, so the next attempt connects again. */
typedef void (*cp_wmi_drop_fn)(void *conn);

/* attempt; when it fails with a connection-lost HRESULT, drop(conn), and
 * when mode allows it, attempt once more (dropping again if that fails the
 * same way). Returns the last attempt's status (e its error). */
int cp_wmi_call(cp_wmi_attempt_fn attempt, void *arg, cp_wmi_drop_fn drop, void *conn,
                cp_wmi_retry mode, cp_error *e);

#endif
