/* disk.c - the disk group's logic, shared by every version (see disk.h). */
#include "groups/disk/disk.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups/common/pbreflect.h"
#include "host/disk_location.h"

/* Longest page83 / serial we carry: identifiers are at most 64 KiB by
 * their 16-bit size; real ones are tens of bytes. */
#define ID_TEXT_MAX 1024

static int by_number(const void *a, const void *b)
{
    uint32_t x = ((const cp_disk_info *)a)->number, y = ((const cp_disk_info *)b)->number;
    return x < y ? -1 : x > y;
}

/* Every disk, sorted by number. */
static int list_disks(cp_call *call, cp_disk_info **disks, size_t *n)
{
    const cp_storage_host *h = cp_sg_host(call);
    cp_storage_alloc a = cp_sg_alloc(call);
    cp_error e;
    *disks = NULL;
    *n = 0;
    if (h->ops->list_disks(h->ctx, &a, disks, n, &e) != CP_OK)
        return cp_sg_fail(call, &e);
    if (*n > 1)
        qsort(*disks, *n, sizeof(**disks), by_number);
    return CP_OK;
}

static char *format_page83(cp_call *call, const cp_disk_info *d)
{
    char *s = cp_call_alloc(call, ID_TEXT_MAX);
    if (s != NULL)
        cp_page83_format(d->id_desc, d->id_desc_len, s, ID_TEXT_MAX);
    return s;
}

static char *format_serial(cp_call *call, const cp_disk_info *d)
{
    char *s = cp_call_alloc(call, ID_TEXT_MAX);
    if (s != NULL)
        cp_serial_format(d->dev_desc, d->dev_desc_len, s, ID_TEXT_MAX);
    return s;
}

static int nomem(cp_call *call)
{
    return cp_call_fail(call, CP_E_NOMEM, "%s: out of memory", cp_sg_method(call));
}

/* --- handlers ------------------------------------------------------------- */

int cp_disk_handle_list_locations(cp_call *call, const void *req, void *resp)
{
    (void)req;
    cp_disk_response *r = resp;
    cp_disk_info *disks;
    size_t n;
    int rc = list_disks(call, &disks, &n);
    if (rc != CP_OK)
        return rc;
    r->locations = cp_call_alloc(call, (n > 0 ? n : 1) * sizeof(*r->locations));
    cp_loc_entry *e = cp_call_alloc(call, (n > 0 ? n : 1) * sizeof(*e));
    uint32_t *num = cp_call_alloc(call, (n > 0 ? n : 1) * sizeof(*num));
    if (r->locations == NULL || e == NULL || num == NULL)
        return nomem(call);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        /* Disks whose location does not parse are left out, as upstream. */
        if (!cp_location_parse(disks[i].location, &e[m].loc))
            continue;
        e[m].nvme = cp_disk_bus_is_nvme(disks[i].dev_desc, disks[i].dev_desc_len);
        e[m].nsid = cp_disk_nvme_nsid(disks[i].id_desc, disks[i].id_desc_len);
        num[m++] = disks[i].number;
    }
    /* NVMe namespaces answer NSID - 1; no two disks answer one place
     * (host/disk_location.h). */
    cp_disk_locations_settle(e, m);
    for (size_t i = 0; i < m; i++) {
        if (!e[i].keep)
            continue;
        const cp_disk_location *loc = &e[i].loc;
        cp_disk_loc *l = &r->locations[r->n_locations++];
        l->number = num[i];
        l->adapter = cp_call_strdup(call, loc->adapter);
        l->bus = cp_call_strdup(call, loc->bus);
        l->target = cp_call_strdup(call, loc->target);
        l->lun = cp_call_strdup(call, loc->lun);
        if (l->adapter == NULL || l->bus == NULL || l->target == NULL || l->lun == NULL)
            return nomem(call);
    }
    return CP_OK;
}

/* A disk that would stay read-only is made writable before it is used:
 * a disk reattached or restored from a snapshot may come back with
 * DISK_ATTRIBUTE_READ_ONLY set, and then it partitions, formats and mounts
 * but every write fails. Media write-protected at the hardware cannot be
 * helped: FAILED_PRECONDITION naming the disk, nothing changed. */
static int refuse_write_protected(const cp_disk_info *d, cp_error *e)
{
    if (d->write_protected)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "disk %u is write-protected at the hardware (the media is write "
                            "protected): it cannot be made writable",
                            (unsigned)d->number);
    return CP_OK;
}

/* The audit record says what was cleared beyond the request. */
static void note_writable(cp_call *call, const cp_disk_info *d)
{
    cp_call_note(call, "cleared the read-only attribute (DISK_ATTRIBUTE_READ_ONLY) of disk %u",
                 (unsigned)d->number);
}

