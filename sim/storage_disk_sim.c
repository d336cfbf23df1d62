/* storage_disk_sim.c - the disk and partition operations of the simulated
 * storage host (storage_sim.h): listing and describing disks, online and
 * writable, rescan, GPT initialisation and new basic partitions, laid out
 * as Windows lays out a data disk (partitions on 1 MiB boundaries from
 * 1 MiB; a GPT disk keeps its last 1 MiB for the backup table; a new
 * basic partition takes the space after the last one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "sim/storage_sim_internal.h"

/* --- ops: disks --------------------------------------------------------------- */

static void fill_disk(const sim_disk *d, cp_disk_info *o, const uint8_t *id, const uint8_t *dev,
                      const char *loc)
{
    o->number = d->number;
    o->size = d->size;
    o->online = d->online;
    o->is_boot = d->boot;
    o->is_system = d->system;
    o->read_only = d->read_only;
    o->write_protected = d->write_protected && !d->read_only && d->online;
    o->style = d->style;
    o->id_desc = d->id_desc_len > 0 ? id : NULL;
    o->id_desc_len = d->id_desc_len;
    o->dev_desc = d->dev_desc_len > 0 ? dev : NULL;
    o->dev_desc_len = d->dev_desc_len;
    o->location = loc;
}

/* Copies d's identity into caller memory; s->mu held. */
static int copy_disk(const sim_disk *d, const cp_storage_alloc *a, cp_disk_info *o, cp_error *e)
{
    uint8_t *id = cp_sim_alloc(a, d->id_desc_len);
    uint8_t *dev = cp_sim_alloc(a, d->dev_desc_len);
    char *loc = cp_sim_strdup(a, d->location);
    if (id == NULL || dev == NULL || loc == NULL)
        return cp_sim_nomem(e);
    memcpy(id, d->id_desc, d->id_desc_len);
    memcpy(dev, d->dev_desc, d->dev_desc_len);
    fill_disk(d, o, id, dev, loc);
    return CP_OK;
}

/* Describes d as the Win32 host's IOCTLs would: a not_ready disk fails as
 * its IOCTL_DISK_GET_LENGTH_INFO does there (ERROR_NOT_READY). */
static int describe_disk(const sim_disk *d, const cp_storage_alloc *a, cp_disk_info *o, cp_error *e)
{
    if (d->not_ready)
        return cp_error_set(e, CP_E_UNAVAILABLE,
                            "IOCTL_DISK_GET_LENGTH_INFO disk %u: The device is not ready. "
                            "(error 21)",
                            (unsigned)d->number);
    return copy_disk(d, a, o, e);
}

/* A disk that does not answer is left out (and logged), as the Win32 host
 * does: one unreadable disk must not fail ListDiskIDs for all. */
int cp_sim_list_disks(void *ctx, const cp_storage_alloc *a, cp_disk_info **disks, size_t *n,
                      cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    int rc = CP_OK;
    size_t k = 0;
    cp_disk_info *out = cp_sim_alloc(a, s->n_disks * sizeof(*out));
    if (out == NULL)
        rc = cp_sim_nomem(e);
    for (size_t i = 0; rc == CP_OK && i < s->n_disks; i++) {
        cp_error e2;
        int r = describe_disk(s->disks[i], a, &out[k], &e2);
        if (r == CP_OK)
            k++;
        else if (r != CP_E_NOMEM)
            CP_LOG_WARN("storage: listing disks: skipping %s", e2.msg);
        else
            rc = cp_sim_nomem(e);
    }
    if (rc == CP_OK) {
        *disks = out;
        *n = k;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

int cp_sim_get_disk(void *ctx, uint32_t number, const cp_storage_alloc *a, cp_disk_info *out,
                    cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = cp_sim_find_disk(s, number);
    int rc = d == NULL ? cp_sim_not_found_disk(e, number) : describe_disk(d, a, out, e);
    cp_mutex_unlock(s->mu);
    return rc;
}

static int write_protected(cp_error *e, uint32_t number)
{
    return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                        "disk %u is write-protected at the hardware (the media is write "
                        "protected): it cannot be made writable",
                        (unsigned)number);
}

static int set_online(sim *s, sim_disk *d, const void *arg, cp_error *e)
{
    bool online = *(const bool *)arg;
    /* Coming online, its volumes arrive arrival_ms later (Windows' volume
     * arrival is asynchronous: SetDiskState returns before them). */
    /* Online clears DISK_ATTRIBUTE_READ_ONLY too, as the Win32 host does
     * (one IOCTL_DISK_SET_DISK_ATTRIBUTES). Write-protected media is
     * refused and the disk left as it was (the Win32 host puts it back
     * offline). */
    if (online && d->write_protected)
        return write_protected(e, d->number);
    if (online && !d->online && s->arrival_ms > 0)
        d->volumes_at = cp_now_ms() + s->arrival_ms;
    d->online = online;
    if (online)
        d->read_only = false;
    return CP_OK;
}

int cp_sim_set_disk_online(void *ctx, uint32_t number, bool online, cp_error *e)
{
    return cp_sim_on_disk(ctx, number, set_online, &online, e);
}

static int make_writable(sim *s, sim_disk *d, const void *arg, cp_error *e)
{
    (void)s;
    (void)arg;
    d->read_only = false;
    return d->write_protected ? write_protected(e, d->number) : CP_OK;
}

int cp_sim_make_disk_writable(void *ctx, uint32_t number, cp_error *e)
{
    return cp_sim_on_disk(ctx, number, make_writable, NULL, e);
}

int cp_sim_rescan(void *ctx, cp_error *e)
{
    (void)e;
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    for (size_t i = 0; i < s->n_disks; i++) {
        sim_disk *d = s->disks[i];
        if (d->grow_to > d->size)
            d->size = d->grow_to;
        d->grow_to = 0;
    }
    cp_mutex_unlock(s->mu);
    return CP_OK;
}

/* --- ops: partitions ------------------------------------------------------ */

static int need_online(const sim_disk *d, cp_error *e)
{
    if (!d->online)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is offline", (unsigned)d->number);
    return CP_OK;
}

static int create_gpt(sim *s, sim_disk *d, const void *arg, cp_error *e)
{
    (void)s;
    (void)arg;
    /* A RAW disk is brought online first, as the Win32 host does: it has
     * no volume to expose, and drivers partition before SetDiskState. */
    if (d->style == CP_PART_STYLE_RAW && !d->online && d->write_protected)
        return write_protected(e, d->number); /* judged once online, then put back offline */
    if (d->style == CP_PART_STYLE_RAW)
        d->online = true;
    int rc = need_online(d, e);
    if (rc == CP_OK)
        rc = cp_sim_need_writable(d, "IOCTL_DISK_CREATE_DISK", e);
    if (rc == CP_OK && d->style != CP_PART_STYLE_RAW)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is already initialized (%s)",
                          (unsigned)d->number, d->style == CP_PART_STYLE_GPT ? "GPT" : "MBR");
    if (rc == CP_OK)
        d->style = CP_PART_STYLE_GPT;
    return rc;
}

