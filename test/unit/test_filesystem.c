/* test_filesystem.c - the filesystem group through the real dispatch path:
 * encoded protobuf requests -> cp_dispatch_run -> version table -> group
 * logic -> fs_posix on a temporary directory -> encoded responses. Also the
 * registry (groups.c): every table of all 23 services passes its checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filesystem/v1/api.pb-c.h"
#include "filesystem/v1alpha1/api.pb-c.h"
#include "groups/catalog.h"
#include "groups/filesystem/filesystem.h"
#include "groups/groups.h"
#include "dispatch/dispatch.h"
#include "host/fs_place.h"
#include "test/unit/group_call.h"
#include "test/unit/group_env.h"

#define K "C:\\var\\lib\\kubelet"

static const char *const fs_versions[] = {"v1alpha1", "v1beta1", "v1beta2", "v1", "v2alpha1"};
#define N_VERSIONS (sizeof(fs_versions) / sizeof(fs_versions[0]))

typedef genv env;

/* --- fixture -------------------------------------------------------------- */

static int setup(void **state)
{
    static const char *const wd[] = {"C:\\work"};
    genv_opts o = {.tag = "fs-test", .cfg = {.working_dirs = wd, .n_working_dirs = 1}};
    return genv_open(&o, (genv **)state);
}

static int teardown(void **state)
{
    return genv_close(*state);
}

/* "C:\a\b" -> "<root>/C/a/b" (as fs_posix maps it) */
static const char *host(const env *t, const char *wpath)
{
    static char buf[4][512];
    static int next;
    char *b = buf[next++ % 4];
    genv_host_path(t, wpath, b, 512);
    return b;
}

static void host_file(const env *t, const char *wpath)
{
    FILE *f = fopen(host(t, wpath), "w");
    assert_non_null(f);
    fputs("data", f);
    fclose(f);
}

static bool host_exists(const env *t, const char *wpath)
{
    struct stat st;
    return lstat(host(t, wpath), &st) == 0;
}

static bool host_is_dir(const env *t, const char *wpath)
{
    struct stat st;
    return lstat(host(t, wpath), &st) == 0 && S_ISDIR(st.st_mode);
}

static bool host_is_symlink(const env *t, const char *wpath)
{
    struct stat st;
    return lstat(host(t, wpath), &st) == 0 && S_ISLNK(st.st_mode);
}

/* --- calling through dispatch --------------------------------------------- */

static const cp_service *service(const env *t, const char *version)
{
    return gcall_service(t->groups, "filesystem", version);
}

typedef struct result {
    int status;
    char msg[CP_ERROR_MSG_MAX];
    bool value;           /* exists / is_symlink / is_mount_point */
    char error_field[64]; /* v1alpha1/v1beta1 response "error" */
} result;

/* Encodes a request for version.method from the given fields (those the
 * message lacks are skipped), runs it and decodes the response. */
static result call(const env *t, const char *version, const char *method, const char *path,
                   const char *source, const char *target, bool force)
{
    const cp_service *svc = service(t, version);
    ProtobufCMessage *req = gcall_fs_request(svc, method, path, source, target, force);
    gcall_reply g = gcall_run(svc, method, req);
    free(req);
    result r = {.status = g.status};
    snprintf(r.msg, sizeof(r.msg), "%s", g.msg);
    for (unsigned i = 0; g.resp != NULL && i < g.resp->descriptor->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &g.resp->descriptor->fields[i];
        if (f->type == PROTOBUF_C_TYPE_BOOL)
            r.value = *(protobuf_c_boolean *)((char *)g.resp + f->offset) != 0;
        if (strcmp(f->name, "error") == 0)
            snprintf(r.error_field, sizeof(r.error_field), "%s",
                     *(char **)((char *)g.resp + f->offset));
    }
    gcall_reply_free(&g);
    return r;
}

static bool legacy(const char *version)
{
    return strcmp(version, "v1alpha1") == 0 || strcmp(version, "v1beta1") == 0;
}

static const char *link_method(const char *v)
{
    return legacy(v) ? "LinkPath" : "CreateSymlink";
}

static const char *is_link_method(const char *v)
{
    return legacy(v) ? "IsMountPoint" : "IsSymlink";
}

#define expect_ok(r)                                                                               \
    do {                                                                                           \
        result r_ = (r);                                                                           \
        if (r_.status != CP_OK)                                                                    \
            fail_msg("expected OK, got %s: %s", cp_status_name(r_.status), r_.msg);                \
    } while (0)

static void expect_status(result r, int status, const char *in_msg)
{
    gcall_check(r.status, r.msg, status, in_msg);
}

/* --- tables ---------------------------------------------------------------- */

