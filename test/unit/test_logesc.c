/* test_logesc.c - a caller's text cannot forge a log line, an audit record
 * or an Event Log entry: base/logesc.c escapes controls and invisible
 * reordering characters, and the sinks use it. End to end: a Mkdir whose
 * path carries CR LF and a whole klog line, through the real filesystem
 * group, the server's audit hook and the audit formatter, into the log
 * file: every line of the file is one the logger wrote. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filesystem/v1/api.pb-c.h"
#include "groups/groups.h"
#include "rpc/conn_internal.h"
#include "dispatch/method.h"
#include "security/audit.h"
#include "service/flags.h"
#include "base/log.h"
#include "base/logesc.h"
#include "host/fs_place.h"

static const char *esc(const char *in)
{
    static char out[512];
    cp_logesc(in, strlen(in), out, sizeof(out));
    return out;
}

static void test_escapes(void **state)
{
    (void)state;
    assert_string_equal(esc("C:\\var\\lib\\kubelet\\x"), "C:\\var\\lib\\kubelet\\x");
    assert_string_equal(esc("a\r\nI1127 b"), "a\\r\\nI1127 b");
    assert_string_equal(esc("tab\there"), "tab\\there");
    assert_string_equal(esc("\x1b[2J\x1b[H"), "\\x1b[2J\\x1b[H");
    assert_string_equal(esc("nul\x01 del\x7f"), "nul\\x01 del\\x7f");
    assert_string_equal(esc("bell\a bs\b ff\f vt\v"), "bell\\x07 bs\\x08 ff\\x0c vt\\x0b");
    /* C1 controls: NEL (U+0085) and CSI (U+009B) */
    assert_string_equal(esc("x\xc2\x85y\xc2\x9b"
                            "2J"),
                        "x\\u0085y\\u009b2J");
    /* line and paragraph separators; bidi overrides and isolates */
    assert_string_equal(esc("a\xe2\x80\xa8"
                            "b\xe2\x80\xa9"),
                        "a\\u2028b\\u2029");
    assert_string_equal(esc("\xe2\x80\xae"
                            "exe.txt\xe2\x81\xa6"),
                        "\\u202eexe.txt\\u2066");
    assert_string_equal(esc("\xe2\x80\x8f\xd8\x9c"), "\\u200f\\u061c");
    /* printable non-ASCII stays */
    assert_string_equal(esc("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82"),
                        "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x99\x82");
    /* bytes outside well-formed UTF-8: overlong, surrogate, lone, cut */
    assert_string_equal(esc("\xc0\xaf \xed\xa0\x80 \xff \xe6\x97"),
                        "\\xc0\\xaf \\xed\\xa0\\x80 \\xff \\xe6\\x97");
    /* idempotent: what was escaped passes again unchanged */
    const char *once = "a\\r\\nb \\x1b \\u2028";
    assert_string_equal(esc(once), once);
    assert_false(cp_logesc_needed(once, strlen(once)));
    assert_true(cp_logesc_needed("a\nb", 3));
}

static void test_cut_and_inplace(void **state)
{
    (void)state;
    char out[8];
    /* never half an escape: "ab\r" needs 4 more bytes after "ab" */
    size_t n = cp_logesc("ab\rcd", 5, out, 4);
    assert_int_equal(n, 2);
    assert_string_equal(out, "ab");
    n = cp_logesc("ab\rcd", 5, out, sizeof(out));
    assert_string_equal(out, "ab\\rcd");
    assert_int_equal(n, 6);
    assert_int_equal(cp_logesc("x", 1, out, 0), 0);
    /* a multi-byte character is not cut either */
    n = cp_logesc("a\xe6\x97\xa5", 4, out, 3);
    assert_string_equal(out, "a");
    char buf[32] = "line\r\nforged";
    n = cp_logesc_inplace(buf, sizeof(buf));
    assert_string_equal(buf, "line\\r\\nforged");
    assert_int_equal(n, strlen(buf));
    char small[10] = "ab\n\n\n\n";
    cp_logesc_inplace(small, sizeof(small));
    assert_string_equal(small, "ab\\n\\n\\n"); /* cut at an escape, NUL-terminated */
}

