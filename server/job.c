/* job.c - a request on its way through the worker pool. */
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "conn_internal.h"
#include "dispatch.h"
#include "grpc_wire.h"
#include "thread.h"

static void job_run(cp_task *t)
{
    cp_job *job = (cp_job *)t;
    cp_error_clear(&job->err);
    cp_call *call = cp_call_new(job->svc->ctx, job->path, job->peer_pid);
    if (call == NULL) {
        cp_error_set(&job->err, CP_E_NOMEM, "%s: out of memory", job->path);
        goto post;
    }
    uint8_t *body = NULL;
    size_t body_len = 0;
    int64_t t0 = cp_now_ms();
    int rc = cp_dispatch_run(job->svc, job->method, call, job->req, job->req_len, &body, &body_len);
    if (job->audit != NULL && (job->method->flags & CP_METHOD_MUTATES)) {
        const cp_error *ce = cp_call_error(call);
        cp_call_record r = {job->svc, job->method, job->path, job->peer_pid, job->peer_id,
                            job->req, job->req_len, rc, rc != CP_OK ? ce->msg : "",
                            cp_now_ms() - t0};
        job->audit(job->audit_ctx, &r);
    }
    if (rc != CP_OK) {
        job->err = *cp_call_error(call);
        if (job->err.status == CP_OK)
            cp_error_set(&job->err, rc, "%s failed", job->path);
    } else if (body_len > UINT32_MAX - CP_GRPC_PREFIX ||
               (job->resp = malloc(body_len + CP_GRPC_PREFIX)) == NULL) {
        cp_error_set(&job->err, CP_E_NOMEM, "%s: out of memory for the response", job->path);
    } else {
        cp_grpc_put_prefix(job->resp, false, (uint32_t)body_len);
        if (body_len > 0)
            memcpy(job->resp + CP_GRPC_PREFIX, body, body_len);
        job->resp_len = body_len + CP_GRPC_PREFIX;
    }
    free(body);
    cp_call_free(call);
post:
    free(job->req);
    job->req = NULL;
    job->post(job->post_ctx, job);
}

cp_job *cp_job_new(cp_conn *c, int32_t stream_id, const cp_method *m, const char *path,
                   uint8_t *req, size_t req_len)
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
    job->conn = c;
    job->post = c->post;
    job->post_ctx = c->post_ctx;
    job->stream_id = stream_id;
    job->svc = c->svc;
    job->method = m;
    job->peer_pid = c->opts.peer_pid;
    job->peer_id = c->opts.peer_id;
    job->audit = c->opts.audit;
    job->audit_ctx = c->opts.audit_ctx;
    job->req = req;
    job->req_len = req_len;
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
