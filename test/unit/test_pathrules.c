/* test_pathrules.c - path confinement rules (groups/common/pathrules). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "groups/common/pathrules.h"

#define KUBELET "C:\\var\\lib\\kubelet"

static const char *const wdirs[] = {"D:\\work\\", "C:\\var\\lib\\other"};

static int setup(void **state)
{
    cp_pathrules *r = NULL;
    cp_error e;
    if (cp_pathrules_new(KUBELET, wdirs, 2, &r, &e) != CP_OK) {
        print_error("setup: %s\n", e.msg);
        return -1;
    }
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    cp_pathrules_free(*state);
    return 0;
}

static void ok(const cp_pathrules *r, const char *path)
{
    cp_error e = {0};
    int rc = cp_pathrules_check(r, path, &e);
    if (rc != CP_OK)
        fail_msg("expected %s to pass, got %s: %s", path, cp_status_name(rc), e.msg);
}

/* Expects INVALID_ARGUMENT with a message containing want (and the path
 * itself unless the path is too long to be shown whole). */
static void bad(const cp_pathrules *r, const char *path, const char *want)
{
    cp_error e = {0};
    int rc = cp_pathrules_check(r, path, &e);
    if (rc != CP_E_INVALID_ARGUMENT)
        fail_msg("expected %s to be INVALID_ARGUMENT, got %s", path, cp_status_name(rc));
    assert_int_equal(e.status, CP_E_INVALID_ARGUMENT);
    if (strstr(e.msg, want) == NULL)
        fail_msg("message for %s lacks \"%s\": %s", path, want, e.msg);
    if (strlen(path) <= 260 && strstr(e.msg, path) == NULL)
        fail_msg("message does not name the path %s: %s", path, e.msg);
}

static void test_good_paths(void **state)
{
    const cp_pathrules *r = *state;
    ok(r, KUBELET "\\pods\\0b1c\\volumes\\kubernetes.io~csi\\pvc-1\\mount");
    ok(r, KUBELET "\\plugins\\ebs.csi.aws.com\\csi.sock");
    ok(r, KUBELET "\\a.b\\c d\\x-y_z");
    ok(r, KUBELET "\\pods\\\xc3\xa9t\xc3\xa9"); /* UTF-8 "été" */
    ok(r, "D:\\work\\a");
    ok(r, "C:\\var\\lib\\other\\x");
}

static void test_root_itself_and_trailing_separator(void **state)
{
    const cp_pathrules *r = *state;
    ok(r, KUBELET);
    ok(r, KUBELET "\\");
    ok(r, "D:\\work"); /* configured as "D:\work\" */
    ok(r, "D:\\work\\");
    bad(r, KUBELET "\\\\", "empty component");
    bad(r, KUBELET "\\a\\\\b", "empty component");
}

static void test_case_insensitive(void **state)
{
    const cp_pathrules *r = *state;
    ok(r, "c:\\VAR\\Lib\\KUBELET\\pods");
    ok(r, "d:\\WORK\\x");
}

static void test_separator_boundary(void **state)
{
    const cp_pathrules *r = *state;
    const char *want = "is not within the working directories: "
                       "[D:\\work C:\\var\\lib\\other C:\\var\\lib\\kubelet]";
    bad(r, "C:\\var\\lib\\kubelet-evil", want);
    bad(r, "C:\\var\\lib\\kubelet-evil\\x", want);
    bad(r, "C:\\var\\lib\\kubeletX\\pods", want);
    bad(r, "C:\\var\\lib", want);
    bad(r, "C:\\", want);
    bad(r, "E:\\var\\lib\\kubelet\\x", want);
    bad(r, "D:\\workshop", want);
    /* upstream's exact text, with the path in it */
    cp_error e;
    assert_int_equal(cp_pathrules_check(r, "C:\\x", &e), CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "path: C:\\x is not within the working directories: "
                               "[D:\\work C:\\var\\lib\\other C:\\var\\lib\\kubelet]");
}

