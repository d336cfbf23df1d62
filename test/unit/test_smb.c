/* test_smb.c - the smb group: upstream's normalisation and error texts,
 * the remote-path rules beyond upstream, allowedServers patterns, and the
 * RPCs through the real dispatch path against a recording host (remapping
 * an unreachable root, privacy flag, no password in any error). */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "groups/groups.h"
#include "groups/smb/smb.h"
#include "server/dispatch.h"
#include "smb/v1/api.pb-c.h"
#include "winapi/fs.h"

/* --- normalisation --------------------------------------------------------- */

static void test_normalize(void **state)
{
    (void)state;
    char norm[256], root[256];
    cp_error e;
    assert_int_equal(cp_smb_normalize("//FSx.Example.com/Share/Sub/Dir", norm, sizeof(norm), root,
                                      sizeof(root), &e),
                     CP_OK);
    assert_string_equal(norm, "\\\\FSx.Example.com\\Share\\Sub\\Dir");
    assert_string_equal(root, "\\\\fsx.example.com\\share");
    assert_int_equal(cp_smb_normalize("", norm, sizeof(norm), root, sizeof(root), &e),
                     CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "remote path is empty");
    assert_int_equal(cp_smb_normalize("//server/", norm, sizeof(norm), root, sizeof(root), &e),
                     CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "remote path (\\\\server\\) is invalid");
}

/* --- remote-path rules ----------------------------------------------------- */

static int check(const cp_smb_policy *p, const char *remote, cp_error *e)
{
    char norm[256], root[256];
    int rc = cp_smb_normalize(remote, norm, sizeof(norm), root, sizeof(root), e);
    return rc != CP_OK ? rc : cp_smb_check_remote(p, norm, e);
}

static void test_remote_rules(void **state)
{
    (void)state;
    cp_smb_policy p = {.self = "NODE1", .self_dns = "node1.corp.example"};
    cp_error e;
    assert_int_equal(check(&p, "\\\\fs1.example.com\\vol1\\pvc-1", &e), CP_OK);
    assert_int_equal(check(&p, "\\\\10.0.0.5\\share", &e), CP_OK);
    static const char *const bad[] = {
        "\\\\?\\C:\\Windows",    "\\\\?\\UNC\\srv\\share", "\\\\.\\pipe\\csi-proxy-smb-v1",
        "\\\\.\\PhysicalDrive0", "\\\\localhost\\share",   "\\\\LOCALHOST\\c$",
        "\\\\127.0.0.1\\share",  "\\\\127.1.2.3\\share",   "\\\\::1\\share",
        "\\\\node1\\share",      "\\\\NODE1.corp\\share",  "\\\\node1.corp.example\\share",
        "\\\\fs1\\C$",           "\\\\fs1\\ADMIN$",        "\\\\fs1\\ipc$",
        "server\\share",         "C:\\share\\x",           "\\\\fs1\\share\\..\\..\\x",
        "\\\\fs1\\share\\a:b",   "\\\\fs 1\\share",        "\\\\0.0.0.0\\share",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = check(&p, bad[i], &e);
        if (rc != CP_E_INVALID_ARGUMENT)
            fail_msg("%s: expected INVALID_ARGUMENT, got %d (%s)", bad[i], rc, e.msg);
    }
    assert_int_equal(check(&p, "\\\\localhost\\c$", &e), CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "this machine"));
    assert_int_equal(check(&p, "\\\\fs1\\C$", &e), CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "administrative share"));
}

static void test_allowed_servers(void **state)
{
    (void)state;
    static const char *const allowed[] = {"*.fsx.example.com", "localhost", "fs9"};
    cp_smb_policy p = {.allowed = allowed, .n_allowed = 3, .restricted = true, .self = "NODE1"};
    cp_error e;
    assert_true(cp_smb_server_matches("*.fsx.example.com", "amznfsx1.FSX.example.com"));
    assert_false(cp_smb_server_matches("*.fsx.example.com", "fsx.example.com"));
    assert_false(cp_smb_server_matches("*.fsx.example.com", "evil-fsx.example.com"));
    assert_int_equal(check(&p, "\\\\amznfsx1.fsx.example.com\\share", &e), CP_OK);
    assert_int_equal(check(&p, "\\\\other.example.com\\share", &e), CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "allowedServers"));
    /* named exactly: this machine and its admin shares become allowed */
    assert_int_equal(check(&p, "\\\\localhost\\share", &e), CP_OK);
    assert_int_equal(check(&p, "\\\\fs9\\C$", &e), CP_OK);
    /* a wildcard never unlocks an admin share; device forms never pass */
    assert_int_equal(check(&p, "\\\\a.fsx.example.com\\C$", &e), CP_E_INVALID_ARGUMENT);
    assert_int_equal(check(&p, "\\\\.\\pipe\\x", &e), CP_E_INVALID_ARGUMENT);
}

