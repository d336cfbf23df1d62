/* dispatch.c - decode -> convert -> handle -> convert -> encode. */
#include "dispatch/dispatch.h"

#include "dispatch/wirecheck.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cp_dispatch_run(const cp_service *svc, const cp_method *m, cp_call *call, const uint8_t *req,
                    size_t len, uint8_t **out, size_t *out_len)
{
    return cp_dispatch_run_room(svc, m, call, req, len, 0, out, out_len);
}

int cp_dispatch_run_room(const cp_service *svc, const cp_method *m, cp_call *call,
                         const uint8_t *req, size_t len, size_t room, uint8_t **out,
                         size_t *out_len)
{
    const cp_service_def *def = svc->def;
    *out = NULL;
    *out_len = 0;

    ProtobufCMessage *in =
        protobuf_c_message_unpack(m->req_desc, cp_arena_allocator(call->arena), len, req);
    if (in == NULL)
        return cp_call_fail(call, CP_E_INTERNAL,
                            "grpc: error unmarshalling request: %s is not a valid %s message",
                            call->path, m->req_desc->name);
    call->req_msg = in;

    char field[160];
    int wc = cp_wire_check_strings(m->req_desc, req, len, field, sizeof(field));
    if (wc == CP_WIRE_NUL)
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "%s: field %s contains a NUL byte",
                            call->path, field);
    if (wc == CP_WIRE_UTF8)
        return cp_call_fail(call, CP_E_INVALID_ARGUMENT, "%s: field %s is not valid UTF-8",
                            call->path, field);
    if (wc == CP_WIRE_MALFORMED) /* protobuf-c was more lenient than the wire format */
        return cp_call_fail(call, CP_E_INTERNAL,
                            "grpc: error unmarshalling request: %s is not a valid %s message",
                            call->path, m->req_desc->name);

    void *ireq = cp_call_alloc(call, def->req_size);
    void *iresp = cp_call_alloc(call, def->resp_size);
    ProtobufCMessage *resp = cp_call_alloc(call, m->resp_desc->sizeof_message);
    if (ireq == NULL || iresp == NULL || resp == NULL)
        return cp_call_fail(call, CP_E_NOMEM, "%s: out of memory", call->path);
    m->resp_desc->message_init(resp);

    int rc;
    if (m->req_conv != NULL) {
        rc = m->req_conv(call, in, ireq);
        if (rc != CP_OK)
            return rc;
    } else {
        cp_fieldmap_from_msg(m->req_map, in, ireq);
    }

    rc = m->handler(call, ireq, iresp);
    if (rc == CP_PARKED)
        return rc; /* runs again once woken */
    if (rc != CP_OK) {
        if (call->err.status == CP_OK)
            cp_call_fail(call, rc, "%s failed", call->path);
        return rc;
    }

    if (m->resp_conv != NULL) {
        rc = m->resp_conv(call, iresp, resp);
        if (rc != CP_OK)
            return rc;
    } else {
        cp_fieldmap_to_msg(m->resp_map, iresp, resp);
    }

    size_t n = protobuf_c_message_get_packed_size(resp);
    uint8_t *buf = n < SIZE_MAX - room ? malloc(room + n > 0 ? room + n : 1) : NULL;
    if (buf == NULL)
        return cp_call_fail(call, CP_E_NOMEM, "%s: out of memory encoding the response",
                            call->path);
    protobuf_c_message_pack(resp, buf + room);
    *out = buf;
    *out_len = room + n;
    return CP_OK;
}

int cp_service_check(const cp_service_def *def, char *err, size_t errlen)
{
    for (size_t i = 0; i < def->n_methods; i++) {
        const cp_method *m = &def->methods[i];
        if (m->handler == NULL || m->req_desc == NULL || m->resp_desc == NULL) {
            snprintf(err, errlen, "%s/%s: incomplete table entry", def->service, m->name);
            return -1;
        }
        if (m->req_conv == NULL && cp_fieldmap_check(m->req_map, m->req_desc, err, errlen) != 0)
            return -1;
        if (m->resp_conv == NULL && cp_fieldmap_check(m->resp_map, m->resp_desc, err, errlen) != 0)
            return -1;
    }
    return 0;
}
