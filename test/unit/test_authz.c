/* test_authz.c - the caller authorization decision (security/authz.c) over
 * many token shapes: what a real Windows node hands the service for an
 * elevated admin, a UAC-filtered or restricted admin (Administrators
 * deny-only), SYSTEM, ContainerAdministrator and ContainerUser pods,
 * tokens with restricting SIDs, disabled and deny-only groups, integrity
 * labels, unknown SIDs, and policies that are empty or name lookalike SIDs.
 * Every "deny" case is an attack the decision must stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "security/authz.h"
#include "security/broad.h"

#define EN                                                                                         \
    (CP_SE_GROUP_MANDATORY | CP_SE_GROUP_ENABLED_BY_DEFAULT | CP_SE_GROUP_ENABLED) /* 0x7   \
                                                                                           */
#define EN_OWNER (EN | CP_SE_GROUP_OWNER)                                          /* 0xf */
#define DENY_ONLY                                                                                  \
    (CP_SE_GROUP_USE_FOR_DENY_ONLY | CP_SE_GROUP_MANDATORY | CP_SE_GROUP_OWNER) /* 0x19 */
#define LOGON (CP_SE_GROUP_LOGON_ID | EN)
#define LABEL (CP_SE_GROUP_INTEGRITY | CP_SE_GROUP_INTEGRITY_ENABLED)

#define SYSTEM "S-1-5-18"
#define ADMINS "S-1-5-32-544"
#define USERS "S-1-5-32-545"
#define EVERYONE "S-1-1-0"
#define AUTH_USERS "S-1-5-11"
#define INTERACTIVE "S-1-5-4"
#define CADMIN "S-1-5-93-2-1"
#define CUSER "S-1-5-93-2-2"
#define ALICE "S-1-5-21-1004336348-1177238915-682003330-1001"
#define DOMAIN_USERS "S-1-5-21-1004336348-1177238915-682003330-513"
#define SMB_GROUP "S-1-5-21-1004336348-1177238915-682003330-1104"
#define HIGH "S-1-16-12288"

/* A token built from strings: "SID:attr" pairs. */
typedef struct tok {
    const char *user;
    uint32_t user_attr;
    const char *groups[12];
    uint32_t attrs[12];
    const char *restricting[4]; /* non-NULL first entry: a restricted token */
} tok;

static cp_token_sid gbuf[16], rbuf[8];

static cp_token_info build(const tok *t)
{
    cp_token_info ti = {.identified = true};
    assert_true(cp_sid_parse(t->user, &ti.user.sid));
    ti.user.attributes = t->user_attr;
    size_t n = 0;
    for (; n < 12 && t->groups[n] != NULL; n++) {
        assert_true(cp_sid_parse(t->groups[n], &gbuf[n].sid));
        gbuf[n].attributes = t->attrs[n];
    }
    ti.groups = gbuf;
    ti.n_groups = n;
    size_t r = 0;
    for (; r < 4 && t->restricting[r] != NULL; r++) {
        assert_true(cp_sid_parse(t->restricting[r], &rbuf[r].sid));
        rbuf[r].attributes = EN;
    }
    if (r > 0) {
        ti.restricted = true;
        ti.restricting = rbuf;
        ti.n_restricting = r;
    }
    return ti;
}

static cp_sid pol_sids[8];

static cp_authz_policy policy(const char *const *sids)
{
    size_t n = 0;
    for (; sids[n] != NULL; n++)
        assert_true(cp_sid_parse(sids[n], &pol_sids[n]));
    return (cp_authz_policy){"filesystem", pol_sids, n};
}

/* ---- tokens as Windows hands them out -------------------------------------- */

/* An elevated administrator (what csi-proxy clients in HostProcess pods
 * running as an admin account look like). */
static const tok admin = {
    ALICE,
    0,
    {DOMAIN_USERS, EVERYONE, ADMINS, USERS, INTERACTIVE, AUTH_USERS, "S-1-5-5-0-12345", HIGH},
    {EN, EN, EN_OWNER, EN, EN, EN, LOGON, LABEL}};

/* The same admin, UAC-filtered or through CreateRestrictedToken with
 * Administrators disabled: Administrators is deny-only (0x10 / 0x19). */
static const tok restricted_admin = {ALICE,
                                     0,
                                     {DOMAIN_USERS, EVERYONE, ADMINS, USERS, INTERACTIVE,
                                      AUTH_USERS, "S-1-5-5-0-12345", "S-1-16-8192"},
                                     {EN, EN, DENY_ONLY, EN, EN, EN, LOGON, LABEL}};