/* --- the RPCs through dispatch, on a recording host ------------------------ */

typedef struct spy {
    char log[1024];
    cp_smb_state state;
    bool last_privacy;
    int map_status;
} spy;

static int spy_state(void *ctx, const char *root, cp_smb_state *out, cp_error *e)
{
    (void)root;
    (void)e;
    *out = ((spy *)ctx)->state;
    return CP_OK;
}

static int spy_map(void *ctx, const char *root, const char *user, const char *password,
                   bool privacy, cp_error *e)
{
    spy *s = ctx;
    (void)password;
    snprintf(s->log + strlen(s->log), sizeof(s->log) - strlen(s->log), "map %s %s;", root, user);
    s->last_privacy = privacy;
    if (s->map_status != CP_OK)
        return cp_error_set(e, s->map_status, "%s is mapped with other credentials", root);
    return CP_OK;
}

static int spy_unmap(void *ctx, const char *root, cp_error *e)
{
    spy *s = ctx;
    (void)e;
    snprintf(s->log + strlen(s->log), sizeof(s->log) - strlen(s->log), "unmap %s;", root);
    return CP_OK;
}

static int spy_name(void *ctx, char *nb, char *dns, size_t len, cp_error *e)
{
    (void)ctx;
    (void)e;
    snprintf(nb, len, "NODE1");
    snprintf(dns, len, "node1.example");
    return CP_OK;
}

static void spy_destroy(void *ctx)
{
    (void)ctx;
}

static const cp_smb_ops spy_ops = {spy_state, spy_map, spy_unmap, spy_name, spy_destroy};

