/* health.h - gRPC's standard health service (grpc.health.v1.Health,
 * api/grpc/health/v1/health.proto) on every pipe, besides the pipe's own
 * service, so that stock probes (grpc-health-probe, a kubelet gRPC probe)
 * need no csi-proxy-specific client.
 *
 * Each pipe serves one service; its health answers for two names: the
 * empty name (the pipe as a whole) and the pipe's service ("v1.Filesystem",
 * package.Service as in its proto). Both are SERVING while the group's back
 * end works (cp_service.health answers CP_OK) and NOT_SERVING while it does
 * not. Any other name: Check answers NOT_FOUND, Watch SERVICE_UNKNOWN (the
 * health checking protocol, grpc/grpc doc/health-checking.md). List
 * answers both names.
 *
 * Check and List are unary calls. Watch is server streaming: the pipe's
 * connection (rpc/conn.c) sends the status at once, asks the back end
 * again every CP_HEALTH_WATCH_MS, sends a message when the status changes,
 * and ends the stream (status OK, after NOT_SERVING) when csi-proxy stops
 * or drains. Each run of a method asks the back end once, on a worker. */
#ifndef CP_DISPATCH_HEALTH_H
#define CP_DISPATCH_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch/method.h"

#define CP_HEALTH_SERVICE "grpc.health.v1.Health"

/* How often an open Watch asks the back end again. */
#define CP_HEALTH_WATCH_MS 2000

/* HealthCheckResponse.ServingStatus */
enum {
    CP_HEALTH_UNKNOWN = 0,
    CP_HEALTH_SERVING = 1,
    CP_HEALTH_NOT_SERVING = 2,
    CP_HEALTH_SERVICE_UNKNOWN = 3,
};

/* Check, List, Watch. Bound with cp_health_bind; the pool runs its calls
 * under this group name ("health"), apart from the group's own calls. */
extern const cp_service_def cp_health_def;

/* The health service of the pipe that serves pipe (which must outlive
 * the result). */
cp_service cp_health_bind(const cp_service *pipe);

/* True when m is Watch (server streaming). */
bool cp_health_is_watch(const cp_method *m);

/* The status a Watch answer carries, from its encoded HealthCheckResponse
 * (without the 5-byte prefix); CP_HEALTH_UNKNOWN when none. */
int cp_health_status_of(const uint8_t *msg, size_t len);

/* An encoded HealthCheckResponse{status} with room free bytes before it
 * (malloc'd; NULL when out of memory). */
uint8_t *cp_health_encode(int status, size_t room, size_t *len);

#endif
