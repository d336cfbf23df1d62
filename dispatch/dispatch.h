/* dispatch.h - run one request through a method: decode, convert, handle,
 * convert back, encode. Portable and I/O-free: the worker pool calls it,
 * and unit tests call it directly. */
#ifndef CP_DISPATCH_H
#define CP_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch/call.h"
#include "dispatch/method.h"

/* Runs m on the protobuf bytes req[0..len). On success returns CP_OK and
 * sets *out (malloc'd; caller frees) to the encoded response, without the
 * 5-byte gRPC prefix. On failure returns a negative status; the message is
 * in cp_call_error(call). CP_PARKED when the handler was queued behind a
 * lock (see method.h): nothing to answer yet. */
int cp_dispatch_run(const cp_service *svc, const cp_method *m, cp_call *call, const uint8_t *req,
                    size_t len, uint8_t **out, size_t *out_len);

/* The same, with room free bytes before the encoded response: *out holds
 * room + the response, *out_len counts both. The worker puts the 5-byte
 * gRPC prefix there (job.c), so the response is encoded once, in place,
 * not copied into a second buffer. */
int cp_dispatch_run_room(const cp_service *svc, const cp_method *m, cp_call *call,
                         const uint8_t *req, size_t len, size_t room, uint8_t **out,
                         size_t *out_len);

/* Self-test of a service table: every field map matches its descriptors
 * and every method has a handler. 0 or -1 with a reason in err. */
int cp_service_check(const cp_service_def *def, char *err, size_t errlen);

#endif
