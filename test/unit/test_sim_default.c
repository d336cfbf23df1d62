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

#include "base/arena.h"
#include "host/iscsi_host.h"
#include "host/smb_host.h"
#include "host/storage.h"

/* The listing's memory: an arena, as the groups give the hosts. */
static void *arena_alloc(void *actx, size_t n)
{
    return cp_arena_alloc(actx, n);
}

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
    cp_arena *ar = cp_arena_new();
    assert_non_null(ar);
    const cp_storage_alloc alloc = {.alloc = arena_alloc, .actx = ar};
    cp_disk_info *d = NULL;
    assert_int_equal(st.ops->list_disks(st.ctx, &alloc, &d, disks, &e), CP_OK);
    cp_arena_free(ar);
    const cp_iscsi_portal p = {.address = "san-v1alpha1.sim.example", .port = 3260};
    *san = is.ops->add_portal(is.ctx, &p, &e) == CP_OK;
    st.ops->destroy(st.ctx);
    is.ops->destroy(is.ctx);
    sm.ops->destroy(sm.ctx);
}

static void test_default_hosts_follow_the_variable(void **state)
{
    (void)state;
    const struct {
        const char *value; /* NULL: unset */
        int status;
        bool seeded;
    } cases[] = {
        {"test/fixtures/storage.yaml", CP_OK, true},
        {"/nonexistent/fixture.yaml", CP_E_NOT_FOUND, false},
        {"", CP_OK, false},
        {NULL, CP_OK, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *v = cases[i].value;
        assert_int_equal(v != NULL ? setenv(CP_STORAGE_SIM_FIXTURE_ENV, v, 1)
                                   : unsetenv(CP_STORAGE_SIM_FIXTURE_ENV),
                         0);
        size_t disks = 9;
        bool san = !cases[i].seeded;
        open_all(cases[i].status, &disks, &san);
        if (cases[i].status != CP_OK)
            continue;
        if ((disks > 0) != cases[i].seeded || san != cases[i].seeded)
            fail_msg("case %zu (%s): %zu disks, SAN %s", i, v != NULL ? v : "unset", disks,
                     san ? "known" : "unknown");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_hosts_follow_the_variable),
    };
    return cmocka_run_group_tests_name("sim_default", tests, NULL, NULL);
}