static const tok uac_filtered_admin = {
    ALICE, 0, {DOMAIN_USERS, EVERYONE, ADMINS, USERS}, {EN, EN, CP_SE_GROUP_USE_FOR_DENY_ONLY, EN}};

static const tok system_tok = {
    SYSTEM, 0, {ADMINS, EVERYONE, AUTH_USERS, "S-1-16-16384"}, {EN_OWNER, EN, EN, LABEL}};

/* A Windows container's ContainerAdministrator: its own user SID, and
 * BUILTIN\Administrators enabled. */
static const tok container_admin = {
    CADMIN, 0, {ADMINS, EVERYONE, USERS, AUTH_USERS, HIGH}, {EN_OWNER, EN, EN, EN, LABEL}};

/* ContainerUser: no Administrators at all. */
static const tok container_user = {
    CUSER, 0, {EVERYONE, USERS, AUTH_USERS, "S-1-16-8192"}, {EN, EN, EN, LABEL}};

static const tok plain_user = {
    ALICE, 0, {DOMAIN_USERS, EVERYONE, USERS, AUTH_USERS, SMB_GROUP}, {EN, EN, EN, EN, EN}};

/* A restricted token (CreateRestrictedToken with restricting SIDs): groups
 * enabled, but access needs a match in both lists. */
static const tok restricting_admin = {
    ALICE, 0, {ADMINS, EVERYONE, USERS}, {EN_OWNER, EN, EN}, {EVERYONE, USERS}};

static const tok restricting_admin_ok = {
    ALICE, 0, {ADMINS, EVERYONE, USERS}, {EN_OWNER, EN, EN}, {ADMINS, EVERYONE}};

static const char *const default_policy[] = {SYSTEM, ADMINS, NULL};

typedef struct {
    const char *name;
    const tok *t;
    const char *const *policy;
    bool allow;
    const char *why; /* substring of the explanation */
} kase;

static const char *const smb_only[] = {SMB_GROUP, NULL};
static const char *const cuser_pol[] = {CUSER, NULL};
static const char *const cadmin_pol[] = {CADMIN, NULL};
static const char *const alice_pol[] = {ALICE, NULL};
static const char *const high_pol[] = {HIGH, NULL};
static const char *const logon_pol[] = {"S-1-5-5-0-12345", NULL};
static const char *const lookalikes[] = {"S-1-5-32-5440", "S-1-5-32",      "S-1-5-32-544-1",
                                         "S-1-5-18-0",    "S-1-15-32-544", NULL};
static const char *const unknown_pol[] = {"S-1-5-21-9-9-9-9999", NULL};
static const char *const empty_pol[] = {NULL};
static const char *const everyone_pol[] = {EVERYONE, NULL};

static const kase cases[] = {
    {"elevated admin, default policy", &admin, default_policy, true, "member of S-1-5-32-544"},
    {"restricted admin (Administrators deny-only)", &restricted_admin, default_policy, false,
     "has S-1-5-32-544 only for deny"},
    {"UAC-filtered admin", &uac_filtered_admin, default_policy, false, "only for deny"},
    {"SYSTEM by its user SID", &system_tok, default_policy, true, "member of S-1-5-18"},
    {"ContainerAdministrator through Administrators", &container_admin, default_policy, true,
     "member of S-1-5-32-544"},
    {"ContainerAdministrator by its own SID", &container_admin, cadmin_pol, true,
     "member of S-1-5-93-2-1"},
    {"ContainerUser, default policy", &container_user, default_policy, false,
     "not an enabled member"},
    {"ContainerUser, allowed by its SID", &container_user, cuser_pol, true, "member of"},
    {"ContainerUser is not ContainerAdministrator", &container_user, cadmin_pol, false, ""},
    {"plain user, default policy", &plain_user, default_policy, false, "[S-1-5-18 S-1-5-32-544]"},
    {"plain user in the SMB plugin group", &plain_user, smb_only, true, SMB_GROUP},
    {"admin not in the SMB plugin group", &admin, smb_only, false, ""},
    {"restricting SIDs without Administrators", &restricting_admin, default_policy, false,
     "outside its restricting SIDs"},
    {"restricting SIDs with Administrators", &restricting_admin_ok, default_policy, true, ""},
    {"integrity label never counts", &admin, high_pol, false, ""},
    {"logon SID counts (it is enabled)", &admin, logon_pol, true, ""},
    {"lookalike SIDs do not match", &admin, lookalikes, false, ""},
    {"unknown SID in the policy", &admin, unknown_pol, false, ""},
    {"empty policy refuses everyone", &admin, empty_pol, false, "no caller is allowed"},
    {"empty policy refuses SYSTEM", &system_tok, empty_pol, false, ""},
    {"user SID allowed", &plain_user, alice_pol, true, ALICE},
    {"Everyone allowed: even ContainerUser", &container_user, everyone_pol, true, ""},
};

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const kase *k = &cases[i];
        cp_token_info ti = build(k->t);
        cp_authz_policy p = policy(k->policy);
        char why[512];
        bool got = cp_authz_decide(&ti, &p, why, sizeof(why));
        if (got != k->allow)
            fail_msg("%s: got %s (%s)", k->name, got ? "allow" : "deny", why);
        if (strstr(why, k->why) == NULL)
            fail_msg("%s: want \"%s\" in \"%s\"", k->name, k->why, why);
    }
}