static void test_every_table_checks(void **state)
{
    env *t = *state;
    assert_int_equal(cp_groups_count(t->groups), 23);
    assert_int_equal(cp_catalog_len, 23);
    char err[256];
    for (size_t i = 0; i < cp_groups_count(t->groups); i++) {
        const cp_service *s = cp_groups_service(t->groups, i);
        const cp_service_def *d = s->def;
        if (cp_service_check(d, err, sizeof(err)) != 0)
            fail_msg("%s: %s", d->service, err);
        assert_string_equal(d->group, cp_catalog[i].group);
        assert_string_equal(d->version, cp_catalog[i].version);
        assert_ptr_equal(d->svc_desc, cp_catalog[i].desc);
        assert_string_equal(d->service, cp_catalog[i].desc->name);
        char pipe[96], want[96];
        cp_groups_pipe_name(d, pipe, sizeof(pipe));
        snprintf(want, sizeof(want), "csi-proxy-%s-%s", cp_catalog[i].group, cp_catalog[i].version);
        assert_string_equal(pipe, want);
        if (strcmp(d->group, "filesystem") == 0) {
            /* every RPC the proto declares is implemented */
            assert_int_equal(d->n_methods, d->svc_desc->n_methods);
            assert_non_null(s->ctx);
            for (size_t j = 0; j < d->n_methods; j++) {
                const cp_method *m = &d->methods[j];
                bool reads = strcmp(m->name, "PathExists") == 0 ||
                             strcmp(m->name, "IsSymlink") == 0 ||
                             strcmp(m->name, "IsMountPoint") == 0;
                assert_int_equal((m->flags & CP_METHOD_MUTATES) != 0, !reads);
                assert_true(cp_service_knows(d, m->name, strlen(m->name)));
            }
        } else if (strcmp(d->group, "disk") != 0 && strcmp(d->group, "volume") != 0) {
            /* the system, smb and iscsi tables implement every RPC
             * (test_system.c, test_smb.c, test_iscsi.c); disk and volume:
             * test_storage_groups.c */
            assert_int_equal(d->n_methods, d->svc_desc->n_methods);
        }
    }
    assert_null(cp_groups_service(t->groups, 23));
    /* the five filesystem tables on their own, too */
    const cp_service_def *defs[] = {&cp_fs_v1alpha1_def, &cp_fs_v1beta1_def, &cp_fs_v1beta2_def,
                                    &cp_fs_v1_def, &cp_fs_v2alpha1_def};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(cp_service_check(defs[i], err, sizeof(err)), 0);
}

static void test_groups_config_errors(void **state)
{
    env *t = *state;
    cp_error e;
    const char *const rel[] = {"relative\\dir"};
    cp_groups_config cfg = {.working_dirs = rel, .n_working_dirs = 1, .fs = t->fs};
    assert_null(cp_groups_new(&cfg, &e));
    assert_int_equal(e.status, CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "relative\\dir"));
    cp_groups_config nofs = {0};
    assert_null(cp_groups_new(&nofs, &e));
    assert_int_equal(e.status, CP_E_INVALID_ARGUMENT);
}

/* --- handlers ---------------------------------------------------------------- */

static void test_path_exists(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\pods");
    symlink("/nonexistent/target", host(t, K "\\dangling"));
    for (size_t i = 0; i < N_VERSIONS; i++) {
        const char *v = fs_versions[i];
        result r = call(t, v, "PathExists", K "\\pods", NULL, NULL, false);
        expect_ok(r);
        assert_true(r.value);
        r = call(t, v, "PathExists", K "\\pods\\", NULL, NULL, false);
        expect_ok(r);
        assert_true(r.value);
        r = call(t, v, "PathExists", K "\\missing", NULL, NULL, false);
        expect_ok(r);
        assert_false(r.value);
        r = call(t, v, "PathExists", K "\\missing\\deeper", NULL, NULL, false);
        expect_ok(r);
        assert_false(r.value);
        r = call(t, v, "PathExists", K "\\dangling", NULL, NULL, false); /* Lstat semantics */
        expect_ok(r);
        assert_true(r.value);
        assert_string_equal(r.error_field, ""); /* legacy error field never set */
        expect_status(call(t, v, "PathExists", "C:\\var\\lib\\kubelet-evil", NULL, NULL, false),
                      CP_E_INVALID_ARGUMENT,
                      "path: C:\\var\\lib\\kubelet-evil is not within the working directories: "
                      "[C:\\work C:\\var\\lib\\kubelet]");
    }
}

/* The generated structs, by hand: a v1alpha1 request with context=POD
 * (ignored) and a typed v1 round trip. */