static void test_dot_dot(void **state)
{
    const cp_pathrules *r = *state;
    const char *want = "path contains invalid characters: ";
    bad(r, KUBELET "\\..\\..\\Windows", want);
    bad(r, KUBELET "\\pods\\..", want);
    bad(r, KUBELET "\\..", want);
    bad(r, KUBELET "\\a..b", want); /* upstream refuses the substring; so do we */
    bad(r, KUBELET "\\...", want);
    bad(r, KUBELET "\\.\\x", "'.' component");
    bad(r, KUBELET "\\x\\.", "'.' component");
    bad(r, KUBELET "\\x.", "ends with '.'");
    bad(r, KUBELET "\\x \\y", "ends with '.' or ' '");
}

static void test_leading_backslash(void **state)
{
    const cp_pathrules *r = *state;
    const char *want = "invalid character \\ at beginning of path: ";
    bad(r, "\\\\server\\share\\x", want);
    bad(r, "\\\\server\\share\\x", "UNC");
    bad(r, "\\\\?\\C:\\var\\lib\\kubelet\\x", want);
    bad(r, "\\\\?\\C:\\var\\lib\\kubelet\\x", "\\\\?\\ paths");
    bad(r, "\\\\?\\UNC\\server\\share", want);
    bad(r, "\\\\.\\PhysicalDrive0", want);
    bad(r, "\\\\.\\PhysicalDrive0", "device");
    bad(r, "\\\\.\\pipe\\csi-proxy-filesystem-v1", "device");
    bad(r, "\\var\\lib\\kubelet", want);
}

static void test_not_absolute(void **state)
{
    const cp_pathrules *r = *state;
    bad(r, "", "not an absolute Windows path: ");
    bad(r, "var\\lib\\kubelet", "not an absolute Windows path: var\\lib\\kubelet");
    bad(r, "kubelet", "not an absolute Windows path: kubelet");
    bad(r, "1:\\var", "invalid characters"); /* ':' outside a drive prefix */
    cp_error e;
    assert_int_equal(cp_pathrules_check(r, NULL, &e), CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "not an absolute Windows path: ");
}

static void test_alternate_data_streams(void **state)
{
    const cp_pathrules *r = *state;
    bad(r, KUBELET "\\x:stream", "alternate data stream");
    bad(r, KUBELET "\\x::$DATA", "path contains invalid characters: ");
    bad(r, "C:\\var\\lib\\kubelet:x", "alternate data stream");
}

static void test_forward_slash(void **state)
{
    const cp_pathrules *r = *state;
    bad(r, KUBELET "/pods", "'/' is not accepted");
    bad(r, KUBELET "\\pods/x", "path contains invalid characters: ");
    bad(r, "C:/var/lib/kubelet", "path contains invalid characters: ");
}

static void test_wildcards_and_reserved(void **state)
{
    const cp_pathrules *r = *state;
    const char chars[] = "\"*?|<>";
    for (size_t i = 0; i < sizeof(chars) - 1; i++) {
        char p[64], want[8];
        snprintf(p, sizeof(p), KUBELET "\\a%cb", chars[i]);
        snprintf(want, sizeof(want), "'%c'", chars[i]);
        bad(r, p, "path contains invalid characters: ");
        bad(r, p, want);
    }
}

static void test_control_and_encoding(void **state)
{
    const cp_pathrules *r = *state;
    bad(r,
        KUBELET "\\a\x01"
                "b",
        "control character");
    bad(r, KUBELET "\\a\tb", "control character");
    bad(r, KUBELET "\\a\nb", "control character");
    bad(r, KUBELET "\\\xc0\xae\xc0\xae", "not valid UTF-8"); /* overlong ".." */
    bad(r, KUBELET "\\\xff", "not valid UTF-8");
    bad(r, KUBELET "\\\xed\xa0\x80", "not valid UTF-8"); /* a surrogate */
    bad(r, KUBELET "\\\xe2\x82", "not valid UTF-8");     /* truncated */
}

/* The check works on C strings, as the host does: bytes after a NUL are
 * neither checked nor used. A request "x\0\..\.." is the path "x". */
