/* conn.c - one HTTP/2 session carrying unary gRPC calls. No I/O here:
 * bytes in through cp_conn_recv, bytes out through cp_conn_send. */
#include "rpc/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/health.h"
#include "rpc/conn_internal.h"
#include "rpc/conn_stream.h"
#include "rpc/watch.h"
#include "rpc/grpc_wire.h"
#include "rpc/h2check.h"
#include "metrics/metrics.h"
#include "base/thread.h"
#include "dispatch/wirecheck.h"

/* Concurrent streams a client may open. Drivers make a few calls at once
 * (one or two per volume being staged, published or measured); grpc-go
 * keeps to the limit by making a further call wait for a stream to end,
 * not by failing it. Each open stream whose client takes no answer holds
 * about a kilobyte here, so the limit is what bounds a stalled client. */
#define DEFAULT_MAX_STREAMS 64u
#define DEFAULT_MAX_HEADER_BYTES (16u * 1024)
/* Answers a connection may hold that its client has not taken (conn.h). */
#define DEFAULT_MAX_HELD_BYTES (32u * 1024)
/* Frames waiting in nghttp2's queue (answers' headers, resets, window
 * updates) past which the client is taken not to read at all. */
#define MAX_QUEUED_FRAMES 2000u

/* The answer is out and the stream closed: its memory is free again. */
static void release(cp_conn *c, cp_stream *st, size_t n)
{
    st->held -= n;
    c->held -= n;
}

/* ---- responses ------------------------------------------------------ */

static void respond_status(cp_conn *c, cp_stream *st, int status, const char *msg)
{
    if (st->responded)
        return;
    if (st->watch)
        cp_watch_handled(c, st, status);
    if (st->w_started) { /* a Watch whose answers flow: its trailers end it */
        cp_watch_end(c, st, status, msg);
        return;
    }
    st->responded = true;
    char code[8], enc[CP_ERROR_MSG_MAX * 3 + 1];
    snprintf(code, sizeof(code), "%d", cp_status_to_grpc(status));
    cp_grpc_percent_encode(msg, enc, sizeof(enc));
    const nghttp2_nv hdrs[] = {
        NV(":status", "200"),
        NV("content-type", "application/grpc"),
        NV("grpc-status", code),
        NV("grpc-message", enc),
    };
    size_t n = msg[0] != '\0' ? 4 : 3;
    cp_stream_hold(c, st, STREAM_HELD_COST);
    if (!st->remote_closed)
        st->rst_after_send = true;
    nghttp2_submit_response(c->h2, st->id, hdrs, n, NULL);
}

static void respond_http(cp_conn *c, cp_stream *st, const char *http_status)
{
    if (st->responded)
        return;
    st->responded = true;
    const nghttp2_nv hdrs[] = {NV(":status", http_status)};
    cp_stream_hold(c, st, STREAM_HELD_COST);
    if (!st->remote_closed)
        st->rst_after_send = true;
    nghttp2_submit_response(c->h2, st->id, hdrs, 1, NULL);
}

