/* test_audit.c - secrets never reach the audit trail or the log:
 * security/redact.c (by field name, at any depth, and by value in any
 * text), security/audit.c (the record's format), and the server hook
 * (rpc/job.c) that hands every CP_METHOD_MUTATES call to the audit with
 * the caller's identity, the result and the duration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filesystem/v1/api.pb-c.h"
#include "groups/catalog.h"
#include "iscsi/v1alpha2/api.pb-c.h"
#include "rpc/conn_internal.h"
#include "dispatch/method.h"
#include "security/audit.h"
#include "security/redact.h"
#include "smb/v1/api.pb-c.h"

static void test_secret_names(void **state)
{
    (void)state;
    const char *secret[] = {"password",           "Password",  "chap_secret", "MutualChapSecret",
                            "mutual_chap_secret", "PASS_WORD", "db_passwd",   "clientSecret"};
    const char *plain[] = {"username",  "chap_username", "remote_path", "path", "iqn",
                           "auth_type", "pass",          "secure",      ""};
    for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
        if (!cp_redact_is_secret(secret[i]))
            fail_msg("%s should be secret", secret[i]);
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        if (cp_redact_is_secret(plain[i]))
            fail_msg("%s should not be secret", plain[i]);
}

/* Every request message of every service: each string field set to a
 * marker; the rendering must show the markers of plain fields and never
 * those of secret ones. Also pins down which fields are secret today. */
static void test_every_request_type(void **state)
{
    (void)state;
    size_t n_secret = 0;
    for (size_t s = 0; s < cp_catalog_len; s++) {
        const ProtobufCServiceDescriptor *sd = cp_catalog[s].desc;
        for (unsigned m = 0; m < sd->n_methods; m++) {
            const ProtobufCMessageDescriptor *d = sd->methods[m].input;
            ProtobufCMessage *msg = calloc(1, d->sizeof_message);
            assert_non_null(msg);
            d->message_init(msg);
            char markers[16][64];
            unsigned nm = 0;
            for (unsigned f = 0; f < d->n_fields && nm < 16; f++) {
                const ProtobufCFieldDescriptor *fd = &d->fields[f];
                if (fd->type != PROTOBUF_C_TYPE_STRING || fd->label == PROTOBUF_C_LABEL_REPEATED)
                    continue;
                snprintf(markers[nm], sizeof(markers[nm]), "VAL-%s-%s", fd->name,
                         cp_redact_is_secret(fd->name) ? "hide" : "show");
                *(char **)((char *)msg + fd->offset) = markers[nm++];
                n_secret += cp_redact_is_secret(fd->name);
            }
            char out[2048];
            cp_redact_render(msg, out, sizeof(out));
            for (unsigned k = 0; k < nm; k++) {
                bool hide = strstr(markers[k], "-hide") != NULL;
                if (hide && strstr(out, markers[k]) != NULL)
                    fail_msg("%s/%s leaks %s: %s", sd->name, sd->methods[m].name, markers[k], out);
                if (!hide && strstr(out, markers[k]) == NULL)
                    fail_msg("%s/%s hides %s: %s", sd->name, sd->methods[m].name, markers[k], out);
            }
            free(msg);
        }
    }
    /* smb password (4 versions), iscsi chap_secret (2) and MutualChapSecret */
    assert_int_equal(n_secret, 7);
}

static void test_render_nested_and_escaped(void **state)
{
    (void)state;
    V1alpha2__TargetPortal portal = V1ALPHA2__TARGET_PORTAL__INIT;
    portal.target_address = "10.0.0.5";
    portal.target_port = 3260;
    V1alpha2__ConnectTargetRequest req = V1ALPHA2__CONNECT_TARGET_REQUEST__INIT;
    req.target_portal = &portal;
    req.iqn = "iqn.2024-01.example:\"quoted\"\n";
    req.auth_type = V1ALPHA2__AUTHENTICATION_TYPE__MUTUAL_CHAP;
    req.chap_username = "initiator";
    req.chap_secret = "s3cr3t-CHAP-value";
    char out[1024];
    cp_redact_render(&req.base, out, sizeof(out));
    assert_null(strstr(out, "s3cr3t"));
    assert_non_null(strstr(out, "\"chap_secret\":\"<redacted>\""));
    assert_non_null(strstr(out, "\"chap_username\":\"initiator\""));
    assert_non_null(
        strstr(out, "\"target_portal\":{\"target_address\":\"10.0.0.5\",\"target_port\":3260}"));
    assert_non_null(strstr(out, "\"auth_type\":\"MUTUAL_CHAP\""));
    assert_non_null(strstr(out, "\\\"quoted\\\"\\u000a"));
    /* tiny buffers: always terminated, never overrun */
    char small[8];
    memset(small, 'x', sizeof(small));
    assert_true(cp_redact_render(&req.base, small, sizeof(small)) < sizeof(small));
    assert_int_equal(small[7], '\0');
}

