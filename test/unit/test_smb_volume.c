/* test_smb_volume.c - SMB shares in the volume group (groups/volume/smbvol.h,
 * groups/common/smblink.h): GetVolumeIDFromTargetPath of a confined link
 * chain that ends at an SMB global mapping, GetVolumeStats of the share's
 * ID, the disk calls refusing it, groups.smb.volumeStats: false,
 * CreateSymlink from such a link, and the pieces under them (the ID's
 * form, the POSIX host's read_link, the smb simulator's share sizes).
 * The groups run on the POSIX file-system host, the storage simulator and
 * the smb simulator; the handlers are called directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dispatch/call.h"
#include "groups/filesystem/filesystem.h"
#include "groups/groups.h"
#include "groups/volume/smbvol.h"
#include "groups/volume/volume.h"
#include "sim/smb_sim.h"
#include "sim/storage_sim.h"
#include "test/unit/group_call.h"
#include "test/unit/group_env.h"

#define K "C:\\var\\lib\\kubelet"
#define STG K "\\plugins\\smb\\pv1\\globalmount"
#define POD K "\\pods\\p1\\volumes\\pv1\\mount"
#define ID "\\\\?\\UNC\\files.example\\data\\"
#define TIB 1099511627776LL
#define GIB 1073741824LL

static const char storage[] = "disks:\n  - {number: 1, size: 10GiB}\n";
static const char smb[] = "smb:\n"
                          "  servers:\n"
                          "    - {name: files.example, total: 2TiB, free: 1536GiB}\n"
                          "    - {name: down.example, reachable: false}\n"
                          "    - {name: plain.example}\n"
                          "  mappings:\n"
                          "    - {remote: '\\\\down.example\\vol', username: 'CORP\\u'}\n";

typedef genv env;

static int make_env(void **state, bool stats_off)
{
    static const char *const dirs[] = {K "\\plugins\\smb\\pv1", K "\\pods\\p1\\volumes\\pv1",
                                       "C:\\outside", NULL};
    genv_opts o = {.tag = "smbvol-test",
                   .storage_yaml = storage,
                   .smb_yaml = smb,
                   .dirs = dirs,
                   .cfg = {.smb = {.volume_stats_off = stats_off}}};
    return genv_open(&o, (genv **)state);
}

static int setup(void **state)
{
    return make_env(state, false);
}

static int setup_off(void **state)
{
    return make_env(state, true);
}

static int teardown(void **state)
{
    return genv_close(*state);
}

static void *ctx_of(const env *t, const char *group)
{
    return gcall_service(t->groups, group, "v1")->ctx;
}

typedef int (*handler)(cp_call *, const void *, void *);

typedef struct result {
    int status;
    char msg[CP_ERROR_MSG_MAX];
    cp_volume_response r;
    char id[256];
} result;

/* One volume-group call: method names the RPC in messages. */
static result vcall(const env *t, const char *method, handler h, const char *volume_id,
                    const char *target)
{
    char full[128];
    snprintf(full, sizeof(full), "/v1.Volume/%s", method);
    cp_call *c = cp_call_new(ctx_of(t, "volume"), full, 0);
    assert_non_null(c);
    cp_volume_request q = {.volume_id = volume_id, .target_path = target};
    result out = {0};
    out.status = h(c, &q, &out.r);
    snprintf(out.msg, sizeof(out.msg), "%s", out.status == CP_OK ? "" : cp_call_error(c)->msg);
    if (out.status == CP_OK && out.r.volume_id != NULL)
        snprintf(out.id, sizeof(out.id), "%s", out.r.volume_id);
    out.r.volume_id = NULL;
    cp_call_free(c);
    return out;
}

static void expect(result r, int status, const char *sub)
{
    gcall_check(r.status, r.msg, status, sub);
}

/* What NewSmbGlobalMapping leaves: the root mapped, LocalPath a directory
 * link to the remote path; and the pod path a link to the staging link. */
