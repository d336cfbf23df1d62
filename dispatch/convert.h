/* convert.h - field-map converters between versioned protobuf-c messages
 * and a group's internal request/response structs.
 *
 * A map is an array of {proto field name, offset in the internal struct,
 * kind}, terminated by an entry whose field is NULL. Fields are looked up
 * by name in the message descriptor, so one internal struct serves every
 * version whose fields have the same meaning, even under other numbers.
 * A mapped name missing from the descriptor is a programming error caught
 * by the table self-test (cp_fieldmap_check).
 */
#ifndef CP_CONVERT_H
#define CP_CONVERT_H

#include <stddef.h>
#include <protobuf-c/protobuf-c.h>

#include "base/arena.h"

typedef enum cp_field_kind {
    CP_F_STRING, /* char * (NULL for empty on input: never; "" instead) */
    CP_F_BOOL,   /* bool */
    CP_F_UINT32, /* uint32_t */
    CP_F_INT64,  /* int64_t */
    CP_F_ENUM,   /* int */
} cp_field_kind;

typedef struct cp_fieldmap {
    const char *field; /* proto field name; NULL ends the map */
    size_t offset;     /* offset in the internal struct */
    cp_field_kind kind;
} cp_fieldmap;

/* Copies mapped fields of msg into the internal struct. Strings are
 * borrowed from msg (which lives in the call's arena). */
void cp_fieldmap_from_msg(const cp_fieldmap *map, const ProtobufCMessage *msg, void *internal);

/* Copies mapped fields of the internal struct into msg. Strings are
 * borrowed (they must outlive the encoding: use the call's arena). */
void cp_fieldmap_to_msg(const cp_fieldmap *map, const void *internal, ProtobufCMessage *msg);

/* 0 when every mapped field exists in desc with a matching type, else -1
 * and a description of the first mismatch in err (size errlen). */
int cp_fieldmap_check(const cp_fieldmap *map, const ProtobufCMessageDescriptor *desc, char *err,
                      size_t errlen);

#endif
