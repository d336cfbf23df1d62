/* test_simfixture.c - the SMB and iSCSI simulators seeded from the YAML
 * fixture: the sections parsed, every bad input a start-up error naming
 * the file line, key path and cause (never a secret); an iSCSI login makes
 * the target's LUNs disks of the storage simulator (numbers, size,
 * identity, location, online, RAW), a logout removes them (refused while
 * an operation on one runs), a LUN keeps its data between logins; the SMB
 * simulator's servers, shares, credentials and existing mappings. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/iscsi_sim.h"
#include "sim/smb_sim.h"
#include "host/storage_ids.h"
#include "sim/storage_sim.h"

#define GIB (1024ull * 1024 * 1024)
#define SECRET "Chap-S3cret-16b"
#define PASSWORD "Fsx-Pa55-w0rd"

static void *blocks[1024];
static size_t n_blocks;

static void *heap(void *actx, size_t n)
{
    (void)actx;
    return n_blocks == sizeof(blocks) / sizeof(blocks[0]) ? NULL
                                                          : (blocks[n_blocks++] = calloc(1, n));
}

static void free_blocks(void)
{
    while (n_blocks > 0)
        free(blocks[--n_blocks]);
}

static const cp_storage_alloc alloc = {heap, NULL};

/* --- bad fixtures: a start-up error naming line, key and cause ------------ */

typedef struct bad_case {
    const char *yaml;
    const char *want;  /* in the message */
    const char *never; /* not in the message (a secret), or NULL */
} bad_case;

static void test_bad_iscsi_fixtures(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"iscsi:\n  portal: []\n",
         ":2: iscsi: unknown key \"portal\" (known: portals, sessions, initiator_stopped)", NULL},
        {"iscsi:\n  portals:\n    - {address: 10.0.0.1, port: 70000}\n",
         ":3: iscsi.portals[0].port: 70000 is out of range [1, 65535]", NULL},
        {"iscsi:\n  portals:\n    - {port: 3260}\n", "iscsi.portals[0]: needs address", NULL},
        {"iscsi:\n  portals:\n    - {address: 'a b'}\n",
         "iscsi.portals[0].address: \"a b\" is not a host name or address", NULL},
        {"iscsi:\n  portals:\n    - address: 10.0.0.1\n      targets:\n        - {iqn: iqn.a:b}\n",
         ":5: iscsi.portals[0].targets[0].luns: needs 1 to 64 LUNs", NULL},
        {"iscsi:\n  portals:\n    - address: 10.0.0.1\n      targets:\n"
         "        - {iqn: iqn.a:b, luns: [{size: 10GB}]}\n",
         "iscsi.portals[0].targets[0].luns[0].size: expected a size such as 1GiB", NULL},
        {"iscsi:\n  portals:\n    - address: 10.0.0.1\n      targets:\n"
         "        - {iqn: 'not an iqn', luns: [{size: 1GiB}]}\n",
         "iscsi.portals[0].targets[0].iqn: \"not an iqn\" is not an iSCSI name", NULL},
        {"iscsi:\n  portals:\n    - address: 10.0.0.1\n      targets:\n"
         "        - {iqn: iqn.a:b, luns: [{size: 1GiB}], chap: {username: u, secret: tiny-Secret}}\n",
         "iscsi.portals[0].targets[0].chap.secret: must be 12 to 16 bytes long, as Windows "
         "requires (it has 11)",
         "tiny-Secret"},
        {"iscsi:\n  portals:\n    - address: 10.0.0.1\n      targets:\n"
         "        - {iqn: iqn.a:b, luns: [{size: 1GiB}], chap: {secret: " SECRET "}}\n",
         "iscsi.portals[0].targets[0].chap: needs username and secret", SECRET},
        {"iscsi:\n  portals:\n    - address: 10.0.0.1\n      targets:\n"
         "        - {iqn: iqn.a:b, luns: [{size: 1GiB}]}\n        - {iqn: IQN.A:B, luns: [{size: "
         "1GiB}]}\n",
         "iscsi.portals[0].targets[1].iqn: target IQN.A:B is listed twice", NULL},
        {"iscsi:\n  portals:\n    - address: 10.0.0.1\n      targets:\n"
         "        - {iqn: iqn.a:b, luns: [{size: 1GiB}]}\n  sessions:\n"
         "    - {address: 10.0.0.1, iqn: iqn.x:y}\n",
         ":7: iscsi.sessions[0].iqn: portal 10.0.0.1:3260 has no target iqn.x:y", NULL},
        {"iscsi:\n  sessions:\n    - {address: 10.0.0.2, iqn: iqn.x:y}\n",
         "iscsi.sessions[0]: portal 10.0.0.2:3260 is not in iscsi.portals", NULL},
        {"iscsi:\n  portals: [\n", "fixture (string):", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cp_iscsi_host h;
        cp_error e = {0};
        int rc = cp_iscsi_sim_new_from_string(cases[i].yaml, &h, &e);
        if (rc != CP_E_INVALID_ARGUMENT || strstr(e.msg, cases[i].want) == NULL ||
            strncmp(e.msg, "iscsi simulator: fixture (string):", 34) != 0 ||
            (cases[i].never != NULL && strstr(e.msg, cases[i].never) != NULL))
            fail_msg("case %zu: rc %d, message \"%s\", want \"%s\"", i, rc, e.msg, cases[i].want);
    }
}

