/* test_iscsi.c - the iscsi group: the portal and IQN rules (port 0 is
 * 3260, a missing target_portal is refused instead of upstream's crash),
 * disk numbers as decimal strings, and every RPC of both versions through
 * the real dispatch path against the simulated initiator (idempotent
 * AddTargetPortal and ConnectTarget, DisconnectTarget of a target not
 * connected, each refusal), with no CHAP secret in any error text or
 * audit rendering. */
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
#include "groups/iscsi/iscsi.h"
#include "iscsi/v1alpha1/api.pb-c.h"
#include "iscsi/v1alpha2/api.pb-c.h"
#include "dispatch/dispatch.h"
#include "security/redact.h"
#include "host/fs.h"
#include "sim/iscsi_sim.h"

#define SECRET "Wr0ng-S3cret-99" /* 15 bytes: a length Windows takes */
#define GOOD_USER "sim-user"
#define GOOD_SECRET "sim-secret-12"
#define MUTUAL "Mutual-S3cret-16"

/* --- the portable rules ---------------------------------------------------- */

static void test_portal_and_iqn_rules(void **state)
{
    (void)state;
    cp_iscsi_portal p;
    cp_error e;
    cp_iscsi_request r = {.has_portal = false};
    assert_int_equal(cp_iscsi_portal_of(&r, &p, &e), CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "target_portal is required");
    r = (cp_iscsi_request){.has_portal = true, .address = "10.0.0.5", .port = 0};
    assert_int_equal(cp_iscsi_portal_of(&r, &p, &e), CP_OK);
    assert_string_equal(p.address, "10.0.0.5");
    assert_int_equal(p.port, 3260);
    r.port = 3261;
    assert_int_equal(cp_iscsi_portal_of(&r, &p, &e), CP_OK);
    assert_int_equal(p.port, 3261);
    r.port = 65536; /* upstream truncates to 16 bits: port 0 */
    assert_int_equal(cp_iscsi_portal_of(&r, &p, &e), CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "65536"));
    r.port = 0;
    static const char *const bad_addr[] = {"", "a b", "x;y", "\\\\srv", "host/x", "a\nb"};
    for (size_t i = 0; i < sizeof(bad_addr) / sizeof(bad_addr[0]); i++) {
        r.address = bad_addr[i];
        if (cp_iscsi_portal_of(&r, &p, &e) != CP_E_INVALID_ARGUMENT)
            fail_msg("address \"%s\" accepted", bad_addr[i]);
    }
    r.address = "[fe80::1]";
    assert_int_equal(cp_iscsi_portal_of(&r, &p, &e), CP_OK);
    assert_int_equal(cp_iscsi_check_iqn("iqn.1991-05.com.microsoft:node1-target", &e), CP_OK);
    assert_int_equal(cp_iscsi_check_iqn("eui.02004567A425678D", &e), CP_OK);
    assert_int_equal(cp_iscsi_check_iqn("", &e), CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "iqn is empty");
    assert_int_equal(cp_iscsi_check_iqn("iqn.x y", &e), CP_E_INVALID_ARGUMENT);
    char long_iqn[240];
    memset(long_iqn, 'a', sizeof(long_iqn) - 1);
    long_iqn[sizeof(long_iqn) - 1] = '\0';
    assert_int_equal(cp_iscsi_check_iqn(long_iqn, &e), CP_E_INVALID_ARGUMENT);
    char id[16];
    cp_iscsi_disk_id(4294967295u, id, sizeof(id));
    assert_string_equal(id, "4294967295");
    cp_iscsi_disk_id(0, id, sizeof(id));
    assert_string_equal(id, "0");
}

/* --- the RPCs through dispatch, on the simulated initiator ------------------- */

typedef struct env {
    char dir[64];
    cp_fs_host fs;
    cp_iscsi_host iscsi;
    cp_groups *groups;
} env;

/* The simulated initiator's portals (its fixture section); the storage
 * host is the build's default, an empty simulator, so the LUNs of a login
 * are disks 0, 1, ... */