static void map_and_link(env *t, const char *root, const char *remote)
{
    cp_error e;
    if (root != NULL)
        assert_int_equal(t->smb.ops->map(t->smb.ctx, root, "CORP\\u", "pw", true, &e), CP_OK);
    assert_int_equal(t->fs.ops->symlink(t->fs.ctx, STG, remote, CP_FS_LINK_DIR, NULL, &e), CP_OK);
    assert_int_equal(t->fs.ops->symlink(t->fs.ctx, POD, STG, CP_FS_LINK_AUTO, NULL, &e), CP_OK);
}

static void test_share_id_and_stats(void **state)
{
    env *t = *state;
    map_and_link(t, "\\\\files.example\\data", "\\\\Files.Example\\Data\\pvc-1\\");
    result r = vcall(t, "GetVolumeIDFromTargetPath", cp_volume_handle_id_from_target, "", POD);
    expect(r, CP_OK, NULL);
    assert_string_equal(r.id, ID);
    r = vcall(t, "GetVolumeIDFromTargetPath", cp_volume_handle_id_from_target, "", STG);
    expect(r, CP_OK, NULL);
    assert_string_equal(r.id, ID);
    /* a raw kubelet path without its drive, and the legacy name */
    r = vcall(t, "GetVolumeIDFromMount", cp_volume_handle_id_from_target, "",
              "\\var\\lib\\kubelet\\pods\\p1\\volumes\\pv1\\mount");
    expect(r, CP_OK, NULL);
    assert_string_equal(r.id, ID);
    r = vcall(t, "GetVolumeStats", cp_volume_handle_stats, ID, "");
    expect(r, CP_OK, NULL);
    assert_int_equal(r.r.total_bytes, 2 * TIB);
    assert_int_equal(r.r.used_bytes, 2 * TIB - 1536 * GIB);
    r = vcall(t, "VolumeStats", cp_volume_handle_stats, "\\\\?\\unc\\FILES.example\\Data\\", "");
    expect(r, CP_OK, NULL);
    assert_int_equal(r.r.total_bytes, 2 * TIB);
}

static void test_disk_calls_refuse_the_share_id(void **state)
{
    env *t = *state;
    map_and_link(t, "\\\\files.example\\data", "\\\\files.example\\data\\pvc-1\\");
    static const struct {
        const char *method;
        handler h;
    } calls[] = {
        {"GetDiskNumberFromVolumeID", cp_volume_handle_disk_number},
        {"IsVolumeFormatted", cp_volume_handle_is_formatted},
        {"FormatVolume", cp_volume_handle_format},
        {"ResizeVolume", cp_volume_handle_resize},
        {"MountVolume", cp_volume_handle_mount},
        {"UnmountVolume", cp_volume_handle_unmount},
        {"WriteVolumeCache", cp_volume_handle_flush},
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        result r = vcall(t, calls[i].method, calls[i].h, ID, STG);
        expect(r, CP_E_INVALID_ARGUMENT, "names the SMB share \\\\files.example\\data");
        assert_non_null(strstr(r.msg, calls[i].method));
        assert_non_null(strstr(r.msg, ID));
        assert_non_null(strstr(r.msg, "only GetVolumeStats takes it"));
    }
}

static void test_unmapped_and_unreachable(void **state)
{
    env *t = *state;
    cp_error e;
    map_and_link(t, NULL, "\\\\files.example\\data\\pvc-1\\"); /* never mapped */
    result r = vcall(t, "GetVolumeIDFromTargetPath", cp_volume_handle_id_from_target, "", POD);
    expect(r, CP_E_FAILED_PRECONDITION, "\\\\files.example\\data is not an SMB global mapping");
    assert_non_null(
        strstr(r.msg, "(Get-Item -Path $Env:mountpath).Target, output: , error: <nil>"));
    expect(vcall(t, "GetVolumeStats", cp_volume_handle_stats, ID, ""), CP_E_NOT_FOUND,
           "\\\\files.example\\data is not an SMB global mapping");
    /* mapped at start, the server no longer answers */
    assert_int_equal(t->fs.ops->remove(t->fs.ctx, STG, false, NULL, &e), CP_OK);
    assert_int_equal(
        t->fs.ops->symlink(t->fs.ctx, STG, "\\\\down.example\\vol\\x\\", CP_FS_LINK_DIR, NULL, &e),
        CP_OK);
    expect(vcall(t, "GetVolumeIDFromTargetPath", cp_volume_handle_id_from_target, "", POD),
           CP_E_UNAVAILABLE, "does not answer");
    expect(
        vcall(t, "GetVolumeStats", cp_volume_handle_stats, "\\\\?\\UNC\\down.example\\vol\\", ""),
        CP_E_UNAVAILABLE, "\\\\down.example\\vol");
}