static void test_typed_messages(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\x");
    const cp_service *svc = service(t, "v1alpha1");
    const cp_method *m = cp_service_find(svc->def, "PathExists", 10);
    assert_non_null(m);
    V1alpha1__PathExistsRequest req = V1ALPHA1__PATH_EXISTS_REQUEST__INIT;
    req.path = K "\\x";
    req.context = V1ALPHA1__PATH_CONTEXT__POD;
    uint8_t buf[256];
    size_t len = v1alpha1__path_exists_request__pack(&req, buf);
    cp_call *c = cp_call_new(svc->ctx, "/v1alpha1.Filesystem/PathExists", 0);
    uint8_t *out = NULL;
    size_t out_len = 0;
    assert_int_equal(cp_dispatch_run(svc, m, c, buf, len, &out, &out_len), CP_OK);
    V1alpha1__PathExistsResponse *resp = v1alpha1__path_exists_response__unpack(NULL, out_len, out);
    assert_non_null(resp);
    assert_true(resp->exists);
    assert_string_equal(resp->error, "");
    v1alpha1__path_exists_response__free_unpacked(resp, NULL);
    free(out);
    cp_call_free(c);

    svc = service(t, "v1");
    m = cp_service_find(svc->def, "Mkdir", 5);
    V1__MkdirRequest mk = V1__MKDIR_REQUEST__INIT;
    mk.path = K "\\typed\\a";
    len = v1__mkdir_request__pack(&mk, buf);
    c = cp_call_new(svc->ctx, "/v1.Filesystem/Mkdir", 0);
    assert_int_equal(cp_dispatch_run(svc, m, c, buf, len, &out, &out_len), CP_OK);
    assert_int_equal(out_len, 0); /* MkdirResponse has no fields */
    free(out);
    cp_call_free(c);
    assert_true(host_is_dir(t, K "\\typed\\a"));
}

/* Regression (fuzz_messages): a request protobuf-c decodes but the wire
 * format forbids (an overlong tag for field number 0) is refused before
 * any handler runs, as grpc-go refuses it. */
static void test_invalid_field_number_refused(void **state)
{
    env *t = *state;
    const cp_service *svc = service(t, "v1");
    const cp_method *m = cp_service_find(svc->def, "Mkdir", 5);
    assert_non_null(m);
    static const char path[] = K "\\fieldzero";
    uint8_t buf[128];
    size_t n = sizeof(path) - 1;
    buf[0] = 0x0a;
    buf[1] = (uint8_t)n;
    memcpy(buf + 2, path, n);
    memcpy(buf + 2 + n, "\x80\x00\x00", 3);
    cp_call *c = cp_call_new(svc->ctx, "/v1.Filesystem/Mkdir", 0);
    uint8_t *out = NULL;
    size_t out_len = 0;
    assert_int_equal(cp_dispatch_run(svc, m, c, buf, n + 5, &out, &out_len), CP_E_INTERNAL);
    assert_non_null(strstr(cp_call_error(c)->msg, "unmarshalling"));
    assert_null(out);
    cp_call_free(c);
    assert_false(host_is_dir(t, K "\\fieldzero"));
}

static void test_mkdir(void **state)
{
    env *t = *state;
    for (size_t i = 0; i < N_VERSIONS; i++) {
        const char *v = fs_versions[i];
        char p[128];
        snprintf(p, sizeof(p), K "\\%s\\a\\b\\c", v);
        expect_ok(call(t, v, "Mkdir", p, NULL, NULL, false));
        assert_true(host_is_dir(t, p));
        expect_ok(call(t, v, "Mkdir", p, NULL, NULL, false)); /* idempotent */
        char f[128];
        snprintf(f, sizeof(f), K "\\%s\\file", v);
        host_file(t, f);
        expect_status(call(t, v, "Mkdir", f, NULL, NULL, false), CP_E_FAILED_PRECONDITION, f);
        char under[160];
        snprintf(under, sizeof(under), "%s\\sub", f);
        expect_status(call(t, v, "Mkdir", under, NULL, NULL, false), CP_E_FAILED_PRECONDITION,
                      NULL);
        assert_false(host_exists(t, under));
    }
    /* working dirs are allowed too, and the kubelet root itself */
    expect_ok(call(t, "v1", "Mkdir", "C:\\work\\w", NULL, NULL, false));
    assert_true(host_is_dir(t, "C:\\work\\w"));
    expect_ok(call(t, "v1", "Mkdir", K, NULL, NULL, false));
    expect_status(call(t, "v1", "Mkdir", "C:\\var\\lib\\kubelet-evil", NULL, NULL, false),
                  CP_E_INVALID_ARGUMENT, "C:\\var\\lib\\kubelet-evil");
    assert_false(host_exists(t, "C:\\var\\lib\\kubelet-evil"));
    expect_status(call(t, "v1", "Mkdir", K "\\..\\x", NULL, NULL, false), CP_E_INVALID_ARGUMENT,
                  "path contains invalid characters: " K "\\..\\x");
    expect_status(call(t, "v1", "Mkdir", "", NULL, NULL, false), CP_E_INVALID_ARGUMENT,
                  "Mkdir: not an absolute Windows path");
}

