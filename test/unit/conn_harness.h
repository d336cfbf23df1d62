/* conn_harness.h - the in-memory harness the connection tests share: a
 * test service (PathExists answers exists = (path == YES), a slow Mkdir, a
 * failing Rmdir), an nghttp2 client pumped against a cp_conn, the job
 * completion queue, capture replay and a call helper. Static functions in
 * a header: each test_conn*.c includes it once and uses what it needs. */
#ifndef CP_TEST_CONN_HARNESS_H
#define CP_TEST_CONN_HARNESS_H
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disk/v1/api.pb-c.h"
#include "filesystem/v1/api.pb-c.h"
#include "filesystem/v1beta1/api.pb-c.h"
#include "rpc/conn.h"
#include "rpc/grpc_wire.h"
#include "metrics/metrics.h"
#include "base/thread.h"
#include "dispatch/wirecheck.h"

#ifndef CAPTURES
#define CAPTURES "test/captures"
#endif

/* ---- a test service: PathExists answers exists = (path == YES) ------- */

#define YES "C:\\csiproxy-test\\dir"

typedef struct {
    const char *path;
} t_req;
typedef struct {
    bool value;
} t_resp;

static int h_exists(cp_call *call, const void *req, void *resp)
{
    (void)call;
    ((t_resp *)resp)->value = strcmp(((const t_req *)req)->path, YES) == 0;
    return CP_OK;
}

static int h_slow(cp_call *call, const void *req, void *resp)
{
    (void)call;
    (void)req;
    (void)resp;
    usleep(300 * 1000);
    return CP_OK;
}

static int h_fail(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "path %s is bad\n%%",
                        ((const t_req *)req)->path);
}

static const cp_fieldmap req_map[] = {{"path", offsetof(t_req, path), CP_F_STRING}, {NULL, 0, 0}};
static const cp_fieldmap resp_map[] = {{"exists", offsetof(t_resp, value), CP_F_BOOL},
                                       {NULL, 0, 0}};

static const cp_method methods[] = {
    {"PathExists", &v1__path_exists_request__descriptor, &v1__path_exists_response__descriptor,
     req_map, NULL, h_exists, resp_map, NULL, 0},
    {"Mkdir", &v1__mkdir_request__descriptor, &v1__mkdir_response__descriptor, req_map, NULL,
     h_slow, NULL, NULL, 0},
    {"Rmdir", &v1__rmdir_request__descriptor, &v1__rmdir_response__descriptor, req_map, NULL,
     h_fail, NULL, NULL, 0},
};
static const cp_service_def fs_def = {
    "filesystem", "v1", "v1.Filesystem", &v1__filesystem__descriptor,
    methods,      3,    sizeof(t_req),   sizeof(t_resp)};
static const cp_service fs_svc = {&fs_def, NULL};
/* v1beta1: PathExistsResponse.exists is field 2 */
static const cp_method beta_methods[] = {
    {"PathExists", &v1beta1__path_exists_request__descriptor,
     &v1beta1__path_exists_response__descriptor, req_map, NULL, h_exists, resp_map, NULL, 0},
};
static const cp_service_def beta_def = {
    "filesystem", "v1beta1", "v1beta1.Filesystem", &v1beta1__filesystem__descriptor,
    beta_methods, 1,         sizeof(t_req),        sizeof(t_resp)};
static const cp_service beta_svc = {&beta_def, NULL};
static const cp_service_def disk_def = {"disk", "v1", "v1.Disk",     &v1__disk__descriptor,
                                        NULL,   0,    sizeof(t_req), sizeof(t_resp)};
static const cp_service disk_svc = {&disk_def, NULL};

/* ---- completion queue standing in for a transport ---------------------- */

static cp_mutex *mu;
static cp_cond *cv;
static cp_job *done[64];
static size_t n_done;

static void post(void *ctx, cp_job *job)
{
    (void)ctx;
    cp_mutex_lock(mu);
    done[n_done++] = job;
    cp_cond_signal(cv);
    cp_mutex_unlock(mu);
}

/* ---- the client side: an nghttp2 client session collecting results ---- */

typedef struct result {
    int grpc_status; /* -1 when none */
    char message[1024];
    char http_status[8];
    uint8_t data[256];
    size_t data_len;
    bool closed;
    uint32_t rst;
} result;

typedef struct client {
    nghttp2_session *h2;
    result r[16]; /* by (stream_id - 1) / 2 */
    bool goaway;
} client;

static result *res_of(client *cl, int32_t id)
{
    size_t i = (size_t)(id - 1) / 2;
    return i < 16 ? &cl->r[i] : NULL;
}