static void test_scrub_by_value(void **state)
{
    (void)state;
    V1__NewSmbGlobalMappingRequest req = V1__NEW_SMB_GLOBAL_MAPPING_REQUEST__INIT;
    req.remote_path = "\\\\srv\\share";
    req.username = "CORP\\svc";
    req.password = "hunter2!";
    char text[256] = "New-SmbGlobalMapping failed for user CORP\\svc with password hunter2! "
                     "(hunter2! again)";
    assert_int_equal(cp_redact_scrub(&req.base, text, sizeof(text)), 2);
    assert_null(strstr(text, "hunter2"));
    assert_non_null(strstr(text, "password <redacted> (<redacted> again)"));
    /* Cut to fit: no piece of the secret may survive at the cut. */
    char tight[40] = "xxxxxxxxxxxxxxxxxxxxxxxxx hunter2! hunt";
    cp_redact_scrub(&req.base, tight, sizeof(tight));
    assert_null(strstr(tight, "hunter2"));
    assert_null(strstr(tight, "hunt"));
    /* A secret too short to scrub safely is left to the field rendering. */
    req.password = "ab";
    char t2[64] = "abcabc";
    assert_int_equal(cp_redact_scrub(&req.base, t2, sizeof(t2)), 0);
}

/* ---- the record format ---------------------------------------------------- */

static const cp_method smb_method = {"NewSmbGlobalMapping",
                                     &v1__new_smb_global_mapping_request__descriptor,
                                     &v1__new_smb_global_mapping_response__descriptor,
                                     NULL,
                                     NULL,
                                     NULL,
                                     NULL,
                                     NULL,
                                     CP_METHOD_MUTATES};

static void test_format_call(void **state)
{
    (void)state;
    V1__NewSmbGlobalMappingRequest req = V1__NEW_SMB_GLOBAL_MAPPING_REQUEST__INIT;
    req.remote_path = "\\\\srv\\share";
    req.local_path = "C:\\var\\lib\\kubelet\\pods\\p\\vol";
    req.username = "CORP\\svc";
    req.password = "Tr0ub4dor&3";
    uint8_t buf[256];
    size_t n = protobuf_c_message_pack(&req.base, buf);
    cp_call_record r = {NULL,
                        &smb_method,
                        "/v1.Smb/NewSmbGlobalMapping",
                        4242,
                        "S-1-5-18",
                        buf,
                        n,
                        CP_E_PERMISSION_DENIED,
                        "access denied for CORP\\svc using Tr0ub4dor&3",
                        17};
    char line[CP_AUDIT_LINE_MAX];
    cp_audit_format_call(&r, line, sizeof(line));
    assert_null(strstr(line, "Tr0ub4dor"));
    assert_non_null(
        strstr(line, "audit: call /v1.Smb/NewSmbGlobalMapping caller=S-1-5-18 pid=4242"));
    assert_non_null(strstr(line, "\"password\":\"<redacted>\""));
    assert_non_null(strstr(line, "\"username\":\"CORP\\\\svc\""));
    assert_non_null(
        strstr(line, "result=PERMISSION_DENIED (access denied for CORP\\svc using <redacted>)"));
    assert_non_null(strstr(line, "duration=17ms"));

    r.status = CP_OK;
    r.message = "";
    r.peer_id = "";
    cp_audit_format_call(&r, line, sizeof(line));
    assert_non_null(strstr(line, "caller=unknown"));
    assert_non_null(strstr(line, "result=OK duration=17ms"));

    /* what the call changed beyond its arguments (cp_call_note) */
    r.note = "cleared the read-only attribute (DISK_ATTRIBUTE_READ_ONLY) of disk 21";
    cp_audit_format_call(&r, line, sizeof(line));
    assert_non_null(strstr(line, "result=OK changed=[cleared the read-only attribute "
                                 "(DISK_ATTRIBUTE_READ_ONLY) of disk 21] duration=17ms"));
    r.status = CP_E_FAILED_PRECONDITION;
    r.message = "later step failed";
    cp_audit_format_call(&r, line, sizeof(line));
    assert_non_null(strstr(line, "(later step failed) changed=[cleared the read-only"));
    r.status = CP_OK;
    r.message = "";
    r.note = "";
    cp_audit_format_call(&r, line, sizeof(line));
    assert_null(strstr(line, "changed="));

    /* undecodable bytes: say so, print none of them */
    uint8_t junk[] = {0xff, 0xff, 0xff, 0xff};
    r.req = junk;
    r.req_len = sizeof(junk);
    cp_audit_format_call(&r, line, sizeof(line));
    assert_non_null(strstr(line, "args=<4 bytes, not decodable>"));
}

