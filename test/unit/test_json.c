/* test_json.c - cli/json: JSON parsing, JSON <-> protobuf-c messages over
 * the real generated types, escapes, and the errors operators will see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* The CLI is not part of libcore: build its JSON module into the test
 * (json_pb.c also gives the test its static json_name_eq()). */
#include "cli/json_out.c"
#include "cli/json_parse.c"
#include "cli/json_pb.c"

#include "disk/v1/api.pb-c.h"
#include "disk/v1beta1/api.pb-c.h"
#include "filesystem/v1/api.pb-c.h"
#include "filesystem/v1alpha1/api.pb-c.h"
#include "iscsi/v1alpha2/api.pb-c.h"
#include "system/v1alpha1/api.pb-c.h"
#include "volume/v1/api.pb-c.h"

static int setup(void **state)
{
    *state = cp_arena_new();
    return *state == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    cp_arena_free(*state);
    return 0;
}

static ProtobufCMessage *from_json(cp_arena *a, const char *json,
                                   const ProtobufCMessageDescriptor *d)
{
    ProtobufCMessage *m = NULL;
    cp_error e = {0};
    int rc = cp_json_text_to_message(a, json, strlen(json), d, &m, &e);
    if (rc != CP_OK)
        fail_msg("%s: %s", json, e.msg);
    return m;
}

static char *to_json(cp_arena *a, const ProtobufCMessage *m, unsigned flags)
{
    char *out = NULL;
    cp_error e = {0};
    assert_int_equal(cp_json_from_message(a, m, flags, &out, &e), CP_OK);
    return out;
}

/* JSON -> message -> wire -> message -> JSON. */
static char *roundtrip(cp_arena *a, const char *json, const ProtobufCMessageDescriptor *d,
                       unsigned flags)
{
    ProtobufCMessage *m = from_json(a, json, d);
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = cp_arena_alloc(a, n + 1);
    assert_non_null(buf);
    assert_int_equal(protobuf_c_message_pack(m, buf), n);
    ProtobufCMessage *u = protobuf_c_message_unpack(d, cp_arena_allocator(a), n, buf);
    assert_non_null(u);
    return to_json(a, u, flags);
}

static void expect_rt(cp_arena *a, const char *in, const ProtobufCMessageDescriptor *d,
                      const char *want)
{
    assert_string_equal(roundtrip(a, in, d, 0), want);
}

/* The request is rejected with INVALID_ARGUMENT and a message holding
 * every needle. */
static void expect_error(cp_arena *a, const char *json, const ProtobufCMessageDescriptor *d,
                         const char *needle1, const char *needle2)
{
    ProtobufCMessage *m = NULL;
    cp_error e = {0};
    int rc = cp_json_text_to_message(a, json, strlen(json), d, &m, &e);
    if (rc != CP_E_INVALID_ARGUMENT)
        fail_msg("%s: want INVALID_ARGUMENT, got %d (%s)", json, rc, e.msg);
    if (strstr(e.msg, needle1) == NULL || (needle2 != NULL && strstr(e.msg, needle2) == NULL))
        fail_msg("%s: message \"%s\" lacks \"%s\" / \"%s\"", json, e.msg, needle1,
                 needle2 != NULL ? needle2 : "");
}

/* ------------------------------------------------------------- parser */

static void test_parse_values(void **state)
{
    cp_arena *a = *state;
    const char *text =
        "\xef\xbb\xbf { \"a\" : [1, -2.5e+3, true, false, null, \"s\", {}, []] }\r\n";
    cp_json *v;
    cp_error e;
    assert_int_equal(cp_json_parse(a, text, strlen(text), &v, &e), CP_OK);
    assert_int_equal(v->kind, CP_JSON_OBJECT);
    assert_int_equal(v->n, 1);
    assert_string_equal(v->keys[0], "a");
    cp_json *arr = v->items[0];
    assert_int_equal(arr->kind, CP_JSON_ARRAY);
    assert_int_equal(arr->n, 8);
    assert_int_equal(arr->items[0]->kind, CP_JSON_NUMBER);
    assert_string_equal(arr->items[0]->str, "1");
    assert_string_equal(arr->items[1]->str, "-2.5e+3");
    assert_true(arr->items[2]->boolean);
    assert_false(arr->items[3]->boolean);
    assert_int_equal(arr->items[4]->kind, CP_JSON_NULL);
    assert_string_equal(arr->items[5]->str, "s");
    assert_int_equal(arr->items[6]->kind, CP_JSON_OBJECT);
    assert_int_equal(arr->items[7]->kind, CP_JSON_ARRAY);
}