static void test_links_that_lead_elsewhere(void **state)
{
    env *t = *state;
    cp_error e;
    /* a local link out of the roots on the way: refused, not followed */
    assert_int_equal(t->fs.ops->symlink(t->fs.ctx, STG, "C:\\outside", CP_FS_LINK_DIR, NULL, &e),
                     CP_OK);
    assert_int_equal(t->fs.ops->symlink(t->fs.ctx, POD, STG, CP_FS_LINK_AUTO, NULL, &e), CP_OK);
    result r = vcall(t, "GetVolumeIDFromTargetPath", cp_volume_handle_id_from_target, "", POD);
    assert_int_not_equal(r.status, CP_OK);
    /* a UNC path with no share */
    assert_int_equal(t->fs.ops->remove(t->fs.ctx, STG, false, NULL, &e), CP_OK);
    assert_int_equal(
        t->fs.ops->symlink(t->fs.ctx, STG, "\\\\files.example", CP_FS_LINK_DIR, NULL, &e), CP_OK);
    expect(vcall(t, "GetVolumeIDFromTargetPath", cp_volume_handle_id_from_target, "", POD),
           CP_E_INVALID_ARGUMENT, "names no share");
    /* a plain directory stays "not a mounted folder" (EBS's regex text) */
    expect(
        vcall(t, "GetVolumeIDFromTargetPath", cp_volume_handle_id_from_target, "", K "\\pods\\p1"),
        CP_E_FAILED_PRECONDITION, "not a mounted folder (cmd: (Get-Item -Path");
}

static void test_create_symlink_from_a_share_link(void **state)
{
    env *t = *state;
    cp_error e;
    assert_int_equal(
        t->smb.ops->map(t->smb.ctx, "\\\\files.example\\data", "CORP\\u", "pw", true, &e), CP_OK);
    assert_int_equal(t->fs.ops->symlink(t->fs.ctx, STG, "\\\\files.example\\data\\pvc-1\\",
                                        CP_FS_LINK_DIR, NULL, &e),
                     CP_OK);
    cp_call *c = cp_call_new(ctx_of(t, "filesystem"), "/v1.Filesystem/CreateSymlink", 0);
    assert_non_null(c);
    cp_fs_request q = {.path = "", .source_path = STG, .target_path = POD};
    cp_fs_response r = {0};
    int rc = cp_fs_handle_create_symlink(c, &q, &r);
    if (rc != CP_OK)
        fail_msg("CreateSymlink: %s", cp_call_error(c)->msg);
    cp_call_free(c);
    char text[512];
    assert_int_equal(t->fs.ops->read_link(t->fs.ctx, POD, text, sizeof(text), &e), CP_OK);
    assert_string_equal(text, STG); /* the new link stores the staging path */
    /* unmapped: the source leads outside the roots again and is refused */
    assert_int_equal(t->fs.ops->remove(t->fs.ctx, POD, false, NULL, &e), CP_OK);
    assert_int_equal(t->smb.ops->unmap(t->smb.ctx, "\\\\files.example\\data", &e), CP_OK);
    c = cp_call_new(ctx_of(t, "filesystem"), "/v1.Filesystem/CreateSymlink", 0);
    assert_non_null(c);
    assert_int_not_equal(cp_fs_handle_create_symlink(c, &q, &r), CP_OK);
    cp_call_free(c);
    bool exists = true;
    assert_int_equal(t->fs.ops->exists(t->fs.ctx, POD, &exists, &e), CP_OK);
    assert_false(exists);
}

