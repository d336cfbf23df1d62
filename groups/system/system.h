/* system.h - the system group (v1alpha1, WIRE-API §7.5): the BIOS serial
 * number and the Windows services, through host/system_host.h.
 *
 * Beyond upstream: StartService and StopService may touch only the
 * services the configuration allows (groups.system.allowedServices; when
 * that key is absent, any service, as upstream). A service name must be
 * non-empty, at most 256 bytes, without '\' or '/'. Status codes:
 *   INVALID_ARGUMENT     a bad service name
 *   PERMISSION_DENIED    a service outside allowedServices (names it and
 *                        the list), or one Windows refuses us
 *   NOT_FOUND            no such service
 *   FAILED_PRECONDITION  disabled; running dependents without force
 *   DEADLINE_EXCEEDED    not running/stopped within 30 s
 */
#ifndef CP_GROUPS_SYSTEM_H
#define CP_GROUPS_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch/method.h"
#include "host/system_host.h"

/* The context the system service is bound with; borrowed from groups.c. */
typedef struct cp_system_group_ctx {
    cp_system_host host;
    bool restricted;            /* allowedServices was configured */
    const char *const *allowed; /* then: the only services Start/Stop may touch */
    size_t n_allowed;
    const char *allowed_text; /* "[w32time, msiscsi]" for messages */
} cp_system_group_ctx;

typedef struct cp_system_request {
    const char *name;
    bool force;
} cp_system_request;

typedef struct cp_system_response {
    const char *serial_number;
    const char *display_name;
    int start_type;
    int status;
} cp_system_response;

int cp_system_handle_bios_serial(cp_call *call, const void *req, void *resp);
int cp_system_handle_start(cp_call *call, const void *req, void *resp);
int cp_system_handle_stop(cp_call *call, const void *req, void *resp);
int cp_system_handle_get(cp_call *call, const void *req, void *resp);

/* True when name may be started and stopped under ctx's policy. */
bool cp_system_allowed(const cp_system_group_ctx *ctx, const char *name);

extern const cp_service_def cp_system_v1alpha1_def;

#endif
