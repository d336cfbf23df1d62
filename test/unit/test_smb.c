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
#include <unistd.h>

#include "groups/groups.h"
#include "groups/smb/selfaddr.h"
#include "groups/smb/smb.h"
#include "dispatch/dispatch.h"
#include "smb/v1/api.pb-c.h"
#include "host/fs.h"
#include "test/unit/group_call.h"
#include "test/unit/group_env.h"

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

/* One wrong answer, printed so that a run names every case it got wrong. */
static int print_wrong(const char *remote, const char *want, int rc, const cp_error *e)
{
    print_message("%s: expected %s, got %d (%s)\n", remote, want, rc, rc == CP_OK ? "" : e->msg);
    return 1;
}

/* Names Windows' resolver takes for this machine that no text comparison
 * catches: inet_addr's non-strict IPv4 forms (1 to 4 parts, octal, hex,
 * decimal), the ipv6-literal.net spellings of ::1 and ::, and share names
 * Windows trims (trailing dots and spaces) to an administrative share. */
static void test_self_bypasses(void **state)
{
    (void)state;
    cp_smb_policy p = {.self = "NODE1", .self_dns = "node1.corp.example"};
    cp_error e;
    int wrong = 0;
    static const char *const self[] = {
        "\\\\0x7f.1\\share",
        "\\\\0X7F.0.0.1\\share",
        "\\\\0x7f000001\\share",
        "\\\\2130706433\\share",
        "\\\\017700000001\\share",
        "\\\\0177.0.0.1\\share",
        "\\\\127.1\\share",
        "\\\\127.0.1\\share",
        "\\\\0\\share",
        "\\\\0.0\\share",
        "\\\\0x0\\share",
        "\\\\0-0-0-0-0-0-0-1.ipv6-literal.net\\share",
        "\\\\0000-0000-0000-0000-0000-0000-0000-0001.ipv6-literal.net\\share",
        "\\\\0--1.IPV6-LITERAL.NET\\share",
        "\\\\0--1s1.ipv6-literal.net\\share",
        "\\\\0--0.ipv6-literal.net\\share",
        "\\\\0--ffff-7f00-1.ipv6-literal.net\\share",
        "\\\\0--ffff-127.0.0.1.ipv6-literal.net\\share",
        "\\\\fs9.localhost\\share",
    };
    for (size_t i = 0; i < sizeof(self) / sizeof(self[0]); i++) {
        int rc = check(&p, self[i], &e);
        if (rc != CP_E_INVALID_ARGUMENT || strstr(e.msg, "this machine") == NULL)
            wrong += print_wrong(self[i], "INVALID_ARGUMENT \"this machine\"", rc, &e);
    }
    static const char *const admin[] = {
        "\\\\fs1\\C$.",   "\\\\fs1\\C$ ",     "\\\\fs1\\ADMIN$.",
        "\\\\fs1\\IPC$.", "\\\\fs1\\print$ ", "\\\\fs1\\C$. .\\x",
    };
    for (size_t i = 0; i < sizeof(admin) / sizeof(admin[0]); i++) {
        int rc = check(&p, admin[i], &e);
        if (rc != CP_E_INVALID_ARGUMENT || strstr(e.msg, "administrative share") == NULL)
            wrong += print_wrong(admin[i], "INVALID_ARGUMENT \"administrative share\"", rc, &e);
    }
    /* other hosts, in the same forms, are still mapped */
    static const char *const other[] = {
        "\\\\0x0a000005\\share", "\\\\10.5\\share", "\\\\fd00--5.ipv6-literal.net\\share",
        "\\\\fs1\\share.",       "\\\\fs1\\data$x",
    };
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        int rc = check(&p, other[i], &e);
        if (rc != CP_OK)
            wrong += print_wrong(other[i], "OK", rc, &e);
    }
    assert_int_equal(wrong, 0);
}

/* Spellings the smb and iscsi rules once read differently, judged by the one
 * reader (hostaddr.h) the way that refuses: a literal-net scope is dropped
 * whatever follows the 's' (read as ::1, not as a host name), and a
 * spelling Windows' parsers may read as different addresses (an IPv6 group
 * of more than 4 digits, "::" standing for no group, an octal or
 * hexadecimal part in an IPv4 tail) is refused outright, since either
 * reading of it could be the one that reaches this machine. */
