/* test_config.c - the YAML configuration (service/config.c), SIDs
 * (security/sid.c) and the pipe SDDL check (security/sddl.c): the example
 * file loads, defaults, flags override the file, and every kind of bad
 * input is refused with file:line and the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "service/cfgpolicy.h"
#include "service/config.h"
#include "base/log.h"
#include "security/sddl.h"
#include "security/sid.h"

/* ---- helpers -------------------------------------------------------------- */

static int load(cp_config *c, const char *yaml, cp_error *e)
{
    return cp_config_load_string(c, "t.yaml", yaml, strlen(yaml), NULL, NULL, e);
}

/* Loads yaml, expects INVALID_ARGUMENT with "t.yaml:<line>: " and sub. */
static void expect_error(const char *yaml, int line, const char *sub)
{
    cp_config c;
    cp_error e;
    int rc = load(&c, yaml, &e);
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "t.yaml:%d: ", line);
    if (rc != CP_E_INVALID_ARGUMENT || strncmp(e.msg, prefix, strlen(prefix)) != 0 ||
        strstr(e.msg, sub) == NULL)
        fail_msg("yaml:\n%s\nwant line %d and \"%s\"; got rc %d: %s", yaml, line, sub, rc, e.msg);
    cp_config_free(&c);
}

static const char *sid_str(const cp_sid *s)
{
    static char buf[CP_SID_STR_MAX];
    return cp_sid_format(s, buf, sizeof(buf));
}

/* ---- SIDs ----------------------------------------------------------------- */