int cp_sim_init_gpt(void *ctx, uint32_t number, cp_error *e)
{
    return cp_sim_on_disk(ctx, number, create_gpt, NULL, e);
}

int cp_sim_list_partitions(void *ctx, uint32_t number, const cp_storage_alloc *a,
                           cp_partition_info **parts, size_t *n, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = cp_sim_find_disk(s, number);
    int rc = d == NULL ? cp_sim_not_found_disk(e, number) : CP_OK;
    cp_partition_info *out = NULL;
    if (rc == CP_OK && (out = cp_sim_alloc(a, d->n_parts * sizeof(*out))) == NULL)
        rc = cp_sim_nomem(e);
    if (rc == CP_OK) {
        for (size_t i = 0; i < d->n_parts; i++) {
            out[i].number = d->parts[i].number;
            out[i].offset = d->parts[i].offset;
            out[i].size = d->parts[i].size;
            out[i].kind = d->parts[i].kind;
        }
        *parts = out;
        *n = d->n_parts;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

/* Deterministic IDs for partitions the simulator creates:
 * {5157d15c-<disk>-4000-8000-<partition>}. */
static void new_volume_id(uint32_t disk, uint32_t part, char out[CP_VOLUME_ID_LEN + 1])
{
    char text[40];
    uint8_t g[16];
    snprintf(text, sizeof(text), "5157d15c-%04x-4000-8000-%012x", (unsigned)(disk & 0xffff),
             (unsigned)part);
    cp_guid_parse(text, g);
    cp_volume_id_format(g, out);
}

int cp_sim_add_part(sim_disk *d, const sim_part *p)
{
    sim_part *np = realloc(d->parts, (d->n_parts + 1) * sizeof(*np));
    if (np == NULL)
        return CP_E_NOMEM;
    d->parts = np;
    d->parts[d->n_parts++] = *p;
    return CP_OK;
}

static int add_basic(sim *s, sim_disk *d, const void *arg, cp_error *e)
{
    (void)s;
    (void)arg;
    uint32_t number = d->number;
    int rc = need_online(d, e);
    if (rc == CP_OK)
        rc = cp_sim_need_writable(d, "IOCTL_DISK_SET_DRIVE_LAYOUT_EX", e);
    if (rc == CP_OK && d->style == CP_PART_STYLE_RAW)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is not initialized",
                          (unsigned)number);
    uint64_t start = MIB;
    uint32_t num = 0;
    for (size_t i = 0; rc == CP_OK && i < d->n_parts; i++) {
        uint64_t end = d->parts[i].offset + d->parts[i].size;
        if (end > start)
            start = (end + MIB - 1) / MIB * MIB;
        if (d->parts[i].number > num)
            num = d->parts[i].number;
    }
    uint64_t end = cp_sim_usable_end(d);
    if (rc == CP_OK && (end <= start || end - start < MIB))
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "no free space left on disk %u",
                          (unsigned)number);
    if (rc == CP_OK) {
        sim_part p = {.number = num + 1,
                      .offset = start,
                      .size = end - start,
                      .kind = CP_PART_BASIC,
                      .has_volume = true};
        p.vol_size = p.size;
        new_volume_id(number, p.number, p.id);
        if (cp_sim_add_part(d, &p) != CP_OK)
            rc = cp_sim_nomem(e);
    }
    return rc;
}

int cp_sim_create_basic_partition(void *ctx, uint32_t number, cp_error *e)
{
    return cp_sim_on_disk(ctx, number, add_basic, NULL, e);
}