static ssize_t read_resp(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                         nghttp2_data_source *src, void *ud)
{
    (void)h2;
    cp_stream *st = src->ptr;
    size_t left = st->resp_len - st->resp_off;
    size_t n = left < len ? left : len;
    memcpy(buf, st->resp + st->resp_off, n);
    st->resp_off += n;
    release(ud, st, n);
    if (st->resp_off == st->resp_len) {
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        const nghttp2_nv tr[] = {NV("grpc-status", "0")};
        if (nghttp2_submit_trailer(h2, id, tr, 1) != 0)
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    return (ssize_t)n;
}

static void respond_ok(cp_conn *c, cp_stream *st, uint8_t *resp, size_t len)
{
    st->responded = true;
    st->resp = resp;
    st->resp_len = len;
    st->resp_off = 0;
    cp_stream_hold(c, st, STREAM_HELD_COST + len);
    if (!st->remote_closed)
        st->rst_after_send = true;
    const nghttp2_nv hdrs[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_resp};
    nghttp2_submit_response(c->h2, st->id, hdrs, 2, &dp);
}

void cp_conn_deliver(cp_conn *c, cp_job *job)
{
    cp_stream *st = nghttp2_session_get_stream_user_data(c->h2, job->stream_id);
    if (st != NULL && st->job == job)
        st->job = NULL;
    if (st == NULL || st->responded)
        return; /* reset by the client, or answered (deadline) already */
    if (st->watch && job->err.status == CP_OK) {
        cp_watch_deliver(c, st, job);
        return;
    }
    if (job->err.status != CP_OK) {
        respond_status(c, st, job->err.status, job->err.msg);
        return;
    }
    respond_ok(c, st, job->resp, job->resp_len);
    job->resp = NULL; /* the stream owns it now */
}

/* ---- request handling ----------------------------------------------- */

/* Checks what the headers said; answers and returns false on a problem. */
static bool check_request(cp_conn *c, cp_stream *st)
{
    char msg[512];
    if (!st->is_post) {
        respond_http(c, st, "405");
        return false;
    }
    if (!st->ct_ok) {
        respond_http(c, st, "415");
        return false;
    }
    if (c->opts.deny_message == NULL && c->opts.before_call != NULL)
        c->opts.before_call(c->opts.before_call_ctx); /* may deny the connection */
    if (c->opts.deny_message != NULL) {
        if (c->on_denied != NULL)
            c->on_denied(c->on_denied_ctx, st->path);
        cp_metrics_call_refused(c->opts.metrics, c->svc->def);
        respond_status(c, st, CP_E_PERMISSION_DENIED, c->opts.deny_message);
        return false;
    }
    if (st->header_bytes > c->opts.max_header_bytes) {
        snprintf(msg, sizeof(msg), "request headers of %zu bytes exceed the limit of %zu bytes",
                 st->header_bytes, c->opts.max_header_bytes);
        respond_status(c, st, CP_E_RESOURCE_EXHAUSTED, msg);
        return false;
    }
    if (st->bad_timeout) {
        respond_status(c, st, CP_E_INTERNAL, "malformed grpc-timeout header");
        return false;
    }
    /* :path is /<package>.<Service>/<Method> */
    const char *svc = st->path + 1, *slash = strchr(svc, '/');
    if (st->path[0] != '/' || slash == NULL || st->path_too_long) {
        snprintf(msg, sizeof(msg), "malformed method name: \"%.200s\"", st->path);
        respond_status(c, st, CP_E_UNIMPLEMENTED, msg);
        return false;
    }
    size_t svc_len = (size_t)(slash - svc);
    const char *method = slash + 1;
    const cp_service_def *def = c->svc->def;
    if (strlen(CP_HEALTH_SERVICE) == svc_len && strncmp(CP_HEALTH_SERVICE, svc, svc_len) == 0) {
        /* the standard health service, on every pipe besides its own */
        def = &cp_health_def;
        st->health = true;
    } else if (strlen(def->service) != svc_len || strncmp(def->service, svc, svc_len) != 0) {
        snprintf(msg, sizeof(msg), "unknown service %.*s", (int)svc_len, svc);
        respond_status(c, st, CP_E_UNIMPLEMENTED, msg);
        return false;
    }
    st->method = cp_service_find(def, method, strlen(method));
    if (st->method == NULL) {
        if (cp_service_knows(def, method, strlen(method)))
            snprintf(msg, sizeof(msg),
                     "method %s of service %s is not implemented by this build of csi-proxy",
                     method, def->service);
        else
            snprintf(msg, sizeof(msg), "unknown method %s for service %s", method, def->service);
        respond_status(c, st, CP_E_UNIMPLEMENTED, msg);
        return false;
    }
    st->watch = st->health && cp_health_is_watch(st->method);
    if (st->encoding[0] != '\0') {
        snprintf(msg, sizeof(msg),
                 "grpc: Decompressor is not installed for grpc-encoding \"%s\": csi-proxy accepts "
                 "only uncompressed messages",
                 st->encoding);
        respond_status(c, st, CP_E_UNIMPLEMENTED, msg);
        return false;
    }
    return true;
}

/* A job for st's call on req[0..len) (owned by the job); NULL when out of
 * memory. Health calls run as the pipe's health service, apart from the
 * group's calls in the pool. */
cp_job *cp_conn_stream_job(cp_conn *c, cp_stream *st, uint8_t *req, size_t len)
{
    const cp_service *svc = st->health ? &c->health_svc : c->svc;
    return cp_job_new_svc(c, svc, st->id, st->method, st->path, req, len);
}

/* Hands the kept bytes to a job on the pool. */
static void start_job(cp_conn *c, cp_stream *st)
{
    if (st->len == 0) {
        free(st->buf);
        st->buf = NULL;
    }
    if (st->watch) { /* each probe runs the request again */
        st->wreq = malloc(st->len > 0 ? st->len : 1);
        if (st->wreq == NULL) {
            respond_status(c, st, CP_E_RESOURCE_EXHAUSTED, "out of memory for the request");
            return;
        }
        if (st->len > 0)
            memcpy(st->wreq, st->buf, st->len);
        st->wreq_len = st->len;
        st->next_probe = cp_now_ms() + CP_HEALTH_WATCH_MS;
        st->w_last = -1;
        st->watching = true;
        c->watching++;
    }
    cp_job *job = cp_conn_stream_job(c, st, st->buf, st->len);
    if (job == NULL) {
        respond_status(c, st, CP_E_RESOURCE_EXHAUSTED, "out of memory for the request");
        return;
    }
    job->deadline = st->deadline;
    if (st->watch)
        cp_watch_started(c, st);
    st->job_started = true;
    st->job = job;
    st->buf = NULL; /* the job owns it now */
    st->len = st->cap = 0;
    free(st->filt);
    st->filt = NULL;
    c->refs++;
    c->inflight++;
    c->started++;
    cp_pool_submit(c->pool, &job->task);
}

/* Checks the 5-byte prefix once it is in; answers and returns false on a
 * problem. */
static bool on_prefix(cp_conn *c, cp_stream *st)
{
    uint32_t len;
    uint8_t flag = cp_grpc_get_prefix(st->prefix, &len);
    char msg[256];
    if (flag == 1) {
        respond_status(c, st, CP_E_UNIMPLEMENTED,
                       "grpc: compressed request message refused: csi-proxy accepts only "
                       "uncompressed messages (no grpc-encoding)");
        return false;
    }
    if (flag != 0) {
        snprintf(msg, sizeof(msg), "grpc: invalid message flag %u", flag);
        respond_status(c, st, CP_E_INTERNAL, msg);
        return false;
    }
    if (len > c->opts.max_recv_msg) {
        snprintf(msg, sizeof(msg), "grpc: received message larger than max (%u vs. %zu)", len,
                 c->opts.max_recv_msg);
        respond_status(c, st, CP_E_RESOURCE_EXHAUSTED, msg);
        return false;
    }
    st->filt = malloc(sizeof(*st->filt));
    if (st->filt == NULL) {
        respond_status(c, st, CP_E_RESOURCE_EXHAUSTED, "out of memory for the request");
        return false;
    }
    cp_wire_filter_init(st->filt, st->method->req_desc, len, CP_WIRE_MAX_FIELDS);
    st->msg_len = len;
    return true;
}

/* Appends bytes the filter kept (never more than the message's length). */
static int keep_bytes(void *ctx, const uint8_t *p, size_t n)
{
    cp_stream *st = ctx;
    if (n > st->cap - st->len) {
        size_t cap = st->cap ? st->cap : 256;
        while (cap - st->len < n)
            cap *= 2;
        if (cap > st->msg_len)
            cap = st->msg_len;
        uint8_t *nb = realloc(st->buf, cap);
        if (nb == NULL)
            return -1;
        st->buf = nb;
        st->cap = cap;
    }
    memcpy(st->buf + st->len, p, n);
    st->len += n;
    return 0;
}

/* Answers a filter error; false when there was one. */
static bool filter_ok(cp_conn *c, cp_stream *st, int rc)
{
    char msg[512];
    switch (rc) {
    case CP_WIRE_OK:
        return true;
    case CP_WIRE_TOO_MANY:
        snprintf(msg, sizeof(msg),
                 "%s: the request message has more than %u fields, the limit for one request "
                 "(each decoded field costs memory; unknown top-level fields are ignored and "
                 "not counted)",
                 st->path, CP_WIRE_MAX_FIELDS);
        respond_status(c, st, CP_E_RESOURCE_EXHAUSTED, msg);
        return false;
    case CP_WIRE_NOMEM:
        respond_status(c, st, CP_E_RESOURCE_EXHAUSTED, "out of memory for the request");
        return false;
    default: /* the answer cp_dispatch_run gives when protobuf-c refuses it */
        snprintf(msg, sizeof(msg),
                 "grpc: error unmarshalling request: %s is not a valid %s message", st->path,
                 st->method->req_desc->name);
        respond_status(c, st, CP_E_INTERNAL, msg);
        return false;
    }
}

/* Reads request bytes as they come: the prefix, then the message through
 * the filter, which keeps only what decoding needs (so a request costs
 * about the bytes it keeps, not the bytes it sends). Starts the call once
 * the whole message is in. */
static void on_body(cp_conn *c, cp_stream *st, const uint8_t *data, size_t n)
{
    while (st->prefix_len < CP_GRPC_PREFIX && n > 0) {
        st->prefix[st->prefix_len++] = *data++;
        n--;
        if (st->prefix_len == CP_GRPC_PREFIX && !on_prefix(c, st))
            return;
    }
    if (st->filt == NULL)
        return; /* the prefix is not complete */
    if (n > st->msg_len - st->got) {
        respond_status(c, st, CP_E_UNIMPLEMENTED,
                       "grpc: more than one request message on a unary call");
        return;
    }
    st->got += (uint32_t)n;
    if (!filter_ok(c, st, cp_wire_filter_feed(st->filt, data, n, keep_bytes, st)))
        return;
    if (st->got == st->msg_len && filter_ok(c, st, cp_wire_filter_finish(st->filt)))
        start_job(c, st);
}

static void on_end_stream(cp_conn *c, cp_stream *st)
{
    st->remote_closed = true;
    if (st->responded || st->job_started)
        return;
    char msg[128];
    if (st->prefix_len < CP_GRPC_PREFIX) {
        respond_status(c, st, CP_E_INTERNAL, "grpc: request stream ended without a message");
        return;
    }
    snprintf(msg, sizeof(msg), "grpc: request message truncated: got %u of %u bytes", st->got,
             st->msg_len);
    respond_status(c, st, CP_E_INTERNAL, msg);
}

/* ---- nghttp2 callbacks ---------------------------------------------- */

static int on_begin_headers(nghttp2_session *h2, const nghttp2_frame *f, void *ud)
{
    cp_conn *c = ud;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    if (c->held > c->opts.max_held_bytes) {
        /* The client does not take its answers: no new call until it
         * does. REFUSED_STREAM says the call was not processed, so that
         * a client may retry it (grpc-go does, once, at once). As in
         * reset_stream, the stream is CLOSING: the INTERNAL_ERROR reset
         * queued for the callback's failure is not sent, and no header
         * or frame callback follows. */
        nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_REFUSED_STREAM);
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    cp_stream *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    st->id = f->hd.stream_id;
    st->deadline = INT64_MAX;
    cp_h2check_init(&st->hc);
    st->next = c->streams;
    if (c->streams != NULL)
        c->streams->prev = st;
    c->streams = st;
    nghttp2_session_set_stream_user_data(h2, st->id, st);
    return 0;
}

static bool is(const uint8_t *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* What nghttp2's messaging does when a check fails: RST_STREAM
 * PROTOCOL_ERROR. The stream is then CLOSING, so the INTERNAL_ERROR reset
 * nghttp2 queues for NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE is not sent (as
 * in nghttp2_session.c, which returns the same code after its own reset),
 * the rest of the header block is skipped and no frame callback follows. */
static int reset_stream(nghttp2_session *h2, cp_stream *st)
{
    st->h2_reset = true;
    nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR);
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
    (void)flags;
    (void)ud;
    cp_stream *st = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
    if (st == NULL || st->h2_reset)
        return 0;
    bool trailer = f->headers.cat != NGHTTP2_HCAT_REQUEST;
    if (!cp_h2check_field(&st->hc, name, namelen, value, valuelen, trailer))
        return reset_stream(h2, st);
    if (trailer)
        return 0; /* trailers from the client carry nothing we use */
    st->header_bytes += namelen + valuelen + 32;
    if (is(name, namelen, ":path")) {
        if (valuelen >= sizeof(st->path)) {
            st->path_too_long = true;
            valuelen = sizeof(st->path) - 1;
        }
        memcpy(st->path, value, valuelen);
        st->path[valuelen] = '\0';
    } else if (is(name, namelen, ":method")) {
        st->is_post = is(value, valuelen, "POST");
    } else if (is(name, namelen, "content-type")) {
        st->ct_ok = cp_grpc_content_type_ok((const char *)value, valuelen);
    } else if (is(name, namelen, "grpc-timeout")) {
        int64_t ms;
        if (cp_grpc_parse_timeout((const char *)value, valuelen, &ms) != 0)
            st->bad_timeout = true;
        else
            st->deadline = cp_now_ms() + ms;
    } else if (is(name, namelen, "grpc-encoding") && !is(value, valuelen, "identity")) {
        size_t n = valuelen < sizeof(st->encoding) - 1 ? valuelen : sizeof(st->encoding) - 1;
        memcpy(st->encoding, value, n);
        st->encoding[n] = '\0';
    }
    /* :authority is never used for routing; h2check.c checked its syntax. */
    return 0;
}

static int on_data_chunk(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *ud)
{
    (void)flags;
    cp_conn *c = ud;
    cp_stream *st = nghttp2_session_get_stream_user_data(h2, id);
    if (st == NULL || st->h2_reset)
        return 0;
    if (!cp_h2check_data(&st->hc, len)) { /* more than content-length */
        reset_stream(h2, st);
        return 0;
    }
    if (st->responded || st->job_started || st->method == NULL)
        return 0;
    on_body(c, st, data, len);
    return 0;
}

static int on_frame_recv(nghttp2_session *h2, const nghttp2_frame *f, void *ud)
{
    cp_conn *c = ud;
    if (f->hd.type == NGHTTP2_PING && !(f->hd.flags & NGHTTP2_FLAG_ACK))
        c->rx_ping = true;
    else if (f->hd.type != NGHTTP2_PING && f->hd.type != NGHTTP2_SETTINGS &&
             f->hd.type != NGHTTP2_WINDOW_UPDATE)
        c->rx_other = true;
    if (f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS)
        return 0;
    cp_stream *st = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
    if (st == NULL || st->h2_reset)
        return 0;
    bool end = f->hd.flags & NGHTTP2_FLAG_END_STREAM;
    bool ok = true;
    if (f->hd.type == NGHTTP2_HEADERS)
        ok = f->headers.cat == NGHTTP2_HCAT_REQUEST ? cp_h2check_request_end(&st->hc)
                                                    : cp_h2check_trailers_end(end);
    if (ok && end)
        ok = cp_h2check_end_stream(&st->hc);
    if (!ok) {
        reset_stream(h2, st);
        return 0;
    }
    if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
        check_request(c, st);
    if (end)
        on_end_stream(c, st);
    return 0;
}

static int on_frame_send(nghttp2_session *h2, const nghttp2_frame *f, void *ud)
{
    (void)ud;
    if (f->hd.type != NGHTTP2_HEADERS || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    cp_stream *st = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
    if (st != NULL && st->rst_after_send && !st->remote_closed)
        nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR);
    return 0;
}

static void stream_free(cp_stream *st)
{
    free(st->wreq);
    free(st->filt);
    free(st->buf);
    free(st->resp);
    free(st);
}

static int on_stream_close(nghttp2_session *h2, int32_t id, uint32_t err, void *ud)
{
    (void)err;
    cp_conn *c = ud;
    cp_stream *st = nghttp2_session_get_stream_user_data(h2, id);
    if (st == NULL)
        return 0;
    nghttp2_session_set_stream_user_data(h2, id, NULL);
    c->held -= st->held;
    cp_watch_handled(c, st, CP_E_CANCELLED); /* a Watch the client left */
    if (st->watching)
        c->watching--;
    if (st->job != NULL) /* reset by the client (or answered at its deadline) */
        cp_job_cancel(st->job);
    if (st->prev != NULL)
        st->prev->next = st->next;
    else
        c->streams = st->next;
    if (st->next != NULL)
        st->next->prev = st->prev;
    stream_free(st);
    return 0;
}

/* ---- life cycle ----------------------------------------------------- */

cp_conn *cp_conn_new(const cp_service *svc, cp_pool *pool, const cp_conn_opts *opts,
                     cp_conn_post_fn post, void *post_ctx)
{
    cp_conn *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    if (opts != NULL)
        c->opts = *opts;
    if (c->opts.max_recv_msg == 0)
        c->opts.max_recv_msg = CP_GRPC_DEFAULT_MAX_MSG;
    if (c->opts.max_streams == 0)
        c->opts.max_streams = DEFAULT_MAX_STREAMS;
    if (c->opts.max_header_bytes == 0)
        c->opts.max_header_bytes = DEFAULT_MAX_HEADER_BYTES;
    if (c->opts.max_held_bytes == 0)
        c->opts.max_held_bytes = DEFAULT_MAX_HELD_BYTES;
    c->refs = 1;
    c->svc = svc;
    c->health_svc = cp_health_bind(svc);
    c->pool = pool;
    c->post = post;
    c->post_ctx = post_ctx;

    nghttp2_session_callbacks *cb = NULL;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        goto fail;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    /* nghttp2's HTTP messaging is off, and its checks are made by
     * h2check.c from the callbacks above, unchanged but for one allowance:
     * :authority may also be a raw pipe path (\\.\pipe\...), which
     * grpc-go before 1.57 sends and nghttp2 1.52 refuses with no way to
     * overrule it for a pseudo-header (h2check.h). A request failing a
     * check is reset with PROTOCOL_ERROR, as nghttp2 does. */
    nghttp2_option *opt = NULL;
    if (nghttp2_option_new(&opt) != 0)
        goto fail;
    nghttp2_option_set_no_http_messaging(opt, 1);
    int rv = nghttp2_session_server_new2(&c->h2, cb, c, opt);
    nghttp2_option_del(opt);
    if (rv != 0)
        goto fail;
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, c->opts.max_streams},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, (uint32_t)c->opts.max_header_bytes},
    };
    if (nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv, 2) != 0)
        goto fail;
    nghttp2_session_callbacks_del(cb);
    cp_metrics_conn_opened(c->opts.metrics, svc->def, c->opts.deny_message != NULL);
    return c;
