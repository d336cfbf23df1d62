/* inflight.h - one run for identical calls in flight.
 *
 * A client that gives up on a slow FormatVolume, PartitionDisk or
 * MountVolume (kubelet's deadline) and sends the same call again would
 * otherwise queue a second run behind the first on the disk's lock, and
 * that second run finds the work half done or done ("access path already
 * in use"). Instead, a call identical to one still in flight (same method
 * path, same request fields) waits for it without holding a worker and
 * answers its result. A different call on the same disk queues behind the
 * disk's lock as before (disklocks.h). Only for methods whose response is
 * empty: the result is the status and its message. Portable C.
 *
 * In a handler, before it changes anything:
 *
 *   int rc = cp_inflight_join(t, call, parts, n);
 *   if (rc != CP_INFLIGHT_LEAD)
 *       return rc;                 (parked, or the identical call's result)
 *   rc = the work (may return CP_PARKED behind the disk's lock);
 *   if (rc != CP_PARKED)
 *       cp_inflight_done(t, call, rc);
 *   return rc;
 */
#ifndef CP_GROUPS_INFLIGHT_H
#define CP_GROUPS_INFLIGHT_H

#include <stddef.h>

#include "dispatch/method.h"

/* What cp_inflight_join answers when the call is to do the work itself.
 * Distinct from CP_OK, CP_PARKED and every error status. */
#define CP_INFLIGHT_LEAD 2

typedef struct cp_inflight cp_inflight;

/* NULL when out of memory. Free with cp_inflight_free (no call in flight). */
cp_inflight *cp_inflight_new(void);
void cp_inflight_free(cp_inflight *t);

/* parts[0..n) are the request's fields that make two calls identical
 * (with the call's method path). CP_INFLIGHT_LEAD: no identical call is in
 * flight (or the one that was gave up before it started): this call does
 * the work and then calls cp_inflight_done. CP_PARKED: queued behind the
 * identical call; return it at once. Otherwise the identical call's
 * result: CP_OK, or its error status recorded on call with its message.
 * A call without a waiter (a handler called outside the worker pool)
 * always leads. */
int cp_inflight_join(cp_inflight *t, cp_call *call, const char *const *parts, size_t n);

/* The leading call's result: rc (CP_OK or an error recorded on call)
 * goes to every call waiting for it, which are woken. Later identical
 * calls run anew. */
void cp_inflight_done(cp_inflight *t, cp_call *call, int rc);

/* Identical calls waiting for a leader now (for tests and metrics). */
size_t cp_inflight_waiting(cp_inflight *t);

#endif