static void test_rmdir(void **state)
{
    env *t = *state;
    for (size_t i = 0; i < N_VERSIONS; i++) {
        const char *v = fs_versions[i];
        char d[128], f[160];
        snprintf(d, sizeof(d), K "\\%s\\d", v);
        /* plain empty directory */
        genv_mkdirs(t, d);
        expect_ok(call(t, v, "Rmdir", d, NULL, NULL, false));
        assert_false(host_exists(t, d));
        /* missing: NOT_FOUND without force, success with it */
        expect_status(call(t, v, "Rmdir", d, NULL, NULL, false), CP_E_NOT_FOUND, d);
        expect_ok(call(t, v, "Rmdir", d, NULL, NULL, true));
        /* non-empty */
        snprintf(f, sizeof(f), "%s\\sub\\file", d);
        genv_mkdirs(t, d);
        genv_mkdirs(t, strcat(strcpy((char[160]){0}, d), "\\sub"));
        host_file(t, f);
        expect_status(call(t, v, "Rmdir", d, NULL, NULL, false), CP_E_FAILED_PRECONDITION, d);
        assert_true(host_exists(t, f));
        expect_ok(call(t, v, "Rmdir", d, NULL, NULL, true));
        assert_false(host_exists(t, d));
        /* a single file */
        snprintf(f, sizeof(f), K "\\%s\\f", v);
        host_file(t, f);
        expect_ok(call(t, v, "Rmdir", f, NULL, NULL, false));
        assert_false(host_exists(t, f));
    }
    expect_status(call(t, "v1", "Rmdir", "\\\\server\\share", NULL, NULL, true),
                  CP_E_INVALID_ARGUMENT, "invalid character \\ at beginning of path");
}

/* Rmdir force on a tree holding a link to a directory elsewhere removes
 * the link, not what it points to. */
static void test_rmdir_force_keeps_link_targets(void **state)
{
    env *t = *state;
    genv_mkdirs(t, "C:\\outside");
    host_file(t, "C:\\outside\\keep");
    genv_mkdirs(t, K "\\tree\\sub");
    assert_int_equal(symlink(host(t, "C:\\outside"), host(t, K "\\tree\\sub\\link")), 0);
    expect_ok(call(t, "v1", "Rmdir", K "\\tree", NULL, NULL, true));
    assert_false(host_exists(t, K "\\tree"));
    assert_true(host_exists(t, "C:\\outside\\keep"));
    /* Rmdir on a link itself (its target outside) removes just the link */
    assert_int_equal(symlink(host(t, "C:\\outside"), host(t, K "\\l2")), 0);
    expect_ok(call(t, "v1", "Rmdir", K "\\l2", NULL, NULL, true));
    assert_false(host_exists(t, K "\\l2"));
    assert_true(host_exists(t, "C:\\outside\\keep"));
}

static void test_rmdir_contents(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\rc\\a\\b");
    host_file(t, K "\\rc\\a\\b\\f");
    host_file(t, K "\\rc\\top");
    /* outside the kubelet dir, on the emulated drive and off it */
    genv_mkdirs(t, "C:\\outside");
    host_file(t, "C:\\outside\\keep");
    char off_drive[128];
    snprintf(off_drive, sizeof(off_drive), "%s/offdrive", t->root);
    mkdir(off_drive, 0755);
    char off_file[160];
    snprintf(off_file, sizeof(off_file), "%s/keep", off_drive);
    fclose(fopen(off_file, "w"));
    assert_int_equal(symlink(host(t, "C:\\outside"), host(t, K "\\rc\\link")), 0);
    assert_int_equal(symlink(off_drive, host(t, K "\\rc\\a\\link2")), 0);
    assert_int_equal(symlink(host(t, "C:\\outside\\keep"), host(t, K "\\rc\\filelink")), 0);

    expect_ok(call(t, "v2alpha1", "RmdirContents", K "\\rc", NULL, NULL, false));
    assert_true(host_is_dir(t, K "\\rc")); /* the directory stays */
    assert_false(host_exists(t, K "\\rc\\a"));
    assert_false(host_exists(t, K "\\rc\\top"));
    assert_false(host_exists(t, K "\\rc\\link"));
    assert_false(host_exists(t, K "\\rc\\filelink"));
    assert_true(host_exists(t, "C:\\outside\\keep")); /* link targets untouched */
    struct stat st;
    assert_int_equal(lstat(off_file, &st), 0);

    /* empty directory: nothing to do */
    expect_ok(call(t, "v2alpha1", "RmdirContents", K "\\rc", NULL, NULL, false));
    /* missing, a file */
    expect_status(call(t, "v2alpha1", "RmdirContents", K "\\nope", NULL, NULL, false),
                  CP_E_NOT_FOUND, K "\\nope");
    host_file(t, K "\\plain");
    expect_status(call(t, "v2alpha1", "RmdirContents", K "\\plain", NULL, NULL, false),
                  CP_E_FAILED_PRECONDITION, K "\\plain");
    /* the directory itself a link out: refused after resolution */
    assert_int_equal(symlink(host(t, "C:\\outside"), host(t, K "\\out")), 0);
    expect_status(call(t, "v2alpha1", "RmdirContents", K "\\out", NULL, NULL, false),
                  CP_E_INVALID_ARGUMENT, "resolves to C:\\outside");
    assert_true(host_exists(t, "C:\\outside\\keep"));
    /* a link to a directory inside is fine */
    genv_mkdirs(t, K "\\inner");
    host_file(t, K "\\inner\\x");
    assert_int_equal(symlink(host(t, K "\\inner"), host(t, K "\\toinner")), 0);
    expect_ok(call(t, "v2alpha1", "RmdirContents", K "\\toinner", NULL, NULL, false));
    assert_false(host_exists(t, K "\\inner\\x"));
    assert_true(host_is_symlink(t, K "\\toinner"));
    /* only v2alpha1 has it */
    for (size_t i = 0; i < N_VERSIONS - 1; i++)
        assert_null(cp_service_find(service(t, fs_versions[i])->def, "RmdirContents", 13));
}