static int partition(cp_call *call, const cp_disk_request *q)
{
    const cp_storage_host *h = cp_sg_host(call);
    cp_storage_alloc a = cp_sg_alloc(call);
    cp_error e;
    cp_disk_info d;
    cp_partition_info *parts = NULL;
    size_t n = 0;

    if (cp_sg_lock_disk(call, q->disk_number) != CP_OK)
        return CP_PARKED;
    int rc = h->ops->get_disk(h->ctx, q->disk_number, &a, &d, &e);
    bool raw = rc == CP_OK && d.style == CP_PART_STYLE_RAW;
    if (rc == CP_OK && !raw)
        rc = h->ops->list_partitions(h->ctx, q->disk_number, &a, &parts, &n, &e);
    bool basic = false;
    for (size_t i = 0; rc == CP_OK && i < n; i++)
        basic = basic || parts[i].kind == CP_PART_BASIC;
    /* A boot or system disk is refused only when this would change it: an
     * initialised disk that already has a basic partition (a restored
     * boot-disk snapshot attached as data, with its ESP) is left as it
     * is, and PartitionDisk succeeds as on any other such disk. */
    if (rc == CP_OK && (raw || !basic))
        rc = cp_sg_refuse_boot(&d, "partition it", &e);
    /* Before partitioning (or finding it partitioned): writable, as
     * SetDiskState(online) leaves it. A boot or system disk is not changed. */
    bool clear = rc == CP_OK && d.read_only && !d.is_boot && !d.is_system;
    if (rc == CP_OK && !d.is_boot && !d.is_system)
        rc = refuse_write_protected(&d, &e);
    if (clear && rc == CP_OK) {
        rc = h->ops->make_disk_writable(h->ctx, q->disk_number, &e);
        if (rc == CP_OK)
            note_writable(call, &d);
    }
    if (rc == CP_OK && raw)
        rc = h->ops->init_gpt(h->ctx, q->disk_number, &e);
    if (rc == CP_OK && !basic)
        rc = h->ops->create_basic_partition(h->ctx, q->disk_number, &e);
    cp_sg_unlock_disk(call, q->disk_number);
    return rc == CP_OK ? CP_OK : cp_sg_fail(call, &e);
}

/* A retry of a PartitionDisk still running answers the first one's result
 * (inflight.h). */
int cp_disk_handle_partition(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_disk_request *q = req;
    cp_inflight *t = cp_sg_ctx(call)->inflight;
    char disk[16];
    snprintf(disk, sizeof(disk), "%u", (unsigned)q->disk_number);
    const char *parts[] = {disk};
    int rc = cp_inflight_join(t, call, parts, 1);
    if (rc != CP_INFLIGHT_LEAD)
        return rc;
    rc = partition(call, q);
    if (rc != CP_PARKED)
        cp_inflight_done(t, call, rc);
    return rc;
}

int cp_disk_handle_rescan(cp_call *call, const void *req, void *resp)
{
    (void)req, (void)resp;
    const cp_storage_host *h = cp_sg_host(call);
    cp_error e;
    if (h->ops->rescan(h->ctx, &e) != CP_OK)
        return cp_sg_fail(call, &e);
    return CP_OK;
}

int cp_disk_handle_number_by_name(cp_call *call, const void *req, void *resp)
{
    const cp_disk_request *q = req;
    cp_disk_response *r = resp;
    if (q->disk_name[0] == '\0')
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "%s: disk_name is empty",
                            cp_sg_method(call));
    cp_disk_info *disks;
    size_t n;
    int rc = list_disks(call, &disks, &n);
    if (rc != CP_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        const char *p83 = format_page83(call, &disks[i]);
        if (p83 == NULL)
            return nomem(call);
        if (strcmp(p83, q->disk_name) == 0) {
            r->disk_number = disks[i].number;
            return CP_OK;
        }
    }
    return cp_call_fail(call, CP_E_NOT_FOUND, "%s: could not find disk with Page83 ID %s",
                        cp_sg_method(call), q->disk_name);
}

int cp_disk_handle_list_ids(cp_call *call, const void *req, void *resp)
{
    (void)req;
    cp_disk_response *r = resp;
    cp_disk_info *disks;
    size_t n;
    int rc = list_disks(call, &disks, &n);
    if (rc != CP_OK)
        return rc;
    r->ids = cp_call_alloc(call, (n > 0 ? n : 1) * sizeof(*r->ids));
    if (r->ids == NULL)
        return nomem(call);
    for (size_t i = 0; i < n; i++) {
        cp_disk_ids *d = &r->ids[i];
        d->number = disks[i].number;
        d->page83 = format_page83(call, &disks[i]);
        d->serial_number = format_serial(call, &disks[i]);
        if (d->page83 == NULL || d->serial_number == NULL)
            return nomem(call);
    }
    r->n_ids = n;
    return CP_OK;
}