static int mkdir_p(const char *path)
{
    char p[256];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = p + 1; *s != '\0'; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    return mkdir(p, 0755);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

typedef struct env {
    char dir[64];
    cp_fs_host fs;
    cp_groups *groups;
    spy spy;
} env;

static int setup(void **state)
{
    env *t = calloc(1, sizeof(*t));
    cp_error e;
    snprintf(t->dir, sizeof(t->dir), "/tmp/test_smb.XXXXXX");
    if (mkdtemp(t->dir) == NULL)
        return -1;
    char p[128];
    snprintf(p, sizeof(p), "%s/C/var/lib/kubelet/plugins", t->dir);
    if (mkdir_p(p) != 0 || cp_fs_host_posix_new(t->dir, &t->fs, &e) != CP_OK)
        return -1;
    cp_groups_config cfg = {.fs = t->fs, .smb = {&spy_ops, &t->spy}};
    t->groups = cp_groups_new(&cfg, &e);
    if (t->groups == NULL) {
        print_error("%s\n", e.msg);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    env *t = *state;
    cp_groups_free(t->groups);
    cp_fs_host_posix_free(&t->fs);
    if (nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return -1;
    free(t);
    return 0;
}

static int call_new(env *t, const char *remote, const char *local, const char *user,
                    const char *password, char *msg, size_t msglen)
{
    const cp_service *svc = NULL;
    for (size_t i = 0; i < cp_groups_count(t->groups); i++)
        if (strcmp(cp_groups_service(t->groups, i)->def->group, "smb") == 0 &&
            strcmp(cp_groups_service(t->groups, i)->def->version, "v1") == 0)
            svc = cp_groups_service(t->groups, i);
    assert_non_null(svc);
    const cp_method *m = cp_service_find(svc->def, "NewSmbGlobalMapping", 19);
    assert_non_null(m);
    V1__NewSmbGlobalMappingRequest r = V1__NEW_SMB_GLOBAL_MAPPING_REQUEST__INIT;
    r.remote_path = (char *)remote;
    r.local_path = (char *)local;
    r.username = (char *)user;
    r.password = (char *)password;
    uint8_t wire[1024];
    size_t len = v1__new_smb_global_mapping_request__pack(&r, wire);
    cp_call *c = cp_call_new(svc->ctx, "/v1.Smb/NewSmbGlobalMapping", 0);
    uint8_t *out = NULL;
    size_t out_len = 0;
    int rc = cp_dispatch_run(svc, m, c, wire, len, &out, &out_len);
    snprintf(msg, msglen, "%s", cp_call_error(c)->msg);
    free(out);
    cp_call_free(c);
    return rc;
}

static void test_new_maps_and_links(void **state)
{
    env *t = *state;
    char msg[CP_ERROR_MSG_MAX], link[256], buf[256];
    assert_int_equal(call_new(t, "//FS1.example.com/Share/pvc",
                              "C:\\var\\lib\\kubelet\\plugins\\s1", "CORP\\u", "Sekr3t!", msg,
                              sizeof(msg)),
                     CP_OK);
    assert_string_equal(t->spy.log, "map \\\\fs1.example.com\\share CORP\\u;");
    assert_true(t->spy.last_privacy); /* -require-privacy defaults to true */
    snprintf(link, sizeof(link), "%s/C/var/lib/kubelet/plugins/s1", t->dir);
    ssize_t n = readlink(link, buf, sizeof(buf) - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_string_equal(buf, "\\\\FS1.example.com\\Share\\pvc\\");
}

/* The fs host as the group sees it, recording what kind of link each
 * symlink call asks for before the native host makes it. */
static cp_fs_host real_fs;
static int asked_kind = -1;
static bool asked_guard = false;

static int kind_symlink(void *ctx, const char *link_path, const char *target, cp_fs_link_kind kind,
                        const cp_fs_guard *g, cp_error *e)
{
    asked_kind = (int)kind;
    asked_guard = g != NULL && g->judge != NULL;
    return real_fs.ops->symlink(ctx, link_path, target, kind, g, e);
}

/* The mapping's link is always a directory link, as upstream makes it
 * (New-Item -ItemType SymbolicLink of the share): never left to what the
 * share answers at that moment (a file link when it does not). And the
 * link is judged where it is made (a guard is passed). */
static void test_new_link_is_a_directory_link(void **state)
{
    env *t = *state;
    real_fs = t->fs;
    cp_fs_ops ops = *t->fs.ops;
    ops.symlink = kind_symlink;
    cp_error e;
    cp_groups_config cfg = {.fs = {&ops, t->fs.ctx}, .smb = {&spy_ops, &t->spy}};
    cp_groups *g = cp_groups_new(&cfg, &e);
    assert_non_null(g);
    cp_groups *saved = t->groups;
    t->groups = g;
    char msg[CP_ERROR_MSG_MAX];
    asked_kind = -1;
    assert_int_equal(call_new(t, "\\\\fs1\\share\\pvc", "C:\\var\\lib\\kubelet\\plugins\\s2", "u",
                              "p", msg, sizeof(msg)),
                     CP_OK);
    assert_int_equal(asked_kind, CP_FS_LINK_DIR);
    assert_true(asked_guard);
    t->groups = saved;
    cp_groups_free(g);
}

static void test_new_remaps_unreachable_root(void **state)
{
    env *t = *state;
    char msg[CP_ERROR_MSG_MAX];
    t->spy.state = CP_SMB_UNREACHABLE;
    assert_int_equal(call_new(t, "\\\\fs1\\share", "", "u", "p", msg, sizeof(msg)), CP_OK);
    assert_string_equal(t->spy.log, "unmap \\\\fs1\\share;map \\\\fs1\\share u;");
    t->spy.log[0] = '\0';
    t->spy.state = CP_SMB_MAPPED; /* mapped and reachable: left alone */
    assert_int_equal(call_new(t, "\\\\fs1\\share", "", "u", "p", msg, sizeof(msg)), CP_OK);
    assert_string_equal(t->spy.log, "");
}

static void test_new_refusals_keep_password_out(void **state)
{
    env *t = *state;
    char msg[CP_ERROR_MSG_MAX];
    /* local_path outside the configured directories: nothing mapped */
    assert_int_equal(
        call_new(t, "\\\\fs1\\share", "C:\\Windows\\x", "u", "Sekr3t!", msg, sizeof(msg)),
        CP_E_INVALID_ARGUMENT);
    assert_string_equal(t->spy.log, "");
    assert_null(strstr(msg, "Sekr3t!"));
    assert_int_equal(call_new(t, "\\\\localhost\\c$", "", "u", "Sekr3t!", msg, sizeof(msg)),
                     CP_E_INVALID_ARGUMENT);
    assert_null(strstr(msg, "Sekr3t!"));
    t->spy.map_status = CP_E_FAILED_PRECONDITION;
    assert_int_equal(call_new(t, "\\\\fs1\\share2", "", "v", "Sekr3t!", msg, sizeof(msg)),
                     CP_E_FAILED_PRECONDITION);
    assert_non_null(strstr(msg, "NewSmbGlobalMapping failed. \\\\fs1\\share2"));
    assert_null(strstr(msg, "Sekr3t!"));
    t->spy.map_status = CP_OK;
    /* an existing local_path: upstream's text, the host's code */
    assert_int_equal(
        call_new(t, "\\\\fs1\\share", "C:\\var\\lib\\kubelet\\plugins", "u", "p", msg, sizeof(msg)),
        CP_E_ALREADY_EXISTS);
    assert_non_null(strstr(msg, "creating link C:\\var\\lib\\kubelet\\plugins to \\\\fs1\\share "
                                "failed with error: "));
    /* the kubelet directory itself is never replaced by a link */
    assert_int_equal(
        call_new(t, "\\\\fs1\\share", "C:\\var\\lib\\kubelet", "u", "p", msg, sizeof(msg)),
        CP_E_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_remote_rules),
        cmocka_unit_test(test_allowed_servers),
        cmocka_unit_test_setup_teardown(test_new_maps_and_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_link_is_a_directory_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_remaps_unreachable_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_refusals_keep_password_out, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
