/* storage_sim_internal.h - the storage simulator's state and what its
 * files share: storage_sim.c (the host, its operations table),
 * storage_op_sim.c (lookups, layout, the disk-operation protocol),
 * storage_disk_sim.c, storage_volume_sim.c and storage_mount_sim.c (the
 * operations), storage_fixture_sim.c (the YAML fixture that seeds it),
 * storage_desc_sim.c (a disk's identity as descriptor bytes),
 * storage_hotplug_sim.c (disks arriving and leaving). Not for other
 * modules. */
#ifndef CP_WINAPI_STORAGE_SIM_INTERNAL_H
#define CP_WINAPI_STORAGE_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "base/thread.h"
#include "host/storage.h"
#include "host/storage_ids.h"

#define MIB (1024ull * 1024ull)
#define DESC_MAX 1024
#define LOCATION_MAX 160

typedef struct sim_part {
    uint32_t number;
    uint64_t offset;
    uint64_t size;
    cp_part_kind kind;
    bool has_volume;
    char id[CP_VOLUME_ID_LEN + 1];
    char fs[16];       /* "" = RAW */
    uint64_t vol_size; /* file-system size */
    uint64_t used;
    char drive;     /* 0 or 'A'..'Z' */
    unsigned roles; /* CP_VOLUME_ROLE_* (fixture: volume roles) */
    uint8_t *head;  /* the volume's first bytes (fixture: volume bytes); NULL: zeros */
    size_t head_len;
} sim_part;

typedef struct sim_disk {
    uint32_t number;
    uint64_t size;
    uint64_t grow_to; /* size after the next rescan; 0 = none */
    bool online, boot, system;
    bool not_ready;       /* answers nothing: ERROR_NOT_READY (an empty virtual-media
                       drive, a disk vanishing mid-detach) */
    bool read_only;       /* DISK_ATTRIBUTE_READ_ONLY */
    bool write_protected; /* the media: no attribute makes it writable */
    cp_part_style style;
    uint8_t id_desc[DESC_MAX];
    size_t id_desc_len;
    uint8_t dev_desc[DESC_MAX];
    size_t dev_desc_len;
    char location[LOCATION_MAX];
    sim_part *parts;
    size_t n_parts;
    unsigned in_flight;
    int64_t volumes_at; /* cp_now_ms() when its volumes appear (came online) */
} sim_disk;

typedef struct sim_mount {
    char *dir;
    char id[CP_VOLUME_ID_LEN + 1];
} sim_mount;

typedef struct sim {
    cp_mutex *mu;
    sim_disk **disks; /* each disk stays where it is while an operation on
                       * it runs outside the mutex; disks come and go
                       * (storage_hotplug_sim.c) only between operations */
    size_t n_disks;
    sim_mount *mounts;
    size_t n_mounts;
    unsigned latency_ms;
    unsigned format_ms;  /* fixture format_ms: a format takes that much longer */
    unsigned arrival_ms; /* fixture volume_arrival_ms: volumes of a disk that
                          * comes online appear that much later, as Windows
                          * announces them asynchronously */
    cp_mutex *sleep_mu;
    cp_cond *sleep_cv;
    unsigned overlaps;
    unsigned running, max_running;
} sim;

/* Appends a partition to d (its array grows). CP_OK or CP_E_NOMEM. */
int cp_sim_add_part(sim_disk *d, const sim_part *p);

/* Sets d's STORAGE_DEVICE_DESCRIPTOR bytes from its strings (NULL: absent;
 * kept byte for byte) and STORAGE_BUS_TYPE. 0, or -1 when too long. */
int cp_sim_set_device(sim_disk *d, const char *vendor, const char *product, const char *serial,
                      uint32_t bus);

/* Gives d an identifier descriptor with no identifier in it. */
void cp_sim_no_idents(sim_disk *d);

/* Appends one STORAGE_IDENTIFIER (CP_SID_* code set, type, association)
 * to d's STORAGE_DEVICE_ID_DESCRIPTOR. 0, or -1 when too long. */
int cp_sim_add_ident(sim_disk *d, uint32_t code_set, uint32_t type, uint32_t assoc,
                     const uint8_t *val, size_t len);

/* Frees a disk and its partitions. */
void cp_sim_disk_free(sim_disk *d);

/* The simulator behind h; NULL when h is not a simulator host. */
sim *cp_sim_of(const cp_storage_host *h);

/* Seeds s (fresh, empty) from the YAML document the parser reads. name
 * names the source in messages. CP_OK, or CP_E_INVALID_ARGUMENT with e
 * naming the line and the problem (s may then hold some disks: the caller
 * destroys it). storage_fixture_sim.c. */
int cp_sim_fixture_load(sim *s, yaml_parser_t *parser, const char *name, cp_error *e);

/* --- storage_op_sim.c -------------------------------------------------------- */