/* Looks the disk up under its lock. */
static int get_disk(cp_call *call, uint32_t number, cp_disk_info *d)
{
    const cp_storage_host *h = cp_sg_host(call);
    cp_storage_alloc a = cp_sg_alloc(call);
    cp_error e;
    if (cp_sg_lock_disk(call, number) != CP_OK)
        return CP_PARKED;
    int rc = h->ops->get_disk(h->ctx, number, &a, d, &e);
    cp_sg_unlock_disk(call, number);
    return rc == CP_OK ? CP_OK : cp_sg_fail(call, &e);
}

int cp_disk_handle_stats(cp_call *call, const void *req, void *resp)
{
    const cp_disk_request *q = req;
    cp_disk_info d;
    int rc = get_disk(call, q->disk_number, &d);
    if (rc != CP_OK)
        return rc;
    ((cp_disk_response *)resp)->total_bytes = (int64_t)d.size;
    return CP_OK;
}

int cp_disk_handle_get_state(cp_call *call, const void *req, void *resp)
{
    const cp_disk_request *q = req;
    cp_disk_info d;
    int rc = get_disk(call, q->disk_number, &d);
    if (rc != CP_OK)
        return rc;
    ((cp_disk_response *)resp)->is_online = d.online;
    return CP_OK;
}

/* A disk holding a page-file or crash-dump volume (or the system or boot
 * volume) stays online, wherever it is: cp_sg_refuse_needed_volumes. */
static int refuse_needed_volumes(cp_call *call, const cp_disk_info *d, cp_error *e)
{
    char what[48];
    snprintf(what, sizeof(what), "take disk %u offline", (unsigned)d->number);
    cp_storage_alloc a = cp_sg_alloc(call);
    return cp_sg_refuse_needed_volumes(cp_sg_host(call), d->number, &a, what, e);
}

int cp_disk_handle_set_state(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_disk_request *q = req;
    const cp_storage_host *h = cp_sg_host(call);
    cp_storage_alloc a = cp_sg_alloc(call);
    cp_error e;
    cp_disk_info d;
    if (cp_sg_lock_disk(call, q->disk_number) != CP_OK)
        return CP_PARKED;
    int rc = h->ops->get_disk(h->ctx, q->disk_number, &a, &d, &e);
    if (rc == CP_OK && !q->is_online)
        rc = cp_sg_refuse_boot(&d, "take it offline", &e);
    if (rc == CP_OK && !q->is_online && d.online)
        rc = refuse_needed_volumes(call, &d, &e);
    if (rc == CP_OK && q->is_online)
        rc = refuse_write_protected(&d, &e);
    /* Online and writable: the host clears the read-only attribute in the
     * same change that clears offline. Already there: nothing to do. */
    if (rc == CP_OK && (d.online != q->is_online || (q->is_online && d.read_only)))
        rc = h->ops->set_disk_online(h->ctx, q->disk_number, q->is_online, &e);
    if (rc == CP_OK && q->is_online && d.read_only)
        note_writable(call, &d);
    cp_sg_unlock_disk(call, q->disk_number);
    return rc == CP_OK ? CP_OK : cp_sg_fail(call, &e);
}

/* --- converters ------------------------------------------------------------- */

/* Parses the decimal string disk ID of a legacy request. what_fmt is
 * upstream's message prefix; "%s" in it becomes the message's package. */
static int legacy_disk_id(cp_call *call, const ProtobufCMessage *in, const char *field,
                          const char *prefix, uint32_t *out)
{
    const char *s = cp_pb_get_string(in, field);
    char why[256];
    if (cp_parse_disk_number(s != NULL ? s : "", out, why, sizeof(why)) != CP_OK)
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "%s: %s%s", cp_sg_method(call), prefix,
                            why);
    return CP_OK;
}

int cp_disk_conv_partition_legacy(cp_call *call, const ProtobufCMessage *in, void *req)
{
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "Failed to convert %s.PartitionDiskRequest.DiskID to uint32: ",
             in->descriptor->package_name);
    return legacy_disk_id(call, in, "diskID", prefix, &((cp_disk_request *)req)->disk_number);
}

int cp_disk_conv_stats_legacy(cp_call *call, const ProtobufCMessage *in, void *req)
{
    return legacy_disk_id(call, in, "diskID", "Failed to format DiskStatsRequest.DiskID with err: ",
                          &((cp_disk_request *)req)->disk_number);
}

