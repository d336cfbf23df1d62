/* group_call.c - one call through the real dispatch path (group_call.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dispatch/call.h"
#include "test/unit/group_call.h"

const cp_service *gcall_service(const cp_groups *g, const char *group, const char *version)
{
    for (size_t i = 0; i < cp_groups_count(g); i++) {
        const cp_service *s = cp_groups_service(g, i);
        if (strcmp(s->def->group, group) == 0 && strcmp(s->def->version, version) == 0)
            return s;
    }
    fail_msg("no %s %s service", group, version);
    return NULL;
}

static const cp_method *method_of(const cp_service *svc, const char *method)
{
    const cp_method *m = cp_service_find(svc->def, method, strlen(method));
    if (m == NULL)
        fail_msg("%s has no method %s", svc->def->service, method);
    return m;
}

ProtobufCMessage *gcall_request(const cp_service *svc, const char *method)
{
    const cp_method *m = method_of(svc, method);
    ProtobufCMessage *req = calloc(1, m->req_desc->sizeof_message);
    assert_non_null(req);
    m->req_desc->message_init(req);
    return req;
}

bool gcall_set_if(ProtobufCMessage *m, const char *field, const char *v)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(m->descriptor, field);
    if (f == NULL || v == NULL)
        return false;
    char *at = (char *)m + f->offset;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
        *(const char **)at = v;
        break;
    case PROTOBUF_C_TYPE_UINT32:
        *(uint32_t *)at = (uint32_t)strtoul(v, NULL, 10);
        break;
    case PROTOBUF_C_TYPE_INT64:
        *(int64_t *)at = strtoll(v, NULL, 10);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        *(protobuf_c_boolean *)at = strcmp(v, "true") == 0;
        break;
    default:
        fail_msg("field %s: type not supported by the test", field);
    }
    return true;
}

void gcall_set(ProtobufCMessage *m, const char *field, const char *v)
{
    if (protobuf_c_message_descriptor_get_field_by_name(m->descriptor, field) == NULL)
        fail_msg("%s has no field %s", m->descriptor->name, field);
    gcall_set_if(m, field, v);
}

void gcall_set_bool_if(ProtobufCMessage *m, const char *field, bool value)
{
    gcall_set_if(m, field, value ? "true" : "false");
}

ProtobufCMessage *gcall_fs_request(const cp_service *svc, const char *method, const char *path,
                                   const char *source, const char *target, bool force)
{
    ProtobufCMessage *req = gcall_request(svc, method);
    gcall_set_if(req, "path", path);
    gcall_set_if(req, "source_path", source);
    gcall_set_if(req, "target_path", target);
    gcall_set_bool_if(req, "force", force);
    return req;
}

gcall_reply gcall_run(const cp_service *svc, const char *method, const ProtobufCMessage *req)
{
    const cp_method *m = method_of(svc, method);
    size_t len = protobuf_c_message_get_packed_size(req);
    uint8_t *wire = malloc(len + 1);
    assert_non_null(wire);
    protobuf_c_message_pack(req, wire);
    char full[160];
    snprintf(full, sizeof(full), "/%s/%s", svc->def->service, method);
    cp_call *c = cp_call_new(svc->ctx, full, 0);
    assert_non_null(c);
    uint8_t *out = NULL;
    size_t out_len = 0;
    gcall_reply r = {0};
    r.status = cp_dispatch_run(svc, m, c, wire, len, &out, &out_len);
    snprintf(r.msg, sizeof(r.msg), "%s", cp_call_error(c)->msg);
    snprintf(r.note, sizeof(r.note), "%s", cp_call_noted(c));
    if (r.status == CP_OK) {
        r.resp = protobuf_c_message_unpack(m->resp_desc, NULL, out_len, out);
        assert_non_null(r.resp);
    }
    free(out);
    free(wire);
    cp_call_free(c);
    return r;
}

void gcall_reply_free(gcall_reply *r)
{
    if (r->resp != NULL)
        protobuf_c_message_free_unpacked(r->resp, NULL);
    r->resp = NULL;
}

void gcall_check(int status, const char *msg, int want, const char *in_msg)
{
    if (status != want)
        fail_msg("expected %s, got %s: %s", cp_status_name(want), cp_status_name(status), msg);
    if (in_msg != NULL && strstr(msg, in_msg) == NULL)
        fail_msg("message lacks \"%s\": %s", in_msg, msg);
}
