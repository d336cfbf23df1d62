/* storage_sim.h - the simulated storage host (tests, the demo,
 * csi-proxy-sim.exe; never csi-proxy.exe).
 *
 * Disks, GPT/MBR partitions, volumes with "\\?\Volume{guid}\" IDs, file
 * systems, free space, mount points and drive letters, seeded from a YAML
 * fixture and kept in memory across calls (test/fixtures/storage.yaml
 * documents the format). It reproduces the observable behaviour of a
 * Windows host as upstream csi-proxy sees it through WMI; the Win32 host
 * (storage_win.c) is what the product runs.
 *
 * Thread-safe: one mutex guards the state. Operations that change a disk
 * or its volumes are "disk operations": each waits `latency_ms` (fixture)
 * outside the mutex, and the simulator checks that the caller serialized
 * them per disk: a disk operation starting while another one on the same
 * disk is in flight fails with CP_E_ABORTED ("overlapping operations on
 * disk N") and is counted (cp_storage_sim_overlaps). Different disks
 * proceed in parallel.
 */
#ifndef CP_WINAPI_STORAGE_SIM_H
#define CP_WINAPI_STORAGE_SIM_H

#include "host/mountpoints.h"
#include "host/storage.h"

/* Loads the fixture file at path (NULL: an empty host, no disks). CP_OK and
 * *out set, or CP_E_INVALID_ARGUMENT with e naming the file, the line and
 * the problem (CP_E_NOT_FOUND when the file cannot be opened). Release with
 * out->ops->destroy(out->ctx). */
int cp_storage_sim_new(const char *path, cp_storage_host *out, cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

/* Same, from YAML text (unit tests). */
int cp_storage_sim_new_from_string(const char *yaml, cp_storage_host *out, cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

/* How many disk operations overlapped on one disk so far (0 when every
 * caller serialized per disk). h must be a simulator host. */
unsigned cp_storage_sim_overlaps(const cp_storage_host *h);

/* How many disk operations ran at the same time at most, over all disks. */
unsigned cp_storage_sim_max_parallel(const cp_storage_host *h);

/* The simulator's mount points, for the file-system host of the same build
 * (mountpoints.h): CP_OK and *out set, valid while h lives;
 * CP_E_INVALID_ARGUMENT when h is not a simulator host. */
int cp_storage_sim_mount_points(const cp_storage_host *h, cp_mount_points *out);

/* --- disks that arrive and leave while the host runs ---------------------
 * What another simulator uses to make a device appear (an iSCSI LUN after
 * a login, iscsi_sim.c) and disappear (after the logout), as Plug and Play
 * does on Windows. storage_hotplug_sim.c. */

typedef struct cp_storage_sim_disk {
    uint64_t size;
    /* STORAGE_DEVICE_DESCRIPTOR strings, kept byte for byte (NULL: none),
     * and STORAGE_BUS_TYPE (9: iSCSI). */
    const char *vendor, *product, *serial;
    uint32_t bus_type;
    /* The page 83 device identifier: a binary NAA designator. */
    uint8_t naa[16];
    size_t naa_len;
    /* SCSI address, for the location "Integrated : Adapter P : Port 0 :
     * Target T : LUN L". */
    uint32_t port, target, lun;
} cp_storage_sim_disk;

/* What a removed disk held (partition style, partitions, volumes, their
 * IDs and file systems), kept by its owner until the disk comes back: the
 * LUN of a target keeps its data between logins. */
typedef struct cp_storage_sim_media cp_storage_sim_media;
void cp_storage_sim_media_free(cp_storage_sim_media *m);

/* Whether h is a simulator host, which the functions below take. */
bool cp_storage_sim_takes_disks(const cp_storage_host *h);

/* Adds the disk, online, with the lowest disk number no disk has, in
 * *number: RAW (uninitialised, no partition) when media is NULL, else with
 * what media holds (then taken over: do not free it). CP_OK;
 * CP_E_INVALID_ARGUMENT when h is not a simulator host or the identity is
 * too long; CP_E_NOMEM. */
int cp_storage_sim_add_disk(const cp_storage_host *h, const cp_storage_sim_disk *d,
                            cp_storage_sim_media *media, uint32_t *number, cp_error *e);

/* Removes the disks `numbers` (n of them; a number no disk has is
 * skipped) with their partitions and volumes, as a device removal on
 * Windows: a folder where one of their volumes was mounted stays a mount
 * point of a volume that is gone (dangling), as Windows leaves its reparse
 * point; the fs host then sees a plain folder there, and removing it drops
 * the mount point (mountpoints.h). When media is not NULL, media[i] gets
 * what disk numbers[i] held (NULL for a number skipped). All or none:
 * CP_E_FAILED_PRECONDITION, naming the disk, when an operation on one of
 * them is running (a handle open on it: Windows refuses to remove the
 * device); CP_E_INVALID_ARGUMENT when h is not a simulator host. */
int cp_storage_sim_remove_disks(const cp_storage_host *h, const uint32_t *numbers, size_t n,
                                cp_storage_sim_media **media, cp_error *e);

#endif
