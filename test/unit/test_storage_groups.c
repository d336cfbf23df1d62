/* test_storage_groups.c - the disk and volume groups through the real
 * dispatch path: encoded protobuf requests of every version -> version
 * table -> converters -> group logic -> the storage simulator (and the
 * POSIX file-system host for mount directories) -> encoded responses.
 * Also the 11 tables themselves, the legacy conversions (string disk IDs,
 * string map keys, identifiers maps, int64 disk numbers, "Forward to ...
 * failed" errors), the safety rules, and per-disk serialization. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>

#include "groups/catalog.h"
#include "groups/disk/disk.h"
#include "groups/groups.h"
#include "groups/volume/volume.h"
#include "dispatch/dispatch.h"
#include "base/thread.h"
#include "sim/storage_sim.h"
#include "test/unit/group_call.h"
#include "test/unit/group_env.h"

#define K "C:\\var\\lib\\kubelet"
#define GIB 1073741824LL
#define MIB 1048576LL

static const char fixture[] =
    "disks:\n"
    "  - {number: 0, size: 64GiB, boot: true, system: true, style: gpt, serial: BOOT,"
    " page83: [{code_set: binary, type: naa, hex: '600224800000000b'}],"
    " scsi: {port: 0, path: 0, target: 0, lun: 0},"
    " partitions: [{size: 100MiB, type: esp}, {size: 60GiB, volume: {guid:"
    " '{0b0b0b0b-0000-4000-8000-000000000003}', fs: NTFS, used: 20GiB, drive: C}}]}\n"
    "  - {number: 1, size: 10GiB, grow_to: 12GiB, serial: '  DATA1  ',"
    " page83: [{code_set: binary, type: naa, hex: '60022480aa000001'}],"
    " scsi: {port: 1, path: 0, target: 0, lun: 1}}\n"
    "  - {number: 2, size: 10GiB, serial: DATA2,"
    " page83: [{code_set: ascii, type: scsi_name_string, ascii: 'eui.0a1b2c3d00000002'}],"
    " location: 'PCI Slot 2 : Adapter 5 : Port 0 : Target 0 : LUN 0'}\n"
    "  - {number: 3, size: 8GiB, style: gpt, serial: STAGED,"
    " partitions: [{size: 2GiB, volume: {guid: '{33333333-0003-4000-8000-000000000001}',"
    " fs: ReFS, used: 512MiB}}]}\n"
    "  - {number: 4, size: 4GiB, online: false, serial: OFF4}\n"
    "  - {number: 5, size: 10GiB}\n"
    "  - {number: 6, size: 10GiB}\n"
    "  - {number: 7, size: 10GiB}\n"
    "  - {number: 8, size: 10GiB}\n";

#define STAGED "\\\\?\\Volume{33333333-0003-4000-8000-000000000001}\\"
#define BOOTVOL "\\\\?\\Volume{0b0b0b0b-0000-4000-8000-000000000003}\\"
#define NEWVOL(d) "\\\\?\\Volume{5157d15c-000" #d "-4000-8000-000000000001}\\"

typedef genv env;

static int make_env(void **state, const char *yaml)
{
    static const char *const dirs[] = {K "\\m0", K "\\m1", K "\\m2", K "\\m3", K "\\m4", K "\\m5",
                                       K "\\m6", K "\\m7", K "\\m8", K "\\m9", NULL};
    genv_opts o = {.tag = "storage-test", .storage_yaml = yaml, .mount_points = true, .dirs = dirs};
    return genv_open(&o, (genv **)state);
}

static int setup(void **state)
{
    return make_env(state, fixture);
}

static int teardown(void **state)
{
    return genv_close(*state);
}

/* --- calling through dispatch, fields by name ----------------------------- */

static const cp_service *service(const env *t, const char *group, const char *version)
{
    return gcall_service(t->groups, group, version);
}

/* Prints a message compactly: {name:value,...}; maps as {key:value}. */
static void print_msg(const ProtobufCMessage *m, char *out, size_t len);

static void print_value(const ProtobufCFieldDescriptor *f, const void *p, char *out, size_t len)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
        snprintf(out, len, "\"%s\"", *(char *const *)p);
        break;
    case PROTOBUF_C_TYPE_UINT32:
        snprintf(out, len, "%u", *(const uint32_t *)p);
        break;
    case PROTOBUF_C_TYPE_INT64:
        snprintf(out, len, "%lld", (long long)*(const int64_t *)p);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        snprintf(out, len, "%s", *(const protobuf_c_boolean *)p ? "true" : "false");
        break;
    case PROTOBUF_C_TYPE_MESSAGE:
        print_msg(*(ProtobufCMessage *const *)p, out, len);
        break;
    default:
        snprintf(out, len, "?");
    }
}