static void test_nul_ends_the_path(void **state)
{
    const cp_pathrules *r = *state;
    static const char p[] = KUBELET "\\x\0\\..\\..\\Windows";
    ok(r, p);
    assert_int_equal(strlen(p), strlen(KUBELET "\\x"));
}

static void make_path(char *buf, size_t len)
{
    /* KUBELET "\aaaa...": exactly len bytes */
    size_t k = strlen(KUBELET "\\");
    memcpy(buf, KUBELET "\\", k);
    memset(buf + k, 'a', len - k);
    buf[len] = '\0';
}

static void test_length(void **state)
{
    const cp_pathrules *r = *state;
    char p[400];
    make_path(p, 260);
    ok(r, p);
    make_path(p, 261);
    bad(r, p, "path length 261 exceeds maximum characters: 260");
    make_path(p, 399);
    bad(r, p, "path length 399 exceeds maximum characters: 260");
    /* bytes, not characters: 130 two-byte letters are 260 bytes + prefix */
    char u[600];
    size_t k = strlen(KUBELET "\\");
    memcpy(u, KUBELET "\\", k);
    for (size_t i = 0; i < 130; i++)
        memcpy(u + k + 2 * i, "\xc3\xa9", 2);
    u[k + 260] = '\0';
    char want[64];
    snprintf(want, sizeof(want), "path length %zu exceeds", k + 260);
    bad(r, u, want);
    /* length is checked first, as upstream: a long UNC path gets the length text */
    char unc[300] = "\\\\server\\";
    memset(unc + 9, 'a', 280);
    unc[289] = '\0';
    bad(r, unc, "path length 289 exceeds maximum characters: 260");
}

static void test_configured_dirs(void **state)
{
    (void)state;
    cp_pathrules *r = NULL;
    cp_error e;
    const char *const rel[] = {"work"};
    assert_int_equal(cp_pathrules_new(KUBELET, rel, 1, &r, &e), CP_E_INVALID_ARGUMENT);
    assert_null(r);
    assert_non_null(strstr(e.msg, "-working-dir work"));
    assert_non_null(strstr(e.msg, "absolute"));

    const char *const empty[] = {""};
    assert_int_equal(cp_pathrules_new(KUBELET, empty, 1, &r, &e), CP_E_INVALID_ARGUMENT);
    assert_int_equal(cp_pathrules_new("C:\\a\\..\\b", NULL, 0, &r, &e), CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "-kubelet-path"));
    assert_int_equal(cp_pathrules_new("\\\\srv\\share", NULL, 0, &r, &e), CP_E_INVALID_ARGUMENT);
    assert_int_equal(cp_pathrules_new(NULL, NULL, 0, &r, &e), CP_E_INVALID_ARGUMENT);

    const char *const dirs[] = {"E:\\w\\", "C:\\"};
    assert_int_equal(cp_pathrules_new("C:\\k\\", dirs, 2, &r, &e), CP_OK);
    assert_int_equal(cp_pathrules_count(r), 3);
    assert_string_equal(cp_pathrules_dir(r, 0), "E:\\w");
    assert_string_equal(cp_pathrules_dir(r, 1), "C:\\");
    assert_string_equal(cp_pathrules_dir(r, 2), "C:\\k");
    assert_null(cp_pathrules_dir(r, 3));
    ok(r, "C:\\anything\\at\\all"); /* a drive root confines to the drive */
    ok(r, "C:\\");
    ok(r, "E:\\w");
    bad(r, "E:\\x", "[E:\\w C:\\ C:\\k]");
    bad(r, "D:\\", "is not within");
    cp_pathrules_free(r);
    cp_pathrules_free(NULL);
}

