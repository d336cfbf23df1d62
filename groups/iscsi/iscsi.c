/* iscsi.c - the iscsi group's logic (see iscsi.h). */
#include "groups/iscsi/iscsi.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "groups/common/pbreflect.h"

static const cp_iscsi_group_ctx *group_ctx(cp_call *call)
{
    return cp_call_ctx(call);
}

int cp_iscsi_portal_of(const cp_iscsi_request *r, cp_iscsi_portal *out, cp_error *e)
{
    /* Upstream logs target_portal's fields before anything else and
     * crashes the whole service when it is absent (WIRE-API §7.6). */
    if (!r->has_portal)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "target_portal is required");
    const char *a = r->address != NULL ? r->address : "";
    size_t n = strlen(a);
    if (n == 0)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "target_portal.target_address is empty");
    if (n >= sizeof(out->address))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "target_portal.target_address of %lu bytes is too long",
                            (unsigned long)n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)a[i];
        if (!isalnum(c) && c != '.' && c != '-' && c != '_' && c != ':' && c != '[' && c != ']')
            return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                "target_portal.target_address %s is not a host name or address", a);
    }
    if (r->port > 65535)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "target_portal.target_port %u is not a TCP port (1-65535)",
                            (unsigned)r->port);
    memcpy(out->address, a, n + 1);
    out->port = r->port == 0 ? CP_ISCSI_DEFAULT_PORT : r->port;
    return CP_OK;
}

int cp_iscsi_check_iqn(const char *iqn, cp_error *e)
{
    size_t n = iqn != NULL ? strlen(iqn) : 0;
    if (n == 0)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "iqn is empty");
    if (n > 223) /* RFC 3720 §3.2.6.1: at most 223 bytes */
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "iqn of %lu bytes is too long (223 at most)",
                            (unsigned long)n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)iqn[i];
        if (!isalnum(c) && c != '.' && c != '-' && c != ':')
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "iqn %s is not an iSCSI name", iqn);
    }
    return CP_OK;
}

void cp_iscsi_disk_id(uint32_t n, char *out, size_t len)
{
    snprintf(out, len, "%u", (unsigned)n);
}

static int fail(cp_call *call, const cp_error *e)
{
    return cp_call_fail_error(call, e);
}

/* What a request's portal must pass besides its own form. */
enum { NEED_IQN = 1, NEED_REACHABLE = 2 };

/* The request's portal into p, checked in this order: its form, then the
 * iqn (NEED_IQN), then the destination rule for a portal the initiator is
 * about to connect to (NEED_REACHABLE); the first failure is recorded. */
static int checked_portal(cp_call *call, const cp_iscsi_request *r, int need, cp_iscsi_portal *p)
{
    cp_error e;
    if (cp_iscsi_portal_of(r, p, &e) != CP_OK ||
        ((need & NEED_IQN) && cp_iscsi_check_iqn(r->iqn, &e) != CP_OK) ||
        ((need & NEED_REACHABLE) &&
         cp_iscsi_check_portal(&group_ctx(call)->policy, p, &e) != CP_OK))
        return fail(call, &e);
    return CP_OK;
}

int cp_iscsi_handle_add(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_iscsi_group_ctx *ctx = group_ctx(call);
    cp_iscsi_portal p;
    cp_error e;
    int bad = checked_portal(call, req, NEED_REACHABLE, &p);
    if (bad != CP_OK)
        return bad;
    int rc = ctx->host.ops->add_portal(ctx->host.ctx, &p, &e);
    if (rc != CP_OK && rc != CP_E_ALREADY_EXISTS) /* registered already: upstream's no-op */
        return fail(call, &e);
    return CP_OK;
}

int cp_iscsi_handle_remove(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_iscsi_group_ctx *ctx = group_ctx(call);
    cp_iscsi_portal p;
    cp_error e;
    int bad = checked_portal(call, req, 0, &p);
    if (bad != CP_OK)
        return bad;
    if (ctx->host.ops->remove_portal(ctx->host.ctx, &p, &e) != CP_OK)
        return fail(call, &e);
    return CP_OK;
}

