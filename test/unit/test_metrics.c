/* test_metrics.c - the metrics registry: counting, the histogram's
 * buckets, rendering in the text format 0.0.4 (HELP/TYPE, escaping, order),
 * atomic counting from many threads, -metrics-bind-address, and the
 * families the audit, the path rules and the disk locks feed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "groups/common/disklocks.h"
#include "groups/common/pathrules.h"
#include "dispatch/call.h"
#include "metrics/metrics.h"
#include "metrics/metrics_addr.h"
#include "base/thread.h"
#include "security/audit.h"

static int h_none(cp_call *call, const void *req, void *resp)
{
    (void)call;
    (void)req;
    (void)resp;
    return CP_OK;
}

static const cp_method methods[] = {
    {"Alpha", NULL, NULL, NULL, NULL, h_none, NULL, NULL, 0},
    {"Beta", NULL, NULL, NULL, NULL, h_none, NULL, NULL, 0},
};
static const cp_service_def v1 = {"fake", "v1", "v1.Fake", NULL, methods, 2, 0, 0};
static const cp_service_def v2 = {"fake", "v2", "v2.Fake", NULL, methods, 2, 0, 0};
static const cp_service_def other = {"other", "v1", "v1.Other", NULL, methods, 2, 0, 0};

static char *render(cp_metrics *m)
{
    size_t len = 0;
    char *t = cp_metrics_render(m, &len);
    assert_non_null(t);
    assert_int_equal(strlen(t), len);
    return t;
}

static void has(const char *text, const char *line)
{
    char want[1024];
    snprintf(want, sizeof(want), "\n%s\n", line);
    if (strstr(text, want) == NULL)
        fail_msg("missing line: %s\nin:\n%s", line, text);
}

#define SERIES(fam, meth, svc)                                                                     \
    fam "{grpc_method=\"" meth "\",grpc_service=\"" svc "\",grpc_type=\"unary\""

static void test_counts_and_histogram(void **state)
{
    (void)state;
    cp_metrics *m = cp_metrics_new();
    assert_int_equal(cp_metrics_add_service(m, &v1), 0);
    assert_int_equal(cp_metrics_add_service(m, &v1), 0); /* twice: nothing */
    const cp_method *a = &methods[0];
    for (int i = 0; i < 4; i++)
        cp_metrics_call_started(m, &v1, a);
    cp_metrics_call_handled(m, &v1, a, CP_OK, 500);                   /* 0.0005 s: le 0.001 */
    cp_metrics_call_handled(m, &v1, a, CP_OK, 1000);                  /* on the bound: le 0.001 */
    cp_metrics_call_handled(m, &v1, a, CP_E_INVALID_ARGUMENT, 50000); /* le 0.1 */
    cp_metrics_call_handled(m, &v1, a, CP_E_NOMEM, 200000000);        /* 200 s: +Inf only */
    /* not known: not counted, and no crash */
    cp_metrics_call_started(m, &v2, a);
    cp_metrics_call_started(NULL, &v1, a);
    cp_metrics_call_handled(NULL, &v1, a, CP_OK, 1);
    char *t = render(m);
    has(t, SERIES("grpc_server_started_total", "Alpha", "v1.Fake") "} 4");
    has(t, SERIES("grpc_server_msg_received_total", "Alpha", "v1.Fake") "} 4");
    has(t, SERIES("grpc_server_msg_sent_total", "Alpha", "v1.Fake") "} 4");
    has(t, "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Alpha\",grpc_service="
           "\"v1.Fake\",grpc_type=\"unary\"} 2");
    has(t, "grpc_server_handled_total{grpc_code=\"InvalidArgument\",grpc_method=\"Alpha\","
           "grpc_service=\"v1.Fake\",grpc_type=\"unary\"} 1");
    /* CP_E_NOMEM goes on the wire as RESOURCE_EXHAUSTED */
    has(t, "grpc_server_handled_total{grpc_code=\"ResourceExhausted\",grpc_method=\"Alpha\","
           "grpc_service=\"v1.Fake\",grpc_type=\"unary\"} 1");
    has(t, SERIES("grpc_server_handling_seconds_bucket", "Alpha", "v1.Fake") ",le=\"0.001\"} 2");
    has(t, SERIES("grpc_server_handling_seconds_bucket", "Alpha", "v1.Fake") ",le=\"0.01\"} 2");
    has(t, SERIES("grpc_server_handling_seconds_bucket", "Alpha", "v1.Fake") ",le=\"0.1\"} 3");
    has(t, SERIES("grpc_server_handling_seconds_bucket", "Alpha", "v1.Fake") ",le=\"120\"} 3");
    has(t, SERIES("grpc_server_handling_seconds_bucket", "Alpha", "v1.Fake") ",le=\"+Inf\"} 4");
    has(t, SERIES("grpc_server_handling_seconds_sum", "Alpha", "v1.Fake") "} 200.051500");
    has(t, SERIES("grpc_server_handling_seconds_count", "Alpha", "v1.Fake") "} 4");
    /* upstream's 14 bounds, in order */
    const char *p = t;
    const char *bounds[] = {"0.001", "0.01", "0.1", "0.3", "0.6", "1",   "3",   "6",
                            "9",     "20",   "30",  "60",  "90",  "120", "+Inf"};
    for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
        char le[32];
        snprintf(le, sizeof(le), "le=\"%s\"}", bounds[i]);
        p = strstr(p, le);
        assert_non_null(p);
    }
    /* a method never called has no series, as upstream */
    assert_null(strstr(t, "Beta"));
    assert_null(strstr(t, "v2.Fake"));
    free(t);
    cp_metrics_free(m);
}

