/* test_conn_stall.c - what a client that takes no answers may cost: the
 * concurrent-stream limit the server announces, calls refused while the
 * answers it holds for a client are over the limit (and served again once
 * the client takes them), and a client that reads nothing being cut off.
 * Default limits only (conn.h). */

#include "test/unit/conn_harness.h"

#define CALLS 60 /* more than the default limit of held answers allows */

typedef struct stall_client {
    nghttp2_session *h2;
    int32_t refused[CALLS * 2 + 2]; /* stream id -> RST_STREAM code + 1 */
    bool headers[CALLS * 2 + 2];    /* the answer's headers came */
    bool closed[CALLS * 2 + 2];
} stall_client;

static int sc_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)s;
    stall_client *sc = ud;
    int32_t id = f->hd.stream_id;
    if (id <= 0 || id >= CALLS * 2 + 2)
        return 0;
    if (f->hd.type == NGHTTP2_HEADERS)
        sc->headers[id] = true;
    if (f->hd.type == NGHTTP2_RST_STREAM)
        sc->refused[id] = (int32_t)f->rst_stream.error_code + 1;
    return 0;
}

static int sc_close(nghttp2_session *s, int32_t id, uint32_t err, void *ud)
{
    (void)s;
    (void)err;
    stall_client *sc = ud;
    if (id > 0 && id < CALLS * 2 + 2)
        sc->closed[id] = true;
    return 0;
}

/* A client whose streams open with a zero flow-control window. */
static void sc_init(stall_client *sc, uint32_t window)
{
    memset(sc, 0, sizeof(*sc));
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, sc_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, sc_close);
    nghttp2_option *opt;
    nghttp2_option_new(&opt);
    nghttp2_option_set_peer_max_concurrent_streams(opt, 100000); /* whatever the server says */
    nghttp2_session_client_new2(&sc->h2, cb, sc, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, window}};
    nghttp2_submit_settings(sc->h2, NGHTTP2_FLAG_NONE, iv, 1);
}

static void sc_pump(cp_conn *c, stall_client *sc)
{
    uint8_t buf[65536];
    for (int round = 0; round < 8; round++) {
        long n = cp_conn_send(c, buf, sizeof(buf));
        assert_true(n >= 0);
        if (n > 0)
            assert_int_equal(nghttp2_session_mem_recv(sc->h2, buf, (size_t)n), n);
        const uint8_t *p;
        ssize_t m = nghttp2_session_mem_send(sc->h2, &p);
        if (m > 0)
            assert_int_equal(cp_conn_recv(c, p, (size_t)m), CP_OK);
        if (n == 0 && m <= 0)
            break;
    }
}

static int32_t exists_call(stall_client *sc, body *b)
{
    nghttp2_nv nv[] = {HV(":method", "POST"),
                       HV(":scheme", "http"),
                       HV(":path", "/v1.Filesystem/PathExists"),
                       HV(":authority", "x"),
                       HV("content-type", "application/grpc"),
                       HV("te", "trailers")};
    nghttp2_data_provider dp = {.source.ptr = b, .read_callback = body_read};
    return nghttp2_submit_request(sc->h2, NULL, nv, 6, &dp, NULL);
}

