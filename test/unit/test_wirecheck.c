/* test_wirecheck.c - NUL and UTF-8 checks on encoded requests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "disk/v1beta1/api.pb-c.h"
#include "filesystem/v1/api.pb-c.h"
#include "iscsi/v1alpha2/api.pb-c.h"
#include "dispatch/wirecheck.h"

static int check(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t n, char *field)
{
    return cp_wire_check_strings(d, b, n, field, 64);
}

static void test_plain_path_ok(void **state)
{
    (void)state;
    const uint8_t b[] = {0x0a, 3, 'C', ':', '\\'};
    char f[64];
    assert_int_equal(check(&v1__path_exists_request__descriptor, b, sizeof(b), f), CP_WIRE_OK);
}

static void test_nul_in_path(void **state)
{
    (void)state;
    const uint8_t b[] = {0x0a, 4, 'C', ':', 0, '\\'};
    char f[64];
    assert_int_equal(check(&v1__path_exists_request__descriptor, b, sizeof(b), f), CP_WIRE_NUL);
    assert_string_equal(f, "v1.PathExistsRequest.path");
}

static void test_bad_utf8(void **state)
{
    (void)state;
    const uint8_t overlong[] = {0x0a, 2, 0xc0, 0xaf};
    const uint8_t surrogate[] = {0x0a, 3, 0xed, 0xa0, 0x80};
    const uint8_t cut[] = {0x0a, 2, 'a', 0xe2};
    const uint8_t good[] = {0x0a, 4, 0xf0, 0x9f, 0x98, 0x80};
    char f[64];
    assert_int_equal(check(&v1__path_exists_request__descriptor, overlong, 4, f), CP_WIRE_UTF8);
    assert_int_equal(check(&v1__path_exists_request__descriptor, surrogate, 5, f), CP_WIRE_UTF8);
    assert_int_equal(check(&v1__path_exists_request__descriptor, cut, 4, f), CP_WIRE_UTF8);
    assert_int_equal(check(&v1__path_exists_request__descriptor, good, 6, f), CP_WIRE_OK);
}

static void test_unknown_fields_skipped(void **state)
{
    (void)state;
    /* field 9 (unknown) as bytes holding a NUL, field 10 varint */
    const uint8_t b[] = {0x4a, 2, 0, 0, 0x50, 0x01};
    char f[64];
    assert_int_equal(check(&v1__path_exists_request__descriptor, b, sizeof(b), f), CP_WIRE_OK);
}

static void test_nested_map_string(void **state)
{
    (void)state;
    /* v1beta1 ListDiskIDsResponse: map<string, DiskIDs> diskIDs = 1;
     * DiskIDs: map<string,string> identifiers = 1. Inner value has a NUL. */
    const uint8_t b[] = {0x0a, 13,                            /* entry of diskIDs */
                         0x0a, 1,  '1',                       /* key "1" */
                         0x12, 8,                             /* value DiskIDs */
                         0x0a, 6,  0x0a, 1, 'k', 0x12, 1, 0}; /* identifiers {k: "\0"} */
    char f[64];
    assert_int_equal(check(&v1beta1__list_disk_ids_response__descriptor, b, sizeof(b), f),
                     CP_WIRE_NUL);
}

static void test_malformed(void **state)
{
    (void)state;
    const uint8_t b[] = {0x0a, 9, 'x'};
    char f[64];
    assert_int_equal(check(&v1__path_exists_request__descriptor, b, sizeof(b), f),
                     CP_WIRE_MALFORMED);
}

/* Found by fuzz_messages: protobuf-c decodes an overlong tag 80 00 as an
 * unknown field number 0 (and refuses the plain 00 it re-encodes it to);
 * field numbers must be 1 .. 2^29-1, so the wire check calls it malformed
 * and dispatch refuses it. */