/* n bytes (at least 1) of the caller's memory; NULL when out of memory. */
void *cp_sim_alloc(const cp_storage_alloc *a, size_t n);
char *cp_sim_strdup(const cp_storage_alloc *a, const char *s);

/* CP_E_NOMEM, with e saying so. */
int cp_sim_nomem(cp_error *e);

/* CP_E_NOT_FOUND naming the disk or the volume. */
int cp_sim_not_found_disk(cp_error *e, uint32_t number);
int cp_sim_not_found_volume(cp_error *e, const char *id);

/* Lookups, s->mu held. A volume is found only on an online disk whose
 * volumes have arrived (cp_sim_volumes_visible); *disk (may be NULL) gets
 * the disk holding it. */
sim_disk *cp_sim_find_disk(sim *s, uint32_t number);
bool cp_sim_volumes_visible(const sim_disk *d);
sim_part *cp_sim_find_volume(sim *s, const char *id, sim_disk **disk);

/* Where d's usable space ends (a GPT disk keeps its last 1 MiB), and the
 * size partition p can grow to: up to the next partition or that end. */
uint64_t cp_sim_usable_end(const sim_disk *d);
uint64_t cp_sim_part_max(const sim_disk *d, const sim_part *p);

/* Disk operations (storage_sim.h): fn runs on disk `number`, or on the
 * disk holding volume id with the volume's partition (looked up again
 * after the latency), with s->mu held, after the per-disk serialization
 * check and the latency (the fixture's, plus extra_ms) outside the mutex.
 * fn's status is the operation's; an unknown disk or volume is
 * CP_E_NOT_FOUND, an overlap CP_E_ABORTED. */
typedef int (*cp_sim_disk_fn)(sim *s, sim_disk *d, const void *arg, cp_error *e);
int cp_sim_on_disk(sim *s, uint32_t number, cp_sim_disk_fn fn, const void *arg, cp_error *e);
typedef int (*cp_sim_volume_fn)(sim *s, sim_disk *d, sim_part *p, const void *arg, cp_error *e);
int cp_sim_on_volume(sim *s, const char *id, unsigned extra_ms, cp_sim_volume_fn fn,
                     const void *arg, cp_error *e);

/* CP_E_PERMISSION_DENIED, as Windows' ERROR_WRITE_PROTECT for `what`, when
 * d is read-only or its media write-protected; else CP_OK. */
int cp_sim_need_writable(const sim_disk *d, const char *what, cp_error *e);

/* --- the operations (cp_storage_ops, host/storage.h) ------------------------ */

/* storage_disk_sim.c: disks and partitions */
int cp_sim_list_disks(void *ctx, const cp_storage_alloc *a, cp_disk_info **disks, size_t *n,
                      cp_error *e);
int cp_sim_get_disk(void *ctx, uint32_t number, const cp_storage_alloc *a, cp_disk_info *out,
                    cp_error *e);
int cp_sim_set_disk_online(void *ctx, uint32_t number, bool online, cp_error *e);
int cp_sim_make_disk_writable(void *ctx, uint32_t number, cp_error *e);
int cp_sim_rescan(void *ctx, cp_error *e);
int cp_sim_list_partitions(void *ctx, uint32_t number, const cp_storage_alloc *a,
                           cp_partition_info **parts, size_t *n, cp_error *e);
int cp_sim_init_gpt(void *ctx, uint32_t number, cp_error *e);
int cp_sim_create_basic_partition(void *ctx, uint32_t number, cp_error *e);

/* storage_volume_sim.c: volume reads, then disk operations on volumes */
int cp_sim_get_volume(void *ctx, const char *id, cp_volume_info *out, cp_error *e);
int cp_sim_volume_use(void *ctx, const char *id, cp_volume_use *out, cp_error *e);
int cp_sim_read_volume_head(void *ctx, const char *id, uint8_t *buf, size_t len, size_t *got,
                            cp_error *e);
int cp_sim_list_volumes(void *ctx, uint32_t disk, uint32_t partition, const cp_storage_alloc *a,
                        char ***ids, size_t *n, cp_error *e);
int cp_sim_format_volume(void *ctx, const char *id, cp_error *e);
int cp_sim_grow_volume(void *ctx, const char *id, uint64_t size, cp_error *e);
int cp_sim_flush_volume(void *ctx, const char *id, cp_error *e);

/* storage_mount_sim.c: folders and drive letters */
int cp_sim_volume_at(void *ctx, const char *dir, char *id, size_t idlen, cp_error *e);
int cp_sim_drive_volume(void *ctx, char letter, char *id, size_t idlen, cp_error *e);
int cp_sim_add_mount_point(void *ctx, const char *id, const char *dir, cp_error *e);
int cp_sim_remove_mount_point(void *ctx, const char *dir, cp_error *e);

#endif
