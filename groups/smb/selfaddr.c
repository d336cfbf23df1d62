/* selfaddr.c - is a UNC server name an address of this machine (see
 * selfaddr.h). */
#include "selfaddr.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define LITERAL_SUFFIX ".ipv6-literal.net"

/* One part of a non-strict IPv4 address, s[0..n): "0x" hex, a leading 0
 * octal, else decimal ("RtlIpv4StringToAddressA function": with Strict
 * FALSE "any of four possible forms are allowed, with decimal, octal, or
 * hexadecimal notation"). "0x" alone is 0, as BSD's inet_aton reads it. */
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
        if (isdigit(c))
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
 * part ... stored directly"). */
static bool parse_v4(const char *s, size_t n, unsigned char out[4])
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
    return true;
}

/* IPv6 text, s[0..n), with sep for ':' (':' or '-'): groups of hex digits
 * (leading zeros of any length: generous), one "::" at most, an IPv4 tail
 * in the last 32 bits. */
static bool parse_v6(const char *s, size_t n, char sep, unsigned char out[16])
{
    uint16_t g[8];
    int ng = 0, gap = -1;
    size_t i = 0;
    if (n >= 2 && s[0] == sep && s[1] == sep) {
        gap = 0;
        i = 2;
        if (n == 2)
            goto done;
    } else if (n == 0 || s[0] == sep) {
        return false;
    }
    for (;;) {
        size_t j = i;
        while (j < n && isxdigit((unsigned char)s[j]))
            j++;
        if (j < n && s[j] == '.') { /* an IPv4 tail: the rest, strict dotted */
            size_t m = n - i, parts = 1;
            for (size_t k = i; k < n; k++)
                parts += s[k] == '.';
            unsigned char v4[4];
            if (ng > 6 || parts != 4 || !parse_v4(s + i, m, v4))
                return false;
            g[ng++] = (uint16_t)(v4[0] << 8 | v4[1]);
            g[ng++] = (uint16_t)(v4[2] << 8 | v4[3]);
            break;
        }
        if (j == i || ng == 8)
            return false;
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
        if (s[j] != sep)
            return false;
        if (j + 1 < n && s[j + 1] == sep) {
            if (gap >= 0)
                return false;
            gap = ng;
            i = j + 2;
            if (i == n)
                break;
        } else {
            i = j + 1;
            if (i == n)
                return false;
        }
    }
done:
    if (gap < 0 && ng != 8)
        return false;
    memset(out, 0, 16);
    int tail = gap < 0 ? 0 : ng - gap, at = 0;
    for (int k = 0; k < ng - tail; k++, at++) {
        out[2 * at] = (unsigned char)(g[k] >> 8);
        out[2 * at + 1] = (unsigned char)g[k];
    }
    for (int k = ng - tail, pos = 8 - tail; k < ng; k++, pos++) {
        out[2 * pos] = (unsigned char)(g[k] >> 8);
        out[2 * pos + 1] = (unsigned char)g[k];
    }
    return true;
}

/* "<address>[s<scope>].ipv6-literal.net", ':' written '-': the scope
 * (decimal) is dropped. */
static bool parse_literal_net(const char *s, size_t n, unsigned char out[16])
{
    size_t sl = strlen(LITERAL_SUFFIX);
    if (n <= sl || strcasecmp(s + n - sl, LITERAL_SUFFIX) != 0)
        return false;
    n -= sl;
    for (size_t i = 0; i < n; i++)
        if (s[i] == 's' || s[i] == 'S') {
            for (size_t k = i + 1; k < n; k++)
                if (!isalnum((unsigned char)s[k]))
                    return false;
            n = i;
            break;
        }
    return parse_v6(s, n, '-', out);
}

bool cp_smb_parse_addr(const char *server, cp_smb_addr *out)
{
    size_t n = strlen(server);
    memset(out, 0, sizeof(*out));
    if (parse_v4(server, n, out->b)) {
        out->family = 4;
        return true;
    }
    const char *pct = strchr(server, '%');
    if (strchr(server, ':') != NULL &&
        parse_v6(server, pct ? (size_t)(pct - server) : n, ':', out->b)) {
        out->family = 6;
        return true;
    }
    if (parse_literal_net(server, n, out->b)) {
        out->family = 6;
        return true;
    }
    return false;
}

static bool v4_is_self(const unsigned char *b, const cp_smb_addr *local, size_t n)
{
    if (b[0] == 127 || b[0] == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (local[i].family == 4 && memcmp(local[i].b, b, 4) == 0)
            return true;
    return false;
}

bool cp_smb_addr_is_self(const cp_smb_addr *a, const cp_smb_addr *local, size_t n)
{
    if (a->family == 4)
        return v4_is_self(a->b, local, n);
    static const unsigned char zero[12] = {0};
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    /* ::, ::1 and ::a.b.c.d (IPv4-compatible), ::ffff:a.b.c.d (mapped):
     * judged by their IPv4 address. */
    if (memcmp(a->b, zero, 12) == 0) {
        static const unsigned char one[4] = {0, 0, 0, 1};
        if (memcmp(a->b + 12, one, 4) == 0 || memcmp(a->b + 12, zero, 4) == 0)
            return true;
        if (v4_is_self(a->b + 12, local, n))
            return true;
    }
    if (memcmp(a->b, mapped, 12) == 0 && v4_is_self(a->b + 12, local, n))
        return true;
    for (size_t i = 0; i < n; i++)
        if (local[i].family == 6 && memcmp(local[i].b, a->b, 16) == 0)
            return true;
    return false;
}

void cp_smb_addr_text(const cp_smb_addr *a, char *out, size_t len)
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