/* The fixture's own cap on any list: 257 items are refused before the
 * list is read (the sections' tighter caps come after it). */
static void test_fixture_list_cap(void **state)
{
    (void)state;
    size_t cap = 64 + 257 * 40;
    char *yaml = malloc(cap);
    assert_non_null(yaml);
    size_t len = (size_t)snprintf(yaml, cap, "iscsi:\n  portals:\n");
    for (int i = 0; i < 257; i++)
        len += (size_t)snprintf(yaml + len, cap - len, "    - {address: 10.0.%d.%d}\n", i / 250,
                                i % 250 + 1);
    cp_iscsi_host h;
    cp_error e = {0};
    int rc = cp_iscsi_sim_new_from_string(yaml, &h, &e);
    free(yaml);
    assert_int_equal(rc, CP_E_INVALID_ARGUMENT);
    assert_string_equal(e.msg, "iscsi simulator: fixture (string):3: iscsi.portals: more than 256 "
                               "items");
}

static void test_bad_smb_fixtures(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"smb:\n  servers:\n    - {name: fs1, reachable: maybe}\n",
         ":3: smb.servers[0].reachable: expected true or false, not \"maybe\"", NULL},
        {"smb:\n  servers:\n    - {name: fs1, credentials: [{username: u}]}\n",
         "smb.servers[0].credentials[0]: needs username and password", NULL},
        {"smb:\n  servers:\n    - {name: 'fs 1'}\n",
         "smb.servers[0].name: \"fs 1\" is not a server name or pattern", NULL},
        {"smb:\n  servers:\n    - {name: fs1, sharez: [a]}\n",
         "smb.servers[0]: unknown key \"sharez\"", NULL},
        {"smb:\n  servers:\n    - {name: fs1}\n  mappings:\n    - {remote: 'fs1\\share', "
         "username: u}\n",
         ":5: smb.mappings[0].remote: \"fs1\\share\" is not a share root \\\\server\\share", NULL},
        {"smb:\n  servers:\n    - {name: fs1}\n  mappings:\n    - {remote: '\\\\fs2\\share', "
         "username: u}\n",
         "smb.mappings[0].remote: no server of smb.servers is \\\\fs2\\share's", NULL},
        {"smb:\n  servers:\n    - {name: fs1, credentials: [{username: u, password: ''}]}\n",
         "smb.servers[0].credentials[0].password: must be 1 to 255 bytes long", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cp_smb_host h;
        cp_error e = {0};
        int rc = cp_smb_sim_new_from_string(cases[i].yaml, &h, &e);
        if (rc != CP_E_INVALID_ARGUMENT || strstr(e.msg, cases[i].want) == NULL ||
            strncmp(e.msg, "smb simulator: fixture (string):", 32) != 0)
            fail_msg("case %zu: rc %d, message \"%s\", want \"%s\"", i, rc, e.msg, cases[i].want);
    }
}

/* The repository's fixture loads in all three simulators; a missing file
 * is named. */
