/* hostaddr.c - reading a host name as Windows reads an address (see
 * hostaddr.h). */
#include "groups/common/hostaddr.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define LITERAL_SUFFIX ".ipv6-literal.net"

/* One part of a non-strict IPv4 address, s[0..n): "0x" hex, a leading 0
 * octal, else decimal ("RtlIpv4StringToAddressA function": with Strict
 * FALSE "any of four possible forms are allowed, with decimal, octal, or
 * hexadecimal notation"; "inet_addr function": "a.b.c.d, a.b.c, a.b, a").
 * Leading zeros of any number are still the same number. "0x" alone is 0,
 * as BSD's inet_aton reads it. */
static bool v4_part(const char *s, size_t n, uint64_t *out)
{
    unsigned base = 10;
    size_t i = 0;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    } else if (n >= 2 && s[0] == '0') {
        base = 8;
        i = 1;
    }
    if (n == 0)
        return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        int c = (unsigned char)s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && isxdigit(c))
            d = tolower(c) - 'a' + 10;
        else
            return false;
        if ((unsigned)d >= base)
            return false;
        v = v * base + (unsigned)d;
        if (v > 0xffffffffu)
            return false;
    }
    *out = v;
    return true;
}

/* a, a.b, a.b.c, a.b.c.d: every part but the last is a byte; the last
 * fills the 4, 3, 2 or 1 bytes that are left ("three-part ... last part is
 * interpreted as a 16-bit quantity", "two-part ... 24-bit quantity", "one
 * part ... stored directly"). *parts: how many parts there were. */
static bool parse_v4(const char *s, size_t n, unsigned char out[4], size_t *parts)
{
    uint64_t part[4];
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        if (k == 4 || !v4_part(s + start, i - start, &part[k]))
            return false;
        k++;
        start = i + 1;
    }
    uint64_t v = 0;
    for (size_t i = 0; i + 1 < k; i++) {
        if (part[i] > 0xff)
            return false;
        v |= part[i] << (24 - 8 * i);
    }
    uint64_t room = k == 1 ? 0xffffffffu : (1ull << (8 * (5 - k))) - 1;
    if (part[k - 1] > room)
        return false;
    v |= part[k - 1];
    for (int i = 0; i < 4; i++)
        out[i] = (unsigned char)(v >> (24 - 8 * i));
    *parts = k;
    return true;
}

/* The IPv4 tail of IPv6 text, s[0..n): four parts. A part in octal or
 * hexadecimal is read so, and marks the spelling ambiguous: Windows'
 * strict dotted-decimal reading may take "0177" as 177. */
static bool parse_v4_tail(const char *s, size_t n, unsigned char out[4], bool *ambiguous)
{
    size_t parts = 0;
    if (!parse_v4(s, n, out, &parts) || parts != 4)
        return false;
    for (size_t i = 0; i + 1 < n; i++)
        if ((i == 0 || s[i - 1] == '.') && s[i] == '0' && s[i + 1] != '.')
            *ambiguous = true;
    return true;
}

static bool is_sep(char c, bool literal)
{
    return c == ':' || (literal && c == '-');
}

/* IPv6 text, s[0..n), ':' (and '-' in a literal-net name) between groups:
 * groups of hex digits, one "::" at most, an IPv4 tail in the last 32
 * bits. A group of more than 4 digits (leading zeros) or a "::" beside 8
 * groups is read, and marks the spelling ambiguous. */
