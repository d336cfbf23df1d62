/* test_storage_sim.c - the simulated storage host (sim/storage_sim.h) at
 * its ops-table level: fixture loading and its errors, the identity bytes
 * it reports (formatted by storage_ids.c as for a real disk), partitions,
 * volumes, mount points, growth, rescan, and its check that callers
 * serialize operations per disk while different disks run in parallel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/thread.h"
#include "host/fs.h"
#include "host/storage_ids.h"
#include "sim/storage_sim.h"

#define GIB (1024ull * 1024ull * 1024ull)
#define MIB (1024ull * 1024ull)

static const char fixture[] =
    "disks:\n"
    "  - number: 0\n"
    "    size: 64GiB\n"
    "    boot: true\n"
    "    style: gpt\n"
    "    serial: '  SERIAL0  '\n"
    "    page83: [{code_set: binary, type: naa, hex: '60 02 24 80 00 11 22 33'}]\n"
    "    scsi: {port: 1, path: 0, target: 2, lun: 3}\n"
    "    partitions:\n"
    "      - {size: 100MiB, type: esp}\n"
    "      - {size: 10GiB, volume: {guid: '{11111111-2222-3333-4444-555555555555}', fs: NTFS,"
    " used: 1GiB, drive: c}}\n"
    "  - {number: 3, size: 4GiB, grow_to: 6GiB, serial: D3,"
    " page83: [{code_set: ascii, type: vendor_id, ascii: 'VEND  PROD  3'}],"
    " location: 'Slot 9 : Adapter 4 : Port 0 : Target 0 : LUN 3'}\n"
    "  - {number: 5, size: 4GiB, online: false, style: gpt,"
    " partitions: [{size: 1GiB, volume: {guid: '{55555555-0000-0000-0000-000000000005}'}}]}\n";

typedef struct env {
    cp_storage_host h;
} env;

/* Host lists come from this allocator; freed after each test (the
 * sanitizer build checks for leaks). */
static void *blocks[4096];
static size_t n_blocks;

static void *heap(void *actx, size_t n)
{
    (void)actx;
    if (n_blocks == sizeof(blocks) / sizeof(blocks[0]))
        return NULL;
    return blocks[n_blocks++] = calloc(1, n);
}

static void free_blocks(void)
{
    while (n_blocks > 0)
        free(blocks[--n_blocks]);
}

static const cp_storage_alloc alloc = {heap, NULL};

