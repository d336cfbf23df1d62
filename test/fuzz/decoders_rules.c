/* decoders_rules.c - the deliberate differences between protobuf-c (the
 * product's decoder) and nanopb (decoders_diff.h), each confirmed from the
 * bytes by a walk of the encoding; docs/testing.md describes each. */
#include <stdbool.h>
#include <stdint.h>

#include "test/fuzz/decoders_diff.h"

enum {
    W_ZERO_FIELD = 1,    /* a field number 0 */
    W_BIG_FIELD = 2,     /* a field number above 2^29-1 (a tag above 32 bits) */
    W_BOOL_WIDE = 4,     /* a bool written in more than 32 bits */
    W_WIDE32 = 8,        /* a uint32 or non-negative enum above 2^32-1 */
    W_WIRE_TYPE = 16,    /* a known field under another wire type */
    W_LONG_VARINT = 32,  /* a tag or length over 5 bytes, a varint over 10 */
    W_VARINT65 = 64,     /* a 10-byte varint with bits above the 64th */
    W_SUBMSG_TWICE = 128 /* a singular message field twice in one message */
};

/* the flags of a varint's length alone */
static unsigned len_flags(const uint8_t *b, size_t end, size_t n)
{
    if (n > 10)
        return W_LONG_VARINT;
    return n == 10 && b[end - 1] > 1 ? W_VARINT65 : 0;
}

/* Reads a varint of any length at b[*i]; *v keeps the low 64 bits, *n the
 * bytes it took. False when the bytes end inside it. */
static bool rd_varint(const uint8_t *b, size_t len, size_t *i, uint64_t *v, size_t *n)
{
    uint64_t x = 0;
    size_t k = 0;
    while (*i + k < len) {
        uint8_t c = b[*i + k];
        if (k < 10)
            x |= (uint64_t)(c & 0x7f) << (7 * k);
        k++;
        if (!(c & 0x80)) {
            *i += k;
            *v = x;
            *n = k;
            return true;
        }
    }
    return false;
}

static int wire_type_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 1;
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return 5;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return 2;
    default:
        return 0;
    }
}

/* nanopb stores an enum whose values are all non-negative as unsigned
 * (UENUM) and refuses what does not fit 32 bits; protobuf-c keeps int32. */
static bool enum_unsigned(const ProtobufCFieldDescriptor *f)
{
    const ProtobufCEnumDescriptor *e = f->descriptor;
    for (unsigned i = 0; e != NULL && i < e->n_values; i++)
        if (e->values[i].value < 0)
            return false;
    return true;
}

static unsigned varint_flags(const ProtobufCFieldDescriptor *f, uint64_t v, size_t n)
{
    unsigned fl = 0;
    if (f->type == PROTOBUF_C_TYPE_BOOL && (v > UINT32_MAX || n > 5))
        fl |= W_BOOL_WIDE;
    if ((f->type == PROTOBUF_C_TYPE_UINT32 ||
         (f->type == PROTOBUF_C_TYPE_ENUM && enum_unsigned(f))) &&
        v > UINT32_MAX)
        fl |= W_WIDE32;
    return fl;
}

static unsigned scan(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len, int depth)
{
    unsigned fl = 0;
    size_t i = 0;
    unsigned seen[32]; /* singular message fields met at this level */
    size_t n_seen = 0;
    while (i < len && depth < 64) {
        uint64_t t, v;
        size_t n;
        if (!rd_varint(b, len, &i, &t, &n))
            return fl;
        fl |= n > 5 ? W_LONG_VARINT : len_flags(b, i, n);
        uint64_t fn = t >> 3;
        int wt = (int)(t & 7);
        if (fn == 0)
            fl |= W_ZERO_FIELD;
        if (fn > 0x1FFFFFFF)
            fl |= W_BIG_FIELD;
        const ProtobufCFieldDescriptor *f =
            fn > 0 && fn <= 0x1FFFFFFF ? protobuf_c_message_descriptor_get_field(d, (unsigned)fn)
                                       : NULL;
        int want = f ? wire_type_of(f->type) : wt;
        bool packed = f && f->label == PROTOBUF_C_LABEL_REPEATED && want != 2 && wt == 2;
        if (f && wt != want && !packed)
            fl |= W_WIRE_TYPE;
        switch (wt) {
        case 0:
            if (!rd_varint(b, len, &i, &v, &n))
                return fl;
            fl |= len_flags(b, i, n);
            if (f && want == 0)
                fl |= varint_flags(f, v, n);
            break;
        case 1:
        case 5:
            if (len - i < (wt == 1 ? 8u : 4u))
                return fl;
            i += wt == 1 ? 8 : 4;
            break;
        case 2:
            if (!rd_varint(b, len, &i, &v, &n))
                return fl;
            fl |= n > 5 ? W_LONG_VARINT : 0; /* a length is 32 bits */
            if (v > len - i)
                return fl;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                fl |= scan(f->descriptor, b + i, (size_t)v, depth + 1);
                if (f->label != PROTOBUF_C_LABEL_REPEATED) {
                    for (size_t k = 0; k < n_seen; k++)
                        if (seen[k] == f->id)
                            fl |= W_SUBMSG_TWICE;
                    if (n_seen < sizeof(seen) / sizeof(seen[0]))
                        seen[n_seen++] = f->id;
                }
            }
            if (packed && want == 0) {
                size_t j = i, end = i + (size_t)v;
                uint64_t pv;
                size_t pn;
                while (j < end && rd_varint(b, end, &j, &pv, &pn))
                    fl |= varint_flags(f, pv, pn) | len_flags(b, j, pn);
            }
            i += (size_t)v;
            break;
        default:
            return fl;
        }
    }
    return fl;
}