static int cl_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *n, size_t nl,
                     const uint8_t *v, size_t vl, uint8_t fl, void *ud)
{
    (void)s;
    (void)fl;
    result *r = res_of(ud, f->hd.stream_id);
    if (r == NULL)
        return 0;
    if (nl == 11 && memcmp(n, "grpc-status", 11) == 0) {
        char b[8] = {0};
        memcpy(b, v, vl < 7 ? vl : 7);
        r->grpc_status = atoi(b);
    } else if (nl == 12 && memcmp(n, "grpc-message", 12) == 0) {
        size_t k = vl < sizeof(r->message) - 1 ? vl : sizeof(r->message) - 1;
        memcpy(r->message, v, k);
        r->message[cp_grpc_percent_decode(r->message, k)] = '\0';
    } else if (nl == 7 && memcmp(n, ":status", 7) == 0) {
        memcpy(r->http_status, v, vl < 7 ? vl : 7);
    }
    return 0;
}

static int cl_data(nghttp2_session *s, uint8_t fl, int32_t id, const uint8_t *d, size_t len,
                   void *ud)
{
    (void)s;
    (void)fl;
    result *r = res_of(ud, id);
    if (r != NULL && r->data_len + len <= sizeof(r->data)) {
        memcpy(r->data + r->data_len, d, len);
        r->data_len += len;
    }
    return 0;
}

static int cl_close(nghttp2_session *s, int32_t id, uint32_t err, void *ud)
{
    (void)s;
    result *r = res_of(ud, id);
    if (r != NULL) {
        r->closed = true;
        r->rst = err;
    }
    return 0;
}

static int cl_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)s;
    if (f->hd.type == NGHTTP2_GOAWAY)
        ((client *)ud)->goaway = true;
    return 0;
}

static void client_init(client *cl)
{
    memset(cl, 0, sizeof(*cl));
    for (int i = 0; i < 16; i++)
        cl->r[i].grpc_status = -1;
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, cl_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cl_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, cl_close);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, cl_frame);
    nghttp2_session_client_new(&cl->h2, cb, cl);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(cl->h2, NGHTTP2_FLAG_NONE, NULL, 0);
}

/* Moves the server's output into the client, and the client's into the
 * server (when to_server). */
static void pump(cp_conn *c, client *cl, bool to_server)
{
    uint8_t buf[65536];
    for (int round = 0; round < 8; round++) {
        long n = cp_conn_send(c, buf, sizeof(buf));
        assert_true(n >= 0);
        if (n > 0)
            assert_int_equal(nghttp2_session_mem_recv(cl->h2, buf, (size_t)n), n);
        const uint8_t *p;
        ssize_t m = nghttp2_session_mem_send(cl->h2, &p);
        if (m > 0 && to_server)
            cp_conn_recv(c, p, (size_t)m);
        if (n == 0 && m <= 0)
            break;
    }
}

/* Waits for k jobs and completes them on this (the "I/O") thread. */
static void complete_jobs(cp_conn *c, size_t k)
{
    cp_mutex_lock(mu);
    while (n_done < k) {
        if (cp_cond_timedwait(cv, mu, 5000) != 0) {
            /* fail without the lock held, or every later test hangs on it */
            size_t have = n_done;
            cp_mutex_unlock(mu);
            fail_msg("%zu of %zu jobs finished within 5 s", have, k);
        }
    }
    size_t n = n_done;
    n_done = 0;
    cp_mutex_unlock(mu);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(cp_job_complete(done[i]), c);
}

static uint8_t *read_file(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", CAPTURES, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[4096];
    *len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    return buf;
}

static cp_pool *pool;

static int setup(void **state)
{
    (void)state;
    mu = cp_mutex_new();
    cv = cp_cond_new();
    pool = cp_pool_new(4);
    return pool == NULL;
}

static int teardown(void **state)
{
    (void)state;
    cp_pool_free(pool);
    cp_cond_free(cv);
    cp_mutex_free(mu);
    return 0;
}

/* Decodes the server's raw output frame by frame (the capture, not a
 * client session, opened the streams): HEADERS through an HPACK inflater,
 * DATA payloads collected per stream. */
