/* test_conn.c - the HTTP/2 + gRPC connection core, driven with the exact
 * bytes real grpc-go csi-proxy clients send (test/captures) and with
 * hand-built malformed requests. The test plays the client with an
 * nghttp2 client session and checks the status and message it gets. */
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
#include "server/conn.h"
#include "server/grpc_wire.h"
#include "server/metrics.h"
#include "server/thread.h"
#include "server/wirecheck.h"

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
    while (n_done < k)
        assert_int_equal(cp_cond_timedwait(cv, mu, 5000), 0);
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

static void test_capture_pathexists_v1(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&fs_svc, "01-filesystem-v1-PathExists.bin", &cl, 1, &c);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_string_equal(cl.r[0].http_status, "200");
    /* 5-byte prefix + PathExistsResponse{exists: true} = 08 01 */
    assert_int_equal(cl.r[0].data_len, 7);
    const uint8_t want[] = {0, 0, 0, 0, 2, 0x08, 0x01};
    assert_memory_equal(cl.r[0].data, want, 7);
    cp_conn_close(c);
}

/* Capture 02: v1beta1, :authority %5C%5C.%5C%5Cpipe%5C%5Ccsi-proxy-filesystem-v1beta1
 * (grpc-go percent-encodes the backslashes), request path + context POD. */
static void test_capture_pathexists_v1beta1(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&beta_svc, "02-filesystem-v1beta1-PathExists.bin", &cl, 1, &c);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_string_equal(cl.r[0].http_status, "200");
    assert_int_equal(cl.r[0].rst, 0);
    /* 5-byte prefix + v1beta1.PathExistsResponse{exists: true} = 10 01 */
    const uint8_t want[] = {0, 0, 0, 0, 2, 0x10, 0x01};
    assert_int_equal(cl.r[0].data_len, sizeof(want));
    assert_memory_equal(cl.r[0].data, want, sizeof(want));
    cp_conn_close(c);
}

/* Capture 09: the pipe dialled with single backslashes, :authority
 * %5C%5C.%5Cpipe%5Ccsi-proxy-filesystem-v1. */
static void test_capture_single_backslash_authority(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&fs_svc, "09-filesystem-v1-single-backslash-PathExists.bin", &cl, 1, &c);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_string_equal(cl.r[0].http_status, "200");
    assert_int_equal(cl.r[0].rst, 0);
    const uint8_t want[] = {0, 0, 0, 0, 2, 0x08, 0x01};
    assert_int_equal(cl.r[0].data_len, sizeof(want));
    assert_memory_equal(cl.r[0].data, want, sizeof(want));
    cp_conn_close(c);
}

static void test_capture_two_calls_with_deadline(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&fs_svc, "08-filesystem-v1-PathExists-deadline-then-PathExists.bin", &cl, 2, &c);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_int_equal(cl.r[1].grpc_status, 0);
    cp_conn_close(c);
}

static void test_capture_unimplemented_group(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&disk_svc, "03-disk-v1-ListDiskIDs.bin", &cl, 0, &c);
    assert_int_equal(cl.r[0].grpc_status, 12);
    assert_non_null(strstr(cl.r[0].message, "ListDiskIDs"));
    cp_conn_close(c);
}

static void test_capture_wrong_pipe(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    /* a disk call sent to the filesystem pipe */
    replay(&fs_svc, "03-disk-v1-ListDiskIDs.bin", &cl, 0, &c);
    assert_int_equal(cl.r[0].grpc_status, 12);
    assert_string_equal(cl.r[0].message, "unknown service v1.Disk");
    cp_conn_close(c);
}

static void test_idle_capture_is_harmless(void **state)
{
    (void)state;
    cp_conn *c = cp_conn_new(&fs_svc, pool, NULL, post, NULL);
    size_t len;
    const uint8_t *b = read_file("01-filesystem-v1-idle.bin", &len);
    assert_int_equal(len, 0);
    assert_int_equal(cp_conn_recv(c, b, 0), CP_OK);
    assert_true(cp_conn_wants_io(c));
    cp_conn_close(c);
}

/* ---- hand-built requests --------------------------------------------- */

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

