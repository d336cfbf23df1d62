/* v1.c - the filesystem v1 table (WIRE-API §7.3). */
#include "groups/filesystem/filesystem.h"

#include "filesystem/v1/api.pb-c.h"

static const cp_method methods[] = {
    {.name = "PathExists",
     .req_desc = &v1__path_exists_request__descriptor,
     .resp_desc = &v1__path_exists_response__descriptor,
     .req_map = cp_fs_map_path,
     .handler = cp_fs_handle_path_exists,
     .resp_map = cp_fs_map_exists},
    {.name = "Mkdir",
     .req_desc = &v1__mkdir_request__descriptor,
     .resp_desc = &v1__mkdir_response__descriptor,
     .req_map = cp_fs_map_path,
     .handler = cp_fs_handle_mkdir,
     .flags = CP_METHOD_MUTATES},
    {.name = "Rmdir",
     .req_desc = &v1__rmdir_request__descriptor,
     .resp_desc = &v1__rmdir_response__descriptor,
     .req_map = cp_fs_map_path_force,
     .handler = cp_fs_handle_rmdir,
     .flags = CP_METHOD_MUTATES},
    {.name = "CreateSymlink",
     .req_desc = &v1__create_symlink_request__descriptor,
     .resp_desc = &v1__create_symlink_response__descriptor,
     .req_map = cp_fs_map_link,
     .handler = cp_fs_handle_create_symlink,
     .flags = CP_METHOD_MUTATES},
    {.name = "IsSymlink",
     .req_desc = &v1__is_symlink_request__descriptor,
     .resp_desc = &v1__is_symlink_response__descriptor,
     .req_map = cp_fs_map_path,
     .handler = cp_fs_handle_is_symlink,
     .resp_map = cp_fs_map_is_symlink},
};

const cp_service_def cp_fs_v1_def = {
    .group = "filesystem",
    .version = "v1",
    .service = "v1.Filesystem",
    .svc_desc = &v1__filesystem__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_fs_request),
    .resp_size = sizeof(cp_fs_response),
};