fail:
    nghttp2_session_callbacks_del(cb);
    if (c->h2 != NULL)
        nghttp2_session_del(c->h2);
    free(c);
    return NULL;
}

void cp_conn_unref(cp_conn *c)
{
    if (--c->refs > 0)
        return;
    /* nghttp2_session_del() frees its streams without calling
     * on_stream_close: the streams still open when the client went away
     * (mid-request, mid-response) are freed here. */
    while (c->streams != NULL) {
        cp_stream *st = c->streams;
        c->streams = st->next;
        stream_free(st);
    }
    nghttp2_session_del(c->h2);
    free(c);
}

void cp_conn_close(cp_conn *c)
{
    for (cp_stream *st = c->streams; st != NULL; st = st->next) {
        if (st->job != NULL) /* nobody waits for its answer any more */
            cp_job_cancel(st->job);
        cp_watch_handled(c, st, CP_E_CANCELLED); /* a Watch whose client went away */
    }
    c->closed = true;
    cp_metrics_conn_closed(c->opts.metrics, c->svc->def);
    c->out = NULL;
    c->out_len = 0;
    cp_conn_unref(c);
}

int cp_conn_recv(cp_conn *c, const uint8_t *data, size_t len)
{
    return cp_conn_recv_info(c, data, len, NULL);
}

