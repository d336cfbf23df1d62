/* v1alpha1.c - the volume v1alpha1 table (WIRE-API §7.2).
 * disk_id is a decimal string (all partitions are listed); the mount
 * directory is `path`, the size `size`. DismountVolume is the legacy name of
 * UnmountVolume. */
#include "groups/volume/volume.h"

#include "volume/v1alpha1/api.pb-c.h"

static const cp_method methods[] = {
    {.name = "ListVolumesOnDisk",
     .req_desc = &v1alpha1__list_volumes_on_disk_request__descriptor,
     .resp_desc = &v1alpha1__list_volumes_on_disk_response__descriptor,
     .req_conv = cp_volume_conv_list_legacy,
     .handler = cp_volume_handle_list,
     .resp_conv = cp_volume_conv_list},
    {.name = "MountVolume",
     .req_desc = &v1alpha1__mount_volume_request__descriptor,
     .resp_desc = &v1alpha1__mount_volume_response__descriptor,
     .req_map = cp_volume_map_id_path,
     .handler = cp_volume_handle_mount,
     .flags = CP_METHOD_MUTATES},
    {.name = "DismountVolume",
     .req_desc = &v1alpha1__dismount_volume_request__descriptor,
     .resp_desc = &v1alpha1__dismount_volume_response__descriptor,
     .req_map = cp_volume_map_id_path,
     .handler = cp_volume_handle_unmount,
     .flags = CP_METHOD_MUTATES},
    {.name = "IsVolumeFormatted",
     .req_desc = &v1alpha1__is_volume_formatted_request__descriptor,
     .resp_desc = &v1alpha1__is_volume_formatted_response__descriptor,
     .req_map = cp_volume_map_id,
     .handler = cp_volume_handle_is_formatted,
     .resp_map = cp_volume_map_formatted},
    {.name = "FormatVolume",
     .req_desc = &v1alpha1__format_volume_request__descriptor,
     .resp_desc = &v1alpha1__format_volume_response__descriptor,
     .req_map = cp_volume_map_id,
     .handler = cp_volume_handle_format,
     .flags = CP_METHOD_MUTATES},
    {.name = "ResizeVolume",
     .req_desc = &v1alpha1__resize_volume_request__descriptor,
     .resp_desc = &v1alpha1__resize_volume_response__descriptor,
     .req_map = cp_volume_map_id_size,
     .handler = cp_volume_handle_resize,
     .flags = CP_METHOD_MUTATES},
};

const cp_service_def cp_volume_v1alpha1_def = {
    .group = "volume",
    .version = "v1alpha1",
    .service = "v1alpha1.Volume",
    .svc_desc = &v1alpha1__volume__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_volume_request),
    .resp_size = sizeof(cp_volume_response),
};