static void test_symlinks(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\src");
    host_file(t, K "\\file");
    for (size_t i = 0; i < N_VERSIONS; i++) {
        const char *v = fs_versions[i];
        char link[128], dangling[128], gone[128];
        snprintf(link, sizeof(link), K "\\link-%s", v);
        snprintf(dangling, sizeof(dangling), K "\\dangling-%s", v);
        snprintf(gone, sizeof(gone), K "\\gone-%s", v);
        expect_ok(call(t, v, link_method(v), NULL, K "\\src", link, false));
        assert_true(host_is_symlink(t, link));
        char target[512];
        ssize_t n = readlink(host(t, link), target, sizeof(target) - 1);
        assert_true(n > 0);
        target[n] = '\0';
        assert_string_equal(target, host(t, K "\\src"));

        result r = call(t, v, is_link_method(v), link, NULL, NULL, false);
        expect_ok(r);
        assert_true(r.value);
        assert_string_equal(r.error_field, "");
        r = call(t, v, is_link_method(v), K "\\src", NULL, NULL, false);
        expect_ok(r);
        assert_false(r.value);
        r = call(t, v, is_link_method(v), K "\\file", NULL, NULL, false);
        expect_ok(r);
        assert_false(r.value);
        expect_status(call(t, v, is_link_method(v), K "\\missing", NULL, NULL, false),
                      CP_E_NOT_FOUND, K "\\missing");

        /* a link whose source is gone: exists, but is not a "symlink" */
        genv_mkdirs(t, gone);
        expect_ok(call(t, v, link_method(v), NULL, gone, dangling, false));
        rmdir(host(t, gone));
        r = call(t, v, is_link_method(v), dangling, NULL, NULL, false);
        expect_ok(r);
        assert_false(r.value);
        r = call(t, v, "PathExists", dangling, NULL, NULL, false);
        expect_ok(r);
        assert_true(r.value);

        /* onto an existing path */
        expect_status(call(t, v, link_method(v), NULL, K "\\src", link, false), CP_E_ALREADY_EXISTS,
                      link);
        expect_status(call(t, v, link_method(v), NULL, K "\\src", K "\\file", false),
                      CP_E_ALREADY_EXISTS, NULL);
    }
}

static void test_symlink_rules(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\src");
    genv_mkdirs(t, "C:\\outside");
    for (size_t i = 0; i < N_VERSIONS; i++) {
        const char *v = fs_versions[i];
        /* source outside */
        expect_status(call(t, v, link_method(v), NULL, "C:\\outside", K "\\l", false),
                      CP_E_INVALID_ARGUMENT, "path: C:\\outside is not within");
        assert_false(host_exists(t, K "\\l"));
        /* target outside */
        expect_status(call(t, v, link_method(v), NULL, K "\\src", "C:\\outside\\l", false),
                      CP_E_INVALID_ARGUMENT, "path: C:\\outside\\l is not within");
        assert_false(host_exists(t, "C:\\outside\\l"));
        /* both bad: target_path is checked first, as upstream */
        expect_status(call(t, v, link_method(v), NULL, "\\\\srv\\share", "D:\\x", false),
                      CP_E_INVALID_ARGUMENT, "path: D:\\x is not within");
        /* the legacy names check rules too (beyond upstream) */
        expect_status(call(t, v, is_link_method(v), "\\\\?\\C:\\x", NULL, NULL, false),
                      CP_E_INVALID_ARGUMENT, "\\\\?\\C:\\x");
    }
    /* source inside textually, but a link out: refused after resolution */
    assert_int_equal(symlink(host(t, "C:\\outside"), host(t, K "\\escape")), 0);
    expect_status(call(t, "v1", "CreateSymlink", NULL, K "\\escape", K "\\l", false),
                  CP_E_INVALID_ARGUMENT, "resolves to C:\\outside");
    assert_false(host_exists(t, K "\\l"));
}

