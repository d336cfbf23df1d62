/* v1beta1.c - the filesystem v1beta1 table (WIRE-API §7.3).
 * The request's `context` (PathContext) is not mapped, so it is ignored;
 * the response's `error` is not mapped, so it is never set: failures are
 * gRPC statuses, as upstream. LinkPath and IsMountPoint are the legacy
 * names of CreateSymlink and IsSymlink. */
#include "groups/filesystem/filesystem.h"

#include "filesystem/v1beta1/api.pb-c.h"

static const cp_method methods[] = {
    {.name = "PathExists",
     .req_desc = &v1beta1__path_exists_request__descriptor,
     .resp_desc = &v1beta1__path_exists_response__descriptor,
     .req_map = cp_fs_map_path,
     .handler = cp_fs_handle_path_exists,
     .resp_map = cp_fs_map_exists},
    {.name = "Mkdir",
     .req_desc = &v1beta1__mkdir_request__descriptor,
     .resp_desc = &v1beta1__mkdir_response__descriptor,
     .req_map = cp_fs_map_path,
     .handler = cp_fs_handle_mkdir,
     .flags = CP_METHOD_MUTATES},
    {.name = "Rmdir",
     .req_desc = &v1beta1__rmdir_request__descriptor,
     .resp_desc = &v1beta1__rmdir_response__descriptor,
     .req_map = cp_fs_map_path_force,
     .handler = cp_fs_handle_rmdir,
     .flags = CP_METHOD_MUTATES},
    {.name = "LinkPath",
     .req_desc = &v1beta1__link_path_request__descriptor,
     .resp_desc = &v1beta1__link_path_response__descriptor,
     .req_map = cp_fs_map_link,
     .handler = cp_fs_handle_create_symlink,
     .flags = CP_METHOD_MUTATES},
    {.name = "IsMountPoint",
     .req_desc = &v1beta1__is_mount_point_request__descriptor,
     .resp_desc = &v1beta1__is_mount_point_response__descriptor,
     .req_map = cp_fs_map_path,
     .handler = cp_fs_handle_is_symlink,
     .resp_map = cp_fs_map_is_mount_point},
};

const cp_service_def cp_fs_v1beta1_def = {
    .group = "filesystem",
    .version = "v1beta1",
    .service = "v1beta1.Filesystem",
    .svc_desc = &v1beta1__filesystem__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_fs_request),
    .resp_size = sizeof(cp_fs_response),
};
