/* v1beta1.c - the smb v1beta1 table (WIRE-API §7.4). */
#include "groups/smb/smb.h"

#include "smb/v1beta1/api.pb-c.h"

static const cp_method methods[] = {
    {.name = "NewSmbGlobalMapping",
     .req_desc = &v1beta1__new_smb_global_mapping_request__descriptor,
     .resp_desc = &v1beta1__new_smb_global_mapping_response__descriptor,
     .req_map = cp_smb_map_new,
     .handler = cp_smb_handle_new,
     .flags = CP_METHOD_MUTATES},
    {.name = "RemoveSmbGlobalMapping",
     .req_desc = &v1beta1__remove_smb_global_mapping_request__descriptor,
     .resp_desc = &v1beta1__remove_smb_global_mapping_response__descriptor,
     .req_map = cp_smb_map_remove,
     .handler = cp_smb_handle_remove,
     .flags = CP_METHOD_MUTATES},
};

const cp_service_def cp_smb_v1beta1_def = {
    .group = "smb",
    .version = "v1beta1",
    .service = "v1beta1.Smb",
    .svc_desc = &v1beta1__smb__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_smb_request),
    .resp_size = sizeof(cp_smb_response),
};
