/* test_conn.c - the HTTP/2 + gRPC connection core fed the exact bytes real
 * grpc-go csi-proxy clients send (test/captures): PathExists in two
 * versions, a raw-backslash :authority, two calls with a deadline, an
 * unimplemented group, the wrong pipe, an idle connection. */

#include "test/unit/conn_harness.h"

static void test_capture_pathexists_v1(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&fs_svc, "01-filesystem-v1-PathExists.bin", &cl, 1, &c);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_string_equal(cl.r[0].http_status, "200");
    /* 5-byte prefix + PathExistsResponse{exists: true} = 08 01 */
    assert_int_equal(cl.r[0].data_len, 7);
    const uint8_t want[] = {0, 0, 0, 0, 2, 0x08, 0x01};
    assert_memory_equal(cl.r[0].data, want, 7);
    cp_conn_close(c);
}

/* Capture 02: v1beta1, :authority %5C%5C.%5C%5Cpipe%5C%5Ccsi-proxy-filesystem-v1beta1
 * (grpc-go percent-encodes the backslashes), request path + context POD. */
static void test_capture_pathexists_v1beta1(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&beta_svc, "02-filesystem-v1beta1-PathExists.bin", &cl, 1, &c);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_string_equal(cl.r[0].http_status, "200");
    assert_int_equal(cl.r[0].rst, 0);
    /* 5-byte prefix + v1beta1.PathExistsResponse{exists: true} = 10 01 */
    const uint8_t want[] = {0, 0, 0, 0, 2, 0x10, 0x01};
    assert_int_equal(cl.r[0].data_len, sizeof(want));
    assert_memory_equal(cl.r[0].data, want, sizeof(want));
    cp_conn_close(c);
}

/* Capture 09: the pipe dialled with single backslashes, :authority
 * %5C%5C.%5Cpipe%5Ccsi-proxy-filesystem-v1. */
static void test_capture_single_backslash_authority(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&fs_svc, "09-filesystem-v1-single-backslash-PathExists.bin", &cl, 1, &c);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_string_equal(cl.r[0].http_status, "200");
    assert_int_equal(cl.r[0].rst, 0);
    const uint8_t want[] = {0, 0, 0, 0, 2, 0x08, 0x01};
    assert_int_equal(cl.r[0].data_len, sizeof(want));
    assert_memory_equal(cl.r[0].data, want, sizeof(want));
    cp_conn_close(c);
}

static void test_capture_two_calls_with_deadline(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&fs_svc, "08-filesystem-v1-PathExists-deadline-then-PathExists.bin", &cl, 2, &c);
    assert_int_equal(cl.r[0].grpc_status, 0);
    assert_int_equal(cl.r[1].grpc_status, 0);
    cp_conn_close(c);
}

static void test_capture_unimplemented_group(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    replay(&disk_svc, "03-disk-v1-ListDiskIDs.bin", &cl, 0, &c);
    assert_int_equal(cl.r[0].grpc_status, 12);
    assert_non_null(strstr(cl.r[0].message, "ListDiskIDs"));
    cp_conn_close(c);
}

static void test_capture_wrong_pipe(void **state)
{
    (void)state;
    client cl;
    cp_conn *c;
    /* a disk call sent to the filesystem pipe */
    replay(&fs_svc, "03-disk-v1-ListDiskIDs.bin", &cl, 0, &c);
    assert_int_equal(cl.r[0].grpc_status, 12);
    assert_string_equal(cl.r[0].message, "unknown service v1.Disk");
    cp_conn_close(c);
}

static void test_idle_capture_is_harmless(void **state)
{
    (void)state;
    cp_conn *c = cp_conn_new(&fs_svc, pool, NULL, post, NULL);
    size_t len;
    const uint8_t *b = read_file("01-filesystem-v1-idle.bin", &len);
    assert_int_equal(len, 0);
    assert_int_equal(cp_conn_recv(c, b, 0), CP_OK);
    assert_true(cp_conn_wants_io(c));
    cp_conn_close(c);
}

/* ---- hand-built requests --------------------------------------------- */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_pathexists_v1),
        cmocka_unit_test(test_capture_pathexists_v1beta1),
        cmocka_unit_test(test_capture_single_backslash_authority),
        cmocka_unit_test(test_capture_two_calls_with_deadline),
        cmocka_unit_test(test_capture_unimplemented_group),
        cmocka_unit_test(test_capture_wrong_pipe),
        cmocka_unit_test(test_idle_capture_is_harmless),
    };
    return cmocka_run_group_tests_name("conn", tests, setup, teardown);
}