static void test_resolved(void **state)
{
    const cp_pathrules *r = *state;
    const char *p = KUBELET "\\pods\\x";
    cp_error e;
    assert_int_equal(cp_pathrules_check_resolved(r, p, KUBELET "\\pods\\x", &e), CP_OK);
    assert_int_equal(cp_pathrules_check_resolved(r, p, "c:\\var\\lib\\KUBELET", &e), CP_OK);
    assert_int_equal(cp_pathrules_check_resolved(r, p, KUBELET "\\", &e), CP_OK);
    assert_int_equal(cp_pathrules_check_resolved(r, p, "D:\\work\\long\\...", &e), CP_OK);

    assert_int_equal(cp_pathrules_check_resolved(r, p, "C:\\Windows\\System32", &e),
                     CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "path: C:\\var\\lib\\kubelet\\pods\\x resolves to "
                               "C:\\Windows\\System32, which is not within the working "
                               "directories: [D:\\work C:\\var\\lib\\other C:\\var\\lib\\kubelet]");
    const char *outside[] = {
        "C:\\var\\lib\\kubelet-evil\\x",
        "\\\\server\\share\\x",
        "\\\\?\\Volume{0000-1111}\\x",
        KUBELET "\\..\\x",
        KUBELET "\\.\\x",
        KUBELET "\\..",
        "",
    };
    for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
        if (cp_pathrules_check_resolved(r, p, outside[i], &e) != CP_E_INVALID_ARGUMENT)
            fail_msg("resolved %s should be refused", outside[i]);
        assert_non_null(strstr(e.msg, "resolves to"));
    }
}

/* A configured directory may be named, but not removed or replaced:
 * cp_pathrules_check_keeps_roots refuses it in every spelling the rules
 * accept, and every ancestor of one. */
static void test_keeps_roots(void **state)
{
    const cp_pathrules *r = *state;
    const char *roots[] = {
        KUBELET,    KUBELET "\\", "c:\\VAR\\lib\\KUBELET", "c:\\var\\lib\\kubelet\\",
        "D:\\work", "d:\\WORK\\", "C:\\var\\lib\\other",
    };
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        cp_error e = {0};
        ok(r, roots[i]); /* the rules accept it: it may be read and created */
        if (cp_pathrules_check_keeps_roots(r, roots[i], NULL, &e) != CP_E_INVALID_ARGUMENT)
            fail_msg("%s should be refused as a configured directory", roots[i]);
        if (strstr(e.msg, roots[i]) == NULL ||
            strstr(e.msg, "is the configured directory") == NULL ||
            strstr(e.msg, "never removed, emptied, replaced or mounted over") == NULL)
            fail_msg("message for %s: %s", roots[i], e.msg);
    }
    cp_error e = {0};
    assert_int_equal(cp_pathrules_check_keeps_roots(r, KUBELET "\\", NULL, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "path: C:\\var\\lib\\kubelet\\ is the configured directory "
                               "C:\\var\\lib\\kubelet (-kubelet-path): it may be read or "
                               "created, never removed, emptied, replaced or mounted over");
    assert_int_equal(cp_pathrules_check_keeps_roots(r, "D:\\work", NULL, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "D:\\work (-working-dir)"));
    /* what a path resolves to counts: a link to the root */
    assert_int_equal(
        cp_pathrules_check_keeps_roots(r, KUBELET "\\pods\\l", "C:\\VAR\\lib\\kubelet", &e),
        CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "path: C:\\var\\lib\\kubelet\\pods\\l (it resolves to "
                               "C:\\VAR\\lib\\kubelet) is the configured directory "
                               "C:\\var\\lib\\kubelet (-kubelet-path): it may be read or "
                               "created, never removed, emptied, replaced or mounted over");
    assert_int_equal(cp_pathrules_check_keeps_roots(r, KUBELET "\\x", "\\\\?\\Volume{1}\\", &e),
                     CP_E_INVALID_ARGUMENT);
    /* below a root, beside one: fine */
    const char *fine[] = {KUBELET "\\pods", KUBELET "\\pods\\", "D:\\work\\x",
                          "C:\\var\\lib\\kubelet-evil", "C:\\var\\lib\\othe"};
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
        if (cp_pathrules_check_keeps_roots(r, fine[i], NULL, &e) != CP_OK)
            fail_msg("%s is no configured directory: %s", fine[i], e.msg);
    assert_int_equal(cp_pathrules_check_keeps_roots(r, KUBELET "\\x", KUBELET "\\y", &e), CP_OK);
}

