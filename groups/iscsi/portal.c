/* portal.c - the iscsi group's destination rule for target portals (see
 * iscsi.h, cp_iscsi_check_portal). Portable: no resolver is asked; an
 * address is read the way Windows' own parsers read it, names are not
 * resolved. */
#include "iscsi.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* One part of a non-strict IPv4 address: decimal, octal after a leading
 * '0', hexadecimal after "0x" (the forms inet_addr and getaddrinfo take:
 * "inet_addr function", Microsoft Learn: "a.b.c.d, a.b.c, a.b, a" with
 * each part "decimal, octal, or hexadecimal"). */
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
    if (n == 0 || (base == 10 && n > 10) || n - i > 16)
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

/* The IPv4 address s (length n) in any form inet_addr takes, into b. */
static bool parse_v4(const char *s, size_t n, uint8_t b[4])
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
    /* The last part fills the bytes the others leave. */
    uint64_t max_last = k == 1 ? 0xffffffffu : k == 2 ? 0xffffffu : k == 3 ? 0xffffu : 0xffu;
    for (size_t i = 0; i + 1 < k; i++)
        if (part[i] > 0xff)
            return false;
    if (part[k - 1] > max_last)
        return false;
    uint32_t v = (uint32_t)part[k - 1];
    for (size_t i = 0; i + 1 < k; i++)
        v |= (uint32_t)part[i] << (24 - 8 * i);
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
    return true;
}

/* A strict dotted quad (the IPv4 tail of an IPv6 literal). */
static bool parse_v4_strict(const char *s, size_t n, uint8_t b[4])
{
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        size_t len = i - start;
        if (k == 4 || len == 0 || len > 3)
            return false;
        unsigned v = 0;
        for (size_t j = start; j < i; j++) {
            if (!isdigit((unsigned char)s[j]))
                return false;
            v = v * 10 + (unsigned)(s[j] - '0');
        }
        if (v > 255)
            return false;
        b[k++] = (uint8_t)v;
        start = i + 1;
    }
    return k == 4;
}

/* An IPv6 literal (RFC 4291 §2.2 text forms, "::" and an IPv4 tail
 * included) of length n into b. */
static bool parse_v6(const char *s, size_t n, uint8_t b[16])
{
    uint16_t g[8];
    int ng = 0, gap = -1;
    size_t i = 0;
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
    } else if (n >= 1 && s[0] == ':') {
        return false;
    }
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ':' && s[j] != '.')
            j++;
        if (j < n && s[j] == '.') { /* the IPv4 tail */
            uint8_t v4[4];
            if (ng > 6 || !parse_v4_strict(s + i, n - i, v4))
                return false;
            g[ng++] = (uint16_t)(v4[0] << 8 | v4[1]);
            g[ng++] = (uint16_t)(v4[2] << 8 | v4[3]);
            i = n;
            break;
        }
        if (j == i || j - i > 4 || ng == 8)
            return false;
        unsigned v = 0;
        for (size_t k = i; k < j; k++) {
            if (!isxdigit((unsigned char)s[k]))
                return false;
            v = v * 16 + (unsigned)(isdigit((unsigned char)s[k])
                                        ? s[k] - '0'
                                        : tolower((unsigned char)s[k]) - 'a' + 10);
        }
        g[ng++] = (uint16_t)v;
        if (j == n)
            break;
        /* s[j] == ':' */
        if (j + 1 < n && s[j + 1] == ':') {
            if (gap >= 0)
                return false;
            gap = ng;
            i = j + 2;
        } else if (j + 1 == n) {
            return false; /* a trailing single ':' */
        } else {
            i = j + 1;
        }
    }
    if (gap < 0 ? ng != 8 : ng > 7)
        return false;
    uint16_t full[8] = {0};
    if (gap < 0) {
        memcpy(full, g, sizeof(full));
    } else {
        for (int k = 0; k < gap; k++)
            full[k] = g[k];
        for (int k = gap; k < ng; k++)
            full[8 - (ng - k)] = g[k];
    }
    for (int k = 0; k < 8; k++) {
        b[2 * k] = (uint8_t)(full[k] >> 8);
        b[2 * k + 1] = (uint8_t)full[k];
    }
    return true;
}

static bool ends_with_ci(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    return n >= m && strncasecmp(s + n - m, suffix, m) == 0;
}

