/* test_filesec.c - the judgement on the configuration file's and its
 * folder's security descriptor (security/filesec.c): who owns it and who
 * may do more than read it. The descriptors are those a Windows node
 * shows: the protected folder the installer makes, ProgramData's own
 * inherited entries, a folder a user created under ProgramData, a file
 * under a C:\ folder (Authenticated Users: Modify), what Wine synthesises
 * from Unix modes, and each right that lets someone else change the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "security/filesec.h"

#define SY "S-1-5-18"
#define BA "S-1-5-32-544"
#define BU "S-1-5-32-545"
#define AU "S-1-5-11"
#define WD "S-1-1-0"
#define CO "S-1-3-0"
#define OW "S-1-3-4"
#define TI "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"
#define ALICE "S-1-5-21-1004336348-1177238915-682003330-1001"
#define WINEUSER "S-1-5-21-0-0-0-1000"

#define FA 0x001F01FFu  /* FILE_ALL_ACCESS */
#define RX 0x001200A9u  /* read and execute */
#define MOD 0x001301BFu /* Modify */
#define OI 0x01
#define CI 0x02
#define IO 0x08
#define ID 0x10

typedef struct ace_spec {
    uint8_t type, flags;
    uint32_t mask;
    const char *sid;
} ace_spec;

typedef struct sd_spec {
    const char *name;
    const char *owner; /* NULL: none */
    bool null_dacl;
    ace_spec aces[8];
    const char *self;   /* the service's account, NULL: none */
    int want;           /* CP_FILESEC_* */
    const char *who;    /* expected principal, or NULL */
    uint32_t want_mask; /* for GRANTS */
} sd_spec;

static cp_filesec_ace abuf[8];

static bool judge(const sd_spec *s, cp_filesec_verdict *v)
{
    cp_filesec_sd sd = {.has_owner = s->owner != NULL, .has_dacl = !s->null_dacl};
    if (s->owner != NULL)
        assert_true(cp_sid_parse(s->owner, &sd.owner));
    size_t n = 0;
    for (; n < 8 && s->aces[n].sid != NULL; n++) {
        abuf[n].type = s->aces[n].type;
        abuf[n].flags = s->aces[n].flags;
        abuf[n].mask = s->aces[n].mask;
        assert_true(cp_sid_parse(s->aces[n].sid, &abuf[n].sid));
    }
    sd.aces = abuf;
    sd.n_aces = n;
    cp_sid self;
    if (s->self != NULL)
        assert_true(cp_sid_parse(s->self, &self));
    return cp_filesec_judge(&sd, s->self != NULL ? &self : NULL, v);
}

#define A CP_ACE_ALLOWED
#define D CP_ACE_DENIED