/* A working dir that holds the kubelet dir: the ancestor of a root is
 * refused too (removing it would remove the root). */
static void test_keeps_roots_nested(void **state)
{
    (void)state;
    const char *const wd[] = {"C:\\k"};
    cp_pathrules *r = NULL;
    cp_error e = {0};
    assert_int_equal(cp_pathrules_new("C:\\k\\a\\kubelet", wd, 1, &r, &e), CP_OK);
    assert_int_equal(cp_pathrules_check_keeps_roots(r, "C:\\K\\A", NULL, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "path: C:\\K\\A contains the configured directory "
                               "C:\\k\\a\\kubelet (-kubelet-path), which may be read or "
                               "created, never removed, emptied, replaced or mounted over");
    assert_int_equal(cp_pathrules_check_keeps_roots(r, "C:\\k", NULL, &e), CP_E_INVALID_ARGUMENT);
    assert_int_equal(cp_pathrules_check_keeps_roots(r, "C:\\k\\b", NULL, &e), CP_OK);
    assert_int_equal(cp_pathrules_check_keeps_roots(r, "C:\\k\\a\\kubelet2", NULL, &e), CP_OK);
    cp_pathrules_free(r);
    /* a drive root as a working dir is itself a root */
    const char *const drive[] = {"E:\\"};
    assert_int_equal(cp_pathrules_new("C:\\k", drive, 1, &r, &e), CP_OK);
    assert_int_equal(cp_pathrules_check_keeps_roots(r, "e:\\", NULL, &e), CP_E_INVALID_ARGUMENT);
    assert_int_equal(cp_pathrules_check_keeps_roots(r, "E:\\x", NULL, &e), CP_OK);
    cp_pathrules_free(r);
}

/* Paths in messages are cut at 300 bytes, never inside a UTF-8 character
 *: a path of 2-byte letters with its 300th byte in the
 * middle of one is shown up to the whole letter before it. */
static void test_message_cut_on_character(void **state)
{
    const cp_pathrules *r = *state;
    char path[600];
    size_t n = (size_t)snprintf(path, sizeof(path), "%s", KUBELET "\\"); /* 19 bytes */
    while (n + 2 < 400) {
        path[n++] = (char)0xc3; /* U+00E9 */
        path[n++] = (char)0xa9;
    }
    path[n] = '\0';
    /* byte 300 is the second byte of a letter: 19 + 2k = 299 */
    assert_int_equal((unsigned char)path[299], 0xc3);
    cp_error e = {0};
    assert_int_equal(cp_pathrules_check(r, path, &e), CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "exceeds maximum characters"));
    const char *shown = strstr(e.msg, "(path ");
    assert_non_null(shown);
    shown += 6;
    const char *more = strstr(shown, "...)");
    assert_non_null(more);
    assert_int_equal(more - shown, 299); /* not 300: that would split a letter */
    assert_memory_equal(shown, path, 299);
    /* the whole message is valid UTF-8 */
    for (const unsigned char *s = (const unsigned char *)e.msg; *s != 0; s++) {
        if (*s == 0xc3) {
            assert_int_equal(s[1] & 0xc0, 0x80);
            s++;
        } else {
            assert_true(*s < 0x80);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_itself_and_trailing_separator, setup, teardown),
        cmocka_unit_test_setup_teardown(test_case_insensitive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_separator_boundary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dot_dot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leading_backslash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_absolute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alternate_data_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forward_slash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wildcards_and_reserved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_and_encoding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nul_ends_the_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_length, setup, teardown),
        cmocka_unit_test(test_configured_dirs),
        cmocka_unit_test_setup_teardown(test_resolved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keeps_roots, setup, teardown),
        cmocka_unit_test(test_keeps_roots_nested),
        cmocka_unit_test_setup_teardown(test_message_cut_on_character, setup, teardown),
    };
    return cmocka_run_group_tests_name("pathrules", tests, NULL, NULL);
}