static void test_sid_parse_and_format(void **state)
{
    (void)state;
    const char *good[] = {"S-1-5-18",
                          "S-1-5-32-544",
                          "S-1-5-21-1004336348-1177238915-682003330-512",
                          "S-1-5-93-2-1",
                          "S-1-16-12288",
                          "S-1-0x1234567890AB-1",
                          "S-1-5-4294967295",
                          "S-1-1-0-1-2-3-4-5-6-7-8-9-10-11-12-13-14"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        cp_sid s;
        assert_true(cp_sid_parse(good[i], &s));
        assert_string_equal(sid_str(&s), good[i]);
    }
    cp_sid s;
    assert_true(cp_sid_parse("s-1-5-18", &s)); /* as ConvertStringSidToSid */
    assert_string_equal(sid_str(&s), "S-1-5-18");
    const char *bad[] = {"",
                         "S",
                         "S-",
                         "S-1",
                         "S-1-5",
                         "S-2-5-18",
                         "S-1-5-",
                         "S-1--18",
                         "S-1-5-18-",
                         "S-1-5-18x",
                         " S-1-5-18",
                         "S-1-5-4294967296",
                         "S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16",
                         "S-1-0x1234567890ABC-1",
                         "S-1-5-+18",
                         "S-1-5--1",
                         "BA",
                         "SYSTEM",
                         "S-1-5-18\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cp_sid_parse(bad[i], &s))
            fail_msg("accepted bad SID \"%s\"", bad[i]);
    cp_sid a, b;
    assert_true(cp_sid_parse("S-1-5-32-544", &a));
    assert_true(cp_sid_parse("S-1-5-32-5440", &b));
    assert_false(cp_sid_equal(&a, &b));
    assert_true(cp_sid_parse("S-1-5-32", &b));
    assert_false(cp_sid_equal(&a, &b));
}

static void test_sid_names_and_aliases(void **state)
{
    (void)state;
    struct {
        const char *name, *sid;
    } names[] = {{"SYSTEM", "S-1-5-18"},
                 {"nt authority\\system", "S-1-5-18"},
                 {"BUILTIN\\Administrators", "S-1-5-32-544"},
                 {"administrators", "S-1-5-32-544"},
                 {"ContainerAdministrator", "S-1-5-93-2-1"},
                 {"User Manager\\ContainerUser", "S-1-5-93-2-2"},
                 {"Everyone", "S-1-1-0"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        cp_sid s;
        assert_true(cp_sid_well_known_name(names[i].name, &s));
        assert_string_equal(sid_str(&s), names[i].sid);
    }
    cp_sid s;
    assert_false(cp_sid_well_known_name("CORP\\csi-smb", &s));
    assert_true(cp_sid_alias("SY", &s));
    assert_string_equal(sid_str(&s), "S-1-5-18");
    assert_true(cp_sid_alias("BA", &s));
    assert_string_equal(cp_sid_alias_of(&s), "BA");
    assert_false(cp_sid_alias("DA", &s)); /* needs a domain */
    assert_true(cp_sid_alias_known("DA"));
    assert_false(cp_sid_alias_known("ZZ"));
    assert_false(cp_sid_alias_known("sy"));
}

/* ---- SDDL ----------------------------------------------------------------- */

static void test_sddl_check(void **state)
{
    (void)state;
    const char *good[] = {"D:P(A;;GA;;;SY)(A;;GA;;;BA)",
                          "O:SYG:SYD:P(A;;GA;;;SY)",
                          "D:PAI(A;;GRGW;;;S-1-5-21-1-2-3-1104)(D;;GA;;;AN)(A;;GA;;;SY)",
                          "D:P(A;;0x12019f;;;BA)",
                          "D:P(A;OICI;FA;;;SY)",
                          "O:S-1-5-18D:P(A;;GA;;;BA)",
                          "D:P(A;;GA;;;SY)S:(ML;;NW;;;LW)"};
    char why[256];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (!cp_sddl_check(good[i], why, sizeof(why)))
            fail_msg("refused \"%s\": %s", good[i], why);
    struct {
        const char *sddl, *why;
    } bad[] = {
        {"", "empty"},
        {"O:SY", "no DACL"},
        {"D:(A;;GA;;;SY)", "protected"},
        {"D:AI(A;;GA;;;SY)", "protected"},
        {"D:NO_ACCESS_CONTROL", "NO_ACCESS_CONTROL"},
        {"D:P", "allows no one"},
        {"D:P(D;;GA;;;WD)", "allows no one"},
        {"D:P(A;;GZ;;;SY)", "unknown access right \"GZ\""},
        {"D:P(A;;;;;SY)", "without access rights"},
        {"D:P(A;;GA;;;ZZ)", "unknown SID alias \"ZZ\""},
        {"D:P(A;;GA;;;S-1-5-x)", "malformed SID"},
        {"D:P(A;;GA;;;S-1-5-18", "expected ')'"},
        {"D:P(XA;;GA;;;SY)", "unsupported ACE type"},
        {"D:P(OA;;GA;;;SY)", "unsupported ACE type"},
        {"D:P(A;XX;GA;;;SY)", "unknown ACE flag"},
        {"D:P(A;;GA;12345678-1234-1234-1234-123456789012;;SY)", "object GUIDs"},
        {"D:P(A;;0xZZ;;;SY)", "malformed access mask"},
        {"D:P(A;;GA;;;SY)D:P(A;;GA;;;BA)", "given twice"},
        {"X:P(A;;GA;;;SY)", "expected O:, G:, D: or S:"},
        {"D:P(A;;GA;;;SY)junk", "expected O:, G:, D: or S:"},
        {"D:P(A;;GA;;;SY)S:(A;;GA;;;SY)", "unsupported SACL entry"},
        /* An audit entry makes the SACL one only SeSecurityPrivilege may
         * set: LocalSystem holds it disabled, so the service could not
         * create its pipes on Windows. Refused at load, saying why. */
        {"D:P(A;;GA;;;SY)S:(AU;FA;GA;;;WD)", "SeSecurityPrivilege"},
        {"D:P(A;;GA;;;SY)S:(AU;SAFA;0x12019f;;;S-1-5-21-1-2-3-1104)", "audit entries (AU)"},
        {"D:P(A;;GA;;;SY)S:(ML;;NW;;;LW)(AU;SA;GA;;;WD)", "ERROR_PRIVILEGE_NOT_HELD"},
        {"D:P(A;;GA;;;SY)S:P", "a SACL without a mandatory label"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (cp_sddl_check(bad[i].sddl, why, sizeof(why)))
            fail_msg("accepted \"%s\"", bad[i].sddl);
        if (strstr(why, bad[i].why) == NULL)
            fail_msg("\"%s\": want \"%s\" in \"%s\"", bad[i].sddl, bad[i].why, why);
    }
}

static void test_sddl_grants_system(void **state);

static void test_sddl_for_sids(void **state)
{
    test_sddl_grants_system(state); /* SYSTEM creates the pipe instances, below */
    cp_sid s[3];
    assert_true(cp_sid_parse("S-1-5-18", &s[0]));
    assert_true(cp_sid_parse("S-1-5-32-544", &s[1]));
    assert_true(cp_sid_parse("S-1-5-21-1-2-3-1104", &s[2]));
    char out[256];
    /* SYSTEM, the service's account, keeps full access; every other caller
     * gets what a client needs and nothing more: FR and FW (read and write
     * data, attributes and extended attributes, READ_CONTROL, SYNCHRONIZE),
     * never WRITE_DAC, WRITE_OWNER or DELETE. */
    assert_int_not_equal(cp_sddl_for_sids(s, 3, out, sizeof(out)), 0);
    assert_string_equal(out, "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)(A;;FRFW;;;S-1-5-21-1-2-3-1104)");
    char why[128];
    assert_true(cp_sddl_check(out, why, sizeof(why)));
    assert_int_equal(cp_sddl_for_sids(s, 3, out, 20), 0); /* does not fit */
    /* without SYSTEM in the list: SY first all the same */
    assert_int_not_equal(cp_sddl_for_sids(s + 1, 2, out, sizeof(out)), 0);
    assert_string_equal(out, "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)(A;;FRFW;;;S-1-5-21-1-2-3-1104)");
    assert_true(cp_sddl_grants_system(out, why, sizeof(why)));
    /* SYSTEM later in the list: first all the same, once */
    cp_sid t[2] = {s[2], s[0]};
    assert_int_not_equal(cp_sddl_for_sids(t, 2, out, sizeof(out)), 0);
    assert_string_equal(out, "D:P(A;;GA;;;SY)(A;;FRFW;;;S-1-5-21-1-2-3-1104)");
}

/* A written DACL that gives a caller more than a client needs is named
 * (the service warns at start): GA, FA, WD, WO, SD or such a mask, for
 * anyone but SYSTEM. */
static void test_sddl_caller_excess(void **state)
{
    (void)state;
    char which[256];
    const char *fine[] = {"D:P(A;;GA;;;SY)(A;;FRFW;;;BA)",
                          "D:P(A;;GA;;;SY)(A;;GRGW;;;BA)(A;;0x12019f;;;S-1-5-21-1-2-3-4)",
                          "D:P(A;;FA;;;S-1-5-18)(D;;GA;;;AN)", "D:P(A;;GA;;;SY)(A;OICIIO;GA;;;BA)"};
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
        if (cp_sddl_caller_excess(fine[i], which, sizeof(which)))
            fail_msg("\"%s\": named %s", fine[i], which);
    assert_true(
        cp_sddl_caller_excess("D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GRGW;;;BU)", which, sizeof(which)));
    assert_string_equal(which, "BA (GA)");
    assert_true(cp_sddl_caller_excess(
        "D:P(A;;GA;;;SY)(A;;GRGWWD;;;S-1-5-21-1-2-3-4)(A;;0x1f01ff;;;BA)", which, sizeof(which)));
    assert_string_equal(which, "S-1-5-21-1-2-3-4 (GRGWWD), BA (0x1f01ff)");
    assert_true(cp_sddl_caller_excess("D:P(A;;GA;;;SY)(A;;FRFWSD;;;BA)", which, sizeof(which)));
    assert_true(cp_sddl_caller_excess("D:P(A;;GA;;;SY)(A;;0x80000;;;BA)", which, sizeof(which)));
}

/* The rights the derived DACL gives a caller, by the masks SDDL's codes
 * stand for ("ACE Strings", "File Security and Access Rights", Microsoft
 * Learn): FR = FILE_GENERIC_READ 0x120089, FW = FILE_GENERIC_WRITE
 * 0x120116; together 0x12019f. That is what go-winio's DialPipe asks for
 * (GENERIC_READ | GENERIC_WRITE mapped for a file), and it holds no
 * WRITE_DAC (0x40000), WRITE_OWNER (0x80000) or DELETE (0x10000). */
static void test_sddl_caller_rights(void **state)
{
    (void)state;
    const unsigned long fr = 0x120089ul, fw = 0x120116ul;
    const unsigned long write_dac = 0x40000ul, write_owner = 0x80000ul, del = 0x10000ul;
    assert_int_equal(fr | fw, 0x12019ful);
    assert_int_equal((fr | fw) & (write_dac | write_owner | del), 0);
    cp_sid s[2];
    assert_true(cp_sid_parse("S-1-5-21-1-2-3-1104", &s[0]));
    assert_true(cp_sid_parse("S-1-5-93-2-1", &s[1]));
    char out[256];
    assert_int_not_equal(cp_sddl_for_sids(s, 2, out, sizeof(out)), 0);
    /* every entry but SYSTEM's grants exactly FRFW */
    int callers = 0;
    for (const char *p = strchr(out, '('); p != NULL; p = strchr(p + 1, '(')) {
        char rights[16], sid[CP_SID_STR_MAX];
        assert_int_equal(sscanf(p, "(A;;%15[^;];;;%191[^)])", rights, sid), 2);
        if (strcmp(sid, "SY") == 0) {
            assert_string_equal(rights, "GA");
        } else {
            assert_string_equal(rights, "FRFW");
            callers++;
        }
    }
    assert_int_equal(callers, 2);
}

/* a pipe DACL that does not let SYSTEM (the service's
 * account) create pipe instances leaves one instance per pipe on Windows:
 * one connection at a time. Refused, saying why and what to add. */
static void test_sddl_grants_system(void **state)
{
    (void)state;
    const char *good[] = {"D:P(A;;GA;;;SY)",
                          "D:P(A;;GA;;;BA)(A;;FA;;;SY)",
                          "D:P(A;;GRGWGA;;;S-1-5-18)",
                          "D:P(A;;0x10000000;;;SY)",
                          "D:P(A;;0x001F01FF;;;SY)(A;;GRGW;;;BU)",
                          "D:P(D;;GA;;;AN)(A;;GA;;;SY)(D;;GA;;;BG)",
                          "D:P(D;;WDWO;;;WD)(A;;GA;;;SY)(D;;0x00040000;;;BA)",
                          "O:SYG:SYD:P(A;OICI;GA;;;SY)S:(ML;;NW;;;LW)"};
    char why[512];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (!cp_sddl_grants_system(good[i], why, sizeof(why)))
            fail_msg("refused \"%s\": %s", good[i], why);
    struct {
        const char *sddl, *why;
    } bad[] = {
        {"D:P(A;;GA;;;BA)", "does not give SY full access"},
        {"D:P(A;;GRGW;;;SY)(A;;GA;;;BA)", "does not give SY full access"},
        {"D:P(A;;0x12019f;;;SY)", "does not give SY full access"},
        {"D:P(A;IO;GA;;;SY)(A;;GA;;;BA)", "does not give SY full access"},
        {"O:SYD:P(A;;GA;;;S-1-5-93-2-2)", "add (A;;GA;;;SY)"},
        {"D:P(D;;GA;;;SY)(A;;GA;;;SY)", "it denies SY, which is the service's account"},
        {"D:P(A;;GA;;;SY)(D;;GR;;;WD)", "it denies WD, which the service's account holds"},
        {"D:P(D;;GA;;;S-1-5-32-544)(A;;GA;;;SY)", "denies S-1-5-32-544"},
        {"D:P(D;;GA;;;AU)(A;;GA;;;SY)", "denies AU"},
        {"D:P(D;;GA;;;WD)(A;;GA;;;SY)", "denies WD"},
        {"D:P(A;;GA;;;SY)(D;;LC;;;WD)", "denies WD"},
        {"D:P(A;;GA;;;SY)(D;;0x4;;;SY)", "denies SY"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (cp_sddl_grants_system(bad[i].sddl, why, sizeof(why)))
            fail_msg("accepted \"%s\"", bad[i].sddl);
        if (strstr(why, bad[i].why) == NULL)
            fail_msg("\"%s\": want \"%s\" in \"%s\"", bad[i].sddl, bad[i].why, why);
        if (strstr(why, "FILE_CREATE_PIPE_INSTANCE") == NULL)
            fail_msg("\"%s\": the reason is not given: %s", bad[i].sddl, why);
    }
}

/* ---- config: defaults and the example -------------------------------------- */

static void test_defaults(void **state)
{
    (void)state;
    cp_config c;
    assert_int_equal(cp_config_defaults(&c), CP_OK);
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        const cp_config_group *g = &c.groups[i];
        assert_true(g->served);
        assert_int_equal(g->n_allowed, 2);
        assert_string_equal(sid_str(&g->allowed[0]), "S-1-5-18");
        assert_string_equal(sid_str(&g->allowed[1]), "S-1-5-32-544");
        assert_string_equal(g->pipe_sddl, "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)");
    }
    assert_true(cp_config_serves(&c, "smb", "v1beta2"));
    assert_false(cp_config_serves(&c, "nosuch", "v1"));
    assert_int_equal(c.limits.max_message_bytes, 4u * 1024 * 1024);
    assert_int_equal(c.limits.drain_timeout_ms, 10000);
    /* Connections are bounded unless the file says otherwise (0: none). */
    assert_int_equal(c.limits.max_connections, 2048);
    assert_int_equal(c.log.v, -1);
    cp_config_free(&c);

    /* An empty file, and one holding only a comment, are the defaults. */
    cp_error e;
    assert_int_equal(load(&c, "", &e), CP_OK);
    assert_true(c.groups[3].served);
    cp_config_free(&c);
    assert_int_equal(load(&c, "# nothing\n", &e), CP_OK);
    assert_string_equal(c.groups[0].pipe_sddl, "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)");
    assert_int_equal(c.limits.max_connections, 2048);
    cp_config_free(&c);
    assert_int_equal(load(&c, "limits:\n  maxConnections: 0\n", &e), CP_OK);
    assert_int_equal(c.limits.max_connections, 0);
    cp_config_free(&c);
}

static void test_example_file(void **state)
{
    (void)state;
    cp_config c;
    cp_error e;
    int rc = cp_config_load_file(&c, "config/csi-proxy.example.yaml", NULL, NULL, &e);
    if (rc != CP_OK)
        fail_msg("example: %s", e.msg);
    assert_string_equal(c.kubelet_path, "C:\\var\\lib\\kubelet");
    assert_int_equal(c.n_working_dirs, 1);
    assert_string_equal(c.working_dirs[0], "C:\\csi");
    assert_true(cp_config_serves(&c, "filesystem", "v1alpha1"));
    assert_true(cp_config_serves(&c, "volume", "v2alpha1"));
    assert_false(cp_config_serves(&c, "volume", "v1alpha1"));
    assert_true(cp_config_serves(&c, "smb", "v1"));
    assert_false(cp_config_serves(&c, "smb", "v1beta2"));
    const cp_config_group *smb = cp_config_group_of(&c, "smb");
    assert_int_equal(smb->n_allowed, 3);
    assert_string_equal(sid_str(&smb->allowed[2]), "S-1-5-21-1004336348-1177238915-682003330-1105");
    /* own callers, no own pipeSecurity: derived from the callers */
    assert_string_equal(smb->pipe_sddl,
                        "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)"
                        "(A;;FRFW;;;S-1-5-21-1004336348-1177238915-682003330-1105)");
    assert_false(c.allow_broad_callers);
    assert_int_equal(smb->pipe_sddl_line, 0);
    const cp_config_group *fs = cp_config_group_of(&c, "filesystem");
    assert_string_equal(fs->pipe_sddl, "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)");
    assert_true(fs->pipe_sddl_line > 0);
    assert_int_equal(c.system.n_allowed_services, 1);
    assert_string_equal(c.system.allowed_services[0], "w32time");
    assert_true(c.smb.servers_restricted);
    assert_int_equal(c.smb.n_allowed_servers, 2);
    assert_string_equal(c.smb.allowed_servers[0], "*.fsx.example.com");
    assert_string_equal(c.smb.allowed_servers[1], "files.corp.example.com");
    assert_int_equal(c.limits.drain_timeout_ms, 10000);
    assert_int_equal(c.log.v, 2);
    assert_int_equal(c.log.to_stderr, 0);
    assert_int_equal(c.log.stderr_threshold, CP_SEV_ERROR);
    assert_string_equal(c.log.file, "C:\\etc\\kubernetes\\logs\\csi-proxy.log");
    cp_config_free(&c);
}

/* groups.smb.volumeStats: on unless false; only the smb group has it. */
static void test_smb_volume_stats_key(void **state)
{
    (void)state;
    cp_config c;
    cp_error e;
    assert_int_equal(load(&c, "groups:\n  smb: {}\n", &e), CP_OK);
    assert_false(c.smb.volume_stats_off);
    cp_config_free(&c);
    assert_int_equal(load(&c, "groups:\n  volume: {}\n  smb:\n    volumeStats: false\n", &e),
                     CP_OK);
    assert_true(c.smb.volume_stats_off);
    cp_config_free(&c);
    assert_int_equal(load(&c, "groups:\n  smb:\n    volumeStats: true\n", &e), CP_OK);
    assert_false(c.smb.volume_stats_off);
    cp_config_free(&c);
    expect_error("groups:\n  smb:\n    volumeStats: no\n", 3, "groups.smb.volumeStats");
    expect_error("groups:\n  volume:\n    volumeStats: false\n", 3,
                 "groups.volume.volumeStats: only the smb group has SMB volume stats");
}

static void test_missing_file(void **state)
{
    (void)state;
    cp_config c;
    cp_error e;
    assert_int_equal(cp_config_load_file(&c, "/nonexistent/csi-proxy.yaml", NULL, NULL, &e),
                     CP_E_NOT_FOUND);
    assert_non_null(strstr(e.msg, "/nonexistent/csi-proxy.yaml"));
    cp_config_free(&c);
}

/* ---- config: what the file selects ---------------------------------------- */

static void test_groups_and_versions(void **state)
{
    (void)state;
    cp_config c;
    cp_error e;
    assert_int_equal(load(&c,
                          "groups:\n"
                          "  filesystem:\n"
                          "  disk: ~\n"
                          "  smb: {versions: [v1]}\n",
                          &e),
                     CP_OK);
    assert_true(cp_config_serves(&c, "filesystem", "v1beta1"));
    assert_true(cp_config_serves(&c, "disk", "v1"));
    assert_true(cp_config_serves(&c, "smb", "v1"));
    assert_false(cp_config_serves(&c, "smb", "v1alpha1"));
    assert_false(cp_config_serves(&c, "volume", "v1"));
    assert_false(cp_config_serves(&c, "iscsi", "v1alpha2"));
    assert_false(cp_config_serves(&c, "system", "v1alpha1"));
    assert_int_equal(cp_config_group_of(&c, "smb")->line, 4);
    cp_config_free(&c);
    /* groups: {} serves nothing - an explicit choice */
    assert_int_equal(load(&c, "groups: {}\n", &e), CP_OK);
    assert_false(cp_config_serves(&c, "filesystem", "v1"));
    assert_false(c.volume.format_foreign_filesystems); /* the default: refused */
    cp_config_free(&c);
    assert_int_equal(load(&c, "groups:\n  volume: {formatForeignFilesystems: true}\n", &e), CP_OK);
    assert_true(c.volume.format_foreign_filesystems);
    assert_true(cp_config_serves(&c, "volume", "v1"));
    cp_config_free(&c);
}

static void test_security_precedence(void **state)
{
    (void)state;
    cp_config c;
    cp_error e;
    const char *y = "security:\n"
                    "  allowedCallers: [SYSTEM, S-1-5-21-7-8-9-1001]\n"
                    "  pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GRGW;;;S-1-5-21-7-8-9-1001)'\n"
                    "groups:\n"
                    "  filesystem: {}\n"
                    "  smb:\n"
                    "    allowedCallers: [ContainerUser]\n"
                    "  iscsi:\n"
                    "    pipeSecurity: 'D:P(A;;GA;;;SY)'\n";
    int rc = load(&c, y, &e);
    if (rc != CP_OK)
        fail_msg("%s", e.msg);
    const cp_config_group *fs = cp_config_group_of(&c, "filesystem");
    assert_int_equal(fs->n_allowed, 2);
    assert_string_equal(sid_str(&fs->allowed[1]), "S-1-5-21-7-8-9-1001");
    assert_string_equal(fs->pipe_sddl, "D:P(A;;GA;;;SY)(A;;GRGW;;;S-1-5-21-7-8-9-1001)");
    assert_int_equal(fs->pipe_sddl_line, 3);
    const cp_config_group *smb = cp_config_group_of(&c, "smb");
    assert_int_equal(smb->n_allowed, 1);
    assert_string_equal(sid_str(&smb->allowed[0]), "S-1-5-93-2-2");
    /* derived without SYSTEM among the callers: SYSTEM still gets its ACE
     * */
    assert_string_equal(smb->pipe_sddl, "D:P(A;;GA;;;SY)(A;;FRFW;;;S-1-5-93-2-2)");
    const cp_config_group *iscsi = cp_config_group_of(&c, "iscsi");
    assert_int_equal(iscsi->n_allowed, 2); /* security:'s callers */
    assert_string_equal(iscsi->pipe_sddl, "D:P(A;;GA;;;SY)");
    assert_int_equal(iscsi->pipe_sddl_line, 9);

    /* The policy the gate and the pipes' security are built from. */
    cp_policy p;
    cp_config_policy(&c, &p);
    assert_int_equal(p.n_groups, CP_CONFIG_N_GROUPS);
    for (size_t i = 0; i < p.n_groups; i++) {
        const cp_group_policy *g = &p.groups[i];
        const cp_config_group *cg = cp_config_group_of(&c, g->name);
        assert_non_null(cg);
        assert_ptr_equal(g->allowed, cg->allowed);
        assert_int_equal(g->n_allowed, cg->n_allowed);
        assert_string_equal(g->pipe_sddl, cg->pipe_sddl);
        assert_int_equal(g->sddl_line, cg->pipe_sddl_line);
        assert_string_equal(g->sddl_file, "t.yaml");
    }
    cp_config_free(&c);
}

static bool fake_resolve(void *ctx, const char *account, cp_sid *out, char *why, size_t cap)
{
    int *calls = ctx;
    (*calls)++;
    if (strcmp(account, "CORP\\csi-smb") == 0)
        return cp_sid_parse("S-1-5-21-11-22-33-4444", out);
    snprintf(why, cap, "No mapping between account names and security IDs was done");
    return false;
}

static void test_account_resolver(void **state)
{
    (void)state;
    cp_config c;
    cp_error e;
    int calls = 0;
    const char *y = "security:\n  allowedCallers: [SYSTEM, 'CORP\\csi-smb']\n";
    assert_int_equal(cp_config_load_string(&c, "t.yaml", y, strlen(y), fake_resolve, &calls, &e),
                     CP_OK);
    assert_int_equal(calls, 1); /* SYSTEM is built in */
    assert_string_equal(sid_str(&c.groups[0].allowed[1]), "S-1-5-21-11-22-33-4444");
    cp_config_free(&c);
    y = "security:\n  allowedCallers:\n    - SYSTEM\n    - 'CORP\\nobody'\n";
    assert_int_equal(cp_config_load_string(&c, "t.yaml", y, strlen(y), fake_resolve, &calls, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "t.yaml:4: security.allowedCallers[1]: \"CORP\\nobody\""));
    assert_non_null(strstr(e.msg, "No mapping"));
    cp_config_free(&c);
}

static void test_limits_and_log(void **state)
{
    (void)state;
    cp_config c;
    cp_error e;
    const char *y = "limits:\n"
                    "  maxMessageBytes: 1048576\n"
                    "  maxConnections: 64\n"
                    "  idleTimeout: 1m30s\n"
                    "  drainTimeout: 2500ms\n"
                    "  workerThreads: 8\n"
                    "log: {v: 4, dir: 'D:\\logs', alsoToStderr: true, skipHeaders: true,\n"
                    "      fileMaxSizeMB: 0, stderrThreshold: WARNING, toStderr: false}\n";
    int rc = load(&c, y, &e);
    if (rc != CP_OK)
        fail_msg("%s", e.msg);
    assert_int_equal(c.limits.max_message_bytes, 1048576);
    assert_int_equal(c.limits.max_connections, 64);
    assert_int_equal(c.limits.idle_timeout_ms, 90000);
    assert_int_equal(c.limits.drain_timeout_ms, 2500);
    assert_int_equal(c.limits.worker_threads, 8);
    assert_int_equal(c.log.v, 4);
    assert_string_equal(c.log.dir, "D:\\logs");
    assert_int_equal(c.log.also_to_stderr, 1);
    assert_int_equal(c.log.file_max_size_mb, 0);
    assert_int_equal(c.log.stderr_threshold, CP_SEV_WARNING);
    cp_config_free(&c);
}

static void test_flags_override_file(void **state)
{
    (void)state;
    cp_config c;
    cp_error e;
    const char *y = "kubeletPath: 'D:\\kubelet'\n"
                    "workingDirs: ['D:\\a', 'D:\\b']\n"
                    "log: {v: 4, file: 'D:\\x.log', toStderr: false, stderrThreshold: INFO}\n";
    assert_int_equal(load(&c, y, &e), CP_OK);

    /* nothing given on the command line: the file decides */
    char *argv1[] = {"csi-proxy", "-windows-service", NULL};
    cp_flags f;
    assert_int_equal(cp_flags_parse(&f, 2, argv1, &e), CP_OK);
    assert_int_equal(cp_config_fill_flags(&c, &f), CP_OK);
    assert_string_equal(f.kubelet_path, "D:\\kubelet");
    assert_int_equal(f.n_working_dirs, 2);
    assert_string_equal(f.working_dirs[1], "D:\\b");
    assert_int_equal(f.v, 4);
    assert_string_equal(f.log_file, "D:\\x.log");
    assert_false(f.logtostderr);
    assert_int_equal(f.stderrthreshold, CP_SEV_INFO);
    cp_flags_free(&f);

    /* the command line wins, key by key; -v=0 is "given" too */
    char *argv2[] = {"csi-proxy", "-kubelet-path",     "C:\\k", "-working-dir=C:\\w",
                     "-v=0",      "-logtostderr=true", NULL};
    assert_int_equal(cp_flags_parse(&f, 6, argv2, &e), CP_OK);
    assert_true(cp_flags_given(&f, "v"));
    assert_false(cp_flags_given(&f, "log_file"));
    assert_false(cp_flags_given(&f, "no-such-flag"));
    assert_int_equal(cp_config_fill_flags(&c, &f), CP_OK);
    assert_string_equal(f.kubelet_path, "C:\\k");
    assert_int_equal(f.n_working_dirs, 1);
    assert_string_equal(f.working_dirs[0], "C:\\w");
    assert_int_equal(f.v, 0);
    assert_true(f.logtostderr);
    assert_string_equal(f.log_file, "D:\\x.log"); /* not given: from the file */
    cp_flags_free(&f);
    cp_config_free(&c);
}

/* ---- config: every kind of error names file:line ---------------------------- */

static void test_errors(void **state)
{
    (void)state;
    expect_error("kubeletPath: [a, b]\n", 1, "kubeletPath: expected a single value, not a list");
    expect_error("\n\nnosuchkey: 1\n", 3, "top level: unknown key \"nosuchkey\"");
    expect_error("kubeletPath: 'C:\\a'\nkubeletPath: 'C:\\b'\n", 2,
                 "key \"kubeletPath\" is given twice (first at line 1)");
    expect_error("groups:\n  filesystem: {}\n  nfs: {}\n", 3, "groups: unknown key \"nfs\"");
    expect_error("groups:\n  disk:\n    versions: [v1, v9]\n", 3,
                 "groups.disk.versions[1]: disk has no version \"v9\" (it has: v1alpha1, "
                 "v1beta1, v1beta2, v1beta3, v1)");
    expect_error("groups:\n  disk:\n    versions: []\n", 3, "empty");
    expect_error("groups:\n  disk:\n    colour: blue\n", 3, "groups.disk.colour: unknown key");
    /* an unknown key lists the group's own keys and no other group's */
    expect_error("groups:\n  disk:\n    colour: blue\n", 3,
                 "(known: versions, allowedCallers, pipeSecurity)");
    expect_error("groups:\n  smb:\n    colour: blue\n", 3,
                 "(known: versions, allowedCallers, pipeSecurity, allowedServers, volumeStats)");
    expect_error("groups:\n  system:\n    colour: blue\n", 3,
                 "(known: versions, allowedCallers, pipeSecurity, allowedServices)");
    expect_error("groups:\n  iscsi:\n    colour: blue\n", 3,
                 "(known: versions, allowedCallers, pipeSecurity, allowedPortals)");
    expect_error("groups:\n  smb:\n    allowedServices: [w32time]\n", 3,
                 "only the system group starts and stops services");
    expect_error("groups:\n  system:\n    allowedServers: [fs1]\n", 3,
                 "only the smb group maps servers");
    expect_error("groups:\n  disk:\n    formatForeignFilesystems: true\n", 3,
                 "only the volume group formats volumes");
    expect_error("groups:\n  volume:\n    formatForeignFilesystems: maybe\n", 3,
                 "groups.volume.formatForeignFilesystems");
    expect_error("groups:\n  smb:\n    allowedServers: ['\\\\fs1\\share']\n", 3,
                 "is not a host name, an address or \"*.\" followed by a domain");
    /* the key once, as the other keys' messages name it */
    expect_error("groups:\n  smb:\n    allowedServers: ['fs*']\n", 3,
                 "t.yaml:3: groups.smb.allowedServers: \"fs*\" is not a host name");
    expect_error("groups:\n  smb:\n    allowedServers: [fs1, 'fs*']\n", 3,
                 "groups.smb.allowedServers: \"fs*\" is not a host name");
    expect_error("groups:\n  smb:\n    allowedServers: ['*.']\n", 3, "is not a host name");
    expect_error("security:\n  allowedCallers: [SYSTEM, S-1-5-x]\n", 2,
                 "security.allowedCallers[1]: \"S-1-5-x\" is not a valid SID");
    expect_error("security:\n  allowedCallers: [NoSuchUser]\n", 2,
                 "\"NoSuchUser\" is neither a SID (S-1-...) nor a known account");
    expect_error("security:\n  allowedCallers: []\n", 2, "an empty list would refuse every caller");
    expect_error("security:\n  allowedCallers: [SYSTEM, S-1-5-18]\n", 2, "listed twice");
    expect_error("security:\n  pipeSecurity: 'O:SY'\n", 2,
                 "security.pipeSecurity: invalid pipe security \"O:SY\": at offset 4: no DACL");
    expect_error("groups:\n  smb:\n    pipeSecurity: 'D:(A;;GA;;;SY)'\n", 3,
                 "groups.smb.pipeSecurity: invalid pipe security");
    expect_error("groups:\n  smb:\n    pipeSecurity: 'D:NO_ACCESS_CONTROL'\n", 3,
                 "NO_ACCESS_CONTROL");
    expect_error("security:\n  pipeSecurity: 'D:P(A;;GA;;;WX)'\n", 2, "unknown SID alias \"WX\"");
    expect_error(
        "groups:\n  smb:\n    pipeSecurity: 'D:P(A;;GA;;;SY)S:(AU;FA;GA;;;WD)'\n", 3,
        "groups.smb.pipeSecurity: invalid pipe security \"D:P(A;;GA;;;SY)S:(AU;FA;GA;;;WD)\": "
        "at offset 18: audit entries (AU) are not supported: a pipe with a SACL needs "
        "SeSecurityPrivilege");
    /* the service's account must be able to create every pipe instance (or
     * the group serves one connection at a time); refused at file:line, not
     * widened */
    expect_error("groups:\n  disk: {}\n  volume:\n    pipeSecurity: 'D:P(A;;GA;;;BA)'\n", 4,
                 "groups.volume.pipeSecurity: pipe security \"D:P(A;;GA;;;BA)\" cannot work: it "
                 "does not give SY full access: csi-proxy, running as SYSTEM, must create each "
                 "instance of the pipe (FILE_CREATE_PIPE_INSTANCE), or the group serves one "
                 "connection at a time; add (A;;GA;;;SY)");
    expect_error("security:\n  pipeSecurity: 'D:P(D;;GA;;;SY)(A;;GA;;;SY)'\n", 2,
                 "security.pipeSecurity: pipe security \"D:P(D;;GA;;;SY)(A;;GA;;;SY)\" cannot "
                 "work: it denies SY");
    expect_error("limits:\n  maxMessageBytes: 10\n", 2, "out of range [1024, 67108864]");
    expect_error("limits:\n  maxConnections: -1\n", 2, "expected a whole number");
    expect_error("limits:\n  workerThreads: 99999999999999999999999\n", 2, "too large");
    expect_error("limits:\n  drainTimeout: 10\n", 2, "expected a duration");
    expect_error("limits:\n  drainTimeout: 10x\n", 2, "expected a duration");
    expect_error("limits:\n  idleTimeout: 25h\n", 2, "longer than 24h");
    expect_error("limits:\n  idleTimeout: 99999999999999999999s\n", 2, "longer than 24h");
    expect_error("log:\n  toStderr: yes\n", 2, "expected true or false, not \"yes\"");
    expect_error("log:\n  stderrThreshold: LOUD\n", 2, "expected INFO, WARNING, ERROR or FATAL");
    expect_error("log:\n  v: 11\n", 2, "out of range");
    expect_error("log:\n  file: ''\n", 2, "must not be empty");
    expect_error("- a\n- b\n", 1, "top level: expected a mapping");
    expect_error("groups: [filesystem]\n", 1, "groups: expected a mapping");
    expect_error("workingDirs: 'C:\\x'\n", 1, "workingDirs: expected a list");
    expect_error("workingDirs: [[a]]\n", 1, "workingDirs[0]: expected a single value");
    expect_error("? [a]\n: b\n", 1, "keys must be plain names");
    /* YAML syntax errors carry libyaml's line */
    expect_error("groups:\n  smb: {versions: [v1\n", 3, "YAML:");
    expect_error("a: 'unterminated\n", 2, "YAML:");
    expect_error("kubeletPath: x\n\tbad: tab\n", 2, "YAML:");
    expect_error("kubeletPath: 'C:\\a'\n---\nkubeletPath: 'C:\\b'\n", 3,
                 "more than one YAML document");
    expect_error("kubeletPath: \"C:\\u0000x\"\n", 1, "NUL");
}

/* the config file must be a regular file. A device
 * (/dev/null reads empty: the default policy), a directory or a FIFO (the
 * open would block) is refused, naming the file and what it is; so is a
 * log file that is a device. */
static void expect_not_regular(const char *path, const char *what)
{
    cp_config c;
    cp_error e;
    int rc = cp_config_load_file(&c, path, NULL, NULL, &e);
    char want[256];
    snprintf(want, sizeof(want), "%s: not a regular file: %s", path, what);
    if (rc != CP_E_FAILED_PRECONDITION || strcmp(e.msg, want) != 0)
        fail_msg("%s: want FAILED_PRECONDITION \"%s\"; got rc %d: %s", path, want, rc, e.msg);
    cp_config_free(&c);
}

static void test_config_file_must_be_regular(void **state)
{
    (void)state;
    char dir[] = "/tmp/cp-cfg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64], file[64];
    snprintf(fifo, sizeof(fifo), "%s/fifo.yaml", dir);
    snprintf(file, sizeof(file), "%s/ok.yaml", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_not_regular("/dev/null", "a character device");
    expect_not_regular(dir, "a directory");
    expect_not_regular(fifo, "a pipe (FIFO)"); /* and it did not block */
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fputs("groups:\n  filesystem: {}\n", fp);
    fclose(fp);
    cp_config c;
    cp_error e;
    assert_int_equal(cp_config_load_file(&c, file, NULL, NULL, &e), CP_OK);
    assert_false(cp_config_serves(&c, "disk", "v1"));
    cp_config_free(&c);
    /* The same rule for every file opened by name: the log file. */
    cp_log_options f = {.logtostderr = false, .log_file = "/dev/null"};
    assert_int_equal(cp_log_init(&f, 1, &e), CP_E_FAILED_PRECONDITION);
    assert_string_equal(e.msg, "open log file /dev/null: not a regular file: a character device");
    f.log_file = fifo;
    assert_int_equal(cp_log_init(&f, 1, &e), CP_E_FAILED_PRECONDITION);
    assert_non_null(strstr(e.msg, "not a regular file: a pipe (FIFO)"));
    cp_log_close();
    unlink(fifo);
    unlink(file);
    rmdir(dir);
}

/* broad groups are refused in allowedCallers and in the
 * allow entries of pipeSecurity (groups and security:), unless
 * security.allowBroadCallers says true. */
static void test_broad_callers_refused(void **state)
{
    (void)state;
    {
        cp_config c;
        cp_error e;
        assert_int_equal(load(&c, "log:\n  redactFields: [target_path, username]\n", &e), CP_OK);
        assert_int_equal(c.log.n_redact_fields, 2);
        assert_string_equal(c.log.redact_fields[1], "username");
        cp_config_free(&c);
        expect_error("log:\n  redactFields: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                     "aaaaaaaaaaaaaaaaaaaaaaaa]\n",
                     2, "log.redactFields: at most 32 names, each under 64 bytes");
    }
    expect_error("security:\n  allowedCallers: [Everyone]\n", 2,
                 "security.allowedCallers: S-1-1-0 (Everyone) admits a broad group to the "
                 "filesystem group; csi-proxy acts as SYSTEM for its callers; set "
                 "security.allowBroadCallers: true to allow it anyway");
    expect_error("groups:\n  filesystem: {}\n  smb:\n"
                 "    allowedCallers: [SYSTEM, 'BUILTIN\\Users']\n",
                 4,
                 "groups.smb.allowedCallers: S-1-5-32-545 (BUILTIN\\Users) admits a broad group "
                 "to the smb group");
    expect_error("security:\n  allowedCallers: ['Authenticated Users']\n", 2,
                 "S-1-5-11 (Authenticated Users)");
    expect_error("security:\n  allowedCallers: [S-1-5-7]\n", 2, "S-1-5-7 (ANONYMOUS LOGON)");
    expect_error("security:\n  allowedCallers: [INTERACTIVE]\n", 2, "S-1-5-4 (INTERACTIVE)");
    expect_error("security:\n  allowedCallers: [S-1-5-32-546]\n", 2, "(BUILTIN\\Guests)");
    expect_error("security:\n  allowedCallers: [S-1-5-21-11-22-33-513]\n", 2, "(Domain Users)");
    /* pipe security: the SIDs its allow entries grant, aliases or SID strings */
    expect_error("security:\n  pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GA;;;WD)'\n", 2,
                 "security.pipeSecurity: \"D:P(A;;GA;;;SY)(A;;GA;;;WD)\" grants WD (Everyone) "
                 "access to the filesystem group's pipes");
    expect_error("groups:\n  disk:\n    pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GRGW;;;AU)'\n", 3,
                 "groups.disk.pipeSecurity: \"D:P(A;;GA;;;SY)(A;;GRGW;;;AU)\" grants AU "
                 "(Authenticated Users)");
    expect_error("security:\n  pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GA;;;S-1-5-32-545)'\n", 2,
                 "grants S-1-5-32-545 (BUILTIN\\Users)");
    expect_error("security:\n  pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GA;;;DU)'\n", 2,
                 "grants DU (Domain Users)");
    expect_error("security:\n  pipeSecurity: 'O:SYD:P(A;;GA;;;SY)(A;;GA;;;AN)'\n", 2,
                 "grants AN (ANONYMOUS LOGON)");

    cp_config c;
    cp_error e;
    /* a deny entry for Everyone grants nothing; a group not served is not
     * looked at. (A deny of GA to Everyone would deny SYSTEM too, which must
     * create the pipe instances: the config refuses that, so the deny
     * here takes WRITE_DAC and WRITE_OWNER only.) */
    assert_int_equal(load(&c, "security:\n  pipeSecurity: 'D:P(D;;WDWO;;;WD)(A;;GA;;;SY)'\n", &e),
                     CP_OK);
    cp_config_free(&c);
    assert_int_equal(load(&c,
                          "groups:\n  filesystem: {}\n"
                          "  smb: ~\n",
                          &e),
                     CP_OK);
    cp_config_free(&c);
    /* allowBroadCallers: true admits them, and says which (for the warning) */
    const char *yes = "security:\n  allowBroadCallers: true\ngroups:\n  filesystem: {}\n  smb:\n"
                      "    allowedCallers: [SYSTEM, 'BUILTIN\\Users']\n"
                      "    pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GA;;;BU)'\n";
    assert_int_equal(load(&c, yes, &e), CP_OK);
    assert_true(c.allow_broad_callers);
    char which[512];
    assert_true(cp_config_group_broad(cp_config_group_of(&c, "smb"), which, sizeof(which)));
    assert_string_equal(which, "allowed callers: S-1-5-32-545 (BUILTIN\\Users)");
    assert_false(cp_config_group_broad(cp_config_group_of(&c, "filesystem"), which, sizeof(which)));
    cp_config_free(&c);
    /* the key's order does not matter; false is the default */
    assert_int_equal(load(&c,
                          "groups:\n  smb:\n    allowedCallers: [Everyone]\n"
                          "security:\n  allowBroadCallers: true\n",
                          &e),
                     CP_OK);
    cp_config_free(&c);
    expect_error("security:\n  allowBroadCallers: false\n  allowedCallers: [Everyone]\n", 3,
                 "S-1-1-0 (Everyone)");
    expect_error("security:\n  allowBroadCallers: yes please\n", 2, "security.allowBroadCallers");
}

static void test_too_large_and_binary(void **state)
{
    (void)state;
    size_t n = CP_CONFIG_MAX_FILE + 10;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, '#', n);
    big[n] = '\0';
    cp_config c;
    cp_error e;
    assert_int_equal(cp_config_load_string(&c, "big.yaml", big, n, NULL, NULL, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "larger than"));
    cp_config_free(&c);
    free(big);
    const char bin[] = "kubeletPath: \x01\xff\xfe\n";
    assert_int_equal(cp_config_load_string(&c, "bin.yaml", bin, sizeof(bin) - 1, NULL, NULL, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "bin.yaml:"));
    cp_config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sid_parse_and_format),
        cmocka_unit_test(test_sid_names_and_aliases),
        cmocka_unit_test(test_sddl_check),
        cmocka_unit_test(test_sddl_for_sids),
        cmocka_unit_test(test_sddl_caller_rights),
        cmocka_unit_test(test_sddl_caller_excess),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_example_file),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_groups_and_versions),
        cmocka_unit_test(test_security_precedence),
        cmocka_unit_test(test_account_resolver),
        cmocka_unit_test(test_limits_and_log),
        cmocka_unit_test(test_flags_override_file),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_smb_volume_stats_key),
        cmocka_unit_test(test_too_large_and_binary),
        cmocka_unit_test(test_config_file_must_be_regular),
        cmocka_unit_test(test_broad_callers_refused),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