static void test_handler_error_status_and_message(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    body b = {yes_req, sizeof(yes_req), 0};
    call(&cl, "/v1.Filesystem/Rmdir", "application/grpc", NULL, NULL, &b);
    pump(c, &cl, true);
    complete_jobs(c, 1);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 3);
    assert_string_equal(cl.r[0].message, "path C:\\csiproxy-test\\dir is bad\n%");
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

/* Calls through a connection are counted by method and code; unknown
 * methods are not; a refused caller's connection and calls are. */
static void test_metrics_counted(void **state)
{
    (void)state;
    cp_metrics *m = cp_metrics_new();
    assert_non_null(m);
    assert_int_equal(cp_metrics_add_service(m, &fs_def), 0);
    cp_conn_opts o = {.metrics = m};
    client cl;
    cp_conn *c = new_pair(&cl, &o);
    body b1 = {yes_req, sizeof(yes_req), 0}, b2 = b1, b3 = b1;
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b1);
    call(&cl, "/v1.Filesystem/Rmdir", "application/grpc", NULL, NULL, &b2);
    call(&cl, "/v1.Filesystem/Format", "application/grpc", NULL, NULL, &b3);
    pump(c, &cl, true);
    complete_jobs(c, 2);
    pump(c, &cl, true);
    cp_conn_opts denied = {.metrics = m, .deny_message = "no"};
    client cl2;
    cp_conn *c2 = new_pair(&cl2, &denied);
    body b4 = b1;
    call(&cl2, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b4);
    pump(c2, &cl2, true);
    assert_int_equal(cl2.r[0].grpc_status, 7);
    cp_conn_close(c2);
    size_t len;
    char *t = cp_metrics_render(m, &len);
    assert_non_null(t);
    assert_non_null(
        strstr(t, "\ngrpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"PathExists\","
                  "grpc_service=\"v1.Filesystem\",grpc_type=\"unary\"} 1\n"));
    assert_non_null(strstr(t, "\ngrpc_server_handled_total{grpc_code=\"InvalidArgument\","
                              "grpc_method=\"Rmdir\",grpc_service=\"v1.Filesystem\","
                              "grpc_type=\"unary\"} 1\n"));
    assert_non_null(strstr(t, "\ngrpc_server_started_total{grpc_method=\"Rmdir\","
                              "grpc_service=\"v1.Filesystem\",grpc_type=\"unary\"} 1\n"));
    assert_null(strstr(t, "Format"));
    assert_null(strstr(t, "PermissionDenied"));
    assert_non_null(strstr(t, "\ncsi_proxy_connections_open{group=\"filesystem\"} 1\n"));
    assert_non_null(strstr(t, "\ncsi_proxy_connections_total{group=\"filesystem\"} 2\n"));
    assert_non_null(strstr(t, "\ncsi_proxy_refused_connections_total{group=\"filesystem\"} 1\n"));
    assert_non_null(strstr(t, "\ncsi_proxy_refused_calls_total{group=\"filesystem\"} 1\n"));
    free(t);
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
    nghttp2_session_del(cl2.h2);
    cp_metrics_free(m);
}

