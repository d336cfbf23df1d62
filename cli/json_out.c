/* json_out.c - ProtobufCMessage -> one line of JSON text (proto3 JSON
 * mapping; invalid UTF-8 in strings becomes U+FFFD). */
#include "cli/json_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ message -> JSON */

typedef struct sbuf {
    cp_arena *a;
    char *buf;
    size_t len, cap;
    bool oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        /* Doubling in the arena leaves the old block behind: at most as
         * much waste as the final text. */
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap < b->len + n + 1)
            ncap *= 2;
        char *nb = cp_arena_alloc(b->a, ncap);
        if (nb == NULL) {
            b->oom = true;
            return;
        }
        if (b->len)
            memcpy(nb, b->buf, b->len);
        b->buf = nb;
        b->cap = ncap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

static void puts_(sbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_u64(sbuf *b, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof(tmp);
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    put(b, tmp + i, sizeof(tmp) - i);
}

static void put_i64(sbuf *b, int64_t v)
{
    if (v < 0) {
        put(b, "-", 1);
        put_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(b, (uint64_t)v);
    }
}

static void put_string(sbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    put(b, "\"", 1);
    const unsigned char *u = (const unsigned char *)s;
    size_t k = 0;
    while (k < n) {
        unsigned char ch = u[k];
        char esc[7];
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\', esc[1] = (char)ch;
            put(b, esc, 2);
            k++;
        } else if (ch < 0x20) {
            const char *short_esc = ch == '\n'   ? "\\n"
                                    : ch == '\r' ? "\\r"
                                    : ch == '\t' ? "\\t"
                                    : ch == '\b' ? "\\b"
                                    : ch == '\f' ? "\\f"
                                                 : NULL;
            if (short_esc != NULL) {
                put(b, short_esc, 2);
            } else {
                memcpy(esc, "\\u00", 4);
                esc[4] = hex[ch >> 4], esc[5] = hex[ch & 15];
                put(b, esc, 6);
            }
            k++;
        } else if (ch < 0x80) {
            put(b, (const char *)u + k, 1);
            k++;
        } else {
            uint32_t cp;
            size_t len = cp_json_utf8_next(u + k, n - k, &cp);
            if (len == 0) {
                put(b, "\xef\xbf\xbd", 3); /* U+FFFD for each bad byte */
                k++;
            } else {
                put(b, (const char *)u + k, len);
                k += len;
            }
        }
    }
    put(b, "\"", 1);
}

static void put_double(sbuf *b, double d, bool is_float)
{
    if (isnan(d)) {
        puts_(b, "\"NaN\"");
        return;
    }
    if (isinf(d)) {
        puts_(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        return;
    }
    /* The shortest precision that reads back to the same value. */
    char tmp[40];
    for (int prec = is_float ? 6 : 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
        double back = strtod(tmp, NULL);
        if (is_float ? (float)back == (float)d : back == d)
            break;
    }
    puts_(b, tmp);
}

static void put_base64(sbuf *b, const ProtobufCBinaryData *bd)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    put(b, "\"", 1);
    for (size_t k = 0; k < bd->len; k += 3) {
        uint32_t v = (uint32_t)bd->data[k] << 16;
        size_t left = bd->len - k;
        if (left > 1)
            v |= (uint32_t)bd->data[k + 1] << 8;
        if (left > 2)
            v |= bd->data[k + 2];
        char q[4] = {tbl[v >> 18 & 63], tbl[v >> 12 & 63], left > 1 ? tbl[v >> 6 & 63] : '=',
                     left > 2 ? tbl[v & 63] : '='};
        put(b, q, 4);
    }
    put(b, "\"", 1);
}

static void put_message(sbuf *b, const ProtobufCMessage *m, unsigned flags);

/* Writes one value of field f stored at p. as_key: a map key (always a
 * JSON string). */
