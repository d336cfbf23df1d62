/* watch.c - grpc.health.v1.Health/Watch, the one server-streaming call:
 * the status at once, then each change, probed again every
 * CP_HEALTH_WATCH_MS, until the client leaves or the server ends it. Runs
 * where the connection's calls run (conn.h). */
#include "rpc/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "dispatch/health.h"
#include "metrics/metrics.h"
#include "rpc/conn_internal.h"
#include "rpc/conn_stream.h"
#include "rpc/grpc_wire.h"

/* Gives nghttp2 the message being sent, then the trailers once the stream
 * is to end; defers while there is nothing to send. */
static ssize_t read_watch(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t len,
                          uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    cp_conn *c = ud;
    cp_stream *st = src->ptr;
    if (st->w_msg_off < st->w_msg_len) {
        size_t left = st->w_msg_len - st->w_msg_off;
        size_t n = left < len ? left : len;
        memcpy(buf, st->w_msg + st->w_msg_off, n);
        st->w_msg_off += n;
        if (st->w_msg_off == st->w_msg_len) { /* all of it handed to nghttp2: sent */
            st->w_msg_off = st->w_msg_len = 0;
            cp_metrics_msg_sent(c->opts.metrics, c->health_svc.def, st->method);
        }
        return (ssize_t)n;
    }
    if (!st->w_end)
        return NGHTTP2_ERR_DEFERRED; /* resumed by watch_send */
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    char code[8], enc[sizeof(st->w_end_msg) * 3 + 1];
    snprintf(code, sizeof(code), "%d", cp_status_to_grpc(st->w_end_status));
    cp_grpc_percent_encode(st->w_end_msg, enc, sizeof(enc));
    const nghttp2_nv tr[] = {NV("grpc-status", code), NV("grpc-message", enc)};
    if (nghttp2_submit_trailer(h2, id, tr, st->w_end_msg[0] != '\0' ? 2 : 1) != 0)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    return 0;
}

/* Starts the response (headers, then messages as they come) or wakes the
 * deferred data of one already started. */
static void watch_send(cp_conn *c, cp_stream *st)
{
    if (st->w_started) {
        nghttp2_session_resume_data(c->h2, st->id);
        return;
    }
    st->w_started = true;
    const nghttp2_nv hdrs[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_watch};
    nghttp2_submit_response(c->h2, st->id, hdrs, 2, &dp);
}

/* Queues a message with status unless it is the last one queued. A
 * message half sent stays: the next probe sends the change then. */
static void watch_queue(cp_conn *c, cp_stream *st, int status)
{
    if (status == st->w_last || st->w_msg_off > 0)
        return;
    size_t n = 0;
    uint8_t *b = cp_health_encode(status, CP_GRPC_PREFIX, &n);
    if (b == NULL)
        return; /* out of memory: the next probe tries again */
    cp_grpc_put_prefix(b, false, (uint32_t)(n - CP_GRPC_PREFIX));
    memcpy(st->w_msg, b, n);
    free(b);
    st->w_msg_len = n;
    st->w_msg_off = 0;
    st->w_last = status;
    watch_send(c, st);
}

void cp_watch_started(cp_conn *c, cp_stream *st)
{
    st->w_counted = true;
    st->w_t0_us = cp_now_us();
    cp_metrics_call_started(c->opts.metrics, c->health_svc.def, st->method);
}

void cp_watch_handled(cp_conn *c, cp_stream *st, int status)
{
    if (!st->w_counted)
        return;
    st->w_counted = false;
    cp_metrics_call_handled(c->opts.metrics, c->health_svc.def, st->method, status,
                            cp_now_us() - st->w_t0_us);
}

/* Ends the stream with status after what is queued. */
void cp_watch_end(cp_conn *c, cp_stream *st, int status, const char *msg)
{
    cp_watch_handled(c, st, status);
    st->responded = true;
    cp_stream_hold(c, st, STREAM_HELD_COST); /* answered: held until its trailers are out */
    st->w_end = true;
    st->w_end_status = status;
    snprintf(st->w_end_msg, sizeof(st->w_end_msg), "%s", msg);
    st->next_probe = INT64_MAX;
    if (!st->remote_closed)
        st->rst_after_send = true;
    if (st->watching) {
        st->watching = false;
        c->watching--;
    }
    watch_send(c, st);
}

/* Stop or drain: the watcher hears NOT_SERVING, then the stream ends with
 * OK (a client watches again elsewhere, or later). */
void cp_watch_drain(cp_conn *c, cp_stream *st)
{
    watch_queue(c, st, CP_HEALTH_NOT_SERVING);
    cp_watch_end(c, st, CP_OK, "");
}

void cp_watch_deliver(cp_conn *c, cp_stream *st, const cp_job *job)
{
    int status = CP_HEALTH_UNKNOWN;
    if (job->resp != NULL && job->resp_len >= CP_GRPC_PREFIX)
        status = cp_health_status_of(job->resp + CP_GRPC_PREFIX, job->resp_len - CP_GRPC_PREFIX);
    watch_queue(c, st, status);
    if (c->draining)
        cp_watch_drain(c, st);
}

/* Asks the back end again (cp_conn_expire, when next_probe is due). */
void cp_watch_probe(cp_conn *c, cp_stream *st)
{
    st->next_probe = cp_now_ms() + CP_HEALTH_WATCH_MS;
    uint8_t *req = NULL;
    if (st->wreq_len > 0) {
        if ((req = malloc(st->wreq_len)) == NULL)
            return; /* out of memory: next time */
        memcpy(req, st->wreq, st->wreq_len);
    }
    cp_job *job = cp_conn_stream_job(c, st, req, st->wreq_len);
    if (job == NULL) {
        free(req);
        return;
    }
    st->job = job;
    c->refs++;
    c->inflight++;
    cp_pool_submit(c->pool, &job->task);
}
