/* h2client.c - gRPC unary calls over an nghttp2 client session. */
#include "client/h2client.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "rpc/grpc_wire.h"

/* One call in flight; the session's stream user data. */
typedef struct call {
    cp_arena *a;
    int32_t stream_id;
    const uint8_t *out; /* prefix + message */
    size_t out_len, out_off;
    uint8_t *in; /* received DATA, malloc'd */
    size_t in_len, in_cap;
    bool too_big;
    uint32_t too_big_len;
    bool closed;
    uint32_t rst_code;
    bool seen_headers;
    int http_status;
    const char *content_type; /* of the first header block; NULL if none */
    bool have_grpc_status, bad_grpc_status;
    int grpc_status;
    char *grpc_message;
    bool nomem;
} call;

struct cp_h2c {
    nghttp2_session *s;
    cp_h2c_io io;
    char *user_agent;
    call *cur;
    bool dead; /* the byte stream failed or ended */
};

/* ------------------------------------------------------------ callbacks */

static ssize_t read_body(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
    (void)s, (void)stream_id, (void)user;
    call *k = src->ptr;
    size_t n = k->out_len - k->out_off;
    if (n > length)
        n = length;
    memcpy(buf, k->out + k->out_off, n);
    k->out_off += n;
    if (k->out_off == k->out_len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static bool name_is(const uint8_t *name, size_t len, const char *want)
{
    return len == strlen(want) && memcmp(name, want, len) == 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
    (void)s, (void)flags;
    cp_h2c *c = user;
    call *k = c->cur;
    if (k == NULL || frame->hd.stream_id != k->stream_id)
        return 0;
    bool first = frame->headers.cat == NGHTTP2_HCAT_RESPONSE;
    if (first && name_is(name, namelen, ":status")) {
        int st = 0;
        for (size_t i = 0; i < valuelen && i < 3; i++)
            st = st * 10 + (value[i] - '0');
        k->http_status = st;
    } else if (first && name_is(name, namelen, "content-type")) {
        k->content_type = cp_arena_strndup(k->a, (const char *)value, valuelen);
        k->nomem |= k->content_type == NULL;
    } else if (name_is(name, namelen, "grpc-status")) {
        int st = 0;
        k->have_grpc_status = true;
        k->bad_grpc_status = valuelen == 0 || valuelen > 9;
        for (size_t i = 0; i < valuelen && !k->bad_grpc_status; i++) {
            if (value[i] < '0' || value[i] > '9')
                k->bad_grpc_status = true;
            else
                st = st * 10 + (value[i] - '0');
        }
        k->grpc_status = st;
    } else if (name_is(name, namelen, "grpc-message")) {
        char *m = cp_arena_strndup(k->a, (const char *)value, valuelen);
        if (m == NULL) {
            k->nomem = true;
            return 0;
        }
        cp_grpc_percent_decode(m, valuelen);
        k->grpc_message = m;
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *user)
{
    (void)s;
    cp_h2c *c = user;
    if (c->cur != NULL && frame->hd.type == NGHTTP2_HEADERS &&
        frame->hd.stream_id == c->cur->stream_id && frame->headers.cat == NGHTTP2_HCAT_RESPONSE)
        c->cur->seen_headers = true;
    return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t stream_id, const uint8_t *data,
                   size_t len, void *user)
{
    (void)flags;
    cp_h2c *c = user;
    call *k = c->cur;
    if (k == NULL || stream_id != k->stream_id || k->too_big)
        return 0;
    if (k->in_len + len > CP_GRPC_PREFIX + (size_t)CP_H2C_MAX_RECV) {
        /* grpc-go clients refuse messages over 4 MiB and cancel the
         * stream; do the same rather than buffer without limit. */
        k->too_big = true;
        k->too_big_len = CP_H2C_MAX_RECV + 1;
        if (k->in_len >= CP_GRPC_PREFIX)
            cp_grpc_get_prefix(k->in, &k->too_big_len);
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
        return 0;
    }
    if (k->in_len + len > k->in_cap) {
        size_t ncap = k->in_cap ? k->in_cap : 1024;
        while (ncap < k->in_len + len)
            ncap *= 2;
        uint8_t *nb = realloc(k->in, ncap);
        if (nb == NULL) {
            k->nomem = true;
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        k->in = nb;
        k->in_cap = ncap;
    }
    memcpy(k->in + k->in_len, data, len);
    k->in_len += len;
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id, uint32_t code, void *user)
{
    (void)s;
    cp_h2c *c = user;
    if (c->cur != NULL && stream_id == c->cur->stream_id) {
        c->cur->closed = true;
        c->cur->rst_code = code;
    }
    return 0;
}

/* ------------------------------------------------------------- session */

int cp_h2c_new(const cp_h2c_io *io, const char *user_agent, cp_h2c **out, cp_error *e)
{
    cp_h2c *c = calloc(1, sizeof(*c));
    nghttp2_session_callbacks *cbs = NULL;
    if (c == NULL)
        goto nomem;
    c->io = *io;
    c->user_agent = strdup(user_agent != NULL ? user_agent : "csi-proxy-cli");
    if (c->user_agent == NULL || nghttp2_session_callbacks_new(&cbs) != 0)
        goto nomem;
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    int rv = nghttp2_session_client_new(&c->s, cbs, c);
    nghttp2_session_callbacks_del(cbs);
    cbs = NULL;
    if (rv != 0)
        goto nomem;
    /* The 24-byte preface goes out automatically before this SETTINGS. */
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
    if (nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, iv, 1) != 0)
        goto nomem;
    *out = c;
    return CP_OK;
nomem:
    nghttp2_session_callbacks_del(cbs);
    cp_h2c_free(c);
    return cp_error_set(e, CP_E_NOMEM, "out of memory creating the HTTP/2 session");
}

/* Writes everything nghttp2 has queued. */
static int flush(cp_h2c *c, cp_error *e)
{
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->s, &data);
        if (n < 0)
            return cp_error_set(e, CP_E_INTERNAL, "HTTP/2 session error: %s",
                                nghttp2_strerror((int)n));
        if (n == 0)
            return CP_OK;
        int rc = c->io.write(c->io.ctx, data, (size_t)n, e);
        if (rc != CP_OK) {
            c->dead = true;
            return rc;
        }
    }
}

void cp_h2c_free(cp_h2c *c)
{
    if (c == NULL)
        return;
    if (c->s != NULL) {
        if (!c->dead && nghttp2_session_terminate_session(c->s, NGHTTP2_NO_ERROR) == 0) {
            cp_error ignored;
            (void)flush(c, &ignored);
        }
        nghttp2_session_del(c->s);
    }
    free(c->user_agent);
    free(c);
}

/* Feeds one read's worth of input. Returns 1 on data fed, 0 at EOF,
 * CP_E_DEADLINE_EXCEEDED on timeout, another negative status on error. */
static int pump(cp_h2c *c, int64_t timeout_ms, cp_error *e)
{
    uint8_t buf[16384];
    long n = c->io.read(c->io.ctx, buf, sizeof(buf), timeout_ms, e);
    if (n == CP_E_DEADLINE_EXCEEDED)
        return CP_E_DEADLINE_EXCEEDED;
    if (n <= 0) {
        c->dead = true;
        return (int)n;
    }
    ssize_t rv = nghttp2_session_mem_recv(c->s, buf, (size_t)n);
    if (rv < 0) {
        c->dead = true;
        return cp_error_set(e, CP_E_INTERNAL, "HTTP/2 protocol error from server: %s",
                            nghttp2_strerror((int)rv));
    }
    return 1;
}

void cp_h2c_format_timeout(int64_t ns, char out[16])
{
    static const struct {
        int64_t ns;
        char unit;
    } units[] = {{1, 'n'},          {1000, 'u'},        {1000000, 'm'},
                 {1000000000, 'S'}, {60000000000, 'M'}, {3600000000000, 'H'}};
    if (ns < 1)
        ns = 1;
    int64_t v = 0;
    char unit = 'H';
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        v = ns / units[i].ns + (ns % units[i].ns != 0);
        unit = units[i].unit;
        if (v <= 99999999)
            break;
    }
    if (v > 99999999)
        v = 99999999;
    snprintf(out, 16, "%u%c", (unsigned)v, unit);
}