static void test_parse_many_items(void **state)
{
    cp_arena *a = *state;
    char text[8192];
    size_t o = 0;
    o += (size_t)snprintf(text + o, sizeof(text) - o, "[");
    for (int i = 0; i < 1000; i++)
        o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%d", i ? "," : "", i);
    snprintf(text + o, sizeof(text) - o, "]");
    cp_json *v;
    cp_error e;
    assert_int_equal(cp_json_parse(a, text, strlen(text), &v, &e), CP_OK);
    assert_int_equal(v->n, 1000);
    assert_string_equal(v->items[999]->str, "999");
}

static void test_parse_escapes(void **state)
{
    cp_arena *a = *state;
    const char *text =
        "\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\u4E2D \\ud83d\\ude00 raw:\xc3\xa9\"";
    cp_json *v;
    cp_error e;
    assert_int_equal(cp_json_parse(a, text, strlen(text), &v, &e), CP_OK);
    assert_int_equal(v->kind, CP_JSON_STRING);
    const char *want = "q\" b\\ s/ \b\f\n\r\t \xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 raw:\xc3\xa9";
    assert_string_equal(v->str, want);
    assert_int_equal(v->len, strlen(want));
}

static void expect_syntax(cp_arena *a, const char *text, const char *needle)
{
    cp_json *v;
    cp_error e = {0};
    int rc = cp_json_parse(a, text, strlen(text), &v, &e);
    if (rc != CP_E_INVALID_ARGUMENT || strstr(e.msg, needle) == NULL)
        fail_msg("%s: rc %d, message \"%s\", want \"%s\"", text, rc, e.msg, needle);
}

static void test_parse_errors(void **state)
{
    cp_arena *a = *state;
    expect_syntax(a, "", "unexpected end of input");
    expect_syntax(a, "{\"a\":1,}", "trailing comma");
    expect_syntax(a, "[1,]", "trailing comma");
    expect_syntax(a, "{\"a\" 1}", "expected ':'");
    expect_syntax(a, "{a:1}", "quoted member name");
    expect_syntax(a, "[1 2]", "expected ',' or ']'");
    expect_syntax(a, "\"abc", "unterminated string");
    expect_syntax(a, "01", "leading zero");
    expect_syntax(a, "1.", "digit expected after '.'");
    expect_syntax(a, "1e", "exponent");
    expect_syntax(a, "-", "invalid number");
    expect_syntax(a, "tru", "not true, false or null");
    expect_syntax(a, "{} x", "unexpected text after the value");
    expect_syntax(a, "'a'", "unexpected '''");
    expect_syntax(a, "\"\\x\"", "invalid escape");
    expect_syntax(a, "\"\\u12\"", "four hex digits");
    expect_syntax(a, "\"\\ud800\"", "unpaired high surrogate");
    expect_syntax(a, "\"\\ud800\\u0041\"", "unpaired high surrogate");
    expect_syntax(a, "\"\\udc00\"", "unpaired low surrogate");
    expect_syntax(a, "\"\\u0000\"", "\\u0000");
    expect_syntax(a, "\"a\tb\"", "control character");
    expect_syntax(a, "\"\xc3\"", "invalid UTF-8");
    expect_syntax(a, "\"\xc0\xaf\"", "invalid UTF-8");     /* overlong '/' */
    expect_syntax(a, "\"\xed\xa0\x80\"", "invalid UTF-8"); /* encoded surrogate */
    /* Positions: line 2, column 3 is the 'x'. */
    expect_syntax(a, "{\n  x}", "line 2, column 3");
}

static void test_parse_depth(void **state)
{
    cp_arena *a = *state;
    char deep[2 * (CP_JSON_MAX_DEPTH + 1) + 1];
    for (int i = 0; i <= CP_JSON_MAX_DEPTH; i++) {
        deep[i] = '[';
        deep[2 * (CP_JSON_MAX_DEPTH + 1) - 1 - i] = ']';
    }
    deep[2 * (CP_JSON_MAX_DEPTH + 1)] = '\0';
    expect_syntax(a, deep, "nesting deeper than 64");
    /* Exactly the limit is fine. */
    cp_json *v;
    cp_error e;
    assert_int_equal(cp_json_parse(a, deep + 1, strlen(deep) - 2, &v, &e), CP_OK);
    /* And the limit holds on the message path too. */
    expect_error(a,
                 "{\"target_portal\":"
                 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                 "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
                 &v1alpha2__connect_target_request__descriptor, "nesting deeper", NULL);
}

