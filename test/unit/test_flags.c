/* test_flags.c - Go flag syntax, upstream's and klog's flags, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/flags.h"
#include "security/roots.h"

/* Parses a NULL-terminated list of arguments (argv[0] is added). */
#define PARSE(f, e, ...) parse_list((f), (e), (const char *[]){"csi-proxy.exe", __VA_ARGS__, NULL})

static int parse_list(cp_flags *f, cp_error *e, const char **list)
{
    int argc = 0;
    while (list[argc] != NULL)
        argc++;
    return cp_flags_parse(f, argc, (char **)list, e);
}

static void expect_error(const char *msg, const char **list)
{
    cp_flags f;
    cp_error e;
    assert_int_equal(parse_list(&f, &e, list), CP_E_INVALID_ARGUMENT);
    assert_int_equal(e.status, CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, msg);
    cp_flags_free(&f);
}
#define EXPECT_ERROR(msg, ...)                                                                     \
    expect_error((msg), (const char *[]){"csi-proxy.exe", __VA_ARGS__, NULL})

static void test_defaults(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    char *argv[] = {"csi-proxy.exe", NULL};
    assert_int_equal(cp_flags_parse(&f, 1, argv, &e), CP_OK);
    assert_string_equal(f.kubelet_path, "C:\\var\\lib\\kubelet");
    assert_int_equal(f.n_working_dirs, 0);
    assert_false(f.windows_service);
    assert_true(f.require_privacy);
    assert_null(f.metrics_bind_address);
    assert_false(f.version);
    assert_int_equal(f.v, 0);
    assert_null(f.log_file);
    assert_null(f.log_dir);
    assert_true(f.logtostderr);
    assert_false(f.alsologtostderr);
    assert_int_equal(f.log_file_max_size, 1800);
    assert_int_equal(f.stderrthreshold, CP_SEV_ERROR);
    assert_null(f.config);
    assert_null(f.socket_dir);
    assert_null(f.root);
    assert_false(f.help);
    assert_int_equal(f.n_args, 0);
    cp_flags_free(&f);
}

static void test_upstream_install_line(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-windows-service",
                           "-log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log",
                           "-logtostderr=false"),
                     CP_OK);
    assert_true(f.windows_service);
    assert_string_equal(f.log_file, "C:\\etc\\kubernetes\\logs\\csi-proxy.log");
    assert_false(f.logtostderr);
    assert_string_equal(f.kubelet_path, "C:\\var\\lib\\kubelet");
    assert_int_equal(f.n_args, 0);
    cp_flags_free(&f);
}

static void test_value_syntaxes(void **state)
{
    (void)state;
    static const char *const forms[][3] = {
        {"-kubelet-path", "D:\\k", NULL},
        {"-kubelet-path=D:\\k", NULL, NULL},
        {"--kubelet-path", "D:\\k", NULL},
        {"--kubelet-path=D:\\k", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        cp_flags f;
        cp_error e;
        const char *list[] = {"csi-proxy.exe", forms[i][0], forms[i][1], NULL};
        assert_int_equal(parse_list(&f, &e, list), CP_OK);
        assert_string_equal(f.kubelet_path, "D:\\k");
        cp_flags_free(&f);
    }
}

static void test_value_may_start_with_dash(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-log_dir", "-odd", "-v", "-3"), CP_OK);
    assert_string_equal(f.log_dir, "-odd");
    assert_int_equal(f.v, -3);
    cp_flags_free(&f);
}

static void test_empty_value(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-log_file=", "-metrics-bind-address", ""), CP_OK);
    assert_string_equal(f.log_file, "");
    assert_string_equal(f.metrics_bind_address, "");
    cp_flags_free(&f);
}

static void test_bools(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-require-privacy=false", "--windows-service",
                           "-alsologtostderr=1", "-logtostderr=F", "-skip_headers=True",
                           "-one_output=t", "-add_dir_header=TRUE", "-skip_log_headers",
                           "-version=0"),
                     CP_OK);
    assert_false(f.require_privacy);
    assert_true(f.windows_service);
    assert_true(f.alsologtostderr);
    assert_false(f.logtostderr);
    assert_true(f.skip_headers);
    assert_true(f.one_output);
    assert_true(f.add_dir_header);
    assert_true(f.skip_log_headers);
    assert_false(f.version);
    cp_flags_free(&f);
}

/* Go never takes a bool's value from the next argument: "false" is the
 * first non-flag argument and ends the flags. */
