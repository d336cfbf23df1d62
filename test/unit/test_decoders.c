/* test_decoders.c - protobuf-c against nanopb (test/fuzz/decoders_diff.h):
 * every type of the 139 methods has a nanopb twin; agreeing encodings are
 * read the same; and each difference the fuzz target found is named by
 * its deliberate rule, and by no other. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test/fuzz/decoders_diff.h"

/* The method whose request (or response) type is name. */
static size_t method_of(const char *name, int *response)
{
    size_t n = cp_dd_init();
    for (size_t m = 0; m < n; m++)
        for (int r = 0; r < 2; r++)
            if (strcmp(cp_dd_pbc_type(m, r)->name, name) == 0) {
                *response = r;
                return m;
            }
    fail_msg("no method has the type %s", name);
    return 0;
}

static cp_dd_result check(const char *type, const char *bytes, size_t len)
{
    int resp = 0;
    size_t m = method_of(type, &resp);
    cp_dd_result r;
    cp_dd_check(m, resp, (const uint8_t *)bytes, len, &r);
    return r;
}

#define CHECK(type, lit) check(type, lit, sizeof(lit) - 1)

static void expect_rule(cp_dd_result r, const char *rule, int pbc_ok)
{
    if (r.verdict != CP_DD_RULE)
        fail_msg("verdict %d (%s), protobuf-c %d, nanopb %d (%s); want rule %s", r.verdict, r.why,
                 r.pbc_ok, r.npb_ok, r.npb_error ? r.npb_error : "-", rule);
    assert_string_equal(r.rule, rule);
    assert_int_equal(r.pbc_ok, pbc_ok);
}

static void expect_same(cp_dd_result r)
{
    if (r.verdict != CP_DD_SAME)
        fail_msg("verdict %d (%s), protobuf-c %d, nanopb %d (%s)", r.verdict, r.why, r.pbc_ok,
                 r.npb_ok, r.npb_error ? r.npb_error : "-");
}

static void test_every_method_type_has_a_nanopb_twin(void **state)
{
    (void)state;
    assert_int_equal(cp_dd_init(), 139);
    for (size_t m = 0; m < 139; m++)
        for (int r = 0; r < 2; r++)
            assert_non_null(cp_dd_npb_type(m, r));
}

