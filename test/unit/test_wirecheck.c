/* test_wirecheck.c - NUL and UTF-8 checks on encoded requests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "disk/v1beta1/api.pb-c.h"
#include "filesystem/v1/api.pb-c.h"
#include "server/wirecheck.h"

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
    const uint8_t b[] = {0x0a, 13,                       /* entry of diskIDs */
                         0x0a, 1, '1',                    /* key "1" */
                         0x12, 8,                         /* value DiskIDs */
                         0x0a, 6, 0x0a, 1, 'k', 0x12, 1, 0}; /* identifiers {k: "\0"} */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_path_ok),      cmocka_unit_test(test_nul_in_path),
        cmocka_unit_test(test_bad_utf8),           cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_nested_map_string),  cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_field_number_zero_or_too_big),
    };
    return cmocka_run_group_tests_name("wirecheck", tests, NULL, NULL);
}
