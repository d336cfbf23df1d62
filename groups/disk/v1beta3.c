/* v1beta3.c - the disk v1beta3 table (WIRE-API §7.1).
 * Disk numbers are uint32 from here on. */
#include "groups/disk/disk.h"

#include "disk/v1beta3/api.pb-c.h"

static const cp_method methods[] = {
    {.name = "ListDiskLocations",
     .req_desc = &v1beta3__list_disk_locations_request__descriptor,
     .resp_desc = &v1beta3__list_disk_locations_response__descriptor,
     .handler = cp_disk_handle_list_locations,
     .resp_conv = cp_disk_conv_locations},
    {.name = "PartitionDisk",
     .req_desc = &v1beta3__partition_disk_request__descriptor,
     .resp_desc = &v1beta3__partition_disk_response__descriptor,
     .req_map = cp_disk_map_number,
     .handler = cp_disk_handle_partition,
     .flags = CP_METHOD_MUTATES},
    {.name = "Rescan",
     .req_desc = &v1beta3__rescan_request__descriptor,
     .resp_desc = &v1beta3__rescan_response__descriptor,
     .handler = cp_disk_handle_rescan,
     .flags = CP_METHOD_MUTATES},
    {.name = "ListDiskIDs",
     .req_desc = &v1beta3__list_disk_ids_request__descriptor,
     .resp_desc = &v1beta3__list_disk_ids_response__descriptor,
     .handler = cp_disk_handle_list_ids,
     .resp_conv = cp_disk_conv_ids},
    {.name = "GetDiskStats",
     .req_desc = &v1beta3__get_disk_stats_request__descriptor,
     .resp_desc = &v1beta3__get_disk_stats_response__descriptor,
     .req_map = cp_disk_map_number,
     .handler = cp_disk_handle_stats,
     .resp_map = cp_disk_map_total_bytes},
    {.name = "SetDiskState",
     .req_desc = &v1beta3__set_disk_state_request__descriptor,
     .resp_desc = &v1beta3__set_disk_state_response__descriptor,
     .req_map = cp_disk_map_set_state,
     .handler = cp_disk_handle_set_state,
     .flags = CP_METHOD_MUTATES},
    {.name = "GetDiskState",
     .req_desc = &v1beta3__get_disk_state_request__descriptor,
     .resp_desc = &v1beta3__get_disk_state_response__descriptor,
     .req_map = cp_disk_map_number,
     .handler = cp_disk_handle_get_state,
     .resp_map = cp_disk_map_is_online},
};

const cp_service_def cp_disk_v1beta3_def = {
    .group = "disk",
    .version = "v1beta3",
    .service = "v1beta3.Disk",
    .svc_desc = &v1beta3__disk__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_disk_request),
    .resp_size = sizeof(cp_disk_response),
};
