/* storage_hotplug_sim.c - disks that arrive and leave while the simulated
 * storage host runs (storage_sim.h): the storage side of an iSCSI login
 * and logout in the simulators. No iSCSI knowledge here: a disk with an
 * identity (and maybe the contents it had) arrives, a disk number leaves.
 *
 * Locking: both take the simulator's mutex, as every operation does. A
 * caller holding a lock of its own (iscsi_sim.c holds its initiator's)
 * takes it before this one, never the other way round: the storage
 * simulator calls nobody. A disk is a separate allocation, so disks
 * arriving or leaving do not move the others while an operation on them
 * runs outside the mutex; a disk with an operation running is not
 * removed. */
#include "sim/storage_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/storage_sim_internal.h"

struct cp_storage_sim_media {
    sim_disk *disk; /* unlinked from any host */
};

void cp_storage_sim_media_free(cp_storage_sim_media *m)
{
    if (m != NULL)
        cp_sim_disk_free(m->disk);
    free(m);
}

static int not_sim(cp_error *e)
{
    return cp_error_set(e, CP_E_INVALID_ARGUMENT, "storage host is not a simulator");
}

bool cp_storage_sim_takes_disks(const cp_storage_host *h)
{
    return cp_sim_of(h) != NULL;
}

static long index_of(const sim *s, uint32_t number)
{
    for (size_t i = 0; i < s->n_disks; i++)
        if (s->disks[i]->number == number)
            return (long)i;
    return -1;
}

/* A blank disk with spec's identity, or NULL (e set). */
static sim_disk *blank(const cp_storage_sim_disk *spec, cp_error *e)
{
    sim_disk *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        cp_error_set(e, CP_E_NOMEM, "storage simulator: out of memory");
        return NULL;
    }
    d->size = spec->size;
    d->style = CP_PART_STYLE_RAW;
    if (cp_sim_set_device(d, spec->vendor, spec->product, spec->serial, spec->bus_type) != 0 ||
        cp_sim_add_ident(d, CP_SID_CODESET_BINARY, CP_SID_TYPE_FCPH_NAME, CP_SID_ASSOC_DEVICE,
                         spec->naa, spec->naa_len) != 0) {
        cp_sim_disk_free(d);
        cp_error_set(e, CP_E_INVALID_ARGUMENT,
                     "storage simulator: the arriving disk's identity is too long");
        return NULL;
    }
    return d;
}

int cp_storage_sim_add_disk(const cp_storage_host *h, const cp_storage_sim_disk *spec,
                            cp_storage_sim_media *media, uint32_t *number, cp_error *e)
{
    sim *s = cp_sim_of(h);
    if (s == NULL)
        return not_sim(e);
    sim_disk *d = media != NULL ? media->disk : blank(spec, e);
    if (d == NULL)
        return e->status;
    d->online = true;
    d->in_flight = 0;
    d->volumes_at = 0;
    cp_location_format("", spec->port, 0, spec->target, spec->lun, d->location,
                       sizeof(d->location));
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    sim_disk **nd = realloc(s->disks, (s->n_disks + 1) * sizeof(*nd));
    if (nd == NULL) {
        rc = cp_error_set(e, CP_E_NOMEM, "storage simulator: out of memory");
    } else {
        s->disks = nd;
        uint32_t n = 0;
        while (index_of(s, n) >= 0)
            n++;
        d->number = n;
        s->disks[s->n_disks++] = d;
        *number = n;
    }
    cp_mutex_unlock(s->mu);
    if (rc != CP_OK && media == NULL)
        cp_sim_disk_free(d);
    if (rc == CP_OK)
        free(media);
    return rc;
}

int cp_storage_sim_remove_disks(const cp_storage_host *h, const uint32_t *numbers, size_t n,
                                cp_storage_sim_media **media, cp_error *e)
{
    sim *s = cp_sim_of(h);
    if (s == NULL)
        return not_sim(e);
    int rc = CP_OK;
    cp_storage_sim_media **kept = calloc(n > 0 ? n : 1, sizeof(*kept));
    if (kept == NULL)
        return cp_error_set(e, CP_E_NOMEM, "storage simulator: out of memory");
    for (size_t k = 0; media != NULL && k < n; k++)
        media[k] = NULL;
    for (size_t k = 0; media != NULL && k < n && rc == CP_OK; k++)
        if ((kept[k] = calloc(1, sizeof(*kept[k]))) == NULL)
            rc = cp_error_set(e, CP_E_NOMEM, "storage simulator: out of memory");
    cp_mutex_lock(s->mu);
    for (size_t k = 0; rc == CP_OK && k < n; k++) {
        long i = index_of(s, numbers[k]);
        if (i >= 0 && s->disks[i]->in_flight > 0)
            rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "disk %u is in use (an operation on it is running)",
                              (unsigned)numbers[k]);
    }
    for (size_t k = 0; rc == CP_OK && k < n; k++) {
        long i = index_of(s, numbers[k]);
        if (i < 0)
            continue;
        sim_disk *d = s->disks[i];
        /* Keep the others' order: listings stay in disk order. */
        memmove(&s->disks[i], &s->disks[i + 1], (s->n_disks - (size_t)i - 1) * sizeof(*s->disks));
        s->n_disks--;
        if (media != NULL) {
            kept[k]->disk = d;
            media[k] = kept[k];
            kept[k] = NULL;
        } else {
            cp_sim_disk_free(d);
        }
    }
    cp_mutex_unlock(s->mu);
    for (size_t k = 0; k < n; k++)
        free(kept[k]); /* the wrappers not handed over */
    free(kept);
    return rc;
}