static void decode_output(client *cl, const uint8_t *b, size_t len)
{
    nghttp2_hd_inflater *inf;
    assert_int_equal(nghttp2_hd_inflate_new(&inf), 0);
    size_t off = 0;
    while (off + 9 <= len) {
        size_t flen = (size_t)b[off] << 16 | (size_t)b[off + 1] << 8 | b[off + 2];
        uint8_t type = b[off + 3], flags = b[off + 4];
        int32_t id = (int32_t)(((uint32_t)b[off + 5] << 24 | (uint32_t)b[off + 6] << 16 |
                                (uint32_t)b[off + 7] << 8 | b[off + 8]) &
                               0x7fffffff);
        const uint8_t *pl = b + off + 9;
        assert_true(off + 9 + flen <= len);
        result *r = id > 0 ? res_of(cl, id) : NULL;
        if (type == NGHTTP2_DATA && r != NULL) {
            memcpy(r->data + r->data_len, pl, flen);
            r->data_len += flen;
        } else if (type == NGHTTP2_HEADERS && r != NULL) {
            assert_true(flags & NGHTTP2_FLAG_END_HEADERS);
            const uint8_t *in = pl;
            size_t inlen = flen;
            for (;;) {
                nghttp2_nv nv;
                int fl = 0;
                ssize_t k = nghttp2_hd_inflate_hd2(inf, &nv, &fl, in, inlen, 1);
                assert_true(k >= 0);
                in += k;
                inlen -= (size_t)k;
                if (fl & NGHTTP2_HD_INFLATE_EMIT)
                    cl_header(NULL, &(nghttp2_frame){.hd.stream_id = id}, nv.name, nv.namelen,
                              nv.value, nv.valuelen, 0, cl);
                if (fl & NGHTTP2_HD_INFLATE_FINAL) {
                    nghttp2_hd_inflate_end_headers(inf);
                    break;
                }
                if (inlen == 0 && k == 0)
                    break;
            }
        } else if (type == NGHTTP2_GOAWAY) {
            cl->goaway = true;
        }
        off += 9 + flen;
    }
    nghttp2_hd_inflate_del(inf);
}

/* Offset of the first GOAWAY frame of a client capture (or its length). */
static size_t goaway_offset(const uint8_t *b, size_t len)
{
    size_t off = 24; /* preface */
    while (off + 9 <= len) {
        if (b[off + 3] == NGHTTP2_GOAWAY)
            return off;
        off += 9 + ((size_t)b[off] << 16 | (size_t)b[off + 1] << 8 | b[off + 2]);
    }
    return len;
}

/* Replays a capture as the server's input and decodes what it answers. */
static void replay(const cp_service *svc, const char *file, client *cl, size_t jobs, cp_conn **out)
{
    cp_conn *c = cp_conn_new(svc, pool, NULL, post, NULL);
    assert_non_null(c);
    memset(cl, 0, sizeof(*cl));
    for (int i = 0; i < 16; i++)
        cl->r[i].grpc_status = -1;
    /* The server speaks first (its SETTINGS), as on a real connection. */
    static uint8_t outb[65536];
    long n = cp_conn_send(c, outb, sizeof(outb));
    assert_true(n > 0);
    size_t len;
    const uint8_t *bytes = read_file(file, &len);
    /* grpc-go's Client.Close() ends with a GOAWAY naming its own last
     * stream; nghttp2 calls that a protocol error and ends the session. A
     * real client sends it only after its answers arrived, so replay it
     * after the calls completed. */
    size_t cut = goaway_offset(bytes, len);
    assert_int_equal(cp_conn_recv(c, bytes, cut), CP_OK);
    complete_jobs(c, jobs);
    n = cp_conn_send(c, outb, sizeof(outb));
    assert_true(n > 0);
    decode_output(cl, outb, (size_t)n);
    cp_conn_recv(c, bytes + cut, len - cut);
    n = cp_conn_send(c, outb, sizeof(outb));
    assert_true(n >= 0);
    decode_output(cl, outb, (size_t)n);
    assert_false(cp_conn_wants_io(c)); /* the session is over */
    *out = c;
}

typedef struct body {
    const uint8_t *p;
    size_t len, off;
} body;

static ssize_t body_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *fl,
                         nghttp2_data_source *src, void *ud)
{
    (void)s;
    (void)id;
    (void)ud;
    body *b = src->ptr;
    size_t n = b->len - b->off < len ? b->len - b->off : len;
    memcpy(buf, b->p + b->off, n);
    b->off += n;
    if (b->off == b->len)
        *fl |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

#define HV(n, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE                 \
    }

static int32_t call(client *cl, const char *path, const char *ctype, const char *extra_name,
                    const char *extra_value, body *b)
{
    nghttp2_nv nv[] = {HV(":method", "POST"),
                       HV(":scheme", "http"),
                       HV(":path", path),
                       HV(":authority", "%5C%5C.%5C%5Cpipe%5C%5Ccsi-proxy-filesystem-v1"),
                       HV("content-type", ctype),
                       HV("te", "trailers"),
                       HV(extra_name ? extra_name : "x-none", extra_value ? extra_value : "")};
    nghttp2_data_provider dp = {.source.ptr = b, .read_callback = body_read};
    return nghttp2_submit_request(cl->h2, NULL, nv, 7, b ? &dp : NULL, NULL);
}

static cp_conn *new_pair(client *cl, const cp_conn_opts *o)
{
    cp_conn *c = cp_conn_new(&fs_svc, pool, o, post, NULL);
    assert_non_null(c);
    client_init(cl);
    return c;
}

static const uint8_t yes_req[] = {0,    0,   0,   0,   22,  0x0a, 20,  'C', ':',
                                  '\\', 'c', 's', 'i', 'p', 'r',  'o', 'x', 'y',
                                  '-',  't', 'e', 's', 't', '\\', 'd', 'i', 'r'};

#endif
