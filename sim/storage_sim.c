/* storage_sim.c - the simulated storage host (see storage_sim.h): its
 * state's life (a fixture loaded, the host destroyed) and its operations
 * table. The operations live by job: storage_disk_sim.c (disks,
 * partitions), storage_volume_sim.c (volumes), storage_mount_sim.c (mount
 * points, drive letters), on storage_op_sim.c (lookups, layout rules, the
 * disk-operation protocol); storage_fixture_sim.c reads the fixture,
 * storage_desc_sim.c builds a disk's descriptor bytes and
 * storage_hotplug_sim.c adds and removes disks at run time.
 *
 * State: an array of disks, each with its partitions (a partition may
 * carry a volume), plus a table of mount points. The identity a disk
 * reports is kept as the raw descriptor bytes Windows would return, built
 * from the fixture, so storage_ids.c formats simulated and real disks the
 * same way.
 */
#include "sim/storage_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/simfixture_sim.h"
#include "sim/storage_sim_internal.h"

void cp_sim_disk_free(sim_disk *d)
{
    for (size_t i = 0; d != NULL && i < d->n_parts; i++)
        free(d->parts[i].head);
    if (d != NULL)
        free(d->parts);
    free(d);
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
    .list_disks = cp_sim_list_disks,
    .get_disk = cp_sim_get_disk,
    .set_disk_online = cp_sim_set_disk_online,
    .make_disk_writable = cp_sim_make_disk_writable,
    .rescan = cp_sim_rescan,
    .init_gpt = cp_sim_init_gpt,
    .list_partitions = cp_sim_list_partitions,
    .create_basic_partition = cp_sim_create_basic_partition,
    .list_volumes = cp_sim_list_volumes,
    .get_volume = cp_sim_get_volume,
    .volume_use = cp_sim_volume_use,
    .read_volume_head = cp_sim_read_volume_head,
    .format_volume = cp_sim_format_volume,
    .grow_volume = cp_sim_grow_volume,
    .flush_volume = cp_sim_flush_volume,
    .add_mount_point = cp_sim_add_mount_point,
    .remove_mount_point = cp_sim_remove_mount_point,
    .volume_at = cp_sim_volume_at,
    .drive_volume = cp_sim_drive_volume,
    .destroy = sim_destroy,
};

/* The serialization counters of the simulator behind h, read together. */
static void counters(const cp_storage_host *h, unsigned *overlaps, unsigned *max_running)
{
    sim *s = h->ctx;
    cp_mutex_lock(s->mu);
    *overlaps = s->overlaps;
    *max_running = s->max_running;
    cp_mutex_unlock(s->mu);
}

unsigned cp_storage_sim_overlaps(const cp_storage_host *h)
{
    unsigned overlaps, max_running;
    counters(h, &overlaps, &max_running);
    return overlaps;
}

unsigned cp_storage_sim_max_parallel(const cp_storage_host *h)
{
    unsigned overlaps, max_running;
    counters(h, &overlaps, &max_running);
    return max_running;
}

sim *cp_sim_of(const cp_storage_host *h)
{
    return h != NULL && h->ops == &sim_ops ? h->ctx : NULL;
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
        return cp_sim_nomem(e);
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
        rc = cp_sim_nomem(e);
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
        return cp_sim_nomem(e);
    yaml_parser_t parser;
    int rc = CP_OK;
    if (!yaml_parser_initialize(&parser)) {
        rc = cp_sim_nomem(e);
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
    return cp_storage_sim_new(cp_simfx_default_path(), out, e);
}
