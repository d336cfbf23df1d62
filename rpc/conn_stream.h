/* conn_stream.h - one HTTP/2 stream of a cp_conn, shared by conn.c and
 * watch.c (the server-streaming Watch). Not for transports. */
#ifndef CP_CONN_STREAM_H
#define CP_CONN_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dispatch/wirecheck.h"
#include "rpc/conn_internal.h"
#include "rpc/grpc_wire.h"
#include "rpc/h2check.h"

struct cp_stream {
    int32_t id;
    cp_stream *prev, *next;
    char path[256];
    bool path_too_long;
    bool is_post;
    bool ct_ok;
    char encoding[32]; /* grpc-encoding other than identity */
    bool bad_timeout;
    int64_t deadline; /* INT64_MAX: none */
    size_t header_bytes;
    cp_h2check hc; /* nghttp2's HTTP messaging checks, made in h2check.c */
    bool h2_reset; /* a check failed: RST_STREAM PROTOCOL_ERROR is queued */
    const cp_method *method;
    uint8_t prefix[CP_GRPC_PREFIX];
    size_t prefix_len;
    uint32_t msg_len;     /* as the prefix says */
    uint32_t got;         /* message bytes received */
    cp_wire_filter *filt; /* from the prefix to the job */
    uint8_t *buf;         /* the message bytes the filter kept */
    size_t len, cap;
    bool job_started;
    cp_job *job; /* in flight on the pool; cancelled if the stream goes first */
    bool responded;
    bool rst_after_send; /* reset once our END_STREAM is out */
    bool remote_closed;
    uint8_t *resp; /* response bytes (prefix + body) */
    size_t resp_len, resp_off;
    size_t held; /* this stream's share of c->held */
    /* grpc.health.v1.Health; Watch streams its answers (watch.c): the
     * status at once, then each change, probed again every
     * CP_HEALTH_WATCH_MS, until the client leaves or the server ends it. */
    bool health;
    bool watch;
    bool watching; /* counted in c->watching */
    /* In grpc_server_started_total, not yet in handled (watch.c). */
    bool w_counted;
    int64_t w_t0_us; /* cp_now_us() when it started */
    uint8_t *wreq;   /* the Watch request, for each probe */
    size_t wreq_len;
    /* When to probe again: set where the connection's calls run (conn.h),
     * never by a worker, so that a transport that reads the connection's
     * deadline only there (cp_conn_next_deadline) wakes for it. */
    int64_t next_probe;
    bool w_started; /* response headers submitted */
    int w_last;     /* status of the last message queued; -1: none */
    uint8_t w_msg[CP_GRPC_PREFIX + 2];
    size_t w_msg_len, w_msg_off; /* the message being sent */
    bool w_end;                  /* trailers after the message */
    int w_end_status;
    char w_end_msg[256];
};

/* What an answered stream costs while it waits, beyond its answer's bytes:
 * our cp_stream, nghttp2's stream and its queued frames. */
#define STREAM_HELD_COST (sizeof(cp_stream) + 512u)

/* An answered stream holds memory until its answer is out and it closes. */
static inline void cp_stream_hold(cp_conn *c, cp_stream *st, size_t n)
{
    st->held += n;
    c->held += n;
}

#define NV(n, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE             \
    }

/* A job for the stream's call, with the request req (owned from here);
 * health calls go to the connection's health service. NULL on
 * out-of-memory. */
cp_job *cp_conn_stream_job(cp_conn *c, cp_stream *st, uint8_t *req, size_t len);

#endif