static void test_repository_fixture_loads(void **state)
{
    (void)state;
    const char *path = "test/fixtures/storage.yaml";
    cp_storage_host s;
    cp_iscsi_host i;
    cp_smb_host m;
    cp_error e;
    assert_int_equal(cp_storage_sim_new(path, &s, &e), CP_OK);
    assert_int_equal(cp_iscsi_sim_new(path, &i, &e), CP_OK);
    assert_int_equal(cp_smb_sim_new(path, &m, &e), CP_OK);
    assert_int_equal(i.ops->attach_storage(i.ctx, &s, &e), CP_OK);
    i.ops->destroy(i.ctx);
    m.ops->destroy(m.ctx);
    s.ops->destroy(s.ctx);
    assert_int_equal(cp_iscsi_sim_new("/nonexistent/f.yaml", &i, &e), CP_E_NOT_FOUND);
    assert_string_equal(e.msg, "iscsi simulator: cannot open fixture /nonexistent/f.yaml");
}

/* --- iSCSI logins and the storage simulator's disks ----------------------- */

static const char storage_yaml[] = "latency_ms: 0\n"
                                   "disks:\n"
                                   "  - {number: 0, size: 10GiB}\n"
                                   "  - {number: 2, size: 1GiB}\n";

static const char iscsi_yaml[] =
    "iscsi:\n"
    "  portals:\n"
    "    - address: san.example\n"
    "      targets:\n"
    "        - {iqn: 'iqn.2003-01.org.example:data', luns: [{size: 4GiB}, {size: 2GiB}]}\n"
    "        - {iqn: 'iqn.2003-01.org.example:secure', luns: [{size: 1GiB, serial: SER-1}],\n"
    "           chap: {username: node-a, secret: " SECRET "}}\n"
    "    - {address: 192.0.2.20, port: 3261, registered: true,\n"
    "       targets: [{iqn: 'iqn.2003-01.org.example:boot', luns: [{size: 2GiB}]}]}\n"
    "  sessions:\n"
    "    - {address: 192.0.2.20, port: 3261, iqn: 'iqn.2003-01.org.example:boot'}\n";

typedef struct env {
    cp_storage_host s;
    cp_iscsi_host i;
    cp_iscsi_portal san;
} env;

static int setup(void **state)
{
    env *t = calloc(1, sizeof(*t));
    cp_error e;
    if (cp_storage_sim_new_from_string(storage_yaml, &t->s, &e) != CP_OK ||
        cp_iscsi_sim_new_from_string(iscsi_yaml, &t->i, &e) != CP_OK ||
        t->i.ops->attach_storage(t->i.ctx, &t->s, &e) != CP_OK) {
        print_error("%s\n", e.msg);
        return -1;
    }
    snprintf(t->san.address, sizeof(t->san.address), "san.example");
    t->san.port = 3260;
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    env *t = *state;
    t->i.ops->destroy(t->i.ctx);
    t->s.ops->destroy(t->s.ctx);
    free(t);
    free_blocks();
    return 0;
}

static size_t target_disks(env *t, const char *iqn, uint32_t *out)
{
    size_t n = 0;
    cp_error e;
    int rc = t->i.ops->disks(t->i.ctx, &t->san, iqn, out, CP_ISCSI_LIST_MAX, &n, &e);
    return rc == CP_OK ? n : 0;
}