int cp_iscsi_handle_discover(cp_call *call, const void *req, void *resp)
{
    const cp_iscsi_group_ctx *ctx = group_ctx(call);
    cp_iscsi_response *out = resp;
    cp_iscsi_portal p;
    cp_error e;
    int bad = checked_portal(call, req, NEED_REACHABLE, &p);
    if (bad != CP_OK)
        return bad;
    char(*iqns)[CP_ISCSI_NAME_MAX] = cp_call_alloc(call, CP_ISCSI_LIST_MAX * sizeof(*iqns));
    const char **v = cp_call_alloc(call, CP_ISCSI_LIST_MAX * sizeof(*v));
    if (iqns == NULL || v == NULL)
        return cp_call_fail(call, CP_E_NOMEM, "out of memory");
    size_t n = 0;
    if (ctx->host.ops->discover(ctx->host.ctx, &p, iqns, CP_ISCSI_LIST_MAX, &n, &e) != CP_OK)
        return fail(call, &e);
    for (size_t i = 0; i < n; i++)
        v[i] = iqns[i];
    out->strings = v;
    out->n_strings = n;
    return CP_OK;
}

int cp_iscsi_handle_list(cp_call *call, const void *req, void *resp)
{
    (void)req;
    const cp_iscsi_group_ctx *ctx = group_ctx(call);
    cp_iscsi_response *out = resp;
    cp_error e;
    cp_iscsi_portal *v = cp_call_alloc(call, CP_ISCSI_LIST_MAX * sizeof(*v));
    if (v == NULL)
        return cp_call_fail(call, CP_E_NOMEM, "out of memory");
    size_t n = 0;
    if (ctx->host.ops->list_portals(ctx->host.ctx, v, CP_ISCSI_LIST_MAX, &n, &e) != CP_OK)
        return fail(call, &e);
    out->portals = v;
    out->n_portals = n;
    return CP_OK;
}

int cp_iscsi_handle_connect(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_iscsi_request *r = req;
    const cp_iscsi_group_ctx *ctx = group_ctx(call);
    cp_iscsi_portal p;
    cp_error e;
    int bad = checked_portal(call, r, NEED_IQN | NEED_REACHABLE, &p);
    if (bad != CP_OK)
        return bad;
    if (r->auth_type < CP_ISCSI_AUTH_NONE || r->auth_type > CP_ISCSI_AUTH_MUTUAL_CHAP)
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "invalid authentication type authType=%d",
                            r->auth_type);
    int rc = ctx->host.ops->connect(ctx->host.ctx, &p, r->iqn, (cp_iscsi_auth)r->auth_type,
                                    r->chap_username != NULL ? r->chap_username : "",
                                    r->chap_secret != NULL ? r->chap_secret : "", &e);
    if (rc != CP_OK && rc != CP_E_ALREADY_EXISTS) /* connected already: upstream's no-op */
        return fail(call, &e);
    return CP_OK;
}

int cp_iscsi_handle_disconnect(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_iscsi_request *r = req;
    const cp_iscsi_group_ctx *ctx = group_ctx(call);
    cp_iscsi_portal p;
    cp_error e;
    int bad = checked_portal(call, r, NEED_IQN, &p);
    if (bad != CP_OK)
        return bad;
    int rc = ctx->host.ops->disconnect(ctx->host.ctx, &p, r->iqn, &e);
    if (rc != CP_OK && rc != CP_E_NOT_FOUND) /* not connected: upstream's no-op */
        return fail(call, &e);
    return CP_OK;
}