/* ---------------------------------------------------- message mapping */

static void test_filesystem_path_exists(void **state)
{
    cp_arena *a = *state;
    expect_rt(a, "{\"path\":\"C:\\\\var\\\\lib\\\\kubelet\"}", &v1__path_exists_request__descriptor,
              "{\"path\":\"C:\\\\var\\\\lib\\\\kubelet\"}");
    ProtobufCMessage *m =
        from_json(a, "{\"path\":\"C:\\\\x\"}", &v1__path_exists_request__descriptor);
    assert_string_equal(((V1__PathExistsRequest *)m)->path, "C:\\x");
    /* Empty input and {} are the empty message; empty strings are omitted. */
    expect_rt(a, "", &v1__path_exists_request__descriptor, "{}");
    expect_rt(a, " {} ", &v1__path_exists_request__descriptor, "{}");
    expect_rt(a, "{\"path\":\"\"}", &v1__path_exists_request__descriptor, "{}");
    expect_rt(a, "{\"path\":null}", &v1__path_exists_request__descriptor, "{}");
    expect_rt(a, "{\"exists\":true}", &v1__path_exists_response__descriptor, "{\"exists\":true}");
    expect_rt(a, "{\"exists\":false}", &v1__path_exists_response__descriptor, "{}");
    assert_string_equal(
        roundtrip(a, "{}", &v1__path_exists_response__descriptor, CP_JSON_EMIT_DEFAULTS),
        "{\"exists\":false}");
}

static void test_disk_v1_map_uint32_to_message(void **state)
{
    cp_arena *a = *state;
    const char *in = "{\"diskIDs\":{\"0\":{\"page83\":\"p0\",\"serialNumber\":\"s0\"},"
                     "\"4294967295\":{\"serial_number\":\"max\"},\"7\":{}}}";
    ProtobufCMessage *m = from_json(a, in, &v1__list_disk_ids_response__descriptor);
    V1__ListDiskIDsResponse *r = (V1__ListDiskIDsResponse *)m;
    assert_int_equal(r->n_diskids, 3);
    assert_int_equal(r->diskids[0]->key, 0);
    assert_string_equal(r->diskids[0]->value->page83, "p0");
    assert_string_equal(r->diskids[0]->value->serial_number, "s0");
    assert_int_equal(r->diskids[1]->key, 4294967295u);
    assert_int_equal(r->diskids[2]->key, 7);
    expect_rt(a, in, &v1__list_disk_ids_response__descriptor,
              "{\"diskIDs\":{\"0\":{\"page83\":\"p0\",\"serial_number\":\"s0\"},"
              "\"4294967295\":{\"serial_number\":\"max\"},\"7\":{}}}");
    expect_error(a, "{\"diskIDs\":{\"x\":{}}}", &v1__list_disk_ids_response__descriptor,
                 "diskIDs[\"x\"]", "not a non-negative integer");
    expect_error(a, "{\"diskIDs\":{\"4294967296\":{}}}", &v1__list_disk_ids_response__descriptor,
                 "out of range for uint32", NULL);
    expect_error(a, "{\"diskIDs\":{\"1\":null}}", &v1__list_disk_ids_response__descriptor,
                 "null is not allowed as a map value", NULL);
    expect_error(a, "{\"diskIDs\":[]}", &v1__list_disk_ids_response__descriptor,
                 "field \"diskIDs\": expected an object (map), got an array", NULL);
    /* Empty map: omitted, or {} with defaults. */
    expect_rt(a, "{\"diskIDs\":{}}", &v1__list_disk_ids_response__descriptor, "{}");
    assert_string_equal(
        roundtrip(a, "{}", &v1__list_disk_ids_response__descriptor, CP_JSON_EMIT_DEFAULTS),
        "{\"diskIDs\":{}}");
}

