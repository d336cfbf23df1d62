/* test_sim_default.c - the simulator builds' default hosts (storage, iSCSI,
 * SMB) are seeded from the fixture CSI_PROXY_SIM_FIXTURE names: a file
 * that loads, one that cannot be opened (the start-up fails), and the
 * variable unset or empty (the hosts start empty). */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>

#include "host/iscsi_host.h"
#include "host/smb_host.h"
#include "host/storage.h"

static void *heap(void *actx, size_t n)
{
    (void)actx;
    return calloc(1, n > 0 ? n : 1);
}

static const cp_storage_alloc alloc = {.alloc = heap};

/* Opens the three default hosts: each one's status must be `want`; when
 * CP_OK, *disks counts the storage host's disks and *san says whether the
 * iSCSI host knows the fixture's SAN (registering its portal works). */
static void open_all(int want, size_t *disks, bool *san)
{
    cp_error e;
    cp_storage_host st;
    assert_int_equal(cp_storage_host_open_default(&st, &e), want);
    cp_iscsi_host is;
    assert_int_equal(cp_iscsi_host_open_default(&is, &e), want);
    cp_smb_host sm;
    assert_int_equal(cp_smb_host_open_default(&sm, &e), want);
    if (want != CP_OK)
        return;
    cp_disk_info *d = NULL;
    assert_int_equal(st.ops->list_disks(st.ctx, &alloc, &d, disks, &e), CP_OK);
    const cp_iscsi_portal p = {.address = "san-v1alpha1.sim.example", .port = 3260};
    *san = is.ops->add_portal(is.ctx, &p, &e) == CP_OK;
    /* d's strings are left to the process's end: a few small blocks */
    st.ops->destroy(st.ctx);
    is.ops->destroy(is.ctx);
    sm.ops->destroy(sm.ctx);
}

static void test_fixture_named(void **state)
{
    (void)state;
    size_t disks = 0;
    bool san = false;
    assert_int_equal(setenv(CP_STORAGE_SIM_FIXTURE_ENV, "test/fixtures/storage.yaml", 1), 0);
    open_all(CP_OK, &disks, &san);
    assert_true(disks > 0);
    assert_true(san);
}

static void test_fixture_missing(void **state)
{
    (void)state;
    assert_int_equal(setenv(CP_STORAGE_SIM_FIXTURE_ENV, "/nonexistent/fixture.yaml", 1), 0);
    open_all(CP_E_NOT_FOUND, NULL, NULL);
}

static void test_unset_or_empty_starts_empty(void **state)
{
    (void)state;
    size_t disks = 9;
    bool san = true;
    assert_int_equal(setenv(CP_STORAGE_SIM_FIXTURE_ENV, "", 1), 0);
    open_all(CP_OK, &disks, &san);
    assert_int_equal(disks, 0);
    assert_false(san);
    disks = 9;
    san = true;
    assert_int_equal(unsetenv(CP_STORAGE_SIM_FIXTURE_ENV), 0);
    open_all(CP_OK, &disks, &san);
    assert_int_equal(disks, 0);
    assert_false(san);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_named),
        cmocka_unit_test(test_fixture_missing),
        cmocka_unit_test(test_unset_or_empty_starts_empty),
    };
    return cmocka_run_group_tests_name("sim_default", tests, NULL, NULL);
}
