/* storage_sim.h - the simulated storage host (tests, the demo,
 * csi-proxy-sim.exe; never csi-proxy.exe).
 *
 * Disks, GPT/MBR partitions, volumes with "\\?\Volume{guid}\" IDs, file
 * systems, free space, mount points and drive letters, seeded from a YAML
 * fixture and kept in memory across calls (test/fixtures/storage.yaml
 * documents the format). It reproduces the observable behaviour of a
 * Windows host as upstream csi-proxy sees it through WMI; the Win32 host
 * (storage_win32.c) is what the product runs.
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

#include "mountpoints.h"
#include "storage.h"

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

#endif
