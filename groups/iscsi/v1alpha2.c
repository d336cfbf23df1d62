/* v1alpha2.c - the iscsi v1alpha2 table (WIRE-API §7.6). */
#include "groups/iscsi/iscsi.h"

#include "iscsi/v1alpha2/api.pb-c.h"

#define M(rpc, lower, h, rc, fl)                                                                   \
    {                                                                                              \
        .name = #rpc, .req_desc = &v1alpha2__##lower##_request__descriptor,                        \
        .resp_desc = &v1alpha2__##lower##_response__descriptor, .req_conv = cp_iscsi_conv_req,     \
        .handler = h, .resp_conv = rc, .flags = fl                                                 \
    }

static const cp_method methods[] = {
    M(AddTargetPortal, add_target_portal, cp_iscsi_handle_add, NULL, CP_METHOD_MUTATES),
    M(DiscoverTargetPortal, discover_target_portal, cp_iscsi_handle_discover, cp_iscsi_conv_iqns,
      0),
    M(RemoveTargetPortal, remove_target_portal, cp_iscsi_handle_remove, NULL, CP_METHOD_MUTATES),
    M(ListTargetPortals, list_target_portals, cp_iscsi_handle_list, cp_iscsi_conv_portals, 0),
    M(ConnectTarget, connect_target, cp_iscsi_handle_connect, NULL, CP_METHOD_MUTATES),
    M(DisconnectTarget, disconnect_target, cp_iscsi_handle_disconnect, NULL, CP_METHOD_MUTATES),
    M(GetTargetDisks, get_target_disks, cp_iscsi_handle_disks, cp_iscsi_conv_disks, 0),
    M(SetMutualChapSecret, set_mutual_chap_secret, cp_iscsi_handle_set_mutual, NULL,
      CP_METHOD_MUTATES),
};

const cp_service_def cp_iscsi_v1alpha2_def = {
    .group = "iscsi",
    .version = "v1alpha2",
    .service = "v1alpha2.Iscsi",
    .svc_desc = &v1alpha2__iscsi__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(cp_iscsi_request),
    .resp_size = sizeof(cp_iscsi_response),
};