int cp_iscsi_handle_disks(cp_call *call, const void *req, void *resp)
{
    const cp_iscsi_request *r = req;
    const cp_iscsi_group_ctx *ctx = group_ctx(call);
    cp_iscsi_response *out = resp;
    cp_iscsi_portal p;
    cp_error e;
    int bad = checked_portal(call, r, NEED_IQN, &p);
    if (bad != CP_OK)
        return bad;
    uint32_t nums[CP_ISCSI_LIST_MAX];
    size_t n = 0;
    int rc = ctx->host.ops->disks(ctx->host.ctx, &p, r->iqn, nums, CP_ISCSI_LIST_MAX, &n, &e);
    if (rc == CP_E_NOT_FOUND) /* not connected: an empty list, as upstream */
        n = 0;
    else if (rc != CP_OK)
        return fail(call, &e);
    const char **v = cp_call_alloc(call, (n > 0 ? n : 1) * sizeof(*v));
    if (v == NULL)
        return cp_call_fail(call, CP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char buf[16];
        cp_iscsi_disk_id(nums[i], buf, sizeof(buf));
        if ((v[i] = cp_call_strdup(call, buf)) == NULL)
            return cp_call_fail(call, CP_E_NOMEM, "out of memory");
    }
    out->strings = v;
    out->n_strings = n;
    return CP_OK;
}

int cp_iscsi_handle_set_mutual(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_iscsi_request *r = req;
    const cp_iscsi_group_ctx *ctx = group_ctx(call);
    cp_error e;
    if (ctx->host.ops->set_mutual_chap_secret(
            ctx->host.ctx, r->mutual_chap_secret != NULL ? r->mutual_chap_secret : "", &e) != CP_OK)
        return fail(call, &e);
    return CP_OK;
}

/* --- converters --------------------------------------------------------- */

static const void *field_at(const ProtobufCMessage *msg, const char *name, ProtobufCType type)
{
    const ProtobufCFieldDescriptor *f = cp_pb_field(msg, name);
    if (f == NULL || f->type != type || f->label == PROTOBUF_C_LABEL_REPEATED)
        return NULL;
    return (const char *)msg + f->offset;
}

static const char *str_or_empty(const ProtobufCMessage *msg, const char *name)
{
    const char *s = cp_pb_get_string(msg, name);
    return s != NULL ? s : "";
}

int cp_iscsi_conv_req(cp_call *call, const ProtobufCMessage *in, void *req)
{
    (void)call;
    cp_iscsi_request *r = req;
    const ProtobufCMessage *const *pp = field_at(in, "target_portal", PROTOBUF_C_TYPE_MESSAGE);
    if (pp != NULL && *pp != NULL) {
        r->has_portal = true;
        r->address = str_or_empty(*pp, "target_address");
        const uint32_t *port = field_at(*pp, "target_port", PROTOBUF_C_TYPE_UINT32);
        r->port = port != NULL ? *port : 0;
    }
    r->iqn = str_or_empty(in, "iqn");
    const int *auth = field_at(in, "auth_type", PROTOBUF_C_TYPE_ENUM);
    r->auth_type = auth != NULL ? *auth : 0;
    r->chap_username = str_or_empty(in, "chap_username");
    r->chap_secret = str_or_empty(in, "chap_secret");
    r->mutual_chap_secret = str_or_empty(in, "MutualChapSecret");
    return CP_OK;
}

int cp_iscsi_conv_iqns(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    const cp_iscsi_response *r = resp;
    return cp_pb_set_strings(call, out, "iqns", r->strings, r->n_strings);
}

int cp_iscsi_conv_disks(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    const cp_iscsi_response *r = resp;
    return cp_pb_set_strings(call, out, "diskIDs", r->strings, r->n_strings);
}

int cp_iscsi_conv_portals(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    const cp_iscsi_response *r = resp;
    ProtobufCMessage **m = NULL;
    int rc = cp_pb_map_new(call, out, "target_portals", r->n_portals, &m);
    for (size_t i = 0; rc == CP_OK && i < r->n_portals; i++) {
        cp_pb_set_string(m[i], "target_address", r->portals[i].address);
        const ProtobufCFieldDescriptor *f = cp_pb_field(m[i], "target_port");
        if (f != NULL && f->type == PROTOBUF_C_TYPE_UINT32)
            *(uint32_t *)((char *)m[i] + f->offset) = r->portals[i].port;
    }
    return rc;
}
