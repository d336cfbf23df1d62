/* storage_mount_sim.c - the mount points and drive letters of the
 * simulated storage host (storage_sim.h): a table of folder -> volume
 * (folders compared as Windows does, ASCII case ignored), as the storage
 * host's operations and as the file-system host sees it (mountpoints.h). */
#include "sim/storage_sim.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/storage_sim_internal.h"

static bool same_dir(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

static sim_mount *find_mount(sim *s, const char *dir)
{
    for (size_t i = 0; i < s->n_mounts; i++)
        if (same_dir(s->mounts[i].dir, dir))
            return &s->mounts[i];
    return NULL;
}

static int not_mounted(cp_error *e, const char *dir)
{
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
}

/* Forgets mount point m (its slot takes the last one); s->mu held. */
static void forget(sim *s, sim_mount *m)
{
    free(m->dir);
    *m = s->mounts[--s->n_mounts];
}

static int mount(sim *s, sim_disk *d, sim_part *p, const void *arg, cp_error *e)
{
    (void)d;
    const char *dir = arg;
    int rc = CP_OK;
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
            rc = cp_sim_nomem(e);
        } else {
            s->mounts[s->n_mounts].dir = copy;
            snprintf(s->mounts[s->n_mounts].id, sizeof(s->mounts[0].id), "%s", p->id);
            s->n_mounts++;
        }
    }
    return rc;
}

int cp_sim_add_mount_point(void *ctx, const char *id, const char *dir, cp_error *e)
{
    return cp_sim_on_volume(ctx, id, 0, mount, dir, e);
}

static int unmount(sim *s, sim_disk *d, sim_part *p, const void *arg, cp_error *e)
{
    (void)d;
    (void)p;
    const char *dir = arg;
    sim_mount *m = find_mount(s, dir);
    if (m == NULL)
        return not_mounted(e, dir);
    forget(s, m);
    return CP_OK;
}

int cp_sim_remove_mount_point(void *ctx, const char *dir, cp_error *e)
{
    sim *s = ctx;
    char id[CP_VOLUME_ID_LEN + 1];
    cp_mutex_lock(s->mu);
    const sim_mount *m = find_mount(s, dir);
    if (m != NULL)
        snprintf(id, sizeof(id), "%s", m->id);
    cp_mutex_unlock(s->mu);
    if (m == NULL)
        return not_mounted(e, dir);
    return cp_sim_on_volume(s, id, 0, unmount, dir, e);
}

int cp_sim_volume_at(void *ctx, const char *dir, char *id, size_t idlen, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    const sim_mount *m = find_mount(s, dir);
    int rc = m == NULL ? not_mounted(e, dir) : CP_OK;
    if (rc == CP_OK)
        snprintf(id, idlen, "%s", m->id);
    cp_mutex_unlock(s->mu);
    return rc;
}

int cp_sim_drive_volume(void *ctx, char letter, char *id, size_t idlen, cp_error *e)
{
    sim *s = ctx;
    char up = (char)toupper((unsigned char)letter);
    int rc = cp_error_set(e, CP_E_NOT_FOUND, "no volume has drive letter %c:", up);
    cp_mutex_lock(s->mu);
    for (size_t i = 0; rc != CP_OK && i < s->n_disks; i++) {
        const sim_disk *d = s->disks[i];
        for (size_t j = 0; cp_sim_volumes_visible(d) && j < d->n_parts; j++)
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
    int rc = m != NULL && cp_sim_find_volume(s, m->id, NULL) != NULL ? CP_OK
                                                                     : CP_E_FAILED_PRECONDITION;
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
        forget(s, m);
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

int cp_storage_sim_mount_points(const cp_storage_host *h, cp_mount_points *out)
{
    if (cp_sim_of(h) == NULL)
        return CP_E_INVALID_ARGUMENT;
    out->ctx = h->ctx;
    out->volume_at = mp_volume_at;
    out->drop = mp_drop;
    return CP_OK;
}
