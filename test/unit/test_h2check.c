/* test_h2check.c - nghttp2's server-side HTTP messaging checks, made by
 * rpc/h2check.c, and the one allowance: a raw pipe path as :authority. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rpc/h2check.h"

typedef struct {
    const char *name, *value;
} hdr;

#define END                                                                                        \
    {                                                                                              \
        NULL, NULL                                                                                 \
    }

/* Runs a request header block through the checks: true if nghttp2 would
 * have let it through. */
static bool block(const hdr *h, bool end_stream)
{
    cp_h2check c;
    cp_h2check_init(&c);
    for (; h->name != NULL; h++)
        if (!cp_h2check_field(&c, (const uint8_t *)h->name, strlen(h->name),
                              (const uint8_t *)h->value, strlen(h->value), false))
            return false;
    if (!cp_h2check_request_end(&c))
        return false;
    return !end_stream || cp_h2check_end_stream(&c);
}

#define BASE                                                                                       \
    {":method", "POST"}, {":scheme", "http"},                                                      \
    {                                                                                              \
        ":path", "/v1.Filesystem/PathExists"                                                       \
    }
#define AUTH(a)                                                                                    \
    {                                                                                              \
        ":authority", a                                                                            \
    }

static void test_good_requests_pass(void **state)
{
    (void)state;
    const hdr grpc[] = {BASE,
                        AUTH("%5C%5C.%5C%5Cpipe%5C%5Ccsi-proxy-filesystem-v1"),
                        {"content-type", "application/grpc"},
                        {"te", "trailers"},
                        END};
    assert_true(block(grpc, false));
    const hdr host[] = {BASE, {"host", "localhost"}, END}; /* host instead of :authority */
    assert_true(block(host, false));
    const hdr te[] = {BASE, AUTH("localhost"), {"te", "Trailers"}, END};
    assert_true(block(te, false));
    const hdr connect[] = {{":method", "CONNECT"}, AUTH("localhost:443"), END};
    assert_true(block(connect, false));
    const hdr other_scheme[] = {
        {":method", "POST"}, {":scheme", "foo"}, {":path", "x"}, AUTH("a"), END};
    assert_true(block(other_scheme, false));
    const hdr options[] = {
        {":method", "OPTIONS"}, {":scheme", "https"}, {":path", "*"}, AUTH("a"), END};
    assert_true(block(options, false));
}

static void test_raw_pipe_authority_is_allowed(void **state)
{
    (void)state;
    const hdr single[] = {BASE, AUTH("\\\\.\\pipe\\csi-proxy-filesystem-v1"), END};
    assert_true(block(single, false));
    const hdr doubled[] = {BASE, AUTH("\\\\.\\\\pipe\\\\csi-proxy-filesystem-v1"), END};
    assert_true(block(doubled, false));
    const uint8_t all[] = "\\\\!~azAZ09%[]";
    assert_true(cp_h2check_pipe_authority(all, sizeof(all) - 1));
}

static void test_raw_pipe_authority_limits(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "\\\\.\\pipe\\csi proxy", /* space */
        "\\\\.\\pipe\\csi\tproxy",
        "\\\\.\\pipe\\csi\x01",
        "\\\\.\\pipe\\csi\x7f",
        "\\\\.\\pipe\\csi\xc3\xa9", /* above 0x7E */
        "\\.\\pipe\\csi",           /* one backslash first */
        "a\\\\pipe",                /* not at the start */
        "\\\\",                     /* (ok: two backslashes, printable) */
    };
    for (size_t i = 0; i + 1 < sizeof(bad) / sizeof(bad[0]); i++) {
        const hdr h[] = {BASE, AUTH(bad[i]), END};
        if (block(h, false))
            fail_msg("case %zu passed", i);
    }
    const hdr two[] = {BASE, AUTH("\\\\"), END};
    assert_true(block(two, false));
    /* the allowance is for :authority only, not for host */
    const hdr host[] = {BASE, {"host", "\\\\.\\pipe\\x"}, END};
    assert_false(block(host, false));
    /* and a raw :authority still counts once */
    const hdr dup[] = {BASE, AUTH("\\\\.\\pipe\\x"), AUTH("\\\\.\\pipe\\x"), END};
    assert_false(block(dup, false));
}

static void test_bad_fields_are_refused(void **state)
{
    (void)state;
    static const hdr extra[] = {
        {"X-Upper", "1"},
        {"connection", "keep-alive"},
        {"keep-alive", "timeout=5"},
        {"proxy-connection", "close"},
        {"transfer-encoding", "chunked"},
        {"upgrade", "h2c"},
        {"te", "gzip"},
        {"x-a", "a\r\nx-b: c"},
        {"x-a", "a\nb"},
        {"x-a", "a\rb"},
        {"x-a", " a"},
        {"x-a", "a\t"},
        {"x a", "1"},
        {"", "1"},
        {":foo", "1"},
        {":protocol", "websocket"},
        {":status", "200"},
        {":Path", "/x"},
        {":", "1"},
        {"content-length", "x1"},
        {"content-length", ""},
        {"content-length", "99999999999999999999"},
        {":path", "/again"},
        {":authority", "again"},
        {":method", "GET"},
        {":scheme", "https"},
    };
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
        const hdr h[] = {BASE, AUTH("localhost"), extra[i], END};
        if (block(h, false))
            fail_msg("%s: %s passed", extra[i].name, extra[i].value);
    }
    /* NUL in a value (strlen would stop at it) */
    cp_h2check c;
    cp_h2check_init(&c);
    assert_false(
        cp_h2check_field(&c, (const uint8_t *)"x-a", 3, (const uint8_t *)"a\0b", 3, false));
}