static const char iscsi_fixture[] =
    "iscsi:\n"
    "  portals:\n"
    "    - address: 10.0.0.5\n"
    "      targets:\n"
    "        - {iqn: iqn.2026-01.local.sim:10.0.0.5-disks, luns: [{size: 1GiB}, {size: 1GiB}]}\n"
    "        - {iqn: iqn.2026-01.local.sim:10.0.0.5-chap, luns: [{size: 1GiB}],\n"
    "           chap: {username: " GOOD_USER ", secret: " GOOD_SECRET "}}\n"
    "    - address: 10.0.0.7\n"
    "      targets:\n"
    "        - {iqn: iqn.2026-01.local.sim:10.0.0.7-chap, luns: [{size: 1GiB}],\n"
    "           chap: {username: " GOOD_USER ", secret: " GOOD_SECRET "}}\n"
    "    - {address: unreachable.example, reachable: false}\n";

static int setup(void **state)
{
    env *t = calloc(1, sizeof(*t));
    cp_error e;
    snprintf(t->dir, sizeof(t->dir), "/tmp/test_iscsi.XXXXXX");
    if (mkdtemp(t->dir) == NULL || cp_fs_host_posix_new(t->dir, &t->fs, &e) != CP_OK)
        return -1;
    if (cp_iscsi_sim_new_from_string(iscsi_fixture, &t->iscsi, &e) != CP_OK) {
        print_error("%s\n", e.msg);
        return -1;
    }
    cp_groups_config cfg = {.fs = t->fs, .iscsi_host = t->iscsi};
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
    t->iscsi.ops->destroy(t->iscsi.ctx);
    cp_fs_host_posix_free(&t->fs);
    rmdir(t->dir);
    free(t);
    return 0;
}

/* Runs rpc of iscsi `version` on req; the decoded response in *resp (free
 * with protobuf_c_message_free_unpacked) when resp is not NULL. */
static int run(env *t, const char *version, const char *rpc, const ProtobufCMessage *req,
               ProtobufCMessage **resp, char *msg, size_t msglen)
{
    const cp_service *svc = NULL;
    for (size_t i = 0; i < cp_groups_count(t->groups); i++)
        if (strcmp(cp_groups_service(t->groups, i)->def->group, "iscsi") == 0 &&
            strcmp(cp_groups_service(t->groups, i)->def->version, version) == 0)
            svc = cp_groups_service(t->groups, i);
    assert_non_null(svc);
    const cp_method *m = cp_service_find(svc->def, rpc, strlen(rpc));
    assert_non_null(m);
    uint8_t wire[2048];
    assert_true(protobuf_c_message_get_packed_size(req) <= sizeof(wire));
    size_t len = protobuf_c_message_pack(req, wire);
    char path[128];
    snprintf(path, sizeof(path), "/%s.Iscsi/%s", version, rpc);
    cp_call *c = cp_call_new(svc->ctx, path, 0);
    uint8_t *out = NULL;
    size_t out_len = 0;
    int rc = cp_dispatch_run(svc, m, c, wire, len, &out, &out_len);
    snprintf(msg, msglen, "%s", rc == CP_OK ? "" : cp_call_error(c)->msg);
    if (resp != NULL)
        *resp = rc == CP_OK ? protobuf_c_message_unpack(m->resp_desc, NULL, out_len, out) : NULL;
    free(out);
    cp_call_free(c);
    return rc;
}

/* Requests are built on v1alpha2's messages; v1alpha1's have the same
 * fields under the same numbers, so the bytes serve both pipes. */
typedef struct req {
    V1alpha2__TargetPortal portal;
    V1alpha2__ConnectTargetRequest m; /* a superset of every portal+iqn request */
} req;

static ProtobufCMessage *portal_req(req *r, const char *addr, uint32_t port, const char *iqn)
{
    r->portal = (V1alpha2__TargetPortal)V1ALPHA2__TARGET_PORTAL__INIT;
    r->portal.target_address = (char *)addr;
    r->portal.target_port = port;
    r->m = (V1alpha2__ConnectTargetRequest)V1ALPHA2__CONNECT_TARGET_REQUEST__INIT;
    r->m.target_portal = addr != NULL ? &r->portal : NULL;
    r->m.iqn = (char *)(iqn != NULL ? iqn : "");
    return &r->m.base;
}

