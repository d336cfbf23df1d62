/* metrics_addr.c - -metrics-bind-address to an interface and a port. */
#include "metrics_addr.h"

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
    } else if (!parse_ipv4(host, host_len, out->ip)) {
        return bad(e, text,
                   "the host must be an IP address, localhost or empty (loopback); "
                   "0.0.0.0 means every interface");
    } else if (memcmp(out->ip, "\0\0\0\0", 4) == 0) {
        out->all = true;
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

bool cp_metrics_addr_accepts(const cp_metrics_addr *a, int family, const uint8_t *ip)
{
    if (a->all)
        return true;
    if (a->ipv6)
        return family == 6 && memcmp(ip, a->ip, 16) == 0;
    return family == 4 && memcmp(ip, a->ip, 4) == 0;
}
