/* test_conn_calls.c - the connection core's answers to calls made by an
 * nghttp2 client (conn_harness.h): handler errors, unknown methods, message
 * limits, deadlines, denied callers, shutdown, malformed headers, the
 * request filter, metrics, and the gRPC wire helpers. */

#include "test/unit/conn_harness.h"

/* Closes the connection and then its client. */
static void close_pair(cp_conn *c, client *cl)
{
    cp_conn_close(c);
    nghttp2_session_del(cl->h2);
}

/* On a new connection with options o: one application/grpc call of the
 * gRPC message msg to path, `jobs` handler jobs completed, and the
 * call's answer. */
static result one_call(const cp_conn_opts *o, const char *path, const uint8_t *msg, size_t len,
                       size_t jobs)
{
    client cl;
    cp_conn *c = new_pair(&cl, o);
    body b = {msg, len, 0};
    call(&cl, path, "application/grpc", NULL, NULL, &b);
    pump(c, &cl, true);
    if (jobs > 0) {
        complete_jobs(c, jobs);
        pump(c, &cl, true);
    }
    result r = cl.r[0];
    close_pair(c, &cl);
    return r;
}

static void test_handler_error_status_and_message(void **state)
{
    (void)state;
    result r = one_call(NULL, "/v1.Filesystem/Rmdir", yes_req, sizeof(yes_req), 1);
    assert_int_equal(r.grpc_status, 3);
    assert_string_equal(r.message, "path C:\\csiproxy-test\\dir is bad\n%");
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
    close_pair(c, &cl);
    nghttp2_session_del(cl2.h2);
    cp_metrics_free(m);
}

static void test_unknown_method(void **state)
{
    (void)state;
    result r = one_call(NULL, "/v1.Filesystem/Format", yes_req, sizeof(yes_req), 0);
    assert_int_equal(r.grpc_status, 12);
    assert_string_equal(r.message, "unknown method Format for service v1.Filesystem");
}

static void test_oversized_message(void **state)
{
    (void)state;
    cp_conn_opts o = {.max_recv_msg = 64};
    static uint8_t big[5 + 100];
    cp_grpc_put_prefix(big, false, 100);
    result r = one_call(&o, "/v1.Filesystem/PathExists", big, sizeof(big), 0);
    assert_int_equal(r.grpc_status, 8);
    assert_non_null(strstr(r.message, "larger than max (100 vs. 64)"));
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
    close_pair(c, &cl);
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
    close_pair(c, &cl);
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
    close_pair(c, &cl);
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
    close_pair(c, &cl);
}

static void test_denied_caller(void **state)
{
    (void)state;
    cp_conn_opts o = {.deny_message = "caller pid 42 is not allowed to use the filesystem group"};
    result r = one_call(&o, "/v1.Filesystem/PathExists", yes_req, sizeof(yes_req), 0);
    assert_int_equal(r.grpc_status, 7);
    assert_non_null(strstr(r.message, "not allowed"));
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
    close_pair(c, &cl);
}

static void test_bad_preface_closes(void **state)
{
    (void)state;
    cp_conn *c = cp_conn_new(&fs_svc, pool, NULL, post, NULL);
    const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_true(cp_conn_recv(c, (const uint8_t *)junk, sizeof(junk) - 1) < 0);
    cp_conn_close(c);
}

/* nghttp2's HTTP checks (made by rpc/h2check.c): a malformed request is
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
        close_pair(c, &cl);
    }
}

/* grpc-go before 1.57 sends the dial target as :authority unencoded: the
 * raw pipe path, with single or doubled backslashes. nghttp2's own check
 * refuses a backslash; rpc/h2check.c allows exactly this form. */
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
        close_pair(c, &cl);
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
    close_pair(c, &cl);
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
    close_pair(c, &cl);
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
        cmocka_unit_test(test_raw_backslash_authority_answers_ok),
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
    return cmocka_run_group_tests_name("conn-calls", tests, setup, teardown);
}
