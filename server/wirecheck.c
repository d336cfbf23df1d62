/* wirecheck.c - walk protobuf wire bytes, checking string fields. */
#include "wirecheck.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 32

static int get_varint(const uint8_t *b, size_t len, size_t *off, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*off >= len)
            return -1;
        uint8_t c = b[(*off)++];
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

int cp_utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            k = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            k = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (n - i <= k)
            return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += k + 1;
    }
    return 1;
}

static int walk(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len, char *field,
                size_t cap, int depth)
{
    if (depth > MAX_DEPTH)
        return CP_WIRE_MALFORMED;
    size_t off = 0;
    while (off < len) {
        uint64_t key, v;
        if (get_varint(b, len, &off, &key) != 0)
            return CP_WIRE_MALFORMED;
        unsigned wt = key & 7;
        uint64_t num = key >> 3;
        /* Field numbers are 1 .. 2^29-1. protobuf-c refuses a plain 00 tag
         * but takes an overlong one (80 00) as unknown field 0, which
         * grpc-go refuses: so do we. */
        if (num == 0 || num > 0x1fffffff)
            return CP_WIRE_MALFORMED;
        switch (wt) {
        case 0:
            if (get_varint(b, len, &off, &v) != 0)
                return CP_WIRE_MALFORMED;
            continue;
        case 1:
            if (len - off < 8)
                return CP_WIRE_MALFORMED;
            off += 8;
            continue;
        case 5:
            if (len - off < 4)
                return CP_WIRE_MALFORMED;
            off += 4;
            continue;
        case 2:
            break;
        default:
            return CP_WIRE_MALFORMED;
        }
        if (get_varint(b, len, &off, &v) != 0 || v > len - off)
            return CP_WIRE_MALFORMED;
        const uint8_t *p = b + off;
        off += (size_t)v;
        const ProtobufCFieldDescriptor *f =
            num <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)num) : NULL;
        if (f == NULL)
            continue; /* unknown field: ignored, as proto3 says */
        int rc = CP_WIRE_OK;
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            if (memchr(p, 0, (size_t)v) != NULL)
                rc = CP_WIRE_NUL;
            else if (!cp_utf8_valid(p, (size_t)v))
                rc = CP_WIRE_UTF8;
            if (rc != CP_WIRE_OK)
                snprintf(field, cap, "%s.%s", d->name, f->name);
        } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            rc = walk(f->descriptor, p, (size_t)v, field, cap, depth + 1);
        }
        if (rc != CP_WIRE_OK)
            return rc;
    }
    return CP_WIRE_OK;
}

int cp_wire_check_strings(const ProtobufCMessageDescriptor *desc, const uint8_t *b, size_t len,
                          char *field, size_t cap)
{
    if (cap > 0)
        field[0] = '\0';
    return walk(desc, b, len, field, cap, 0);
}