static void test_help_type_and_order(void **state)
{
    (void)state;
    cp_metrics *m = cp_metrics_new();
    char *t = render(m);
    const char *fams[] = {"csi_proxy_connections_open",     "csi_proxy_connections_total",
                          "csi_proxy_refused_calls_total",  "csi_proxy_refused_connections_total",
                          "grpc_server_handled_total",      "grpc_server_handling_seconds",
                          "grpc_server_msg_received_total", "grpc_server_msg_sent_total",
                          "grpc_server_started_total"};
    const char *types[] = {"gauge",     "counter", "counter", "counter", "counter",
                           "histogram", "counter", "counter", "counter"};
    const char *prev = t;
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        char help[128], type[128];
        snprintf(help, sizeof(help), "# HELP %s ", fams[i]);
        snprintf(type, sizeof(type), "\n# TYPE %s %s\n", fams[i], types[i]);
        const char *h = strstr(t, help), *ty = strstr(t, type);
        assert_non_null(h);
        assert_non_null(ty);
        assert_true(h < ty);
        assert_true(h >= prev); /* sorted by name */
        prev = ty;
    }
    assert_string_equal(strrchr(t, '\n'), "\n"); /* ends with a newline */
    free(t);
    cp_metrics_free(m);
}

static void emit_odd(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx)
{
    (void)ctx;
    emit(emit_ctx, "a\"b\\c\nd", 1.5);
    emit(emit_ctx, "plain", 3);
}

static void test_escaping(void **state)
{
    (void)state;
    cp_metrics *m = cp_metrics_new();
    assert_int_equal(cp_metrics_add_collector(m, "aaa_odd", "back\\slash\nnewline \"quoted\"",
                                              CP_METRICS_GAUGE, "v", emit_odd, NULL),
                     0);
    char *t = render(m);
    /* HELP escapes \ and newline only; label values also " */
    assert_non_null(strstr(t, "# HELP aaa_odd back\\\\slash\\nnewline \"quoted\"\n"));
    has(t, "aaa_odd{v=\"a\\\"b\\\\c\\nd\"} 1.5");
    has(t, "aaa_odd{v=\"plain\"} 3");
    assert_true(strncmp(t, "# HELP aaa_odd", 14) == 0); /* sorted first */
    free(t);
    cp_metrics_free(m);
}

static void test_connections_by_group(void **state)
{
    (void)state;
    cp_metrics *m = cp_metrics_new();
    assert_int_equal(cp_metrics_add_service(m, &v1), 0);
    assert_int_equal(cp_metrics_add_service(m, &v2), 0);
    assert_int_equal(cp_metrics_add_service(m, &other), 0);
    cp_metrics_conn_opened(m, &v1, false);
    cp_metrics_conn_opened(m, &v2, true);
    cp_metrics_conn_opened(m, &v2, false);
    cp_metrics_conn_closed(m, &v2);
    cp_metrics_call_refused(m, &v2);
    cp_metrics_call_refused(m, &v2);
    char *t = render(m);
    has(t, "csi_proxy_connections_open{group=\"fake\"} 2");
    has(t, "csi_proxy_connections_total{group=\"fake\"} 3");
    has(t, "csi_proxy_refused_connections_total{group=\"fake\"} 1");
    has(t, "csi_proxy_refused_calls_total{group=\"fake\"} 2");
    has(t, "csi_proxy_connections_open{group=\"other\"} 0");
    /* one sample per group, not per version */
    const char *first = strstr(t, "csi_proxy_connections_open{group=\"fake\"}");
    assert_null(strstr(first + 1, "csi_proxy_connections_open{group=\"fake\"}"));
    free(t);
    cp_metrics_free(m);
}