static void test_bool_does_not_consume_next(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-windows-service", "false", "-v", "4"), CP_OK);
    assert_true(f.windows_service);
    assert_int_equal(f.v, 0);
    assert_int_equal(f.n_args, 3);
    assert_string_equal(f.args[0], "false");
    cp_flags_free(&f);
}

static void test_working_dirs(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-working-dir", "C:\\a", "--working-dir=C:\\b,C:\\c",
                           "-working-dir=C:\\d,,C:\\e,"),
                     CP_OK);
    assert_int_equal(f.n_working_dirs, 5);
    assert_string_equal(f.working_dirs[0], "C:\\a");
    assert_string_equal(f.working_dirs[1], "C:\\b");
    assert_string_equal(f.working_dirs[2], "C:\\c");
    assert_string_equal(f.working_dirs[3], "C:\\d");
    assert_string_equal(f.working_dirs[4], "C:\\e");
    cp_flags_free(&f);
    assert_int_equal(f.n_working_dirs, 0);
    assert_null(f.working_dirs);
}

static void test_double_dash_ends_flags(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-v=2", "--", "-v=5", "x"), CP_OK);
    assert_int_equal(f.v, 2);
    assert_int_equal(f.n_args, 2);
    assert_string_equal(f.args[0], "-v=5");
    cp_flags_free(&f);
}

static void test_non_flag_ends_flags(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-v", "1", "run", "-v", "3"), CP_OK);
    assert_int_equal(f.v, 1);
    assert_int_equal(f.n_args, 3);
    assert_string_equal(f.args[0], "run");
    cp_flags_free(&f);

    assert_int_equal(PARSE(&f, &e, "-", "-v=3"), CP_OK); /* a lone "-" is an argument */
    assert_int_equal(f.v, 0);
    assert_int_equal(f.n_args, 2);
    cp_flags_free(&f);
}

static void test_last_value_wins(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-kubelet-path=C:\\x", "-kubelet-path=C:\\y", "-v=1", "-v=7"),
                     CP_OK);
    assert_string_equal(f.kubelet_path, "C:\\y");
    assert_int_equal(f.v, 7);
    cp_flags_free(&f);
}

static void test_klog_flags(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-v=5", "-log_dir", "C:\\logs", "-log_file_max_size=0x10",
                           "-stderrthreshold=warning", "-vmodule=conn*=4,pool=2",
                           "-log_backtrace_at=conn.c:12"),
                     CP_OK);
    assert_int_equal(f.v, 5);
    assert_string_equal(f.log_dir, "C:\\logs");
    assert_int_equal(f.log_file_max_size, 16);
    assert_int_equal(f.stderrthreshold, CP_SEV_WARNING);
    assert_string_equal(f.vmodule, "conn*=4,pool=2");
    assert_string_equal(f.log_backtrace_at, "conn.c:12");
    cp_flags_free(&f);

    assert_int_equal(PARSE(&f, &e, "-stderrthreshold", "FATAL", "-log_file_max_size", "010",
                           "-log_backtrace_at="),
                     CP_OK);
    assert_int_equal(f.stderrthreshold, CP_SEV_FATAL);
    assert_int_equal(f.log_file_max_size, 8);
    assert_string_equal(f.log_backtrace_at, "");
    cp_flags_free(&f);

    assert_int_equal(PARSE(&f, &e, "-stderrthreshold=0", "-log_file_max_size=18446744073709551615"),
                     CP_OK);
    assert_int_equal(f.stderrthreshold, CP_SEV_INFO);
    assert_true(f.log_file_max_size == UINT64_MAX);
    cp_flags_free(&f);
}

static void test_our_flags(void **state)
{
    (void)state;
    cp_flags f;
    cp_error e;
    assert_int_equal(PARSE(&f, &e, "-config", "C:\\etc\\csi-proxy.yaml", "-socket-dir=/tmp/s",
                           "--root", "/tmp/r", "-metrics-bind-address=:8888", "-version"),
                     CP_OK);
    assert_string_equal(f.config, "C:\\etc\\csi-proxy.yaml");
    assert_string_equal(f.socket_dir, "/tmp/s");
    assert_string_equal(f.root, "/tmp/r");
    assert_string_equal(f.metrics_bind_address, ":8888");
    assert_true(f.version);
    cp_flags_free(&f);
}