/* A link inside the kubelet dir that leads outside cannot be used as a
 * parent; the link itself can still be inspected and removed. */
static void test_confinement_after_links(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K);
    genv_mkdirs(t, "C:\\outside");
    host_file(t, "C:\\outside\\secret");
    assert_int_equal(symlink(host(t, "C:\\outside"), host(t, K "\\out")), 0);

    expect_status(call(t, "v1", "Mkdir", K "\\out\\new", NULL, NULL, false), CP_E_INVALID_ARGUMENT,
                  "Mkdir: path: " K "\\out\\new resolves to C:\\outside\\new, which is not within");
    assert_false(host_exists(t, "C:\\outside\\new"));
    expect_status(call(t, "v1", "PathExists", K "\\out\\secret", NULL, NULL, false),
                  CP_E_INVALID_ARGUMENT, "resolves to");
    expect_status(call(t, "v1", "Rmdir", K "\\out\\secret", NULL, NULL, true),
                  CP_E_INVALID_ARGUMENT, "resolves to");
    assert_true(host_exists(t, "C:\\outside\\secret"));
    expect_status(call(t, "v1", "CreateSymlink", NULL, K, K "\\out\\l", false),
                  CP_E_INVALID_ARGUMENT, "resolves to");

    result r = call(t, "v1", "IsSymlink", K "\\out", NULL, NULL, false);
    expect_ok(r);
    assert_true(r.value);
    r = call(t, "v1", "PathExists", K "\\out", NULL, NULL, false);
    expect_ok(r);
    assert_true(r.value);
    expect_ok(call(t, "v1", "Rmdir", K "\\out", NULL, NULL, false));
    assert_false(host_exists(t, K "\\out"));
    assert_true(host_exists(t, "C:\\outside\\secret"));

    /* a dangling link in the middle of a path fails closed */
    assert_int_equal(symlink(host(t, "C:\\nowhere"), host(t, K "\\dead")), 0);
    expect_status(call(t, "v1", "Mkdir", K "\\dead\\x", NULL, NULL, false),
                  CP_E_FAILED_PRECONDITION, K "\\dead");
    assert_false(host_exists(t, "C:\\nowhere"));
}

/* --- the configured directories themselves ---------------- */

/* The spellings the rules accept for the kubelet root and the working dir. */
static const char *const root_spellings[] = {
    K, K "\\", "c:\\VAR\\lib\\Kubelet", "c:\\var\\lib\\KUBELET\\", "C:\\work", "c:\\WORK\\",
};
#define N_SPELLINGS (sizeof(root_spellings) / sizeof(root_spellings[0]))

static void expect_root_refused(result r, const char *path)
{
    expect_status(r, CP_E_INVALID_ARGUMENT, "is the configured directory");
    if (strstr(r.msg, path) == NULL || strstr(r.msg, "never removed, emptied, replaced") == NULL)
        fail_msg("message does not name %s and the rule: %s", path, r.msg);
}

/* Rmdir (with and without force), RmdirContents and CreateSymlink/LinkPath
 * onto a root are refused on every version that has them, in every
 * spelling; nothing inside the roots is lost. */
static void test_roots_are_kept(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\pods\\p1");
    host_file(t, K "\\pods\\p1\\data");
    genv_mkdirs(t, "C:\\work\\w1");
    host_file(t, "C:\\work\\w1\\data");
    for (size_t i = 0; i < N_VERSIONS; i++) {
        const char *v = fs_versions[i];
        for (size_t j = 0; j < N_SPELLINGS; j++) {
            const char *p = root_spellings[j];
            expect_root_refused(call(t, v, "Rmdir", p, NULL, NULL, true), p);
            expect_root_refused(call(t, v, "Rmdir", p, NULL, NULL, false), p);
            expect_root_refused(call(t, v, link_method(v), NULL, K "\\pods", p, false), p);
            if (strcmp(v, "v2alpha1") == 0)
                expect_root_refused(call(t, v, "RmdirContents", p, NULL, NULL, false), p);
        }
    }
    assert_true(host_exists(t, K "\\pods\\p1\\data"));
    assert_true(host_exists(t, "C:\\work\\w1\\data"));
    assert_true(host_is_dir(t, K));
    assert_true(host_is_dir(t, "C:\\work"));
}