static void test_disputed_spellings(void **state)
{
    (void)state;
    static const cp_smb_addr mine[] = {{4, {171, 0, 0, 1}}};
    cp_smb_policy p = {.self = "NODE1", .local = mine, .n_local = 1};
    cp_error e;
    int wrong = 0;
    static const char *const self[] = {
        "\\\\0--1s-x.ipv6-literal.net\\share",
        "\\\\0--1s.ipv6-literal.net\\share",
    };
    for (size_t i = 0; i < sizeof(self) / sizeof(self[0]); i++) {
        int rc = check(&p, self[i], &e);
        if (rc != CP_E_INVALID_ARGUMENT || strstr(e.msg, "this machine") == NULL)
            wrong += print_wrong(self[i], "INVALID_ARGUMENT \"this machine\"", rc, &e);
    }
    static const char *const disputed[] = {
        "\\\\2001-db8--00001.ipv6-literal.net\\share",
        "\\\\0--00001.ipv6-literal.net\\share",
        "\\\\1-2-3-4--5-6-7-8.ipv6-literal.net\\share",
        "\\\\0-0-0-0--0-0-0-1.ipv6-literal.net\\share",
        "\\\\0--ffff-0171.0.0.1.ipv6-literal.net\\share", /* 121 or this 171.0.0.1 */
        "\\\\0--ffff-0177.0.0.1.ipv6-literal.net\\share",
        "\\\\0--ffff-0x7f.0.0.1.ipv6-literal.net\\share",
    };
    for (size_t i = 0; i < sizeof(disputed) / sizeof(disputed[0]); i++) {
        int rc = check(&p, disputed[i], &e);
        if (rc != CP_E_INVALID_ARGUMENT || strstr(e.msg, "may read differently") == NULL)
            wrong += print_wrong(disputed[i], "INVALID_ARGUMENT \"may read differently\"", rc, &e);
    }
    /* the same addresses in their usual spellings */
    assert_int_equal(check(&p, "\\\\2001-db8--1.ipv6-literal.net\\share", &e), CP_OK);
    assert_int_equal(check(&p, "\\\\0--ffff-121.0.0.1.ipv6-literal.net\\share", &e), CP_OK);
    assert_int_equal(check(&p, "\\\\0--ffff-171.0.0.1.ipv6-literal.net\\share", &e),
                     CP_E_INVALID_ARGUMENT);
    assert_int_equal(wrong, 0);
}

/* The node's own addresses, in every form, are this machine too. */
static void test_own_addresses(void **state)
{
    (void)state;
    static const cp_smb_addr mine[] = {
        {4, {10, 1, 2, 3}},
        {6, {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34}},
    };
    cp_smb_policy p = {.self = "NODE1", .local = mine, .n_local = 2};
    cp_error e;
    int wrong = 0;
    static const char *const self[] = {
        "\\\\10.1.2.3\\share",
        "\\\\10.1.515\\share",
        "\\\\167838211\\share",
        "\\\\012.01.02.03\\share",
        "\\\\fe80--1234s12.ipv6-literal.net\\share",
        "\\\\FE80-0-0-0-0-0-0-1234.ipv6-literal.net\\share",
        "\\\\0--ffff-a01-203.ipv6-literal.net\\share",
    };
    for (size_t i = 0; i < sizeof(self) / sizeof(self[0]); i++) {
        int rc = check(&p, self[i], &e);
        if (rc != CP_E_INVALID_ARGUMENT || strstr(e.msg, "this machine") == NULL)
            wrong += print_wrong(self[i], "INVALID_ARGUMENT \"this machine\"", rc, &e);
    }
    static const char *const other[] = {"\\\\10.1.2.4\\share",
                                        "\\\\fe80--1235.ipv6-literal.net\\share"};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        int rc = check(&p, other[i], &e);
        if (rc != CP_OK)
            wrong += print_wrong(other[i], "OK", rc, &e);
    }
    assert_int_equal(wrong, 0);
    /* named exactly in allowedServers: allowed, as any name of this machine */
    static const char *const allowed[] = {"10.1.2.3"};
    cp_smb_policy q = {
        .allowed = allowed, .n_allowed = 1, .restricted = true, .local = mine, .n_local = 2};
    assert_int_equal(check(&q, "\\\\10.1.2.3\\share", &e), CP_OK);
    assert_int_equal(check(&q, "\\\\10.1.515\\share", &e), CP_E_INVALID_ARGUMENT);
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
    int addrs_status; /* local_addresses fails with it */
    int addrs_asked;
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