static void print_msg(const ProtobufCMessage *m, char *out, size_t len)
{
    size_t pos = 0;
    pos += (size_t)snprintf(out + pos, len - pos, "{");
    for (unsigned i = 0; m != NULL && i < m->descriptor->n_fields && pos < len; i++) {
        const ProtobufCFieldDescriptor *f = &m->descriptor->fields[i];
        const char *at = (const char *)m + f->offset;
        char v[4096];
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
            void *const *arr = *(void *const *const *)at;
            pos += (size_t)snprintf(out + pos, len - pos, "%s%s:[", i ? "," : "", f->name);
            for (size_t k = 0; k < n && pos < len; k++) {
                if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
                    /* a map entry: key:value */
                    const ProtobufCMessage *en = arr[k];
                    const ProtobufCFieldDescriptor *kf = &en->descriptor->fields[0];
                    const ProtobufCFieldDescriptor *vf = &en->descriptor->fields[1];
                    char kv[64];
                    print_value(kf, (const char *)en + kf->offset, kv, sizeof(kv));
                    print_value(vf, (const char *)en + vf->offset, v, sizeof(v));
                    pos += (size_t)snprintf(out + pos, len - pos, "%s%s:%s", k ? "," : "", kv, v);
                } else {
                    print_value(f, &arr[k], v, sizeof(v));
                    pos += (size_t)snprintf(out + pos, len - pos, "%s%s", k ? "," : "", v);
                }
            }
            pos += (size_t)snprintf(out + pos, len - pos, "]");
            continue;
        }
        print_value(f, at, v, sizeof(v));
        pos += (size_t)snprintf(out + pos, len - pos, "%s%s:%s", i ? "," : "", f->name, v);
    }
    if (pos < len)
        snprintf(out + pos, len - pos, "}");
}

typedef struct result {
    int status;
    char msg[CP_ERROR_MSG_MAX];
    char resp[8192];
} result;

/* call(t, group, version, method, "field", "value", ..., NULL) */
static result call(const env *t, const char *group, const char *version, const char *method, ...)
{
    const cp_service *svc = service(t, group, version);
    ProtobufCMessage *req = gcall_request(svc, method);
    va_list ap;
    va_start(ap, method);
    for (const char *f = va_arg(ap, const char *); f != NULL; f = va_arg(ap, const char *))
        gcall_set(req, f, va_arg(ap, const char *));
    va_end(ap);
    gcall_reply g = gcall_run(svc, method, req);
    free(req);
    result r = {.status = g.status};
    snprintf(r.msg, sizeof(r.msg), "%s", g.msg);
    if (g.resp != NULL)
        print_msg(g.resp, r.resp, sizeof(r.resp));
    gcall_reply_free(&g);
    return r;
}

#define OK(r) expect_status(r, CP_OK, NULL)

static result expect_status(result r, int status, const char *in_msg)
{
    gcall_check(r.status, r.msg, status, in_msg);
    return r;
}

static void expect_resp(result r, const char *want)
{
    if (r.status != CP_OK)
        fail_msg("expected OK, got %s: %s", cp_status_name(r.status), r.msg);
    if (strstr(r.resp, want) == NULL)
        fail_msg("response lacks %s: %s", want, r.resp);
}

static const char *const disk_versions[] = {"v1alpha1", "v1beta1", "v1beta2", "v1beta3", "v1"};
static const char *const volume_versions[] = {"v1alpha1", "v1beta1", "v1beta2",
                                              "v1beta3",  "v1",      "v2alpha1"};

static bool old_version(const char *v)
{
    return strcmp(v, "v1alpha1") == 0 || strcmp(v, "v1beta1") == 0 || strcmp(v, "v1beta2") == 0;
}

/* --- tables ---------------------------------------------------------------- */

static void test_tables(void **state)
{
    env *t = *state;
    size_t disk_rpcs = 0, volume_rpcs = 0;
    char err[256];
    for (size_t i = 0; i < cp_groups_count(t->groups); i++) {
        const cp_service *s = cp_groups_service(t->groups, i);
        const cp_service_def *d = s->def;
        bool disk = strcmp(d->group, "disk") == 0, vol = strcmp(d->group, "volume") == 0;
        if (!disk && !vol)
            continue;
        assert_int_equal(cp_service_check(d, err, sizeof(err)), 0);
        /* every RPC the proto declares, in the proto's order */
        assert_int_equal(d->n_methods, d->svc_desc->n_methods);
        for (size_t j = 0; j < d->n_methods; j++) {
            const cp_method *m = &d->methods[j];
            assert_string_equal(m->name, d->svc_desc->methods[j].name);
            assert_ptr_equal(m->req_desc, d->svc_desc->methods[j].input);
            assert_ptr_equal(m->resp_desc, d->svc_desc->methods[j].output);
            static const char *const mutating[] = {
                "PartitionDisk", "Rescan",          "SetDiskState",   "SetAttachState",
                "MountVolume",   "UnmountVolume",   "DismountVolume", "FormatVolume",
                "ResizeVolume",  "WriteVolumeCache"};
            bool mut = false;
            for (size_t k = 0; k < sizeof(mutating) / sizeof(mutating[0]); k++)
                mut = mut || strcmp(m->name, mutating[k]) == 0;
            assert_int_equal((m->flags & CP_METHOD_MUTATES) != 0, mut);
        }
        assert_non_null(s->ctx);
        if (disk)
            disk_rpcs += d->n_methods;
        else
            volume_rpcs += d->n_methods;
    }
    assert_int_equal(disk_rpcs, 30);
    assert_int_equal(volume_rpcs, 56);
    /* renamed legacy RPCs share their successors' handlers */
    assert_ptr_equal(cp_service_find(&cp_disk_v1beta2_def, "DiskStats", 9)->handler,
                     cp_service_find(&cp_disk_v1_def, "GetDiskStats", 12)->handler);
    assert_ptr_equal(cp_service_find(&cp_disk_v1beta2_def, "SetAttachState", 14)->handler,
                     cp_service_find(&cp_disk_v1_def, "SetDiskState", 12)->handler);
    assert_ptr_equal(cp_service_find(&cp_volume_v1beta2_def, "DismountVolume", 14)->handler,
                     cp_service_find(&cp_volume_v1_def, "UnmountVolume", 13)->handler);
    assert_ptr_equal(cp_service_find(&cp_volume_v1beta1_def, "GetVolumeIDFromMount", 20)->handler,
                     cp_service_find(&cp_volume_v1_def, "GetVolumeIDFromTargetPath", 25)->handler);
}