static void flow(env *t, const char *v)
{
    char msg[CP_ERROR_MSG_MAX], iqn_disks[128], iqn_chap[128];
    req r;
    ProtobufCMessage *resp;
    /* AddTargetPortal, port 0 = 3260, twice: idempotent */
    for (int i = 0; i < 2; i++)
        assert_int_equal(run(t, v, "AddTargetPortal", portal_req(&r, "10.0.0.5", 0, NULL), NULL,
                             msg, sizeof(msg)),
                         CP_OK);
    V1alpha2__ListTargetPortalsRequest lr = V1ALPHA2__LIST_TARGET_PORTALS_REQUEST__INIT;
    assert_int_equal(run(t, v, "ListTargetPortals", &lr.base, &resp, msg, sizeof(msg)), CP_OK);
    V1alpha2__ListTargetPortalsResponse *lp = (V1alpha2__ListTargetPortalsResponse *)resp;
    assert_int_equal(lp->n_target_portals, 1);
    assert_string_equal(lp->target_portals[0]->target_address, "10.0.0.5");
    assert_int_equal(lp->target_portals[0]->target_port, 3260);
    protobuf_c_message_free_unpacked(resp, NULL);
    /* DiscoverTargetPortal: port 3260 named explicitly is the same portal */
    assert_int_equal(run(t, v, "DiscoverTargetPortal", portal_req(&r, "10.0.0.5", 3260, NULL),
                         &resp, msg, sizeof(msg)),
                     CP_OK);
    V1alpha2__DiscoverTargetPortalResponse *d = (V1alpha2__DiscoverTargetPortalResponse *)resp;
    assert_int_equal(d->n_iqns, 2);
    snprintf(iqn_disks, sizeof(iqn_disks), "%s", d->iqns[0]);
    snprintf(iqn_chap, sizeof(iqn_chap), "%s", d->iqns[1]);
    assert_string_equal(iqn_disks, "iqn.2026-01.local.sim:10.0.0.5-disks");
    protobuf_c_message_free_unpacked(resp, NULL);
    /* not connected yet: an empty list, not an error */
    assert_int_equal(run(t, v, "GetTargetDisks", portal_req(&r, "10.0.0.5", 0, iqn_disks), &resp,
                         msg, sizeof(msg)),
                     CP_OK);
    assert_int_equal(((V1alpha2__GetTargetDisksResponse *)resp)->n_diskids, 0);
    protobuf_c_message_free_unpacked(resp, NULL);
    /* ConnectTarget twice: idempotent */
    for (int i = 0; i < 2; i++)
        assert_int_equal(run(t, v, "ConnectTarget", portal_req(&r, "10.0.0.5", 0, iqn_disks), NULL,
                             msg, sizeof(msg)),
                         CP_OK);
    assert_int_equal(run(t, v, "GetTargetDisks", portal_req(&r, "10.0.0.5", 0, iqn_disks), &resp,
                         msg, sizeof(msg)),
                     CP_OK);
    V1alpha2__GetTargetDisksResponse *g = (V1alpha2__GetTargetDisksResponse *)resp;
    assert_int_equal(g->n_diskids, 2);
    assert_string_equal(g->diskids[0], "0"); /* decimal strings */
    assert_string_equal(g->diskids[1], "1");
    protobuf_c_message_free_unpacked(resp, NULL);
    /* DisconnectTarget twice: the second finds nothing connected */
    for (int i = 0; i < 2; i++)
        assert_int_equal(run(t, v, "DisconnectTarget", portal_req(&r, "10.0.0.5", 0, iqn_disks),
                             NULL, msg, sizeof(msg)),
                         CP_OK);
    assert_int_equal(run(t, v, "GetTargetDisks", portal_req(&r, "10.0.0.5", 0, iqn_disks), &resp,
                         msg, sizeof(msg)),
                     CP_OK);
    assert_int_equal(((V1alpha2__GetTargetDisksResponse *)resp)->n_diskids, 0);
    protobuf_c_message_free_unpacked(resp, NULL);
    /* an unknown target on a registered portal: the host's NOT_FOUND */
    assert_int_equal(run(t, v, "ConnectTarget", portal_req(&r, "10.0.0.5", 0, "iqn.2000-01.x:y"),
                         NULL, msg, sizeof(msg)),
                     CP_E_NOT_FOUND);
    assert_non_null(strstr(msg, "iqn.2000-01.x:y"));
    /* RemoveTargetPortal, then again: not registered */
    assert_int_equal(run(t, v, "RemoveTargetPortal", portal_req(&r, "10.0.0.5", 0, NULL), NULL, msg,
                         sizeof(msg)),
                     CP_OK);
    assert_int_equal(run(t, v, "RemoveTargetPortal", portal_req(&r, "10.0.0.5", 0, NULL), NULL, msg,
                         sizeof(msg)),
                     CP_E_NOT_FOUND);
    assert_string_equal(msg, "target portal 10.0.0.5:3260 is not registered");
    assert_int_equal(run(t, v, "DiscoverTargetPortal", portal_req(&r, "10.0.0.5", 0, NULL), NULL,
                         msg, sizeof(msg)),
                     CP_E_NOT_FOUND);
    /* a portal that does not answer */
    assert_int_equal(run(t, v, "AddTargetPortal", portal_req(&r, "unreachable.example", 0, NULL),
                         NULL, msg, sizeof(msg)),
                     CP_E_UNAVAILABLE);
    assert_string_equal(msg, "target portal unreachable.example:3260 does not answer");
}