static void test_help(void **state)
{
    (void)state;
    static const char *const forms[] = {"-h", "-help", "--help", "--h"};
    for (size_t i = 0; i < 4; i++) {
        cp_flags f;
        cp_error e;
        const char *list[] = {"csi-proxy.exe", "-v=1", forms[i], "-nope", NULL};
        assert_int_equal(parse_list(&f, &e, list), CP_OK);
        assert_true(f.help);
        cp_flags_free(&f);
    }
}

static void test_errors(void **state)
{
    (void)state;
    EXPECT_ERROR("flag provided but not defined: -foo", "-foo");
    EXPECT_ERROR("flag provided but not defined: -foo", "--foo=bar");
    EXPECT_ERROR("flag provided but not defined: -kubelet-pod-path", "-v=1", "-kubelet-pod-path",
                 "C:\\x");
    EXPECT_ERROR("flag needs an argument: -kubelet-path", "-kubelet-path");
    EXPECT_ERROR("flag needs an argument: -working-dir", "-windows-service", "--working-dir");
    EXPECT_ERROR("bad flag syntax: ---v", "---v");
    EXPECT_ERROR("bad flag syntax: -=x", "-=x");
    EXPECT_ERROR("bad flag syntax: --=x", "--=x");
    EXPECT_ERROR("invalid boolean value \"yes\" for -windows-service: parse error",
                 "-windows-service=yes");
    EXPECT_ERROR("invalid boolean value \"\" for -logtostderr: parse error", "-logtostderr=");
    EXPECT_ERROR("invalid value \"abc\" for flag -v: parse error", "-v", "abc");
    EXPECT_ERROR("invalid value \"\" for flag -v: parse error", "-v=");
    EXPECT_ERROR("invalid value \"99999999999\" for flag -v: value out of range", "-v=99999999999");
    EXPECT_ERROR("invalid value \"-1\" for flag -log_file_max_size: parse error",
                 "-log_file_max_size=-1");
    EXPECT_ERROR(
        "invalid value \"18446744073709551616\" for flag -log_file_max_size: value out of range",
        "-log_file_max_size=18446744073709551616");
    EXPECT_ERROR("invalid value \"09\" for flag -log_file_max_size: parse error",
                 "-log_file_max_size=09");
    EXPECT_ERROR("invalid value \"LOUD\" for flag -stderrthreshold: parse error",
                 "-stderrthreshold=LOUD");
    EXPECT_ERROR("invalid value \"nope\" for flag -log_backtrace_at: parse error",
                 "-log_backtrace_at=nope");
    EXPECT_ERROR("invalid value \"a.c:x\" for flag -log_backtrace_at: parse error",
                 "-log_backtrace_at=a.c:x");
    EXPECT_ERROR("invalid value \"C:\\\\x\\\"\" for flag -v: parse error", "-v=C:\\x\"");
}

static void test_usage(void **state)
{
    (void)state;
    FILE *out = tmpfile();
    assert_non_null(out);
    cp_flags_usage(out);
    long n = ftell(out);
    assert_true(n > 0);
    char *buf = calloc(1, (size_t)n + 1);
    assert_non_null(buf);
    rewind(out);
    assert_int_equal(fread(buf, 1, (size_t)n, out), (size_t)n);
    fclose(out);
    assert_non_null(strstr(buf, "Usage of csi-proxy:\n"));
    assert_non_null(strstr(buf, "  -kubelet-path string\n    \t"));
    assert_non_null(strstr(buf, "(default \"C:\\\\var\\\\lib\\\\kubelet\")\n"));
    assert_non_null(strstr(buf, "  -windows-service\n    \t"));
    assert_non_null(strstr(
        buf, "  -logtostderr\n    \tlog to standard error instead of files (default true)\n"));
    assert_non_null(strstr(buf, "  -v value\n"));
    /* every flag listed, in name order */
    const char *names[] = {"-add_dir_header",
                           "-alsologtostderr",
                           "-config",
                           "-kubelet-path",
                           "-log_backtrace_at",
                           "-log_dir",
                           "-log_file",
                           "-log_file_max_size",
                           "-logtostderr",
                           "-metrics-bind-address",
                           "-one_output",
                           "-require-privacy",
                           "-root",
                           "-skip_headers",
                           "-skip_log_headers",
                           "-socket-dir",
                           "-stderrthreshold",
                           "-v",
                           "-version",
                           "-vmodule",
                           "-windows-service",
                           "-working-dir"};
    const char *at = buf;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char line[64];
        snprintf(line, sizeof(line), "\n  %s", names[i]);
        const char *p = strstr(at, line);
        assert_non_null(p);
        at = p + 1;
    }
    free(buf);
}