/* --- disk ------------------------------------------------------------------ */

static void test_list_disk_ids_every_version(void **state)
{
    env *t = *state;
    for (size_t i = 1; i < 5; i++) {
        const char *v = disk_versions[i];
        result r = call(t, "disk", v, "ListDiskIDs", NULL);
        if (old_version(v)) {
            expect_resp(r, "\"1\":{identifiers:[\"page83\":\"60022480aa000001\","
                           "\"serialNumber\":\"DATA1\"]}");
            expect_resp(r, "\"2\":{identifiers:[\"page83\":\"eui.0a1b2c3d00000002\"");
            expect_resp(r, "\"5\":{identifiers:[\"page83\":\"\",\"serialNumber\":\"\"]}");
        } else {
            expect_resp(r, "1:{page83:\"60022480aa000001\",serial_number:\"DATA1\"}");
            expect_resp(r, "2:{page83:\"eui.0a1b2c3d00000002\",serial_number:\"DATA2\"}");
        }
    }
}

static void test_list_disk_locations_every_version(void **state)
{
    env *t = *state;
    for (size_t i = 0; i < 5; i++) {
        const char *v = disk_versions[i];
        result r = call(t, "disk", v, "ListDiskLocations", NULL);
        const char *one = old_version(v) ? "\"1\":{Adapter:\"1\",Bus:\"\",Target:\"0\",LUNID:\"1\"}"
                                         : "1:{Adapter:\"1\",Bus:\"\",Target:\"0\",LUNID:\"1\"}";
        expect_resp(r, one);
        expect_resp(r, old_version(v) ? "\"2\":{Adapter:\"5\"" : "2:{Adapter:\"5\"");
        /* disks without a location are left out */
        assert_null(strstr(r.resp, old_version(v) ? "\"3\":" : ",3:"));
    }
}

static void test_disk_number_by_name(void **state)
{
    env *t = *state;
    expect_resp(call(t, "disk", "v1alpha1", "GetDiskNumberByName", "disk_name",
                     "eui.0a1b2c3d00000002", NULL),
                "disk_number:\"2\"");
    expect_status(call(t, "disk", "v1alpha1", "GetDiskNumberByName", "disk_name", "nope", NULL),
                  CP_E_NOT_FOUND, "GetDiskNumberByName: could not find disk with Page83 ID nope");
    expect_status(call(t, "disk", "v1alpha1", "GetDiskNumberByName", NULL), CP_E_INVALID_ARGUMENT,
                  "disk_name is empty");
}

static void test_partition_disk(void **state)
{
    env *t = *state;
    /* legacy string IDs */
    expect_status(call(t, "disk", "v1beta1", "PartitionDisk", "diskID", "x", NULL),
                  CP_E_INVALID_ARGUMENT,
                  "PartitionDisk: Failed to convert v1beta1.PartitionDiskRequest.DiskID to uint32: "
                  "strconv.ParseUint: parsing \"x\": invalid syntax");
    expect_status(call(t, "disk", "v1alpha1", "PartitionDisk", NULL), CP_E_INVALID_ARGUMENT,
                  "Failed to convert v1alpha1.PartitionDiskRequest.DiskID to uint32: "
                  "strconv.ParseUint: parsing \"\": invalid syntax");
    /* 2^32 + 1 would be disk 1 upstream: refused */
    expect_status(call(t, "disk", "v1beta2", "PartitionDisk", "diskID", "4294967297", NULL),
                  CP_E_INVALID_ARGUMENT, "out of range");
    expect_status(call(t, "disk", "v1", "PartitionDisk", "disk_number", "99", NULL), CP_E_NOT_FOUND,
                  "PartitionDisk: disk 99 not found");
    /* the boot disk already has its basic (C:) partition, so PartitionDisk
     * changes nothing and succeeds; it is refused only when it would change
     * the disk (test_conformance: disk 14) */
    OK(call(t, "disk", "v1", "PartitionDisk", "disk_number", "0", NULL));
    expect_resp(call(t, "volume", "v1", "ListVolumesOnDisk", "disk_number", "0", NULL),
                "volume_ids:[\"\\\\?\\Volume{0b0b0b0b-0000-4000-8000-000000000003}\\\"]");
    /* a RAW offline disk is brought online and partitioned (drivers call
     * PartitionDisk before SetDiskState) */
    OK(call(t, "disk", "v1", "PartitionDisk", "disk_number", "4", NULL));
    expect_resp(call(t, "disk", "v1", "GetDiskState", "disk_number", "4", NULL), "is_online:true");
    /* RAW -> GPT + one basic partition; again: nothing changes */
    for (size_t i = 0; i < 5; i++) {
        const char *v = disk_versions[i];
        if (old_version(v))
            OK(call(t, "disk", v, "PartitionDisk", "diskID", "1", NULL));
        else
            OK(call(t, "disk", v, "PartitionDisk", "disk_number", "1", NULL));
    }
    expect_resp(call(t, "volume", "v1", "ListVolumesOnDisk", "disk_number", "1", NULL),
                "volume_ids:[\"" NEWVOL(1) "\"]");
    /* an already partitioned disk is left as it is */
    OK(call(t, "disk", "v1", "PartitionDisk", "disk_number", "3", NULL));
    expect_resp(call(t, "volume", "v1", "ListVolumesOnDisk", "disk_number", "3", NULL),
                "volume_ids:[\"" STAGED "\"]");
}