/* log.redactFields: more names go through the same redaction (what the
 * Wine suite uses to show a secret never reaches the log, since the groups
 * whose requests carry passwords are not implemented). */
static void test_extra_secret_fields(void **state)
{
    (void)state;
    char *names[] = {"Target-Path"};
    assert_true(cp_redact_set_extra(names, 1));
    assert_true(cp_redact_is_secret("target_path"));
    assert_true(cp_redact_is_secret("targetPath"));
    assert_false(cp_redact_is_secret("source_path"));
    assert_false(cp_redact_is_secret("target_path_2")); /* whole names only */
    V1__CreateSymlinkRequest req = V1__CREATE_SYMLINK_REQUEST__INIT;
    req.source_path = "C:\\k\\src";
    req.target_path = "C:\\k\\Hidden-4711";
    uint8_t buf[256];
    size_t n = protobuf_c_message_pack(&req.base, buf);
    static const cp_method sym = {"CreateSymlink", &v1__create_symlink_request__descriptor,
                                  &v1__create_symlink_response__descriptor};
    cp_call_record r = {NULL,
                        &sym,
                        "/v1.Filesystem/CreateSymlink",
                        1,
                        "S-1-5-18",
                        buf,
                        n,
                        CP_E_INVALID_ARGUMENT,
                        "CreateSymlink C:\\k\\Hidden-4711: no",
                        1};
    char line[CP_AUDIT_LINE_MAX];
    cp_audit_format_call(&r, line, sizeof(line));
    assert_null(strstr(line, "Hidden-4711"));
    assert_non_null(strstr(line, "\"source_path\":\"C:\\\\k\\\\src\""));
    assert_non_null(strstr(line, "\"target_path\":\"<redacted>\""));
    assert_non_null(strstr(line, "(CreateSymlink <redacted>: no)"));
    char *too_many[CP_REDACT_MAX_EXTRA + 1];
    for (int i = 0; i <= CP_REDACT_MAX_EXTRA; i++)
        too_many[i] = "x";
    assert_false(cp_redact_set_extra(too_many, CP_REDACT_MAX_EXTRA + 1));
    assert_true(cp_redact_is_secret("target_path")); /* unchanged */
    assert_true(cp_redact_set_extra(NULL, 0));
    assert_false(cp_redact_is_secret("target_path"));
}

/* ---- UTF-8: records are never cut inside a character ---- */

/* Strict UTF-8 (as MultiByteToWideChar with MB_ERR_INVALID_CHARS). */
static bool valid_utf8(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s != 0) {
        size_t n = *s < 0x80                  ? 1
                   : *s >= 0xC2 && *s <= 0xDF ? 2
                   : *s >= 0xE0 && *s <= 0xEF ? 3
                   : *s >= 0xF0 && *s <= 0xF4 ? 4
                                              : 0;
        if (n == 0)
            return false;
        for (size_t i = 1; i < n; i++)
            if ((s[i] & 0xC0) != 0x80)
                return false;
        if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F) ||
            (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))
            return false;
        s += n;
    }
    return true;
}

/* A path of k ASCII bytes then multi-byte characters, for every k around
 * the 200-byte cut and for 2-, 3- and 4-byte characters: the rendering
 * keeps whole characters only, then "...". */