/* A root may still be read and created (Mkdir, PathExists, IsSymlink /
 * IsMountPoint), in every spelling, and a link may point at it. */
static void test_roots_may_be_read_and_created(void **state)
{
    env *t = *state;
    for (size_t i = 0; i < N_VERSIONS; i++) {
        const char *v = fs_versions[i];
        for (size_t j = 0; j < N_SPELLINGS; j++) {
            const char *p = root_spellings[j];
            /* fs_posix is case-sensitive: only the exact spellings exist */
            bool exact = strncmp(p, K, strlen(K)) == 0 || strncmp(p, "C:\\work", 7) == 0;
            expect_ok(call(t, v, "Mkdir", p, NULL, NULL, false));
            result r = call(t, v, "PathExists", p, NULL, NULL, false);
            expect_ok(r);
            if (exact)
                assert_true(r.value);
            if (exact) {
                r = call(t, v, is_link_method(v), p, NULL, NULL, false);
                expect_ok(r);
                assert_false(r.value);
            }
        }
    }
    assert_true(host_is_dir(t, K));
    assert_true(host_is_dir(t, "C:\\work"));
    expect_ok(call(t, "v1", "CreateSymlink", NULL, K, K "\\pods-link", false));
    assert_true(host_is_symlink(t, K "\\pods-link"));
}

/* A link inside a root that resolves to the root: removing the link is
 * fine (it is an entry of its own), emptying what it leads to is not. */
static void test_link_to_root_is_not_emptied(void **state)
{
    env *t = *state;
    genv_mkdirs(t, K "\\pods\\p1");
    host_file(t, K "\\pods\\p1\\data");
    assert_int_equal(symlink(host(t, K), host(t, K "\\pods\\up")), 0);
    result r = call(t, "v2alpha1", "RmdirContents", K "\\pods\\up", NULL, NULL, false);
    expect_status(r, CP_E_INVALID_ARGUMENT,
                  "path: " K "\\pods\\up (it resolves to " K ") is the configured directory " K
                  " (-kubelet-path)");
    assert_true(host_exists(t, K "\\pods\\p1\\data"));
    expect_ok(call(t, "v1", "Rmdir", K "\\pods\\up", NULL, NULL, true));
    assert_false(host_exists(t, K "\\pods\\up"));
    assert_true(host_exists(t, K "\\pods\\p1\\data"));
}

/* --- where a resolved object lives (host/fs_place.h) ------------------------ */

#define GS L"\\\\?\\Volume{5y5-0000}\\"  /* the system volume, C: */
#define GD L"\\\\?\\Volume{da7a-0001}\\" /* a data volume a driver staged */
#define GK L"\\\\?\\Volume{c0be-0002}\\" /* a volume holding the kubelet dir */
#define KW L"C:\\var\\lib\\kubelet"

static void expect_place(const wchar_t *location, const wchar_t *via, const wchar_t *names,
                         const wchar_t *sysvol, const cp_fs_anchor *a, size_t n,
                         const wchar_t *want)
{
    wchar_t *got = cp_fs_place(location, via, names, sysvol, a, n);
    assert_non_null(got);
    if (wcscmp(got, want) != 0)
        fail_msg("%ls via %ls: got %ls, want %ls", location, via, got, want);
    free(got);
}

/* The system volume mounted at a folder inside the kubelet dir: what lies
 * under that folder lives where the volume's drive letter says, so
 * ...\mnt\Windows is C:\Windows (refused), ...\mnt\var\lib\kubelet is the
 * kubelet root itself, never "inside the kubelet dir". */
static void test_place_system_volume_through_a_mount_folder(void **state)
{
    (void)state;
    const cp_fs_anchor a[] = {{L"C:\\work", GS L"work"}, {KW, GS L"var\\lib\\kubelet"}};
    const wchar_t *names = L"C:\\\0" KW L"\\pods\\x\\mnt\\\0";
    expect_place(GS L"Windows", KW L"\\pods\\x\\mnt\\Windows", names, GS, a, 2, L"C:\\Windows");
    expect_place(GS L"Windows\\System32", KW L"\\pods\\x\\mnt\\Windows\\System32", names, NULL, a,
                 2, L"C:\\Windows\\System32"); /* an anchor's volume even without sysvol */
    expect_place(GS L"var\\lib\\kubelet", KW L"\\pods\\x\\mnt\\var\\lib\\kubelet", names, GS, a, 2,
                 KW);
    expect_place(GS L"var\\lib\\kubelet\\pods\\a", KW L"\\pods\\x\\mnt\\var\\lib\\kubelet\\pods\\a",
                 names, GS, a, 2, KW L"\\pods\\a");
    expect_place(GS L"WORK\\w", KW L"\\pods\\x\\mnt\\work\\w", names, GS, a, 2, L"C:\\work\\w");
    /* the kubelet dir on its own volume; only the system volume is C: */
    const cp_fs_anchor d[] = {{L"D:\\kubelet", GD L"kubelet"}};
    expect_place(GS L"Windows", L"D:\\kubelet\\pods\\x\\mnt\\Windows",
                 L"C:\\\0D:\\kubelet\\pods\\x\\mnt\\\0", GS, d, 1, L"C:\\Windows");
    /* a system volume without a drive letter: its GUID form, refused */
    expect_place(GS L"Windows", KW L"\\pods\\x\\mnt\\Windows", KW L"\\pods\\x\\mnt\\\0", GS, d, 1,
                 GS L"Windows");
}