static void test_disk_stats_and_state(void **state)
{
    env *t = *state;
    expect_resp(call(t, "disk", "v1beta1", "DiskStats", "diskID", "1", NULL),
                "diskSize:10737418240");
    expect_status(call(t, "disk", "v1beta2", "DiskStats", "diskID", "one", NULL),
                  CP_E_INVALID_ARGUMENT,
                  "DiskStats: Failed to format DiskStatsRequest.DiskID with err: "
                  "strconv.ParseUint: parsing \"one\": invalid syntax");
    expect_resp(call(t, "disk", "v1", "GetDiskStats", "disk_number", "2", NULL),
                "total_bytes:10737418240");
    expect_status(call(t, "disk", "v1beta3", "GetDiskStats", "disk_number", "42", NULL),
                  CP_E_NOT_FOUND, "GetDiskStats: disk 42 not found");

    expect_resp(call(t, "disk", "v1", "GetDiskState", "disk_number", "4", NULL), "is_online:false");
    OK(call(t, "disk", "v1", "SetDiskState", "disk_number", "4", "is_online", "true", NULL));
    OK(call(t, "disk", "v1", "SetDiskState", "disk_number", "4", "is_online", "true", NULL));
    expect_resp(call(t, "disk", "v1beta3", "GetDiskState", "disk_number", "4", NULL),
                "is_online:true");
    OK(call(t, "disk", "v1beta2", "SetAttachState", "diskID", "4", "isOnline", "false", NULL));
    expect_resp(call(t, "disk", "v1beta2", "GetAttachState", "diskID", "4", NULL),
                "isOnline:false");
    expect_status(call(t, "disk", "v1beta2", "GetAttachState", "diskID", "", NULL),
                  CP_E_INVALID_ARGUMENT, "Failed to format GetAttachStateRequest.DiskID with err");
    expect_status(call(t, "disk", "v1beta2", "SetAttachState", "diskID", "-4", NULL),
                  CP_E_INVALID_ARGUMENT, "Failed to format SetAttachStateRequest.DiskID with err");
    /* the boot disk: online is fine, offline is refused */
    OK(call(t, "disk", "v1", "SetDiskState", "disk_number", "0", "is_online", "true", NULL));
    expect_status(call(t, "disk", "v1", "SetDiskState", "disk_number", "0", NULL),
                  CP_E_FAILED_PRECONDITION, "refusing to take it offline");
    expect_status(call(t, "disk", "v1beta2", "SetAttachState", "diskID", "0", NULL),
                  CP_E_FAILED_PRECONDITION, "SetAttachState: disk 0 is the boot");
    for (size_t i = 0; i < 5; i++)
        OK(call(t, "disk", disk_versions[i], "Rescan", NULL));
}

/* --- volume ------------------------------------------------------------------ */

static void test_staging_flow_every_version(void **state)
{
    env *t = *state;
    for (size_t i = 0; i < 6; i++) {
        const char *v = volume_versions[i];
        bool old = old_version(v);
        char disk[4], dir[64];
        const uint32_t disks[] = {2, 5, 6, 7, 8, 1}; /* fresh disks, one per version */
        uint32_t dn = disks[i];
        snprintf(disk, sizeof(disk), "%u", dn);
        snprintf(dir, sizeof(dir), K "\\m%zu", i);
        OK(call(t, "disk", "v1", "PartitionDisk", "disk_number", disk, NULL));
        result r = old ? call(t, "volume", v, "ListVolumesOnDisk", "disk_id", disk, NULL)
                       : call(t, "volume", v, "ListVolumesOnDisk", "disk_number", disk,
                              "partition_number", "1", NULL);
        char id[64];
        snprintf(id, sizeof(id), "\\\\?\\Volume{5157d15c-%04x-4000-8000-000000000001}\\", dn);
        char want[128];
        snprintf(want, sizeof(want), "volume_ids:[\"%s\"]", id);
        expect_resp(r, want);
        expect_resp(call(t, "volume", v, "IsVolumeFormatted", "volume_id", id, NULL),
                    "formatted:false");
        OK(call(t, "volume", v, "FormatVolume", "volume_id", id, NULL));
        expect_resp(call(t, "volume", v, "IsVolumeFormatted", "volume_id", id, NULL),
                    "formatted:true");
        const char *pathf = old ? "path" : "target_path";
        OK(call(t, "volume", v, "MountVolume", "volume_id", id, pathf, dir, NULL));
        OK(call(t, "volume", v, "MountVolume", "volume_id", id, pathf, dir, NULL)); /* retry */
        if (strcmp(v, "v1alpha1") != 0) {
            result s = old ? call(t, "volume", v, "VolumeStats", "volume_id", id, NULL)
                           : call(t, "volume", v, "GetVolumeStats", "volume_id", id, NULL);
            expect_resp(s, old ? "volumeSize:" : "total_bytes:");
            result d =
                old ? call(t, "volume", v, "GetVolumeDiskNumber", "volume_id", id, NULL)
                    : call(t, "volume", v, "GetDiskNumberFromVolumeID", "volume_id", id, NULL);
            snprintf(want, sizeof(want), old ? "diskNumber:%u" : "disk_number:%u", dn);
            expect_resp(d, want);
            result m =
                old ? call(t, "volume", v, "GetVolumeIDFromMount", "mount", dir, NULL)
                    : call(t, "volume", v, "GetVolumeIDFromTargetPath", "target_path", dir, NULL);
            snprintf(want, sizeof(want), "volume_id:\"%s\"", id);
            expect_resp(m, want);
        }
        if (strcmp(v, "v2alpha1") == 0) {
            char below[80];
            snprintf(below, sizeof(below), "%s", dir);
            snprintf(want, sizeof(want), "volume_id:\"%s\"", id);
            expect_resp(call(t, "volume", v, "GetClosestVolumeIDFromTargetPath", "target_path",
                             below, NULL),
                        want);
            expect_resp(
                call(t, "volume", v, "GetClosestVolumeIDFromTargetPath", "target_path", K, NULL),
                "volume_id:\"" BOOTVOL "\"");
        }
        if (strcmp(v, "v1alpha1") != 0 && strcmp(v, "v1beta1") != 0)
            OK(call(t, "volume", v, "WriteVolumeCache", "volume_id", id, NULL));
        OK(call(t, "volume", v, "ResizeVolume", "volume_id", id, old ? "size" : "size_bytes", "0",
                NULL));
        const char *unmount = old ? "DismountVolume" : "UnmountVolume";
        OK(call(t, "volume", v, unmount, "volume_id", id, pathf, dir, NULL));
        OK(call(t, "volume", v, unmount, "volume_id", id, pathf, dir, NULL)); /* retry */
        if (!old)
            expect_status(
                call(t, "volume", v, "GetVolumeIDFromTargetPath", "target_path", dir, NULL),
                CP_E_FAILED_PRECONDITION, "not a mounted folder");
    }
}