static int setup(void **state)
{
    env *t = calloc(1, sizeof(*t));
    cp_error e;
    if (t == NULL || cp_storage_sim_new_from_string(fixture, &t->h, &e) != CP_OK) {
        print_error("%s\n", e.msg);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    env *t = *state;
    t->h.ops->destroy(t->h.ctx);
    free(t);
    free_blocks();
    return 0;
}

#define OPS (t->h.ops)
#define CTX (t->h.ctx)
#define OK(x)                                                                                      \
    do {                                                                                           \
        cp_error e_;                                                                               \
        (void)e_;                                                                                  \
        int rc_ = (x);                                                                             \
        if (rc_ != CP_OK)                                                                          \
            fail_msg("%s: %s", #x, cp_status_name(rc_));                                           \
    } while (0)

static void test_disks_and_identity(void **state)
{
    env *t = *state;
    cp_disk_info *d;
    size_t n;
    cp_error e;
    assert_int_equal(OPS->list_disks(CTX, &alloc, &d, &n, &e), CP_OK);
    assert_int_equal(n, 3);
    assert_int_equal(d[0].number, 0);
    assert_true(d[0].is_boot);
    assert_false(d[0].is_system);
    assert_int_equal(d[0].style, CP_PART_STYLE_GPT);
    assert_int_equal(d[0].size, 64 * GIB);
    char s[128];
    cp_page83_format(d[0].id_desc, d[0].id_desc_len, s, sizeof(s));
    assert_string_equal(s, "6002248000112233");
    cp_serial_format(d[0].dev_desc, d[0].dev_desc_len, s, sizeof(s));
    assert_string_equal(s, "SERIAL0");
    assert_string_equal(d[0].location, "Integrated : Adapter 1 : Port 0 : Target 2 : LUN 3");
    cp_page83_format(d[1].id_desc, d[1].id_desc_len, s, sizeof(s));
    assert_string_equal(s, "VEND  PROD  3");
    assert_string_equal(d[1].location, "Slot 9 : Adapter 4 : Port 0 : Target 0 : LUN 3");
    assert_int_equal(d[1].style, CP_PART_STYLE_RAW);
    assert_false(d[2].online);
    cp_page83_format(d[2].id_desc, d[2].id_desc_len, s, sizeof(s));
    assert_string_equal(s, "");

    cp_disk_info one;
    assert_int_equal(OPS->get_disk(CTX, 9, &alloc, &one, &e), CP_E_NOT_FOUND);
    assert_string_equal(e.msg, "disk 9 not found");
}

static void test_partition_format_grow(void **state)
{
    env *t = *state;
    cp_error e;
    /* a RAW disk cannot take a partition yet */
    assert_int_equal(OPS->create_basic_partition(CTX, 3, &e), CP_E_FAILED_PRECONDITION);
    OK(OPS->init_gpt(CTX, 3, &e));
    assert_int_equal(OPS->init_gpt(CTX, 3, &e), CP_E_FAILED_PRECONDITION);
    OK(OPS->create_basic_partition(CTX, 3, &e));
    assert_int_equal(OPS->create_basic_partition(CTX, 3, &e), CP_E_FAILED_PRECONDITION);
    assert_non_null(strstr(e.msg, "no free space"));
    cp_partition_info *p;
    size_t n;
    assert_int_equal(OPS->list_partitions(CTX, 3, &alloc, &p, &n, &e), CP_OK);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].number, 1);
    assert_int_equal(p[0].offset, MIB);
    assert_int_equal(p[0].size, 4 * GIB - 2 * MIB);
    assert_int_equal(p[0].kind, CP_PART_BASIC);

    char **ids;
    assert_int_equal(OPS->list_volumes(CTX, 3, 0, &alloc, &ids, &n, &e), CP_OK);
    assert_int_equal(n, 1);
    assert_string_equal(ids[0], "\\\\?\\Volume{5157d15c-0003-4000-8000-000000000001}\\");
    assert_int_equal(OPS->list_volumes(CTX, 3, 2, &alloc, &ids, &n, &e), CP_OK);
    assert_int_equal(n, 0);

    const char *id = "\\\\?\\Volume{5157d15c-0003-4000-8000-000000000001}\\";
    cp_volume_info v;
    assert_int_equal(OPS->get_volume(CTX, id, &v, &e), CP_OK);
    assert_false(v.formatted);
    assert_int_equal(v.size_remaining, 0);
    OK(OPS->format_volume(CTX, id, &e));
    assert_int_equal(OPS->get_volume(CTX, id, &v, &e), CP_OK);
    assert_true(v.formatted);
    assert_string_equal(v.fs, "NTFS");
    assert_int_equal(v.disk_number, 3);
    assert_int_equal(v.partition_number, 1);
    assert_true(v.size_remaining > 0 && v.size_remaining < v.size);
    assert_int_equal(v.partition_max, v.partition_size);

    /* the disk grows at rescan; the partition can then grow into it */
    OK(OPS->rescan(CTX, &e));
    assert_int_equal(OPS->get_volume(CTX, id, &v, &e), CP_OK);
    assert_int_equal(v.partition_max, 6 * GIB - 2 * MIB);
    assert_int_equal(OPS->grow_volume(CTX, id, 7 * GIB, &e), CP_E_OUT_OF_RANGE);
    OK(OPS->grow_volume(CTX, id, v.partition_max, &e));
    assert_int_equal(OPS->get_volume(CTX, id, &v, &e), CP_OK);
    assert_int_equal(v.size, 6 * GIB - 2 * MIB);
}

