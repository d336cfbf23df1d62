/* redact.c - see redact.h. */
#include "security/redact.h"

#include "base/utf8.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 8
#define MAX_STR 200 /* longer strings are cut in the rendering, on a character boundary */

/* name lower-cased, without '_' and '-' (cut to cap - 1 bytes). */
static void fold(const char *name, char *low, size_t cap)
{
    size_t n = 0;
    for (const char *p = name; *p != '\0' && n + 1 < cap; p++)
        if (*p != '_' && *p != '-')
            low[n++] = (char)tolower((unsigned char)*p);
    low[n] = '\0';
}

static char extra[CP_REDACT_MAX_EXTRA][64]; /* folded */
static size_t n_extra;

bool cp_redact_set_extra(char *const *names, size_t n)
{
    if (n > CP_REDACT_MAX_EXTRA)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) >= sizeof(extra[0]))
            return false;
    for (size_t i = 0; i < n; i++)
        fold(names[i], extra[i], sizeof(extra[i]));
    n_extra = n;
    return true;
}

bool cp_redact_is_secret(const char *name)
{
    static const char *const words[] = {"password", "passwd", "secret"};
    char low[128];
    fold(name, low, sizeof(low));
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strstr(low, words[i]) != NULL)
            return true;
    for (size_t i = 0; i < n_extra; i++)
        if (strcmp(low, extra[i]) == 0)
            return true;
    return false;
}

typedef struct out {
    char *buf;
    size_t cap, len;
} out;

/* Appends what fits of s, never part of a UTF-8 character. */
static void put(out *o, const char *s, size_t n)
{
    size_t room = o->cap - 1 - o->len;
    if (n > room)
        n = cp_utf8_cut(s, n, room);
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static void puts_(out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_string(out *o, const char *s)
{
    put(o, "\"", 1);
    size_t len = strnlen(s, MAX_STR + 1);
    size_t keep = cp_utf8_cut(s, len, MAX_STR); /* a cut never splits a character */
    size_t run = 0; /* start of the bytes not yet written, put in one piece */
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c, esc[2] = '\0';
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
        } else {
            continue;
        }
        put(o, s + run, i - run);
        puts_(o, esc);
        run = i + 1;
    }
    put(o, s + run, keep - run);
    if (keep < len)
        puts_(o, "...");
    put(o, "\"", 1);
}

static void render(out *o, const ProtobufCMessage *m, int depth);

static void value(out *o, const ProtobufCFieldDescriptor *f, const void *p, int depth)
{
    char num[48];
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        snprintf(num, sizeof(num), "%" PRId32, *(const int32_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        snprintf(num, sizeof(num), "%" PRIu32, *(const uint32_t *)p);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        snprintf(num, sizeof(num), "%" PRId64, *(const int64_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        snprintf(num, sizeof(num), "%" PRIu64, *(const uint64_t *)p);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        snprintf(num, sizeof(num), "%g", (double)*(const float *)p);
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        snprintf(num, sizeof(num), "%g", *(const double *)p);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        snprintf(num, sizeof(num), "%s", *(const protobuf_c_boolean *)p ? "true" : "false");
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumValue *ev =
            protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
        if (ev != NULL) {
            put_string(o, ev->name);
            return;
        }
        snprintf(num, sizeof(num), "%d", *(const int *)p);
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        put_string(o, s != NULL ? s : "");
        return;
    }
    case PROTOBUF_C_TYPE_BYTES:
        snprintf(num, sizeof(num), "\"<%zu bytes>\"", ((const ProtobufCBinaryData *)p)->len);
        break;
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
        if (sub == NULL)
            puts_(o, "null");
        else
            render(o, sub, depth + 1);
        return;
    }
    default:
        snprintf(num, sizeof(num), "?");
    }
    puts_(o, num);
}

static size_t elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return 8;
    case PROTOBUF_C_TYPE_DOUBLE:
        return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_ENUM:
        return sizeof(int);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    default:
        return 4;
    }
}

