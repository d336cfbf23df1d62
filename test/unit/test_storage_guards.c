/* test_storage_guards.c - the disk and volume groups' guards for data
 * that would otherwise be lost or left unwritable, through the real
 * dispatch path on the storage simulator:
 *   - a disk that comes back with DISK_ATTRIBUTE_READ_ONLY is made
 *     writable by SetDiskState(online) and by PartitionDisk, and the call
 *     says so for its audit record; media write-protected at the hardware
 *     is FAILED_PRECONDITION naming the disk, nothing changed;
 *   - FormatVolume refuses a volume whose first bytes carry a file system
 *     Windows does not mount (host/fssig.h), naming it, unless
 *     groups.volume.formatForeignFilesystems; IsVolumeFormatted keeps
 *     upstream's answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/unit/group_call.h"
#include "test/unit/group_env.h"

/* Real signature bytes at their offsets (see test_fssig for each format). */
static const char fixture[] =
    "disks:\n"
    "  - {number: 0, size: 64GiB, boot: true, system: true, style: gpt,"
    " partitions: [{size: 100MiB, type: esp}, {size: 60GiB, volume: {guid:"
    " '{0b0b0b0b-0000-4000-8000-000000000003}', fs: NTFS, drive: C}}]}\n"
    /* reattached offline and read-only, with its volume */
    "  - {number: 1, size: 4GiB, online: false, read_only: true, style: gpt,"
    " partitions: [{size: 1GiB, volume: {guid: '{11111111-0001-4000-8000-000000000001}'}}]}\n"
    /* write-protected media, offline */
    "  - {number: 2, size: 4GiB, online: false, write_protected: true}\n"
    /* a RAW disk online with the read-only attribute */
    "  - {number: 3, size: 4GiB, read_only: true}\n"
    /* volumes Windows reads as RAW */
    "  - {number: 4, size: 8GiB, style: gpt, partitions: [\n"
    "     {size: 512MiB, volume: {guid: '{44444444-0004-4000-8000-000000000001}',"
    "      bytes: ['1048:02000000', '1080:53ef01']}},\n"
    "     {size: 512MiB, volume: {guid: '{44444444-0004-4000-8000-000000000002}',"
    "      bytes: ['0:5846534200001000']}},\n"
    "     {size: 512MiB, volume: {guid: '{44444444-0004-4000-8000-000000000003}',"
    "      bytes: ['0:4c554b53babe0002']}},\n"
    "     {size: 512MiB, volume: {guid: '{44444444-0004-4000-8000-000000000004}',"
    "      bytes: ['512:4546492050415254']}},\n"
    "     {size: 512MiB, volume: {guid: '{44444444-0004-4000-8000-000000000005}',"
    "      bytes: ['1081:53ef']}},\n"
    "     {size: 512MiB, volume: {guid: '{44444444-0004-4000-8000-000000000006}',"
    "      fs: NTFS, bytes: ['65600:5f42485266535f4d']}}]}\n";

#define VOL4(n) "\\\\?\\Volume{44444444-0004-4000-8000-00000000000" #n "}\\"
#define VOL1 "\\\\?\\Volume{11111111-0001-4000-8000-000000000001}\\"

typedef genv env;

static int make_env(void **state, bool foreign)
{
    genv_opts o = {.tag = "guards",
                   .storage_yaml = fixture,
                   .cfg = {.volume = {.format_foreign_filesystems = foreign}}};
    return genv_open(&o, (genv **)state);
}

static int setup(void **state)
{
    return make_env(state, false);
}

static int setup_foreign_allowed(void **state)
{
    return make_env(state, true);
}

static int teardown(void **state)
{
    return genv_close(*state);
}

typedef struct result {
    int status;
    char msg[CP_ERROR_MSG_MAX];
    char note[512];
    bool flag; /* the response's bool (is_online, formatted) */
    size_t n;  /* the response's repeated count (volume_ids) */
} result;

/* A v1 call with one field (uint32 or string) and an optional bool. */
static result call(const env *t, const char *group, const char *method, const char *field,
                   const char *value, const char *bfield, bool bval)
{
    const cp_service *svc = gcall_service(t->groups, group, "v1");
    ProtobufCMessage *req = gcall_request(svc, method);
    gcall_set(req, field, value);
    if (bfield != NULL)
        gcall_set(req, bfield, bval ? "true" : "false");
    gcall_reply g = gcall_run(svc, method, req);
    free(req);
    result r = {.status = g.status};
    snprintf(r.msg, sizeof(r.msg), "%s", g.msg);
    snprintf(r.note, sizeof(r.note), "%s", g.note);
    for (unsigned i = 0; g.resp != NULL && i < g.resp->descriptor->n_fields; i++) {
        const ProtobufCFieldDescriptor *rf = &g.resp->descriptor->fields[i];
        if (rf->type == PROTOBUF_C_TYPE_BOOL && rf->label != PROTOBUF_C_LABEL_REPEATED)
            r.flag = *(const protobuf_c_boolean *)((const char *)g.resp + rf->offset);
        if (rf->label == PROTOBUF_C_LABEL_REPEATED)
            r.n = *(const size_t *)((const char *)g.resp + rf->quantifier_offset);
    }
    gcall_reply_free(&g);
    return r;
}