static void test_disk_v1beta1_nested_maps(void **state)
{
    cp_arena *a = *state;
    const char *in = "{\"diskIDs\":{\"disk0\":{\"identifiers\":{\"page83\":\"abc\","
                     "\"serialNumber\":\"s\\u00e9\"}},\"disk1\":{\"identifiers\":{\"e\":\"\"}},"
                     "\"disk2\":{}}}";
    ProtobufCMessage *m = from_json(a, in, &v1beta1__list_disk_ids_response__descriptor);
    V1beta1__ListDiskIDsResponse *r = (V1beta1__ListDiskIDsResponse *)m;
    assert_int_equal(r->n_diskids, 3);
    assert_string_equal(r->diskids[0]->key, "disk0");
    assert_int_equal(r->diskids[0]->value->n_identifiers, 2);
    assert_string_equal(r->diskids[0]->value->identifiers[1]->key, "serialNumber");
    assert_string_equal(r->diskids[0]->value->identifiers[1]->value, "s\xc3\xa9");
    expect_rt(a, in, &v1beta1__list_disk_ids_response__descriptor,
              "{\"diskIDs\":{\"disk0\":{\"identifiers\":{\"page83\":\"abc\","
              "\"serialNumber\":\"s\xc3\xa9\"}},\"disk1\":{\"identifiers\":{\"e\":\"\"}},"
              "\"disk2\":{}}}");
    expect_error(a, "{\"diskIDs\":{\"d\":{\"identifiers\":{\"k\":1}}}}",
                 &v1beta1__list_disk_ids_response__descriptor, "diskIDs[\"d\"].identifiers[\"k\"]",
                 "expected a string, got a number");
    assert_true(cp_json_is_map_field(&v1beta1__list_disk_ids_response__descriptor,
                                     &v1beta1__list_disk_ids_response__descriptor.fields[0]));
    assert_true(cp_json_is_map_field(&v1beta1__disk_ids__descriptor,
                                     &v1beta1__disk_ids__descriptor.fields[0]));
    assert_false(
        cp_json_is_map_field(&v1alpha2__list_target_portals_response__descriptor,
                             &v1alpha2__list_target_portals_response__descriptor.fields[0]));
}

static void test_iscsi_repeated_messages_and_enum(void **state)
{
    cp_arena *a = *state;
    const char *in = "{\"target_portals\":[{\"target_address\":\"10.0.0.1\",\"target_port\":3260},"
                     "{},{\"targetAddress\":\"h\",\"targetPort\":\"4294967295\"}]}";
    ProtobufCMessage *m = from_json(a, in, &v1alpha2__list_target_portals_response__descriptor);
    V1alpha2__ListTargetPortalsResponse *r = (V1alpha2__ListTargetPortalsResponse *)m;
    assert_int_equal(r->n_target_portals, 3);
    assert_int_equal(r->target_portals[0]->target_port, 3260);
    assert_string_equal(r->target_portals[2]->target_address, "h");
    expect_rt(a, in, &v1alpha2__list_target_portals_response__descriptor,
              "{\"target_portals\":[{\"target_address\":\"10.0.0.1\",\"target_port\":3260},{},"
              "{\"target_address\":\"h\",\"target_port\":4294967295}]}");

    const ProtobufCMessageDescriptor *ct = &v1alpha2__connect_target_request__descriptor;
    const char *req = "{\"targetPortal\":{\"target_address\":\"a\",\"target_port\":1},"
                      "\"iqn\":\"iqn.x\",\"authType\":\"MUTUAL_CHAP\",\"chapUsername\":\"u\","
                      "\"chap_secret\":\"s\"}";
    m = from_json(a, req, ct);
    V1alpha2__ConnectTargetRequest *c = (V1alpha2__ConnectTargetRequest *)m;
    assert_int_equal(c->auth_type, V1ALPHA2__AUTHENTICATION_TYPE__MUTUAL_CHAP);
    assert_string_equal(c->chap_username, "u");
    expect_rt(a, req, ct,
              "{\"target_portal\":{\"target_address\":\"a\",\"target_port\":1},\"iqn\":\"iqn.x\","
              "\"auth_type\":\"MUTUAL_CHAP\",\"chap_username\":\"u\",\"chap_secret\":\"s\"}");
    /* Enums by number; 0 is the default; unknown numbers stay numbers. */
    expect_rt(a, "{\"auth_type\":1}", ct, "{\"auth_type\":\"ONE_WAY_CHAP\"}");
    expect_rt(a, "{\"auth_type\":\"NONE\"}", ct, "{}");
    expect_rt(a, "{\"auth_type\":7}", ct, "{\"auth_type\":7}");
    expect_error(a, "{\"auth_type\":\"SOMETIMES\"}", ct, "\"SOMETIMES\" is not a value of enum",
                 "NONE, ONE_WAY_CHAP, MUTUAL_CHAP");
    expect_error(a, "{\"auth_type\":true}", ct, "field \"auth_type\"", "enum name or number");
    expect_error(a, "{\"target_portal\":{\"target_port\":-1}}", ct,
                 "field \"target_portal.target_port\"", "not a non-negative integer");
    expect_error(a, "{\"target_portal\":{\"target_port\":4294967296}}", ct,
                 "out of range for uint32", NULL);
    expect_error(a, "{\"target_portal\":{\"bogus\":1}}", ct, "unknown field \"bogus\"",
                 "under target_portal in v1alpha2.TargetPortal");
    expect_error(a, "{\"target_portal\":\"a:1\"}", ct, "field \"target_portal\"",
                 "expected an object, got a string");
    expect_error(a, "{\"target_portals\":[1]}", &v1alpha2__list_target_portals_response__descriptor,
                 "field \"target_portals[0]\"", "expected an object");
    expect_error(a, "{\"target_portals\":[null]}",
                 &v1alpha2__list_target_portals_response__descriptor,
                 "null is not allowed in a repeated field", NULL);
    expect_error(a, "{\"target_portals\":{}}", &v1alpha2__list_target_portals_response__descriptor,
                 "expected an array", NULL);
    /* emit-defaults: unset messages are null, enums by name. */
    assert_string_equal(roundtrip(a, "{}", ct, CP_JSON_EMIT_DEFAULTS),
                        "{\"target_portal\":null,\"iqn\":\"\",\"auth_type\":\"NONE\","
                        "\"chap_username\":\"\",\"chap_secret\":\"\"}");
    /* Repeated strings. */
    expect_rt(a, "{\"iqns\":[\"a\",\"\",\"c\"]}",
              &v1alpha2__discover_target_portal_response__descriptor,
              "{\"iqns\":[\"a\",\"\",\"c\"]}");
}