static void test_agreeing_encodings_read_the_same(void **state)
{
    (void)state;
    expect_same(CHECK("v1.ListDiskLocationsRequest", ""));
    /* strings, a nested message and a map, an unknown field, a field twice,
     * an explicit zero */
    expect_same(CHECK("v1.PathExistsRequest", "\x0a\x05"
                                              "C:\\ab"));
    expect_same(CHECK("v1.ListDiskIDsResponse", "\x0a\x0c\x08\x02\x12\x08\x0a\x02p8\x12\x02sn"
                                                "\x0a\x04\x08\x03\x12\x00"));
    expect_same(CHECK("v1.RmdirRequest", "\x0a\x01"
                                         "a"
                                         "\x0a\x01"
                                         "b"
                                         "\x10\x00"
                                         "\xf8\x07\x01"));
    expect_same(
        CHECK("v1beta1.VolumeStatsResponse", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"));
    /* a negative enum with a negative value in its enum type: both int32 */
    expect_same(CHECK("v1alpha1.GetServiceResponse", "\x0a\x01x"));
}

static void test_both_refuse_a_truncated_message(void **state)
{
    (void)state;
    assert_int_equal(CHECK("v1.PathExistsRequest", "\x0a\x05"
                                                   "C:")
                         .verdict,
                     CP_DD_REFUSED);
    assert_int_equal(CHECK("v1.PathExistsRequest", "\x08").verdict, CP_DD_REFUSED);
}

static void test_rule_field_number_zero(void **state)
{
    (void)state;
    /* a one-byte tag 0 both refuse; protobuf-c takes the two-byte form */
    assert_int_equal(CHECK("v1alpha1.GetBIOSSerialNumberRequest", "\x00\x00").verdict,
                     CP_DD_REFUSED);
    cp_dd_result r = CHECK("v1alpha1.GetBIOSSerialNumberRequest", "\x80\x00\x00");
    expect_rule(r, "field-number-zero", 1);
    assert_int_not_equal(r.wire_check, 0); /* the product refuses it */
}

static void test_rule_field_number_too_big(void **state)
{
    (void)state;
    /* tag (2^29 << 3) | 0: field number 2^29 */
    cp_dd_result r = CHECK("v1.PathExistsRequest", "\x80\x80\x80\x80\x10\x01");
    expect_rule(r, "field-number-too-big", 1);
    assert_int_not_equal(r.wire_check, 0);
}

static void test_rule_bool_wider_than_32_bits(void **state)
{
    (void)state;
    expect_rule(CHECK("v1.RmdirRequest", "\x10\x80\x80\x80\x80\x10"), "bool-wider-than-32-bits", 1);
}

static void test_rule_uint32_or_enum_above_32_bits(void **state)
{
    (void)state;
    /* uint32 disk_number = 2^32 */
    expect_rule(CHECK("v1.PartitionDiskRequest", "\x08\x80\x80\x80\x80\x10"),
                "uint32-or-enum-above-32-bits", 1);
    /* enum start_type = 2^32 + 1; and -1 (10 bytes): its enum has no
     * negative value, so nanopb keeps it unsigned */
    expect_rule(CHECK("v1alpha1.GetServiceResponse", "\x10\x81\x80\x80\x80\x10"),
                "uint32-or-enum-above-32-bits", 1);
    expect_rule(
        CHECK("v1alpha1.GetServiceResponse", "\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
        "uint32-or-enum-above-32-bits", 1);
    /* 2^31 + 26: both accept it, but protobuf-c's int32 writes it back as
     * a negative number in 10 bytes, which nanopb refuses */
    expect_rule(CHECK("v1alpha1.GetServiceResponse", "\x10\x9a\x80\x80\x80\x08"),
                "uint32-or-enum-above-32-bits", 1);
}

static void test_rule_known_field_other_wire_type(void **state)
{
    (void)state;
    expect_rule(CHECK("v1.PathExistsResponse", "\x09\x01\x02\x03\x04\x05\x06\x07\x08"),
                "known-field-other-wire-type", 1);
}

static void test_rule_varint_above_64_bits(void **state)
{
    (void)state;
    expect_rule(
        CHECK("v1beta1.VolumeStatsResponse", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x10"),
        "varint-above-64-bits", 1);
}

static void test_rule_message_field_twice(void **state)
{
    (void)state;
    /* target_portal {target_port: 5} then target_portal {}: merged, the
     * port is 5 (nanopb, grpc-go); protobuf-c 1.4.1 drops it */
    cp_dd_result r = CHECK("v1alpha1.DisconnectTargetRequest", "\x0a\x02\x10\x05\x0a\x00");
    expect_rule(r, "message-field-twice", 1);
    assert_true(r.npb_ok);
    /* its strings are merged by both */
    expect_same(CHECK("v1alpha1.DisconnectTargetRequest", "\x0a\x03\x0a\x01"
                                                          "a"
                                                          "\x0a\x02\x10\x05"));
}

static void test_rule_over_long_varint(void **state)
{
    (void)state;
    /* an unknown varint of 11 bytes; a tag written in 6 bytes */
    expect_rule(CHECK("v1.PathExistsRequest", "\x78\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00"),
                "over-long-varint", 0);
    expect_rule(CHECK("v1.PathExistsRequest", "\xf8\x80\x80\x80\x80\x00\x01"), "over-long-varint",
                0);
    /* a length prefix of 0 written in 10 bytes (found by the smoke run) */
    expect_rule(
        CHECK("v1beta1.IsMountPointRequest", "\x3a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00"),
        "over-long-varint", 0);
}

/* A rule names only its own case: the same message without the fault is
 * read the same by both. */
static void test_rules_do_not_hide_agreement(void **state)
{
    (void)state;
    expect_same(CHECK("v1.RmdirRequest", "\x10\x01"));
    expect_same(CHECK("v1.PartitionDiskRequest", "\x08\xff\xff\xff\xff\x0f"));
    expect_same(CHECK("v1.PathExistsResponse", "\x08\x01"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_method_type_has_a_nanopb_twin),
        cmocka_unit_test(test_agreeing_encodings_read_the_same),
        cmocka_unit_test(test_both_refuse_a_truncated_message),
        cmocka_unit_test(test_rule_field_number_zero),
        cmocka_unit_test(test_rule_field_number_too_big),
        cmocka_unit_test(test_rule_bool_wider_than_32_bits),
        cmocka_unit_test(test_rule_uint32_or_enum_above_32_bits),
        cmocka_unit_test(test_rule_known_field_other_wire_type),
        cmocka_unit_test(test_rule_varint_above_64_bits),
        cmocka_unit_test(test_rule_message_field_twice),
        cmocka_unit_test(test_rule_over_long_varint),
        cmocka_unit_test(test_rules_do_not_hide_agreement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
