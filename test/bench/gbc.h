/* gbc.h - a gRPC bench client connection that writes what grpc-go writes.
 *
 * Not a general client: it sends one kind of unary call, byte for byte as
 * the upstream csi-proxy Go client (grpc-go 1.83.0) sends it. The first
 * request's HEADERS block and the DATA payload are taken from a recorded
 * capture (test/captures/01-filesystem-v1-PathExists.bin); later requests
 * on the connection use the fully indexed block grpc-go's HPACK encoder
 * emits then (83 86 c2 c1 c0 bf be), checked against the first one with an
 * HPACK decoder at load time. Like grpc-go it waits for the server's
 * SETTINGS before the first request, acknowledges SETTINGS and PING, sends a
 * connection WINDOW_UPDATE when a quarter of the window is consumed, and
 * (unless bdp is off) answers each response DATA with the BDP estimator's
 * WINDOW_UPDATE + PING when no such PING is outstanding, as grpc-go does.
 * Responses are decoded with nghttp2's HPACK inflater; a call succeeds when
 * it got :status 200, grpc-status 0 and exactly the expected message.
 *
 * Streams may be pipelined: start several calls, then poll for completions.
 * Single-threaded per connection.
 */
#ifndef CP_BENCH_GBC_H
#define CP_BENCH_GBC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "test/bench/bench_util.h"

typedef struct gbc_tmpl {
    uint8_t first_hdr[512]; /* header block of the first request */
    size_t first_hdr_len;
    uint8_t idx_hdr[16]; /* header block of later requests */
    size_t idx_hdr_len;
    uint8_t msg[1024]; /* DATA payload: gRPC prefix + protobuf */
    size_t msg_len;
    uint8_t want[64]; /* expected response DATA payload */
    size_t want_len;
} gbc_tmpl;

/* Loads the first HEADERS and DATA of stream 1 from a capture file and
 * checks the indexed block against it. want is the expected response
 * payload (prefix + protobuf). Returns false with a message on stderr. */
bool gbc_tmpl_load(gbc_tmpl *t, const char *capture_path, const uint8_t *want, size_t want_len);

typedef struct gbc gbc;

/* Dials \\.\pipe\<pipe>, sends the preface and an empty SETTINGS, and reads
 * until the server's SETTINGS came. NULL on failure (message on stderr). */
gbc *gbc_open(const char *pipe, const gbc_tmpl *t, bool bdp);

/* Sends GOAWAY(NO_ERROR, "client transport shutdown") as grpc-go's
 * Close() does, then closes the pipe. NULL is fine. */
void gbc_close(gbc *c);

/* Queues one call (written by the next gbc_flush). Returns false when the
 * server's stream limit or flow-control window does not allow another one
 * now (poll first). user comes back with the completion. */
bool gbc_start(gbc *c, void *user);

/* Writes everything queued. false when the pipe failed. */
bool gbc_flush(gbc *c);

typedef struct gbc_done {
    void *user;
    int64_t start_ns, end_ns; /* queued ... trailers parsed */
    bool ok;
    int grpc_status;                /* the trailers' grpc-status; -1 when none came */
    uint32_t req_bytes, resp_bytes; /* frame bytes of this stream, headers incl. */
} gbc_done;

/* Reads once (blocking), handles every complete frame, writes control
 * frames the way grpc-go does, and returns up to max completions in done.
 * Returns the count (>= 0), or -1 when the connection failed or ended. */
int gbc_poll(gbc *c, gbc_done *done, int max);

/* Calls queued or awaiting a response. */
int gbc_outstanding(const gbc *c);

/* Total bytes written and read on the pipe so far. */
void gbc_bytes(const gbc *c, uint64_t *out, uint64_t *in);

#endif
