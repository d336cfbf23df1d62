/* test_conn_health.c - the standard health service's calls in the
 * grpc_server_* metrics, counted as go-grpc-middleware's prometheus
 * interceptors count a grpc-go health server on the same server: Check and
 * List as unary calls; Watch as a server stream, started once, one sent
 * message per status sent, handled once when the stream ends (OK when the
 * server ends it, Canceled when the client leaves, its deadline passes or
 * its connection closes). A refused caller's health calls are not
 * counted. */

#include "test/unit/conn_harness.h"

#include "dispatch/health.h"

/* HealthCheckRequest{} (service "": the pipe as a whole). */
static const uint8_t empty_req[] = {0, 0, 0, 0, 0};

static char *scrape(cp_metrics *m)
{
    size_t len;
    char *t = cp_metrics_render(m, &len);
    assert_non_null(t);
    return t;
}

/* The sample "name{labels} value" is in t. */
static void has(const char *t, const char *sample)
{
    char want[512];
    snprintf(want, sizeof(want), "\n%s\n", sample);
    if (strstr(t, want) == NULL)
        fail_msg("no \"%s\" in:\n%s", sample, t);
}

#define HL(method, type)                                                                           \
    "grpc_method=\"" method "\",grpc_service=\"grpc.health.v1.Health\",grpc_type=\"" type "\"}"

static cp_metrics *new_registry(void)
{
    cp_metrics *m = cp_metrics_new();
    assert_non_null(m);
    assert_int_equal(cp_metrics_add_service(m, &fs_def), 0);
    assert_int_equal(cp_metrics_add_shared_service(m, &cp_health_def), 0);
    return m;
}

static void test_health_check_counted_as_unary(void **state)
{
    (void)state;
    cp_metrics *m = new_registry();
    cp_conn_opts o = {.metrics = m};
    client cl;
    cp_conn *c = new_pair(&cl, &o);
    body b1 = {empty_req, sizeof(empty_req), 0}, b2 = b1, b3 = b1;
    call(&cl, "/grpc.health.v1.Health/Check", "application/grpc", NULL, NULL, &b1);
    call(&cl, "/grpc.health.v1.Health/Check", "application/grpc", NULL, NULL, &b2);
    call(&cl, "/grpc.health.v1.Health/List", "application/grpc", NULL, NULL, &b3);
    pump(c, &cl, true);
    pump(c, &cl, true); /* three requests outlast one pump's rounds */
    complete_jobs(c, 3);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_int_equal(cl.r[2].grpc_status, 0);
    char *t = scrape(m);
    has(t, "grpc_server_started_total{" HL("Check", "unary") " 2");
    has(t, "grpc_server_handled_total{grpc_code=\"OK\"," HL("Check", "unary") " 2");
    has(t, "grpc_server_msg_received_total{" HL("Check", "unary") " 2");
    has(t, "grpc_server_msg_sent_total{" HL("Check", "unary") " 2");
    has(t, "grpc_server_handling_seconds_count{" HL("Check", "unary") " 2");
    has(t, "grpc_server_handled_total{grpc_code=\"OK\"," HL("List", "unary") " 1");
    /* not under the pipe's own service; the health service has no pipes */
    assert_null(strstr(t, "grpc_service=\"v1.Filesystem\""));
    assert_null(strstr(t, "group=\"health\""));
    has(t, "csi_proxy_connections_total{group=\"filesystem\"} 1");
    free(t);
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
    cp_metrics_free(m);
}

/* A Watch the server ends (drain: NOT_SERVING, then OK) and one the client
 * resets: each started once, one message sent per status, handled once. */