/* grpc-go's mapping of an HTTP status without grpc-status. */
static int http_to_grpc(int http)
{
    switch (http) {
    case 400:
        return 13; /* INTERNAL */
    case 401:
        return 16; /* UNAUTHENTICATED */
    case 403:
        return 7; /* PERMISSION_DENIED */
    case 404:
        return 12; /* UNIMPLEMENTED */
    case 429:
    case 502:
    case 503:
    case 504:
        return 14; /* UNAVAILABLE */
    default:
        return 2; /* UNKNOWN */
    }
}

/* grpc-go's mapping of an RST_STREAM error code. */
static int rst_to_grpc(uint32_t code)
{
    switch (code) {
    case NGHTTP2_REFUSED_STREAM:
        return 14;
    case NGHTTP2_CANCEL:
        return 1;
    case NGHTTP2_ENHANCE_YOUR_CALM:
        return 8;
    case NGHTTP2_INADEQUATE_SECURITY:
        return 7;
    default:
        return 13;
    }
}

static int set_resp(call *k, cp_h2c_response *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int set_resp(call *k, cp_h2c_response *r, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->grpc_status = code;
    r->grpc_message = cp_arena_strdup(k->a, msg);
    if (r->grpc_message == NULL)
        r->grpc_message = "";
    r->body = NULL;
    r->len = 0;
    return CP_OK;
}

/* Turns what arrived on the stream into a gRPC status the way a grpc-go
 * client would. */
static int finish(call *k, cp_h2c_response *r)
{
    r->http_status = k->http_status;
    if (k->too_big)
        return set_resp(k, r, 8, "grpc: received message larger than max (%lu vs. %lu)",
                        (unsigned long)k->too_big_len, (unsigned long)CP_H2C_MAX_RECV);
    if (!k->seen_headers) {
        if (k->rst_code != 0)
            return set_resp(k, r, rst_to_grpc(k->rst_code),
                            "stream terminated by RST_STREAM with error code: %s (%lu)",
                            nghttp2_http2_strerror(k->rst_code), (unsigned long)k->rst_code);
        return set_resp(k, r, 14, "connection closed before the server sent a response");
    }
    bool ct_ok = k->content_type != NULL &&
                 cp_grpc_content_type_ok(k->content_type, strlen(k->content_type));
    if (!ct_ok || k->http_status != 200) {
        int code = k->http_status == 200 ? 2 : http_to_grpc(k->http_status);
        if (!ct_ok && k->content_type == NULL)
            return set_resp(k, r, code == 2 ? 13 : code,
                            "malformed header: missing HTTP content-type (HTTP status %d)",
                            k->http_status);
        if (!ct_ok)
            return set_resp(k, r, code, "unexpected content-type \"%s\" (HTTP status %d)",
                            k->content_type, k->http_status);
        return set_resp(k, r, code, "unexpected HTTP status code received from server: %d",
                        k->http_status);
    }
    if (!k->have_grpc_status) {
        if (k->rst_code != 0)
            return set_resp(k, r, rst_to_grpc(k->rst_code),
                            "stream terminated by RST_STREAM with error code: %s (%lu)",
                            nghttp2_http2_strerror(k->rst_code), (unsigned long)k->rst_code);
        if (!k->closed)
            return set_resp(k, r, 14, "connection closed before the server sent trailers");
        return set_resp(k, r, 13, "server closed the stream without sending trailers");
    }
    if (k->bad_grpc_status)
        return set_resp(k, r, 13, "malformed grpc-status");
    r->grpc_status = k->grpc_status;
    r->grpc_message = k->grpc_message != NULL ? k->grpc_message : "";
    if (k->grpc_status != 0)
        return CP_OK;
    /* OK: exactly one uncompressed message must have arrived. */
    if (k->in_len == 0)
        return set_resp(k, r, 13, "server returned OK without a response message");
    if (k->in_len < CP_GRPC_PREFIX)
        return set_resp(k, r, 13, "truncated message prefix (%lu bytes)", (unsigned long)k->in_len);
    uint32_t len;
    uint8_t flag = cp_grpc_get_prefix(k->in, &len);
    if (flag != 0)
        return set_resp(k, r, 13, "grpc: compressed flag set with identity or empty encoding");
    if (k->in_len - CP_GRPC_PREFIX < len)
        return set_resp(k, r, 13, "truncated message: prefix says %lu bytes, got %lu",
                        (unsigned long)len, (unsigned long)(k->in_len - CP_GRPC_PREFIX));
    if (k->in_len - CP_GRPC_PREFIX > len)
        return set_resp(k, r, 13,
                        "cardinality violation: expected <EOF> for non client-streaming RPCs, "
                        "but received another message");
    uint8_t *body = cp_arena_alloc(k->a, len);
    if (body == NULL)
        return CP_E_NOMEM;
    memcpy(body, k->in + CP_GRPC_PREFIX, len);
    r->body = body;
    r->len = len;
    return CP_OK;
}

int cp_h2c_call(cp_h2c *c, const cp_h2c_request *req, cp_arena *a, cp_h2c_response *resp,
                cp_error *e)
{
    memset(resp, 0, sizeof(*resp));
    resp->grpc_message = "";
    if (c->dead)
        return cp_error_set(e, CP_E_IO, "the connection is closed");
    if (req->len > UINT32_MAX - CP_GRPC_PREFIX)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "request too large");

    call k = {.a = a};
    uint8_t *out = cp_arena_alloc(a, CP_GRPC_PREFIX + req->len);
    char timeout[16] = "";
    if (out == NULL)
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    cp_grpc_put_prefix(out, false, (uint32_t)req->len);
    if (req->len > 0)
        memcpy(out + CP_GRPC_PREFIX, req->body, req->len);
    k.out = out;
    k.out_len = CP_GRPC_PREFIX + req->len;

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}
    nghttp2_nv hdrs[8] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", req->path),
        NV(":authority", req->authority != NULL ? req->authority : "localhost"),
        NV("content-type", "application/grpc"),
        NV("user-agent", c->user_agent),
        NV("te", "trailers"),
    };
    size_t nh = 7;
    if (req->timeout_ns > 0) {
        cp_h2c_format_timeout(req->timeout_ns, timeout);
        hdrs[nh++] = (nghttp2_nv)NV("grpc-timeout", timeout);
    }