static void test_stats_off(void **state)
{
    env *t = *state;
    map_and_link(t, "\\\\files.example\\data", "\\\\files.example\\data\\pvc-1\\");
    expect(vcall(t, "GetVolumeIDFromTargetPath", cp_volume_handle_id_from_target, "", POD),
           CP_E_FAILED_PRECONDITION, "not a mounted folder");
    expect(vcall(t, "GetVolumeStats", cp_volume_handle_stats, ID, ""), CP_E_INVALID_ARGUMENT,
           "SMB volume stats are off: groups.smb.volumeStats");
}

static void test_id_form(void **state)
{
    (void)state;
    char root[64], id[64];
    assert_true(cp_smbvol_parse(ID, root, sizeof(root)));
    assert_string_equal(root, "\\\\files.example\\data");
    assert_true(cp_smbvol_id(root, id, sizeof(id)));
    assert_string_equal(id, ID);
    static const char *const bad[] = {
        "\\\\?\\UNC\\files.example\\data",      /* no trailing backslash */
        "\\\\?\\UNC\\files.example\\data\\x\\", /* a sub-path */
        "\\\\?\\UNC\\\\data\\",                 /* no server */
        "\\\\?\\UNC\\files.example\\\\",        /* no share */
        "\\\\?\\Volume{11111111-0011-4000-8000-000000000001}\\",
        "\\\\files.example\\data\\",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cp_smbvol_parse(bad[i], root, sizeof(root)))
            fail_msg("accepted %s", bad[i]);
    assert_false(cp_smbvol_parse(ID, root, 10)); /* does not fit */
}

static void test_posix_read_link(void **state)
{
    env *t = *state;
    cp_error e;
    char text[512];
    assert_int_equal(t->fs.ops->read_link(t->fs.ctx, K "\\pods", text, sizeof(text), &e),
                     CP_E_FAILED_PRECONDITION);
    assert_int_equal(t->fs.ops->read_link(t->fs.ctx, K "\\none", text, sizeof(text), &e),
                     CP_E_NOT_FOUND);
    assert_int_equal(t->fs.ops->symlink(t->fs.ctx, STG, "\\\\s\\sh\\x\\", CP_FS_LINK_DIR, NULL, &e),
                     CP_OK);
    assert_int_equal(t->fs.ops->read_link(t->fs.ctx, STG, text, sizeof(text), &e), CP_OK);
    assert_string_equal(text, "\\\\s\\sh\\x\\");
}

static void test_sim_share_sizes(void **state)
{
    (void)state;
    cp_smb_host h;
    cp_error e;
    uint64_t total = 0, free_bytes = 0;
    assert_int_equal(cp_smb_sim_new_from_string("smb:\n  servers: [{name: a}]\n", &h, &e), CP_OK);
    assert_int_equal(h.ops->space(h.ctx, "\\\\a\\s", &total, &free_bytes, &e), CP_OK);
    assert_int_equal(total, 100 * GIB); /* the defaults */
    assert_int_equal(free_bytes, 60 * GIB);
    assert_int_equal(h.ops->space(h.ctx, "\\\\b\\s", &total, &free_bytes, &e), CP_E_UNAVAILABLE);
    h.ops->destroy(h.ctx);
    assert_int_equal(cp_smb_sim_new_from_string(
                         "smb:\n  servers: [{name: a, total: 1GiB, free: 2GiB}]\n", &h, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "smb.servers[0].free: more than the share's total"));
    assert_int_equal(cp_smb_sim_new_from_string("smb:\n  servers: [{name: a, total: 0}]\n", &h, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "smb.servers[0].total: 0 is out of range"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_share_id_and_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_calls_refuse_the_share_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unmapped_and_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_links_that_lead_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_symlink_from_a_share_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_off, setup_off, teardown),
        cmocka_unit_test(test_id_form),
        cmocka_unit_test_setup_teardown(test_posix_read_link, setup, teardown),
        cmocka_unit_test(test_sim_share_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