static void test_login_adds_disks_logout_removes_them(void **state)
{
    env *t = *state;
    cp_error e;
    const char *data = "iqn.2003-01.org.example:data";
    /* the fixture's login at start: its LUN is disk 1, the lowest free */
    cp_disk_info d;
    assert_int_equal(t->s.ops->get_disk(t->s.ctx, 1, &alloc, &d, &e), CP_OK);
    assert_int_equal(d.size, 2 * GIB);
    assert_int_equal(t->i.ops->add_portal(t->i.ctx, &t->san, &e), CP_OK);
    assert_int_equal(t->i.ops->connect(t->i.ctx, &t->san, data, CP_ISCSI_AUTH_NONE, "", "", &e),
                     CP_OK);
    uint32_t nums[CP_ISCSI_LIST_MAX];
    assert_int_equal(target_disks(t, data, nums), 2);
    assert_int_equal(nums[0], 3); /* 0, 1 and 2 are taken */
    assert_int_equal(nums[1], 4);
    char p83[2][80], serial[2][80];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(t->s.ops->get_disk(t->s.ctx, nums[k], &alloc, &d, &e), CP_OK);
        assert_int_equal(d.number, nums[k]);
        assert_int_equal(d.size, k == 0 ? 4 * GIB : 2 * GIB);
        assert_true(d.online);
        assert_int_equal(d.style, CP_PART_STYLE_RAW);
        assert_false(d.is_boot || d.is_system);
        cp_page83_format(d.id_desc, d.id_desc_len, p83[k], sizeof(p83[k]));
        cp_serial_format(d.dev_desc, d.dev_desc_len, serial[k], sizeof(serial[k]));
        assert_int_equal(strlen(p83[k]), 32);
        assert_memory_equal(p83[k], "600140", 6);
        assert_int_equal(strlen(serial[k]), 36);
        assert_int_equal(d.dev_desc[28], 9); /* BusTypeiScsi */
        char want[80];
        snprintf(want, sizeof(want), "Integrated : Adapter 3 : Port 0 : Target 1 : LUN %d", k);
        assert_string_equal(d.location, want);
        cp_partition_info *parts;
        size_t np;
        assert_int_equal(t->s.ops->list_partitions(t->s.ctx, nums[k], &alloc, &parts, &np, &e),
                         CP_OK);
        assert_int_equal(np, 0);
    }
    assert_string_not_equal(p83[0], p83[1]);
    assert_string_not_equal(serial[0], serial[1]);
    /* logout: both disks are gone from the host */
    assert_int_equal(t->i.ops->disconnect(t->i.ctx, &t->san, data, &e), CP_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(t->s.ops->get_disk(t->s.ctx, nums[k], &alloc, &d, &e), CP_E_NOT_FOUND);
        assert_non_null(strstr(e.msg, "not found"));
    }
    cp_disk_info *all;
    size_t n;
    assert_int_equal(t->s.ops->list_disks(t->s.ctx, &alloc, &all, &n, &e), CP_OK);
    assert_int_equal(n, 3); /* 0, 1 (the login at start) and 2 */
    assert_int_equal(target_disks(t, data, nums), 0);
}

static void test_chap_login_and_fixture_serial(void **state)
{
    env *t = *state;
    cp_error e = {0};
    const char *secure = "iqn.2003-01.org.example:secure";
    assert_int_equal(t->i.ops->add_portal(t->i.ctx, &t->san, &e), CP_OK);
    assert_int_equal(t->i.ops->connect(t->i.ctx, &t->san, secure, CP_ISCSI_AUTH_ONE_WAY_CHAP,
                                       "node-a", "Wr0ng-S3cret-16", &e),
                     CP_E_PERMISSION_DENIED);
    assert_string_equal(e.msg, "logging in to iqn.2003-01.org.example:secure: authentication "
                               "failure");
    assert_int_equal(t->i.ops->connect(t->i.ctx, &t->san, secure, CP_ISCSI_AUTH_NONE, "", "", &e),
                     CP_E_PERMISSION_DENIED);
    assert_int_equal(t->i.ops->connect(t->i.ctx, &t->san, secure, CP_ISCSI_AUTH_ONE_WAY_CHAP,
                                       "node-a", SECRET, &e),
                     CP_OK);
    uint32_t nums[CP_ISCSI_LIST_MAX];
    assert_int_equal(target_disks(t, secure, nums), 1);
    cp_disk_info d;
    char serial[80];
    assert_int_equal(t->s.ops->get_disk(t->s.ctx, nums[0], &alloc, &d, &e), CP_OK);
    cp_serial_format(d.dev_desc, d.dev_desc_len, serial, sizeof(serial));
    assert_string_equal(serial, "SER-1");
    /* a portal the fixture does not list does not answer */
    cp_iscsi_portal other = {.address = "elsewhere.example", .port = 3260};
    assert_int_equal(t->i.ops->add_portal(t->i.ctx, &other, &e), CP_E_UNAVAILABLE);
    assert_string_equal(e.msg, "target portal elsewhere.example:3260 does not answer");
}

/* A LUN keeps its partitions and volumes between logins (its volume ID
 * too), whatever disk number it gets. */
