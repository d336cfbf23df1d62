/* v1beta2.c - the disk v1beta2 table (WIRE-API §7.1).
 * As v1beta1, plus SetAttachState/GetAttachState, the legacy names of
 * SetDiskState/GetDiskState. */
#include "groups/disk/disk.h"

#include "disk/v1beta2/api.pb-c.h"

static const cp_method methods[] = {
    {.name = "ListDiskLocations",
     .req_desc = &v1beta2__list_disk_locations_request__descriptor,
     .resp_desc = &v1beta2__list_disk_locations_response__descriptor,
     .handler = cp_disk_handle_list_locations,
     .resp_conv = cp_disk_conv_locations},
    {.name = "PartitionDisk",
     .req_desc = &v1beta2__partition_disk_request__descriptor,
     .resp_desc = &v1beta2__partition_disk_response__descriptor,
     .req_conv = cp_disk_conv_partition_legacy,
     .handler = cp_disk_handle_partition,
     .flags = CP_METHOD_MUTATES},
    {.name = "Rescan",
     .req_desc = &v1beta2__rescan_request__descriptor,
     .resp_desc = &v1beta2__rescan_response__descriptor,
     .handler = cp_disk_handle_rescan,
     .flags = CP_METHOD_MUTATES},
    {.name = "ListDiskIDs",
     .req_desc = &v1beta2__list_disk_ids_request__descriptor,
     .resp_desc = &v1beta2__list_disk_ids_response__descriptor,
     .handler = cp_disk_handle_list_ids,
     .resp_conv = cp_disk_conv_ids},
    {.name = "DiskStats",
     .req_desc = &v1beta2__disk_stats_request__descriptor,
     .resp_desc = &v1beta2__disk_stats_response__descriptor,
     .req_conv = cp_disk_conv_stats_legacy,
     .handler = cp_disk_handle_stats,
     .resp_map = cp_disk_map_disk_size},
    {.name = "SetAttachState",
     .req_desc = &v1beta2__set_attach_state_request__descriptor,
     .resp_desc = &v1beta2__set_attach_state_response__descriptor,
     .req_conv = cp_disk_conv_set_attach,
     .handler = cp_disk_handle_set_state,
     .flags = CP_METHOD_MUTATES},
    {.name = "GetAttachState",
     .req_desc = &v1beta2__get_attach_state_request__descriptor,
     .resp_desc = &v1beta2__get_attach_state_response__descriptor,
     .req_conv = cp_disk_conv_get_attach,
     .handler = cp_disk_handle_get_state,
     .resp_map = cp_disk_map_isOnline},
};

const cp_service_def cp_disk_v1beta2_def = {
    .group = "disk",
    .version = "v1beta2",
    .service = "v1beta2.Disk",
    .svc_desc = &v1beta2__disk__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_disk_request),
    .resp_size = sizeof(cp_disk_response),
};
