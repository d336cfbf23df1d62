/* storage_volume_sim.c - the volume operations of the simulated storage
 * host (storage_sim.h): listing and describing volumes, formatting (NTFS
 * with size/128 bytes of metadata used), reading their first bytes,
 * growing a partition into the room after it, flushing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "sim/storage_sim_internal.h"

/* A volume read (not a disk operation): fn fills out from the volume with
 * this id on an online disk, s->mu held. */
typedef void (*read_fn)(const sim_disk *d, const sim_part *p, void *out);

static int read_volume(sim *s, const char *id, read_fn fn, void *out, cp_error *e)
{
    cp_mutex_lock(s->mu);
    sim_disk *d = NULL;
    const sim_part *p = cp_sim_find_volume(s, id, &d);
    if (p != NULL)
        fn(d, p, out);
    cp_mutex_unlock(s->mu);
    return p != NULL ? CP_OK : cp_sim_not_found_volume(e, id);
}

int cp_sim_list_volumes(void *ctx, uint32_t disk, uint32_t partition, const cp_storage_alloc *a,
                        char ***ids, size_t *n, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_disk *d = cp_sim_find_disk(s, disk);
    int rc = d == NULL ? cp_sim_not_found_disk(e, disk) : CP_OK;
    char **out = NULL;
    size_t k = 0;
    if (rc == CP_OK && (out = cp_sim_alloc(a, (d->n_parts + 1) * sizeof(*out))) == NULL)
        rc = cp_sim_nomem(e);
    for (size_t i = 0; rc == CP_OK && cp_sim_volumes_visible(d) && i < d->n_parts; i++) {
        const sim_part *p = &d->parts[i];
        if (!p->has_volume || (partition != 0 && p->number != partition))
            continue;
        if ((out[k++] = cp_sim_strdup(a, p->id)) == NULL)
            rc = cp_sim_nomem(e);
    }
    if (rc == CP_OK) {
        *ids = out;
        *n = k;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static void describe(const sim_disk *d, const sim_part *p, void *arg)
{
    cp_volume_info *out = arg;
    memset(out, 0, sizeof(*out));
    out->disk_number = d->number;
    out->partition_number = p->number;
    out->formatted = p->fs[0] != '\0';
    snprintf(out->fs, sizeof(out->fs), "%s", p->fs);
    out->size = p->vol_size;
    /* A RAW volume has no free space to report (MSFT_Volume gives 0). */
    out->size_remaining = out->formatted && p->used < p->vol_size ? p->vol_size - p->used : 0;
    out->partition_size = p->size;
    out->partition_max = cp_sim_part_max(d, p);
}

int cp_sim_get_volume(void *ctx, const char *id, cp_volume_info *out, cp_error *e)
{
    return read_volume(ctx, id, describe, out, e);
}

/* The fixture's roles; a simulated volume lives on one partition. */
static void use(const sim_disk *d, const sim_part *p, void *arg)
{
    cp_volume_use *out = arg;
    memset(out, 0, sizeof(*out));
    out->roles = p->roles;
    out->disks[0] = d->number;
    out->n_disks = 1;
}

int cp_sim_volume_use(void *ctx, const char *id, cp_volume_use *out, cp_error *e)
{
    return read_volume(ctx, id, use, out, e);
}

typedef struct head_read {
    uint8_t *buf;
    size_t len, got;
} head_read;

/* The volume's bytes: the fixture's, zeros elsewhere. */
static void head(const sim_disk *d, const sim_part *p, void *arg)
{
    (void)d;
    head_read *r = arg;
    r->got = p->size < r->len ? (size_t)p->size : r->len;
    memset(r->buf, 0, r->got);
    if (p->head != NULL)
        memcpy(r->buf, p->head, p->head_len < r->got ? p->head_len : r->got);
}

int cp_sim_read_volume_head(void *ctx, const char *id, uint8_t *buf, size_t len, size_t *got,
                            cp_error *e)
{
    head_read r = {.buf = buf, .len = len};
    int rc = read_volume(ctx, id, head, &r, e);
    if (rc == CP_OK)
        *got = r.got;
    return rc;
}

static int format(sim *s, sim_disk *d, sim_part *p, const void *arg, cp_error *e)
{
    (void)s;
    (void)arg;
    int rc = cp_sim_need_writable(d, "MSFT_Volume.Format of volume on", e);
    if (rc == CP_OK) {
        snprintf(p->fs, sizeof(p->fs), "NTFS");
        p->vol_size = p->size;
        p->used = p->size / 128;
        free(p->head); /* the new file system's boot sector replaces what was there */
        p->head = NULL;
        p->head_len = 0;
    }
    return rc;
}

int cp_sim_format_volume(void *ctx, const char *id, cp_error *e)
{
    sim *s = ctx;
    /* Each format is logged: tests count how many ran. */
    CP_LOG_INFO("storage simulator: formatting volume %s", id);
    return cp_sim_on_volume(s, id, s->format_ms, format, NULL, e);
}

static int grow(sim *s, sim_disk *d, sim_part *p, const void *arg, cp_error *e)
{
    (void)s;
    uint64_t size = *(const uint64_t *)arg;
    uint64_t max = cp_sim_part_max(d, p);
    int rc = cp_sim_need_writable(d, "IOCTL_DISK_GROW_PARTITION", e);
    if (rc == CP_OK && (size < p->size || size > max))
        rc = cp_error_set(e, CP_E_OUT_OF_RANGE,
                          "cannot resize the partition of volume %s to %llu bytes (it has %llu, "
                          "at most %llu)",
                          p->id, (unsigned long long)size, (unsigned long long)p->size,
                          (unsigned long long)max);
    if (rc == CP_OK) {
        p->size = size;
        p->vol_size = size;
    }
    return rc;
}

int cp_sim_grow_volume(void *ctx, const char *id, uint64_t size, cp_error *e)
{
    return cp_sim_on_volume(ctx, id, 0, grow, &size, e);
}

/* Nothing to write back: the operation's checks and latency only. */
static int flush(sim *s, sim_disk *d, sim_part *p, const void *arg, cp_error *e)
{
    (void)s;
    (void)d;
    (void)p;
    (void)arg;
    (void)e;
    return CP_OK;
}

int cp_sim_flush_volume(void *ctx, const char *id, cp_error *e)
{
    return cp_sim_on_volume(ctx, id, 0, flush, NULL, e);
}