static void test_lun_keeps_data_between_logins(void **state)
{
    env *t = *state;
    cp_error e;
    const char *data = "iqn.2003-01.org.example:data";
    assert_int_equal(t->i.ops->add_portal(t->i.ctx, &t->san, &e), CP_OK);
    assert_int_equal(t->i.ops->connect(t->i.ctx, &t->san, data, CP_ISCSI_AUTH_NONE, "", "", &e),
                     CP_OK);
    uint32_t nums[CP_ISCSI_LIST_MAX];
    assert_int_equal(target_disks(t, data, nums), 2);
    assert_int_equal(t->s.ops->init_gpt(t->s.ctx, nums[1], &e), CP_OK);
    assert_int_equal(t->s.ops->create_basic_partition(t->s.ctx, nums[1], &e), CP_OK);
    char **ids;
    size_t n;
    assert_int_equal(t->s.ops->list_volumes(t->s.ctx, nums[1], 0, &alloc, &ids, &n, &e), CP_OK);
    assert_int_equal(n, 1);
    char vol[CP_VOLUME_ID_LEN + 1];
    snprintf(vol, sizeof(vol), "%s", ids[0]);
    assert_int_equal(t->s.ops->format_volume(t->s.ctx, vol, &e), CP_OK);
    assert_int_equal(t->i.ops->disconnect(t->i.ctx, &t->san, data, &e), CP_OK);
    cp_volume_info vi;
    assert_int_equal(t->s.ops->get_volume(t->s.ctx, vol, &vi, &e), CP_E_NOT_FOUND);
    /* another disk takes the lowest number meanwhile */
    assert_int_equal(t->i.ops->connect(t->i.ctx, &t->san, "iqn.2003-01.org.example:secure",
                                       CP_ISCSI_AUTH_ONE_WAY_CHAP, "node-a", SECRET, &e),
                     CP_OK);
    assert_int_equal(t->i.ops->connect(t->i.ctx, &t->san, data, CP_ISCSI_AUTH_NONE, "", "", &e),
                     CP_OK);
    assert_int_equal(target_disks(t, data, nums), 2);
    assert_int_equal(t->s.ops->get_volume(t->s.ctx, vol, &vi, &e), CP_OK);
    assert_int_equal(vi.disk_number, nums[1]);
    assert_true(vi.formatted);
    assert_string_equal(vi.fs, "NTFS");
    cp_disk_info d;
    assert_int_equal(t->s.ops->get_disk(t->s.ctx, nums[0], &alloc, &d, &e), CP_OK);
    assert_int_equal(d.style, CP_PART_STYLE_RAW); /* the other LUN was never touched */
}

/* A logout while an operation on one of the disks runs is refused, naming
 * the disk; nothing is removed; it succeeds once the operation ended. */
typedef struct op_arg {
    env *t;
    uint32_t disk;
    int rc;
} op_arg;

static void *slow_op(void *p)
{
    op_arg *a = p;
    cp_error e;
    a->rc = a->t->s.ops->set_disk_online(a->t->s.ctx, a->disk, true, &e);
    return NULL;
}

static void test_logout_refused_while_disk_busy(void **state)
{
    env *t = *state;
    t->s.ops->destroy(t->s.ctx); /* a host whose disk operations take 400 ms */
    t->i.ops->destroy(t->i.ctx);
    cp_error e;
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "latency_ms: 400\n%s", strchr(storage_yaml, '\n') + 1);
    assert_int_equal(cp_storage_sim_new_from_string(yaml, &t->s, &e), CP_OK);
    assert_int_equal(cp_iscsi_sim_new_from_string(iscsi_yaml, &t->i, &e), CP_OK);
    assert_int_equal(t->i.ops->attach_storage(t->i.ctx, &t->s, &e), CP_OK);
    const char *data = "iqn.2003-01.org.example:data";
    assert_int_equal(t->i.ops->add_portal(t->i.ctx, &t->san, &e), CP_OK);
    assert_int_equal(t->i.ops->connect(t->i.ctx, &t->san, data, CP_ISCSI_AUTH_NONE, "", "", &e),
                     CP_OK);
    uint32_t nums[CP_ISCSI_LIST_MAX];
    assert_int_equal(target_disks(t, data, nums), 2);
    op_arg a = {t, nums[1], -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, slow_op, &a), 0);
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    assert_int_equal(t->i.ops->disconnect(t->i.ctx, &t->san, data, &e), CP_E_FAILED_PRECONDITION);
    char want[128];
    snprintf(want, sizeof(want),
             "logging out of %s: disk %u is in use (an operation on it is running)", data,
             (unsigned)nums[1]);
    assert_string_equal(e.msg, want);
    cp_disk_info d;
    assert_int_equal(t->s.ops->get_disk(t->s.ctx, nums[0], &alloc, &d, &e),
                     CP_OK); /* all or none */
    pthread_join(th, NULL);
    assert_int_equal(a.rc, CP_OK);
    assert_int_equal(t->i.ops->disconnect(t->i.ctx, &t->san, data, &e), CP_OK);
    assert_int_equal(t->s.ops->get_disk(t->s.ctx, nums[1], &alloc, &d, &e), CP_E_NOT_FOUND);
}