/* ---- many threads at once: no count lost ---------------------------- */

#define THREADS 4
#define PER_THREAD 500000

static cp_metrics *shared;

static void hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        cp_metrics_call_started(shared, &v1, &methods[1]);
        cp_metrics_call_handled(shared, &v1, &methods[1], CP_OK, 2);
    }
}

static void test_threads(void **state)
{
    (void)state;
    shared = cp_metrics_new();
    assert_int_equal(cp_metrics_add_service(shared, &v1), 0);
    cp_thread *t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_non_null(t[i] = cp_thread_start(hammer, NULL));
    for (int i = 0; i < THREADS; i++)
        cp_thread_join(t[i]);
    char *text = render(shared);
    char line[256];
    snprintf(line, sizeof(line), SERIES("grpc_server_started_total", "Beta", "v1.Fake") "} %d",
             THREADS * PER_THREAD);
    has(text, line);
    snprintf(line, sizeof(line),
             SERIES("grpc_server_handling_seconds_count", "Beta", "v1.Fake") "} %d",
             THREADS * PER_THREAD);
    has(text, line);
    snprintf(line, sizeof(line),
             SERIES("grpc_server_handling_seconds_sum", "Beta", "v1.Fake") "} %d.%06d",
             THREADS * PER_THREAD * 2 / 1000000, THREADS * PER_THREAD * 2 % 1000000);
    has(text, line);
    free(text);
    cp_metrics_free(shared);
}

static void test_code_names(void **state)
{
    (void)state;
    /* google.golang.org/grpc/codes, Code.String() */
    const char *want[] = {
        "OK",       "Canceled",       "Unknown",          "InvalidArgument",   "DeadlineExceeded",
        "NotFound", "AlreadyExists",  "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
        "Aborted",  "OutOfRange",     "Unimplemented",    "Internal",          "Unavailable",
        "DataLoss", "Unauthenticated"};
    for (int i = 0; i < 17; i++)
        assert_string_equal(cp_metrics_code_name(i), want[i]);
    assert_string_equal(cp_metrics_code_name(17), "Unknown");
    assert_string_equal(cp_metrics_code_name(-1), "Unknown");
}

/* ---- -metrics-bind-address ------------------------------------------- */

static void good_addr(const char *text, const char *url, bool all)
{
    cp_metrics_addr a;
    cp_error e = {0};
    if (cp_metrics_addr_parse(text, &a, &e) != CP_OK)
        fail_msg("%s refused: %s", text, e.msg);
    char buf[96];
    cp_metrics_addr_url(&a, buf, sizeof(buf));
    assert_string_equal(buf, url);
    assert_int_equal(a.all, all);
}

static void bad_addr(const char *text, const char *why)
{
    cp_metrics_addr a;
    cp_error e = {0};
    assert_int_equal(cp_metrics_addr_parse(text, &a, &e), CP_E_INVALID_ARGUMENT);
    char head[160];
    snprintf(head, sizeof(head), "invalid -metrics-bind-address \"%s\": ", text);
    if (strncmp(e.msg, head, strlen(head)) != 0 || strstr(e.msg, why) == NULL)
        fail_msg("%s: %s", text, e.msg);
}