int cp_conn_recv_info(cp_conn *c, const uint8_t *data, size_t len, cp_recv_info *info)
{
    size_t started = c->started;
    c->rx_ping = c->rx_other = false;
    ssize_t n = nghttp2_session_mem_recv(c->h2, data, len);
    if (info != NULL) {
        info->calls_started = c->started - started;
        info->ping_only = c->rx_ping && !c->rx_other;
    }
    if (n < 0)
        return CP_E_IO;
    /* A client that reads nothing while it sends makes frames pile up
     * here (each call refused or answered queues one): it is cut off, as
     * nghttp2 cuts off one that leaves its PING and SETTINGS unanswered. */
    if (nghttp2_session_get_outbound_queue_size(c->h2) > MAX_QUEUED_FRAMES) {
        nghttp2_session_terminate_session(c->h2, NGHTTP2_ENHANCE_YOUR_CALM);
        return CP_E_IO;
    }
    return CP_OK;
}

long cp_conn_send(cp_conn *c, uint8_t *buf, size_t cap)
{
    size_t total = 0;
    while (total < cap) {
        if (c->out_len == 0) {
            const uint8_t *p;
            ssize_t n = nghttp2_session_mem_send(c->h2, &p);
            if (n < 0)
                return total > 0 ? (long)total : CP_E_IO;
            if (n == 0)
                break;
            c->out = p;
            c->out_len = (size_t)n;
        }
        size_t k = c->out_len < cap - total ? c->out_len : cap - total;
        memcpy(buf + total, c->out, k);
        total += k;
        c->out += k;
        c->out_len -= k;
    }
    return (long)total;
}

