/* grpc_wire.c - gRPC framing details. */
#include "rpc/grpc_wire.h"

#include <stdbool.h>
#include <string.h>

#include "base/hex.h"

void cp_grpc_put_prefix(uint8_t out[CP_GRPC_PREFIX], bool compressed, uint32_t len)
{
    out[0] = compressed ? 1 : 0;
    out[1] = (uint8_t)(len >> 24);
    out[2] = (uint8_t)(len >> 16);
    out[3] = (uint8_t)(len >> 8);
    out[4] = (uint8_t)len;
}

uint8_t cp_grpc_get_prefix(const uint8_t in[CP_GRPC_PREFIX], uint32_t *len)
{
    *len = ((uint32_t)in[1] << 24) | ((uint32_t)in[2] << 16) | ((uint32_t)in[3] << 8) | in[4];
    return in[0];
}

int cp_grpc_parse_timeout(const char *v, size_t len, int64_t *ms)
{
    if (len < 2 || len > 9)
        return -1;
    int64_t n = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        n = n * 10 + (v[i] - '0');
    }
    switch (v[len - 1]) {
    case 'H':
        *ms = n * 3600 * 1000;
        break;
    case 'M':
        *ms = n * 60 * 1000;
        break;
    case 'S':
        *ms = n * 1000;
        break;
    case 'm':
        *ms = n;
        break;
    case 'u':
        *ms = (n + 999) / 1000;
        break;
    case 'n':
        *ms = (n + 999999) / 1000000;
        break;
    default:
        return -1;
    }
    return 0;
}

bool cp_grpc_content_type_ok(const char *v, size_t len)
{
    static const char base[] = "application/grpc";
    size_t n = sizeof(base) - 1;
    if (len < n || strncmp(v, base, n) != 0)
        return false;
    return len == n || v[n] == '+' || v[n] == ';';
}

size_t cp_grpc_percent_encode(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    /* A space at either end is encoded too: an HTTP/2 field value may not
     * begin or end with whitespace (RFC 9113 §8.2.1), and a peer that checks
     * (nghttp2, grpc-core) resets the stream, so the call never ends; a
     * message such as "...: " for an empty path did that. */
    size_t len = strlen(in);
    for (const unsigned char *p = (const unsigned char *)in; *p != '\0'; p++) {
        bool edge = p == (const unsigned char *)in || p == (const unsigned char *)in + len - 1;
        if (*p >= 0x20 && *p <= 0x7e && *p != '%' && !(*p == ' ' && edge)) {
            if (o + 1 >= cap)
                break;
            out[o++] = (char)*p;
        } else {
            if (o + 3 >= cap)
                break;
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
    return o;
}

size_t cp_grpc_percent_decode(char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < len && (hi = cp_hexval(s[i + 1])) >= 0 &&
            (lo = cp_hexval(s[i + 2])) >= 0) {
            s[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            s[o++] = s[i];
        }
    }
    if (o < len)
        s[o] = '\0';
    return o;
}
