/* disk.h - the disk group: version-agnostic request handling and the five
 * version tables (v1alpha1, v1beta1, v1beta2, v1beta3, v1; 30 RPCs).
 *
 * Every version maps its messages onto cp_disk_request / cp_disk_response;
 * the handlers are the union of all RPCs (WIRE-API §7.1). Legacy names
 * point at their successors: DiskStats -> GetDiskStats, SetAttachState ->
 * SetDiskState, GetAttachState -> GetDiskState. Versions up to v1beta2 carry
 * disk numbers as decimal strings: their converters parse them (upstream's
 * strconv.ParseUint text on failure) and write map keys as decimal text.
 *
 * Behaviour beyond upstream (status codes; upstream answers UNKNOWN):
 *   INVALID_ARGUMENT     a string disk ID that is not a decimal number, or
 *                        is above 4294967295 (upstream truncates it to 32
 *                        bits and acts on another disk); an empty disk_name
 *   NOT_FOUND            unknown disk ("disk 7 not found"); no disk with
 *                        that page83 ID (upstream's text)
 *   FAILED_PRECONDITION  PartitionDisk or taking offline the boot/system
 *                        disk; taking offline a disk that holds a volume
 *                        Windows needs (page file, crash dump file: the
 *                        message names the volume); partitioning an
 *                        offline disk
 * Calls on one disk are serialized (groups/common/disklocks.h); calls on
 * different disks run in parallel. PartitionDisk is idempotent: a RAW disk
 * becomes GPT, a disk without a basic partition gets one; a retry after
 * either changes nothing.
 */
#ifndef CP_GROUPS_DISK_H
#define CP_GROUPS_DISK_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/method.h"
#include "host/storage_ids.h"
#include "groups/common/storagegroup.h"

typedef struct cp_disk_request {
    uint32_t disk_number;
    bool is_online;        /* SetDiskState / SetAttachState */
    const char *disk_name; /* GetDiskNumberByName: a page83 ID */
} cp_disk_request;

typedef struct cp_disk_ids {
    uint32_t number;
    const char *page83;
    const char *serial_number;
} cp_disk_ids;

typedef struct cp_disk_loc {
    uint32_t number;
    const char *adapter, *bus, *target, *lun;
} cp_disk_loc;

typedef struct cp_disk_response {
    cp_disk_loc *locations; /* ListDiskLocations, by disk number */
    size_t n_locations;
    cp_disk_ids *ids; /* ListDiskIDs, by disk number */
    size_t n_ids;
    int64_t total_bytes;  /* GetDiskStats / DiskStats */
    bool is_online;       /* GetDiskState / GetAttachState */
    uint32_t disk_number; /* GetDiskNumberByName */
} cp_disk_response;

/* Handlers (cp_handler_fn). */
int cp_disk_handle_list_locations(cp_call *call, const void *req, void *resp);
int cp_disk_handle_partition(cp_call *call, const void *req, void *resp);
int cp_disk_handle_rescan(cp_call *call, const void *req, void *resp);
int cp_disk_handle_number_by_name(cp_call *call, const void *req, void *resp);
int cp_disk_handle_list_ids(cp_call *call, const void *req, void *resp);
int cp_disk_handle_stats(cp_call *call, const void *req, void *resp);
int cp_disk_handle_set_state(cp_call *call, const void *req, void *resp);
int cp_disk_handle_get_state(cp_call *call, const void *req, void *resp);

/* Converters for fields a field map cannot carry (any version: they read
 * the field names and key types from the message's descriptor). */
int cp_disk_conv_partition_legacy(cp_call *call, const ProtobufCMessage *in, void *req);
int cp_disk_conv_stats_legacy(cp_call *call, const ProtobufCMessage *in, void *req);
int cp_disk_conv_set_attach(cp_call *call, const ProtobufCMessage *in, void *req);
int cp_disk_conv_get_attach(cp_call *call, const ProtobufCMessage *in, void *req);
int cp_disk_conv_locations(cp_call *call, const void *resp, ProtobufCMessage *out);
int cp_disk_conv_ids(cp_call *call, const void *resp, ProtobufCMessage *out);
int cp_disk_conv_number_by_name(cp_call *call, const void *resp, ProtobufCMessage *out);

/* Field maps shared by the tables ({NULL}-terminated). */
extern const cp_fieldmap cp_disk_map_number[];      /* disk_number */
extern const cp_fieldmap cp_disk_map_set_state[];   /* disk_number, is_online */
extern const cp_fieldmap cp_disk_map_name[];        /* disk_name */
extern const cp_fieldmap cp_disk_map_total_bytes[]; /* total_bytes */
extern const cp_fieldmap cp_disk_map_disk_size[];   /* diskSize (DiskStats) */
extern const cp_fieldmap cp_disk_map_is_online[];   /* is_online */
extern const cp_fieldmap cp_disk_map_isOnline[];    /* isOnline (GetAttachState) */

extern const cp_service_def cp_disk_v1alpha1_def;
extern const cp_service_def cp_disk_v1beta1_def;
extern const cp_service_def cp_disk_v1beta2_def;
extern const cp_service_def cp_disk_v1beta3_def;
extern const cp_service_def cp_disk_v1_def;

#endif