static void test_mounts_and_drives(void **state)
{
    env *t = *state;
    cp_error e;
    const char *c = "\\\\?\\Volume{11111111-2222-3333-4444-555555555555}\\";
    char id[CP_VOLUME_ID_MAX];
    assert_int_equal(OPS->drive_volume(CTX, 'c', id, sizeof(id), &e), CP_OK);
    assert_string_equal(id, c);
    assert_int_equal(OPS->drive_volume(CTX, 'D', id, sizeof(id), &e), CP_E_NOT_FOUND);
    assert_int_equal(OPS->volume_at(CTX, "C:\\m", id, sizeof(id), &e), CP_E_FAILED_PRECONDITION);
    assert_non_null(strstr(e.msg, "not a mounted folder"));
    OK(OPS->add_mount_point(CTX, c, "C:\\m", &e));
    assert_int_equal(OPS->add_mount_point(CTX, c, "c:\\M", &e), CP_E_ALREADY_EXISTS);
    assert_int_equal(OPS->volume_at(CTX, "c:\\M", id, sizeof(id), &e), CP_OK);
    assert_string_equal(id, c);
    OK(OPS->flush_volume(CTX, c, &e));
    OK(OPS->remove_mount_point(CTX, "C:\\m", &e));
    assert_int_equal(OPS->remove_mount_point(CTX, "C:\\m", &e), CP_E_FAILED_PRECONDITION);
}

/* DRIVER-CONTRACTS facts 10 and 11c: the POSIX fs host connected to
 * the simulator's mount points (mountpoints.h) sees a folder a volume is
 * mounted at as Windows does. */
static void test_fact10_fact11c_fs_host_shares_mount_points(void **state)
{
    env *t = *state;
    cp_error e;
    const char *c = "\\\\?\\Volume{11111111-2222-3333-4444-555555555555}\\";
    char root[] = "/tmp/cp-mp-XXXXXX", path[512], id[CP_VOLUME_ID_MAX];
    assert_non_null(mkdtemp(root));
    snprintf(path, sizeof(path), "%s/C/k/stg", root);
    cp_fs_host fs;
    OK(cp_fs_host_posix_new(root, &fs, &e));
    OK(fs.ops->mkdir_all(fs.ctx, "C:\\k\\stg", NULL, &e));
    cp_mount_points mp;
    OK(cp_storage_sim_mount_points(&t->h, &mp));
    cp_fs_host_posix_set_mount_points(&fs, &mp);
    OK(OPS->add_mount_point(CTX, c, "C:\\k\\stg", &e));
    FILE *f = fopen(strcat(path, "/data"), "w"); /* a file on the volume */
    assert_non_null(f);
    fclose(f);

    bool link = false;
    OK(fs.ops->is_link(fs.ctx, "c:\\k\\stg", &link, &e)); /* fact 10, any case */
    assert_true(link);
    OK(fs.ops->remove(fs.ctx, "C:\\k\\stg", true, NULL, &e)); /* fact 11c */
    assert_int_equal(OPS->volume_at(CTX, "C:\\k\\stg", id, sizeof(id), &e),
                     CP_E_FAILED_PRECONDITION);
    snprintf(path, sizeof(path), "%s/.sim-volumes/11111111-2222-3333-4444-555555555555.1/data",
             root);
    assert_int_equal(access(path, F_OK), 0); /* the volume's file is kept */
    OK(fs.ops->mkdir_all(fs.ctx, "C:\\k\\stg", NULL, &e));
    OK(fs.ops->is_link(fs.ctx, "C:\\k\\stg", &link, &e));
    assert_false(link);
    /* a parent removed with force takes the mount point with it */
    OK(OPS->add_mount_point(CTX, c, "C:\\k\\stg", &e));
    OK(fs.ops->remove(fs.ctx, "C:\\k", true, NULL, &e));
    assert_int_equal(OPS->volume_at(CTX, "C:\\k\\stg", id, sizeof(id), &e),
                     CP_E_FAILED_PRECONDITION);
    cp_storage_host other = {NULL, NULL};
    assert_int_equal(cp_storage_sim_mount_points(&other, &mp), CP_E_INVALID_ARGUMENT);
    OK(fs.ops->remove(fs.ctx, "C:\\", true, NULL, &e));
    cp_fs_host_posix_free(&fs);
    unlink(path);
    *strrchr(path, '/') = '\0';
    rmdir(path);
    path[strlen(path) - 1] = '2'; /* the parent's mount folder, kept empty */
    rmdir(path);
    *strrchr(path, '/') = '\0';
    rmdir(path);
    rmdir(root);
}

