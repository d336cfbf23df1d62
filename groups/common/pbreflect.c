/* pbreflect.c - see pbreflect.h. protobuf-c lays a repeated field out as a
 * size_t count at quantifier_offset and a pointer array at offset; a map is
 * a repeated field of its entry message (key = field 1, value = field 2). */
#include "groups/common/pbreflect.h"

#include <stdio.h>
#include <string.h>

const ProtobufCFieldDescriptor *cp_pb_field(const ProtobufCMessage *msg, const char *name)
{
    return protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
}

static int nomem(cp_call *call)
{
    return cp_call_fail(call, CP_E_NOMEM, "out of memory building the response");
}

const char *cp_pb_get_string(const ProtobufCMessage *msg, const char *name)
{
    const ProtobufCFieldDescriptor *f = cp_pb_field(msg, name);
    if (f == NULL || f->type != PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED)
        return NULL;
    const char *s = *(char *const *)((const char *)msg + f->offset);
    return s != NULL ? s : "";
}

void cp_pb_set_string(ProtobufCMessage *msg, const char *name, const char *v)
{
    const ProtobufCFieldDescriptor *f = cp_pb_field(msg, name);
    if (f == NULL || f->type != PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED)
        return;
    *(const char **)((char *)msg + f->offset) = v != NULL ? v : "";
}

int cp_pb_set_strings(cp_call *call, ProtobufCMessage *msg, const char *name, const char *const *v,
                      size_t n)
{
    const ProtobufCFieldDescriptor *f = cp_pb_field(msg, name);
    if (f == NULL || f->type != PROTOBUF_C_TYPE_STRING || f->label != PROTOBUF_C_LABEL_REPEATED)
        return cp_call_fail(call, CP_E_INTERNAL, "%s has no repeated string field %s",
                            msg->descriptor->name, name);
    const char **arr = cp_call_alloc(call, (n > 0 ? n : 1) * sizeof(*arr));
    if (arr == NULL)
        return nomem(call);
    for (size_t i = 0; i < n; i++)
        arr[i] = v[i] != NULL ? v[i] : "";
    *(size_t *)((char *)msg + f->quantifier_offset) = n;
    *(const char ***)((char *)msg + f->offset) = arr;
    return CP_OK;
}

int cp_pb_map_new(cp_call *call, ProtobufCMessage *msg, const char *name, size_t n,
                  ProtobufCMessage ***entries)
{
    const ProtobufCFieldDescriptor *f = cp_pb_field(msg, name);
    if (f == NULL || f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
        return cp_call_fail(call, CP_E_INTERNAL, "%s has no map field %s", msg->descriptor->name,
                            name);
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    ProtobufCMessage **arr = cp_call_alloc(call, (n > 0 ? n : 1) * sizeof(*arr));
    if (arr == NULL)
        return nomem(call);
    for (size_t i = 0; i < n; i++) {
        arr[i] = cp_call_alloc(call, ed->sizeof_message);
        if (arr[i] == NULL)
            return nomem(call);
        ed->message_init(arr[i]);
    }
    *(size_t *)((char *)msg + f->quantifier_offset) = n;
    *(ProtobufCMessage ***)((char *)msg + f->offset) = arr;
    *entries = arr;
    return CP_OK;
}

int cp_pb_entry_key_number(cp_call *call, ProtobufCMessage *entry, uint32_t key)
{
    const ProtobufCFieldDescriptor *f = cp_pb_field(entry, "key");
    if (f != NULL && f->type == PROTOBUF_C_TYPE_UINT32) {
        *(uint32_t *)((char *)entry + f->offset) = key;
        return CP_OK;
    }
    if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING) {
        char buf[16];
        snprintf(buf, sizeof(buf), "%u", (unsigned)key);
        char *s = cp_call_strdup(call, buf);
        if (s == NULL)
            return nomem(call);
        *(char **)((char *)entry + f->offset) = s;
        return CP_OK;
    }
    return cp_call_fail(call, CP_E_INTERNAL, "%s: map key is neither uint32 nor string",
                        entry->descriptor->name);
}

void cp_pb_entry_key_string(ProtobufCMessage *entry, const char *key)
{
    cp_pb_set_string(entry, "key", key);
}

void cp_pb_entry_value_string(ProtobufCMessage *entry, const char *value)
{
    cp_pb_set_string(entry, "value", value);
}

int cp_pb_entry_value_message(cp_call *call, ProtobufCMessage *entry, ProtobufCMessage **value)
{
    const ProtobufCFieldDescriptor *f = cp_pb_field(entry, "value");
    if (f == NULL || f->type != PROTOBUF_C_TYPE_MESSAGE)
        return cp_call_fail(call, CP_E_INTERNAL, "%s: map value is not a message",
                            entry->descriptor->name);
    const ProtobufCMessageDescriptor *vd = f->descriptor;
    ProtobufCMessage *v = cp_call_alloc(call, vd->sizeof_message);
    if (v == NULL)
        return nomem(call);
    vd->message_init(v);
    *(ProtobufCMessage **)((char *)entry + f->offset) = v;
    *value = v;
    return CP_OK;
}
