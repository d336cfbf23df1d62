/* test_config_examples.c - the shipped configuration examples (config/<name>.example.yaml,
 * in the release archive) load, and the least-privilege one gives
 * what its comments promise: each served group's pipes and callers are SYSTEM plus
 * only the plugin groups named for it, no Administrators, system and iscsi not served.
 * Local group names are resolved by a fake LookupAccountName. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "service/config.h"

#define SMB_SID "S-1-5-21-1-2-3-1001"
#define DISK_SID "S-1-5-21-1-2-3-1002"

static bool fake_lookup(void *ctx, const char *account, cp_sid *out, char *why, size_t cap)
{
    (void)ctx;
    if (strcmp(account, "csi-proxy-smb") == 0)
        return cp_sid_parse(SMB_SID, out);
    if (strcmp(account, "csi-proxy-disk") == 0)
        return cp_sid_parse(DISK_SID, out);
    snprintf(why, cap, "No mapping between account names and security IDs was done");
    return false;
}

static void load(cp_config *c, const char *path)
{
    cp_error e = {0};
    int rc = cp_config_load_file(c, path, fake_lookup, NULL, &e);
    if (rc != CP_OK)
        fail_msg("%s: %s", path, e.msg);
}

static void test_example_loads(void **state)
{
    (void)state;
    cp_config c;
    load(&c, "config/csi-proxy.example.yaml");
    /* the key is shown at its default: foreign file systems are refused */
    assert_false(c.volume.format_foreign_filesystems);
    cp_config_free(&c);
}

static void expect_group(const cp_config *c, const char *group, const char *sddl)
{
    const cp_config_group *g = cp_config_group_of(c, group);
    assert_non_null(g);
    if (sddl == NULL) {
        assert_false(g->served);
        return;
    }
    assert_true(g->served);
    if (strcmp(g->pipe_sddl, sddl) != 0)
        fail_msg("%s: pipe security %s, expected %s", group, g->pipe_sddl, sddl);
    assert_int_equal(g->pipe_sddl_line, 0); /* derived from the callers, not written */
}

static void test_least_privilege(void **state)
{
    (void)state;
    cp_config c;
    load(&c, "config/csi-proxy.least-privilege.example.yaml");
    expect_group(&c, "filesystem", "D:P(A;;GA;;;SY)(A;;FRFW;;;" SMB_SID ")");
    expect_group(&c, "smb", "D:P(A;;GA;;;SY)(A;;FRFW;;;" SMB_SID ")");
    expect_group(&c, "disk", NULL);
    expect_group(&c, "volume", NULL);
    expect_group(&c, "system", NULL);
    expect_group(&c, "iscsi", NULL);
    /* no group admits BUILTIN\Administrators by its callers either */
    cp_sid admins;
    assert_true(cp_sid_parse("S-1-5-32-544", &admins));
    for (size_t i = 0; i < CP_CONFIG_N_GROUPS; i++)
        for (size_t j = 0; j < c.groups[i].n_allowed; j++)
            assert_false(cp_sid_equal(&c.groups[i].allowed[j], &admins));
    cp_config_free(&c);
}

/* No pipe of the least-privilege example is shared by two principals
 * besides SYSTEM: a caller the DACL lets write to a pipe can also create a
 * server instance of it (FILE_APPEND_DATA is FILE_CREATE_PIPE_INSTANCE,
 * "Named Pipe Security and Access Rights", Microsoft Learn) and receive
 * the other's calls; so one plugin's group per node, and its pipes are its
 * own. */
static void test_least_privilege_shares_no_pipe(void **state)
{
    (void)state;
    cp_config c;
    load(&c, "config/csi-proxy.least-privilege.example.yaml");
    cp_sid sy;
    assert_true(cp_sid_parse("S-1-5-18", &sy));
    const cp_sid *who = NULL;
    for (size_t i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        const cp_config_group *g = &c.groups[i];
        if (!g->served)
            continue;
        for (size_t j = 0; j < g->n_allowed; j++) {
            if (cp_sid_equal(&g->allowed[j], &sy))
                continue;
            if (who == NULL)
                who = &g->allowed[j];
            else if (!cp_sid_equal(who, &g->allowed[j]))
                fail_msg("group %s's pipes are shared by two principals besides SYSTEM", g->name);
        }
    }
    assert_non_null(who);
    cp_config_free(&c);
}

static void test_least_privilege_needs_the_groups(void **state)
{
    (void)state;
    cp_config c;
    cp_error e = {0};
    /* without the local groups (no resolver, as on a node where they were not
     * created) the file is refused, naming the account */
    assert_int_equal(
        cp_config_load_file(&c, "config/csi-proxy.least-privilege.example.yaml", NULL, NULL, &e),
        CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "csi-proxy-"));
    cp_config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_loads),
        cmocka_unit_test(test_least_privilege),
        cmocka_unit_test(test_least_privilege_shares_no_pipe),
        cmocka_unit_test(test_least_privilege_needs_the_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
