/* conn_internal.h - structures shared by conn.c (I/O thread) and job.c
 * (worker side). Not for transports. */
#ifndef CP_CONN_INTERNAL_H
#define CP_CONN_INTERNAL_H

#include <nghttp2/nghttp2.h>
#include <stdatomic.h>

#include "rpc/conn.h"
#include "base/status.h"

typedef struct cp_stream cp_stream;

struct cp_conn {
    unsigned refs; /* transport + jobs; touched where cp_conn_* calls run (conn.h) */
    nghttp2_session *h2;
    const cp_service *svc;
    cp_pool *pool;
    cp_conn_opts opts;
    cp_conn_post_fn post;
    void *post_ctx;
    cp_stream *streams; /* open streams, doubly linked */
    size_t inflight;
    size_t started;     /* calls handed to the pool, ever (cp_conn_recv_info) */
    bool rx_ping;       /* this cp_conn_recv read a PING to acknowledge */
    bool rx_other;      /* ... or a frame other than PING, SETTINGS, WINDOW_UPDATE */
    size_t held;        /* bytes answered streams hold until their client takes them */
    bool closed;        /* transport released it */
    bool draining;      /* GOAWAY sent */
    const uint8_t *out; /* unsent remainder of the last mem_send chunk */
    size_t out_len;
    void *user;
    void (*on_denied)(void *ctx, const char *path); /* cp_conn_deny */
    void *on_denied_ctx;
    cp_service health_svc; /* grpc.health.v1.Health for svc (dispatch/health.h) */
    size_t watching;       /* Watch streams open and not ended */
};

#define CP_JOB_END_HOOKS 4

struct cp_job {
    cp_task task;     /* first: the pool hands us this pointer */
    cp_conn *conn;    /* only for cp_job_complete (conn.h: where it runs) */
    cp_pool *pool;    /* to be woken after parking */
    int64_t deadline; /* grpc-timeout, cp_now_ms() time; INT64_MAX: none */
    /* Set on the I/O thread when the client reset the stream or the
     * connection closed: a job that has not started yet never will. */
    atomic_bool cancelled;
    cp_job *post_next; /* on a cp_handover list (conn.h), from post to cp_job_complete */
    struct {
        void (*fn)(void *ctx, cp_waiter *w);
        void *ctx;
    } at_end[CP_JOB_END_HOOKS]; /* cp_waiter_at_end; touched by the job's runs only */
    unsigned n_at_end;
    cp_conn_post_fn post;
    void *post_ctx;
    int32_t stream_id;
    const cp_service *svc;
    const cp_method *method;
    char *path;
    uint32_t peer_pid;
    const char *peer_id; /* c->opts.peer_id: the job holds a reference on c */
    cp_audit_fn audit;
    void *audit_ctx;
    struct cp_metrics *metrics; /* c->opts.metrics */
    int64_t t0_us;              /* cp_now_us() when the call was handed over */
    uint8_t *req;               /* message body, without the prefix */
    size_t req_len;
    /* results, written by the worker */
    cp_error err;
    uint8_t *resp; /* 5-byte prefix + body */
    size_t resp_len;
};

/* job.c: builds a job that owns req (malloc'd) for a call of c's own
 * service. NULL on out-of-memory. */
cp_job *cp_job_new(cp_conn *c, int32_t stream_id, const cp_method *m, const char *path,
                   uint8_t *req, size_t req_len);
/* The same for a call of svc (c's health service), run and counted under
 * svc's group and service. */
cp_job *cp_job_new_svc(cp_conn *c, const cp_service *svc, int32_t stream_id, const cp_method *m,
                       const char *path, uint8_t *req, size_t req_len);
void cp_job_free(cp_job *job);

/* I/O thread: the client no longer waits for the job's answer. */
void cp_job_cancel(cp_job *job);

/* conn.c: answer a stream from a finished job. */
void cp_conn_deliver(cp_conn *c, cp_job *job);
void cp_conn_unref(cp_conn *c);

#endif