static void test_bind_address(void **state)
{
    (void)state;
    good_addr(":8888", "http://127.0.0.1:8888/", false);
    good_addr("localhost:8888", "http://127.0.0.1:8888/", false);
    good_addr("127.0.0.1:9090", "http://127.0.0.1:9090/", false);
    good_addr("10.1.2.3:65535", "http://10.1.2.3:65535/", false);
    good_addr("0.0.0.0:8888", "http://+:8888/", true);
    good_addr("[::1]:8888", "http://[::1]:8888/", false);
    good_addr("[::]:8888", "http://+:8888/", true);
    bad_addr("8888", "missing port");
    bad_addr("localhost", "missing port");
    bad_addr(":0", "from 1 to 65535");
    bad_addr(":65536", "from 1 to 65535");
    bad_addr(":http", "from 1 to 65535");
    bad_addr(":", "from 1 to 65535");
    bad_addr("example.com:8888", "must be an IP address");
    bad_addr("256.1.1.1:8888", "must be an IP address");
    bad_addr("1.2.3:8888", "must be an IP address");
    bad_addr("01.2.3.4:8888", "must be an IP address");
    bad_addr("::1:8888", "too many colons");
    bad_addr("[fe80::1]:8888", "only [::1]");
    bad_addr("[::1]8888", "missing port");
    bad_addr("[::1:8888", "missing ']'");

    cp_metrics_addr a;
    cp_error e = {0};
    static const uint8_t lo[4] = {127, 0, 0, 1}, other4[4] = {10, 0, 0, 1};
    static const uint8_t lo6[16] = {[15] = 1};
    assert_int_equal(cp_metrics_addr_parse(":1", &a, &e), CP_OK);
    assert_true(cp_metrics_addr_accepts(&a, 4, lo));
    assert_false(cp_metrics_addr_accepts(&a, 4, other4));
    assert_false(cp_metrics_addr_accepts(&a, 6, lo6));
    assert_int_equal(cp_metrics_addr_parse("[::1]:1", &a, &e), CP_OK);
    assert_true(cp_metrics_addr_accepts(&a, 6, lo6));
    assert_false(cp_metrics_addr_accepts(&a, 4, lo));
    assert_int_equal(cp_metrics_addr_parse("0.0.0.0:1", &a, &e), CP_OK);
    assert_true(cp_metrics_addr_accepts(&a, 4, other4));
}

/* upstream's CI form, localhost:PORT: both loopback addresses, every
 * loopback spelling of the Host, nothing else; one UrlPrefix for all. */