static void test_render_cuts_on_characters(void **state)
{
    (void)state;
    const char *chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"}; /* é € 😀 */
    for (size_t c = 0; c < 3; c++) {
        for (size_t k = 190; k <= 201; k++) {
            char path[400] = "";
            memset(path, 'a', k);
            path[k] = '\0';
            while (strlen(path) < 260)
                strcat(path, chars[c]);
            V1__MkdirRequest req = V1__MKDIR_REQUEST__INIT;
            req.path = path;
            char out[1024];
            cp_redact_render(&req.base, out, sizeof(out));
            if (!valid_utf8(out))
                fail_msg("char %zu, %zu ASCII bytes: rendering is not valid UTF-8: %s", c, k, out);
            const char *end = strstr(out, "...\"}");
            assert_non_null(end);
            /* nothing but whole characters was dropped: at most 3 bytes short of 200 */
            size_t shown = (size_t)(end - (out + strlen("{\"path\":\"")));
            assert_true(shown <= 200 && shown >= 197);
        }
    }
    /* A small output buffer: the cut there keeps whole characters too. */
    V1__MkdirRequest req = V1__MKDIR_REQUEST__INIT;
    req.path = "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac";
    for (size_t cap = 10; cap < 24; cap++) {
        char out[32];
        cp_redact_render(&req.base, out, cap);
        if (!valid_utf8(out))
            fail_msg("cap %zu: not valid UTF-8: %s", cap, out);
    }
}

static int sink_calls;
static bool sink_failure;
static char sink_line[CP_AUDIT_LINE_MAX];

static void sink(void *ctx, bool failure, const char *line)
{
    (void)ctx;
    sink_calls++;
    sink_failure = failure;
    snprintf(sink_line, sizeof(sink_line), "%s", line);
}

/* What the Event Log sink gets is valid UTF-8 whatever the request held
 * (raw bytes that are not UTF-8, a cut at 200 bytes, a line cut at its
 * cap), and it gets every record. */
static void test_record_always_valid_utf8(void **state)
{
    (void)state;
    cp_audit *a = cp_audit_new(sink, NULL);
    assert_non_null(a);
    char path[300];
    memset(path, 'x', 199);
    strcpy(path + 199, "\xc3\xa9\xc3\xa9 bad:\xff\xfe\xc0\xaf end");
    V1__MkdirRequest req = V1__MKDIR_REQUEST__INIT;
    req.path = path;
    uint8_t buf[512];
    size_t n = protobuf_c_message_pack(&req.base, buf);
    static const cp_method mk = {"Mkdir", &v1__mkdir_request__descriptor,
                                 &v1__mkdir_response__descriptor};
    cp_call_record r = {NULL,
                        &mk,
                        "/v1.Filesystem/Mkdir",
                        7,
                        "S-1-5-18",
                        buf,
                        n,
                        CP_E_INVALID_ARGUMENT,
                        "bad path \xff\xfe here",
                        1};
    sink_calls = 0;
    cp_audit_call(a, &r);
    assert_int_equal(sink_calls, 1);
    if (!valid_utf8(sink_line))
        fail_msg("record is not valid UTF-8: %s", sink_line);
    assert_non_null(strstr(sink_line, "result=INVALID_ARGUMENT (bad path ?? here)"));
    /* the message cut at the line's end */
    char line[64];
    r.message = "";
    r.status = CP_OK;
    cp_audit_format_call(&r, line, 50); /* "...args={"path":"xxx" cut at 49 bytes */
    assert_true(valid_utf8(line));
    cp_audit_denied(a, "p", "g", 1, "S-1-5-18", "why \xe2\x82");
    assert_int_equal(sink_calls, 2);
    assert_true(valid_utf8(sink_line));
    assert_non_null(strstr(sink_line, "why ??"));
    cp_audit_free(a);
}

/* ---- the server hook ------------------------------------------------------- */

typedef struct {
    const char *path;
} mk_req;

static int h_mkdir(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const mk_req *r = req;
    if (strstr(r->path, "evil") != NULL)
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "Mkdir: path %s is outside", r->path);
    return CP_OK;
}

static const cp_fieldmap mk_map[] = {{"path", offsetof(mk_req, path), CP_F_STRING}, {NULL, 0, 0}};
static const cp_method fs_methods[] = {
    {"Mkdir", &v1__mkdir_request__descriptor, &v1__mkdir_response__descriptor, mk_map, NULL,
     h_mkdir, NULL, NULL, CP_METHOD_MUTATES},
    {"PathExists", &v1__path_exists_request__descriptor, &v1__path_exists_response__descriptor,
     mk_map, NULL, h_mkdir, NULL, NULL, 0},
};
static const cp_service_def fs_def = {
    "filesystem", "v1", "v1.Filesystem", &v1__filesystem__descriptor,
    fs_methods,   2,    sizeof(mk_req),  sizeof(mk_req)};