static int has(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len, unsigned what)
{
    return (scan(d, b, len, 0) & what) != 0;
}
static int zero_field(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len)
{
    return has(d, b, len, W_ZERO_FIELD);
}
static int big_field(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len)
{
    return has(d, b, len, W_BIG_FIELD);
}
static int bool_wide(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len)
{
    return has(d, b, len, W_BOOL_WIDE);
}
static int wide32(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len)
{
    return has(d, b, len, W_WIDE32);
}
static int wire_type(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len)
{
    return has(d, b, len, W_WIRE_TYPE);
}
static int varint65(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len)
{
    return has(d, b, len, W_VARINT65);
}
static int submsg_twice(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len)
{
    return has(d, b, len, W_SUBMSG_TWICE);
}
static int long_varint(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len)
{
    return has(d, b, len, W_LONG_VARINT);
}

const cp_dd_rule cp_dd_rules[] = {
    {"field-number-zero", 0, "zero tag", zero_field,
     "refused: the wire check calls it malformed (INTERNAL, as grpc-go)",
     "field number 0 is not valid protobuf; protobuf-c keeps it as an unknown field, so the "
     "product's wire check refuses it before protobuf-c runs"},
    {"field-number-too-big", 0, "varint overflow", big_field,
     "refused: the wire check calls it malformed (INTERNAL, as grpc-go)",
     "a field number above 2^29-1 is not valid protobuf; nanopb reads tags as 32-bit values, "
     "protobuf-c keeps the field as unknown, the wire check refuses it"},
    {"bool-wider-than-32-bits", 0, "varint overflow", bool_wide, "accepted: true when not zero",
     "nanopb reads a bool as a 32-bit varint; proto3 makes any varint a bool (true when not zero), "
     "as protobuf-c and grpc-go read it"},
    {"uint32-or-enum-above-32-bits", 0, "integer too large", wide32,
     "accepted: the low 32 bits, as grpc-go",
     "the protobuf encoding keeps the low 32 bits of a wider varint for uint32 and enum fields "
     "(a negative enum is written in 10 bytes); nanopb refuses the value instead, and stores "
     "an enum with no negative value as unsigned"},
    {"known-field-other-wire-type", 0, "wrong wire type", wire_type,
     "accepted: the field is kept as unknown, as grpc-go does",
     "a known field number under another wire type is an unknown field for protobuf-c and "
     "grpc-go; nanopb refuses the message"},
    {"varint-above-64-bits", 0, "varint overflow", varint65,
     "accepted: the low 64 bits (grpc-go refuses it)",
     "the tenth byte of a varint carries one bit; protobuf-c drops the bits beyond the 64th, "
     "nanopb and grpc-go refuse the message"},
    {"message-field-twice", 2, NULL, submsg_twice,
     "accepted: the later occurrence's scalar fields only (grpc-go merges both)",
     "a singular message field written twice is merged (proto3); protobuf-c 1.4.1's merge keeps "
     "the earlier occurrence's strings and messages but drops its scalar fields (it reads a "
     "presence flag proto3 scalars do not have), nanopb and grpc-go keep them"},
    {"over-long-varint", 1, NULL, long_varint, "refused (INTERNAL)",
     "a varint over 10 bytes, or a tag or length prefix over 5 bytes, is refused by protobuf-c; "
     "nanopb skips an unknown varint of any length and reads a long tag or length as its low 32 "
     "bits"},
};
const size_t cp_dd_rules_len = sizeof(cp_dd_rules) / sizeof(cp_dd_rules[0]);