/* --- the SMB simulator ------------------------------------------------------ */

static const char smb_yaml[] =
    "smb:\n"
    "  computer_name: NODE7\n"
    "  dns_name: node7.corp.example\n"
    "  servers:\n"
    "    - {name: fsx1.corp.example, shares: [vol1, 'pvc-*'],\n"
    "       credentials: [{username: 'CORP\\svc', password: " PASSWORD "}]}\n"
    "    - {name: '*.down.example', reachable: false}\n"
    "    - {name: flaky.example, drops_after_mapping: true}\n"
    "  mappings:\n"
    "    - {remote: '\\\\FSX1.corp.example\\vol1', username: 'CORP\\backup'}\n";

/* A target's disks and its logout need a session. */
static void test_session_calls_need_a_login(void **state)
{
    env *t = *state;
    const char *data = "iqn.2003-01.org.example:data";
    uint32_t out[4];
    size_t n = 9;
    cp_error e;
    assert_int_equal(t->i.ops->disks(t->i.ctx, &t->san, data, out, 4, &n, &e), CP_E_NOT_FOUND);
    assert_string_equal(e.msg, "target iqn.2003-01.org.example:data is not connected");
    assert_int_equal(t->i.ops->disconnect(t->i.ctx, &t->san, data, &e), CP_E_NOT_FOUND);
    assert_string_equal(e.msg, "target iqn.2003-01.org.example:data is not connected");
}

/* With the initiator service stopped every call is refused, naming it. */
static void test_stopped_initiator_refuses_every_call(void **state)
{
    env *t = *state;
    const char *data = "iqn.2003-01.org.example:data";
    cp_iscsi_host h;
    cp_error e[8];
    assert_int_equal(cp_iscsi_sim_new_from_string("iscsi: {initiator_stopped: true}", &h, &e[0]),
                     CP_OK);
    const cp_iscsi_ops *o = h.ops;
    uint32_t out[4];
    char iqns[4][CP_ISCSI_NAME_MAX];
    cp_iscsi_portal list[4];
    size_t n = 9;
    const int rc[8] = {
        o->add_portal(h.ctx, &t->san, &e[0]),
        o->remove_portal(h.ctx, &t->san, &e[1]),
        o->list_portals(h.ctx, list, 4, &n, &e[2]),
        o->discover(h.ctx, &t->san, iqns, 4, &n, &e[3]),
        o->connect(h.ctx, &t->san, data, CP_ISCSI_AUTH_NONE, "", "", &e[4]),
        o->disks(h.ctx, &t->san, data, out, 4, &n, &e[5]),
        o->disconnect(h.ctx, &t->san, data, &e[6]),
        o->set_mutual_chap_secret(h.ctx, "", &e[7]),
    };
    for (size_t i = 0; i < 8; i++)
        if (rc[i] != CP_E_FAILED_PRECONDITION ||
            strstr(e[i].msg, "(MSiSCSI) is not running") == NULL)
            fail_msg("call %zu: status %d (%s), want FAILED_PRECONDITION naming MSiSCSI", i, rc[i],
                     rc[i] != CP_OK ? e[i].msg : "");
    h.ops->destroy(h.ctx);
}

