/* storage_sim.c - the simulated storage host (see storage_sim.h).
 *
 * State: an array of disks (the fixture's, plus those that arrive and leave
 * at run time: storage_hotplug_sim.c), each with its partitions
 * (a partition may carry a volume), plus a table of mount points. The
 * identity a disk reports is kept as the raw descriptor bytes Windows would
 * return, built from the fixture, so storage_ids.c formats simulated and
 * real disks the same way.
 *
 * Layout rules (as Windows lays out a data disk): partitions start on 1 MiB
 * boundaries from 1 MiB; a GPT disk keeps its last 1 MiB for the backup
 * table. A new basic partition takes the space after the last partition.
 * A partition can grow up to the next partition or the end of usable
 * space. Formatting gives NTFS with size/128 bytes of metadata used.
 */
#include "sim/storage_sim.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "sim/storage_sim_internal.h"

static const cp_storage_ops sim_ops;

/* --- helpers ---------------------------------------------------------------- */

static void *sim_alloc(const cp_storage_alloc *a, size_t n)
{
    return a->alloc(a->actx, n > 0 ? n : 1);
}

static char *sim_strdup(const cp_storage_alloc *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = sim_alloc(a, n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

static int nomem(cp_error *e)
{
    return cp_error_set(e, CP_E_NOMEM, "storage simulator: out of memory");
}

static bool same_dir(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

static sim_disk *find_disk(sim *s, uint32_t number)
{
    for (size_t i = 0; i < s->n_disks; i++)
        if (s->disks[i]->number == number)
            return s->disks[i];
    return NULL;
}

/* Whether the disk's volumes exist: it is online and they have arrived. */
static bool volumes_visible(const sim_disk *d)
{
    return d->online && (d->volumes_at == 0 || cp_now_ms() >= d->volumes_at);
}

/* The volume with this (normalized) id on an online disk. */
static sim_part *find_volume(sim *s, const char *id, sim_disk **disk)
{
    for (size_t i = 0; i < s->n_disks; i++) {
        sim_disk *d = s->disks[i];
        if (!volumes_visible(d))
            continue;
        for (size_t j = 0; j < d->n_parts; j++)
            if (d->parts[j].has_volume && strcmp(d->parts[j].id, id) == 0) {
                if (disk != NULL)
                    *disk = d;
                return &d->parts[j];
            }
    }
    return NULL;
}

static sim_mount *find_mount(sim *s, const char *dir)
{
    for (size_t i = 0; i < s->n_mounts; i++)
        if (same_dir(s->mounts[i].dir, dir))
            return &s->mounts[i];
    return NULL;
}

static uint64_t usable_end(const sim_disk *d)
{
    uint64_t end = d->style == CP_PART_STYLE_GPT ? d->size - MIB : d->size;
    return d->size < 2 * MIB ? 0 : end;
}

/* Room partition p can grow into: up to the next partition or the end. */
static uint64_t part_max(const sim_disk *d, const sim_part *p)
{
    uint64_t limit = usable_end(d);
    for (size_t i = 0; i < d->n_parts; i++) {
        const sim_part *q = &d->parts[i];
        if (q != p && q->offset >= p->offset + p->size && q->offset < limit)
            limit = q->offset;
    }
    return limit > p->offset ? limit - p->offset : p->size;
}

static int not_found_disk(cp_error *e, uint32_t number)
{
    return cp_error_set(e, CP_E_NOT_FOUND, "disk %u not found", (unsigned)number);
}

static int not_found_volume(cp_error *e, const char *id)
{
    return cp_error_set(e, CP_E_NOT_FOUND, "volume %s not found", id);
}

/* --- disk operations: per-disk serialization check and latency ----------- */

static void sim_sleep_ms(sim *s, unsigned ms)
{
    if (ms == 0)
        return;
    int64_t until = cp_now_ms() + ms;
    cp_mutex_lock(s->sleep_mu);
    for (int64_t now = cp_now_ms(); now < until; now = cp_now_ms())
        cp_cond_timedwait(s->sleep_cv, s->sleep_mu, until - now);
    cp_mutex_unlock(s->sleep_mu);
}

static void sim_sleep(sim *s)
{
    sim_sleep_ms(s, s->latency_ms);
}

/* Called with s->mu held; on success the caller must end_op(). */
static int begin_op_locked(sim *s, sim_disk *d, cp_error *e)
{
    if (d->in_flight > 0) {
        s->overlaps++;
        return cp_error_set(e, CP_E_ABORTED,
                            "storage simulator: overlapping operations on disk %u (calls on one "
                            "disk must be serialized)",
                            (unsigned)d->number);
    }
    d->in_flight++;
    s->running++;
    if (s->running > s->max_running)
        s->max_running = s->running;
    return CP_OK;
}

static void end_op(sim *s, sim_disk *d)
{
    cp_mutex_lock(s->mu);
    d->in_flight--;
    s->running--;
    cp_mutex_unlock(s->mu);
}

/* Starts a disk operation on disk `number`: the latency passes outside the
 * mutex; returns with s->mu held and *out set, or unlocked on error. */
static int begin_disk(sim *s, uint32_t number, sim_disk **out, cp_error *e)
{
    cp_mutex_lock(s->mu);
    sim_disk *d = find_disk(s, number);
    int rc = d == NULL ? not_found_disk(e, number) : begin_op_locked(s, d, e);
    cp_mutex_unlock(s->mu);
    if (rc != CP_OK)
        return rc;
    sim_sleep(s);
    cp_mutex_lock(s->mu);
    *out = d;
    return CP_OK;
}

/* Same for the disk holding volume id; *part is looked up again after the
 * latency (it may have moved in memory). */
static int begin_volume_for(sim *s, const char *id, unsigned extra_ms, sim_disk **disk,
                            sim_part **part, cp_error *e)
{
    cp_mutex_lock(s->mu);
    sim_disk *d = NULL;
    int rc = find_volume(s, id, &d) == NULL ? not_found_volume(e, id) : begin_op_locked(s, d, e);
    cp_mutex_unlock(s->mu);
    if (rc != CP_OK)
        return rc;
    sim_sleep_ms(s, s->latency_ms + extra_ms);
    cp_mutex_lock(s->mu);
    sim_part *p = find_volume(s, id, NULL);
    if (p == NULL) { /* its disk went offline meanwhile */
        cp_mutex_unlock(s->mu);
        end_op(s, d);
        return not_found_volume(e, id);
    }
    *disk = d;
    *part = p;
    return CP_OK;
}

static int begin_volume(sim *s, const char *id, sim_disk **disk, sim_part **part, cp_error *e)
{
    return begin_volume_for(s, id, 0, disk, part, e);
}

static void finish(sim *s, sim_disk *d)
{
    cp_mutex_unlock(s->mu);
    end_op(s, d);
}

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
    uint8_t *id = sim_alloc(a, d->id_desc_len);
    uint8_t *dev = sim_alloc(a, d->dev_desc_len);
    char *loc = sim_strdup(a, d->location);
    if (id == NULL || dev == NULL || loc == NULL)
        return nomem(e);
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
static int sim_list_disks(void *ctx, const cp_storage_alloc *a, cp_disk_info **disks, size_t *n,
                          cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    int rc = CP_OK;
    size_t k = 0;
    cp_disk_info *out = sim_alloc(a, s->n_disks * sizeof(*out));
    if (out == NULL)
        rc = nomem(e);
    for (size_t i = 0; rc == CP_OK && i < s->n_disks; i++) {
        cp_error e2;
        int r = describe_disk(s->disks[i], a, &out[k], &e2);
        if (r == CP_OK)
            k++;
        else if (r == CP_E_NOMEM)
            rc = nomem(e);
        else
            CP_LOG_WARN("storage: listing disks: skipping %s", e2.msg);
    }
    if (rc == CP_OK) {
        *disks = out;
        *n = k;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_get_disk(void *ctx, uint32_t number, const cp_storage_alloc *a, cp_disk_info *out,
                        cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = find_disk(s, number);
    int rc = d == NULL ? not_found_disk(e, number) : describe_disk(d, a, out, e);
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

/* A write to a read-only disk fails as Windows' does (ERROR_WRITE_PROTECT). */
static int need_writable(const sim_disk *d, const char *what, cp_error *e)
{
    if (d->read_only || d->write_protected)
        return cp_error_set(e, CP_E_PERMISSION_DENIED, "%s disk %u: The media is write protected.",
                            what, (unsigned)d->number);
    return CP_OK;
}

static int sim_set_disk_online(void *ctx, uint32_t number, bool online, cp_error *e)
{
    sim *s = ctx;
    sim_disk *d;
    int rc = begin_disk(s, number, &d, e);
    if (rc != CP_OK)
        return rc;
    /* Coming online, its volumes arrive arrival_ms later (Windows' volume
     * arrival is asynchronous: SetDiskState returns before them). */
    /* Online clears DISK_ATTRIBUTE_READ_ONLY too, as the Win32 host does
     * (one IOCTL_DISK_SET_DISK_ATTRIBUTES). Write-protected media is
     * refused and the disk left as it was (the Win32 host puts it back
     * offline). */
    if (online && d->write_protected) {
        finish(s, d);
        return write_protected(e, number);
    }
    if (online && !d->online && s->arrival_ms > 0)
        d->volumes_at = cp_now_ms() + s->arrival_ms;
    d->online = online;
    if (online)
        d->read_only = false;
    finish(s, d);
    return rc;
}

static int sim_make_disk_writable(void *ctx, uint32_t number, cp_error *e)
{
    sim *s = ctx;
    sim_disk *d;
    int rc = begin_disk(s, number, &d, e);
    if (rc != CP_OK)
        return rc;
    d->read_only = false;
    if (d->write_protected)
        rc = write_protected(e, number);
    finish(s, d);
    return rc;
}

static int sim_rescan(void *ctx, cp_error *e)
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

static int sim_init_gpt(void *ctx, uint32_t number, cp_error *e)
{
    sim *s = ctx;
    sim_disk *d;
    int rc = begin_disk(s, number, &d, e);
    if (rc != CP_OK)
        return rc;
    /* A RAW disk is brought online first, as the Win32 host does: it has
     * no volume to expose, and drivers partition before SetDiskState. */
    if (d->style == CP_PART_STYLE_RAW && !d->online && d->write_protected) {
        finish(s, d); /* judged once online, then put back offline */
        return write_protected(e, number);
    }
    if (d->style == CP_PART_STYLE_RAW)
        d->online = true;
    rc = need_online(d, e);
    if (rc == CP_OK)
        rc = need_writable(d, "IOCTL_DISK_CREATE_DISK", e);
    if (rc == CP_OK && d->style != CP_PART_STYLE_RAW)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is already initialized (%s)",
                          (unsigned)number, d->style == CP_PART_STYLE_GPT ? "GPT" : "MBR");
    if (rc == CP_OK)
        d->style = CP_PART_STYLE_GPT;
    finish(s, d);
    return rc;
}

static int sim_list_partitions(void *ctx, uint32_t number, const cp_storage_alloc *a,
                               cp_partition_info **parts, size_t *n, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = find_disk(s, number);
    int rc = d == NULL ? not_found_disk(e, number) : CP_OK;
    cp_partition_info *out = NULL;
    if (rc == CP_OK && (out = sim_alloc(a, d->n_parts * sizeof(*out))) == NULL)
        rc = nomem(e);
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

static int sim_create_basic_partition(void *ctx, uint32_t number, cp_error *e)
{
    sim *s = ctx;
    sim_disk *d;
    int rc = begin_disk(s, number, &d, e);
    if (rc != CP_OK)
        return rc;
    rc = need_online(d, e);
    if (rc == CP_OK)
        rc = need_writable(d, "IOCTL_DISK_SET_DRIVE_LAYOUT_EX", e);
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
    uint64_t end = usable_end(d);
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
            rc = nomem(e);
    }
    finish(s, d);
    return rc;
}

/* --- ops: volumes ----------------------------------------------------------- */

static int sim_list_volumes(void *ctx, uint32_t disk, uint32_t partition, const cp_storage_alloc *a,
                            char ***ids, size_t *n, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = find_disk(s, disk);
    int rc = d == NULL ? not_found_disk(e, disk) : CP_OK;
    char **out = NULL;
    size_t k = 0;
    if (rc == CP_OK && (out = sim_alloc(a, (d->n_parts + 1) * sizeof(*out))) == NULL)
        rc = nomem(e);
    for (size_t i = 0; rc == CP_OK && volumes_visible(d) && i < d->n_parts; i++) {
        const sim_part *p = &d->parts[i];
        if (!p->has_volume || (partition != 0 && p->number != partition))
            continue;
        if ((out[k++] = sim_strdup(a, p->id)) == NULL)
            rc = nomem(e);
    }
    if (rc == CP_OK) {
        *ids = out;
        *n = k;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_get_volume(void *ctx, const char *id, cp_volume_info *out, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = NULL;
    const sim_part *p = find_volume(s, id, &d);
    int rc = p == NULL ? not_found_volume(e, id) : CP_OK;
    if (rc == CP_OK) {
        memset(out, 0, sizeof(*out));
        out->disk_number = d->number;
        out->partition_number = p->number;
        out->formatted = p->fs[0] != '\0';
        snprintf(out->fs, sizeof(out->fs), "%s", p->fs);
        out->size = p->vol_size;
        /* A RAW volume has no free space to report (MSFT_Volume gives 0). */
        out->size_remaining = out->formatted && p->used < p->vol_size ? p->vol_size - p->used : 0;
        out->partition_size = p->size;
        out->partition_max = part_max(d, p);
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

/* The fixture's roles; a simulated volume lives on one partition. */
static int sim_volume_use(void *ctx, const char *id, cp_volume_use *out, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = NULL;
    const sim_part *p = find_volume(s, id, &d);
    int rc = p == NULL ? not_found_volume(e, id) : CP_OK;
    if (rc == CP_OK) {
        memset(out, 0, sizeof(*out));
        out->roles = p->roles;
        out->disks[0] = d->number;
        out->n_disks = 1;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_format_volume(void *ctx, const char *id, cp_error *e)
{
    sim *s = ctx;
    sim_disk *d;
    sim_part *p;
    /* Each format is logged: tests count how many ran. */
    CP_LOG_INFO("storage simulator: formatting volume %s", id);
    int rc = begin_volume_for(s, id, s->format_ms, &d, &p, e);
    if (rc != CP_OK)
        return rc;
    rc = need_writable(d, "MSFT_Volume.Format of volume on", e);
    if (rc == CP_OK) {
        snprintf(p->fs, sizeof(p->fs), "NTFS");
        p->vol_size = p->size;
        p->used = p->size / 128;
        free(p->head); /* the new file system's boot sector replaces what was there */
        p->head = NULL;
        p->head_len = 0;
    }
    finish(s, d);
    return rc;
}

/* The volume's bytes: the fixture's, zeros elsewhere. */
static int sim_read_volume_head(void *ctx, const char *id, uint8_t *buf, size_t len, size_t *got,
                                cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = NULL;
    const sim_part *p = find_volume(s, id, &d);
    int rc = p == NULL ? not_found_volume(e, id) : CP_OK;
    if (rc == CP_OK) {
        size_t n = p->size < len ? (size_t)p->size : len;
        memset(buf, 0, n);
        if (p->head != NULL)
            memcpy(buf, p->head, p->head_len < n ? p->head_len : n);
        *got = n;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_grow_volume(void *ctx, const char *id, uint64_t size, cp_error *e)
{
    sim *s = ctx;
    sim_disk *d;
    sim_part *p;
    int rc = begin_volume(s, id, &d, &p, e);
    if (rc != CP_OK)
        return rc;
    uint64_t max = part_max(d, p);
    rc = need_writable(d, "IOCTL_DISK_GROW_PARTITION", e);
    if (rc == CP_OK && (size < p->size || size > max))
        rc = cp_error_set(e, CP_E_OUT_OF_RANGE,
                          "cannot resize the partition of volume %s to %llu bytes (it has %llu, "
                          "at most %llu)",
                          id, (unsigned long long)size, (unsigned long long)p->size,
                          (unsigned long long)max);
    if (rc == CP_OK) {
        p->size = size;
        p->vol_size = size;
    }
    finish(s, d);
    return rc;
}

static int sim_flush_volume(void *ctx, const char *id, cp_error *e)
{
    sim *s = ctx;
    sim_disk *d;
    sim_part *p;
    int rc = begin_volume(s, id, &d, &p, e);
    if (rc != CP_OK)
        return rc;
    finish(s, d);
    return CP_OK;
}

static int sim_add_mount_point(void *ctx, const char *id, const char *dir, cp_error *e)
{
    sim *s = ctx;
    sim_disk *d;
    sim_part *p;
    int rc = begin_volume(s, id, &d, &p, e);
    if (rc != CP_OK)
        return rc;
    const sim_mount *m = find_mount(s, dir);
    if (m != NULL) {
        rc = cp_error_set(e, CP_E_ALREADY_EXISTS, "%s is already a mount point (of volume %s)", dir,
                          m->id);
    } else {
        sim_mount *nm = realloc(s->mounts, (s->n_mounts + 1) * sizeof(*nm));
        char *copy = nm != NULL ? strdup(dir) : NULL;
        if (nm != NULL)
            s->mounts = nm;
        if (copy == NULL) {
            rc = nomem(e);
        } else {
            s->mounts[s->n_mounts].dir = copy;
            snprintf(s->mounts[s->n_mounts].id, sizeof(s->mounts[0].id), "%s", id);
            s->n_mounts++;
        }
    }
    finish(s, d);
    return rc;
}

static int sim_remove_mount_point(void *ctx, const char *dir, cp_error *e)
{
    sim *s = ctx;
    char id[CP_VOLUME_ID_LEN + 1];
    cp_mutex_lock(s->mu);
    const sim_mount *m = find_mount(s, dir);
    if (m != NULL)
        snprintf(id, sizeof(id), "%s", m->id);
    cp_mutex_unlock(s->mu);
    if (m == NULL)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
    sim_disk *d;
    sim_part *p;
    int rc = begin_volume(s, id, &d, &p, e);
    if (rc != CP_OK)
        return rc;
    sim_mount *mm = find_mount(s, dir);
    if (mm == NULL) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
    } else {
        free(mm->dir);
        *mm = s->mounts[--s->n_mounts];
    }
    finish(s, d);
    return rc;
}

static int sim_volume_at(void *ctx, const char *dir, char *id, size_t idlen, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    const sim_mount *m = find_mount(s, dir);
    int rc = m == NULL ? cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir)
                       : CP_OK;
    if (rc == CP_OK)
        snprintf(id, idlen, "%s", m->id);
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_drive_volume(void *ctx, char letter, char *id, size_t idlen, cp_error *e)
{
    sim *s = ctx;
    char up = (char)toupper((unsigned char)letter);
    int rc = cp_error_set(e, CP_E_NOT_FOUND, "no volume has drive letter %c:", up);
    cp_mutex_lock(s->mu);
    for (size_t i = 0; rc != CP_OK && i < s->n_disks; i++) {
        const sim_disk *d = s->disks[i];
        for (size_t j = 0; volumes_visible(d) && j < d->n_parts; j++)
            if (d->parts[j].has_volume && d->parts[j].drive == up) {
                snprintf(id, idlen, "%s", d->parts[j].id);
                rc = CP_OK;
                cp_error_clear(e);
                break;
            }
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

/* --- the mount points as the fs host sees them (mountpoints.h) ----------- */

static int mp_volume_at(void *ctx, const char *dir, char *id, size_t idlen)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    const sim_mount *m = find_mount(s, dir);
    int rc = m != NULL && find_volume(s, m->id, NULL) != NULL ? CP_OK : CP_E_FAILED_PRECONDITION;
    if (rc == CP_OK)
        snprintf(id, idlen, "%s", m->id);
    cp_mutex_unlock(s->mu);
    return rc;
}

static int mp_drop(void *ctx, const char *dir, char *id, size_t idlen)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_mount *m = find_mount(s, dir);
    int rc = m != NULL ? CP_OK : CP_E_FAILED_PRECONDITION;
    if (m != NULL) {
        snprintf(id, idlen, "%s", m->id);
        free(m->dir);
        *m = s->mounts[--s->n_mounts];
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

void cp_sim_disk_free(sim_disk *d)
{
    for (size_t i = 0; d != NULL && i < d->n_parts; i++)
        free(d->parts[i].head);
    if (d != NULL)
        free(d->parts);
    free(d);
}

sim *cp_sim_of(const cp_storage_host *h)
{
    return h != NULL && h->ops == &sim_ops ? h->ctx : NULL;
}

int cp_storage_sim_mount_points(const cp_storage_host *h, cp_mount_points *out)
{
    if (h == NULL || h->ops != &sim_ops)
        return CP_E_INVALID_ARGUMENT;
    out->ctx = h->ctx;
    out->volume_at = mp_volume_at;
    out->drop = mp_drop;
    return CP_OK;
}

static void sim_destroy(void *ctx)
{
    sim *s = ctx;
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_disks; i++)
        cp_sim_disk_free(s->disks[i]);
    free(s->disks);
    for (size_t i = 0; i < s->n_mounts; i++)
        free(s->mounts[i].dir);
    free(s->mounts);
    cp_mutex_free(s->mu);
    cp_mutex_free(s->sleep_mu);
    cp_cond_free(s->sleep_cv);
    free(s);
}

static const cp_storage_ops sim_ops = {
    .list_disks = sim_list_disks,
    .get_disk = sim_get_disk,
    .set_disk_online = sim_set_disk_online,
    .make_disk_writable = sim_make_disk_writable,
    .rescan = sim_rescan,
    .init_gpt = sim_init_gpt,
    .list_partitions = sim_list_partitions,
    .create_basic_partition = sim_create_basic_partition,
    .list_volumes = sim_list_volumes,
    .get_volume = sim_get_volume,
    .volume_use = sim_volume_use,
    .read_volume_head = sim_read_volume_head,
    .format_volume = sim_format_volume,
    .grow_volume = sim_grow_volume,
    .flush_volume = sim_flush_volume,
    .add_mount_point = sim_add_mount_point,
    .remove_mount_point = sim_remove_mount_point,
    .volume_at = sim_volume_at,
    .drive_volume = sim_drive_volume,
    .destroy = sim_destroy,
};

unsigned cp_storage_sim_overlaps(const cp_storage_host *h)
{
    sim *s = h->ctx;
    cp_mutex_lock(s->mu);
    unsigned n = s->overlaps;
    cp_mutex_unlock(s->mu);
    return n;
}

unsigned cp_storage_sim_max_parallel(const cp_storage_host *h)
{
    sim *s = h->ctx;
    cp_mutex_lock(s->mu);
    unsigned n = s->max_running;
    cp_mutex_unlock(s->mu);
    return n;
}

static sim *sim_alloc_host(void)
{
    sim *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->mu = cp_mutex_new();
    s->sleep_mu = cp_mutex_new();
    s->sleep_cv = cp_cond_new();
    if (s->mu == NULL || s->sleep_mu == NULL || s->sleep_cv == NULL) {
        sim_destroy(s);
        return NULL;
    }
    return s;
}

static int finish_new(sim *s, int rc, cp_storage_host *out)
{
    if (rc != CP_OK) {
        sim_destroy(s);
        return rc;
    }
    out->ops = &sim_ops;
    out->ctx = s;
    return CP_OK;
}

int cp_storage_sim_new(const char *path, cp_storage_host *out, cp_error *e)
{
    sim *s = sim_alloc_host();
    if (s == NULL)
        return nomem(e);
    if (path == NULL)
        return finish_new(s, CP_OK, out);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return finish_new(
            s, cp_error_set(e, CP_E_NOT_FOUND, "storage simulator: cannot open fixture %s", path),
            out);
    yaml_parser_t parser;
    int rc = CP_OK;
    if (!yaml_parser_initialize(&parser)) {
        rc = nomem(e);
    } else {
        yaml_parser_set_input_file(&parser, f);
        rc = cp_sim_fixture_load(s, &parser, path, e);
        yaml_parser_delete(&parser);
    }
    fclose(f);
    return finish_new(s, rc, out);
}

int cp_storage_sim_new_from_string(const char *yaml, cp_storage_host *out, cp_error *e)
{
    sim *s = sim_alloc_host();
    if (s == NULL)
        return nomem(e);
    yaml_parser_t parser;
    int rc = CP_OK;
    if (!yaml_parser_initialize(&parser)) {
        rc = nomem(e);
    } else {
        yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, strlen(yaml));
        rc = cp_sim_fixture_load(s, &parser, "(string)", e);
        yaml_parser_delete(&parser);
    }
    return finish_new(s, rc, out);
}

/* In the simulator builds (csi-proxy-sim.exe, native) this is the default
 * host; storage_win.c defines it for csi-proxy.exe. */
int cp_storage_host_open_default(cp_storage_host *out, cp_error *e)
{
    const char *path = getenv(CP_STORAGE_SIM_FIXTURE_ENV);
    return cp_storage_sim_new(path != NULL && path[0] != '\0' ? path : NULL, out, e);
}