static void test_pseudo_header_rules(void **state)
{
    (void)state;
    const hdr after_regular[] = {{":method", "POST"}, {":scheme", "http"}, {"te", "trailers"},
                                 {":path", "/x"},     AUTH("a"),           END};
    assert_false(block(after_regular, false));
    const hdr no_scheme[] = {{":method", "POST"}, {":path", "/x"}, AUTH("a"), END};
    assert_false(block(no_scheme, false));
    const hdr no_method[] = {{":scheme", "http"}, {":path", "/x"}, AUTH("a"), END};
    assert_false(block(no_method, false));
    const hdr no_path[] = {{":method", "POST"}, {":scheme", "http"}, AUTH("a"), END};
    assert_false(block(no_path, false));
    const hdr no_authority[] = {BASE, END};
    assert_false(block(no_authority, false));
    const hdr empty_authority[] = {BASE, AUTH(""), END};
    assert_false(block(empty_authority, false));
    const hdr path_no_slash[] = {
        {":method", "POST"}, {":scheme", "http"}, {":path", "x"}, AUTH("a"), END};
    assert_false(block(path_no_slash, false));
    const hdr star_not_options[] = {
        {":method", "POST"}, {":scheme", "http"}, {":path", "*"}, AUTH("a"), END};
    assert_false(block(star_not_options, false));
    const hdr space_path[] = {
        {":method", "POST"}, {":scheme", "http"}, {":path", "/a b"}, AUTH("a"), END};
    assert_false(block(space_path, false));
    const hdr bad_method[] = {
        {":method", "PO ST"}, {":scheme", "http"}, {":path", "/a"}, AUTH("a"), END};
    assert_false(block(bad_method, false));
    const hdr bad_scheme[] = {
        {":method", "POST"}, {":scheme", "1http"}, {":path", "/a"}, AUTH("a"), END};
    assert_false(block(bad_scheme, false));
    const hdr space_authority[] = {BASE, AUTH("local host"), END};
    assert_false(block(space_authority, false));
    const hdr connect_path[] = {{":method", "CONNECT"}, AUTH("a:1"), {":path", "/"}, END};
    assert_false(block(connect_path, false));
    const hdr connect_no_authority[] = {{":method", "CONNECT"}, {"host", "a"}, END};
    assert_false(block(connect_no_authority, false));
    const hdr dup_host[] = {BASE, {"host", "a"}, {"host", "a"}, END};
    assert_false(block(dup_host, false));
}

static void test_trailers(void **state)
{
    (void)state;
    cp_h2check c;
    cp_h2check_init(&c);
    assert_true(cp_h2check_field(&c, (const uint8_t *)"x-t", 3, (const uint8_t *)"1", 1, true));
    assert_false(cp_h2check_field(&c, (const uint8_t *)":path", 5, (const uint8_t *)"/", 1, true));
    cp_h2check_init(&c); /* a pseudo-header first in the trailers, too */
    assert_false(cp_h2check_field(&c, (const uint8_t *)":path", 5, (const uint8_t *)"/", 1, true));
    assert_true(cp_h2check_trailers_end(true));
    assert_false(cp_h2check_trailers_end(false));
}

static void test_content_length(void **state)
{
    (void)state;
    cp_h2check c;
    cp_h2check_init(&c);
    assert_true(cp_h2check_field(&c, (const uint8_t *)"content-length", 14, (const uint8_t *)"10",
                                 2, false));
    assert_false(cp_h2check_field(&c, (const uint8_t *)"content-length", 14, (const uint8_t *)"10",
                                  2, false)); /* twice */
    assert_false(cp_h2check_end_stream(&c));  /* 0 of 10 */
    assert_true(cp_h2check_data(&c, 4));
    assert_true(cp_h2check_data(&c, 6));
    assert_true(cp_h2check_end_stream(&c));
    assert_false(cp_h2check_data(&c, 1)); /* 11 > 10 */
    cp_h2check_init(&c);
    assert_true(cp_h2check_data(&c, 1000)); /* none declared */
    assert_true(cp_h2check_end_stream(&c));
    /* CONNECT ignores content-length */
    const hdr connect[] = {{":method", "CONNECT"}, AUTH("a:1"), {"content-length", "5"}, END};
    assert_true(block(connect, true));
    const hdr declared[] = {BASE, AUTH("a"), {"content-length", "5"}, END};
    assert_false(block(declared, true)); /* ended with no body */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_requests_pass),
        cmocka_unit_test(test_raw_pipe_authority_is_allowed),
        cmocka_unit_test(test_raw_pipe_authority_limits),
        cmocka_unit_test(test_bad_fields_are_refused),
        cmocka_unit_test(test_pseudo_header_rules),
        cmocka_unit_test(test_trailers),
        cmocka_unit_test(test_content_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