/* This machine: 10.1.2.3 and fe80::1234. */
static int spy_addrs(void *ctx, cp_smb_addr *out, size_t max, size_t *n, cp_error *e)
{
    spy *s = ctx;
    s->addrs_asked++;
    if (s->addrs_status != CP_OK)
        return cp_error_set(e, s->addrs_status, "listing the adapters' addresses failed");
    static const cp_smb_addr mine[] = {
        {4, {10, 1, 2, 3}},
        {6, {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34}},
    };
    assert_true(max >= 2);
    out[0] = mine[0];
    out[1] = mine[1];
    *n = 2;
    return CP_OK;
}

static void spy_destroy(void *ctx)
{
    (void)ctx;
}

static const cp_smb_ops spy_ops = {spy_state, spy_map, spy_unmap, spy_name, spy_addrs, spy_destroy};

typedef struct env {
    genv *g; /* the groups on the POSIX fs host and the spy */
    spy spy;
} env;

static int setup(void **state)
{
    env *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -1;
    static const char *const dirs[] = {"C:\\var\\lib\\kubelet\\plugins", NULL};
    genv_opts o = {.tag = "smb-test", .dirs = dirs, .cfg = {.smb_host = {&spy_ops, &t->spy}}};
    if (genv_open(&o, &t->g) != 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    env *t = *state;
    int rc = genv_close(t->g);
    free(t);
    return rc;
}

/* One smb v1 call: its status, and its error message in msg. */
static int call_smb(env *t, const char *method, const ProtobufCMessage *req, char *msg,
                    size_t msglen)
{
    gcall_reply g = gcall_run(gcall_service(t->g->groups, "smb", "v1"), method, req);
    snprintf(msg, msglen, "%s", g.msg);
    gcall_reply_free(&g);
    return g.status;
}

static int call_new(env *t, const char *remote, const char *local, const char *user,
                    const char *password, char *msg, size_t msglen)
{
    V1__NewSmbGlobalMappingRequest r = V1__NEW_SMB_GLOBAL_MAPPING_REQUEST__INIT;
    r.remote_path = (char *)remote;
    r.local_path = (char *)local;
    r.username = (char *)user;
    r.password = (char *)password;
    return call_smb(t, "NewSmbGlobalMapping", &r.base, msg, msglen);
}

static int call_remove(env *t, const char *remote, char *msg, size_t msglen)
{
    V1__RemoveSmbGlobalMappingRequest r = V1__REMOVE_SMB_GLOBAL_MAPPING_REQUEST__INIT;
    r.remote_path = (char *)remote;
    return call_smb(t, "RemoveSmbGlobalMapping", &r.base, msg, msglen);
}

/* RemoveSmbGlobalMapping takes what upstream's root parse takes (the first
 * two non-empty components): NetApp Trident unstages with one leading
 * backslash, "\\" + SMBServer + SMBPath in Go (utils/filesystem/
 * filesystem_windows.go GetUnmountPath). NewSmbGlobalMapping stays strict:
 * its link would point at a path on the current drive. */
static void test_remove_takes_upstream_forms(void **state)
{
    env *t = *state;
    char msg[CP_ERROR_MSG_MAX];
    static const struct {
        const char *remote, *root;
    } ok[] = {
        {"\\svm1\\trident_pvc_1234", "\\\\svm1\\trident_pvc_1234"},
        {"\\10.0.0.5\\share\\trident_pvc_1", "\\\\10.0.0.5\\share"},
        {"/FS1/Share/sub", "\\\\fs1\\share"},
        {"fs1\\share", "\\\\fs1\\share"},
        {"\\\\\\fs1\\\\share\\", "\\\\fs1\\share"},
        {"\\\\fs1\\share\\..\\..\\x", "\\\\fs1\\share"},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        t->spy.log[0] = '\0';
        int rc = call_remove(t, ok[i].remote, msg, sizeof(msg));
        if (rc != CP_OK)
            fail_msg("Remove %s: expected OK, got %d (%s)", ok[i].remote, rc, msg);
        char want[300];
        snprintf(want, sizeof(want), "unmap %s;", ok[i].root);
        assert_string_equal(t->spy.log, want);
    }
    /* the root's server and share still pass the rules */
    static const char *const refused[] = {
        "\\localhost\\share", "\\fs1\\C$",    "\\0x7f.1\\share", "\\fs1\\ADMIN$.\\x",
        "\\?\\C:\\Windows",   "\\.\\pipe\\x", "C:\\x\\y",        "\\fs1\\a*b",
    };
    t->spy.log[0] = '\0';
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        int rc = call_remove(t, refused[i], msg, sizeof(msg));
        if (rc != CP_E_INVALID_ARGUMENT)
            fail_msg("Remove %s: expected INVALID_ARGUMENT, got %d (%s)", refused[i], rc, msg);
    }
    assert_string_equal(t->spy.log, "");
    /* New keeps \\server\share: one leading backslash maps nothing */
    assert_int_equal(call_new(t, "\\svm1\\trident_pvc_1234", "", "u", "p", msg, sizeof(msg)),
                     CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "is not of the form"));
    assert_string_equal(t->spy.log, "");
}