static void test_resize_rules(void **state)
{
    env *t = *state;
    /* 2 GiB partition on an 8 GiB disk */
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", STAGED, NULL),
                "total_bytes:2147483648,used_bytes:536870912");
    /* less than 100 MiB more: nothing happens */
    OK(call(t, "volume", "v1", "ResizeVolume", "volume_id", STAGED, "size_bytes", "2200000000",
            NULL));
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", STAGED, NULL),
                "total_bytes:2147483648");
    /* smaller: never shrinks */
    OK(call(t, "volume", "v1", "ResizeVolume", "volume_id", STAGED, "size_bytes", "1073741824",
            NULL));
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", STAGED, NULL),
                "total_bytes:2147483648");
    /* exact growth */
    OK(call(t, "volume", "v1beta1", "ResizeVolume", "volume_id", STAGED, "size", "4294967296",
            NULL));
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", STAGED, NULL),
                "total_bytes:4294967296");
    /* too large for the disk */
    expect_status(call(t, "volume", "v1", "ResizeVolume", "volume_id", STAGED, "size_bytes",
                       "17179869184", NULL),
                  CP_E_OUT_OF_RANGE, "can grow to");
    /* 0: to the maximum (8 GiB - 1 MiB start - 1 MiB GPT backup) */
    OK(call(t, "volume", "v1", "ResizeVolume", "volume_id", STAGED, "size_bytes", "0", NULL));
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", STAGED, NULL),
                "total_bytes:8587837440");
    expect_status(
        call(t, "volume", "v1", "ResizeVolume", "volume_id", STAGED, "size_bytes", "-1", NULL),
        CP_E_INVALID_ARGUMENT, "is negative");
    expect_status(
        call(t, "volume", "v1", "ResizeVolume", "volume_id", BOOTVOL, "size_bytes", "0", NULL),
        CP_E_FAILED_PRECONDITION,
        "volume " BOOTVOL " is on disk 0, the boot and system disk: refusing to resize it");
    expect_status(call(t, "volume", "v1", "FormatVolume", "volume_id", BOOTVOL, NULL),
                  CP_E_FAILED_PRECONDITION,
                  "volume " BOOTVOL
                  " is on disk 0, the boot and system disk: refusing to format it");
    /* a disk grown in the cloud: the growth shows after Rescan */
    OK(call(t, "disk", "v1", "PartitionDisk", "disk_number", "1", NULL));
    OK(call(t, "volume", "v1", "FormatVolume", "volume_id", NEWVOL(1), NULL));
    OK(call(t, "volume", "v1", "ResizeVolume", "volume_id", NEWVOL(1), "size_bytes", "0", NULL));
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", NEWVOL(1), NULL),
                "total_bytes:10735321088");
    OK(call(t, "disk", "v1", "Rescan", NULL));
    expect_resp(call(t, "disk", "v1", "GetDiskStats", "disk_number", "1", NULL),
                "total_bytes:12884901888");
    OK(call(t, "volume", "v1", "ResizeVolume", "volume_id", NEWVOL(1), "size_bytes", "0", NULL));
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", NEWVOL(1), NULL),
                "total_bytes:12882804736");
}