static void test_unknown_method(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    body b = {yes_req, sizeof(yes_req), 0};
    call(&cl, "/v1.Filesystem/Format", "application/grpc", NULL, NULL, &b);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 12);
    assert_string_equal(cl.r[0].message, "unknown method Format for service v1.Filesystem");
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_oversized_message(void **state)
{
    (void)state;
    client cl;
    cp_conn_opts o = {.max_recv_msg = 64};
    cp_conn *c = new_pair(&cl, &o);
    static uint8_t big[5 + 100];
    cp_grpc_put_prefix(big, false, 100);
    body b = {big, sizeof(big), 0};
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 8);
    assert_non_null(strstr(cl.r[0].message, "larger than max (100 vs. 64)"));
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_compressed_refused(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    uint8_t m[sizeof(yes_req)];
    memcpy(m, yes_req, sizeof(m));
    m[0] = 1;
    body b = {m, sizeof(m), 0};
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 12);
    assert_non_null(strstr(cl.r[0].message, "compressed"));

    body b2 = {yes_req, sizeof(yes_req), 0};
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", "grpc-encoding", "gzip", &b2);
    pump(c, &cl, true);
    assert_int_equal(cl.r[1].grpc_status, 12);
    assert_non_null(strstr(cl.r[1].message, "gzip"));
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_truncated_and_garbage(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    body b = {yes_req, 10, 0}; /* prefix says 22 bytes, 5 arrive */
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b);
    static const uint8_t garbage[] = {0, 0, 0, 0, 3, 0x0a, 0x7f, 0x41}; /* length 127 > 1 */
    body g = {garbage, sizeof(garbage), 0};
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &g);
    pump(c, &cl, true);
    complete_jobs(c, 0); /* the garbage is refused as it arrives: no job */
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 13);
    assert_non_null(strstr(cl.r[0].message, "truncated"));
    assert_int_equal(cl.r[1].grpc_status, 13);
    assert_non_null(strstr(cl.r[1].message, "unmarshalling"));
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_bad_content_type_and_no_message(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    body b = {yes_req, sizeof(yes_req), 0};
    call(&cl, "/v1.Filesystem/PathExists", "text/plain", NULL, NULL, &b);
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc+proto", NULL, NULL, NULL);
    pump(c, &cl, true);
    assert_string_equal(cl.r[0].http_status, "415");
    assert_int_equal(cl.r[1].grpc_status, 13);
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_deadline_exceeded_and_slow_call_blocks_nothing(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    body slow = {yes_req, sizeof(yes_req), 0};
    body fast = {yes_req, sizeof(yes_req), 0};
    call(&cl, "/v1.Filesystem/Mkdir", "application/grpc", "grpc-timeout", "50m", &slow);
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &fast);
    pump(c, &cl, true);
    int64_t d = cp_conn_next_deadline(c);
    assert_true(d != INT64_MAX);
    /* the fast call finishes while the slow one still runs */
    complete_jobs(c, 1);
    pump(c, &cl, true);
    assert_int_equal(cl.r[1].grpc_status, 0);
    assert_int_equal(cl.r[0].grpc_status, -1);
    usleep(60 * 1000);
    cp_conn_expire(c, cp_now_ms());
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 4);
    complete_jobs(c, 1); /* the late result is dropped */
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 4);
    assert_true(cp_conn_next_deadline(c) == INT64_MAX);
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_denied_caller(void **state)
{
    (void)state;
    client cl;
    cp_conn_opts o = {.deny_message = "caller pid 42 is not allowed to use the filesystem group"};
    cp_conn *c = new_pair(&cl, &o);
    body b = {yes_req, sizeof(yes_req), 0};
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 7);
    assert_non_null(strstr(cl.r[0].message, "not allowed"));
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_close_with_call_in_flight(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    body b = {yes_req, sizeof(yes_req), 0};
    call(&cl, "/v1.Filesystem/Mkdir", "application/grpc", NULL, NULL, &b);
    pump(c, &cl, true);
    assert_int_equal(cp_conn_inflight(c), 1);
    cp_conn_close(c); /* the client went away */
    cp_mutex_lock(mu);
    while (n_done < 1)
        cp_cond_wait(cv, mu);
    n_done = 0;
    cp_mutex_unlock(mu);
    assert_null(cp_job_complete(done[0])); /* frees the connection */
    nghttp2_session_del(cl.h2);
}