/* -kubelet-path and -working-dir may not be a drive
 * root or a system directory (roots.h), however the path is spelled. */
static void test_roots(void **state)
{
    (void)state;
    static const struct {
        const char *path, *why;
    } refused[] = {
        {"C:\\", "a drive root"},
        {"C:", "a drive root"},
        {"c:/", "a drive root"},
        {"D:\\", "a drive root"},
        {"C:\\var\\..", "a drive root"},
        {"C:\\var\\..\\..\\..", "a drive root"},
        {"\\\\srv\\share", "a drive root"},
        {"\\\\srv\\share\\", "a drive root"},
        {"\\\\?\\C:\\", "a drive root"},
        {"\\\\?\\UNC\\srv\\share", "a drive root"},
        {"\\\\?\\Volume{0a1b2c3d-0000-0000-0000-100000000000}\\", "a drive root"},
        {"\\", "a drive root"},
        {"C:\\Windows", "is C:\\Windows (%SystemRoot%), a system directory"},
        {"c:\\WINDOWS\\system32", "within C:\\Windows (%SystemRoot%)"},
        {"C:\\var\\..\\Windows\\Temp", "within C:\\Windows (%SystemRoot%)"},
        {"C:/Windows//System32/./drivers", "within C:\\Windows (%SystemRoot%)"},
        {"C:\\Program Files", "is C:\\Program Files (Program Files)"},
        {"C:\\Program Files (x86)\\app", "within C:\\Program Files (x86)"},
        {"C:\\ProgramData", "is C:\\ProgramData (ProgramData)"},
        {"C:\\ProgramData\\", "is C:\\ProgramData (ProgramData)"},
        {"C:\\Users", "is C:\\Users (the user profiles directory)"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char why[256] = "";
        if (cp_roots_judge(refused[i].path, cp_roots_portable, cp_roots_portable_n, why,
                           sizeof(why)) ||
            strstr(why, refused[i].why) == NULL)
            fail_msg("%s: want refused (\"%s\"), got \"%s\"", refused[i].path, refused[i].why, why);
    }
    const char *fine[] = {"C:\\var\\lib\\kubelet",
                          "C:\\csi",
                          "C:\\Windowsx",
                          "C:\\Windows.old2\\k",
                          "C:\\ProgramData\\kubelet",
                          "C:\\Users\\builder\\work",
                          "D:\\data\\kubelet",
                          "\\\\srv\\share\\kubelet",
                          "C:\\Program Filesx"};
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
        char why[256] = "";
        if (!cp_roots_judge(fine[i], cp_roots_portable, cp_roots_portable_n, why, sizeof(why)))
            fail_msg("%s: want accepted, got \"%s\"", fine[i], why);
    }
    /* The system's own places (Windows asks where they are): a Windows on D: */
    const cp_root_rule sys[] = {{"D:\\Win", "%SystemRoot%", true},
                                {"E:\\Profiles\\All", "the user profiles directory", false}};
    char why[256];
    assert_false(cp_roots_judge("d:\\win\\temp", sys, 2, why, sizeof(why)));
    assert_non_null(strstr(why, "within D:\\Win (%SystemRoot%)"));
    assert_false(cp_roots_judge("E:\\Profiles", sys, 2, why, sizeof(why)));
    assert_non_null(strstr(why, "holds E:\\Profiles\\All (the user profiles directory)"));
    assert_true(cp_roots_judge("E:\\Profiles\\All\\bob\\k", sys, 2, why, sizeof(why)));
    /* the check names the flag and the path */
    cp_error e;
    assert_int_equal(cp_roots_check("-kubelet-path", "C:\\", &e), CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "-kubelet-path C:\\: refused as a root: a drive root: callers "
                               "could change any file on the drive");
    assert_int_equal(cp_roots_check("-working-dir", "C:\\var\\lib\\kubelet", &e), CP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_upstream_install_line),
        cmocka_unit_test(test_value_syntaxes),
        cmocka_unit_test(test_value_may_start_with_dash),
        cmocka_unit_test(test_empty_value),
        cmocka_unit_test(test_bools),
        cmocka_unit_test(test_bool_does_not_consume_next),
        cmocka_unit_test(test_working_dirs),
        cmocka_unit_test(test_double_dash_ends_flags),
        cmocka_unit_test(test_non_flag_ends_flags),
        cmocka_unit_test(test_last_value_wins),
        cmocka_unit_test(test_klog_flags),
        cmocka_unit_test(test_our_flags),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_roots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