static void test_enum_v1alpha1_filesystem_and_system(void **state)
{
    cp_arena *a = *state;
    expect_rt(a, "{\"path\":\"p\",\"context\":\"POD\"}", &v1alpha1__path_exists_request__descriptor,
              "{\"path\":\"p\",\"context\":\"POD\"}");
    /* An enum number the proto does not name comes back as a number. */
    V1alpha1__GetServiceResponse r = V1ALPHA1__GET_SERVICE_RESPONSE__INIT;
    r.display_name = "d";
    r.start_type = V1ALPHA1__START_TYPE__DISABLED;
    r.status = (V1alpha1__ServiceStatus)99;
    assert_string_equal(to_json(a, &r.base, 0),
                        "{\"display_name\":\"d\",\"start_type\":\"DISABLED\",\"status\":99}");
}

static void test_int64(void **state)
{
    cp_arena *a = *state;
    const ProtobufCMessageDescriptor *rs = &v1__resize_volume_request__descriptor;
    const ProtobufCMessageDescriptor *st = &v1__get_volume_stats_response__descriptor;
    /* Numbers or strings in; strings out. */
    expect_rt(a, "{\"volume_id\":\"v\",\"sizeBytes\":1073741824}", rs,
              "{\"volume_id\":\"v\",\"size_bytes\":\"1073741824\"}");
    expect_rt(a, "{\"size_bytes\":\"-5\"}", rs, "{\"size_bytes\":\"-5\"}");
    expect_rt(a, "{\"total_bytes\":\"9223372036854775807\",\"used_bytes\":-9223372036854775808}",
              st,
              "{\"total_bytes\":\"9223372036854775807\",\"used_bytes\":\"-9223372036854775808\"}");
    expect_rt(a, "{\"size_bytes\":1e3}", rs, "{\"size_bytes\":\"1000\"}");
    expect_rt(a, "{\"size_bytes\":\"2.0\"}", rs, "{\"size_bytes\":\"2\"}");
    ProtobufCMessage *m = from_json(a, "{\"total_bytes\":-1}", st);
    assert_int_equal(((V1__GetVolumeStatsResponse *)m)->total_bytes, -1);
    expect_error(a, "{\"size_bytes\":9223372036854775808}", rs, "out of range for int64", NULL);
    expect_error(a, "{\"size_bytes\":1.5}", rs, "1.5 is not an integer", NULL);
    expect_error(a, "{\"size_bytes\":\"12abc\"}", rs, "\"12abc\" is not an integer", NULL);
    expect_error(a, "{\"size_bytes\":\" 1\"}", rs, "is not an integer", NULL);
    expect_error(a, "{\"size_bytes\":\"0x10\"}", rs, "is not an integer", NULL);
    expect_error(a, "{\"size_bytes\":true}", rs, "expected an integer", NULL);
    assert_string_equal(roundtrip(a, "{}", st, CP_JSON_EMIT_DEFAULTS),
                        "{\"total_bytes\":\"0\",\"used_bytes\":\"0\"}");
    /* int64 in v1beta1 disk. */
    expect_rt(a, "{\"diskSize\":\"-42\"}", &v1beta1__disk_stats_response__descriptor,
              "{\"diskSize\":\"-42\"}");
    /* uint32 and bool. */
    expect_rt(a, "{\"disk_number\":\"17\"}", &v1__get_disk_stats_request__descriptor,
              "{\"disk_number\":17}");
    expect_error(a, "{\"exists\":1}", &v1__path_exists_response__descriptor,
                 "expected true or false, got a number", NULL);
    expect_error(a, "{\"exists\":\"true\"}", &v1__path_exists_response__descriptor,
                 "expected true or false, got a string", NULL);
}