static void test_graceful_shutdown(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    body b = {yes_req, sizeof(yes_req), 0};
    call(&cl, "/v1.Filesystem/Mkdir", "application/grpc", NULL, NULL, &b);
    pump(c, &cl, true);
    cp_conn_shutdown(c);
    pump(c, &cl, true);
    assert_true(cl.goaway);
    assert_true(cp_conn_wants_io(c)); /* the call is still running */
    complete_jobs(c, 1);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_false(cp_conn_wants_io(c));
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_bad_preface_closes(void **state)
{
    (void)state;
    cp_conn *c = cp_conn_new(&fs_svc, pool, NULL, post, NULL);
    const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(cp_conn_recv(c, (const uint8_t *)junk, sizeof(junk) - 1) < 0);
    cp_conn_close(c);
}

/* nghttp2's HTTP checks (made by server/h2check.c): a malformed request is
 * reset with PROTOCOL_ERROR (RFC 9113 section 8.1.1) and never reaches a
 * handler. */
static void test_malformed_headers_reset(void **state)
{
    (void)state;
    static const struct {
        const char *path, *authority, *name, *value;
    } bad[] = {
        /* a raw pipe path is allowed, but not with a space or control byte */
        {"/v1.Filesystem/PathExists", "\\\\.\\pipe\\csi proxy", NULL, NULL},
        {"/v1.Filesystem/PathExists", "\\\\.\\pipe\\csi\tproxy", NULL, NULL},
        /* (uppercase names: test/faults; nghttp2's client lowercases them) */
        {"/v1.Filesystem/PathExists", "localhost", "connection", "close"}, /* connection-specific */
        {"/v1.Filesystem/PathExists", "localhost", "transfer-encoding", "chunked"},
        {"/v1.Filesystem/PathExists", "localhost", "te", "gzip"},       /* te other than trailers */
        {"/v1.Filesystem/PathExists", "localhost", "x-a", "a\r\nb: c"}, /* CR LF in a value */
        {"/v1.Filesystem/PathExists", "localhost", "x-a", "a\nb"},
        {"/v1.Filesystem/PathExists", "localhost", "x-bad name", "1"},     /* space in a name */
        {"/v1.Filesystem/PathExists", "localhost", "content-length", "1"}, /* body is longer */
        {"v1.Filesystem/PathExists", "localhost", NULL, NULL},             /* :path without / */
        {"/v1.Filesystem/Path Exists", "localhost", NULL, NULL},           /* space in :path */
        {"/v1.Filesystem/PathExists", "local host", NULL, NULL},           /* space in :authority */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        client cl;
        cp_conn *c = new_pair(&cl, NULL);
        nghttp2_nv nv[8] = {HV(":method", "POST"),
                            HV(":scheme", "http"),
                            HV(":path", bad[i].path),
                            HV(":authority", bad[i].authority),
                            HV("content-type", "application/grpc"),
                            HV("te", "trailers")};
        size_t n = 6;
        if (bad[i].name != NULL)
            nv[n++] = (nghttp2_nv)HV(bad[i].name, bad[i].value);
        body b = {yes_req, sizeof(yes_req), 0};
        nghttp2_data_provider dp = {.source.ptr = &b, .read_callback = body_read};
        assert_int_equal(nghttp2_submit_request(cl.h2, NULL, nv, n, &dp, NULL), 1);
        pump(c, &cl, true);
        if (cl.r[0].rst != NGHTTP2_PROTOCOL_ERROR || cl.r[0].grpc_status != -1)
            fail_msg("case %zu (%s %s %s): rst %u, grpc-status %d", i, bad[i].authority,
                     bad[i].name ? bad[i].name : "", bad[i].path, cl.r[0].rst, cl.r[0].grpc_status);
        assert_true(cl.r[0].closed);
        /* the connection stays usable */
        body ok = {yes_req, sizeof(yes_req), 0};
        call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &ok);
        pump(c, &cl, true);
        complete_jobs(c, 1);
        pump(c, &cl, true);
        assert_int_equal(cl.r[1].grpc_status, 0);
        cp_conn_close(c);
        nghttp2_session_del(cl.h2);
    }
}

/* grpc-go before 1.57 sends the dial target as :authority unencoded: the
 * raw pipe path, with single or doubled backslashes. nghttp2's own check
 * refuses a backslash; server/h2check.c allows exactly this form. */
static void test_raw_backslash_authority_answers_ok(void **state)
{
    (void)state;
    static const char *const raw[] = {
        "\\\\.\\pipe\\csi-proxy-filesystem-v1",
        "\\\\.\\\\pipe\\\\csi-proxy-filesystem-v1",
    };
    for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
        client cl;
        cp_conn *c = new_pair(&cl, NULL);
        nghttp2_nv nv[] = {HV(":method", "POST"),
                           HV(":scheme", "http"),
                           HV(":path", "/v1.Filesystem/PathExists"),
                           HV(":authority", raw[i]),
                           HV("content-type", "application/grpc"),
                           HV("te", "trailers")};
        body b = {yes_req, sizeof(yes_req), 0};
        nghttp2_data_provider dp = {.source.ptr = &b, .read_callback = body_read};
        assert_int_equal(nghttp2_submit_request(cl.h2, NULL, nv, 6, &dp, NULL), 1);
        pump(c, &cl, true);
        if (cl.r[0].rst != 0) /* (nghttp2's own check: PROTOCOL_ERROR) */
            fail_msg("authority %s: reset with %u", raw[i], cl.r[0].rst);
        complete_jobs(c, 1);
        pump(c, &cl, true);
        if (cl.r[0].rst != 0 || cl.r[0].grpc_status != 0)
            fail_msg("authority %s: rst %u, grpc-status %d", raw[i], cl.r[0].rst,
                     cl.r[0].grpc_status);
        const uint8_t want[] = {0, 0, 0, 0, 2, 0x08, 0x01};
        assert_int_equal(cl.r[0].data_len, sizeof(want));
        assert_memory_equal(cl.r[0].data, want, sizeof(want));
        cp_conn_close(c);
        nghttp2_session_del(cl.h2);
    }
}

