/* logesc.c - see logesc.h. */
#include "base/logesc.h"
#include "base/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool unsafe_cp(uint32_t c)
{
    return (c >= 0x80 && c <= 0x9F) || c == 0x2028 || c == 0x2029 || c == 0x061C || c == 0x200E ||
           c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

/* The escape for the sequence at s (k bytes), or "" when it stays. */
static const char *escape_of(const unsigned char *s, size_t n, size_t *k, char buf[16])
{
    uint32_t c;
    size_t len = cp_utf8_decode(s, n, &c);
    if (len == 0) {
        *k = 1;
        snprintf(buf, 16, "\\x%02x", s[0]);
        return buf;
    }
    *k = len;
    if (c == '\n')
        return "\\n";
    if (c == '\r')
        return "\\r";
    if (c == '\t')
        return "\\t";
    if (c < 0x20 || c == 0x7F) {
        snprintf(buf, 16, "\\x%02x", (unsigned)c);
        return buf;
    }
    if (unsafe_cp(c)) {
        snprintf(buf, 16, "\\u%04x", (unsigned)c);
        return buf;
    }
    return "";
}

size_t cp_logesc(const char *in, size_t n, char *out, size_t cap)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0;
    if (cap == 0)
        return 0;
    for (size_t i = 0; i < n;) {
        size_t k;
        char buf[16];
        const char *esc = escape_of(s + i, n - i, &k, buf);
        const char *src = esc[0] != '\0' ? esc : (const char *)s + i;
        size_t len = esc[0] != '\0' ? strlen(esc) : k;
        if (o + len >= cap)
            break;
        memcpy(out + o, src, len);
        o += len;
        i += k;
    }
    out[o] = '\0';
    return o;
}

bool cp_logesc_needed(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k;
        char buf[16];
        if (escape_of(u + i, n - i, &k, buf)[0] != '\0')
            return true;
        i += k;
    }
    return false;
}

size_t cp_logesc_inplace(char *s, size_t cap)
{
    size_t n = strlen(s);
    if (!cp_logesc_needed(s, n))
        return n;
    char *tmp = malloc(n + 1);
    if (tmp == NULL) { /* no room to escape: blank what would need it */
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7F)
                s[i] = '?';
        return n;
    }
    memcpy(tmp, s, n + 1);
    size_t r = cp_logesc(tmp, n, s, cap);
    free(tmp);
    return r;
}
