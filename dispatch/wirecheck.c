/* wirecheck.c - walk protobuf wire bytes, checking string fields. */
#include "dispatch/wirecheck.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH CP_WIRE_MAX_DEPTH

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

/* ---- the streaming filter ------------------------------------------- */

enum { F_TAG, F_VARINT, F_LEN, F_SKIP };

void cp_wire_filter_init(cp_wire_filter *f, const ProtobufCMessageDescriptor *desc, uint64_t total,
                         size_t max_fields)
{
    memset(f, 0, sizeof(*f));
    f->desc[0] = desc;
    f->end[0] = total;
    f->total = total;
    f->max_fields = max_fields;
    f->state = F_TAG;
}

static int fail(cp_wire_filter *f, int err)
{
    f->err = err;
    return err;
}

/* A field ended: close the nested messages that end here too. */
static void field_done(cp_wire_filter *f)
{
    f->state = F_TAG;
    f->acc = 0;
    f->shift = 0;
    f->tag_len = 0;
    while (f->depth > 0 && f->pos == f->end[f->depth])
        f->depth--;
}

/* The tag is complete: keep or drop the field, choose what comes next. */
static int on_tag(cp_wire_filter *f, cp_wire_emit_fn emit, void *ctx)
{
    uint64_t num = f->acc >> 3;
    unsigned wt = f->acc & 7;
    if (num == 0 || num > 0x1fffffff) /* as walk() above */
        return fail(f, CP_WIRE_MALFORMED);
    f->field = protobuf_c_message_descriptor_get_field(f->desc[f->depth], (unsigned)num);
    /* Inside a kept message every field stays: its length is sent already. */
    f->keep = f->depth > 0 || f->field != NULL;
    if (f->keep) {
        if (++f->kept > f->max_fields)
            return fail(f, CP_WIRE_TOO_MANY);
        if (emit(ctx, f->tag, f->tag_len) != 0)
            return fail(f, CP_WIRE_NOMEM);
    } else {
        f->dropped++;
    }
    f->acc = 0;
    f->shift = 0;
    f->tag_len = 0;
    switch (wt) {
    case 0:
        f->state = F_VARINT;
        return CP_WIRE_OK;
    case 1:
    case 5:
        f->left = wt == 1 ? 8 : 4;
        if (f->left > f->end[f->depth] - f->pos)
            return fail(f, CP_WIRE_MALFORMED);
        f->state = F_SKIP;
        return CP_WIRE_OK;
    case 2:
        f->state = F_LEN;
        return CP_WIRE_OK;
    default:
        return fail(f, CP_WIRE_MALFORMED);
    }
}

/* The length of a length-delimited field is complete. */
static int on_len(cp_wire_filter *f)
{
    uint64_t len = f->acc;
    if (len > f->end[f->depth] - f->pos)
        return fail(f, CP_WIRE_MALFORMED);
    if (f->keep && f->field != NULL && f->field->type == PROTOBUF_C_TYPE_MESSAGE) {
        /* Count the fields inside too: descend. */
        if (f->depth + 1 > CP_WIRE_MAX_DEPTH)
            return fail(f, CP_WIRE_MALFORMED);
        f->depth++;
        f->desc[f->depth] = f->field->descriptor;
        f->end[f->depth] = f->pos + len;
        field_done(f); /* pops again at once when the message is empty */
        return CP_WIRE_OK;
    }
    f->acc = 0;
    f->shift = 0;
    f->left = len;
    if (len == 0)
        field_done(f);
    else
        f->state = F_SKIP;
    return CP_WIRE_OK;
}

int cp_wire_filter_feed(cp_wire_filter *f, const uint8_t *in, size_t n, cp_wire_emit_fn emit,
                        void *ctx)
{
    size_t i = 0;
    while (f->err == CP_WIRE_OK && i < n) {
        if (f->state == F_SKIP) {
            uint64_t k = f->left < n - i ? f->left : n - i;
            if (f->keep && emit(ctx, in + i, (size_t)k) != 0)
                return fail(f, CP_WIRE_NOMEM);
            i += (size_t)k;
            f->pos += k;
            f->left -= k;
            if (f->left == 0)
                field_done(f);
            continue;
        }
        /* One byte of a varint: a tag, a value or a length. A field may
         * not run past the end of the message holding it. */
        if (f->pos >= f->end[f->depth] || f->shift >= 64)
            return fail(f, CP_WIRE_MALFORMED);
        uint8_t c = in[i++];
        f->pos++;
        f->acc |= (uint64_t)(c & 0x7f) << f->shift;
        f->shift += 7;
        if (f->state == F_TAG)
            f->tag[f->tag_len++] = c;
        else if (f->keep && emit(ctx, &c, 1) != 0)
            return fail(f, CP_WIRE_NOMEM);
        if (c & 0x80)
            continue;
        if (f->state == F_TAG)
            on_tag(f, emit, ctx);
        else if (f->state == F_LEN)
            on_len(f);
        else
            field_done(f);
    }
    return f->err;
}

int cp_wire_filter_finish(cp_wire_filter *f)
{
    if (f->err != CP_WIRE_OK)
        return f->err;
    if (f->pos != f->total || f->depth != 0 || f->state != F_TAG || f->tag_len != 0)
        return fail(f, CP_WIRE_MALFORMED);
    return CP_WIRE_OK;
}
