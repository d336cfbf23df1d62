/* health.h - is csi-proxy up? Every pipe it should serve answers a real,
 * harmless gRPC call within a deadline. Used by `csi-proxy-cli health`
 * (health_cmd.c) and by `csi-proxy.exe install` when it upgrades a running
 * service (service/upgrade_win.c), so both judge "up" the same way.
 *
 * The probe: the standard health service's Check of the pipe
 * (/grpc.health.v1.Health/Check, service "": dispatch/health.h), which
 * every pipe of this csi-proxy serves. SERVING: up. NOT_SERVING: the pipe
 * answers but its group's back end does not work (the iSCSI initiator
 * service stopped, WMI unreachable): up, and the line says so, unless
 * require_serving asks for SERVING. A pipe that answers UNIMPLEMENTED
 * (an older csi-proxy, or upstream's) is asked the group's own probe
 * method instead (the same method in every version that has it):
 *   filesystem  PathExists{path: the kubelet path}   reads one attribute
 *   disk        ListDiskLocations{}                  enumerates, changes nothing
 *   volume      ListVolumesOnDisk{}                  lists disk 0's volumes (read only)
 *   smb         RemoveSmbGlobalMapping{}             refused by validation
 *                                                    (empty remote path) before any work
 *   system      GetBIOSSerialNumber{}                reads one WMI property
 *   iscsi       ListTargetPortals{}                  enumerates, changes nothing
 *
 * A pipe is up when the call gets a gRPC status from the service's
 * handler: OK, or a refusal of the request (INVALID_ARGUMENT, NOT_FOUND,
 * ...). PERMISSION_DENIED counts as up too: the pipe answered, this caller
 * is just not among the group's allowed callers (the line says so). Down:
 * no pipe, no answer within the deadline, UNAVAILABLE (draining or
 * overloaded) or UNIMPLEMENTED (the pipe serves something else), or a
 * pipe the service has marked as having a server instance it did not make
 * (cp_dial_alarm: another process may be receiving its calls), whatever
 * answers.
 * Portable C (the native build probes its Unix sockets). */
#ifndef CP_CLI_HEALTH_H
#define CP_CLI_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CP_HEALTH_DEFAULT_DEADLINE_MS 5000

typedef struct cp_health_target {
    const char *group;   /* "filesystem" */
    const char *version; /* "v1" */
} cp_health_target;

typedef struct cp_health_opts {
    const char *socket_dir;   /* native build only; NULL on Windows */
    const char *kubelet_path; /* filesystem probe path; NULL: C:\var\lib\kubelet */
    int64_t deadline_ms;      /* for all targets together */
    bool failures_only;       /* print only the lines of pipes that are down */
    bool require_serving;     /* NOT_SERVING counts as down (-serving) */
} cp_health_opts;

/* The (group, version) pairs the service serves, in catalog order:
 * served[i] says whether it serves cp_catalog[i] (groups/catalog.h;
 * served NULL: all of them). Limited to the groups named (n_groups 0:
 * every group; a name is "group" or "group/version"; a group with no
 * version served is probed anyway, all its versions: the caller asked for
 * it). Fills out (room for cp_catalog_len entries). Returns the count, or
 * -1 with *bad set to an unknown name. */
int cp_health_targets(const bool *served, char **groups, int n_groups, cp_health_target *out,
                      const char **bad);

/* Probes every target, retrying the ones that do not answer yet, until
 * all answer or the deadline passes. Prints one line per target to out
 * (unless NULL), each after prefix: "filesystem v1 ok 2 ms",
 * "smb v1 FAIL: no pipe (\\.\pipe\csi-proxy-smb-v1)". Returns how many
 * are down (0: healthy). */
int cp_health_check(const cp_health_target *t, int n, const cp_health_opts *o, FILE *out,
                    const char *prefix);

#endif
