/* method.h - what a group version gives the server: a table of methods.
 *
 * The server knows nothing about groups. Each (group, version) is a
 * cp_service_def: its gRPC service name and a table of methods. A method is
 * {name, request/response descriptors, converters, handler}:
 *
 *   wire request --decode--> versioned message --req converter--> internal
 *   request --handler (group logic, version-agnostic)--> internal response
 *   --resp converter--> versioned message --encode--> wire
 *
 * Converters are usually field maps (see convert.h); a version whose fields
 * differ in type from the internal ones supplies a function instead.
 * Renamed RPCs of older versions (LinkPath, IsMountPoint, ...) simply point
 * at the same handler as their successors.
 */
#ifndef CP_METHOD_H
#define CP_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "dispatch/convert.h"
#include "base/status.h"

typedef struct cp_call cp_call;

/* Group logic: reads the internal request, fills the internal response.
 * Returns CP_OK or a negative status after cp_call_fail(). */
typedef int (*cp_handler_fn)(cp_call *call, const void *req, void *resp);

/* Optional hand-written converters for fields that change type between
 * versions. Return CP_OK or a status set with cp_call_fail(). */
typedef int (*cp_req_conv_fn)(cp_call *call, const ProtobufCMessage *in, void *req);
typedef int (*cp_resp_conv_fn)(cp_call *call, const void *resp, ProtobufCMessage *out);

enum {
    CP_METHOD_MUTATES = 1u << 0, /* changes host state: audited */
    /* server streaming (grpc.health.v1.Health/Watch); the rest are unary */
    CP_METHOD_SERVER_STREAM = 1u << 1,
};

typedef struct cp_method {
    const char *name; /* "PathExists" */
    const ProtobufCMessageDescriptor *req_desc;
    const ProtobufCMessageDescriptor *resp_desc;
    const cp_fieldmap *req_map; /* used when req_conv is NULL */
    cp_req_conv_fn req_conv;
    cp_handler_fn handler;
    const cp_fieldmap *resp_map; /* used when resp_conv is NULL */
    cp_resp_conv_fn resp_conv;
    unsigned flags;
} cp_method;

typedef struct cp_service_def {
    const char *group;                          /* "filesystem" */
    const char *version;                        /* "v1" */
    const char *service;                        /* "v1.Filesystem" (package.Service) */
    const ProtobufCServiceDescriptor *svc_desc; /* generated; all RPCs */
    const cp_method *methods;
    size_t n_methods;
    size_t req_size;  /* sizeof the group's internal request */
    size_t resp_size; /* sizeof the group's internal response */
} cp_service_def;

/* A service bound to its group's runtime context (host ops, path policy). */
typedef struct cp_service {
    const cp_service_def *def;
    void *ctx;
    /* Whether the group's back end works now, for the standard health
     * service (dispatch/health.h): CP_OK, or an error naming what does
     * not work. Called on a worker; read-only and harmless. NULL: no back
     * end to ask (always serving). */
    int (*health)(void *ctx, cp_error *e);
} cp_service;

/* Finds a method by name in a service's table; NULL if the table has no
 * such method (see cp_service_knows for what the proto declares). */
const cp_method *cp_service_find(const cp_service_def *def, const char *name, size_t name_len);

/* True when the service's proto declares the method, whether or not this
 * build implements it. */
bool cp_service_knows(const cp_service_def *def, const char *name, size_t name_len);

/* --- what a handler may ask of its call ------------------------------- */

/* The group context the service was bound with. */
void *cp_call_ctx(cp_call *call);

/* Memory freed when the call ends. NULL on out-of-memory. */
void *cp_call_alloc(cp_call *call, size_t n);
char *cp_call_strdup(cp_call *call, const char *s);

/* Records the call's error (status + message) and returns status. */
int cp_call_fail(cp_call *call, int status, const char *fmt, ...) CP_PRINTF(3, 4);

/* Copies a cp_error into the call; returns its status. */
int cp_call_fail_error(cp_call *call, const cp_error *e);

/* Records a change the call made that its request does not name (a disk's
 * read-only attribute cleared on the way to bringing it online), for the
 * call's audit record; several are joined with "; ". */
void cp_call_note(cp_call *call, const char *fmt, ...) CP_PRINTF(2, 3);

/* Process id of the caller, 0 when unknown. */
uint32_t cp_call_peer_pid(const cp_call *call);

/* Full method path ("/v1.Filesystem/Mkdir"). */
const char *cp_call_path(const cp_call *call);

/* --- waiting without holding a worker ---------------------------------- */

/* A call waiting for a resource another call holds (a disk's lock) does
 * not wait on its worker thread. The lock queues the call's waiter and the
 * handler returns CP_PARKED at once, having changed nothing; when the lock
 * is handed to the waiter, the call runs again from the start (decode,
 * converters, handler), and this time the lock is its. */
typedef struct cp_waiter cp_waiter;

/* What a handler returns when its call was queued behind a lock. Not an
 * error and never on the wire. */
#define CP_PARKED 1

/* The call's waiter, the same on every run of the call. NULL when the call
 * runs outside the worker pool (a unit test calling a handler): a lock must
 * then block the thread instead. */
cp_waiter *cp_call_waiter(const cp_call *call);

/* Queues the waiter's call to run again. Thread-safe. */
void cp_waiter_wake(cp_waiter *w);

/* Has end(ctx, w) called once when w's call is finished (answered, or not
 * started because of its deadline or a cancel), before its answer goes
 * out; registering the same (end, ctx) again does nothing. For locks: to
 * release what was handed to a call that no longer wants it. Only from a
 * run of w's call. 0, or -1 when w has no room left (4 hooks). */
int cp_waiter_at_end(cp_waiter *w, void (*end)(void *ctx, cp_waiter *w), void *ctx);

#endif