/* Through the RPCs: the host is asked for this machine's addresses when the
 * server is written as an address (and only then); when it cannot answer,
 * nothing is mapped or unmapped. */
static void test_own_address_through_the_host(void **state)
{
    env *t = *state;
    char msg[CP_ERROR_MSG_MAX];
    assert_int_equal(call_new(t, "\\\\10.1.2.3\\share", "", "u", "p", msg, sizeof(msg)),
                     CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "is this machine"));
    assert_int_equal(call_remove(t, "\\10.1.2.3\\share", msg, sizeof(msg)), CP_E_INVALID_ARGUMENT);
    assert_int_equal(
        call_new(t, "\\\\fe80--1234s3.ipv6-literal.net\\s", "", "u", "p", msg, sizeof(msg)),
        CP_E_INVALID_ARGUMENT);
    assert_string_equal(t->spy.log, "");
    assert_int_equal(t->spy.addrs_asked, 3);
    assert_int_equal(call_new(t, "\\\\fs1.example.com\\share", "", "u", "p", msg, sizeof(msg)),
                     CP_OK);
    assert_int_equal(t->spy.addrs_asked, 3);
    t->spy.log[0] = '\0';
    t->spy.addrs_status = CP_E_INTERNAL;
    assert_int_equal(call_new(t, "\\\\10.0.0.5\\share", "", "u", "p", msg, sizeof(msg)),
                     CP_E_INTERNAL);
    assert_non_null(strstr(msg, "cannot tell whether 10.0.0.5 is this machine"));
    assert_int_equal(call_remove(t, "\\\\10.0.0.5\\share", msg, sizeof(msg)), CP_E_INTERNAL);
    assert_string_equal(t->spy.log, "");
    /* a host name needs no address list */
    assert_int_equal(call_remove(t, "\\\\fs1.example.com\\share", msg, sizeof(msg)), CP_OK);
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
    snprintf(link, sizeof(link), "%s/C/var/lib/kubelet/plugins/s1", t->g->root);
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
    real_fs = t->g->fs;
    cp_fs_ops ops = *t->g->fs.ops;
    ops.symlink = kind_symlink;
    cp_error e;
    cp_groups_config cfg = {.fs = {&ops, t->g->fs.ctx}, .smb_host = {&spy_ops, &t->spy}};
    cp_groups *g = cp_groups_new(&cfg, &e);
    assert_non_null(g);
    cp_groups *saved = t->g->groups;
    t->g->groups = g;
    char msg[CP_ERROR_MSG_MAX];
    asked_kind = -1;
    assert_int_equal(call_new(t, "\\\\fs1\\share\\pvc", "C:\\var\\lib\\kubelet\\plugins\\s2", "u",
                              "p", msg, sizeof(msg)),
                     CP_OK);
    assert_int_equal(asked_kind, CP_FS_LINK_DIR);
    assert_true(asked_guard);
    t->g->groups = saved;
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
        cmocka_unit_test(test_self_bypasses),
        cmocka_unit_test(test_disputed_spellings),
        cmocka_unit_test(test_own_addresses),
        cmocka_unit_test(test_allowed_servers),
        cmocka_unit_test_setup_teardown(test_new_maps_and_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_link_is_a_directory_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_remaps_unreachable_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_refusals_keep_password_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_takes_upstream_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_address_through_the_host, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