static void test_flow_v1alpha1(void **state)
{
    flow(*state, "v1alpha1");
}

static void test_flow_v1alpha2(void **state)
{
    flow(*state, "v1alpha2");
}

static void test_refusals(void **state)
{
    env *t = *state;
    char msg[CP_ERROR_MSG_MAX];
    req r;
    static const char *const rpcs[] = {"AddTargetPortal",    "DiscoverTargetPortal",
                                       "RemoveTargetPortal", "ConnectTarget",
                                       "DisconnectTarget",   "GetTargetDisks"};
    static const char *const versions[] = {"v1alpha1", "v1alpha2"};
    for (size_t v = 0; v < 2; v++)
        for (size_t i = 0; i < sizeof(rpcs) / sizeof(rpcs[0]); i++) {
            /* upstream dereferences the missing portal and the process dies */
            assert_int_equal(run(t, versions[v], rpcs[i], portal_req(&r, NULL, 0, "iqn.a:b"), NULL,
                                 msg, sizeof(msg)),
                             CP_E_INVALID_ARGUMENT);
            assert_string_equal(msg, "target_portal is required");
            assert_int_equal(run(t, versions[v], rpcs[i], portal_req(&r, "", 0, "iqn.a:b"), NULL,
                                 msg, sizeof(msg)),
                             CP_E_INVALID_ARGUMENT);
            assert_int_equal(run(t, versions[v], rpcs[i],
                                 portal_req(&r, "10.0.0.5", 99999, "iqn.a:b"), NULL, msg,
                                 sizeof(msg)),
                             CP_E_INVALID_ARGUMENT);
        }
    for (size_t v = 0; v < 2; v++) {
        for (size_t i = 3; i < 6; i++) { /* the target RPCs: an iqn is required */
            assert_int_equal(run(t, versions[v], rpcs[i], portal_req(&r, "10.0.0.5", 0, ""), NULL,
                                 msg, sizeof(msg)),
                             CP_E_INVALID_ARGUMENT);
            assert_string_equal(msg, "iqn is empty");
        }
        ProtobufCMessage *m = portal_req(&r, "10.0.0.5", 0, "iqn.a:b");
        r.m.auth_type = 7; /* enums are open: 7 reaches the handler */
        assert_int_equal(run(t, versions[v], "ConnectTarget", m, NULL, msg, sizeof(msg)),
                         CP_E_INVALID_ARGUMENT);
        assert_string_equal(msg, "invalid authentication type authType=7");
    }
    /* nothing refused reached the initiator */
    ProtobufCMessage *resp;
    V1alpha2__ListTargetPortalsRequest lr = V1ALPHA2__LIST_TARGET_PORTALS_REQUEST__INIT;
    assert_int_equal(run(t, "v1alpha1", "ListTargetPortals", &lr.base, &resp, msg, sizeof(msg)),
                     CP_OK);
    assert_int_equal(((V1alpha2__ListTargetPortalsResponse *)resp)->n_target_portals, 0);
    protobuf_c_message_free_unpacked(resp, NULL);
}

static void connect_chap(env *t, req *r, int auth, const char *user, const char *secret, int want,
                         const char *want_text)
{
    char msg[CP_ERROR_MSG_MAX];
    ProtobufCMessage *m = portal_req(r, "10.0.0.7", 0, "iqn.2026-01.local.sim:10.0.0.7-chap");
    r->m.auth_type = auth;
    r->m.chap_username = (char *)user;
    r->m.chap_secret = (char *)secret;
    int rc = run(t, "v1alpha2", "ConnectTarget", m, NULL, msg, sizeof(msg));
    if (rc != want)
        fail_msg("ConnectTarget auth %d: %d (%s), want %d", auth, rc, msg, want);
    if (want_text != NULL)
        assert_non_null(strstr(msg, want_text));
    assert_null(strstr(msg, secret[0] != '\0' ? secret : "\x01"));
}

