/* test_conn_recv_info.c - what cp_conn_recv_info says a read held, which
 * the pipe transport times its writes by (a read that started a call, or
 * one of control frames with a PING to acknowledge, holds the output for
 * the answer) without parsing HTTP/2 itself. */

#include "test/unit/conn_harness.h"

/* Feeds everything the client has to send as one read. */
static cp_recv_info feed(cp_conn *c, client *cl)
{
    static uint8_t buf[65536];
    size_t len = 0;
    const uint8_t *p;
    ssize_t m;
    while ((m = nghttp2_session_mem_send(cl->h2, &p)) > 0) {
        assert_true(len + (size_t)m <= sizeof(buf));
        memcpy(buf + len, p, (size_t)m);
        len += (size_t)m;
    }
    assert_true(len > 0);
    cp_recv_info info = {99, true};
    assert_int_equal(cp_conn_recv_info(c, buf, len, &info), CP_OK);
    return info;
}

/* The server's output into the client. */
static void to_client(cp_conn *c, client *cl)
{
    uint8_t buf[65536];
    long n = cp_conn_send(c, buf, sizeof(buf));
    assert_true(n >= 0);
    if (n > 0)
        assert_int_equal(nghttp2_session_mem_recv(cl->h2, buf, (size_t)n), n);
}

static void test_recv_info_tells_calls_and_pings(void **state)
{
    (void)state;
    client cl;
    cp_conn *c = new_pair(&cl, NULL);
    cp_recv_info i = feed(c, &cl); /* preface + SETTINGS */
    assert_int_equal(i.calls_started, 0);
    assert_false(i.ping_only); /* no PING among them */
    to_client(c, &cl);
    nghttp2_submit_ping(cl.h2, NGHTTP2_FLAG_NONE, NULL);
    i = feed(c, &cl); /* SETTINGS ACK + PING: what grpc-go sends after an answer */
    assert_int_equal(i.calls_started, 0);
    assert_true(i.ping_only);
    to_client(c, &cl);
    nghttp2_submit_window_update(cl.h2, NGHTTP2_FLAG_NONE, 0, 1000);
    i = feed(c, &cl); /* WINDOW_UPDATE alone: nothing to acknowledge */
    assert_false(i.ping_only);
    body b = {yes_req, sizeof(yes_req), 0};
    nghttp2_submit_ping(cl.h2, NGHTTP2_FLAG_NONE, NULL);
    assert_true(call(&cl, "/v1.Filesystem/PathExists", "application/grpc", NULL, NULL, &b) > 0);
    i = feed(c, &cl); /* PING + a call: the call counts, it is not PING-only */
    assert_int_equal(i.calls_started, 1);
    assert_false(i.ping_only);
    complete_jobs(c, 1);
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recv_info_tells_calls_and_pings),
    };
    return cmocka_run_group_tests_name("conn_recv_info", tests, setup, teardown);
}