static void test_bind_address_hosts(void **state)
{
    (void)state;
    cp_metrics_addr a;
    cp_error e = {0};
    char buf[96];
    static const uint8_t lo[4] = {127, 0, 0, 1}, lo2[4] = {127, 0, 0, 2}, other4[4] = {10, 0, 0, 1};
    static const uint8_t lo6[16] = {[15] = 1}, other6[16] = {0xfe, 0x80, [15] = 1};
    static const uint8_t mapped_lo[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};
    static const uint8_t mapped_other[16] = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 1};

    assert_int_equal(cp_metrics_addr_parse("localhost:8888", &a, &e), CP_OK);
    assert_true(a.loopback && a.localhost);
    assert_true(cp_metrics_addr_accepts(&a, 4, lo));
    assert_true(cp_metrics_addr_accepts(&a, 6, lo6));
    assert_true(cp_metrics_addr_accepts(&a, 6, mapped_lo));
    assert_false(cp_metrics_addr_accepts(&a, 4, lo2));
    assert_false(cp_metrics_addr_accepts(&a, 4, other4));
    assert_false(cp_metrics_addr_accepts(&a, 6, other6));
    assert_false(cp_metrics_addr_accepts(&a, 6, mapped_other));
    cp_metrics_addr_name(&a, buf, sizeof(buf));
    assert_string_equal(buf, "http://localhost:8888/");
    cp_metrics_addr_prefix(&a, buf, sizeof(buf));
    assert_string_equal(buf, "http://+:8888/");

    static const char *const good[] = {"localhost:8888", "127.0.0.1:8888", "[::1]:8888",
                                       "LocalHost:8888", "LOCALHOST",      "localhost",
                                       "127.0.0.1",      "[::1]"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (!cp_metrics_addr_host_ok(&a, good[i], strlen(good[i])))
            fail_msg("Host %s refused", good[i]);
    static const char *const refused[] = {"example.com:8888",
                                          "10.1.2.3:8888",
                                          "127.0.0.2:8888",
                                          "localhost.evil.example:8888",
                                          "localhost:8889",
                                          "localhost:",
                                          "localhost:0",
                                          "localhost:88888",
                                          "[::1",
                                          "[::1]:",
                                          "::1",
                                          "",
                                          "localhostx",
                                          "127.0.0.1.",
                                          "[::2]:8888",
                                          "localhost:8888x"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        if (cp_metrics_addr_host_ok(&a, refused[i], strlen(refused[i])))
            fail_msg("Host \"%s\" served", refused[i]);
    /* the length given counts, not a terminator */
    assert_true(cp_metrics_addr_host_ok(&a, "localhost:8888/metrics", 14));

    /* ":PORT", 127.0.0.1 and [::1] are loopback too; the name is the URL */
    assert_int_equal(cp_metrics_addr_parse(":8888", &a, &e), CP_OK);
    assert_true(a.loopback && !a.localhost);
    assert_false(cp_metrics_addr_host_ok(&a, "example.com:8888", 16));
    cp_metrics_addr_name(&a, buf, sizeof(buf));
    assert_string_equal(buf, "http://127.0.0.1:8888/");
    assert_int_equal(cp_metrics_addr_parse("127.0.0.1:8888", &a, &e), CP_OK);
    assert_true(a.loopback && cp_metrics_addr_host_ok(&a, "localhost:8888", 14));
    assert_int_equal(cp_metrics_addr_parse("[::1]:8888", &a, &e), CP_OK);
    assert_true(a.loopback && cp_metrics_addr_host_ok(&a, "localhost:8888", 14));
    assert_false(cp_metrics_addr_accepts(&a, 4, lo));

    /* another interface, or every one: any Host, as http.sys's IP-bound
     * and strong wildcards route it */
    assert_int_equal(cp_metrics_addr_parse("10.1.2.3:9090", &a, &e), CP_OK);
    assert_false(a.loopback);
    assert_true(cp_metrics_addr_host_ok(&a, "node-7:9090", 11));
    cp_metrics_addr_prefix(&a, buf, sizeof(buf));
    assert_string_equal(buf, "http://+:9090/");
    assert_int_equal(cp_metrics_addr_parse("0.0.0.0:9090", &a, &e), CP_OK);
    assert_false(a.loopback);
    assert_true(cp_metrics_addr_host_ok(&a, "example.com", 11));
}

/* ---- what the groups and the audit feed ------------------------------ */

typedef struct got {
    char labels[8][32];
    double values[8];
    int n;
} got;

static void collect_into(void *ctx, const char *label, double value)
{
    got *g = ctx;
    snprintf(g->labels[g->n], sizeof(g->labels[0]), "%s", label != NULL ? label : "");
    g->values[g->n++] = value;
}

static void test_path_refusals_counted(void **state)
{
    (void)state;
    cp_pathrules *r = NULL;
    cp_error e = {0};
    assert_int_equal(cp_pathrules_new("C:\\var\\lib\\kubelet", NULL, 0, &r, &e), CP_OK);
    assert_int_equal(cp_pathrules_check(r, "C:\\var\\lib\\kubelet\\pods", &e), CP_OK);
    assert_int_equal(cp_pathrules_refused(r), 0);
    assert_int_equal(cp_pathrules_check(r, "C:\\Windows", &e), CP_E_INVALID_ARGUMENT);
    assert_int_equal(cp_pathrules_check(r, "C:\\var\\lib\\kubelet\\..\\x", &e),
                     CP_E_INVALID_ARGUMENT);
    assert_int_equal(
        cp_pathrules_check_resolved(r, "C:\\var\\lib\\kubelet\\l", "D:\\elsewhere", &e),
        CP_E_INVALID_ARGUMENT);
    assert_int_equal(cp_pathrules_check_keeps_roots(r, "C:\\var\\lib\\kubelet", NULL, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_int_equal(cp_pathrules_refused(r), 4);
    cp_pathrules_free(r);
}

static void each_disk(void *ctx, uint32_t disk, size_t waiting)
{
    got *g = ctx;
    snprintf(g->labels[g->n], sizeof(g->labels[0]), "%u", (unsigned)disk);
    g->values[g->n++] = (double)waiting;
}

static void test_disk_waiting(void **state)
{
    (void)state;
    cp_disklocks *l = cp_disklocks_new();
    cp_call *c = cp_call_new(NULL, "/v1.Disk/PartitionDisk", 0);
    got g = {0};
    cp_disklocks_each(l, each_disk, &g);
    assert_int_equal(g.n, 0);
    assert_int_equal(cp_disklocks_lock(l, c, 3), CP_OK); /* no waiter: takes it */
    cp_disklocks_each(l, each_disk, &g);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.labels[0], "3");
    assert_true(g.values[0] == 0);
    cp_disklocks_unlock(l, c, 3);
    g.n = 0;
    cp_disklocks_each(l, each_disk, &g);
    assert_int_equal(g.n, 0);
    cp_call_free(c);
    cp_disklocks_free(l);
}

static void test_audit_records(void **state)
{
    (void)state;
    cp_audit *a = cp_audit_new(NULL, NULL);
    cp_audit_denied(a, "csi-proxy-smb-v1", "smb", 42, "S-1-5-21-1", "not a member");
    cp_audit_denied(a, "csi-proxy-smb-v1", "smb", 43, "S-1-5-21-2", "not a member");
    got g = {0};
    cp_audit_collect(a, collect_into, &g);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.labels[0], "call");
    assert_true(g.values[0] == 0);
    assert_string_equal(g.labels[1], "denied");
    assert_true(g.values[1] == 2);
    cp_audit_free(a);
}

/* A server-streaming method: grpc_type="server_stream", msg_sent counted
 * apart from started; a shared service (served on every pipe) has its
 * calls counted but no csi_proxy_* series. */
static const cp_method stream_methods[] = {
    {"Check", NULL, NULL, NULL, NULL, h_none, NULL, NULL, 0},
    {"Watch", NULL, NULL, NULL, NULL, h_none, NULL, NULL, CP_METHOD_SERVER_STREAM},
};
static const cp_service_def health_def = {
    "health", "v1", "grpc.health.v1.Health", NULL, stream_methods, 2, 0, 0};

static void test_server_stream_and_shared_service(void **state)
{
    (void)state;
    cp_metrics *m = cp_metrics_new();
    assert_int_equal(cp_metrics_add_service(m, &v1), 0);
    assert_int_equal(cp_metrics_add_shared_service(m, &health_def), 0);
    const cp_method *check = &stream_methods[0], *watch = &stream_methods[1];
    cp_metrics_call_started(m, &health_def, check);
    cp_metrics_call_handled(m, &health_def, check, CP_OK, 10);
    cp_metrics_call_started(m, &health_def, watch);
    for (int i = 0; i < 3; i++)
        cp_metrics_msg_sent(m, &health_def, watch);
    cp_metrics_call_handled(m, &health_def, watch, CP_E_CANCELLED, 5000000);
    cp_metrics_msg_sent(NULL, &health_def, watch); /* metrics off: no crash */
    cp_metrics_conn_opened(m, &v1, false);
    char *t = render(m);
    has(t, SERIES("grpc_server_started_total", "Check", "grpc.health.v1.Health") "} 1");
    has(t, SERIES("grpc_server_msg_sent_total", "Check", "grpc.health.v1.Health") "} 1");
    has(t, "grpc_server_started_total{grpc_method=\"Watch\",grpc_service=\"grpc.health.v1.Health\","
           "grpc_type=\"server_stream\"} 1");
    has(t, "grpc_server_msg_received_total{grpc_method=\"Watch\",grpc_service=\"grpc.health.v1."
           "Health\",grpc_type=\"server_stream\"} 1");
    has(t,
        "grpc_server_msg_sent_total{grpc_method=\"Watch\",grpc_service=\"grpc.health.v1.Health\","
        "grpc_type=\"server_stream\"} 3");
    has(t, "grpc_server_handled_total{grpc_code=\"Canceled\",grpc_method=\"Watch\",grpc_service="
           "\"grpc.health.v1.Health\",grpc_type=\"server_stream\"} 1");
    has(t,
        "grpc_server_handling_seconds_bucket{grpc_method=\"Watch\",grpc_service=\"grpc.health.v1."
        "Health\",grpc_type=\"server_stream\",le=\"6\"} 1");
    has(t, "csi_proxy_connections_total{group=\"fake\"} 1");
    assert_null(strstr(t, "group=\"health\""));
    free(t);
    cp_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_histogram),
        cmocka_unit_test(test_help_type_and_order),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_connections_by_group),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_code_names),
        cmocka_unit_test(test_bind_address),
        cmocka_unit_test(test_bind_address_hosts),
        cmocka_unit_test(test_path_refusals_counted),
        cmocka_unit_test(test_disk_waiting),
        cmocka_unit_test(test_audit_records),
        cmocka_unit_test(test_server_stream_and_shared_service),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
