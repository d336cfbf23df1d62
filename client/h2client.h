/* h2client.h - a minimal gRPC unary client on nghttp2.
 *
 * The client does no I/O of its own: it is handed a read/write pair (the
 * dialer's, or a test's in-memory stream) and drives an nghttp2 client
 * session with nghttp2_session_mem_recv/mem_send. It speaks what grpc-go
 * clients speak (WIRE-API.md §3): h2c with prior knowledge, one HEADERS
 * (POST, :scheme http, :authority localhost, application/grpc, te:
 * trailers, grpc-timeout when set), one DATA message with the 5-byte prefix
 * and END_STREAM. Calls on one client run one after another on the same
 * connection (streams 1, 3, 5, ...).
 */
#ifndef CP_CLI_H2CLIENT_H
#define CP_CLI_H2CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"

/* The byte stream under the session. */
typedef struct cp_h2c_io {
    /* Writes all len bytes. Returns CP_OK or a negative status (CP_E_IO)
     * with e set. */
    int (*write)(void *ctx, const uint8_t *buf, size_t len, cp_error *e);
    /* Reads up to cap bytes, waiting at most timeout_ms (-1: no limit).
     * Returns the count (> 0), 0 at end of stream, CP_E_DEADLINE_EXCEEDED
     * when the time ran out, or another negative status with e set. */
    long (*read)(void *ctx, uint8_t *buf, size_t cap, int64_t timeout_ms, cp_error *e);
    /* A monotonic clock in milliseconds (for deadlines). */
    int64_t (*now_ms)(void *ctx);
    void *ctx;
} cp_h2c_io;

typedef struct cp_h2c cp_h2c;

/* Creates a client session over io (copied) and queues the connection
 * preface and SETTINGS (sent with the first call). user_agent may be NULL
 * (then "csi-proxy-cli"). Returns CP_OK or CP_E_NOMEM. Caller frees with
 * cp_h2c_free(). */
int cp_h2c_new(const cp_h2c_io *io, const char *user_agent, cp_h2c **out, cp_error *e)
    __attribute__((warn_unused_result));

/* Closes the session (sends GOAWAY if the stream is still writable, best
 * effort); does not close the underlying stream. NULL is fine. */
void cp_h2c_free(cp_h2c *c);

typedef struct cp_h2c_request {
    const char *path;    /* "/v1.Filesystem/PathExists" */
    const uint8_t *body; /* serialized message (may be NULL when len 0) */
    size_t len;
    int64_t timeout_ns;    /* > 0: send grpc-timeout and give up locally when
                             it expires (DEADLINE_EXCEEDED); <= 0: none */
    const char *authority; /* NULL: "localhost" */
} cp_h2c_request;

typedef struct cp_h2c_response {
    int grpc_status;          /* 0..16 (or whatever number the server sent) */
    const char *grpc_message; /* percent-decoded, NUL-terminated; "" if none */
    const uint8_t *body;      /* the message without its prefix; valid only
                             when grpc_status is 0 */
    size_t len;
    int http_status; /* :status, 0 if no HEADERS arrived */
} cp_h2c_response;

/* Maximum response message accepted, as grpc-go clients (4 MiB). */
#define CP_H2C_MAX_RECV (4u * 1024 * 1024)

/* Runs one unary call. Returns CP_OK when the call got a gRPC status
 * (which may be an error: see resp->grpc_status); protocol problems that
 * grpc-go clients report as a status are also returned this way (e.g.
 * INTERNAL for a missing grpc-status, RESOURCE_EXHAUSTED for an oversize
 * message, DEADLINE_EXCEEDED when the local deadline expired, UNAVAILABLE
 * when the server closed the connection or refused the stream). Returns a
 * negative status only when the connection is unusable before any
 * response: CP_E_IO (write/read failed), CP_E_NOMEM. resp strings and body
 * live in a (the caller's arena). After a non-OK return or a local
 * deadline the client should not be used for further calls. */
int cp_h2c_call(cp_h2c *c, const cp_h2c_request *req, cp_arena *a, cp_h2c_response *resp,
                cp_error *e) __attribute__((warn_unused_result));

/* Keeps the connection serviced (answers PING and SETTINGS) for ms
 * milliseconds. Returns CP_OK, or CP_E_IO with e set if the server closed
 * the connection or it failed meanwhile. */
int cp_h2c_idle(cp_h2c *c, int64_t ms, cp_error *e) __attribute__((warn_unused_result));

/* Formats a duration in nanoseconds as a grpc-timeout value (at most 8
 * digits and a unit, rounded up) into out (>= 10 bytes). */
void cp_h2c_format_timeout(int64_t ns, char out[16]);

#endif