static result expect(result r, int status, const char *in_msg)
{
    gcall_check(r.status, r.msg, status, in_msg);
    return r;
}

static result set_state(const env *t, const char *disk, bool online)
{
    return call(t, "disk", "SetDiskState", "disk_number", disk, "is_online", online);
}

/* --- read-only disks ---------------------------------------------------- */

static void test_online_clears_read_only(void **state)
{
    env *t = *state;
    /* before: a write to it fails as Windows' does */
    expect(call(t, "volume", "FormatVolume", "volume_id", VOL1, NULL, false), CP_E_NOT_FOUND,
           NULL); /* offline: its volume is not there */
    result r = expect(set_state(t, "1", true), CP_OK, NULL);
    if (strstr(r.note, "cleared the read-only attribute (DISK_ATTRIBUTE_READ_ONLY) of disk 1") ==
        NULL)
        fail_msg("SetDiskState does not say it cleared the attribute: \"%s\"", r.note);
    assert_true(
        expect(call(t, "disk", "GetDiskState", "disk_number", "1", NULL, false), CP_OK, NULL).flag);
    /* writable: its volume formats */
    expect(call(t, "volume", "FormatVolume", "volume_id", VOL1, NULL, false), CP_OK, NULL);
    /* again: nothing left to clear, nothing noted */
    r = expect(set_state(t, "1", true), CP_OK, NULL);
    assert_string_equal(r.note, "");
}

static void test_partition_clears_read_only(void **state)
{
    env *t = *state;
    result r =
        expect(call(t, "disk", "PartitionDisk", "disk_number", "3", NULL, false), CP_OK, NULL);
    if (strstr(r.note, "cleared the read-only attribute (DISK_ATTRIBUTE_READ_ONLY) of disk 3") ==
        NULL)
        fail_msg("PartitionDisk does not say it cleared the attribute: \"%s\"", r.note);
    assert_int_equal(
        expect(call(t, "volume", "ListVolumesOnDisk", "disk_number", "3", NULL, false), CP_OK, NULL)
            .n,
        1);
    r = expect(call(t, "disk", "PartitionDisk", "disk_number", "3", NULL, false), CP_OK, NULL);
    assert_string_equal(r.note, "");
}

static void test_write_protected_media_refused(void **state)
{
    env *t = *state;
    const char *want = "disk 2 is write-protected at the hardware (the media is write protected)";
    expect(set_state(t, "2", true), CP_E_FAILED_PRECONDITION, want);
    expect(call(t, "disk", "PartitionDisk", "disk_number", "2", NULL, false),
           CP_E_FAILED_PRECONDITION, want);
    /* nothing changed: still offline */
    assert_false(
        expect(call(t, "disk", "GetDiskState", "disk_number", "2", NULL, false), CP_OK, NULL).flag);
    /* taking it offline is not a write */
    expect(set_state(t, "2", false), CP_OK, NULL);
}

/* --- foreign file systems ----------------------------------------------- */

static void test_format_refuses_foreign(void **state)
{
    env *t = *state;
    static const struct {
        const char *id, *sig;
    } cases[] = {
        {VOL4(1), "ext2/3/4 (superblock magic 0xEF53 at byte 1080)"},
        {VOL4(2), "XFS"},
        {VOL4(3), "LUKS"},
        {VOL4(4), "GPT partition table"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* upstream's answer stays: Windows sees no file system */
        assert_false(
            expect(call(t, "volume", "IsVolumeFormatted", "volume_id", cases[i].id, NULL, false),
                   CP_OK, NULL)
                .flag);
        result r = expect(call(t, "volume", "FormatVolume", "volume_id", cases[i].id, NULL, false),
                          CP_E_FAILED_PRECONDITION, cases[i].sig);
        if (strstr(r.msg, cases[i].id) == NULL || strstr(r.msg, "refusing to format") == NULL ||
            strstr(r.msg, "formatForeignFilesystems") == NULL)
            fail_msg("the refusal names neither the volume nor the way out: %s", r.msg);
        assert_false(
            expect(call(t, "volume", "IsVolumeFormatted", "volume_id", cases[i].id, NULL, false),
                   CP_OK, NULL)
                .flag);
    }
    /* the ext magic one byte off is no file system: formatted */
    expect(call(t, "volume", "FormatVolume", "volume_id", VOL4(5), NULL, false), CP_OK, NULL);
    /* a volume Windows mounts is not foreign, whatever stale bytes it has */
    expect(call(t, "volume", "FormatVolume", "volume_id", VOL4(6), NULL, false), CP_OK, NULL);
}

static void test_format_foreign_when_allowed(void **state)
{
    env *t = *state;
    expect(call(t, "volume", "FormatVolume", "volume_id", VOL4(1), NULL, false), CP_OK, NULL);
    assert_true(expect(call(t, "volume", "IsVolumeFormatted", "volume_id", VOL4(1), NULL, false),
                       CP_OK, NULL)
                    .flag);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_online_clears_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partition_clears_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_protected_media_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_format_refuses_foreign, setup, teardown),
        cmocka_unit_test_setup_teardown(test_format_foreign_when_allowed, setup_foreign_allowed,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
