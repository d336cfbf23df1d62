/* test_cmdline.c - install's binPath quoting (service/cmdline.c), checked
 * against a reference implementation of CommandLineToArgvW's parsing:
 * every argument must come back exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "service/cmdline.h"

/* CommandLineToArgvW's rules for arguments after the program name. */
static int split(const char *s, char out[][128], int max)
{
    int n = 0;
    while (*s != '\0' && n < max) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            break;
        char *o = out[n++];
        bool inq = false;
        for (;;) {
            size_t bs = 0;
            while (*s == '\\') {
                bs++;
                s++;
            }
            if (*s == '"') {
                for (size_t i = 0; i < bs / 2; i++)
                    *o++ = '\\';
                if (bs % 2 == 1) {
                    *o++ = '"';
                    s++;
                } else if (inq && s[1] == '"') { /* "" inside quotes: a literal quote */
                    *o++ = '"';
                    s += 2;
                } else {
                    inq = !inq;
                    s++;
                }
                continue;
            }
            for (size_t i = 0; i < bs; i++)
                *o++ = '\\';
            if (*s == '\0' || (!inq && (*s == ' ' || *s == '\t')))
                break;
            *o++ = *s++;
        }
        *o = '\0';
    }
    return n;
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *args[] = {"-windows-service",
                          "-log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log",
                          "-working-dir",
                          "C:\\Program Files\\csi",
                          "",
                          "C:\\dir with space\\",
                          "a\"b",
                          "\\\\server\\share\\",
                          "ends\\\\",
                          "\"",
                          "\\\"",
                          "tab\there",
                          "-v=2"};
    size_t n = sizeof(args) / sizeof(args[0]);
    char line[1024] = "";
    for (size_t i = 0; i < n; i++)
        assert_true(cp_cmdline_append(line, sizeof(line), args[i]));
    char got[16][128];
    assert_int_equal(split(line, got, 16), (int)n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(got[i], args[i]);
    assert_non_null(strstr(line, "\"C:\\Program Files\\csi\""));
    assert_non_null(strstr(line, "-log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log "));
}

static void test_full(void **state)
{
    (void)state;
    char line[12] = "abc";
    assert_false(cp_cmdline_append(line, sizeof(line), "0123456789"));
    assert_string_equal(line, "abc");
    assert_true(cp_cmdline_append(line, sizeof(line), "1234567"));
    assert_string_equal(line, "abc 1234567");
    assert_false(cp_cmdline_append(line, sizeof(line), "x"));
}

/* The program and the arguments of an installed service's ImagePath. */
static void expect_split(const char *line, int want_n, const char *const *want)
{
    int n = -1;
    char **argv = cp_cmdline_split(line, &n);
    assert_non_null(argv);
    assert_int_equal(n, want_n);
    for (int i = 0; i < n; i++)
        assert_string_equal(argv[i], want[i]);
    assert_null(argv[n]);
    cp_cmdline_free(argv);
}

static void test_split_upstream(void **state)
{
    (void)state;
    /* upstream's: sc.exe create csiproxy binPath= "C:\...\csi-proxy.exe $flags" */
    const char *up[] = {"C:\\etc\\kubernetes\\node\\bin\\csi-proxy.exe", "-v=5", "-windows-service",
                        "-log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log", "-logtostderr=false"};
    expect_split("C:\\etc\\kubernetes\\node\\bin\\csi-proxy.exe -v=5 -windows-service "
                 "-log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log -logtostderr=false",
                 5, up);
    /* unquoted with spaces: the SCM reads up to ".exe" */
    const char *pf[] = {"C:\\Program Files\\Amazon\\EKS\\bin\\csi-proxy.exe", "-windows-service"};
    expect_split("C:\\Program Files\\Amazon\\EKS\\bin\\csi-proxy.exe -windows-service", 2, pf);
    const char *bare[] = {"C:\\x\\csi-proxy.EXE"};
    expect_split("  C:\\x\\csi-proxy.EXE  ", 1, bare);
    int n;
    assert_null(cp_cmdline_split("", &n));
    assert_null(cp_cmdline_split("\"\" -v 2", &n));
}

static void test_split_ours(void **state)
{
    (void)state;
    /* what install writes reads back exactly */
    const char *args[] = {"C:\\Program Files\\csi\\csi-proxy.exe",
                          "-windows-service",
                          "-working-dir",
                          "C:\\dir with space\\",
                          "",
                          "a\"b",
                          "-v=2"};
    char line[512] = "\"C:\\Program Files\\csi\\csi-proxy.exe\"";
    for (size_t i = 1; i < sizeof(args) / sizeof(args[0]); i++)
        assert_true(cp_cmdline_append(line, sizeof(line), args[i]));
    expect_split(line, (int)(sizeof(args) / sizeof(args[0])), args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_split_upstream),
        cmocka_unit_test(test_split_ours),
    };
    return cmocka_run_group_tests_name("cmdline", tests, NULL, NULL);
}
