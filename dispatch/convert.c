/* convert.c - copy fields by name between protobuf-c messages and
 * internal structs. */
#include "dispatch/convert.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const ProtobufCFieldDescriptor *field_of(const ProtobufCMessage *msg, const char *name)
{
    return protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
}

/* Copies one field of `kind` from src to dst; to_msg says the direction
 * (bool is protobuf_c_boolean on the message side). A NULL string is
 * copied as "": protobuf-c encodes "" as absent in proto3, and NULL would
 * crash the packer and the handlers. */
static void copy_field(cp_field_kind kind, const char *src, char *dst, bool to_msg)
{
    switch (kind) {
    case CP_F_STRING: {
        const char *s = *(const char *const *)src;
        *(const char **)dst = s != NULL ? s : "";
        break;
    }
    case CP_F_BOOL:
        if (to_msg)
            *(protobuf_c_boolean *)dst = *(const bool *)src ? 1 : 0;
        else
            *(bool *)dst = *(const protobuf_c_boolean *)src != 0;
        break;
    case CP_F_UINT32:
        *(uint32_t *)dst = *(const uint32_t *)src;
        break;
    case CP_F_INT64:
        *(int64_t *)dst = *(const int64_t *)src;
        break;
    case CP_F_ENUM:
        *(int *)dst = *(const int *)src;
        break;
    }
}

void cp_fieldmap_from_msg(const cp_fieldmap *map, const ProtobufCMessage *msg, void *internal)
{
    for (; map != NULL && map->field != NULL; map++) {
        const ProtobufCFieldDescriptor *f = field_of(msg, map->field);
        if (f != NULL)
            copy_field(map->kind, (const char *)msg + f->offset, (char *)internal + map->offset,
                       false);
    }
}

void cp_fieldmap_to_msg(const cp_fieldmap *map, const void *internal, ProtobufCMessage *msg)
{
    for (; map != NULL && map->field != NULL; map++) {
        const ProtobufCFieldDescriptor *f = field_of(msg, map->field);
        if (f != NULL)
            copy_field(map->kind, (const char *)internal + map->offset, (char *)msg + f->offset,
                       true);
    }
}

static bool kind_matches(cp_field_kind k, const ProtobufCFieldDescriptor *f)
{
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return false;
    switch (k) {
    case CP_F_STRING:
        return f->type == PROTOBUF_C_TYPE_STRING;
    case CP_F_BOOL:
        return f->type == PROTOBUF_C_TYPE_BOOL;
    case CP_F_UINT32:
        return f->type == PROTOBUF_C_TYPE_UINT32;
    case CP_F_INT64:
        return f->type == PROTOBUF_C_TYPE_INT64;
    case CP_F_ENUM:
        return f->type == PROTOBUF_C_TYPE_ENUM;
    }
    return false;
}

int cp_fieldmap_check(const cp_fieldmap *map, const ProtobufCMessageDescriptor *desc, char *err,
                      size_t errlen)
{
    for (; map != NULL && map->field != NULL; map++) {
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field_by_name(desc, map->field);
        if (f == NULL) {
            snprintf(err, errlen, "%s has no field %s", desc->name, map->field);
            return -1;
        }
        if (!kind_matches(map->kind, f)) {
            snprintf(err, errlen, "%s.%s has another type than mapped", desc->name, map->field);
            return -1;
        }
    }
    return 0;
}