static void test_smb_servers_shares_credentials(void **state)
{
    (void)state;
    cp_smb_host h;
    cp_error e = {0};
    assert_int_equal(cp_smb_sim_new_from_string(smb_yaml, &h, &e), CP_OK);
    char nb[64], dns[64];
    assert_int_equal(h.ops->computer_name(h.ctx, nb, dns, sizeof(nb), &e), CP_OK);
    assert_string_equal(nb, "NODE7");
    assert_string_equal(dns, "node7.corp.example");
    cp_smb_state st;
    assert_int_equal(h.ops->state(h.ctx, "\\\\fsx1.corp.example\\vol1", &st, &e), CP_OK);
    assert_int_equal(st, CP_SMB_MAPPED); /* the fixture's mapping */
    /* another share of that server under other credentials: Windows' conflict */
    assert_int_equal(
        h.ops->map(h.ctx, "\\\\fsx1.corp.example\\pvc-1", "CORP\\svc", PASSWORD, true, &e),
        CP_E_FAILED_PRECONDITION);
    assert_non_null(strstr(e.msg, "mapping \\\\fsx1.corp.example\\pvc-1: "
                                  "\\\\fsx1.corp.example\\vol1 is already mapped with other "
                                  "credentials"));
    assert_null(strstr(e.msg, PASSWORD));
    assert_int_equal(h.ops->unmap(h.ctx, "\\\\fsx1.corp.example\\vol1", &e), CP_OK);
    assert_int_equal(
        h.ops->map(h.ctx, "\\\\fsx1.corp.example\\pvc-1", "corp\\SVC", "wrong-pw", true, &e),
        CP_E_PERMISSION_DENIED);
    assert_string_equal(e.msg, "mapping \\\\fsx1.corp.example\\pvc-1: the user name or password is "
                               "incorrect");
    assert_int_equal(
        h.ops->map(h.ctx, "\\\\fsx1.corp.example\\other", "CORP\\svc", PASSWORD, true, &e),
        CP_E_NOT_FOUND);
    assert_string_equal(e.msg,
                        "mapping \\\\fsx1.corp.example\\other: the network name cannot be found");
    assert_int_equal(
        h.ops->map(h.ctx, "\\\\fsx1.corp.example\\pvc-1", "CORP\\svc", PASSWORD, true, &e), CP_OK);
    assert_int_equal(h.ops->map(h.ctx, "\\\\fs9.down.example\\s", "u", "p", true, &e),
                     CP_E_UNAVAILABLE);
    assert_int_equal(h.ops->map(h.ctx, "\\\\unlisted.example\\s", "u", "p", true, &e),
                     CP_E_UNAVAILABLE);
    assert_string_equal(e.msg, "mapping \\\\unlisted.example\\s: the network path was not found");
    assert_int_equal(h.ops->map(h.ctx, "\\\\flaky.example\\s", "u", "p", true, &e), CP_OK);
    assert_int_equal(h.ops->state(h.ctx, "\\\\flaky.example\\s", &st, &e), CP_OK);
    assert_int_equal(st, CP_SMB_UNREACHABLE);
    h.ops->destroy(h.ctx);
    /* no fixture: no server answers, the machine is SIMNODE */
    assert_int_equal(cp_smb_sim_new(NULL, &h, &e), CP_OK);
    assert_int_equal(h.ops->map(h.ctx, "\\\\fs1\\s", "u", "p", true, &e), CP_E_UNAVAILABLE);
    assert_int_equal(h.ops->computer_name(h.ctx, nb, dns, sizeof(nb), &e), CP_OK);
    assert_string_equal(nb, "SIMNODE");
    h.ops->destroy(h.ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_iscsi_fixtures),
        cmocka_unit_test(test_fixture_list_cap),
        cmocka_unit_test(test_bad_smb_fixtures),
        cmocka_unit_test(test_repository_fixture_loads),
        cmocka_unit_test_setup_teardown(test_login_adds_disks_logout_removes_them, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chap_login_and_fixture_serial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lun_keeps_data_between_logins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_logout_refused_while_disk_busy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_calls_need_a_login, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopped_initiator_refuses_every_call, setup, teardown),
        cmocka_unit_test(test_smb_servers_shares_credentials),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
