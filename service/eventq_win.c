/* eventq_win.c - the Event Log queue (eventq_win.h). */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "service/eventq_win.h"

typedef struct qrec {
    bool failure;
    char *line;
} qrec;

struct cp_eventq {
    cp_eventlog *ev;
    SRWLOCK lock;
    CONDITION_VARIABLE nonempty, room;
    qrec recs[CP_EVENTQ_CAP];
    size_t head, n;
    unsigned long dropped_burst; /* dropped since the last summary record */
    volatile LONG64 dropped;     /* all dropped, for the metric */
    bool stop;
    cp_thread *thread;
};

static void drain(void *arg)
{
    cp_eventq *q = arg;
    AcquireSRWLockExclusive(&q->lock);
    for (;;) {
        while (q->n == 0 && q->dropped_burst == 0 && !q->stop)
            /* "SleepConditionVariableSRW function (synchapi.h)", Microsoft
             * Learn: releases the lock while it sleeps, holds it again on
             * return. */
            SleepConditionVariableSRW(&q->nonempty, &q->lock, INFINITE, 0);
        if (q->n == 0 && q->dropped_burst == 0)
            break; /* stop, and nothing left */
        qrec r = {false, NULL};
        unsigned long burst = 0;
        if (q->n > 0) {
            r = q->recs[q->head];
            q->head = (q->head + 1) % CP_EVENTQ_CAP;
            q->n--;
            WakeConditionVariable(&q->room);
        } else {
            burst = q->dropped_burst;
            q->dropped_burst = 0;
        }
        ReleaseSRWLockExclusive(&q->lock);
        if (r.line != NULL) {
            cp_eventlog_report(q->ev, r.failure, r.line);
            free(r.line);
        } else {
            char msg[200];
            snprintf(msg, sizeof(msg),
                     "audit: %lu refusal records were not written to the Event Log: a burst "
                     "filled its queue (each is in the service's log)",
                     burst);
            cp_eventlog_report(q->ev, true, msg);
        }
        AcquireSRWLockExclusive(&q->lock);
    }
    ReleaseSRWLockExclusive(&q->lock);
}

cp_eventq *cp_eventq_new(cp_eventlog *ev)
{
    cp_eventq *q = calloc(1, sizeof(*q));
    if (q == NULL)
        return NULL;
    q->ev = ev;
    InitializeSRWLock(&q->lock);
    InitializeConditionVariable(&q->nonempty);
    InitializeConditionVariable(&q->room);
    q->thread = cp_thread_start(drain, q);
    if (q->thread == NULL) {
        free(q);
        return NULL;
    }
    return q;
}

void cp_eventq_report(void *ctx, bool failure, const char *line)
{
    cp_eventq *q = ctx;
    bool refusal = strncmp(line, "audit: denied", 13) == 0;
    char *copy = strdup(line);
    AcquireSRWLockExclusive(&q->lock);
    while (q->n == CP_EVENTQ_CAP && !refusal && !q->stop)
        SleepConditionVariableSRW(&q->room, &q->lock, INFINITE, 0);
    if (copy == NULL || q->n == CP_EVENTQ_CAP || q->stop) {
        q->dropped_burst++;
        InterlockedIncrement64(&q->dropped);
        free(copy);
    } else {
        q->recs[(q->head + q->n) % CP_EVENTQ_CAP] = (qrec){failure, copy};
        q->n++;
    }
    WakeConditionVariable(&q->nonempty);
    ReleaseSRWLockExclusive(&q->lock);
}

void cp_eventq_collect(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx)
{
    cp_eventq *q = ctx;
    emit(emit_ctx, NULL, (double)InterlockedCompareExchange64(&q->dropped, 0, 0));
}

void cp_eventq_free(cp_eventq *q)
{
    if (q == NULL)
        return;
    AcquireSRWLockExclusive(&q->lock);
    q->stop = true;
    WakeAllConditionVariable(&q->nonempty);
    WakeAllConditionVariable(&q->room);
    ReleaseSRWLockExclusive(&q->lock);
    cp_thread_join(q->thread);
    free(q);
}
