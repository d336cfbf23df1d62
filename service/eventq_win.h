/* eventq_win.h - audit records to the Event Log off the caller's thread:
 * a bounded queue drained by one thread of its own (cp_eventlog_report).
 * A refused caller costs the threads that serve allowed callers nothing:
 * no ReportEventW (a call into the Event Log service, milliseconds when it
 * is busy) on the thread that refused it. When the queue is full, a
 * refusal record ("audit: denied ...") is dropped and counted, and the
 * drain thread writes one record saying how many a burst dropped; a call
 * record waits for room (it is never dropped). Every record is in the
 * service's log anyway (audit.h). Windows build only. */
#ifndef CP_EVENTQ_WIN_H
#define CP_EVENTQ_WIN_H

#include <stdbool.h>

#include "metrics/metrics.h"
#include "service/eventlog_win.h"

#define CP_EVENTQ_CAP 1024 /* records queued at most */
#define CP_EVENTQ_METRIC "csi_proxy_eventlog_dropped_total"
#define CP_EVENTQ_HELP                                                                             \
    "Refusal audit records not written to the Event Log because a burst filled its queue (each "   \
    "is in the service's log)."

typedef struct cp_eventq cp_eventq;

/* Starts the drain thread. NULL on failure. */
cp_eventq *cp_eventq_new(cp_eventlog *ev);

/* A cp_audit_sink_fn: ctx is the cp_eventq. Thread-safe. */
void cp_eventq_report(void *ctx, bool failure, const char *line);

/* A cp_metrics_collect_fn: the records dropped so far. */
void cp_eventq_collect(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx);

/* Writes what is queued, then stops the thread. */
void cp_eventq_free(cp_eventq *q);

#endif
