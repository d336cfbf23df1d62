/* v1alpha1.c - the system v1alpha1 table (WIRE-API §7.5). */
#include "groups/system/system.h"

#include "system/v1alpha1/api.pb-c.h"

static const cp_fieldmap map_name[] = {
    {"name", offsetof(cp_system_request, name), CP_F_STRING},
    {NULL},
};
static const cp_fieldmap map_name_force[] = {
    {"name", offsetof(cp_system_request, name), CP_F_STRING},
    {"force", offsetof(cp_system_request, force), CP_F_BOOL},
    {NULL},
};
static const cp_fieldmap map_serial[] = {
    {"serial_number", offsetof(cp_system_response, serial_number), CP_F_STRING},
    {NULL},
};
static const cp_fieldmap map_service[] = {
    {"display_name", offsetof(cp_system_response, display_name), CP_F_STRING},
    {"start_type", offsetof(cp_system_response, start_type), CP_F_ENUM},
    {"status", offsetof(cp_system_response, status), CP_F_ENUM},
    {NULL},
};

static const cp_method methods[] = {
    {.name = "GetBIOSSerialNumber",
     .req_desc = &v1alpha1__get_biosserial_number_request__descriptor,
     .resp_desc = &v1alpha1__get_biosserial_number_response__descriptor,
     .handler = cp_system_handle_bios_serial,
     .resp_map = map_serial},
    {.name = "StartService",
     .req_desc = &v1alpha1__start_service_request__descriptor,
     .resp_desc = &v1alpha1__start_service_response__descriptor,
     .req_map = map_name,
     .handler = cp_system_handle_start,
     .flags = CP_METHOD_MUTATES},
    {.name = "StopService",
     .req_desc = &v1alpha1__stop_service_request__descriptor,
     .resp_desc = &v1alpha1__stop_service_response__descriptor,
     .req_map = map_name_force,
     .handler = cp_system_handle_stop,
     .flags = CP_METHOD_MUTATES},
    {.name = "GetService",
     .req_desc = &v1alpha1__get_service_request__descriptor,
     .resp_desc = &v1alpha1__get_service_response__descriptor,
     .req_map = map_name,
     .handler = cp_system_handle_get,
     .resp_map = map_service},
};

const cp_service_def cp_system_v1alpha1_def = {
    .group = "system",
    .version = "v1alpha1",
    .service = "v1alpha1.System",
    .svc_desc = &v1alpha1__system__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_system_request),
    .resp_size = sizeof(cp_system_response),
};