static void test_volume_errors(void **state)
{
    env *t = *state;
    /* upstream's texts for empty fields */
    expect_status(call(t, "volume", "v1", "MountVolume", NULL), CP_E_INVALID_ARGUMENT,
                  "MountVolume: MountVolumeRequest.VolumeId is empty");
    expect_status(call(t, "volume", "v1", "MountVolume", "volume_id", STAGED, NULL),
                  CP_E_INVALID_ARGUMENT, "MountVolume: MountVolumeRequest.TargetPath is empty");
    expect_status(call(t, "volume", "v1", "UnmountVolume", NULL), CP_E_INVALID_ARGUMENT,
                  "UnmountVolume: volume id empty");
    expect_status(call(t, "volume", "v1", "UnmountVolume", "volume_id", STAGED, NULL),
                  CP_E_INVALID_ARGUMENT, "UnmountVolume: target path empty");
    expect_status(call(t, "volume", "v1beta2", "DismountVolume", NULL), CP_E_INVALID_ARGUMENT,
                  "DismountVolume: Forward to UnmountVolume failed, err=volume id empty");
    const char *id_rpcs[] = {
        "IsVolumeFormatted",         "FormatVolume",    "ResizeVolume", "GetVolumeStats",
        "GetDiskNumberFromVolumeID", "WriteVolumeCache"};
    for (size_t i = 0; i < 6; i++) {
        char want[128];
        snprintf(want, sizeof(want), "%s: volume id empty", id_rpcs[i]);
        expect_status(call(t, "volume", "v1", id_rpcs[i], NULL), CP_E_INVALID_ARGUMENT, want);
    }
    expect_status(call(t, "volume", "v1beta1", "VolumeStats", NULL), CP_E_INVALID_ARGUMENT,
                  "VolumeStats: Forward to GetVolumeStats failed, err=volume id empty");
    expect_status(call(t, "volume", "v1beta1", "GetVolumeDiskNumber", NULL), CP_E_INVALID_ARGUMENT,
                  "GetVolumeDiskNumber: Forward to GetDiskNumberFromVolumeID failed, err=volume id "
                  "empty");
    expect_status(call(t, "volume", "v1beta2", "GetVolumeIDFromMount", NULL), CP_E_INVALID_ARGUMENT,
                  "GetVolumeIDFromMount: Forward to GetVolumeIDFromTargetPath failed, err=target "
                  "path is empty");
    expect_status(call(t, "volume", "v1", "GetVolumeIDFromTargetPath", NULL), CP_E_INVALID_ARGUMENT,
                  "GetVolumeIDFromTargetPath: target path is empty");
    expect_status(call(t, "volume", "v2alpha1", "GetClosestVolumeIDFromTargetPath", NULL),
                  CP_E_INVALID_ARGUMENT, "target path is empty");
    /* malformed and unknown volume IDs */
    expect_status(call(t, "volume", "v1", "FormatVolume", "volume_id", "C:\\", NULL),
                  CP_E_INVALID_ARGUMENT, "is not a volume GUID path");
    expect_status(call(t, "volume", "v1", "IsVolumeFormatted", "volume_id",
                       "\\\\?\\Volume{00000000-0000-0000-0000-000000000000}\\", NULL),
                  CP_E_NOT_FOUND,
                  "volume \\\\?\\Volume{00000000-0000-0000-0000-000000000000}\\ not found");
    /* upper-case hex is the same volume */
    expect_resp(call(t, "volume", "v1", "IsVolumeFormatted", "volume_id",
                     "\\\\?\\Volume{33333333-0003-4000-8000-000000000001}\\", NULL),
                "formatted:true");
    /* legacy disk IDs */
    expect_status(call(t, "volume", "v1alpha1", "ListVolumesOnDisk", "disk_id", "1x", NULL),
                  CP_E_INVALID_ARGUMENT,
                  "ListVolumesOnDisk: Failed to parse diskId: err=strconv.ParseUint: parsing "
                  "\"1x\": invalid syntax");
    expect_status(call(t, "volume", "v1", "ListVolumesOnDisk", "disk_number", "77", NULL),
                  CP_E_NOT_FOUND, "disk 77 not found");
    /* an offline disk lists no volumes */
    expect_resp(call(t, "volume", "v1", "ListVolumesOnDisk", "disk_number", "4", NULL),
                "volume_ids:[]");
    /* path rules */
    expect_status(call(t, "volume", "v1", "MountVolume", "volume_id", STAGED, "target_path",
                       "C:\\Windows", NULL),
                  CP_E_INVALID_ARGUMENT, "is not within the working directories");
    expect_status(call(t, "volume", "v1beta1", "MountVolume", "volume_id", STAGED, "path",
                       K "-evil\\x", NULL),
                  CP_E_INVALID_ARGUMENT, "is not within the working directories");
    expect_status(call(t, "volume", "v1", "UnmountVolume", "volume_id", STAGED, "target_path",
                       K "\\..\\x", NULL),
                  CP_E_INVALID_ARGUMENT, NULL);
    expect_status(
        call(t, "volume", "v1", "GetVolumeIDFromTargetPath", "target_path", "\\\\?\\C:\\x", NULL),
        CP_E_INVALID_ARGUMENT, NULL);
    expect_status(call(t, "volume", "v2alpha1", "GetClosestVolumeIDFromTargetPath", "target_path",
                       "D:\\x", NULL),
                  CP_E_INVALID_ARGUMENT, NULL);
    /* a missing directory */
    expect_status(call(t, "volume", "v1", "MountVolume", "volume_id", STAGED, "target_path",
                       K "\\nope", NULL),
                  CP_E_NOT_FOUND, "directory " K "\\nope does not exist");
    /* a directory mounted with another volume */
    OK(call(t, "volume", "v1", "MountVolume", "volume_id", STAGED, "target_path", K "\\m9", NULL));
    OK(call(t, "disk", "v1", "PartitionDisk", "disk_number", "5", NULL));
    expect_status(call(t, "volume", "v1", "MountVolume", "volume_id", NEWVOL(5), "target_path",
                       K "\\m9", NULL),
                  CP_E_FAILED_PRECONDITION, "is already the mount point of volume " STAGED);
    expect_status(call(t, "volume", "v1", "UnmountVolume", "volume_id", NEWVOL(5), "target_path",
                       K "\\m9", NULL),
                  CP_E_FAILED_PRECONDITION, "is the mount point of volume " STAGED);
    OK(call(t, "volume", "v1", "UnmountVolume", "volume_id", STAGED, "target_path", K "\\m9\\",
            NULL));
}

