/* json_pb.c - cp_json tree -> ProtobufCMessage, driven by the generated
 * descriptors (proto3 JSON mapping); JSON field names and map fields. */
#include "cli/json_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ field names */

char *cp_json_name(cp_arena *a, const char *name)
{
    char *out = cp_arena_alloc(a, strlen(name) + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    bool upper = false;
    for (const char *s = name; *s != '\0'; s++) {
        if (*s == '_') {
            upper = true;
        } else if (upper) {
            out[o++] = (*s >= 'a' && *s <= 'z') ? (char)(*s - 'a' + 'A') : *s;
            upper = false;
        } else {
            out[o++] = *s;
        }
    }
    out[o] = '\0';
    return out;
}

/* Compares key with the JSON name of field name without allocating. */
static bool json_name_eq(const char *name, const char *key)
{
    bool upper = false;
    for (; *name != '\0'; name++) {
        char c = *name;
        if (c == '_') {
            upper = true;
            continue;
        }
        if (upper && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        upper = false;
        if (*key++ != c)
            return false;
    }
    return *key == '\0';
}

bool cp_json_is_map_field(const ProtobufCMessageDescriptor *parent,
                          const ProtobufCFieldDescriptor *f)
{
    if (f->label != PROTOBUF_C_LABEL_REPEATED || f->type != PROTOBUF_C_TYPE_MESSAGE)
        return false;
    const ProtobufCMessageDescriptor *d = f->descriptor;
    if (d->n_fields != 2 || d->fields[0].id != 1 || strcmp(d->fields[0].name, "key") != 0 ||
        d->fields[1].id != 2 || strcmp(d->fields[1].name, "value") != 0)
        return false;
    /* d->name must be "<parent>.<Field>Entry" where <Field> is the field
     * name in CamelCase with its first letter upper-cased. */
    size_t pn = strlen(parent->name);
    const char *s = d->name;
    if (strncmp(s, parent->name, pn) != 0 || s[pn] != '.')
        return false;
    s += pn + 1;
    bool upper = true;
    for (const char *c = f->name; *c != '\0'; c++) {
        char ch = *c;
        if (ch == '_') {
            upper = true;
            continue;
        }
        if (upper && ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 'a' + 'A');
        upper = false;
        if (*s++ != ch)
            return false;
    }
    return strcmp(s, "Entry") == 0;
}

/* ------------------------------------------------------ JSON -> message */

typedef struct conv {
    cp_arena *a;
    cp_error *e;
} conv;

static const char *kind_name(cp_json_kind k)
{
    switch (k) {
    case CP_JSON_NULL:
        return "null";
    case CP_JSON_BOOL:
        return "a boolean";
    case CP_JSON_NUMBER:
        return "a number";
    case CP_JSON_STRING:
        return "a string";
    case CP_JSON_ARRAY:
        return "an array";
    case CP_JSON_OBJECT:
        return "an object";
    }
    return "?";
}

static int __attribute__((format(printf, 3, 4)))
field_error(conv *c, const char *path, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return cp_error_set(c->e, CP_E_INVALID_ARGUMENT, "field \"%s\": %s", path, what);
}

static int wrong_type(conv *c, const char *path, const char *want, const cp_json *v)
{
    return field_error(c, path, "expected %s, got %s", want, kind_name(v->kind));
}

size_t cp_json_elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return 8;
    case PROTOBUF_C_TYPE_FLOAT:
        return sizeof(float);
    case PROTOBUF_C_TYPE_DOUBLE:
        return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    }
    return 0;
}

/* Integer text (a JSON number literal, or a string holding one) to a
 * signed or unsigned 64-bit value. Integral values written with a
 * fraction or exponent ("1e3", "5.0") are accepted, as protojson does.
 * Returns 0, -1 if not an integer, -2 if out of 64-bit range. */
static int parse_integer(const char *s, bool is_signed, int64_t *i, uint64_t *u)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64)
        return -1;
    bool plain = true;
    for (size_t k = 0; k < n; k++)
        if (!cp_json_is_digit(s[k]) && !(k == 0 && s[k] == '-'))
            plain = false;
    if (plain && (n > 1 || s[0] != '-')) {
        char *end;
        errno = 0;
        if (is_signed) {
            long long v = strtoll(s, &end, 10);
            if (*end != '\0')
                return -1;
            if (errno != 0)
                return -2;
            *i = v;
        } else {
            if (s[0] == '-')
                return -1;
            unsigned long long v = strtoull(s, &end, 10);
            if (*end != '\0')
                return -1;
            if (errno != 0)
                return -2;
            *u = v;
        }
        return 0;
    }
    /* Fraction or exponent: must be a valid JSON number (no hex, "inf"). */
    for (size_t k = 0; k < n; k++)
        if (!cp_json_is_digit(s[k]) && strchr("-+.eE", s[k]) == NULL)
            return -1;
    char *end;
    double d = strtod(s, &end);
    if (*end != '\0' || !isfinite(d) || d != floor(d))
        return -1;
    if (is_signed) {
        if (d < -9223372036854775808.0 || d >= 9223372036854775808.0)
            return -2;
        *i = (int64_t)d;
    } else {
        if (d < 0)
            return -1;
        if (d >= 18446744073709551616.0)
            return -2;
        *u = (uint64_t)d;
    }
    return 0;
}