static void test_field_number_zero_or_too_big(void **state)
{
    (void)state;
    const uint8_t zero[] = {0x0a, 1, 'C', 0x80, 0x00, 0x00};
    const uint8_t plain_zero[] = {0x00, 0x00};
    const uint8_t too_big[] = {0x80, 0x80, 0x80, 0x80, 0x10, 0x00}; /* field 2^29 */
    const uint8_t max_ok[] = {0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00};  /* field 2^29-1 */
    char f[64];
    assert_int_equal(check(&v1__path_exists_request__descriptor, zero, sizeof(zero), f),
                     CP_WIRE_MALFORMED);
    assert_int_equal(check(&v1__path_exists_request__descriptor, plain_zero, sizeof(plain_zero), f),
                     CP_WIRE_MALFORMED);
    assert_int_equal(check(&v1__path_exists_request__descriptor, too_big, sizeof(too_big), f),
                     CP_WIRE_MALFORMED);
    assert_int_equal(check(&v1__path_exists_request__descriptor, max_ok, sizeof(max_ok), f),
                     CP_WIRE_OK);
}

/* ---- the streaming filter ------------------------------------------- */

typedef struct {
    uint8_t b[256];
    size_t n;
} sink;

static int to_sink(void *ctx, const uint8_t *p, size_t n)
{
    sink *s = ctx;
    assert_true(s->n + n <= sizeof(s->b));
    memcpy(s->b + s->n, p, n);
    s->n += n;
    return 0;
}

/* Filters b whole, then again one byte at a time; both must agree. */
static int filter(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t n, size_t max,
                  sink *out)
{
    cp_wire_filter f;
    sink one = {0};
    out->n = 0;
    cp_wire_filter_init(&f, d, n, max);
    int rc = cp_wire_filter_feed(&f, b, n, to_sink, out);
    if (rc == CP_WIRE_OK)
        rc = cp_wire_filter_finish(&f);
    cp_wire_filter_init(&f, d, n, max);
    int rc1 = CP_WIRE_OK;
    for (size_t i = 0; i < n && rc1 == CP_WIRE_OK; i++)
        rc1 = cp_wire_filter_feed(&f, b + i, 1, to_sink, &one);
    if (rc1 == CP_WIRE_OK)
        rc1 = cp_wire_filter_finish(&f);
    assert_int_equal(rc, rc1);
    if (rc == CP_WIRE_OK) {
        assert_int_equal(one.n, out->n);
        assert_memory_equal(one.b, out->b, out->n);
    }
    return rc;
}

static void test_filter_drops_top_level_unknown_fields(void **state)
{
    (void)state;
    const uint8_t b[] = {
        0xc0, 0x3e, 0x96, 0x01,                        /* 1000: varint */
        0x0a, 2,    'C',  ':',                         /* path */
        0xc9, 0x3e, 1,    2,    3,    4,   5, 6, 7, 8, /* 1001: fixed64 */
        0xd5, 0x3e, 1,    2,    3,    4,               /* 1002: fixed32 */
        0xda, 0x3e, 3,    0,    0xff, 'x',             /* 1003: bytes */
        0x0a, 1,    'D',                               /* path again (proto3: last wins) */
    };
    sink out;
    assert_int_equal(filter(&v1__path_exists_request__descriptor, b, sizeof(b), 10, &out),
                     CP_WIRE_OK);
    const uint8_t want[] = {0x0a, 2, 'C', ':', 0x0a, 1, 'D'};
    assert_int_equal(out.n, sizeof(want));
    assert_memory_equal(out.b, want, sizeof(want));
    /* what protobuf-c decodes from the kept bytes: no unknown fields */
    V1__PathExistsRequest *m = (V1__PathExistsRequest *)protobuf_c_message_unpack(
        &v1__path_exists_request__descriptor, NULL, out.n, out.b);
    assert_non_null(m);
    assert_string_equal(m->path, "D");
    assert_int_equal(m->base.n_unknown_fields, 0);
    protobuf_c_message_free_unpacked(&m->base, NULL);
}

