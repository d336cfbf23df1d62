/* v1alpha1.c - the disk v1alpha1 table (WIRE-API §7.1).
 * Disk numbers are decimal strings here: PartitionDisk parses diskID, and
 * GetDiskNumberByName (v1alpha1 only) answers one. */
#include "groups/disk/disk.h"

#include "disk/v1alpha1/api.pb-c.h"

static const cp_method methods[] = {
    {.name = "ListDiskLocations",
     .req_desc = &v1alpha1__list_disk_locations_request__descriptor,
     .resp_desc = &v1alpha1__list_disk_locations_response__descriptor,
     .handler = cp_disk_handle_list_locations,
     .resp_conv = cp_disk_conv_locations},
    {.name = "PartitionDisk",
     .req_desc = &v1alpha1__partition_disk_request__descriptor,
     .resp_desc = &v1alpha1__partition_disk_response__descriptor,
     .req_conv = cp_disk_conv_partition_legacy,
     .handler = cp_disk_handle_partition,
     .flags = CP_METHOD_MUTATES},
    {.name = "Rescan",
     .req_desc = &v1alpha1__rescan_request__descriptor,
     .resp_desc = &v1alpha1__rescan_response__descriptor,
     .handler = cp_disk_handle_rescan,
     .flags = CP_METHOD_MUTATES},
    {.name = "GetDiskNumberByName",
     .req_desc = &v1alpha1__get_disk_number_by_name_request__descriptor,
     .resp_desc = &v1alpha1__get_disk_number_by_name_response__descriptor,
     .req_map = cp_disk_map_name,
     .handler = cp_disk_handle_number_by_name,
     .resp_conv = cp_disk_conv_number_by_name},
};

const cp_service_def cp_disk_v1alpha1_def = {
    .group = "disk",
    .version = "v1alpha1",
    .service = "v1alpha1.Disk",
    .svc_desc = &v1alpha1__disk__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_disk_request),
    .resp_size = sizeof(cp_disk_response),
};
