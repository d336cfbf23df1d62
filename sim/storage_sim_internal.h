/* storage_sim_internal.h - the simulator's state, shared by its two
 * files: storage_sim.c (the ops) and storage_fixture_sim.c (the YAML
 * fixture that seeds it). Not for other modules. */
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

#endif
