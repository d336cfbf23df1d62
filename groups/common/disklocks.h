/* disklocks.h - per-disk serialization for the disk and volume groups.
 *
 * Calls that act on one disk (or on a volume, through the disk holding it)
 * take that disk's lock for the duration of their host operations, so two
 * calls on the same disk run one after the other, in the order they asked,
 * while calls on different disks run in parallel. Locks are keyed by disk
 * number and exist only while held or awaited. Shared by every version of
 * both groups (one instance per process, owned by groups.c). Portable C.
 *
 * A call that must wait does not wait on its worker thread: it is queued
 * and its handler returns CP_PARKED (see method.h); when the lock is handed
 * to it, the call runs again from the start and takes the lock at once.
 * So a handler must take the lock before it changes anything.
 */
#ifndef CP_GROUPS_DISKLOCKS_H
#define CP_GROUPS_DISKLOCKS_H

#include <stdint.h>

#include "dispatch/method.h"

typedef struct cp_disklocks cp_disklocks;

/* NULL when out of memory. Free with cp_disklocks_free (no lock held). */
cp_disklocks *cp_disklocks_new(void);
void cp_disklocks_free(cp_disklocks *l);

/* CP_OK: call holds disk's lock. CP_PARKED: another call holds it, call is
 * queued behind it; return CP_PARKED from the handler at once. A call
 * without a waiter (cp_call_waiter: a handler called outside the worker
 * pool) blocks until it holds the lock instead, and so does one the lock
 * has no memory to queue. Not re-entrant: a holder must not lock the same
 * disk again. */
int cp_disklocks_lock(cp_disklocks *l, cp_call *call, uint32_t disk);

/* Hands the lock to the next call in line, if any. A call that ends while
 * holding a lock (or before taking one handed to it) gives it up too. */
void cp_disklocks_unlock(cp_disklocks *l, cp_call *call, uint32_t disk);

/* For the metrics: fn(ctx, disk, waiting) for each disk held now, with
 * the number of calls queued behind its holder (0 or more). fn runs under
 * the table's mutex: it must not lock a disk. */
void cp_disklocks_each(cp_disklocks *l, void (*fn)(void *ctx, uint32_t disk, size_t waiting),
                       void *ctx);

#endif