/* A data volume staged by a CSI driver inside the kubelet dir keeps working:
 * it lives where the caller's path mounted it, drive letter or not. */
static void test_place_staged_data_volume(void **state)
{
    (void)state;
    const cp_fs_anchor a[] = {{KW, GS L"var\\lib\\kubelet"}};
    const wchar_t *stage = KW L"\\plugins\\d\\globalmount";
    expect_place(GD L"data\\f", KW L"\\plugins\\d\\globalmount\\data\\f",
                 KW L"\\plugins\\d\\globalmount\\\0", GS, a, 1,
                 KW L"\\plugins\\d\\globalmount\\data\\f");
    expect_place(GD, stage, KW L"\\plugins\\d\\globalmount\\\0", GS, a, 1, stage);
    /* with a drive letter the mount manager gave it too */
    expect_place(GD L"data", KW L"\\plugins\\d\\globalmount\\data",
                 L"E:\\\0" KW L"\\plugins\\d\\globalmount\\\0", GS, a, 1,
                 KW L"\\plugins\\d\\globalmount\\data");
    /* reached through a pod's link to the staging folder */
    expect_place(GD L"data", KW L"\\pods\\p\\volumes\\v\\data", KW L"\\plugins\\d\\globalmount\\\0",
                 GS, a, 1, KW L"\\plugins\\d\\globalmount\\data");
    /* a data volume with only a drive letter, reached through a link: E:\ */
    expect_place(GD L"x", KW L"\\pods\\lnk\\x", L"E:\\\0", GS, a, 1, L"E:\\x");
}

/* The kubelet dir itself a link to another volume (or that volume's mount
 * folder): its objects are named through the configured text; an object
 * of the system volume hidden under that mount folder has no true DOS
 * name and gets its GUID form. Other forms pass through unchanged. */
static void test_place_kubelet_dir_elsewhere(void **state)
{
    (void)state;
    const cp_fs_anchor link[] = {{KW, GD L"kubelet"}};
    expect_place(GD L"kubelet\\pods\\a", KW L"\\pods\\a", L"D:\\\0", GS, link, 1, KW L"\\pods\\a");
    expect_place(GD L"other", KW L"\\pods\\out", L"D:\\\0", GS, link, 1, L"D:\\other");
    const cp_fs_anchor mounted[] = {{KW, GK}};
    expect_place(GK L"pods\\a", KW L"\\pods\\a", KW L"\\\0", GS, mounted, 1, KW L"\\pods\\a");
    expect_place(GS L"var\\lib\\kubelet\\pods", KW L"\\pods\\x\\mnt\\var\\lib\\kubelet\\pods",
                 L"C:\\\0" KW L"\\pods\\x\\mnt\\\0", GS, mounted, 1, GS L"var\\lib\\kubelet\\pods");
    expect_place(L"\\\\?\\UNC\\srv\\share\\x", KW L"\\pods\\s", NULL, GS, mounted, 1,
                 L"\\\\?\\UNC\\srv\\share\\x");
    const cp_fs_anchor unknown[] = {{KW, NULL}};
    /* an anchor that could not be located vouches for nothing: fails closed */
    expect_place(GS L"var\\lib\\kubelet\\pods", KW L"\\pods", L"C:\\\0", GS, unknown, 1,
                 GS L"var\\lib\\kubelet\\pods");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_every_table_checks),
        T(test_groups_config_errors),
        T(test_path_exists),
        T(test_typed_messages),
        T(test_invalid_field_number_refused),
        T(test_mkdir),
        T(test_rmdir),
        T(test_rmdir_force_keeps_link_targets),
        T(test_rmdir_contents),
        T(test_symlinks),
        T(test_symlink_rules),
        T(test_confinement_after_links),
        T(test_roots_are_kept),
        T(test_roots_may_be_read_and_created),
        T(test_link_to_root_is_not_emptied),
        cmocka_unit_test(test_place_system_volume_through_a_mount_folder),
        cmocka_unit_test(test_place_staged_data_volume),
        cmocka_unit_test(test_place_kubelet_dir_elsewhere),
    };
    return cmocka_run_group_tests_name("filesystem", tests, NULL, NULL);
}
