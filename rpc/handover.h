/* handover.h - finished jobs handed from the workers to their
 * connections (rpc/conn.h: cp_job_complete), used by both transports.
 *
 * Lock-free: a job list pushed with compare-and-swap, taken whole by
 * exchange, oldest first. Two ways to use it:
 *   - the I/O thread hands over (transport_posix.c): workers
 *     cp_handover_push and wake it; it cp_handover_take's the list;
 *   - one worker at a time hands over (the pipe transport): each worker
 *     cp_handover_put's its job; the one that finds nobody handing over
 *     takes the lock its connections need and hands over, the others go
 *     back to the pool at once instead of waiting for that lock.
 * Zero-initialised. */
#ifndef CP_HANDOVER_H
#define CP_HANDOVER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "rpc/conn.h"

typedef struct cp_handover {
    _Atomic(cp_job *) list;
    atomic_bool busy; /* a thread is handing over */
} cp_handover;

/* Puts job on the list. True: the caller hands over now (cp_handover_take,
 * then cp_handover_end); false: the thread handing over takes it. */
bool cp_handover_put(cp_handover *h, cp_job *job);
/* Puts job on the list for the thread that takes it (no hand-over turn).
 * True when the list was empty (that thread may need waking). */
bool cp_handover_push(cp_handover *h, cp_job *job);
/* Every job put so far, off the list, oldest first, linked by
 * cp_handover_next; NULL: none. */
cp_job *cp_handover_take(cp_handover *h);
cp_job *cp_handover_next(const cp_job *job);
/* After handing over what cp_handover_take returned: true when a job came
 * meanwhile and this caller is to hand it over too (take again); false:
 * done, and a job put from now on makes its own worker hand over. */
bool cp_handover_end(cp_handover *h);

#endif