#undef NV
    nghttp2_data_provider prd = {.source.ptr = &k, .read_callback = read_body};
    int64_t start = c->io.now_ms(c->io.ctx);
    int64_t deadline = req->timeout_ns > 0 ? start + (req->timeout_ns + 999999) / 1000000 : -1;
    int32_t sid = nghttp2_submit_request(c->s, NULL, hdrs, nh, &prd, &k);
    if (sid < 0)
        return cp_error_set(e, sid == NGHTTP2_ERR_NOMEM ? CP_E_NOMEM : CP_E_UNAVAILABLE,
                            "cannot start a stream: %s", nghttp2_strerror(sid));
    k.stream_id = sid;
    /* cppcheck-suppress autoVariables ; cleared below, before k goes out of scope */
    c->cur = &k;

    int rc = CP_OK;
    bool expired = false;
    while (!k.closed && !k.nomem) {
        if ((rc = flush(c, e)) != CP_OK)
            break;
        if (!nghttp2_session_want_read(c->s) && !nghttp2_session_want_write(c->s))
            break; /* GOAWAY processed and nothing left to do */
        int64_t wait = -1;
        if (deadline >= 0) {
            wait = deadline - c->io.now_ms(c->io.ctx);
            if (wait <= 0) {
                expired = true;
                break;
            }
        }
        rc = pump(c, wait, e);
        if (rc == CP_E_DEADLINE_EXCEEDED) {
            expired = true;
            rc = CP_OK;
            break;
        }
        if (rc <= 0)
            break; /* EOF (0) or error */
        rc = CP_OK;
    }
    if (rc == CP_OK && !c->dead && !k.nomem)
        rc = flush(c, e); /* e.g. WINDOW_UPDATE, or the RST for an oversize message */
    c->cur = NULL;

    if (k.nomem) {
        rc = cp_error_set(e, CP_E_NOMEM, "out of memory receiving the response");
    } else if (expired) {
        /* Like grpc-go: cancel the stream and report the local deadline. */
        nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, sid, NGHTTP2_CANCEL);
        cp_error ignored;
        (void)flush(c, &ignored);
        c->dead = true;
        (void)set_resp(&k, resp, 4, "context deadline exceeded");
        rc = CP_OK;
    } else if (rc < 0 && !k.seen_headers) {
        /* rc and e already describe the transport failure. */
    } else {
        rc = finish(&k, resp);
        if (rc == CP_E_NOMEM)
            cp_error_set(e, rc, "out of memory");
    }
    free(k.in);
    return rc;
}

int cp_h2c_idle(cp_h2c *c, int64_t ms, cp_error *e)
{
    if (c->dead)
        return cp_error_set(e, CP_E_IO, "the connection is closed");
    int64_t deadline = c->io.now_ms(c->io.ctx) + ms;
    for (;;) {
        int rc = flush(c, e);
        if (rc != CP_OK)
            return rc;
        int64_t wait = deadline - c->io.now_ms(c->io.ctx);
        if (wait <= 0)
            return CP_OK;
        rc = pump(c, wait, e);
        if (rc == CP_E_DEADLINE_EXCEEDED)
            return CP_OK;
        if (rc == 0)
            return cp_error_set(e, CP_E_IO, "the server closed the connection");
        if (rc < 0)
            return rc;
    }
}
