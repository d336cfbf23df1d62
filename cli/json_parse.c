/* json_parse.c - JSON text -> cp_json tree: the tokenizer and parser,
 * string escapes and UTF-8 validation (RFC 8259, strict). */
#include "cli/json_internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ UTF-8 */

/* Decodes one UTF-8 sequence at s[0..len); returns its length and sets
 * *cp, or 0 if it is not well-formed (overlong, surrogate, > U+10FFFF). */
size_t cp_json_utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
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

static int __attribute__((format(printf, 3, 4)))
syntax_error(parser *p, size_t pos, const char *fmt, ...)
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

int cp_json_nomem(cp_error *e)
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
        return cp_json_nomem(p->e);
    size_t o = 0;
    while (p->i < end) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c < 0x20)
            return syntax_error(p, p->i, "control character 0x%02x in string (use an escape)", c);
        if (c != '\\') {
            uint32_t cp;
            size_t n = cp_json_utf8_next((const unsigned char *)p->s + p->i, end - p->i, &cp);
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
                    return syntax_error(p, esc, "unpaired high surrogate \\u%04X", (unsigned)cp);
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

static int parse_number(parser *p, cp_json **out)
{
    size_t start = p->i;
    const char *s = p->s;
    if (p->i < p->len && s[p->i] == '-')
        p->i++;
    if (p->i >= p->len || !cp_json_is_digit(s[p->i]))
        return syntax_error(p, start, "invalid number");
    if (s[p->i] == '0') {
        p->i++;
        if (p->i < p->len && cp_json_is_digit(s[p->i]))
            return syntax_error(p, start, "leading zero in number");
    } else {
        while (p->i < p->len && cp_json_is_digit(s[p->i]))
            p->i++;
    }
    if (p->i < p->len && s[p->i] == '.') {
        p->i++;
        if (p->i >= p->len || !cp_json_is_digit(s[p->i]))
            return syntax_error(p, start, "invalid number: digit expected after '.'");
        while (p->i < p->len && cp_json_is_digit(s[p->i]))
            p->i++;
    }
    if (p->i < p->len && (s[p->i] == 'e' || s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->len && (s[p->i] == '+' || s[p->i] == '-'))
            p->i++;
        if (p->i >= p->len || !cp_json_is_digit(s[p->i]))
            return syntax_error(p, start, "invalid number: digit expected in exponent");
        while (p->i < p->len && cp_json_is_digit(s[p->i]))
            p->i++;
    }
    cp_json *v = new_value(p, CP_JSON_NUMBER, start);
    if (v == NULL || (v->str = cp_arena_strndup(p->a, s + start, p->i - start)) == NULL)
        return cp_json_nomem(p->e);
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
        return cp_json_nomem(p->e);
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
        return cp_json_nomem(p->e);
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
                return syntax_error(p, p->i, "expected a quoted member name, got %s", here(p, hb));
            size_t klen;
            if ((rc = parse_string(p, &v->keys[v->n], &klen)) != CP_OK)
                return rc;
            skip_ws(p);
            if (p->i >= p->len || p->s[p->i] != ':')
                return syntax_error(p, p->i, "expected ':' after member name, got %s", here(p, hb));
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
        return cp_json_nomem(p->e);
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
            return cp_json_nomem(p->e);
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
        if (c == '-' || cp_json_is_digit(c))
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
