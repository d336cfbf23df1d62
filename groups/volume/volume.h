/* volume.h - the volume group: version-agnostic request handling and the
 * six version tables (v1alpha1, v1beta1, v1beta2, v1beta3, v1, v2alpha1; 56
 * RPCs).
 *
 * Every version maps its messages onto cp_volume_request /
 * cp_volume_response by field name (`path` and `mount` of old versions land
 * in target_path, `size` in size_bytes); the handlers are the union of all
 * RPCs (WIRE-API §7.2). Legacy names point at their successors and keep
 * upstream's "Forward to <RPC> failed, err=..." wording in their errors:
 * DismountVolume -> UnmountVolume, VolumeStats -> GetVolumeStats,
 * GetVolumeDiskNumber -> GetDiskNumberFromVolumeID, GetVolumeIDFromMount ->
 * GetVolumeIDFromTargetPath.
 *
 * Upstream's observable behaviour is kept: IsVolumeFormatted is true for any
 * file system; ResizeVolume with size 0 grows to the maximum, does nothing
 * when the growth would be under 100 MiB and never shrinks; mounting a
 * volume where it is already mounted succeeds; ListVolumesOnDisk with
 * partition 0 (and every old version) lists all partitions.
 *
 * Beyond upstream (which answers every failure UNKNOWN and checks nothing):
 *   INVALID_ARGUMENT     empty fields (upstream's text), a volume ID that is
 *                        not "\\?\Volume{GUID}\", a negative size, a mount
 *                        path outside -kubelet-path/-working-dir
 *                        (groups/common/hostpath.h, the filesystem rules)
 *   NOT_FOUND            unknown disk or volume (named), a missing
 *                        directory
 *   FAILED_PRECONDITION  a volume Windows needs, for every call that changes
 *                        a volume or its mount points (MountVolume,
 *                        UnmountVolume/DismountVolume, FormatVolume,
 *                        ResizeVolume, WriteVolumeCache): the system, boot,
 *                        page-file and crash-dump volumes wherever they
 *                        live, and every volume on the boot or system disk
 *                        (the message names the volume and the reason; the
 *                        read-only calls still answer for them); a
 *                        directory that is not a mounted folder
 *                        (GetVolumeIDFromTargetPath); a directory mounted
 *                        with another volume (MountVolume, UnmountVolume)
 *   OUT_OF_RANGE         a size larger than the partition can grow to
 * UnmountVolume of a directory that is no longer a mount point succeeds
 * (a retry after a timeout); upstream fails it. Calls on one disk are
 * serialized, through the disk that holds the volume.
 */
#ifndef CP_GROUPS_VOLUME_H
#define CP_GROUPS_VOLUME_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/method.h"
#include "groups/common/storagegroup.h"

typedef struct cp_volume_request {
    uint32_t disk_number;
    uint32_t partition_number; /* 0 = every partition */
    const char *volume_id;
    const char *target_path; /* target_path, path (MountVolume, DismountVolume), mount */
    int64_t size_bytes;      /* size_bytes, size */
} cp_volume_request;

typedef struct cp_volume_response {
    const char **volume_ids; /* ListVolumesOnDisk */
    size_t n_volume_ids;
    bool formatted;
    int64_t total_bytes;   /* GetVolumeStats; volumeSize */
    int64_t used_bytes;    /* GetVolumeStats; volumeUsedSize */
    uint32_t disk_number;  /* GetDiskNumberFromVolumeID */
    int64_t disk_number64; /* GetVolumeDiskNumber's int64 diskNumber */
    const char *volume_id; /* GetVolumeIDFromTargetPath, ...FromMount, GetClosest... */
} cp_volume_response;

int cp_volume_handle_list(cp_call *call, const void *req, void *resp);
int cp_volume_handle_mount(cp_call *call, const void *req, void *resp);
int cp_volume_handle_unmount(cp_call *call, const void *req, void *resp);
int cp_volume_handle_is_formatted(cp_call *call, const void *req, void *resp);
int cp_volume_handle_format(cp_call *call, const void *req, void *resp);
int cp_volume_handle_resize(cp_call *call, const void *req, void *resp);
int cp_volume_handle_stats(cp_call *call, const void *req, void *resp);
int cp_volume_handle_disk_number(cp_call *call, const void *req, void *resp);
int cp_volume_handle_id_from_target(cp_call *call, const void *req, void *resp);
int cp_volume_handle_closest_id(cp_call *call, const void *req, void *resp);
int cp_volume_handle_flush(cp_call *call, const void *req, void *resp);

/* ListVolumesOnDisk of v1alpha1..v1beta2: disk_id is a decimal string. */
int cp_volume_conv_list_legacy(cp_call *call, const ProtobufCMessage *in, void *req);
/* volume_ids (repeated string), every version. */
int cp_volume_conv_list(cp_call *call, const void *resp, ProtobufCMessage *out);

extern const cp_fieldmap cp_volume_map_disk_partition[]; /* disk_number, partition_number */
extern const cp_fieldmap cp_volume_map_id[];             /* volume_id */
extern const cp_fieldmap cp_volume_map_id_path[];        /* volume_id, path */
extern const cp_fieldmap cp_volume_map_id_target[];      /* volume_id, target_path */
extern const cp_fieldmap cp_volume_map_id_size[];        /* volume_id, size */
extern const cp_fieldmap cp_volume_map_id_size_bytes[];  /* volume_id, size_bytes */
extern const cp_fieldmap cp_volume_map_mount[];          /* mount */
extern const cp_fieldmap cp_volume_map_target[];         /* target_path */
extern const cp_fieldmap cp_volume_map_formatted[];      /* formatted */
extern const cp_fieldmap cp_volume_map_stats[];          /* total_bytes, used_bytes */
extern const cp_fieldmap cp_volume_map_volume_stats[];   /* volumeSize, volumeUsedSize */
extern const cp_fieldmap cp_volume_map_disk_number[];    /* disk_number (uint32) */
extern const cp_fieldmap cp_volume_map_disk_number64[];  /* diskNumber (int64) */
extern const cp_fieldmap cp_volume_map_volume_id[];      /* volume_id (response) */

extern const cp_service_def cp_volume_v1alpha1_def;
extern const cp_service_def cp_volume_v1beta1_def;
extern const cp_service_def cp_volume_v1beta2_def;
extern const cp_service_def cp_volume_v1beta3_def;
extern const cp_service_def cp_volume_v1_def;
extern const cp_service_def cp_volume_v2alpha1_def;

#endif