/* --- per-disk serialization -------------------------------------------------- */

typedef struct job {
    env *t;
    const char *group, *method, *field, *value;
    int rc;
} job;

static void run_job(void *arg)
{
    job *j = arg;
    j->rc = call(j->t, j->group, "v1", j->method, j->field, j->value, NULL).status;
}

/* Runs the jobs at once; returns the wall time in ms. */
static int64_t run_jobs(job *jobs, size_t n)
{
    cp_thread *th[16];
    int64_t t0 = cp_now_ms();
    for (size_t i = 0; i < n; i++) {
        th[i] = cp_thread_start(run_job, &jobs[i]);
        assert_non_null(th[i]);
    }
    for (size_t i = 0; i < n; i++) {
        cp_thread_join(th[i]);
        if (jobs[i].rc != CP_OK)
            fail_msg("%s %s=%s: %s", jobs[i].method, jobs[i].field, jobs[i].value,
                     cp_status_name(jobs[i].rc));
    }
    return cp_now_ms() - t0;
}

static int slow_setup(void **state)
{
    static char yaml[sizeof(fixture) + 32];
    snprintf(yaml, sizeof(yaml), "latency_ms: 200\n%s", fixture);
    return make_env(state, yaml);
}

static void test_same_disk_serialized_others_parallel(void **state)
{
    env *t = *state;
    /* 6 disks partitioned at once (2 host operations of 200 ms each): in
     * parallel, about 400 ms; serialized it would be 2.4 s */
    job p[6];
    const char *disks[] = {"1", "2", "5", "6", "7", "8"};
    for (size_t i = 0; i < 6; i++)
        p[i] = (job){t, "disk", "PartitionDisk", "disk_number", disks[i], -1};
    int64_t ms = run_jobs(p, 6);
    assert_true(ms < 1200);
    assert_true(cp_storage_sim_max_parallel(&t->storage) >= 3);
    /* 4 formats of one volume at once: one after the other, none overlapping
     * (the simulator refuses overlapping operations on a disk) */
    job f[4];
    for (size_t i = 0; i < 4; i++)
        f[i] = (job){t, "volume", "FormatVolume", "volume_id", NEWVOL(1), -1};
    ms = run_jobs(f, 4);
    assert_true(ms >= 4 * 200 - 20);
    assert_int_equal(cp_storage_sim_overlaps(&t->storage), 0);
    /* 4 formats on 4 disks at once: in parallel */
    const char *vols[] = {NEWVOL(1), NEWVOL(2), NEWVOL(5), NEWVOL(6)};
    for (size_t i = 0; i < 4; i++)
        f[i] = (job){t, "volume", "FormatVolume", "volume_id", vols[i], -1};
    ms = run_jobs(f, 4);
    assert_true(ms < 3 * 200);
    assert_int_equal(cp_storage_sim_overlaps(&t->storage), 0);
}

/* --- volumes Windows needs -------------------------------- */

static const char needs_fixture[] =
    "disks:\n"
    "  - {number: 0, size: 64GiB, boot: true, system: true, style: gpt, partitions: ["
    "{size: 100MiB, type: esp, volume: {guid: '{0e0e0e0e-0000-4000-8000-000000000001}', fs: FAT32,"
    " roles: [system]}},"
    " {size: 30GiB, volume: {guid: '{0b0b0b0b-0000-4000-8000-000000000003}', fs: NTFS,"
    " used: 20GiB, drive: C, roles: [boot]}},"
    " {size: 10GiB, volume: {guid: '{0d0d0d0d-0000-4000-8000-000000000004}', fs: NTFS,"
    " used: 1GiB}}]}\n"
    "  - {number: 1, size: 16GiB, style: gpt, partitions: ["
    "{size: 4GiB, volume: {guid: '{0f0f0f0f-0001-4000-8000-000000000001}', fs: NTFS, used: 1GiB,"
    " drive: D, roles: [pagefile]}},"
    " {size: 4GiB, volume: {guid: '{0c0c0c0c-0001-4000-8000-000000000002}', fs: NTFS, used: 1GiB,"
    " roles: [crashdump]}}]}\n"
    "  - {number: 2, size: 8GiB, style: gpt, partitions: ["
    "{size: 2GiB, volume: {guid: '{0a0a0a0a-0002-4000-8000-000000000001}', fs: NTFS, used: 1GiB,"
    " drive: E}}]}\n"
    "  - {number: 3, size: 1GiB, system: true, style: gpt, partitions: ["
    "{size: 512MiB, volume: {guid: '{0e0e0e0e-0003-4000-8000-000000000001}', fs: NTFS,"
    " used: 1MiB}}]}\n";

#define VOL(g) "\\\\?\\Volume{" g "}\\"
#define SNAPSHOT_E VOL("0a0a0a0a-0002-4000-8000-000000000001")