static const sd_spec cases[] = {
    /* Accepted. */
    {"the installer's protected folder",
     BA,
     false,
     {{A, OI | CI, FA, SY}, {A, OI | CI, FA, BA}},
     NULL,
     CP_FILESEC_OK,
     NULL,
     0},
    {"a file in it (inherited)",
     BA,
     false,
     {{A, ID, FA, SY}, {A, ID, FA, BA}},
     NULL,
     CP_FILESEC_OK,
     NULL,
     0},
    {"owned by SYSTEM", SY, false, {{A, 0, FA, SY}}, NULL, CP_FILESEC_OK, NULL, 0},
    {"owned by TrustedInstaller",
     TI,
     false,
     {{A, 0, FA, TI}, {A, 0, RX, BU}},
     NULL,
     CP_FILESEC_OK,
     NULL,
     0},
    {"an admin's folder under ProgramData: Users read, CREATOR OWNER inherit-only",
     BA,
     false,
     {{A, ID, FA, SY},
      {A, ID, FA, BA},
      {A, OI | CI | IO | ID, FA, CO},
      {A, OI | CI | ID, RX, BU},
      {A, CI | IO | ID, 0x116, BU}},
     NULL,
     CP_FILESEC_OK,
     NULL,
     0},
    {"everyone may read (generic read and execute)",
     BA,
     false,
     {{A, 0, FA, SY}, {A, 0, 0xA0000000u, WD}},
     NULL,
     CP_FILESEC_OK,
     NULL,
     0},
    {"a deny entry for Everyone takes away only",
     BA,
     false,
     {{D, 0, FA, WD}, {A, 0, FA, SY}},
     NULL,
     CP_FILESEC_OK,
     NULL,
     0},
    {"OWNER RIGHTS full (the owner is trusted)",
     BA,
     false,
     {{A, 0, FA, OW}},
     NULL,
     CP_FILESEC_OK,
     NULL,
     0},
    {"an inherit-only write entry does not apply to the object",
     SY,
     false,
     {{A, OI | IO, FA, BU}},
     NULL,
     CP_FILESEC_OK,
     NULL,
     0},
    {"Wine: owned by the service's own account, Everyone read",
     WINEUSER,
     false,
     {{A, 0, FA, SY}, {A, 0, FA, WINEUSER}, {A, 0, RX, WD}},
     WINEUSER,
     CP_FILESEC_OK,
     NULL,
     0},
    {"an empty DACL (nobody has access)", SY, false, {{0}}, NULL, CP_FILESEC_OK, NULL, 0},

    /* Refused: the owner. */
    {"no owner", NULL, false, {{A, 0, FA, SY}}, NULL, CP_FILESEC_NO_OWNER, NULL, 0},
    {"owned by a user",
     ALICE,
     false,
     {{A, 0, FA, SY}, {A, 0, FA, BA}},
     NULL,
     CP_FILESEC_BAD_OWNER,
     ALICE,
     0},
    {"owned by a user (a folder a user made under ProgramData)",
     ALICE,
     false,
     {{A, ID, FA, SY}, {A, ID, FA, BA}, {A, ID, FA, ALICE}, {A, OI | CI | ID, RX, BU}},
     NULL,
     CP_FILESEC_BAD_OWNER,
     ALICE,
     0},
    {"owned by Users", BU, false, {{A, 0, FA, SY}}, NULL, CP_FILESEC_BAD_OWNER, BU, 0},
    {"owned by Everyone", WD, false, {{A, 0, FA, SY}}, NULL, CP_FILESEC_BAD_OWNER, WD, 0},
    {"the Wine user is not trusted for another service account",
     WINEUSER,
     false,
     {{A, 0, FA, SY}},
     SY,
     CP_FILESEC_BAD_OWNER,
     WINEUSER,
     0},
    {"a NULL DACL", BA, true, {{0}}, NULL, CP_FILESEC_NULL_DACL, NULL, 0},

    /* Refused: an entry gives someone else more than reading. */
    {"Everyone full control",
     BA,
     false,
     {{A, 0, FA, SY}, {A, 0, FA, WD}},
     NULL,
     CP_FILESEC_GRANTS,
     WD,
     FA & ~RX},
    {"Wine: a world-writable file (mode 0666)",
     WINEUSER,
     false,
     {{A, 0, FA, SY}, {A, 0, FA, WINEUSER}, {A, 0, 0x1301FFu, WD}},
     WINEUSER,
     CP_FILESEC_GRANTS,
     WD,
     0x1301FFu & ~RX},
    {"a folder under C:\\ (Authenticated Users: Modify)",
     BA,
     false,
     {{A, ID, FA, SY}, {A, ID, FA, BA}, {A, OI | CI | ID, RX, BU}, {A, ID, MOD, AU}},
     NULL,
     CP_FILESEC_GRANTS,
     AU,
     MOD & ~RX},
    {"ProgramData itself (Users may add files and folders)",
     SY,
     false,
     {{A, OI | CI, FA, SY}, {A, OI | CI, FA, BA}, {A, OI | CI, RX, BU}, {A, CI, 0x116, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     BU,
     0x116},
    {"Users: FILE_WRITE_DATA only", SY, false, {{A, 0, 0x2, BU}}, NULL, CP_FILESEC_GRANTS, BU, 0x2},
    {"Users: FILE_APPEND_DATA only",
     SY,
     false,
     {{A, 0, 0x4, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     BU,
     0x4},
    {"Users: FILE_WRITE_EA", SY, false, {{A, 0, 0x10, BU}}, NULL, CP_FILESEC_GRANTS, BU, 0x10},
    {"Users: FILE_DELETE_CHILD", SY, false, {{A, 0, 0x40, BU}}, NULL, CP_FILESEC_GRANTS, BU, 0x40},
    {"Users: FILE_WRITE_ATTRIBUTES",
     SY,
     false,
     {{A, 0, 0x100, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     BU,
     0x100},
    {"Users: DELETE", SY, false, {{A, 0, 0x10000, BU}}, NULL, CP_FILESEC_GRANTS, BU, 0x10000},
    {"Users: WRITE_DAC", SY, false, {{A, 0, 0x40000, BU}}, NULL, CP_FILESEC_GRANTS, BU, 0x40000},
    {"Users: WRITE_OWNER", SY, false, {{A, 0, 0x80000, BU}}, NULL, CP_FILESEC_GRANTS, BU, 0x80000},
    {"Users: GENERIC_WRITE",
     SY,
     false,
     {{A, 0, 0x40000000u, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     BU,
     0x40000000u},
    {"Users: GENERIC_ALL",
     SY,
     false,
     {{A, 0, 0x10000000u, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     BU,
     0x10000000u},
    {"Users: MAXIMUM_ALLOWED",
     SY,
     false,
     {{A, 0, 0x02000000u, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     BU,
     0x02000000u},
    {"Users: a bit without a name",
     SY,
     false,
     {{A, 0, 0x00000200u | RX, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     BU,
     0x200},
    {"a user: read plus write (the first bad entry is named)",
     SY,
     false,
     {{A, 0, RX, WD}, {A, 0, RX | 0x2, ALICE}, {A, 0, FA, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     ALICE,
     0x2},
    {"CREATOR OWNER on the object itself (not inherit-only)",
     SY,
     false,
     {{A, 0, FA, CO}},
     NULL,
     CP_FILESEC_GRANTS,
     CO,
     FA & ~RX},
    {"a conditional (callback) allow entry",
     SY,
     false,
     {{CP_ACE_ALLOWED_CALLBACK, 0, FA, ALICE}},
     NULL,
     CP_FILESEC_GRANTS,
     ALICE,
     FA & ~RX},
    {"an object allow entry",
     SY,
     false,
     {{CP_ACE_ALLOWED_OBJECT, 0, 0x2, BU}},
     NULL,
     CP_FILESEC_GRANTS,
     BU,
     0x2},
    {"an allow entry of an unknown type",
     SY,
     false,
     {{0x15, 0, RX, BU}},
     NULL,
     CP_FILESEC_UNKNOWN_ACE,
     BU,
     0},
    {"a deny entry for the writer does not excuse a later allow to Everyone",
     SY,
     false,
     {{D, 0, FA, ALICE}, {A, 0, 0x2, WD}},
     NULL,
     CP_FILESEC_GRANTS,
     WD,
     0x2},
};

static void test_cases(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const sd_spec *s = &cases[i];
        cp_filesec_verdict v;
        bool ok = judge(s, &v);
        char who[CP_SID_STR_MAX] = "";
        if (s->who != NULL)
            cp_sid_format(&v.who, who, sizeof(who));
        bool right = ok == (s->want == CP_FILESEC_OK) && v.what == s->want &&
                     (s->who == NULL || strcmp(who, s->who) == 0) &&
                     (s->want != CP_FILESEC_GRANTS || v.mask == s->want_mask);
        if (!right) {
            fprintf(stderr, "case \"%s\": got %d who=%s mask=0x%lx\n", s->name, v.what, who,
                    (unsigned long)v.mask);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static void test_describe(void **state)
{
    (void)state;
    char out[512];
    cp_filesec_verdict v = {.what = CP_FILESEC_GRANTS, .mask = 0x10042};
    assert_true(cp_sid_parse(WD, &v.who));
    cp_filesec_describe(&v, false, NULL, out, sizeof(out));
    assert_non_null(
        strstr(out, "grants S-1-1-0 (Everyone) FILE_WRITE_DATA|FILE_DELETE_CHILD|DELETE"));
    cp_filesec_describe(&v, true, NULL, out, sizeof(out));
    assert_non_null(strstr(out, "FILE_ADD_FILE|FILE_DELETE_CHILD|DELETE"));
    v.what = CP_FILESEC_BAD_OWNER;
    assert_true(cp_sid_parse(ALICE, &v.who));
    cp_filesec_describe(&v, false, "NODE\\alice", out, sizeof(out));
    assert_non_null(strstr(out, "is owned by " ALICE " (NODE\\alice), not by SYSTEM"));
    v.what = CP_FILESEC_NULL_DACL;
    cp_filesec_describe(&v, false, NULL, out, sizeof(out));
    assert_non_null(strstr(out, "no DACL"));
    char r[128];
    assert_string_equal(cp_filesec_rights(0x00000200u | 0x2, false, r, sizeof(r)),
                        "FILE_WRITE_DATA|0x00000200");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