/* ---- attribute-level attacks ------------------------------------------------- */

static cp_token_info one_group(const char *user, uint32_t user_attr, const char *g, uint32_t attr)
{
    static tok t;
    memset(&t, 0, sizeof(t));
    t.user = user;
    t.user_attr = user_attr;
    t.groups[0] = EVERYONE;
    t.attrs[0] = EN;
    t.groups[1] = g;
    t.attrs[1] = attr;
    return build(&t);
}

static void test_attributes(void **state)
{
    (void)state;
    cp_sid admins;
    assert_true(cp_sid_parse(ADMINS, &admins));
    struct {
        uint32_t attr;
        bool member;
    } a[] = {
        {EN, true},
        {CP_SE_GROUP_ENABLED, true},
        {EN_OWNER, true},
        {0, false},                                                      /* disabled */
        {CP_SE_GROUP_ENABLED_BY_DEFAULT | CP_SE_GROUP_MANDATORY, false}, /* not enabled now */
        {CP_SE_GROUP_USE_FOR_DENY_ONLY, false},
        {EN | CP_SE_GROUP_USE_FOR_DENY_ONLY, false}, /* both bits: deny-only wins */
        {DENY_ONLY, false},
        {EN | CP_SE_GROUP_INTEGRITY, false},
        {EN | CP_SE_GROUP_RESOURCE, true},
    };
    for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
        cp_token_info ti = one_group(ALICE, 0, ADMINS, a[i].attr);
        if (cp_authz_member(&ti, &admins) != a[i].member)
            fail_msg("attributes 0x%x: want member=%d", a[i].attr, a[i].member);
    }
    /* A deny-only user SID does not count for the user. */
    cp_sid alice;
    assert_true(cp_sid_parse(ALICE, &alice));
    cp_token_info ti = one_group(ALICE, CP_SE_GROUP_USE_FOR_DENY_ONLY, USERS, EN);
    assert_false(cp_authz_member(&ti, &alice));
    ti = one_group(ALICE, 0, USERS, EN);
    assert_true(cp_authz_member(&ti, &alice));
}

static void test_duplicate_sid_deny_wins(void **state)
{
    (void)state;
    tok t = {ALICE, 0, {ADMINS, ADMINS}, {EN, DENY_ONLY}};
    cp_token_info ti = build(&t);
    cp_authz_policy p = policy(default_policy);
    assert_false(cp_authz_decide(&ti, &p, NULL, 0));
    tok t2 = {ALICE, 0, {ADMINS, ADMINS}, {DENY_ONLY, EN}};
    ti = build(&t2);
    assert_false(cp_authz_decide(&ti, &p, NULL, 0));
    /* the user SID repeated as a deny-only group */
    tok t3 = {ALICE, 0, {ALICE}, {DENY_ONLY}};
    ti = build(&t3);
    cp_authz_policy pa = policy(alice_pol);
    assert_false(cp_authz_decide(&ti, &pa, NULL, 0));
}

static void test_restricting_deny_only(void **state)
{
    (void)state;
    tok t = {ALICE, 0, {ADMINS}, {EN}, {ADMINS}};
    cp_token_info ti = build(&t);
    rbuf[0].attributes = CP_SE_GROUP_USE_FOR_DENY_ONLY;
    cp_authz_policy p = policy(default_policy);
    assert_false(cp_authz_decide(&ti, &p, NULL, 0));
    rbuf[0].attributes = EN;
    assert_true(cp_authz_decide(&ti, &p, NULL, 0));
}