static const cp_service fs_svc = {&fs_def, NULL};

static int n_records;
static char last_line[CP_AUDIT_LINE_MAX];

static void capture(void *ctx, const cp_call_record *r)
{
    (void)ctx;
    n_records++;
    cp_audit_format_call(r, last_line, sizeof(last_line));
}

static cp_job *posted;

static void post(void *ctx, cp_job *job)
{
    (void)ctx;
    posted = job;
}

/* Runs one request through cp_job exactly as the worker pool would. */
static void run_job(cp_conn *c, const cp_method *m, const char *path, const char *arg)
{
    V1__MkdirRequest req = V1__MKDIR_REQUEST__INIT;
    req.path = (char *)arg;
    size_t n = protobuf_c_message_get_packed_size(&req.base);
    uint8_t *body = malloc(n + 1);
    assert_non_null(body);
    protobuf_c_message_pack(&req.base, body);
    cp_job *job = cp_job_new(c, 1, m, path, body, n);
    assert_non_null(job);
    c->refs++;
    c->inflight++;
    posted = NULL;
    job->task.run(&job->task);
    assert_ptr_equal(posted, job);
    cp_job_complete(job); /* no such stream: the result is dropped */
}

static void test_hook_audits_mutating_calls(void **state)
{
    (void)state;
    cp_conn_opts o = {.peer_pid = 77, .audit = capture};
    snprintf(o.peer_id, sizeof(o.peer_id), "S-1-5-93-2-1");
    cp_conn *c = cp_conn_new(&fs_svc, NULL, &o, post, NULL);
    assert_non_null(c);
    n_records = 0;
    run_job(c, &fs_methods[0], "/v1.Filesystem/Mkdir", "C:\\var\\lib\\kubelet\\x");
    assert_int_equal(n_records, 1);
    assert_non_null(strstr(last_line,
                           "audit: call /v1.Filesystem/Mkdir caller=S-1-5-93-2-1 pid=77 "
                           "args={\"path\":\"C:\\\\var\\\\lib\\\\kubelet\\\\x\"} result=OK"));
    run_job(c, &fs_methods[0], "/v1.Filesystem/Mkdir", "C:\\evil");
    assert_int_equal(n_records, 2);
    assert_non_null(strstr(last_line, "result=INVALID_ARGUMENT (Mkdir: path C:\\evil is outside)"));
    /* a read-only method is not audited */
    run_job(c, &fs_methods[1], "/v1.Filesystem/PathExists", "C:\\x");
    assert_int_equal(n_records, 2);
    cp_conn_close(c);

    /* no hook: nothing happens, nothing crashes */
    cp_conn_opts none = {0};
    c = cp_conn_new(&fs_svc, NULL, &none, post, NULL);
    run_job(c, &fs_methods[0], "/v1.Filesystem/Mkdir", "C:\\y");
    assert_int_equal(n_records, 2);
    cp_conn_close(c);
}

static void test_audit_sink_and_denied(void **state)
{
    (void)state;
    cp_audit *a = cp_audit_new(sink, NULL);
    assert_non_null(a);
    sink_calls = 0;
    cp_audit_denied(a, "csi-proxy-smb-v1", "smb", 99, "S-1-5-21-1-2-3-1000", "not a member");
    assert_int_equal(sink_calls, 1);
    assert_true(sink_failure);
    assert_string_equal(sink_line, "audit: denied caller=S-1-5-21-1-2-3-1000 pid=99 group=smb "
                                   "pipe=csi-proxy-smb-v1: not a member");
    uint8_t b[] = {0x0a, 0x01, 'x'};
    cp_call_record r = {
        NULL, &fs_methods[0], "/v1.Filesystem/Mkdir", 1, "S-1-5-18", b, 3, CP_OK, "", 2};
    cp_audit_call(a, &r);
    assert_int_equal(sink_calls, 2);
    assert_false(sink_failure);
    cp_audit_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secret_names),
        cmocka_unit_test(test_every_request_type),
        cmocka_unit_test(test_render_nested_and_escaped),
        cmocka_unit_test(test_scrub_by_value),
        cmocka_unit_test(test_format_call),
        cmocka_unit_test(test_extra_secret_fields),
        cmocka_unit_test(test_render_cuts_on_characters),
        cmocka_unit_test(test_record_always_valid_utf8),
        cmocka_unit_test(test_hook_audits_mutating_calls),
        cmocka_unit_test(test_audit_sink_and_denied),
    };
    return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
