/* h2check.h - the request checks of nghttp2's HTTP messaging, made here so
 * that one narrow allowance can be added to them. Portable.
 *
 * nghttp2 1.52 checks every request field a server receives
 * (nghttp2_http_on_header in lib/nghttp2_http.c) and resets the stream with
 * PROTOCOL_ERROR when one fails; for a pseudo-header there is no callback
 * that can overrule it. Its :authority check (nghttp2_check_authority, RFC
 * 3986 characters) refuses a backslash, yet grpc-go before 1.57
 * (grpc/grpc-go PR #6428, "encodeAuthority") sends the dial target as it is:
 * a pipe path such as \\.\pipe\csi-proxy-filesystem-v1 (or with doubled
 * backslashes, as the path is often spelled), and CSI drivers built with it
 * are in use (Debian 12's grpc-go is 1.33; lab notes, "grpc-go 1.33 ... sends
 * the raw pipe path as :authority"). So the service switches nghttp2's
 * messaging off and calls these functions from its callbacks instead: the
 * same rules, built on nghttp2's public checkers, plus
 * cp_h2check_pipe_authority. Each function returns false when nghttp2 would
 * have reset the stream with PROTOCOL_ERROR. */
#ifndef CP_H2CHECK_H
#define CP_H2CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cp_h2check {
    uint32_t flags;         /* H2C_* in h2check.c */
    int64_t content_length; /* -1: none */
    int64_t recv_length;    /* DATA payload received */
} cp_h2check;

void cp_h2check_init(cp_h2check *h);

/* One field of the request header block (trailer false) or of the trailer
 * block (trailer true). Mirrors nghttp2_http_on_header for a server: names
 * valid and lower-case; values valid per RFC 9113 (no CR, LF, NUL, no
 * leading or trailing space or tab); :method, :path, :scheme, :authority and
 * host by their own syntax; pseudo-headers only :method :scheme :path
 * :authority, each once, non-empty, before every regular field and never in
 * trailers; no connection, keep-alive, proxy-connection, transfer-encoding,
 * upgrade; te only "trailers"; content-length once, a decimal number. A bad
 * regular field is refused too: nghttp2 would ignore it only if the server
 * set an on_invalid_header callback, and this one sets none. */
bool cp_h2check_field(cp_h2check *h, const uint8_t *name, size_t namelen, const uint8_t *value,
                      size_t valuelen, bool trailer);

/* The request header block is complete: :method, :scheme and :path present
 * (CONNECT: :authority and neither :scheme nor :path), :authority or host
 * present, and for http/https a :path starting with '/' (or "*" with
 * OPTIONS). */
bool cp_h2check_request_end(cp_h2check *h);

/* A trailer block is complete: it must end the stream. */
bool cp_h2check_trailers_end(bool end_stream);

/* DATA payload of n bytes arrived: no more than content-length says. */
bool cp_h2check_data(cp_h2check *h, size_t n);

/* The client ended the stream: exactly content-length bytes arrived. */
bool cp_h2check_end_stream(const cp_h2check *h);

/* The one allowance: an :authority value nghttp2_check_authority refuses is
 * taken if it is a raw Windows pipe path as grpc-go before 1.57 sends it:
 * it starts with two backslashes and every byte is printable ASCII
 * 0x21-0x7E (no space, no control byte, nothing above 0x7E). The value is
 * never used for routing; this only stops such a client being reset. */
bool cp_h2check_pipe_authority(const uint8_t *v, size_t n);

#endif