int cp_disk_conv_set_attach(cp_call *call, const ProtobufCMessage *in, void *req)
{
    static const cp_fieldmap online[] = {
        {"isOnline", offsetof(cp_disk_request, is_online), CP_F_BOOL},
        {NULL},
    };
    cp_fieldmap_from_msg(online, in, req);
    return legacy_disk_id(call, in, "diskID",
                          "Failed to format SetAttachStateRequest.DiskID with err: ",
                          &((cp_disk_request *)req)->disk_number);
}

int cp_disk_conv_get_attach(cp_call *call, const ProtobufCMessage *in, void *req)
{
    return legacy_disk_id(call, in, "diskID",
                          "Failed to format GetAttachStateRequest.DiskID with err: ",
                          &((cp_disk_request *)req)->disk_number);
}

int cp_disk_conv_locations(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    static const cp_fieldmap loc_map[] = {
        {"Adapter", offsetof(cp_disk_loc, adapter), CP_F_STRING},
        {"Bus", offsetof(cp_disk_loc, bus), CP_F_STRING},
        {"Target", offsetof(cp_disk_loc, target), CP_F_STRING},
        {"LUNID", offsetof(cp_disk_loc, lun), CP_F_STRING},
        {NULL},
    };
    const cp_disk_response *r = resp;
    ProtobufCMessage **entries;
    int rc = cp_pb_map_new(call, out, "disk_locations", r->n_locations, &entries);
    for (size_t i = 0; rc == CP_OK && i < r->n_locations; i++) {
        ProtobufCMessage *v;
        rc = cp_pb_entry_key_number(call, entries[i], r->locations[i].number);
        if (rc == CP_OK)
            rc = cp_pb_entry_value_message(call, entries[i], &v);
        if (rc == CP_OK)
            cp_fieldmap_to_msg(loc_map, &r->locations[i], v);
    }
    return rc;
}

int cp_disk_conv_ids(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    const cp_disk_response *r = resp;
    ProtobufCMessage **entries;
    int rc = cp_pb_map_new(call, out, "diskIDs", r->n_ids, &entries);
    for (size_t i = 0; rc == CP_OK && i < r->n_ids; i++) {
        const cp_disk_ids *d = &r->ids[i];
        ProtobufCMessage *v;
        rc = cp_pb_entry_key_number(call, entries[i], d->number);
        if (rc == CP_OK)
            rc = cp_pb_entry_value_message(call, entries[i], &v);
        if (rc != CP_OK)
            break;
        if (cp_pb_field(v, "identifiers") != NULL) {
            /* v1beta1, v1beta2: identifiers{"page83", "serialNumber"} */
            ProtobufCMessage **kv;
            rc = cp_pb_map_new(call, v, "identifiers", 2, &kv);
            if (rc != CP_OK)
                break;
            cp_pb_entry_key_string(kv[0], "page83");
            cp_pb_entry_value_string(kv[0], d->page83);
            cp_pb_entry_key_string(kv[1], "serialNumber");
            cp_pb_entry_value_string(kv[1], d->serial_number);
        } else {
            cp_pb_set_string(v, "page83", d->page83);
            cp_pb_set_string(v, "serial_number", d->serial_number);
        }
    }
    return rc;
}

int cp_disk_conv_number_by_name(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    char buf[16];
    snprintf(buf, sizeof(buf), "%u", (unsigned)((const cp_disk_response *)resp)->disk_number);
    char *s = cp_call_strdup(call, buf);
    if (s == NULL)
        return nomem(call);
    cp_pb_set_string(out, "disk_number", s);
    return CP_OK;
}

/* --- field maps ------------------------------------------------------------- */

const cp_fieldmap cp_disk_map_number[] = {
    {"disk_number", offsetof(cp_disk_request, disk_number), CP_F_UINT32},
    {NULL},
};
const cp_fieldmap cp_disk_map_set_state[] = {
    {"disk_number", offsetof(cp_disk_request, disk_number), CP_F_UINT32},
    {"is_online", offsetof(cp_disk_request, is_online), CP_F_BOOL},
    {NULL},
};
const cp_fieldmap cp_disk_map_name[] = {
    {"disk_name", offsetof(cp_disk_request, disk_name), CP_F_STRING},
    {NULL},
};
const cp_fieldmap cp_disk_map_total_bytes[] = {
    {"total_bytes", offsetof(cp_disk_response, total_bytes), CP_F_INT64},
    {NULL},
};
const cp_fieldmap cp_disk_map_disk_size[] = {
    {"diskSize", offsetof(cp_disk_response, total_bytes), CP_F_INT64},
    {NULL},
};
const cp_fieldmap cp_disk_map_is_online[] = {
    {"is_online", offsetof(cp_disk_response, is_online), CP_F_BOOL},
    {NULL},
};
const cp_fieldmap cp_disk_map_isOnline[] = {
    {"isOnline", offsetof(cp_disk_response, is_online), CP_F_BOOL},
    {NULL},
};
