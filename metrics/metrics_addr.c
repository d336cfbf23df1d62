/* metrics_addr.c - -metrics-bind-address to an interface and a port. */
#include "metrics/metrics_addr.h"

#include <stdio.h>
#include <string.h>

#define FLAG "-metrics-bind-address"

static int bad(cp_error *e, const char *text, const char *why)
{
    return cp_error_set(e, CP_E_INVALID_ARGUMENT, "invalid " FLAG " \"%.100s\": %s", text, why);
}

/* Strict dotted quad: four decimal numbers 0-255, no leading zeros. */
static bool parse_ipv4(const char *s, size_t n, uint8_t out[4])
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part > 0) {
            if (i >= n || s[i] != '.')
                return false;
            i++;
        }
        size_t start = i;
        unsigned v = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 3)
            v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
            return false;
        out[part] = (uint8_t)v;
    }
    return i == n;
}

static bool parse_port(const char *s, uint16_t *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 5)
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v == 0 || v > 65535)
        return false;
    *out = (uint16_t)v;
    return true;
}

int cp_metrics_addr_parse(const char *text, cp_metrics_addr *out, cp_error *e)
{
    memset(out, 0, sizeof(*out));
    const char *host = text, *colon;
    size_t host_len;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close == NULL)
            return bad(e, text, "missing ']' in address");
        if (close[1] != ':')
            return bad(e, text, "missing port in address (want HOST:PORT, e.g. 127.0.0.1:8888)");
        host = text + 1;
        host_len = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (colon == NULL)
            return bad(e, text, "missing port in address (want HOST:PORT, e.g. 127.0.0.1:8888)");
        host_len = (size_t)(colon - text);
        if (memchr(text, ':', host_len) != NULL)
            return bad(e, text, "too many colons in address (write an IPv6 address in brackets)");
    }
    if (!parse_port(colon + 1, &out->port))
        return bad(e, text, "the port must be a number from 1 to 65535");
    if (text[0] == '[') {
        out->ipv6 = true;
        if (host_len == 3 && memcmp(host, "::1", 3) == 0) {
            out->ip[15] = 1;
            out->loopback = true;
            snprintf(out->host, sizeof(out->host), "[::1]");
        } else if (host_len == 2 && memcmp(host, "::", 2) == 0) {
            out->all = true;
        } else {
            return bad(e, text,
                       "of IPv6 addresses only [::1] (loopback) and [::] (every "
                       "interface) are supported");
        }
    } else if (host_len == 0 || (host_len == 9 && memcmp(host, "localhost", 9) == 0)) {
        static const uint8_t loopback[4] = {127, 0, 0, 1};
        memcpy(out->ip, loopback, 4);
        out->loopback = true;
        out->localhost = host_len != 0;
    } else if (!parse_ipv4(host, host_len, out->ip)) {
        return bad(e, text,
                   "the host must be an IP address, localhost or empty (loopback); "
                   "0.0.0.0 means every interface");
    } else if (memcmp(out->ip, "\0\0\0\0", 4) == 0) {
        out->all = true;
    } else if (memcmp(out->ip, "\177\0\0\1", 4) == 0) {
        out->loopback = true;
    }
    if (out->all)
        snprintf(out->host, sizeof(out->host), "+");
    else if (!out->ipv6)
        snprintf(out->host, sizeof(out->host), "%u.%u.%u.%u", out->ip[0], out->ip[1], out->ip[2],
                 out->ip[3]);
    return CP_OK;
}

void cp_metrics_addr_url(const cp_metrics_addr *a, char *buf, size_t cap)
{
    snprintf(buf, cap, "http://%s:%u/", a->host, (unsigned)a->port);
}

void cp_metrics_addr_name(const cp_metrics_addr *a, char *buf, size_t cap)
{
    if (a->localhost)
        snprintf(buf, cap, "http://localhost:%u/", (unsigned)a->port);
    else
        cp_metrics_addr_url(a, buf, cap);
}

void cp_metrics_addr_prefix(const cp_metrics_addr *a, char *buf, size_t cap)
{
    snprintf(buf, cap, "http://+:%u/", (unsigned)a->port);
}

bool cp_metrics_addr_accepts(const cp_metrics_addr *a, int family, const uint8_t *ip)
{
    static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff}; /* ::ffff:a.b.c.d */
    static const uint8_t lo6[16] = {[15] = 1};
    if (a->all)
        return true;
    if (family == 6 && memcmp(ip, mapped, sizeof(mapped)) == 0) {
        family = 4;
        ip += sizeof(mapped);
    }
    if (a->localhost && family == 6)
        return memcmp(ip, lo6, 16) == 0;
    if (a->ipv6)
        return family == 6 && memcmp(ip, a->ip, 16) == 0;
    return family == 4 && memcmp(ip, a->ip, 4) == 0;
}

/* s[0..n) equals the lower-case word w, ASCII case ignored. */
static bool same_word(const char *s, size_t n, const char *w)
{
    if (n != strlen(w))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != w[i])
            return false;
    }
    return true;
}

bool cp_metrics_addr_host_ok(const cp_metrics_addr *a, const char *host, size_t len)
{
    if (!a->loopback)
        return true;
    size_t name_len = len;
    const char *close = len > 0 && host[0] == '[' ? memchr(host, ']', len) : NULL;
    const char *colon = memchr(close != NULL ? close : host, ':',
                               len - (size_t)((close != NULL ? close : host) - host));
    if (colon != NULL) {
        char port[8];
        size_t n = len - (size_t)(colon + 1 - host);
        uint16_t p = 0;
        if (n == 0 || n >= sizeof(port))
            return false;
        memcpy(port, colon + 1, n);
        port[n] = '\0';
        if (!parse_port(port, &p) || p != a->port)
            return false;
        name_len = (size_t)(colon - host);
    }
    return same_word(host, name_len, "localhost") || same_word(host, name_len, "127.0.0.1") ||
           same_word(host, name_len, "[::1]");
}
