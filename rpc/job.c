/* job.c - a request on its way through the worker pool: checked against
 * its deadline and a cancel before it starts, run, parked and run again
 * when a lock queued it, answered. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/call.h"
#include "rpc/conn_internal.h"
#include "dispatch/dispatch.h"
#include "rpc/grpc_wire.h"
#include "metrics/metrics.h"
#include "base/thread.h"

/* A cp_waiter is the job: the same on every run of its call. */
static cp_job *job_of(cp_waiter *w)
{
    return (cp_job *)w;
}

void cp_waiter_wake(cp_waiter *w)
{
    cp_job *job = job_of(w);
    cp_pool_wake(job->pool, &job->task);
}

int cp_waiter_at_end(cp_waiter *w, void (*end)(void *ctx, cp_waiter *w), void *ctx)
{
    cp_job *job = job_of(w);
    for (unsigned i = 0; i < job->n_at_end; i++)
        if (job->at_end[i].fn == end && job->at_end[i].ctx == ctx)
            return 0;
    if (job->n_at_end == CP_JOB_END_HOOKS)
        return -1;
    job->at_end[job->n_at_end].fn = end;
    job->at_end[job->n_at_end].ctx = ctx;
    job->n_at_end++;
    return 0;
}

void cp_job_cancel(cp_job *job)
{
    atomic_store(&job->cancelled, true);
}

/* Whether the job may start (or, after parking, run again): not when the
 * client gave up on it or its deadline passed while it waited. */
static bool may_start(cp_job *job)
{
    if (atomic_load(&job->cancelled)) {
        cp_error_set(&job->err, CP_E_CANCELLED, "%s was cancelled by the client before it started",
                     job->path);
        return false;
    }
    if (job->deadline != INT64_MAX && cp_now_ms() >= job->deadline) {
        cp_error_set(&job->err, CP_E_DEADLINE_EXCEEDED,
                     "deadline exceeded (grpc-timeout) before %s started: it waited in the queue "
                     "and was not run",
                     job->path);
        return false;
    }
    return true;
}

static cp_task_result job_run(cp_task *t)
{
    cp_job *job = (cp_job *)t;
    cp_error_clear(&job->err);
    if (!may_start(job))
        goto post;
    cp_call *call = cp_call_new(job->svc->ctx, job->path, job->peer_pid);
    if (call == NULL) {
        cp_error_set(&job->err, CP_E_NOMEM, "%s: out of memory", job->path);
        goto post;
    }
    call->waiter = (cp_waiter *)job;
    uint8_t *body = NULL;
    size_t body_len = 0;
    int64_t t0 = cp_now_ms();
    int rc = cp_dispatch_run_room(job->svc, job->method, call, job->req, job->req_len,
                                  CP_GRPC_PREFIX, &body, &body_len);
    if (rc == CP_PARKED) { /* queued behind a lock: runs again from the start when woken */
        free(body);
        cp_call_free(call);
        return CP_TASK_PARKED;
    }
    if (job->audit != NULL && (job->method->flags & CP_METHOD_MUTATES)) {
        const cp_error *ce = cp_call_error(call);
        cp_call_record r = {job->svc,         job->method,  job->path,
                            job->peer_pid,    job->peer_id, job->req,
                            job->req_len,     rc,           rc != CP_OK ? ce->msg : "",
                            cp_now_ms() - t0, call->req_msg};
        r.note = cp_call_noted(call);
        job->audit(job->audit_ctx, &r);
    }
    if (rc != CP_OK) {
        job->err = *cp_call_error(call);
        if (job->err.status == CP_OK)
            cp_error_set(&job->err, rc, "%s failed", job->path);
    } else if (body_len - CP_GRPC_PREFIX > UINT32_MAX) {
        cp_error_set(&job->err, CP_E_RESOURCE_EXHAUSTED, "%s: the response is over 4 GiB",
                     job->path);
    } else {
        /* the prefix goes in the room left for it: the response is not copied */
        cp_grpc_put_prefix(body, false, (uint32_t)(body_len - CP_GRPC_PREFIX));
        job->resp = body;
        job->resp_len = body_len;
        body = NULL;
    }
    free(body);
    cp_call_free(call);
post:
    /* Locks handed to the job that it did not take (or took and kept) go
     * to the next in line before the answer does. */
    for (unsigned i = 0; i < job->n_at_end; i++)
        job->at_end[i].fn(job->at_end[i].ctx, (cp_waiter *)job);
    free(job->req);
    job->req = NULL;
    /* Upstream's interceptor reports the handler's own code, even when the
     * client's deadline was answered first (cp_conn_expire). A stream's
     * jobs (a Watch's probes) are not calls: the stream counts itself
     * (watch.c). */
    if (!(job->method->flags & CP_METHOD_SERVER_STREAM))
        cp_metrics_call_handled(job->metrics, job->svc->def, job->method, job->err.status,
                                cp_now_us() - job->t0_us);
    job->post(job->post_ctx, job);
    return CP_TASK_DONE;
}

cp_job *cp_job_new(cp_conn *c, int32_t stream_id, const cp_method *m, const char *path,
                   uint8_t *req, size_t req_len)
{
    return cp_job_new_svc(c, c->svc, stream_id, m, path, req, req_len);
}

cp_job *cp_job_new_svc(cp_conn *c, const cp_service *svc, int32_t stream_id, const cp_method *m,
                       const char *path, uint8_t *req, size_t req_len)
{
    cp_job *job = calloc(1, sizeof(*job));
    if (job == NULL)
        return NULL;
    job->path = strdup(path);
    if (job->path == NULL) {
        free(job);
        return NULL;
    }
    job->task.run = job_run;
    job->task.group = svc->def->group;
    job->conn = c;
    job->pool = c->pool;
    job->deadline = INT64_MAX;
    atomic_init(&job->cancelled, false);
    job->post = c->post;
    job->post_ctx = c->post_ctx;
    job->stream_id = stream_id;
    job->svc = svc;
    job->method = m;
    job->peer_pid = c->opts.peer_pid;
    job->peer_id = c->opts.peer_id;
    job->audit = c->opts.audit;
    job->audit_ctx = c->opts.audit_ctx;
    job->req = req;
    job->req_len = req_len;
    job->metrics = c->opts.metrics;
    job->t0_us = cp_now_us();
    if (!(m->flags & CP_METHOD_SERVER_STREAM)) /* a stream counts itself (watch.c) */
        cp_metrics_call_started(job->metrics, svc->def, m);
    return job;
}

void cp_job_free(cp_job *job)
{
    if (job == NULL)
        return;
    free(job->req);
    free(job->resp);
    free(job->path);
    free(job);
}

cp_conn *cp_job_complete(cp_job *job)
{
    cp_conn *c = job->conn;
    c->inflight--;
    cp_conn *ret = NULL;
    if (!c->closed) {
        cp_conn_deliver(c, job);
        ret = c;
    }
    cp_job_free(job);
    cp_conn_unref(c); /* when not closed, the transport still holds c */
    return ret;
}