static bool parse_v6(const char *s, size_t n, bool literal, unsigned char out[16], bool *ambiguous)
{
    uint16_t g[8];
    int ng = 0, gap = -1;
    size_t i = 0;
    if (n >= 2 && is_sep(s[0], literal) && is_sep(s[1], literal)) {
        gap = 0;
        i = 2;
    } else if (n == 0 || is_sep(s[0], literal)) {
        return false;
    }
    while (i < n) {
        size_t j = i, t;
        while (j < n && isxdigit((unsigned char)s[j]))
            j++;
        for (t = j; t < n && (isxdigit((unsigned char)s[t]) || s[t] == 'x' || s[t] == 'X');)
            t++;
        if (t < n && s[t] == '.') { /* an IPv4 tail ("0x7f.0.0.1" too): the rest */
            unsigned char v4[4];
            if (ng > 6 || !parse_v4_tail(s + i, n - i, v4, ambiguous))
                return false;
            g[ng++] = (uint16_t)(v4[0] << 8 | v4[1]);
            g[ng++] = (uint16_t)(v4[2] << 8 | v4[3]);
            break;
        }
        if (j == i || ng == 8)
            return false;
        if (j - i > 4)
            *ambiguous = true;
        uint32_t v = 0;
        for (size_t k = i; k < j; k++) {
            int c = tolower((unsigned char)s[k]);
            v = v * 16 + (unsigned)(isdigit(c) ? c - '0' : c - 'a' + 10);
            if (v > 0xffff)
                return false;
        }
        g[ng++] = (uint16_t)v;
        if (j == n)
            break;
        if (!is_sep(s[j], literal))
            return false;
        if (j + 1 < n && is_sep(s[j + 1], literal)) {
            if (gap >= 0)
                return false;
            gap = ng;
            i = j + 2;
        } else {
            i = j + 1;
            if (i == n)
                return false; /* a trailing single ':' */
        }
    }
    if (gap < 0 && ng != 8)
        return false;
    if (gap >= 0 && ng == 8)
        *ambiguous = true;
    memset(out, 0, 16);
    int tail = gap < 0 ? 0 : ng - gap;
    for (int k = 0; k < ng - tail; k++) {
        out[2 * k] = (unsigned char)(g[k] >> 8);
        out[2 * k + 1] = (unsigned char)g[k];
    }
    for (int k = ng - tail, pos = 8 - tail; k < ng; k++, pos++) {
        out[2 * pos] = (unsigned char)(g[k] >> 8);
        out[2 * pos + 1] = (unsigned char)g[k];
    }
    return true;
}

int cp_hostaddr_read(const char *name, cp_hostaddr *out)
{
    const char *s = name;
    size_t n = strlen(name);
    memset(out, 0, sizeof(*out));
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        s++;
        n -= 2;
    }
    if (n > 0 && s[n - 1] == '.') /* an absolute name's final dot */
        n--;
    /* "<address>.ipv6-literal.net": Windows' UNC and name form of an IPv6
     * address, '-' for ':' and 's' before a scope ("IPv6 Literal Addresses
     * in UNC path names", Microsoft Learn); resolved by Windows itself. */
    size_t sl = strlen(LITERAL_SUFFIX);
    if (n > sl && strncasecmp(s + n - sl, LITERAL_SUFFIX, sl) == 0) {
        n -= sl;
        for (size_t i = 0; i < n; i++)
            if (s[i] == 's' || s[i] == 'S') {
                n = i; /* the scope: not part of the address */
                break;
            }
        out->family = parse_v6(s, n, true, out->b, &out->ambiguous) ? 6 : 0;
    } else if (memchr(s, ':', n) != NULL) {
        out->family =
            memchr(s, '%', n) == NULL && parse_v6(s, n, false, out->b, &out->ambiguous) ? 6 : 0;
    } else {
        size_t parts;
        out->family = parse_v4(s, n, out->b, &parts) ? 4 : 0;
    }
    if (out->family == 0)
        memset(out, 0, sizeof(*out));
    return out->family;
}

const unsigned char *cp_hostaddr_embedded_v4(const cp_hostaddr *a)
{
    static const unsigned char zero[12] = {0};
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (a->family == 6 && (memcmp(a->b, zero, 12) == 0 || memcmp(a->b, mapped, 12) == 0))
        return a->b + 12;
    return NULL;
}

void cp_hostaddr_text(const cp_hostaddr *a, char *out, size_t len)
{
    if (a->family == 4) {
        snprintf(out, len, "%u.%u.%u.%u", a->b[0], a->b[1], a->b[2], a->b[3]);
        return;
    }
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < 8 && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%x", i > 0 ? ":" : "",
                               (unsigned)(a->b[2 * i] << 8 | a->b[2 * i + 1]));
}