static int set_integer(conv *c, const ProtobufCFieldDescriptor *f, const cp_json *v,
                       const char *path, void *dst)
{
    if (v->kind != CP_JSON_NUMBER && v->kind != CP_JSON_STRING)
        return wrong_type(c, path, "an integer (number or string)", v);
    int64_t i = 0;
    uint64_t u = 0;
    bool is_signed = f->type == PROTOBUF_C_TYPE_INT32 || f->type == PROTOBUF_C_TYPE_SINT32 ||
                     f->type == PROTOBUF_C_TYPE_SFIXED32 || f->type == PROTOBUF_C_TYPE_INT64 ||
                     f->type == PROTOBUF_C_TYPE_SINT64 || f->type == PROTOBUF_C_TYPE_SFIXED64 ||
                     f->type == PROTOBUF_C_TYPE_ENUM;
    int prc = parse_integer(v->str, is_signed, &i, &u);
    if (prc == -2)
        return field_error(c, path, "%s is out of range for %s", v->str,
                           is_signed ? "int64" : "uint64");
    if (prc != 0)
        return field_error(c, path, "%s%s%s is not %s", v->kind == CP_JSON_STRING ? "\"" : "",
                           v->str, v->kind == CP_JSON_STRING ? "\"" : "",
                           is_signed ? "an integer" : "a non-negative integer");
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_ENUM:
        if (i < INT32_MIN || i > INT32_MAX)
            return field_error(c, path, "%s is out of range for int32", v->str);
        *(int32_t *)dst = (int32_t)i;
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        if (u > UINT32_MAX)
            return field_error(c, path, "%s is out of range for uint32", v->str);
        *(uint32_t *)dst = (uint32_t)u;
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        *(uint64_t *)dst = u;
        break;
    default:
        *(int64_t *)dst = i;
        break;
    }
    return CP_OK;
}

static int set_float(conv *c, const ProtobufCFieldDescriptor *f, const cp_json *v, const char *path,
                     void *dst)
{
    double d;
    if (v->kind == CP_JSON_STRING && strcmp(v->str, "NaN") == 0) {
        d = NAN;
    } else if (v->kind == CP_JSON_STRING && strcmp(v->str, "Infinity") == 0) {
        d = INFINITY;
    } else if (v->kind == CP_JSON_STRING && strcmp(v->str, "-Infinity") == 0) {
        d = -INFINITY;
    } else if (v->kind == CP_JSON_NUMBER || v->kind == CP_JSON_STRING) {
        char *end;
        d = strtod(v->str, &end);
        if (v->str[0] == '\0' || *end != '\0' || !isfinite(d) ||
            strspn(v->str, "0123456789+-.eE") != v->len)
            return field_error(c, path, "\"%s\" is not a valid number", v->str);
    } else {
        return wrong_type(c, path, "a number", v);
    }
    if (f->type == PROTOBUF_C_TYPE_FLOAT) {
        if (isfinite(d) && fabs(d) > 3.4028234663852886e38)
            return field_error(c, path, "%s is out of range for float", v->str);
        *(float *)dst = (float)d;
    } else {
        *(double *)dst = d;
    }
    return CP_OK;
}

static int b64val(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+' || ch == '-')
        return 62;
    if (ch == '/' || ch == '_')
        return 63;
    return -1;
}

/* Standard or URL-safe base64, padding optional (as protojson accepts). */
static int set_bytes(conv *c, const cp_json *v, const char *path, ProtobufCBinaryData *dst)
{
    if (v->kind != CP_JSON_STRING)
        return wrong_type(c, path, "a base64 string", v);
    size_t n = v->len;
    while (n > 0 && v->str[n - 1] == '=')
        n--;
    uint8_t *out = cp_arena_alloc(c->a, n * 3 / 4 + 1);
    if (out == NULL)
        return cp_json_nomem(c->e);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t k = 0; k < n; k++) {
        int d = b64val(v->str[k]);
        if (d < 0)
            return field_error(c, path, "invalid base64");
        acc = acc << 6 | (uint32_t)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    if (n % 4 == 1)
        return field_error(c, path, "invalid base64 length");
    dst->data = out;
    dst->len = o;
    return CP_OK;
}

