/* system.h - what the system group asks of the host, as an ops table:
 * the BIOS serial number and the Windows services (query, start, stop).
 *
 * Implementations:
 *   system_win.c - the product: GetSystemFirmwareTable('RSMB') for the
 *                    SMBIOS serial, the Service Control Manager for
 *                    services. No WMI, no child process.
 *   system_sim.c   - an in-memory set of services and a fixed serial, for
 *                    the native build's tests and csi-proxy-sim.exe. Never
 *                    linked into csi-proxy.exe.
 *
 * Conventions: service names are UTF-8, already checked by the group (not
 * empty, no '\' or '/', at most CP_SERVICE_NAME_MAX bytes). Every function
 * returns CP_OK or a negative cp_status with e naming the operation, the
 * service and the cause: an unknown service is CP_E_NOT_FOUND; a disabled
 * one refused by StartService is CP_E_FAILED_PRECONDITION; a service that
 * did not reach the wanted state in time is CP_E_DEADLINE_EXCEEDED;
 * refused access is CP_E_PERMISSION_DENIED. */
#ifndef CP_WINAPI_SYSTEM_H
#define CP_WINAPI_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"

#define CP_SERVICE_NAME_MAX 256 /* SCM key names are at most 256 characters */
#define CP_SERVICE_DISPLAY_MAX 1024
#define CP_BIOS_SERIAL_MAX 256
#define CP_SERVICE_WAIT_MS 30000 /* upstream's start/stop wait */

/* The numbers are the SCM's and the proto's alike: SERVICE_BOOT_START (0)
 * .. SERVICE_DISABLED (4) = StartType BOOT .. DISABLED; SERVICE_STOPPED
 * (1) .. SERVICE_PAUSED (7) = ServiceStatus STOPPED .. PAUSED. */
typedef struct cp_service_info {
    char display_name[CP_SERVICE_DISPLAY_MAX];
    int start_type;
    int state;
} cp_service_info;

typedef struct cp_system_ops {
    /* The system's serial number (SMBIOS System Information, type 1), as
     * WMI's Win32_BIOS.SerialNumber shows it; "" when the table has none. */
    int (*bios_serial)(void *ctx, char *out, size_t outlen, cp_error *e);
    int (*service_get)(void *ctx, const char *name, cp_service_info *out, cp_error *e);
    /* Starts the service and waits (polling every 200 ms, up to
     * CP_SERVICE_WAIT_MS) until it runs; one already running is success. */
    int (*service_start)(void *ctx, const char *name, cp_error *e);
    /* Stops the service and waits until it is stopped; one already stopped
     * is success. If running services depend on it: with force they are
     * stopped first (dependents before what they depend on), without it
     * the call fails with CP_E_FAILED_PRECONDITION naming them. */
    int (*service_stop)(void *ctx, const char *name, bool force, cp_error *e);
    void (*destroy)(void *ctx);
} cp_system_ops;

typedef struct cp_system_host {
    const cp_system_ops *ops;
    void *ctx;
} cp_system_host;

/* This build's host: the SCM one in csi-proxy.exe, the simulator in the
 * native build and csi-proxy-sim.exe. Release with ops->destroy(ctx). */
int cp_system_host_open_default(cp_system_host *out, cp_error *e);

#endif