static int needs_setup(void **state)
{
    return make_env(state, needs_fixture);
}

static bool has_method(const env *t, const char *version, const char *method)
{
    return cp_service_find(service(t, "volume", version)->def, method, strlen(method)) != NULL;
}

/* "volume <id> <reason>: refusing to <what>" in text; NULL when reason is
 * NULL (the call must succeed). */
static const char *refusal(char *text, size_t len, const char *id, const char *reason,
                           const char *what)
{
    if (reason == NULL)
        return NULL;
    snprintf(text, len, "volume %s %s: refusing to %s", id, reason, what);
    return text;
}

/* Every call of version v that changes volume id (dir: the mount
 * directory), each expected to answer want; a refusal names the volume and
 * the reason. */
static void every_change(const env *t, const char *v, const char *id, const char *dir, int want,
                         const char *reason)
{
    bool old = old_version(v);
    const char *pathf = old ? "path" : "target_path";
    char text[512];
    expect_status(call(t, "volume", v, "MountVolume", "volume_id", id, pathf, dir, NULL), want,
                  refusal(text, sizeof(text), id, reason, "mount it"));
    expect_status(call(t, "volume", v, old ? "DismountVolume" : "UnmountVolume", "volume_id", id,
                       pathf, dir, NULL),
                  want, refusal(text, sizeof(text), id, reason, "unmount it"));
    expect_status(call(t, "volume", v, "FormatVolume", "volume_id", id, NULL), want,
                  refusal(text, sizeof(text), id, reason, "format it"));
    expect_status(call(t, "volume", v, "ResizeVolume", "volume_id", id, old ? "size" : "size_bytes",
                       "0", NULL),
                  want, refusal(text, sizeof(text), id, reason, "resize it"));
    if (has_method(t, v, "WriteVolumeCache"))
        expect_status(call(t, "volume", v, "WriteVolumeCache", "volume_id", id, NULL), want,
                      refusal(text, sizeof(text), id, reason, "flush its cache"));
}

static void test_volumes_windows_needs(void **state)
{
    env *t = *state;
    static const struct {
        const char *id, *reason;
    } refused[] = {
        {VOL("0e0e0e0e-0000-4000-8000-000000000001"),
         "is the system volume (the boot loader's) and is on disk 0, the boot and system disk"},
        {VOL("0b0b0b0b-0000-4000-8000-000000000003"),
         "is the boot volume (it holds Windows) and is on disk 0, the boot and system disk"},
        {VOL("0d0d0d0d-0000-4000-8000-000000000004"), "is on disk 0, the boot and system disk"},
        {VOL("0f0f0f0f-0001-4000-8000-000000000001"), "holds the page file"},
        {VOL("0c0c0c0c-0001-4000-8000-000000000002"), "holds the crash dump file"},
        {VOL("0e0e0e0e-0003-4000-8000-000000000001"), "is on disk 3, the system disk"},
    };
    const char *dir = K "\\m1";
    for (size_t i = 0; i < sizeof(volume_versions) / sizeof(volume_versions[0]); i++)
        for (size_t j = 0; j < sizeof(refused) / sizeof(refused[0]); j++)
            every_change(t, volume_versions[i], refused[j].id, dir, CP_E_FAILED_PRECONDITION,
                         refused[j].reason);
    /* nothing changed: no mount point, the page-file volume as it was */
    expect_status(call(t, "volume", "v1", "GetVolumeIDFromTargetPath", "target_path", dir, NULL),
                  CP_E_FAILED_PRECONDITION, "not a mounted folder");
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", refused[3].id, NULL),
                "total_bytes:4294967296,used_bytes:1073741824");
    /* the read-only calls still answer for them */
    for (size_t j = 0; j < sizeof(refused) / sizeof(refused[0]); j++) {
        expect_resp(call(t, "volume", "v1", "IsVolumeFormatted", "volume_id", refused[j].id, NULL),
                    "formatted:true");
        OK(call(t, "volume", "v2alpha1", "GetVolumeStats", "volume_id", refused[j].id, NULL));
        OK(call(t, "volume", "v1beta1", "GetVolumeDiskNumber", "volume_id", refused[j].id, NULL));
    }
    expect_resp(call(t, "volume", "v1", "ListVolumesOnDisk", "disk_number", "1", NULL),
                "volume_ids:[\"" VOL("0f0f0f0f-0001-4000-8000-000000000001") "\",\"" VOL(
                    "0c0c0c0c-0001-4000-8000-000000000002") "\"]");
    /* a data volume Windows gave a drive letter (a restored snapshot): every
     * change works, on every version */
    for (size_t i = 0; i < sizeof(volume_versions) / sizeof(volume_versions[0]); i++)
        every_change(t, volume_versions[i], SNAPSHOT_E, K "\\m2", CP_OK, NULL);
    expect_resp(call(t, "volume", "v1", "GetVolumeStats", "volume_id", SNAPSHOT_E, NULL),
                "total_bytes:8587837440");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_tables),
        T(test_list_disk_ids_every_version),
        T(test_list_disk_locations_every_version),
        T(test_disk_number_by_name),
        T(test_partition_disk),
        T(test_disk_stats_and_state),
        T(test_staging_flow_every_version),
        T(test_resize_rules),
        T(test_volume_errors),
        cmocka_unit_test_setup_teardown(test_volumes_windows_needs, needs_setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_disk_serialized_others_parallel, slow_setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("storage_groups", tests, NULL, NULL);
}