static void test_string_escapes_roundtrip(void **state)
{
    cp_arena *a = *state;
    const ProtobufCMessageDescriptor *d = &v1__path_exists_request__descriptor;
    /* Decoded on input; re-escaped minimally on output (non-ASCII as UTF-8). */
    expect_rt(
        a, "{\"path\":\"\\u0022\\\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\\u00e9\\ud83d\\ude00\"}",
        d, "{\"path\":\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\xc3\xa9\xf0\x9f\x98\x80\"}");
    /* Invalid UTF-8 from a server is replaced so the output stays JSON. */
    V1__PathExistsRequest r = V1__PATH_EXISTS_REQUEST__INIT;
    r.path = "a\xff"
             "b\xc3";
    assert_string_equal(to_json(a, &r.base, 0), "{\"path\":\"a\xef\xbf\xbd"
                                                "b\xef\xbf\xbd\"}");
}

static void test_field_errors(void **state)
{
    cp_arena *a = *state;
    const ProtobufCMessageDescriptor *d = &v1__path_exists_request__descriptor;
    expect_error(a, "{\"pth\":\"x\"}", d, "unknown field \"pth\" in v1.PathExistsRequest",
                 "fields: path");
    expect_error(a, "{\"path\":1}", d, "field \"path\": expected a string, got a number", NULL);
    expect_error(a, "{\"path\":[\"x\"]}", d, "expected a string, got an array", NULL);
    expect_error(a, "[]", d, "must be a JSON object (v1.PathExistsRequest), got an array", NULL);
    expect_error(a, "\"x\"", d, "must be a JSON object", NULL);
    expect_error(a, "{\"path\":\"a\",\"path\":\"b\"}", d, "field \"path\": given more than once",
                 NULL);
    expect_error(a, "{\"path\":\"x\"", d, "bad JSON at line 1, column 12", NULL);
}

static void test_field_errors_more(void **state)
{
    cp_arena *a = *state;
    /* Proto name and JSON name of the same field count as duplicates. */
    expect_error(a, "{\"volume_id\":\"a\",\"volumeId\":\"b\"}",
                 &v1__resize_volume_request__descriptor, "given more than once", NULL);
    /* A message without fields says so. */
    expect_error(a, "{\"x\":1}", &v1__mkdir_response__descriptor, "unknown field \"x\"",
                 "it has no fields");
}

static void test_json_names(void **state)
{
    cp_arena *a = *state;
    assert_string_equal(cp_json_name(a, "disk_locations"), "diskLocations");
    assert_string_equal(cp_json_name(a, "LUNID"), "LUNID");
    assert_string_equal(cp_json_name(a, "diskIDs"), "diskIDs");
    assert_string_equal(cp_json_name(a, "MutualChapSecret"), "MutualChapSecret");
    assert_string_equal(cp_json_name(a, "a_b_c"), "aBC");
    assert_true(json_name_eq("disk_locations", "diskLocations"));
    assert_false(json_name_eq("disk_locations", "diskLocation"));
    assert_false(json_name_eq("disk_locations", "disk_locations"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_many_items, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filesystem_path_exists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_v1_map_uint32_to_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_v1beta1_nested_maps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iscsi_repeated_messages_and_enum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enum_v1alpha1_filesystem_and_system, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int64, setup, teardown),
        cmocka_unit_test_setup_teardown(test_string_escapes_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_field_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_field_errors_more, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_names, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