static void put_value(sbuf *b, const ProtobufCFieldDescriptor *f, const void *p, bool as_key,
                      unsigned flags)
{
    bool q = as_key;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        put(b, "\"", q);
        put_i64(b, *(const int32_t *)p);
        put(b, "\"", q);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        put(b, "\"", q);
        put_u64(b, *(const uint32_t *)p);
        put(b, "\"", q);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        put(b, "\"", 1); /* proto3 JSON: 64-bit integers are strings */
        put_i64(b, *(const int64_t *)p);
        put(b, "\"", 1);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        put(b, "\"", 1);
        put_u64(b, *(const uint64_t *)p);
        put(b, "\"", 1);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        put(b, "\"", q);
        puts_(b, *(const protobuf_c_boolean *)p ? "true" : "false");
        put(b, "\"", q);
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        int32_t v = *(const int32_t *)p;
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
        if (ev != NULL) {
            put_string(b, ev->name, strlen(ev->name));
        } else { /* open enum: an unknown number stays a number */
            put(b, "\"", q);
            put_i64(b, v);
            put(b, "\"", q);
        }
        break;
    }
    case PROTOBUF_C_TYPE_FLOAT:
        put_double(b, *(const float *)p, true);
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        put_double(b, *(const double *)p, false);
        break;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        if (s == NULL)
            s = "";
        put_string(b, s, strlen(s));
        break;
    }
    case PROTOBUF_C_TYPE_BYTES:
        put_base64(b, p);
        break;
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
        if (sub != NULL)
            put_message(b, sub, flags);
        else
            puts_(b, "null");
        break;
    }
    }
}

/* proto3 presence: is the singular field set to a non-default value? */
static bool is_set(const ProtobufCFieldDescriptor *f, const char *m)
{
    const void *p = m + f->offset;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *(const uint32_t *)(m + f->quantifier_offset) == f->id;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_STRING &&
        f->type != PROTOBUF_C_TYPE_MESSAGE)
        return *(const protobuf_c_boolean *)(m + f->quantifier_offset);
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        return s != NULL && (s[0] != '\0' || f->label == PROTOBUF_C_LABEL_OPTIONAL);
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        return *(void *const *)p != NULL;
    case PROTOBUF_C_TYPE_BYTES:
        return ((const ProtobufCBinaryData *)p)->len != 0;
    case PROTOBUF_C_TYPE_FLOAT:
        return *(const float *)p != 0 || signbit(*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE:
        return *(const double *)p != 0 || signbit(*(const double *)p);
    case PROTOBUF_C_TYPE_BOOL:
        return *(const protobuf_c_boolean *)p != 0;
    default: {
        size_t n = cp_json_elem_size(f->type);
        const unsigned char *u = p;
        for (size_t k = 0; k < n; k++)
            if (u[k] != 0)
                return true;
        return false;
    }
    }
}

static void put_message(sbuf *b, const ProtobufCMessage *m, unsigned flags)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    bool emit = (flags & CP_JSON_EMIT_DEFAULTS) != 0;
    bool first = true;
    put(b, "{", 1);
    for (unsigned k = 0; k < d->n_fields; k++) {
        const ProtobufCFieldDescriptor *f = &d->fields[k];
        const void *p = base + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            if (n == 0 && !emit)
                continue;
        } else if (!is_set(f, base)) {
            /* Fields with explicit presence stay out when absent. */
            if (!emit || f->label != PROTOBUF_C_LABEL_NONE ||
                (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
                continue;
        }
        if (!first)
            put(b, ",", 1);
        first = false;
        put_string(b, f->name, strlen(f->name));
        put(b, ":", 1);
        if (f->label != PROTOBUF_C_LABEL_REPEATED) {
            put_value(b, f, p, false, flags);
            continue;
        }
        size_t n = *(const size_t *)(base + f->quantifier_offset);
        const char *arr = *(char *const *)p;
        if (cp_json_is_map_field(d, f)) {
            const ProtobufCMessageDescriptor *ed = f->descriptor;
            const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
            put(b, "{", 1);
            for (size_t i = 0; i < n; i++) {
                const char *entry = ((const char *const *)arr)[i];
                if (i)
                    put(b, ",", 1);
                put_value(b, kf, entry + kf->offset, true, flags);
                put(b, ":", 1);
                if (vf->type == PROTOBUF_C_TYPE_MESSAGE &&
                    *(void *const *)(entry + vf->offset) == NULL)
                    put(b, "{}", 2); /* an absent map value is the empty message */
                else
                    put_value(b, vf, entry + vf->offset, false, flags);
            }
            put(b, "}", 1);
        } else {
            size_t es = cp_json_elem_size(f->type);
            put(b, "[", 1);
            for (size_t i = 0; i < n; i++) {
                if (i)
                    put(b, ",", 1);
                if (f->type == PROTOBUF_C_TYPE_MESSAGE && ((void *const *)arr)[i] == NULL)
                    put(b, "{}", 2);
                else
                    put_value(b, f, arr + i * es, false, flags);
            }
            put(b, "]", 1);
        }
    }
    put(b, "}", 1);
}

int cp_json_from_message(cp_arena *a, const ProtobufCMessage *m, unsigned flags, char **out,
                         cp_error *e)
{
    sbuf b = {.a = a};
    put_message(&b, m, flags);
    if (b.oom)
        return cp_json_nomem(e);
    *out = b.buf;
    return CP_OK;
}