static void test_fail_closed(void **state)
{
    (void)state;
    cp_authz_policy p = policy(default_policy);
    char why[256];
    assert_false(cp_authz_decide(NULL, &p, why, sizeof(why)));
    assert_non_null(strstr(why, "could not be identified"));
    cp_token_info ti = build(&admin);
    ti.identified = false; /* the token could not be read */
    assert_false(cp_authz_decide(&ti, &p, why, sizeof(why)));
    ti.identified = true;
    assert_false(cp_authz_decide(&ti, NULL, why, sizeof(why)));
    cp_authz_policy empty = {"smb", NULL, 0};
    assert_false(cp_authz_decide(&ti, &empty, why, sizeof(why)));
    assert_non_null(strstr(why, "smb group"));
    /* a zero-length SID in a policy never matches anything */
    cp_sid zero = {0};
    cp_authz_policy z = {"x", &zero, 1};
    assert_false(cp_authz_decide(&ti, &z, NULL, 0));
    /* tiny or no explanation buffer is fine */
    assert_true(cp_authz_decide(&ti, &p, why, 1));
    assert_true(cp_authz_decide(&ti, &p, NULL, 0));
}

static void test_many_groups(void **state)
{
    (void)state;
    enum { N = 2000 };
    cp_token_sid *g = calloc(N, sizeof(*g));
    assert_non_null(g);
    for (int i = 0; i < N; i++) {
        char s[64];
        snprintf(s, sizeof(s), "S-1-5-21-1-2-3-%d", 10000 + i);
        assert_true(cp_sid_parse(s, &g[i].sid));
        g[i].attributes = EN;
    }
    cp_token_info ti = {.identified = true, .groups = g, .n_groups = N};
    assert_true(cp_sid_parse(ALICE, &ti.user.sid));
    cp_sid want;
    assert_true(cp_sid_parse("S-1-5-21-1-2-3-11999", &want));
    cp_authz_policy p = {"disk", &want, 1};
    assert_true(cp_authz_decide(&ti, &p, NULL, 0));
    g[N - 1].attributes = DENY_ONLY;
    assert_false(cp_authz_decide(&ti, &p, NULL, 0));
    free(g);
}

/* which SIDs are broad groups (refused as callers
 * unless security.allowBroadCallers), and which are not. */
static void test_broad_groups(void **state)
{
    (void)state;
    const char *broad[] = {"S-1-1-0",
                           "S-1-5-7",
                           "S-1-5-11",
                           "S-1-5-32-545",
                           "S-1-5-32-546",
                           "S-1-5-4",
                           "S-1-5-2",
                           "S-1-5-6",
                           "S-1-2-0",
                           "S-1-15-2-1",
                           "S-1-5-21-1-2-3-513",
                           "S-1-5-21-1-2-3-514",
                           "S-1-5-21-1-2-3-515",
                           "S-1-5-21-1-2-3-501"};
    const char *narrow[] = {
        "S-1-5-18",      "S-1-5-32-544",       "S-1-5-93-2-1",        "S-1-5-93-2-2",
        "S-1-5-19",      "S-1-5-21-1-2-3-512", "S-1-5-21-1-2-3-1105", "S-1-5-21-1-2-3-500",
        "S-1-5-32-545-1"};
    for (size_t i = 0; i < sizeof(broad) / sizeof(broad[0]); i++) {
        cp_sid sid;
        assert_true(cp_sid_parse(broad[i], &sid));
        if (cp_broad_sid(&sid) == NULL)
            fail_msg("%s should be broad", broad[i]);
    }
    for (size_t i = 0; i < sizeof(narrow) / sizeof(narrow[0]); i++) {
        cp_sid sid;
        assert_true(cp_sid_parse(narrow[i], &sid));
        if (cp_broad_sid(&sid) != NULL)
            fail_msg("%s should not be broad: %s", narrow[i], cp_broad_sid(&sid));
    }
    char which[128];
    assert_true(cp_broad_sddl("D:P(A;;GA;;;SY)(A;;0x12019f;;;IU)", which, sizeof(which)));
    assert_string_equal(which, "IU (INTERACTIVE)");
    assert_false(cp_broad_sddl("D:P(A;;GA;;;SY)(D;;GA;;;WD)(A;;GA;;;BA)", which, sizeof(which)));
    /* an owner or group is granted nothing by the DACL */
    assert_false(cp_broad_sddl("O:BUG:BUD:P(A;;GA;;;SY)", which, sizeof(which)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_duplicate_sid_deny_wins),
        cmocka_unit_test(test_restricting_deny_only),
        cmocka_unit_test(test_fail_closed),
        cmocka_unit_test(test_many_groups),
        cmocka_unit_test(test_broad_groups),
    };
    return cmocka_run_group_tests_name("authz", tests, NULL, NULL);
}