static void test_stream_limit_is_what_clients_use(void **state)
{
    (void)state;
    stall_client sc;
    sc_init(&sc, 65535);
    cp_conn *c = cp_conn_new(&fs_svc, pool, NULL, post, NULL);
    assert_non_null(c);
    sc_pump(c, &sc);
    uint32_t limit =
        nghttp2_session_get_remote_settings(sc.h2, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
    assert_true(limit >= 16 && limit <= 128);
    cp_conn_close(c);
    nghttp2_session_del(sc.h2);
}

/* One call at a time, each answered while the client keeps its window
 * shut: the answers wait here; past the limit a new call is refused
 * (REFUSED_STREAM: not processed, a client may retry it) and starts no
 * job. Once the client opens its window and takes them, calls are served
 * again. */
static void test_calls_refused_while_answers_wait(void **state)
{
    (void)state;
    stall_client sc;
    sc_init(&sc, 0);
    cp_conn *c = cp_conn_new(&fs_svc, pool, NULL, post, NULL);
    assert_non_null(c);
    sc_pump(c, &sc);
    static body b[CALLS + 1];
    int answered = 0, refused = 0;
    for (int i = 0; i < CALLS; i++) {
        b[i] = (body){yes_req, sizeof(yes_req), 0};
        int32_t id = exists_call(&sc, &b[i]);
        assert_true(id > 0);
        sc_pump(c, &sc);
        if (sc.refused[id] != 0) {
            assert_int_equal(sc.refused[id] - 1, NGHTTP2_REFUSED_STREAM);
            assert_false(sc.headers[id]);
            refused++;
            continue;
        }
        complete_jobs(c, 1);
        sc_pump(c, &sc);
        assert_true(sc.headers[id]); /* answered; the message waits for the window */
        assert_false(sc.closed[id]);
        answered++;
    }
    print_message("%d calls answered and held, %d refused\n", answered, refused);
    assert_true(answered >= 8);
    assert_true(refused > 0);
    complete_jobs(c, 0); /* the refused calls started nothing */
    /* The client takes its answers: every held stream ends, and a new
     * call is served. */
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 65535}};
    nghttp2_submit_settings(sc.h2, NGHTTP2_FLAG_NONE, iv, 1);
    sc_pump(c, &sc);
    for (int32_t id = 1; id < CALLS * 2; id += 2)
        assert_true(sc.closed[id]);
    b[CALLS] = (body){yes_req, sizeof(yes_req), 0};
    int32_t id = exists_call(&sc, &b[CALLS]);
    assert_true(id > 0 && id < CALLS * 2 + 2);
    sc_pump(c, &sc);
    complete_jobs(c, 1);
    sc_pump(c, &sc);
    assert_int_equal(sc.refused[id], 0);
    assert_true(sc.headers[id] && sc.closed[id]);
    cp_conn_close(c);
    nghttp2_session_del(sc.h2);
}

/* A client that sends and never reads: each stream it opens past the limit
 * queues a reset for it. The connection is cut off before the queue grows
 * without bound. */
static void test_client_reading_nothing_cut_off(void **state)
{
    (void)state;
    stall_client sc;
    sc_init(&sc, 0);
    cp_conn *c = cp_conn_new(&fs_svc, pool, NULL, post, NULL);
    assert_non_null(c);
    nghttp2_nv nv[] = {HV(":method", "POST"),
                       HV(":scheme", "http"),
                       HV(":path", "/v1.Filesystem/PathExists"),
                       HV(":authority", "x"),
                       HV("content-type", "application/grpc"),
                       HV("te", "trailers")};
    int rc = CP_OK, streams = 0;
    while (rc == CP_OK && streams < 20000) {
        /* HEADERS without END_STREAM and no message: no call starts */
        for (int k = 0; k < 100; k++, streams++)
            assert_true(nghttp2_submit_headers(sc.h2, NGHTTP2_FLAG_NONE, -1, NULL, nv, 6, NULL) >
                        0);
        const uint8_t *p;
        ssize_t m;
        while (rc == CP_OK && (m = nghttp2_session_mem_send(sc.h2, &p)) > 0)
            rc = cp_conn_recv(c, p, (size_t)m);
    }
    print_message("cut off after %d streams\n", streams);
    assert_int_not_equal(rc, CP_OK);
    assert_true(streams <= 5000);
    assert_false(cp_conn_wants_io(c) && cp_conn_inflight(c) > 0);
    cp_conn_close(c);
    nghttp2_session_del(sc.h2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_limit_is_what_clients_use),
        cmocka_unit_test(test_calls_refused_while_answers_wait),
        cmocka_unit_test(test_client_reading_nothing_cut_off),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
