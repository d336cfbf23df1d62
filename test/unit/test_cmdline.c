/* test_cmdline.c - install's binPath quoting and the ImagePath reader
 * (service/cmdline.c), each checked against literal vectors from
 * Microsoft's documented parsing rules, then against each other. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "service/cmdline.h"

/* One argument and the exact text install must write for it, derived by
 * hand from Microsoft's rules ("Parsing C command-line arguments",
 * Microsoft Learn; CommandLineToArgvW follows them): an argument holding
 * a space, tab or quote, or an empty one, is quoted; a quote inside is
 * written \"; backslashes are doubled only where a quote follows them
 * (an escaped quote or the closing one). */
static const struct {
    const char *arg;
    const char *text;
} quoting[] = {
    {"-windows-service", "-windows-service"},
    {"-log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log",
     "-log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log"},
    {"C:\\Program Files\\csi", "\"C:\\Program Files\\csi\""},
    {"", "\"\""},
    {"C:\\dir with space\\", "\"C:\\dir with space\\\\\""},
    {"a\"b", "\"a\\\"b\""},
    {"\\\\server\\share\\", "\\\\server\\share\\"},
    {"ends\\\\", "ends\\\\"},
    {"\"", "\"\\\"\""},
    {"\\\"", "\"\\\\\\\"\""},
    {"tab\there", "\"tab\there\""},
    {"-v=2", "-v=2"},
};

static void test_quoting_literal(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(quoting) / sizeof(quoting[0]); i++) {
        char line[256] = "";
        assert_true(cp_cmdline_append(line, sizeof(line), quoting[i].arg));
        assert_string_equal(line, quoting[i].text);
    }
    /* several: separated by single spaces */
    char line[1024] = "";
    assert_true(cp_cmdline_append(line, sizeof(line), "-working-dir"));
    assert_true(cp_cmdline_append(line, sizeof(line), "C:\\Program Files\\csi"));
    assert_string_equal(line, "-working-dir \"C:\\Program Files\\csi\"");
}

static void expect_split(const char *line, int want_n, const char *const *want);

/* The examples of Microsoft's "Parsing C command-line arguments" table,
 * read back by cp_cmdline_split after a program name. */
static void test_split_documented_examples(void **state)
{
    (void)state;
    const char *e1[] = {"p.exe", "a b c", "d", "e"};
    expect_split("p.exe \"a b c\" d e", 4, e1);
    const char *e2[] = {"p.exe", "ab\"c", "\\", "d"};
    expect_split("p.exe \"ab\\\"c\" \"\\\\\" d", 4, e2);
    const char *e3[] = {"p.exe", "a\\\\\\b", "de fg", "h"};
    expect_split("p.exe a\\\\\\b d\"e f\"g h", 4, e3);
    const char *e4[] = {"p.exe", "a\\\"b", "c", "d"};
    expect_split("p.exe a\\\\\\\"b c d", 4, e4);
    const char *e5[] = {"p.exe", "a\\\\b c", "d", "e"};
    expect_split("p.exe a\\\\\\\\\"b c\" d e", 4, e5);
    const char *e6[] = {"p.exe", "ab\" c d"};
    expect_split("p.exe a\"b\"\" c d", 2, e6);
}

/* What install writes, the ImagePath reader gives back exactly. */
static void test_round_trip(void **state)
{
    (void)state;
    char line[1024] = "p.exe";
    const char *want[1 + sizeof(quoting) / sizeof(quoting[0])] = {"p.exe"};
    for (size_t i = 0; i < sizeof(quoting) / sizeof(quoting[0]); i++) {
        assert_true(cp_cmdline_append(line, sizeof(line), quoting[i].arg));
        want[i + 1] = quoting[i].arg;
    }
    expect_split(line, (int)(sizeof(want) / sizeof(want[0])), want);
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
        cmocka_unit_test(test_quoting_literal), cmocka_unit_test(test_split_documented_examples),
        cmocka_unit_test(test_round_trip),      cmocka_unit_test(test_full),
        cmocka_unit_test(test_split_upstream),  cmocka_unit_test(test_split_ours),
    };
    return cmocka_run_group_tests_name("cmdline", tests, NULL, NULL);
}