static int to_message(conv *c, const cp_json *v, const ProtobufCMessageDescriptor *d,
                      const char *path, ProtobufCMessage **out);

/* Sets one value (a singular field, a repeated element, a map key or
 * value) of field f at dst. */
static int set_value(conv *c, const ProtobufCFieldDescriptor *f, const cp_json *v, const char *path,
                     void *dst)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
        if (v->kind != CP_JSON_STRING)
            return wrong_type(c, path, "a string", v);
        *(char **)dst = (char *)v->str; /* the tree lives in the same arena */
        return CP_OK;
    case PROTOBUF_C_TYPE_BOOL:
        if (v->kind != CP_JSON_BOOL)
            return wrong_type(c, path, "true or false", v);
        *(protobuf_c_boolean *)dst = v->boolean;
        return CP_OK;
    case PROTOBUF_C_TYPE_ENUM:
        if (v->kind == CP_JSON_STRING) {
            const ProtobufCEnumDescriptor *ed = f->descriptor;
            const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(ed, v->str);
            if (ev == NULL) {
                char names[256] = "";
                size_t o = 0;
                for (unsigned k = 0; k < ed->n_values && o < sizeof(names); k++)
                    o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", k ? ", " : "",
                                          ed->values[k].name);
                return field_error(c, path, "\"%s\" is not a value of enum %s (%s)", v->str,
                                   ed->name, names);
            }
            *(int32_t *)dst = ev->value;
            return CP_OK;
        }
        if (v->kind != CP_JSON_NUMBER)
            return wrong_type(c, path, "an enum name or number", v);
        return set_integer(c, f, v, path, dst);
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE:
        return set_float(c, f, v, path, dst);
    case PROTOBUF_C_TYPE_BYTES:
        return set_bytes(c, v, path, dst);
    case PROTOBUF_C_TYPE_MESSAGE:
        return to_message(c, v, f->descriptor, path, (ProtobufCMessage **)dst);
    default:
        return set_integer(c, f, v, path, dst);
    }
}

static char *child_path(conv *c, const char *path, const char *name)
{
    return path[0] ? cp_arena_printf(c->a, "%s.%s", path, name) : cp_arena_strdup(c->a, name);
}

static int set_repeated(conv *c, const ProtobufCFieldDescriptor *f, const cp_json *v,
                        const char *path, void *msg)
{
    if (v->kind != CP_JSON_ARRAY)
        return wrong_type(c, path, "an array", v);
    size_t es = cp_json_elem_size(f->type);
    char *arr = NULL;
    if (v->n > 0 && (arr = cp_arena_alloc(c->a, v->n * es)) == NULL)
        return cp_json_nomem(c->e);
    for (size_t k = 0; k < v->n; k++) {
        char *ep = cp_arena_printf(c->a, "%s[%u]", path, (unsigned)k);
        if (ep == NULL)
            return cp_json_nomem(c->e);
        if (v->items[k]->kind == CP_JSON_NULL)
            return field_error(c, ep, "null is not allowed in a repeated field");
        int rc = set_value(c, f, v->items[k], ep, arr + k * es);
        if (rc != CP_OK)
            return rc;
    }
    *(size_t *)((char *)msg + f->quantifier_offset) = v->n;
    *(void **)((char *)msg + f->offset) = arr;
    return CP_OK;
}

static int set_map(conv *c, const ProtobufCFieldDescriptor *f, const cp_json *v, const char *path,
                   void *msg)
{
    if (v->kind != CP_JSON_OBJECT)
        return wrong_type(c, path, "an object (map)", v);
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
    ProtobufCMessage **arr = NULL;
    if (v->n > 0 && (arr = cp_arena_alloc(c->a, v->n * sizeof(*arr))) == NULL)
        return cp_json_nomem(c->e);
    for (size_t k = 0; k < v->n; k++) {
        char *ep = cp_arena_printf(c->a, "%s[\"%s\"]", path, v->keys[k]);
        ProtobufCMessage *entry = cp_arena_alloc(c->a, ed->sizeof_message);
        if (ep == NULL || entry == NULL)
            return cp_json_nomem(c->e);
        ed->message_init(entry);
        /* Map keys are always JSON strings; reuse the scalar rules by
         * presenting the key as a string value. */
        cp_json key = {.kind = CP_JSON_STRING, .str = v->keys[k], .len = strlen(v->keys[k])};
        int rc;
        if (kf->type == PROTOBUF_C_TYPE_BOOL) {
            if (strcmp(key.str, "true") != 0 && strcmp(key.str, "false") != 0)
                return field_error(c, ep, "map key must be \"true\" or \"false\"");
            *(protobuf_c_boolean *)((char *)entry + kf->offset) = key.str[0] == 't';
        } else if ((rc = set_value(c, kf, &key, ep, (char *)entry + kf->offset)) != CP_OK) {
            return rc;
        }
        if (v->items[k]->kind == CP_JSON_NULL)
            return field_error(c, ep, "null is not allowed as a map value");
        if ((rc = set_value(c, vf, v->items[k], ep, (char *)entry + vf->offset)) != CP_OK)
            return rc;
        arr[k] = entry;
    }
    *(size_t *)((char *)msg + f->quantifier_offset) = v->n;
    *(void **)((char *)msg + f->offset) = arr;
    return CP_OK;
}