static void render(out *o, const ProtobufCMessage *m, int depth)
{
    if (depth > MAX_DEPTH) {
        puts_(o, "{...}");
        return;
    }
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    bool first = true;
    put(o, "{", 1);
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const void *p = base + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            if (n == 0)
                continue;
            puts_(o, first ? "\"" : ",\"");
            puts_(o, f->name);
            puts_(o, "\":");
            if (cp_redact_is_secret(f->name)) {
                puts_(o, "\"" CP_REDACTED "\"");
            } else {
                const char *arr = *(const char *const *)p;
                put(o, "[", 1);
                for (size_t k = 0; k < n; k++) {
                    if (k > 0)
                        put(o, ",", 1);
                    value(o, f, arr + k * elem_size(f->type), depth);
                }
                put(o, "]", 1);
            }
            first = false;
            continue;
        }
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)(base + f->quantifier_offset) != f->id)
            continue;
        if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset != 0 &&
            !*(const protobuf_c_boolean *)(base + f->quantifier_offset))
            continue;
        puts_(o, first ? "\"" : ",\"");
        puts_(o, f->name);
        puts_(o, "\":");
        if (cp_redact_is_secret(f->name))
            puts_(o, "\"" CP_REDACTED "\"");
        else
            value(o, f, p, depth);
        first = false;
    }
    put(o, "}", 1);
}

size_t cp_redact_render(const ProtobufCMessage *m, char *buf, size_t cap)
{
    if (cap == 0)
        return 0;
    out o = {buf, cap, 0};
    buf[0] = '\0';
    if (m == NULL)
        puts_(&o, "null");
    else
        render(&o, m, 0);
    return o.len;
}

/* Replaces each occurrence of secret in text; when the text must be cut
 * to make room, a trailing piece of the secret is cut as well. */
static size_t scrub_one(char *text, size_t cap, const char *secret)
{
    size_t n = 0, sl = strlen(secret), rl = strlen(CP_REDACTED);
    bool cut = false;
    if (sl < 3)
        return 0;
    for (char *p = text; (p = strstr(p, secret)) != NULL; n++) {
        size_t pos = (size_t)(p - text), tail = strlen(p + sl);
        if (pos + rl >= cap) { /* not even the marker fits */
            *p = '\0';
            return n + 1;
        }
        size_t room = cap - 1 - pos - rl;
        if (tail > room) {
            tail = room;
            cut = true;
        }
        memmove(p + rl, p + sl, tail);
        memcpy(p, CP_REDACTED, rl);
        p[rl + tail] = '\0';
        p += rl;
    }
    if (cut) {
        size_t len = strlen(text);
        for (size_t k = sl - 1; k > 0; k--)
            if (k <= len && memcmp(text + len - k, secret, k) == 0) {
                text[len - k] = '\0';
                break;
            }
    }
    return n;
}

static size_t scrub(const ProtobufCMessage *m, char *text, size_t cap, int depth)
{
    if (m == NULL || depth > MAX_DEPTH)
        return 0;
    size_t n = 0;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const void *p = base + f->offset;
        size_t count = 1;
        const char *arr = p;
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)(base + f->quantifier_offset) != f->id)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            count = *(const size_t *)(base + f->quantifier_offset);
            arr = *(const char *const *)p;
        }
        for (size_t k = 0; k < count; k++) {
            const void *e = arr + k * elem_size(f->type);
            if (f->type == PROTOBUF_C_TYPE_MESSAGE)
                n += scrub(*(ProtobufCMessage *const *)e, text, cap, depth + 1);
            else if (f->type == PROTOBUF_C_TYPE_STRING && cp_redact_is_secret(f->name) &&
                     *(char *const *)e != NULL)
                n += scrub_one(text, cap, *(char *const *)e);
        }
    }
    return n;
}

size_t cp_redact_scrub(const ProtobufCMessage *m, char *text, size_t cap)
{
    return cap > 0 ? scrub(m, text, cap, 0) : 0;
}
