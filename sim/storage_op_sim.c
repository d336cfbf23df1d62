/* storage_op_sim.c - what every operation of the simulated storage host
 * (storage_sim.h) builds on: finding disks and volumes, the layout rules
 * (usable space, room to grow), the common errors, and the disk-operation
 * protocol: the per-disk serialization check and the latency that passes
 * outside the mutex. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/storage_sim_internal.h"

void *cp_sim_alloc(const cp_storage_alloc *a, size_t n)
{
    return a->alloc(a->actx, n > 0 ? n : 1);
}

char *cp_sim_strdup(const cp_storage_alloc *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = cp_sim_alloc(a, n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

int cp_sim_nomem(cp_error *e)
{
    return cp_error_set(e, CP_E_NOMEM, "storage simulator: out of memory");
}

sim_disk *cp_sim_find_disk(sim *s, uint32_t number)
{
    for (size_t i = 0; i < s->n_disks; i++)
        if (s->disks[i]->number == number)
            return s->disks[i];
    return NULL;
}

/* Whether the disk's volumes exist: it is online and they have arrived. */
bool cp_sim_volumes_visible(const sim_disk *d)
{
    return d->online && (d->volumes_at == 0 || cp_now_ms() >= d->volumes_at);
}

/* The volume with this (normalized) id on an online disk. */
sim_part *cp_sim_find_volume(sim *s, const char *id, sim_disk **disk)
{
    for (size_t i = 0; i < s->n_disks; i++) {
        sim_disk *d = s->disks[i];
        if (!cp_sim_volumes_visible(d))
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

uint64_t cp_sim_usable_end(const sim_disk *d)
{
    uint64_t end = d->style == CP_PART_STYLE_GPT ? d->size - MIB : d->size;
    return d->size < 2 * MIB ? 0 : end;
}

/* Room partition p can grow into: up to the next partition or the end. */
uint64_t cp_sim_part_max(const sim_disk *d, const sim_part *p)
{
    uint64_t limit = cp_sim_usable_end(d);
    for (size_t i = 0; i < d->n_parts; i++) {
        const sim_part *q = &d->parts[i];
        if (q != p && q->offset >= p->offset + p->size && q->offset < limit)
            limit = q->offset;
    }
    return limit > p->offset ? limit - p->offset : p->size;
}

int cp_sim_not_found_disk(cp_error *e, uint32_t number)
{
    return cp_error_set(e, CP_E_NOT_FOUND, "disk %u not found", (unsigned)number);
}

int cp_sim_not_found_volume(cp_error *e, const char *id)
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
    sim_disk *d = cp_sim_find_disk(s, number);
    int rc = d == NULL ? cp_sim_not_found_disk(e, number) : begin_op_locked(s, d, e);
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
static int begin_volume(sim *s, const char *id, unsigned extra_ms, sim_disk **disk, sim_part **part,
                        cp_error *e)
{
    cp_mutex_lock(s->mu);
    sim_disk *d = NULL;
    int rc = cp_sim_find_volume(s, id, &d) == NULL ? cp_sim_not_found_volume(e, id)
                                                   : begin_op_locked(s, d, e);
    cp_mutex_unlock(s->mu);
    if (rc != CP_OK)
        return rc;
    sim_sleep_ms(s, s->latency_ms + extra_ms);
    cp_mutex_lock(s->mu);
    sim_part *p = cp_sim_find_volume(s, id, NULL);
    if (p == NULL) { /* its disk went offline meanwhile */
        cp_mutex_unlock(s->mu);
        end_op(s, d);
        return cp_sim_not_found_volume(e, id);
    }
    *disk = d;
    *part = p;
    return CP_OK;
}

static void finish(sim *s, sim_disk *d)
{
    cp_mutex_unlock(s->mu);
    end_op(s, d);
}

int cp_sim_on_disk(sim *s, uint32_t number, cp_sim_disk_fn fn, const void *arg, cp_error *e)
{
    sim_disk *d = NULL;
    int rc = begin_disk(s, number, &d, e);
    if (rc != CP_OK)
        return rc;
    rc = fn(s, d, arg, e);
    finish(s, d);
    return rc;
}

int cp_sim_on_volume(sim *s, const char *id, unsigned extra_ms, cp_sim_volume_fn fn,
                     const void *arg, cp_error *e)
{
    sim_disk *d = NULL;
    sim_part *p = NULL;
    int rc = begin_volume(s, id, extra_ms, &d, &p, e);
    if (rc != CP_OK)
        return rc;
    rc = fn(s, d, p, arg, e);
    finish(s, d);
    return rc;
}

/* A write to a read-only disk fails as Windows' does (ERROR_WRITE_PROTECT). */
int cp_sim_need_writable(const sim_disk *d, const char *what, cp_error *e)
{
    if (d->read_only || d->write_protected)
        return cp_error_set(e, CP_E_PERMISSION_DENIED, "%s disk %u: The media is write protected.",
                            what, (unsigned)d->number);
    return CP_OK;
}