bool cp_conn_wants_io(cp_conn *c)
{
    return c->out_len > 0 || nghttp2_session_want_read(c->h2) ||
           nghttp2_session_want_write(c->h2) || c->inflight > 0;
}

size_t cp_conn_inflight(cp_conn *c)
{
    return c->inflight + c->watching; /* an open Watch is a call in flight */
}

int64_t cp_conn_next_deadline(cp_conn *c)
{
    int64_t d = INT64_MAX;
    for (cp_stream *st = c->streams; st != NULL; st = st->next) {
        if (!st->responded && st->deadline < d)
            d = st->deadline;
        if (st->watch && !st->responded && st->next_probe < d)
            d = st->next_probe;
    }
    return d;
}

void cp_conn_expire(cp_conn *c, int64_t now)
{
    for (cp_stream *st = c->streams; st != NULL; st = st->next) {
        if (st->responded || st->deadline > now)
            continue;
        char msg[384];
        snprintf(msg, sizeof(msg), "deadline exceeded (grpc-timeout) before %s finished", st->path);
        /* a grpc-go health server's Watch returns Canceled when its
         * stream's context ends, deadline or not (metrics.h) */
        cp_watch_handled(c, st, CP_E_CANCELLED);
        respond_status(c, st, CP_E_DEADLINE_EXCEEDED, msg);
    }
    for (cp_stream *st = c->streams; st != NULL; st = st->next) {
        if (!st->watch || st->responded || st->next_probe > now)
            continue;
        if (st->job == NULL)
            cp_watch_probe(c, st);
        else /* the last probe still runs: look again later */
            st->next_probe = now + CP_HEALTH_WATCH_MS;
    }
}

void cp_conn_shutdown(cp_conn *c)
{
    if (c->draining)
        return;
    c->draining = true;
    for (cp_stream *st = c->streams; st != NULL; st = st->next)
        if (st->w_started && !st->responded)
            cp_watch_drain(c, st);
    nghttp2_submit_goaway(c->h2, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(c->h2),
                          NGHTTP2_NO_ERROR, NULL, 0);
}

void cp_conn_abort_calls(cp_conn *c, const char *why)
{
    for (cp_stream *st = c->streams; st != NULL; st = st->next)
        respond_status(c, st, CP_E_UNAVAILABLE, why);
}

void cp_conn_deny(cp_conn *c, const char *message, void (*on_denied)(void *ctx, const char *path),
                  void *ctx)
{
    c->opts.deny_message = message;
    c->on_denied = on_denied;
    c->on_denied_ctx = ctx;
}

const char *cp_conn_peer_id(const cp_conn *c)
{
    return c->opts.peer_id;
}

void cp_conn_set_user(cp_conn *c, void *user)
{
    c->user = user;
}

void *cp_conn_user(cp_conn *c)
{
    return c->user;
}