/* Builds a gRPC message: prefix, then body. */
static size_t grpc_msg(uint8_t *out, const uint8_t *b, size_t n)
{
    cp_grpc_put_prefix(out, false, (uint32_t)n);
    memcpy(out + CP_GRPC_PREFIX, b, n);
    return n + CP_GRPC_PREFIX;
}

/* Unknown fields (what a newer client may send) are dropped as they
 * arrive, so they cost no memory; the call is answered as without them. */
static void test_unknown_fields_ignored(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    const uint8_t *path = yes_req + CP_GRPC_PREFIX;
    size_t path_len = sizeof(yes_req) - CP_GRPC_PREFIX;
    static const uint8_t extra[] = {
        0xc0, 0x3e, 0x96, 0x01,                        /* 1000: varint 150 */
        0xc9, 0x3e, 1,    2,    3,    4,   5, 6, 7, 8, /* 1001: fixed64 */
        0xd5, 0x3e, 1,    2,    3,    4,               /* 1002: fixed32 */
        0xda, 0x3e, 3,    0,    0xff, 'x',             /* 1003: bytes (NUL, not UTF-8) */
        0x1a, 2,    0x08, 0x01,                        /* 3: a nested message */
    };
    static uint8_t body_bytes[3][256], msg[3][300];
    size_t len[3];
    /* before, after, around the known field */
    memcpy(body_bytes[0], extra, sizeof(extra));
    memcpy(body_bytes[0] + sizeof(extra), path, path_len);
    memcpy(body_bytes[1], path, path_len);
    memcpy(body_bytes[1] + path_len, extra, sizeof(extra));
    memcpy(body_bytes[2], extra, sizeof(extra));
    memcpy(body_bytes[2] + sizeof(extra), path, path_len);
    memcpy(body_bytes[2] + sizeof(extra) + path_len, extra, sizeof(extra));
    size_t blen[3] = {sizeof(extra) + path_len, sizeof(extra) + path_len,
                      2 * sizeof(extra) + path_len};
    body b[3];
    for (int i = 0; i < 3; i++) {
        len[i] = grpc_msg(msg[i], body_bytes[i], blen[i]);
        b[i] = (body){msg[i], len[i], 0};
        call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b[i]);
        pump(c, &cl, true);
    }
    complete_jobs(c, 3);
    pump(c, &cl, true);
    const uint8_t want[] = {0, 0, 0, 0, 2, 0x08, 0x01};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(cl.r[i].grpc_status, 0);
        assert_int_equal(cl.r[i].data_len, sizeof(want));
        assert_memory_equal(cl.r[i].data, want, sizeof(want));
    }
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

/* A known field repeated past the limit: RESOURCE_EXHAUSTED naming the
 * method and the limit, as soon as the limit is passed. 2000 unknown
 * fields are fine. */
