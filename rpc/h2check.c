/* h2check.c - nghttp2's server-side HTTP messaging checks (nghttp2 1.52,
 * lib/nghttp2_http.c), with a raw pipe path allowed as :authority. */
#include "rpc/h2check.h"

#include <string.h>

#include <nghttp2/nghttp2.h>

enum {
    H2C_AUTHORITY = 1u << 0,
    H2C_PATH = 1u << 1,
    H2C_METHOD = 1u << 2,
    H2C_SCHEME = 1u << 3,
    H2C_HOST = 1u << 4,
    H2C_PSEUDO_DISALLOWED = 1u << 5, /* a regular field was seen */
    H2C_METH_CONNECT = 1u << 6,
    H2C_METH_OPTIONS = 1u << 7,
    H2C_PATH_REGULAR = 1u << 8,  /* starts with '/' */
    H2C_PATH_ASTERISK = 1u << 9, /* is "*" */
    H2C_SCHEME_HTTP = 1u << 10,  /* http or https */
};

void cp_h2check_init(cp_h2check *h)
{
    h->flags = 0;
    h->content_length = -1;
    h->recv_length = 0;
}

static bool eq(const uint8_t *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static bool ieq(const uint8_t *s, size_t n, const char *lit)
{
    if (strlen(lit) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i] >= 'A' && s[i] <= 'Z' ? (uint8_t)(s[i] - 'A' + 'a') : s[i];
        if (c != (uint8_t)lit[i])
            return false;
    }
    return true;
}

/* parse_uint in nghttp2_http.c: decimal digits only, no overflow. */
static int64_t parse_uint(const uint8_t *s, size_t n)
{
    int64_t v = 0;
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - (s[i] - '0')) / 10)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* check_scheme in nghttp2_http.c (RFC 3986 scheme). */
static bool scheme_ok(const uint8_t *s, size_t n)
{
    if (n == 0 || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
        return false;
    for (size_t i = 1; i < n; i++) {
        uint8_t c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

bool cp_h2check_pipe_authority(const uint8_t *v, size_t n)
{
    if (n < 2 || v[0] != '\\' || v[1] != '\\')
        return false;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0x21 || v[i] > 0x7e)
            return false;
    return true;
}

/* check_pseudo_header: once only, and not empty. */
static bool once(cp_h2check *h, uint32_t flag, size_t valuelen)
{
    if ((h->flags & flag) || valuelen == 0)
        return false;
    h->flags |= flag;
    return true;
}

bool cp_h2check_field(cp_h2check *h, const uint8_t *name, size_t namelen, const uint8_t *value,
                      size_t valuelen, bool trailer)
{
    if (!nghttp2_check_header_name(name, namelen))
        return false;
    bool pseudo = name[0] == ':';

    /* the value, by the field's syntax (nghttp2_http_on_header) */
    bool ok;
    if (eq(name, namelen, ":method"))
        ok = nghttp2_check_method(value, valuelen);
    else if (eq(name, namelen, ":path"))
        ok = nghttp2_check_path(value, valuelen);
    else if (eq(name, namelen, ":authority"))
        ok = nghttp2_check_authority(value, valuelen) || cp_h2check_pipe_authority(value, valuelen);
    else if (eq(name, namelen, "host"))
        ok = nghttp2_check_authority(value, valuelen);
    else if (eq(name, namelen, ":scheme"))
        ok = scheme_ok(value, valuelen);
    else
        ok = nghttp2_check_header_value_rfc9113(value, valuelen);
    if (!ok)
        return false;

    /* the field's place and meaning (http_request_on_header) */
    if (pseudo && (trailer || (h->flags & H2C_PSEUDO_DISALLOWED)))
        return false;
    if (eq(name, namelen, ":authority")) {
        if (!once(h, H2C_AUTHORITY, valuelen))
            return false;
    } else if (eq(name, namelen, ":method")) {
        if (!once(h, H2C_METHOD, valuelen))
            return false;
        if (eq(value, valuelen, "CONNECT"))
            h->flags |= H2C_METH_CONNECT;
        else if (eq(value, valuelen, "OPTIONS"))
            h->flags |= H2C_METH_OPTIONS;
    } else if (eq(name, namelen, ":path")) {
        if (!once(h, H2C_PATH, valuelen))
            return false;
        if (value[0] == '/')
            h->flags |= H2C_PATH_REGULAR;
        else if (valuelen == 1 && value[0] == '*')
            h->flags |= H2C_PATH_ASTERISK;
    } else if (eq(name, namelen, ":scheme")) {
        if (!once(h, H2C_SCHEME, valuelen))
            return false;
        if (ieq(value, valuelen, "http") || ieq(value, valuelen, "https"))
            h->flags |= H2C_SCHEME_HTTP;
    } else if (eq(name, namelen, "host")) {
        if (!once(h, H2C_HOST, valuelen))
            return false;
    } else if (eq(name, namelen, "content-length")) {
        if (h->content_length != -1)
            return false;
        h->content_length = parse_uint(value, valuelen);
        if (h->content_length == -1)
            return false;
    } else if (eq(name, namelen, "connection") || eq(name, namelen, "keep-alive") ||
               eq(name, namelen, "proxy-connection") || eq(name, namelen, "transfer-encoding") ||
               eq(name, namelen, "upgrade")) {
        return false;
    } else if (eq(name, namelen, "te")) {
        if (!ieq(value, valuelen, "trailers"))
            return false;
    } else if (pseudo) {
        /* any other pseudo-header, :protocol included: the service never
         * sends SETTINGS_ENABLE_CONNECT_PROTOCOL */
        return false;
    }
    if (!pseudo)
        h->flags |= H2C_PSEUDO_DISALLOWED;
    return true;
}

bool cp_h2check_request_end(cp_h2check *h)
{
    if (h->flags & H2C_METH_CONNECT) {
        if ((h->flags & (H2C_SCHEME | H2C_PATH)) || !(h->flags & H2C_AUTHORITY))
            return false;
        h->content_length = -1;
        return true;
    }
    const uint32_t req = H2C_METHOD | H2C_PATH | H2C_SCHEME;
    if ((h->flags & req) != req || !(h->flags & (H2C_AUTHORITY | H2C_HOST)))
        return false;
    /* check_path */
    return !(h->flags & H2C_SCHEME_HTTP) || (h->flags & H2C_PATH_REGULAR) ||
           ((h->flags & H2C_METH_OPTIONS) && (h->flags & H2C_PATH_ASTERISK));
}

bool cp_h2check_trailers_end(bool end_stream)
{
    return end_stream;
}

bool cp_h2check_data(cp_h2check *h, size_t n)
{
    h->recv_length += (int64_t)n;
    return h->content_length == -1 || h->recv_length <= h->content_length;
}

bool cp_h2check_end_stream(const cp_h2check *h)
{
    return h->content_length == -1 || h->content_length == h->recv_length;
}