static void test_health_watch_counted_as_server_stream(void **state)
{
    (void)state;
    cp_metrics *m = new_registry();
    cp_conn_opts o = {.metrics = m};
    client cl;
    cp_conn *c = new_pair(&cl, &o);
    body b1 = {empty_req, sizeof(empty_req), 0}, b2 = b1;
    call(&cl, "/grpc.health.v1.Health/Watch", "application/grpc", NULL, NULL, &b1);
    int32_t left = call(&cl, "/grpc.health.v1.Health/Watch", "application/grpc", NULL, NULL, &b2);
    pump(c, &cl, true);
    complete_jobs(c, 2);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].data_len, 7); /* SERVING */
    assert_int_equal(cl.r[1].data_len, 7);
    char *t = scrape(m);
    has(t, "grpc_server_started_total{" HL("Watch", "server_stream") " 2");
    has(t, "grpc_server_msg_received_total{" HL("Watch", "server_stream") " 2");
    has(t, "grpc_server_msg_sent_total{" HL("Watch", "server_stream") " 2");
    assert_null(strstr(t, "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Watch\""));
    free(t);

    /* the probes of open Watches are not calls of their own */
    cp_conn_expire(c, cp_now_ms() + CP_HEALTH_WATCH_MS + 1);
    complete_jobs(c, 2);
    pump(c, &cl, true);

    nghttp2_submit_rst_stream(cl.h2, NGHTTP2_FLAG_NONE, left, NGHTTP2_CANCEL);
    pump(c, &cl, true);
    cp_conn_shutdown(c); /* the other hears NOT_SERVING, then OK */
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_int_equal(cl.r[0].data_len, 14);
    t = scrape(m);
    has(t, "grpc_server_started_total{" HL("Watch", "server_stream") " 2");
    has(t, "grpc_server_msg_received_total{" HL("Watch", "server_stream") " 2");
    has(t, "grpc_server_msg_sent_total{" HL("Watch", "server_stream") " 3");
    has(t, "grpc_server_handled_total{grpc_code=\"OK\"," HL("Watch", "server_stream") " 1");
    has(t, "grpc_server_handled_total{grpc_code=\"Canceled\"," HL("Watch", "server_stream") " 1");
    has(t, "grpc_server_handling_seconds_count{" HL("Watch", "server_stream") " 2");
    free(t);
    cp_conn_close(c);
    nghttp2_session_del(cl.h2);
    cp_metrics_free(m);
}

/* A Watch still open when its connection closes, and one whose deadline
 * passes: the handler of a grpc-go health server sees its stream's context
 * end and returns Canceled. */
static void test_health_watch_closed_or_expired_is_canceled(void **state)
{
    (void)state;
    cp_metrics *m = new_registry();
    cp_conn_opts o = {.metrics = m};
    client cl;
    cp_conn *c = new_pair(&cl, &o);
    body b1 = {empty_req, sizeof(empty_req), 0}, b2 = b1;
    call(&cl, "/grpc.health.v1.Health/Watch", "application/grpc", NULL, NULL, &b1);
    call(&cl, "/grpc.health.v1.Health/Watch", "application/grpc", "grpc-timeout", "50m", &b2);
    pump(c, &cl, true);
    complete_jobs(c, 2);
    pump(c, &cl, true);
    usleep(60 * 1000);
    cp_conn_expire(c, cp_now_ms());
    pump(c, &cl, true);
    assert_int_equal(cl.r[1].grpc_status, 4); /* the client hears DEADLINE_EXCEEDED */
    char *t = scrape(m);
    has(t, "grpc_server_handled_total{grpc_code=\"Canceled\"," HL("Watch", "server_stream") " 1");
    free(t);
    cp_conn_close(c); /* the client went away */
    t = scrape(m);
    has(t, "grpc_server_started_total{" HL("Watch", "server_stream") " 2");
    has(t, "grpc_server_handled_total{grpc_code=\"Canceled\"," HL("Watch", "server_stream") " 2");
    has(t, "grpc_server_handling_seconds_count{" HL("Watch", "server_stream") " 2");
    free(t);
    nghttp2_session_del(cl.h2);
    cp_metrics_free(m);
}

/* A refused caller's health calls are refused calls, not health calls. */
static void test_health_refused_caller_not_counted(void **state)
{
    (void)state;
    cp_metrics *m = new_registry();
    cp_conn_opts o = {.metrics = m, .deny_message = "no"};
    client cl;
    cp_conn *c = new_pair(&cl, &o);
    body b1 = {empty_req, sizeof(empty_req), 0}, b2 = b1;
    call(&cl, "/grpc.health.v1.Health/Check", "application/grpc", NULL, NULL, &b1);
    call(&cl, "/grpc.health.v1.Health/Watch", "application/grpc", NULL, NULL, &b2);
    pump(c, &cl, true);
    assert_int_equal(cl.r[0].grpc_status, 7);
    assert_int_equal(cl.r[1].grpc_status, 7);
    cp_conn_close(c);
    char *t = scrape(m);
    assert_null(strstr(t, "grpc.health.v1.Health"));
    has(t, "csi_proxy_refused_calls_total{group=\"filesystem\"} 2");
    free(t);
    nghttp2_session_del(cl.h2);
    cp_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_check_counted_as_unary),
        cmocka_unit_test(test_health_watch_counted_as_server_stream),
        cmocka_unit_test(test_health_watch_closed_or_expired_is_canceled),
        cmocka_unit_test(test_health_refused_caller_not_counted),
    };
    return cmocka_run_group_tests_name("conn-health", tests, setup, teardown);
}