static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d,
                                                  const char *key)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, key);
    if (f != NULL)
        return f;
    for (unsigned k = 0; k < d->n_fields; k++)
        if (json_name_eq(d->fields[k].name, key))
            return &d->fields[k];
    return NULL;
}

static int unknown_field(conv *c, const ProtobufCMessageDescriptor *d, const char *path,
                         const char *key)
{
    char names[512] = "";
    size_t o = 0;
    for (unsigned k = 0; k < d->n_fields && o < sizeof(names); k++)
        o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", k ? ", " : "",
                              d->fields[k].name);
    return cp_error_set(c->e, CP_E_INVALID_ARGUMENT, "unknown field \"%s\"%s%s in %s (%s%s)", key,
                        path[0] ? " under " : "", path, d->name,
                        d->n_fields ? "fields: " : "it has no fields", names);
}

static int to_message(conv *c, const cp_json *v, const ProtobufCMessageDescriptor *d,
                      const char *path, ProtobufCMessage **out)
{
    if (v->kind != CP_JSON_OBJECT && v->kind != CP_JSON_NULL) {
        if (path[0] == '\0')
            return cp_error_set(c->e, CP_E_INVALID_ARGUMENT,
                                "the request must be a JSON object (%s), got %s", d->name,
                                kind_name(v->kind));
        return wrong_type(c, path, "an object", v);
    }
    ProtobufCMessage *m = cp_arena_alloc(c->a, d->sizeof_message);
    bool *seen = cp_arena_alloc(c->a, d->n_fields + 1);
    if (m == NULL || seen == NULL)
        return cp_json_nomem(c->e);
    d->message_init(m);
    for (size_t k = 0; v->kind == CP_JSON_OBJECT && k < v->n; k++) {
        const ProtobufCFieldDescriptor *f = find_field(d, v->keys[k]);
        if (f == NULL)
            return unknown_field(c, d, path, v->keys[k]);
        char *fp = child_path(c, path, f->name);
        if (fp == NULL)
            return cp_json_nomem(c->e);
        size_t idx = (size_t)(f - d->fields);
        if (seen[idx])
            return field_error(c, fp, "given more than once");
        seen[idx] = true;
        const cp_json *fv = v->items[k];
        if (fv->kind == CP_JSON_NULL)
            continue; /* null means "the default" */
        char *base = (char *)m;
        int rc;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            rc = cp_json_is_map_field(d, f) ? set_map(c, f, fv, fp, m)
                                            : set_repeated(c, f, fv, fp, m);
        } else {
            rc = set_value(c, f, fv, fp, base + f->offset);
            if (rc == CP_OK && (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) {
                uint32_t *which = (uint32_t *)(base + f->quantifier_offset);
                if (*which != 0 && *which != f->id)
                    return field_error(c, fp, "another field of the same oneof is already set");
                *which = f->id;
            } else if (rc == CP_OK && f->label == PROTOBUF_C_LABEL_OPTIONAL &&
                       f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE) {
                *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
            }
        }
        if (rc != CP_OK)
            return rc;
    }
    *out = m;
    return CP_OK;
}

int cp_json_to_message(cp_arena *a, const cp_json *v, const ProtobufCMessageDescriptor *d,
                       ProtobufCMessage **out, cp_error *e)
{
    conv c = {.a = a, .e = e};
    return to_message(&c, v, d, "", out);
}

int cp_json_text_to_message(cp_arena *a, const char *text, size_t len,
                            const ProtobufCMessageDescriptor *d, ProtobufCMessage **out,
                            cp_error *e)
{
    size_t k = 0;
    while (k < len && strchr(" \t\r\n", text[k]) != NULL)
        k++;
    if (k == len) {
        cp_json empty = {.kind = CP_JSON_OBJECT};
        return cp_json_to_message(a, &empty, d, out, e);
    }
    cp_json *v;
    int rc = cp_json_parse(a, text, len, &v, e);
    if (rc != CP_OK)
        return rc;
    return cp_json_to_message(a, v, d, out, e);
}
