/* json.c - JSON text <-> cp_json tree <-> protobuf-c messages. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ UTF-8 */

/* Decodes one UTF-8 sequence at s[0..len); returns its length and sets
 * *cp, or 0 if it is not well-formed (overlong, surrogate, > U+10FFFF). */
static size_t utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
    if (len == 0)
        return 0;
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if ((c & 0xe0) == 0xc0) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

static size_t utf8_put(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* ----------------------------------------------------------------- parser */

typedef struct parser {
    cp_arena *a;
    const char *s;
    size_t len, i;
    int depth;
    cp_error *e;
} parser;

static int __attribute__((format(printf, 3, 4))) syntax_error(parser *p, size_t pos,
                                                              const char *fmt, ...)
{
    /* Line and column (in characters, 1-based) make the error findable
     * in a request file. */
    size_t line = 1, col = 1;
    for (size_t k = 0; k < pos && k < p->len; k++) {
        unsigned char c = (unsigned char)p->s[k];
        if (c == '\n')
            line++, col = 1;
        else if ((c & 0xc0) != 0x80)
            col++;
    }
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return cp_error_set(p->e, CP_E_INVALID_ARGUMENT, "bad JSON at line %u, column %u: %s",
                        (unsigned)line, (unsigned)col, what);
}

static int nomem(cp_error *e)
{
    return cp_error_set(e, CP_E_NOMEM, "out of memory");
}

static void skip_ws(parser *p)
{
    while (p->i < p->len) {
        char c = p->s[p->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->i++;
    }
}

/* Describes the byte at the cursor for error messages. */
static const char *here(parser *p, char buf[16])
{
    if (p->i >= p->len)
        return "end of input";
    unsigned char c = (unsigned char)p->s[p->i];
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, 16, "'%c'", c);
    else
        snprintf(buf, 16, "byte 0x%02x", c);
    return buf;
}

static cp_json *new_value(parser *p, cp_json_kind kind, size_t pos)
{
    cp_json *v = cp_arena_alloc(p->a, sizeof(*v));
    if (v != NULL) {
        v->kind = kind;
        v->pos = pos;
    }
    return v;
}

static int hex4(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* The cursor is on the opening quote. Decodes into the arena. */
static int parse_string(parser *p, const char **out, size_t *out_len)
{
    size_t start = ++p->i;
    /* Find the closing quote first: the decoded text is never longer than
     * the raw text, so one allocation suffices. */
    size_t end = start;
    while (end < p->len && p->s[end] != '"')
        end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->len)
        return syntax_error(p, start - 1, "unterminated string");
    char *buf = cp_arena_alloc(p->a, end - start + 1);
    if (buf == NULL)
        return nomem(p->e);
    size_t o = 0;
    while (p->i < end) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c < 0x20)
            return syntax_error(p, p->i, "control character 0x%02x in string (use an escape)",
                                c);
        if (c != '\\') {
            uint32_t cp;
            size_t n = utf8_next((const unsigned char *)p->s + p->i, end - p->i, &cp);
            if (n == 0)
                return syntax_error(p, p->i, "invalid UTF-8 in string");
            memcpy(buf + o, p->s + p->i, n);
            o += n;
            p->i += n;
            continue;
        }
        size_t esc = p->i++;
        char x = p->s[p->i++];
        switch (x) {
        case '"':
        case '\\':
        case '/':
            buf[o++] = x;
            break;
        case 'b':
            buf[o++] = '\b';
            break;
        case 'f':
            buf[o++] = '\f';
            break;
        case 'n':
            buf[o++] = '\n';
            break;
        case 'r':
            buf[o++] = '\r';
            break;
        case 't':
            buf[o++] = '\t';
            break;
        case 'u': {
            uint32_t cp, lo;
            if (end - p->i < 4 || hex4(p->s + p->i, &cp) != 0)
                return syntax_error(p, esc, "\\u needs four hex digits");
            p->i += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return syntax_error(p, esc, "unpaired low surrogate \\u%04X", (unsigned)cp);
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (end - p->i < 6 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u' ||
                    hex4(p->s + p->i + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
                    return syntax_error(p, esc, "unpaired high surrogate \\u%04X",
                                        (unsigned)cp);
                p->i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp == 0)
                return syntax_error(p, esc, "\\u0000 cannot be carried in a protobuf string");
            o += utf8_put(buf + o, cp);
            break;
        }
        default:
            return syntax_error(p, esc, "invalid escape '\\%c'",
                                (unsigned char)x >= 0x20 && (unsigned char)x < 0x7f ? x : '?');
        }
    }
    buf[o] = '\0';
    p->i = end + 1;
    *out = buf;
    *out_len = o;
    return CP_OK;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int parse_number(parser *p, cp_json **out)
{
    size_t start = p->i;
    const char *s = p->s;
    if (p->i < p->len && s[p->i] == '-')
        p->i++;
    if (p->i >= p->len || !is_digit(s[p->i]))
        return syntax_error(p, start, "invalid number");
    if (s[p->i] == '0') {
        p->i++;
        if (p->i < p->len && is_digit(s[p->i]))
            return syntax_error(p, start, "leading zero in number");
    } else {
        while (p->i < p->len && is_digit(s[p->i]))
            p->i++;
    }
    if (p->i < p->len && s[p->i] == '.') {
        p->i++;
        if (p->i >= p->len || !is_digit(s[p->i]))
            return syntax_error(p, start, "invalid number: digit expected after '.'");
        while (p->i < p->len && is_digit(s[p->i]))
            p->i++;
    }
    if (p->i < p->len && (s[p->i] == 'e' || s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->len && (s[p->i] == '+' || s[p->i] == '-'))
            p->i++;
        if (p->i >= p->len || !is_digit(s[p->i]))
            return syntax_error(p, start, "invalid number: digit expected in exponent");
        while (p->i < p->len && is_digit(s[p->i]))
            p->i++;
    }
    cp_json *v = new_value(p, CP_JSON_NUMBER, start);
    if (v == NULL || (v->str = cp_arena_strndup(p->a, s + start, p->i - start)) == NULL)
        return nomem(p->e);
    v->len = p->i - start;
    *out = v;
    return CP_OK;
}

static int parse_value(parser *p, cp_json **out);

/* Appends to an arena array, doubling its capacity. */
static int grow(parser *p, void **arr, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return CP_OK;
    size_t ncap = *cap ? *cap * 2 : 8;
    void *na = cp_arena_alloc(p->a, ncap * elem);
    if (na == NULL)
        return nomem(p->e);
    if (n > 0)
        memcpy(na, *arr, n * elem);
    *arr = na;
    *cap = ncap;
    return CP_OK;
}

static int parse_container(parser *p, cp_json **out)
{
    bool is_obj = p->s[p->i] == '{';
    char close = is_obj ? '}' : ']';
    cp_json *v = new_value(p, is_obj ? CP_JSON_OBJECT : CP_JSON_ARRAY, p->i);
    if (v == NULL)
        return nomem(p->e);
    if (++p->depth > CP_JSON_MAX_DEPTH)
        return syntax_error(p, p->i, "nesting deeper than %d", CP_JSON_MAX_DEPTH);
    p->i++;
    size_t cap = 0, kcap = 0;
    char hb[16];
    skip_ws(p);
    if (p->i < p->len && p->s[p->i] == close) {
        p->i++;
        goto done;
    }
    for (;;) {
        int rc;
        skip_ws(p);
        if ((rc = grow(p, (void **)&v->items, v->n, &cap, sizeof(*v->items))) != CP_OK)
            return rc;
        if (is_obj) {
            if ((rc = grow(p, (void **)&v->keys, v->n, &kcap, sizeof(*v->keys))) != CP_OK)
                return rc;
            if (p->i >= p->len || p->s[p->i] != '"')
                return syntax_error(p, p->i, "expected a quoted member name, got %s",
                                    here(p, hb));
            size_t klen;
            if ((rc = parse_string(p, &v->keys[v->n], &klen)) != CP_OK)
                return rc;
            skip_ws(p);
            if (p->i >= p->len || p->s[p->i] != ':')
                return syntax_error(p, p->i, "expected ':' after member name, got %s",
                                    here(p, hb));
            p->i++;
        }
        if ((rc = parse_value(p, &v->items[v->n])) != CP_OK)
            return rc;
        v->n++;
        skip_ws(p);
        if (p->i < p->len && p->s[p->i] == ',') {
            p->i++;
            skip_ws(p);
            if (p->i < p->len && p->s[p->i] == close)
                return syntax_error(p, p->i, "trailing comma");
            continue;
        }
        if (p->i < p->len && p->s[p->i] == close) {
            p->i++;
            break;
        }
        return syntax_error(p, p->i, "expected ',' or '%c', got %s", close, here(p, hb));
    }
done:
    p->depth--;
    *out = v;
    return CP_OK;
}

static int parse_literal(parser *p, const char *word, cp_json_kind kind, bool b, cp_json **out)
{
    size_t n = strlen(word);
    if (p->len - p->i < n || memcmp(p->s + p->i, word, n) != 0)
        return syntax_error(p, p->i, "unexpected word (not true, false or null)");
    cp_json *v = new_value(p, kind, p->i);
    if (v == NULL)
        return nomem(p->e);
    v->boolean = b;
    p->i += n;
    *out = v;
    return CP_OK;
}

static int parse_value(parser *p, cp_json **out)
{
    char hb[16];
    skip_ws(p);
    if (p->i >= p->len)
        return syntax_error(p, p->i, "unexpected end of input, expected a value");
    char c = p->s[p->i];
    switch (c) {
    case '{':
    case '[':
        return parse_container(p, out);
    case '"': {
        cp_json *v = new_value(p, CP_JSON_STRING, p->i);
        if (v == NULL)
            return nomem(p->e);
        *out = v;
        return parse_string(p, &v->str, &v->len);
    }
    case 't':
        return parse_literal(p, "true", CP_JSON_BOOL, true, out);
    case 'f':
        return parse_literal(p, "false", CP_JSON_BOOL, false, out);
    case 'n':
        return parse_literal(p, "null", CP_JSON_NULL, false, out);
    default:
        if (c == '-' || is_digit(c))
            return parse_number(p, out);
        return syntax_error(p, p->i, "unexpected %s, expected a value", here(p, hb));
    }
}

int cp_json_parse(cp_arena *a, const char *text, size_t len, cp_json **out, cp_error *e)
{
    parser p = {.a = a, .s = text, .len = len, .e = e};
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        p.i = 3;
    cp_json *v = NULL;
    int rc = parse_value(&p, &v);
    if (rc != CP_OK)
        return rc;
    skip_ws(&p);
    if (p.i != p.len)
        return syntax_error(&p, p.i, "unexpected text after the value");
    *out = v;
    return CP_OK;
}

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

static int __attribute__((format(printf, 3, 4))) field_error(conv *c, const char *path,
                                                             const char *fmt, ...)
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

static size_t elem_size(ProtobufCType t)
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
        if (!is_digit(s[k]) && !(k == 0 && s[k] == '-'))
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
        if (!is_digit(s[k]) && strchr("-+.eE", s[k]) == NULL)
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

static int set_float(conv *c, const ProtobufCFieldDescriptor *f, const cp_json *v,
                     const char *path, void *dst)
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
        return nomem(c->e);
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
static int set_value(conv *c, const ProtobufCFieldDescriptor *f, const cp_json *v,
                     const char *path, void *dst)
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
    size_t es = elem_size(f->type);
    char *arr = NULL;
    if (v->n > 0 && (arr = cp_arena_alloc(c->a, v->n * es)) == NULL)
        return nomem(c->e);
    for (size_t k = 0; k < v->n; k++) {
        char *ep = cp_arena_printf(c->a, "%s[%u]", path, (unsigned)k);
        if (ep == NULL)
            return nomem(c->e);
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

static int set_map(conv *c, const ProtobufCFieldDescriptor *f, const cp_json *v,
                   const char *path, void *msg)
{
    if (v->kind != CP_JSON_OBJECT)
        return wrong_type(c, path, "an object (map)", v);
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
    ProtobufCMessage **arr = NULL;
    if (v->n > 0 && (arr = cp_arena_alloc(c->a, v->n * sizeof(*arr))) == NULL)
        return nomem(c->e);
    for (size_t k = 0; k < v->n; k++) {
        char *ep = cp_arena_printf(c->a, "%s[\"%s\"]", path, v->keys[k]);
        ProtobufCMessage *entry = cp_arena_alloc(c->a, ed->sizeof_message);
        if (ep == NULL || entry == NULL)
            return nomem(c->e);
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
        return nomem(c->e);
    d->message_init(m);
    for (size_t k = 0; v->kind == CP_JSON_OBJECT && k < v->n; k++) {
        const ProtobufCFieldDescriptor *f = find_field(d, v->keys[k]);
        if (f == NULL)
            return unknown_field(c, d, path, v->keys[k]);
        char *fp = child_path(c, path, f->name);
        if (fp == NULL)
            return nomem(c->e);
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
                       f->type != PROTOBUF_C_TYPE_STRING &&
                       f->type != PROTOBUF_C_TYPE_MESSAGE) {
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
            size_t len = utf8_next(u + k, n - k, &cp);
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
        size_t n = elem_size(f->type);
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
            size_t es = elem_size(f->type);
            put(b, "[", 1);
            for (size_t i = 0; i < n; i++) {
                if (i)
                    put(b, ",", 1);
                if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
                    ((void *const *)arr)[i] == NULL)
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
        return nomem(e);
    *out = b.buf;
    return CP_OK;
}
