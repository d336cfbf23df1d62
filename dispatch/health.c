/* health.c - grpc.health.v1.Health's table and handlers (see health.h). */
#include "dispatch/health.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "grpc/health/v1/health.pb-c.h"

typedef struct health_req {
    const char *service;
} health_req;

typedef struct health_resp {
    int status;
    const char *service; /* the pipe's service, for List */
} health_resp;

static int conv_check_req(cp_call *call, const ProtobufCMessage *in, void *req)
{
    (void)call;
    const Grpc__Health__V1__HealthCheckRequest *m = (const void *)in;
    ((health_req *)req)->service = m->service != NULL ? m->service : "";
    return CP_OK;
}

static int conv_list_req(cp_call *call, const ProtobufCMessage *in, void *req)
{
    (void)call, (void)in;
    ((health_req *)req)->service = "";
    return CP_OK;
}

static int conv_check_resp(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    (void)call;
    Grpc__Health__V1__HealthCheckResponse *m = (void *)out;
    m->status = ((const health_resp *)resp)->status;
    return CP_OK;
}

/* Both names the pipe answers for, each with the status. */
static int conv_list_resp(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    const health_resp *r = resp;
    Grpc__Health__V1__HealthListResponse *m = (void *)out;
    const char *names[] = {"", r->service};
    Grpc__Health__V1__HealthListResponse__StatusesEntry **e = cp_call_alloc(call, 2 * sizeof(*e));
    if (e == NULL)
        return cp_call_fail(call, CP_E_NOMEM, "%s: out of memory", cp_call_path(call));
    for (size_t i = 0; i < 2; i++) {
        e[i] = cp_call_alloc(call, sizeof(*e[i]));
        Grpc__Health__V1__HealthCheckResponse *v = cp_call_alloc(call, sizeof(*v));
        if (e[i] == NULL || v == NULL)
            return cp_call_fail(call, CP_E_NOMEM, "%s: out of memory", cp_call_path(call));
        grpc__health__v1__health_list_response__statuses_entry__init(e[i]);
        grpc__health__v1__health_check_response__init(v);
        v->status = r->status;
        e[i]->key = (char *)names[i];
        e[i]->value = v;
    }
    m->n_statuses = 2;
    m->statuses = e;
    return CP_OK;
}

static bool is_watch_path(const char *path)
{
    return strcmp(path, "/" CP_HEALTH_SERVICE "/Watch") == 0;
}

/* The pipe's service is the ctx the health service was bound with. */
static int handle(cp_call *call, const void *req, void *resp)
{
    const cp_service *pipe = cp_call_ctx(call);
    const char *name = ((const health_req *)req)->service;
    health_resp *r = resp;
    r->service = pipe->def->service;
    if (name[0] != '\0' && strcmp(name, pipe->def->service) != 0) {
        if (is_watch_path(cp_call_path(call))) {
            r->status = CP_HEALTH_SERVICE_UNKNOWN;
            return CP_OK;
        }
        return cp_call_fail(call, CP_E_NOT_FOUND,
                            "unknown service \"%.200s\": this pipe serves %s (ask for \"%s\" or "
                            "\"\")",
                            name, pipe->def->service, pipe->def->service);
    }
    cp_error e;
    cp_error_clear(&e);
    int rc = pipe->health != NULL ? pipe->health(pipe->ctx, &e) : CP_OK;
    r->status = rc == CP_OK ? CP_HEALTH_SERVING : CP_HEALTH_NOT_SERVING;
    if (rc != CP_OK)
        CP_LOG_V(2, "health: %s is not serving: %s", pipe->def->service, e.msg);
    return CP_OK;
}

static const cp_method methods[] = {
    {.name = "Check",
     .req_desc = &grpc__health__v1__health_check_request__descriptor,
     .resp_desc = &grpc__health__v1__health_check_response__descriptor,
     .req_conv = conv_check_req,
     .handler = handle,
     .resp_conv = conv_check_resp},
    {.name = "List",
     .req_desc = &grpc__health__v1__health_list_request__descriptor,
     .resp_desc = &grpc__health__v1__health_list_response__descriptor,
     .req_conv = conv_list_req,
     .handler = handle,
     .resp_conv = conv_list_resp},
    {.name = "Watch",
     .req_desc = &grpc__health__v1__health_check_request__descriptor,
     .resp_desc = &grpc__health__v1__health_check_response__descriptor,
     .req_conv = conv_check_req,
     .handler = handle,
     .resp_conv = conv_check_resp,
     .flags = CP_METHOD_SERVER_STREAM},
};

const cp_service_def cp_health_def = {
    .group = "health",
    .version = "v1",
    .service = CP_HEALTH_SERVICE,
    .svc_desc = &grpc__health__v1__health__descriptor,
    .methods = methods,
    .n_methods = sizeof(methods) / sizeof(methods[0]),
    .req_size = sizeof(health_req),
    .resp_size = sizeof(health_resp),
};

cp_service cp_health_bind(const cp_service *pipe)
{
    return (cp_service){.def = &cp_health_def, .ctx = (void *)pipe};
}

bool cp_health_is_watch(const cp_method *m)
{
    return m == &methods[2];
}

int cp_health_status_of(const uint8_t *msg, size_t len)
{
    /* field 1, varint: 0x08 then one byte for the four values */
    int status = CP_HEALTH_UNKNOWN;
    for (size_t i = 0; i + 1 < len; i += 2)
        if (msg[i] == 0x08 && msg[i + 1] < 0x80)
            status = msg[i + 1];
    return status;
}

uint8_t *cp_health_encode(int status, size_t room, size_t *len)
{
    uint8_t *b = malloc(room + 2);
    if (b == NULL)
        return NULL;
    size_t n = 0;
    if (status != CP_HEALTH_UNKNOWN) { /* proto3: a zero value is not sent */
        b[room] = 0x08;
        b[room + 1] = (uint8_t)status;
        n = 2;
    }
    *len = room + n;
    return b;
}