static void test_offline_disk(void **state)
{
    env *t = *state;
    cp_error e;
    const char *id = "\\\\?\\Volume{55555555-0000-0000-0000-000000000005}\\";
    cp_volume_info v;
    char **ids;
    size_t n;
    assert_int_equal(OPS->get_volume(CTX, id, &v, &e), CP_E_NOT_FOUND);
    assert_int_equal(OPS->list_volumes(CTX, 5, 0, &alloc, &ids, &n, &e), CP_OK);
    assert_int_equal(n, 0);
    assert_int_equal(OPS->create_basic_partition(CTX, 5, &e), CP_E_FAILED_PRECONDITION);
    assert_non_null(strstr(e.msg, "offline"));
    OK(OPS->set_disk_online(CTX, 5, true, &e));
    assert_int_equal(OPS->get_volume(CTX, id, &v, &e), CP_OK);
    assert_false(v.formatted);
    assert_int_equal(v.size, 1 * GIB);
    assert_int_equal(OPS->list_volumes(CTX, 5, 1, &alloc, &ids, &n, &e), CP_OK);
    assert_int_equal(n, 1);
}

static void test_fixture_errors(void **state)
{
    (void)state;
    const struct {
        const char *yaml, *msg;
    } bad[] = {
        {"disks: [{number: 1}]", "needs number: and size:"},
        {"disks: [{number: 1, size: 1GiB, colour: red}]", "unknown key colour"},
        {"disks: [{number: 1, size: 12XB}]", "bad number"},
        {"disks: [{number: 1, size: 1GiB}, {number: 1, size: 1GiB}]", "duplicate disk number"},
        {"disks: [{number: 1, size: 1GiB, style: gpt, partitions: [{size: 2GiB}]}]",
         "fits on its disk"},
        {"disks: [{number: 1, size: 1GiB, partitions: [{size: 2MiB}]}]", "needs style"},
        {"disks: [{number: 1, size: 1GiB, style: gpt, partitions: [{size: 2MiB, volume: {fs: NTFS}}]}]",
         "needs guid"},
        {"disks: [{number: 1, size: 1GiB, page83: [{code_set: ebcdic, ascii: x}]}]",
         "unknown value for code_set"},
        {"disks: [{number: 1, size: 1GiB, page83: [{code_set: binary, hex: zz}]}]",
         "ascii: TEXT or hex: BYTES"},
        {"disks: {number: 1}", "disks must be a list"},
        {"disks: [{number: 1, size: 1GiB, online: maybe}]", "expected true or false"},
        {"disks: [", "line"},
        {"latency: 5", "unknown key latency"},
        {"disks: [{number: 1, size: 1GiB, style: gpt, partitions: [{size: 2MiB, volume: "
         "{guid: '{11111111-2222-3333-4444-555555555555}', roles: [swap]}}]}]",
         "unknown volume role (system, boot, pagefile, crashdump): swap"},
        {"disks: [{number: 1, size: 1GiB, style: gpt, partitions: [{size: 2MiB, volume: "
         "{guid: '{11111111-2222-3333-4444-555555555555}', roles: boot}}]}]",
         "roles must be a list"},
        {"disks: [{number: 1, size: 1GiB, style: gpt, partitions: [{size: 2MiB, volume: "
         "{guid: '{11111111-2222-3333-4444-555555555555}', bytes: ['1080:5']}}]}]",
         "bytes: not \"OFFSET:HEX\" within 256 KiB: 1080:5"},
        {"disks: [{number: 1, size: 1GiB, style: gpt, partitions: [{size: 2MiB, volume: "
         "{guid: '{11111111-2222-3333-4444-555555555555}', bytes: ['262143:53ef']}}]}]",
         "bytes: not \"OFFSET:HEX\" within 256 KiB: 262143:53ef"},
        {"disks: [{number: 1, size: 1GiB, style: gpt, partitions: [{size: 2MiB, volume: "
         "{guid: '{11111111-2222-3333-4444-555555555555}', bytes: ['0:53', '1:zz']}}]}]",
         "bytes: not hex: 1:zz"},
        {"disks: [{number: 1, size: 1GiB, style: gpt, partitions: [{size: 2MiB, volume: "
         "{guid: '{11111111-2222-3333-4444-555555555555}', bytes: '0:53'}}]}]",
         "bytes must be a list of \"OFFSET:HEX\""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cp_storage_host h;
        cp_error e;
        if (cp_storage_sim_new_from_string(bad[i].yaml, &h, &e) == CP_OK)
            fail_msg("fixture %zu loaded: %s", i, bad[i].yaml);
        assert_int_equal(e.status, CP_E_INVALID_ARGUMENT);
        if (strstr(e.msg, bad[i].msg) == NULL)
            fail_msg("fixture %zu: message lacks \"%s\": %s", i, bad[i].msg, e.msg);
        assert_non_null(strstr(e.msg, "storage simulator: fixture"));
    }
    cp_storage_host h;
    cp_error e;
    assert_int_equal(cp_storage_sim_new("/nonexistent/fixture.yaml", &h, &e), CP_E_NOT_FOUND);
    /* empty: no disks */
    assert_int_equal(cp_storage_sim_new(NULL, &h, &e), CP_OK);
    cp_disk_info *d;
    size_t n = 9;
    assert_int_equal(h.ops->list_disks(h.ctx, &alloc, &d, &n, &e), CP_OK);
    assert_int_equal(n, 0);
    h.ops->destroy(h.ctx);
    free_blocks();
}

static void test_repository_fixture_loads(void **state)
{
    (void)state;
    cp_storage_host h;
    cp_error e;
    if (cp_storage_sim_new("test/fixtures/storage.yaml", &h, &e) != CP_OK)
        fail_msg("%s", e.msg);
    cp_disk_info *d;
    size_t n;
    assert_int_equal(h.ops->list_disks(h.ctx, &alloc, &d, &n, &e), CP_OK);
    assert_int_equal(n, 18); /* 0..16 and 19; disk 20 does not answer */
    /* what Windows needs each volume for, as the fixture says */
    const struct {
        const char *id;
        unsigned roles;
        uint32_t disk;
    } want[] = {
        {"\\\\?\\Volume{0a6f7c10-1111-4a2b-9c3d-000000000001}\\", CP_VOLUME_ROLE_SYSTEM, 0},
        {"\\\\?\\Volume{0a6f7c10-1111-4a2b-9c3d-000000000003}\\",
         CP_VOLUME_ROLE_BOOT | CP_VOLUME_ROLE_PAGEFILE | CP_VOLUME_ROLE_CRASHDUMP, 0},
        {"\\\\?\\Volume{14141414-0014-4000-8000-000000000001}\\", CP_VOLUME_ROLE_SYSTEM, 14},
        {"\\\\?\\Volume{15151515-0015-4000-8000-000000000001}\\", CP_VOLUME_ROLE_PAGEFILE, 15},
        {"\\\\?\\Volume{15151515-0015-4000-8000-000000000002}\\", CP_VOLUME_ROLE_CRASHDUMP, 15},
        {"\\\\?\\Volume{16161616-0016-4000-8000-000000000001}\\", 0, 16},
        {"\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\", 0, 9},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        cp_volume_use u;
        if (h.ops->volume_use(h.ctx, want[i].id, &u, &e) != CP_OK)
            fail_msg("%s", e.msg);
        assert_int_equal(u.roles, want[i].roles);
        assert_int_equal(u.n_disks, 1);
        assert_int_equal(u.disks[0], want[i].disk);
    }
    cp_volume_use u;
    const char *unknown = "\\\\?\\Volume{00000000-0000-0000-0000-0000000000ff}\\";
    assert_int_equal(h.ops->volume_use(h.ctx, unknown, &u, &e), CP_E_NOT_FOUND);
    assert_non_null(strstr(e.msg, "not found"));
    h.ops->destroy(h.ctx);
    free_blocks();
}

/* --- serialization check and parallelism ------------------------------------ */

typedef struct worker {
    cp_storage_host *h;
    uint32_t disk;
    int rc;
} worker;

static void toggle(void *arg)
{
    worker *w = arg;
    cp_error e;
    w->rc = w->h->ops->set_disk_online(w->h->ctx, w->disk, true, &e);
}

static void run_pair(cp_storage_host *h, uint32_t d1, uint32_t d2, int *rc1, int *rc2, int64_t *ms)
{
    worker a = {h, d1, -1}, b = {h, d2, -1};
    int64_t t0 = cp_now_ms();
    cp_thread *ta = cp_thread_start(toggle, &a);
    cp_thread *tb = cp_thread_start(toggle, &b);
    assert_non_null(ta);
    assert_non_null(tb);
    cp_thread_join(ta);
    cp_thread_join(tb);
    *ms = cp_now_ms() - t0;
    *rc1 = a.rc;
    *rc2 = b.rc;
}

static void test_overlap_detected_parallel_allowed(void **state)
{
    (void)state;
    cp_storage_host h;
    cp_error e;
    assert_int_equal(cp_storage_sim_new_from_string("latency_ms: 300\n"
                                                    "disks: [{number: 1, size: 1GiB},"
                                                    " {number: 2, size: 1GiB}]",
                                                    &h, &e),
                     CP_OK);
    int rc1, rc2;
    int64_t ms;
    /* different disks: both succeed, at the same time */
    run_pair(&h, 1, 2, &rc1, &rc2, &ms);
    assert_int_equal(rc1, CP_OK);
    assert_int_equal(rc2, CP_OK);
    assert_true(ms < 550);
    assert_int_equal(cp_storage_sim_max_parallel(&h), 2);
    assert_int_equal(cp_storage_sim_overlaps(&h), 0);
    /* the same disk, unserialized: one of them is refused and counted */
    run_pair(&h, 1, 1, &rc1, &rc2, &ms);
    assert_true((rc1 == CP_OK) != (rc2 == CP_OK));
    assert_true(rc1 == CP_E_ABORTED || rc2 == CP_E_ABORTED);
    assert_int_equal(cp_storage_sim_overlaps(&h), 1);
    h.ops->destroy(h.ctx);
}

/* volume_arrival_ms: a disk brought online shows its volumes that much
 * later (Windows announces them asynchronously); before, neither
 * list_volumes nor get_volume sees them. */
static void test_volume_arrival_delay(void **state)
{
    (void)state;
    cp_storage_host h;
    cp_error e;
    assert_int_equal(
        cp_storage_sim_new_from_string("volume_arrival_ms: 300\n"
                                       "disks: [{number: 5, size: 2GiB, online: false, style: gpt,"
                                       " partitions: [{size: 1GiB, volume: "
                                       "{guid: '{55555555-0000-0000-0000-000000000005}'}}]}]",
                                       &h, &e),
        CP_OK);
    const char *id = "\\\\?\\Volume{55555555-0000-0000-0000-000000000005}\\";
    cp_volume_info v;
    char **ids;
    size_t n;
    int64_t t0 = cp_now_ms();
    assert_int_equal(h.ops->set_disk_online(h.ctx, 5, true, &e), CP_OK);
    assert_int_equal(h.ops->list_volumes(h.ctx, 5, 0, &alloc, &ids, &n, &e), CP_OK);
    if (cp_now_ms() - t0 < 250) {
        assert_int_equal(n, 0);
        assert_int_equal(h.ops->get_volume(h.ctx, id, &v, &e), CP_E_NOT_FOUND);
    }
    cp_mutex *m = cp_mutex_new();
    cp_cond *c = cp_cond_new();
    cp_mutex_lock(m);
    while (cp_now_ms() - t0 < 400)
        cp_cond_timedwait(c, m, 400 - (cp_now_ms() - t0));
    cp_mutex_unlock(m);
    cp_cond_free(c);
    cp_mutex_free(m);
    assert_int_equal(h.ops->list_volumes(h.ctx, 5, 0, &alloc, &ids, &n, &e), CP_OK);
    assert_int_equal(n, 1);
    assert_string_equal(ids[0], id);
    assert_int_equal(h.ops->get_volume(h.ctx, id, &v, &e), CP_OK);
    h.ops->destroy(h.ctx);
    free_blocks();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_disks_and_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partition_format_grow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mounts_and_drives, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fact10_fact11c_fs_host_shares_mount_points, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_offline_disk, setup, teardown),
        cmocka_unit_test(test_fixture_errors),
        cmocka_unit_test(test_repository_fixture_loads),
        cmocka_unit_test(test_overlap_detected_parallel_allowed),
        cmocka_unit_test(test_volume_arrival_delay),
    };
    return cmocka_run_group_tests_name("storage_sim", tests, NULL, NULL);
}