int cp_iscsi_parse_address(const char *address, uint8_t out[16])
{
    char buf[CP_ISCSI_NAME_MAX];
    size_t n = strlen(address);
    if (n == 0 || n >= sizeof(buf))
        return 0;
    memcpy(buf, address, n + 1);
    if (n >= 2 && buf[0] == '[' && buf[n - 1] == ']') {
        memmove(buf, buf + 1, n - 2);
        n -= 2;
        buf[n] = '\0';
    }
    if (n > 0 && buf[n - 1] == '.') /* an absolute name's final dot */
        buf[--n] = '\0';
    /* "<address>.ipv6-literal.net": Windows' UNC and name form of an IPv6
     * address, '-' for ':' and 's' before a zone ("IPv6 Literal Addresses
     * in UNC path names", Microsoft Learn); resolved by Windows itself. */
    static const char lit[] = ".ipv6-literal.net";
    if (ends_with_ci(buf, n, lit)) {
        n -= sizeof(lit) - 1;
        buf[n] = '\0';
        for (size_t i = 0; i < n; i++) {
            if (buf[i] == '-') {
                buf[i] = ':';
            } else if (buf[i] == 's' || buf[i] == 'S') {
                n = i; /* the zone: not part of the address */
                buf[n] = '\0';
            }
        }
        return parse_v6(buf, n, out) ? 6 : 0;
    }
    if (memchr(buf, ':', n) != NULL)
        return parse_v6(buf, n, out) ? 6 : 0;
    uint8_t v4[4];
    if (!parse_v4(buf, n, v4))
        return 0;
    memset(out, 0, 16);
    memcpy(out, v4, 4);
    return 4;
}

/* The rule an IPv4 address breaks, or NULL. */
static const char *v4_rule(const uint8_t b[4])
{
    if (b[0] == 127)
        return "a loopback address (127.0.0.0/8): the initiator would log in to this node";
    if (b[0] == 0)
        return "an unspecified address (0.0.0.0/8: this host)";
    if (b[0] == 169 && b[1] == 254)
        return "a link-local address (169.254.0.0/16, where instance metadata and other "
               "on-link services answer)";
    return NULL;
}

const char *cp_iscsi_refused_destination(const char *address)
{
    uint8_t b[16];
    int fam = cp_iscsi_parse_address(address, b);
    if (fam == 4)
        return v4_rule(b);
    if (fam == 6) {
        static const uint8_t zero[16] = {0};
        static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
        if (memcmp(b, zero, 16) == 0)
            return "an unspecified address (::)";
        if (memcmp(b, zero, 15) == 0 && b[15] == 1)
            return "a loopback address (::1): the initiator would log in to this node";
        if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
            return "a link-local address (fe80::/10)";
        /* IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96) and NAT64
         * (64:ff9b::/96) forms reach the IPv4 address they carry. */
        if ((memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff) ||
            memcmp(b, zero, 12) == 0 || memcmp(b, nat64, 12) == 0)
            return v4_rule(b + 12);
        return NULL;
    }
    /* A name: "localhost" and every name under it resolve to loopback
     * (RFC 6761 §6.3); other names are not resolved here. */
    size_t n = strlen(address);
    if (n > 0 && address[n - 1] == '.')
        n--;
    if ((n == 9 && strncasecmp(address, "localhost", 9) == 0) ||
        ends_with_ci(address, n, ".localhost") ||
        (n == 21 && strncasecmp(address, "localhost.localdomain", 21) == 0))
        return "a loopback name (localhost and the names under it resolve to this node)";
    return NULL;
}

/* Whether entry names address: both addresses (compared as addresses), or
 * the same name, or "*.suffix" and a name under it; ASCII case ignored. */
static bool portal_matches(const char *entry, const char *address, bool exact_only)
{
    uint8_t a[16], b[16];
    int fa = cp_iscsi_parse_address(entry, a), fb = cp_iscsi_parse_address(address, b);
    if (fa != 0 || fb != 0)
        return fa == fb && memcmp(a, b, 16) == 0;
    if (strncmp(entry, "*.", 2) == 0) {
        if (exact_only)
            return false;
        size_t el = strlen(entry + 1), al = strlen(address);
        return al > el && strcasecmp(address + al - el, entry + 1) == 0;
    }
    return strcasecmp(entry, address) == 0;
}

int cp_iscsi_check_portal(const cp_iscsi_policy *p, const cp_iscsi_portal *portal, cp_error *e)
{
    const char *a = portal->address;
    uint8_t b[16];
    if ((strchr(a, ':') != NULL || strchr(a, '[') != NULL || strchr(a, ']') != NULL) &&
        cp_iscsi_parse_address(a, b) != 6)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "target portal %s:%u: %s is not a host name or address", a,
                            (unsigned)portal->port, a);
    bool named = false, listed = false;
    for (size_t i = 0; p != NULL && p->restricted && i < p->n_allowed; i++) {
        named = named || portal_matches(p->allowed[i], a, true);
        listed = listed || portal_matches(p->allowed[i], a, false);
    }
    const char *rule = cp_iscsi_refused_destination(a);
    if (rule != NULL && !named)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "target portal %s:%u: %s is %s (name it in groups.iscsi.allowedPortals "
                            "to allow it)",
                            a, (unsigned)portal->port, a, rule);
    if (p != NULL && p->restricted && !listed)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "target portal %s:%u: %s is not in groups.iscsi.allowedPortals", a,
                            (unsigned)portal->port, a);
    return CP_OK;
}