static void test_filter_counts_nested_fields(void **state)
{
    (void)state;
    /* ConnectTargetRequest{target_portal{target_address "a", port 1, unknown 9}, iqn "q"} */
    const uint8_t b[] = {0x0a, 7, 0x0a, 1, 'a', 0x10, 1, 0x48, 5, 0x12, 1, 'q'};
    sink out;
    const ProtobufCMessageDescriptor *d = &v1alpha2__connect_target_request__descriptor;
    /* kept: target_portal, its 3 fields (the unknown one too), iqn = 5 */
    assert_int_equal(filter(d, b, sizeof(b), 5, &out), CP_WIRE_OK);
    assert_int_equal(out.n, sizeof(b));
    assert_memory_equal(out.b, b, sizeof(b));
    assert_int_equal(filter(d, b, sizeof(b), 4, &out), CP_WIRE_TOO_MANY);
    /* a nested message running past its parent, or cut short */
    const uint8_t over[] = {0x0a, 2, 0x0a, 5, 'a', 'b', 'c', 'd', 'e'};
    assert_int_equal(filter(d, over, sizeof(over), 100, &out), CP_WIRE_MALFORMED);
    const uint8_t cut[] = {0x0a, 4, 0x0a, 1, 'a'};
    assert_int_equal(filter(d, cut, sizeof(cut), 100, &out), CP_WIRE_MALFORMED);
    /* an empty nested message, then a field */
    const uint8_t empty[] = {0x0a, 0, 0x12, 1, 'q'};
    assert_int_equal(filter(d, empty, sizeof(empty), 100, &out), CP_WIRE_OK);
    assert_int_equal(out.n, sizeof(empty));
}

static void test_filter_refuses_what_walk_refuses(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *d = &v1__path_exists_request__descriptor;
    static const struct {
        uint8_t b[13];
        size_t n;
    } bad[] = {
        {{0x80, 0x00}, 2},                      /* overlong tag of field 0 */
        {{0x00}, 1},                            /* field 0 */
        {{0xfa, 0xff, 0xff, 0xff, 0x7f, 0}, 6}, /* field number above 2^29-1 */
        {{0xc3, 0x3e}, 2},                      /* wire type 3 (group), unknown field */
        {{0xc2, 0x3e, 5, 'a'}, 4},              /* unknown bytes longer than the message */
        {{0xc1, 0x3e, 1, 2, 3}, 5},             /* fixed64 cut short */
        {{0xc0, 0x3e, 0x80}, 3},                /* varint cut short */
        {{0xc0}, 1},                            /* tag cut short */
        /* a varint of 11 bytes (10 is the most) */
        {{0xc0, 0x3e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 13},
    };
    sink out;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = filter(d, bad[i].b, bad[i].n, 100, &out);
        char f[64];
        assert_int_equal(check(d, bad[i].b, bad[i].n, f), CP_WIRE_MALFORMED);
        if (rc != CP_WIRE_MALFORMED)
            fail_msg("case %zu: %d", i, rc);
    }
}

static void test_filter_unknown_fields_are_not_counted(void **state)
{
    (void)state;
    static uint8_t b[3 * 5000 + 2];
    for (size_t i = 0; i < 5000; i++) {
        b[3 * i] = 0xc2;
        b[3 * i + 1] = 0x3e;
        b[3 * i + 2] = 0;
    }
    b[15000] = 0x0a;
    b[15001] = 0;
    cp_wire_filter f;
    sink out = {0};
    cp_wire_filter_init(&f, &v1__path_exists_request__descriptor, sizeof(b), 1);
    assert_int_equal(cp_wire_filter_feed(&f, b, sizeof(b), to_sink, &out), CP_WIRE_OK);
    assert_int_equal(cp_wire_filter_finish(&f), CP_WIRE_OK);
    assert_int_equal(f.dropped, 5000);
    assert_int_equal(f.kept, 1);
    assert_int_equal(out.n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_path_ok),
        cmocka_unit_test(test_nul_in_path),
        cmocka_unit_test(test_bad_utf8),
        cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_nested_map_string),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_field_number_zero_or_too_big),
        cmocka_unit_test(test_filter_drops_top_level_unknown_fields),
        cmocka_unit_test(test_filter_counts_nested_fields),
        cmocka_unit_test(test_filter_refuses_what_walk_refuses),
        cmocka_unit_test(test_filter_unknown_fields_are_not_counted),
    };
    return cmocka_run_group_tests_name("wirecheck", tests, NULL, NULL);
}
