/* v1beta2.c - the smb v1beta2 table (WIRE-API §7.4). */
#include "groups/smb/smb.h"

#include "smb/v1beta2/api.pb-c.h"

static const cp_method methods[] = {
    {.name = "NewSmbGlobalMapping",
     .req_desc = &v1beta2__new_smb_global_mapping_request__descriptor,
     .resp_desc = &v1beta2__new_smb_global_mapping_response__descriptor,
     .req_map = cp_smb_map_new,
     .handler = cp_smb_handle_new,
     .flags = CP_METHOD_MUTATES},
    {.name = "RemoveSmbGlobalMapping",
     .req_desc = &v1beta2__remove_smb_global_mapping_request__descriptor,
     .resp_desc = &v1beta2__remove_smb_global_mapping_response__descriptor,
     .req_map = cp_smb_map_remove,
     .handler = cp_smb_handle_remove,
     .flags = CP_METHOD_MUTATES},
};

const cp_service_def cp_smb_v1beta2_def = {
    .group = "smb",
    .version = "v1beta2",
    .service = "v1beta2.Smb",
    .svc_desc = &v1beta2__smb__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_smb_request),
    .resp_size = sizeof(cp_smb_response),
};