static void test_field_limit(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    static uint8_t rep_body[2 * (CP_WIRE_MAX_FIELDS + 1)], unk_body[3 * 2000 + 32];
    static uint8_t m1[sizeof(rep_body) + 5], m2[sizeof(unk_body) + 5];
    for (size_t i = 0; i < CP_WIRE_MAX_FIELDS + 1; i++) {
        rep_body[2 * i] = 0x0a; /* path = "" */
        rep_body[2 * i + 1] = 0;
    }
    size_t n = 0;
    for (int i = 0; i < 2000; i++) {
        unk_body[n++] = 0xc2; /* field 1000, empty */
        unk_body[n++] = 0x3e;
        unk_body[n++] = 0;
    }
    memcpy(unk_body + n, yes_req + CP_GRPC_PREFIX, sizeof(yes_req) - CP_GRPC_PREFIX);
    n += sizeof(yes_req) - CP_GRPC_PREFIX;
    body b1 = {m1, grpc_msg(m1, rep_body, sizeof(rep_body)), 0};
    body b2 = {m2, grpc_msg(m2, unk_body, n), 0};
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b1);
    pump(c, &cl, true);
    call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b2);
    pump(c, &cl, true);
    complete_jobs(c, 1);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 8);
    assert_string_equal(cl.r[0].message,
                        "/v1.Filesystem/PathExists: the request message has more than 1000 "
                        "fields, the limit for one request (each decoded field costs memory; "
                        "unknown top-level fields are ignored and not counted)");
    assert_int_equal(cl.r[1].grpc_status, 0);
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

static void test_grpc_wire_helpers(void **state)
{
    (void)state;
    int64_t ms;
    assert_int_equal(cp_grpc_parse_timeout("9996743u", 8, &ms), 0);
    assert_int_equal(ms, 9997);
    assert_int_equal(cp_grpc_parse_timeout("10S", 3, &ms), 0);
    assert_int_equal(ms, 10000);
    assert_int_equal(cp_grpc_parse_timeout("1H", 2, &ms), 0);
    assert_int_equal(ms, 3600000);
    assert_int_equal(cp_grpc_parse_timeout("123456789S", 10, &ms), -1);
    assert_int_equal(cp_grpc_parse_timeout("12x", 3, &ms), -1);
    assert_int_equal(cp_grpc_parse_timeout("S", 1, &ms), -1);
    assert_true(cp_grpc_content_type_ok("application/grpc", 16));
    assert_true(cp_grpc_content_type_ok("application/grpc+proto", 22));
    assert_false(cp_grpc_content_type_ok("application/grpcx", 17));
    assert_false(cp_grpc_content_type_ok("application/json", 16));
    char out[64];
    cp_grpc_percent_encode("a%b\n\xc3\xa9", out, sizeof(out));
    assert_string_equal(out, "a%25b%0A%C3%A9");
    size_t n = cp_grpc_percent_decode(out, strlen(out));
    assert_int_equal(n, 6);
    assert_memory_equal(out, "a%b\n\xc3\xa9", 6);
    /* an HTTP/2 field value may not begin or end with a space */
    cp_grpc_percent_encode(" path: ", out, sizeof(out));
    assert_string_equal(out, "%20path:%20");
    cp_grpc_percent_encode(" ", out, sizeof(out));
    assert_string_equal(out, "%20");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_pathexists_v1),
        cmocka_unit_test(test_capture_pathexists_v1beta1),
        cmocka_unit_test(test_capture_single_backslash_authority),
        cmocka_unit_test(test_raw_backslash_authority_answers_ok),
        cmocka_unit_test(test_capture_two_calls_with_deadline),
        cmocka_unit_test(test_capture_unimplemented_group),
        cmocka_unit_test(test_capture_wrong_pipe),
        cmocka_unit_test(test_idle_capture_is_harmless),
        cmocka_unit_test(test_handler_error_status_and_message),
        cmocka_unit_test(test_unknown_method),
        cmocka_unit_test(test_metrics_counted),
        cmocka_unit_test(test_oversized_message),
        cmocka_unit_test(test_compressed_refused),
        cmocka_unit_test(test_truncated_and_garbage),
        cmocka_unit_test(test_bad_content_type_and_no_message),
        cmocka_unit_test(test_deadline_exceeded_and_slow_call_blocks_nothing),
        cmocka_unit_test(test_denied_caller),
        cmocka_unit_test(test_close_with_call_in_flight),
        cmocka_unit_test(test_graceful_shutdown),
        cmocka_unit_test(test_bad_preface_closes),
        cmocka_unit_test(test_malformed_headers_reset),
        cmocka_unit_test(test_unknown_fields_ignored),
        cmocka_unit_test(test_field_limit),
        cmocka_unit_test(test_grpc_wire_helpers),
    };
    return cmocka_run_group_tests_name("conn", tests, setup, teardown);
}