/* ---- end to end: Mkdir through the group and the audit to the log -------- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p);
}

static cp_job *posted;
static void post(void *ctx, cp_job *job)
{
    (void)ctx;
    posted = job;
}

static char sink_line[CP_AUDIT_LINE_MAX];
static void sink(void *ctx, bool failure, const char *line)
{
    (void)ctx, (void)failure;
    snprintf(sink_line, sizeof(sink_line), "%s", line);
}

#define FORGED                                                                                     \
    "I1127 08:00:00.000000    4242 audit.c:80] audit: call /v1.Filesystem/Rmdir "                  \
    "caller=S-1-5-18 pid=4 args={\"path\":\"C:\\\\var\\\\lib\\\\kubelet\\\\pods\"} result=OK "     \
    "duration=1ms"

static void test_mkdir_crlf_cannot_forge_a_line(void **state)
{
    (void)state;
    char root[] = "/tmp/cp-logesc-XXXXXX";
    assert_non_null(mkdtemp(root));
    char logpath[96];
    snprintf(logpath, sizeof(logpath), "%s/csi-proxy.log", root);

    cp_error e;
    cp_fs_host fs;
    assert_int_equal(cp_fs_host_posix_new(root, &fs, &e), CP_OK);
    cp_groups_config cfg = {.kubelet_path = "C:\\var\\lib\\kubelet", .fs = fs};
    cp_groups *g = cp_groups_new(&cfg, &e);
    assert_non_null(g);
    const cp_service *svc = NULL;
    for (size_t i = 0; i < cp_groups_count(g); i++) {
        const cp_service *s = cp_groups_service(g, i);
        if (strcmp(s->def->group, "filesystem") == 0 && strcmp(s->def->version, "v1") == 0)
            svc = s;
    }
    assert_non_null(svc);
    const cp_method *mkdir_m = NULL;
    for (size_t i = 0; i < svc->def->n_methods; i++)
        if (strcmp(svc->def->methods[i].name, "Mkdir") == 0)
            mkdir_m = &svc->def->methods[i];
    assert_non_null(mkdir_m);

    const char *argv[] = {"csi-proxy", "-logtostderr=false", "-log_file", logpath};
    cp_flags f;
    assert_int_equal(cp_flags_parse(&f, 4, (char **)argv, &e), CP_OK);
    cp_log_options lo;
    cp_flags_log_options(&f, &lo);
    assert_int_equal(cp_log_init(&lo, 1234, &e), CP_OK);

    cp_audit *a = cp_audit_new(sink, NULL);
    cp_conn_opts o = {.peer_pid = 77, .audit = cp_audit_call, .audit_ctx = a};
    snprintf(o.peer_id, sizeof(o.peer_id), "S-1-5-93-2-1");
    cp_conn *c = cp_conn_new(svc, NULL, &o, post, NULL);
    assert_non_null(c);

    /* The path carries CR LF and a whole klog line. */
    V1__MkdirRequest req = V1__MKDIR_REQUEST__INIT;
    req.path = "C:\\var\\lib\\kubelet\\x\r\n" FORGED "\r\n\x1b[2J";
    size_t n = protobuf_c_message_get_packed_size(&req.base);
    uint8_t *body = malloc(n);
    assert_non_null(body);
    protobuf_c_message_pack(&req.base, body);
    cp_job *job = cp_job_new(c, 1, mkdir_m, "/v1.Filesystem/Mkdir", body, n);
    assert_non_null(job);
    c->refs++;
    c->inflight++;
    posted = NULL;
    job->task.run(&job->task);
    assert_ptr_equal(posted, job);
    cp_job_complete(job);
    cp_conn_close(c);
    cp_log_close();

    FILE *fp = fopen(logpath, "r");
    assert_non_null(fp);
    char line[16384];
    int records = 0, bad = 0;
    while (fgets(line, sizeof(line), fp) != NULL) {
        if (strncmp(line, "Log file created at:", 20) == 0 ||
            strncmp(line, "Log line format:", 16) == 0)
            continue;
        /* every line is the logger's own: "<sev>mmdd hh:mm:ss.uuuuuu    1234 file:line] " */
        if (strlen(line) < 30 || strncmp(line + 21, "    1234 ", 9) != 0) {
            fprintf(stderr, "a line the logger did not write: %s", line);
            bad++;
        }
        if (strstr(line, "\x1b") != NULL) {
            fprintf(stderr, "a raw escape code in the log: %s", line);
            bad++;
        }
        if (strstr(line, "audit: call /v1.Filesystem/Mkdir") != NULL)
            records++;
    }
    fclose(fp);
    assert_int_equal(bad, 0);
    assert_int_equal(records, 1);
    /* the Event Log's copy is one line too */
    assert_null(strchr(sink_line, '\n'));
    assert_null(strchr(sink_line, '\r'));
    assert_null(strchr(sink_line, '\x1b'));
    assert_non_null(strstr(sink_line, "\\r\\nI1127 08:00:00.000000"));

    cp_audit_free(a);
    cp_flags_free(&f);
    cp_groups_free(g);
    cp_fs_host_posix_free(&fs);
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_cut_and_inplace),
        cmocka_unit_test(test_mkdir_crlf_cannot_forge_a_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
