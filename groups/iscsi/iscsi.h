/* iscsi.h - the iscsi group (v1alpha1, v1alpha2; WIRE-API §7.6): the
 * iSCSI initiator's portals, targets, sessions and disks, through
 * winapi/iscsi.h.
 *
 * Upstream's results for valid input are kept: target_port 0 means 3260;
 * AddTargetPortal of a portal already registered and ConnectTarget of a
 * target already connected succeed; DisconnectTarget of a target not
 * connected succeeds; GetTargetDisks of a target not connected is an
 * empty list; disk numbers are decimal strings; auth_type outside 0..2 is
 * "invalid authentication type authType=N"; CHAP user and secret are
 * passed as given.
 *
 * Beyond upstream (INVALID_ARGUMENT, before any host call): a missing
 * target_portal (upstream's process crashes on a nil pointer), an empty
 * or implausible target_address (letters, digits, '.', '-', '_', ':', '[',
 * ']' only), a port above 65535 (upstream truncates it to 16 bits), an
 * empty or implausible iqn, and an invalid auth_type. No error text
 * carries a CHAP secret: the group never formats one, and the audit
 * redacts the fields chap_secret and MutualChapSecret.
 *
 * Destinations (INVALID_ARGUMENT naming the portal and the rule, as the
 * smb group's server rule): AddTargetPortal, DiscoverTargetPortal and
 * ConnectTarget, the calls that make the initiator connect to the portal,
 * refuse a loopback address (127.0.0.0/8, ::1, localhost and names under
 * it), an unspecified one (0.0.0.0/8, ::) and a link-local one
 * (169.254.0.0/16, where cloud instance metadata answers, fe80::/10),
 * however written: the IPv4 forms Windows' parsers take (127.1,
 * 0x7f000001, 2130706433, 0177.0.0.1), IPv6 literals with or without
 * brackets, IPv4-mapped, -compatible and NAT64 forms, and the
 * ipv6-literal.net names. A portal named exactly (no wildcard) in
 * groups.iscsi.allowedPortals is allowed anyway; when allowedPortals is
 * set, a portal must match one of its entries (the same address, the same
 * name, or a name under "*.suffix"). Names are not resolved: an operator
 * who wants names checked lists the allowed ones. Any port is accepted, as
 * upstream does (targets listen on 3260, 860 or what the storage class
 * says). RemoveTargetPortal, DisconnectTarget, GetTargetDisks and
 * ListTargetPortals are not restricted, so what was made before can be
 * cleaned up.
 */
#ifndef CP_GROUPS_ISCSI_H
#define CP_GROUPS_ISCSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../server/method.h"
#include "../../winapi/iscsi.h"

#define CP_ISCSI_DEFAULT_PORT 3260

typedef struct cp_iscsi_policy {
    const char *const *allowed; /* groups.iscsi.allowedPortals (NULL: not set) */
    size_t n_allowed;
    bool restricted; /* allowedPortals was configured */
} cp_iscsi_policy;

typedef struct cp_iscsi_group_ctx {
    cp_iscsi_host host;
    cp_iscsi_policy policy;
} cp_iscsi_group_ctx;

typedef struct cp_iscsi_request {
    bool has_portal; /* target_portal was present */
    const char *address;
    uint32_t port;
    const char *iqn;
    int auth_type;
    const char *chap_username;
    const char *chap_secret;
    const char *mutual_chap_secret;
} cp_iscsi_request;

typedef struct cp_iscsi_response {
    const char **strings; /* iqns or diskIDs (call arena) */
    size_t n_strings;
    cp_iscsi_portal *portals; /* ListTargetPortals (call arena) */
    size_t n_portals;
} cp_iscsi_response;

/* The portal of a request, checked, port 0 made 3260. */
int cp_iscsi_portal_of(const cp_iscsi_request *r, cp_iscsi_portal *out, cp_error *e);
/* An IQN (or EUI/NAA name) as the initiator accepts it. */
int cp_iscsi_check_iqn(const char *iqn, cp_error *e);
/* The destination rule above for a checked portal (p NULL: defaults). */
int cp_iscsi_check_portal(const cp_iscsi_policy *p, const cp_iscsi_portal *portal, cp_error *e);
/* Why address may not be a portal by default ("a loopback address ..."),
 * or NULL. */
const char *cp_iscsi_refused_destination(const char *address);
/* address as an IP address: 4 (IPv4 in out[0..3], any form inet_addr
 * takes), 6 (IPv6 literal, bracketed or not, or an ipv6-literal.net
 * name), or 0 (a name). */
int cp_iscsi_parse_address(const char *address, uint8_t out[16]);
/* Disk number as upstream's strconv: decimal, no sign. */
void cp_iscsi_disk_id(uint32_t n, char *out, size_t len);

int cp_iscsi_handle_add(cp_call *call, const void *req, void *resp);
int cp_iscsi_handle_discover(cp_call *call, const void *req, void *resp);
int cp_iscsi_handle_remove(cp_call *call, const void *req, void *resp);
int cp_iscsi_handle_list(cp_call *call, const void *req, void *resp);
int cp_iscsi_handle_connect(cp_call *call, const void *req, void *resp);
int cp_iscsi_handle_disconnect(cp_call *call, const void *req, void *resp);
int cp_iscsi_handle_disks(cp_call *call, const void *req, void *resp);
int cp_iscsi_handle_set_mutual(cp_call *call, const void *req, void *resp);

/* Converters shared by both versions (by field name). */
int cp_iscsi_conv_req(cp_call *call, const ProtobufCMessage *in, void *req);
int cp_iscsi_conv_iqns(cp_call *call, const void *resp, ProtobufCMessage *out);
int cp_iscsi_conv_disks(cp_call *call, const void *resp, ProtobufCMessage *out);
int cp_iscsi_conv_portals(cp_call *call, const void *resp, ProtobufCMessage *out);

extern const cp_service_def cp_iscsi_v1alpha1_def;
extern const cp_service_def cp_iscsi_v1alpha2_def;

#endif