static void test_chap_and_no_secret_in_errors(void **state)
{
    env *t = *state;
    char msg[CP_ERROR_MSG_MAX];
    req r;
    assert_int_equal(run(t, "v1alpha2", "AddTargetPortal", portal_req(&r, "10.0.0.7", 0, NULL),
                         NULL, msg, sizeof(msg)),
                     CP_OK);
    connect_chap(t, &r, 0, "", "", CP_E_PERMISSION_DENIED, "authentication failure");
    connect_chap(t, &r, 1, GOOD_USER, SECRET, CP_E_PERMISSION_DENIED, "authentication failure");
    connect_chap(t, &r, 1, GOOD_USER, "short-S3cr", CP_E_INVALID_ARGUMENT, "12 to 16 bytes");
    connect_chap(t, &r, 2, GOOD_USER, GOOD_SECRET, CP_E_FAILED_PRECONDITION,
                 "no mutual CHAP secret");
    V1alpha2__SetMutualChapSecretRequest sm = V1ALPHA2__SET_MUTUAL_CHAP_SECRET_REQUEST__INIT;
    sm.mutualchapsecret = "tiny-S3cret"; /* 11 bytes */
    assert_int_equal(run(t, "v1alpha2", "SetMutualChapSecret", &sm.base, NULL, msg, sizeof(msg)),
                     CP_E_INVALID_ARGUMENT);
    assert_null(strstr(msg, "tiny-S3cret"));
    assert_non_null(strstr(msg, "12 to 16 bytes"));
    sm.mutualchapsecret = MUTUAL;
    assert_int_equal(run(t, "v1alpha2", "SetMutualChapSecret", &sm.base, NULL, msg, sizeof(msg)),
                     CP_OK);
    connect_chap(t, &r, 2, GOOD_USER, GOOD_SECRET, CP_OK, NULL);
    connect_chap(t, &r, 2, GOOD_USER, GOOD_SECRET, CP_OK, NULL); /* idempotent */
    ProtobufCMessage *resp;
    assert_int_equal(run(t, "v1alpha2", "GetTargetDisks",
                         portal_req(&r, "10.0.0.7", 0, "iqn.2026-01.local.sim:10.0.0.7-chap"),
                         &resp, msg, sizeof(msg)),
                     CP_OK);
    assert_int_equal(((V1alpha2__GetTargetDisksResponse *)resp)->n_diskids, 1);
    protobuf_c_message_free_unpacked(resp, NULL);
}

/* The audit's rendering of these requests, in both versions: the secrets
 * are <redacted>, every other field shows. */
static void test_audit_redacts_chap_secrets(void **state)
{
    (void)state;
    char out[1024];
    V1alpha1__TargetPortal p1 = V1ALPHA1__TARGET_PORTAL__INIT;
    p1.target_address = "10.0.0.5";
    V1alpha1__ConnectTargetRequest c1 = V1ALPHA1__CONNECT_TARGET_REQUEST__INIT;
    c1.target_portal = &p1;
    c1.iqn = "iqn.a:b";
    c1.auth_type = V1ALPHA1__AUTHENTICATION_TYPE__ONE_WAY_CHAP;
    c1.chap_username = "initiator";
    c1.chap_secret = SECRET;
    cp_redact_render(&c1.base, out, sizeof(out));
    assert_null(strstr(out, SECRET));
    assert_non_null(strstr(out, "\"chap_secret\":\"<redacted>\""));
    assert_non_null(strstr(out, "\"chap_username\":\"initiator\""));
    V1alpha2__SetMutualChapSecretRequest sm = V1ALPHA2__SET_MUTUAL_CHAP_SECRET_REQUEST__INIT;
    sm.mutualchapsecret = MUTUAL;
    cp_redact_render(&sm.base, out, sizeof(out));
    assert_null(strstr(out, MUTUAL));
    assert_non_null(strstr(out, "\"MutualChapSecret\":\"<redacted>\""));
    /* a host text that repeated the secret is scrubbed by value too */
    char text[256];
    snprintf(text, sizeof(text), "login failed with secret %s", SECRET);
    assert_int_equal(cp_redact_scrub(&c1.base, text, sizeof(text)), 1);
    assert_null(strstr(text, SECRET));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_portal_and_iqn_rules),
        cmocka_unit_test_setup_teardown(test_flow_v1alpha1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flow_v1alpha2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chap_and_no_secret_in_errors, setup, teardown),
        cmocka_unit_test(test_audit_redacts_chap_secrets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
