/* conn.h - one client connection: an HTTP/2 session speaking gRPC.
 *
 * A cp_conn does no I/O. Its transport feeds it the bytes read from the
 * client (cp_conn_recv) and writes what it produces (cp_conn_send). The
 * cp_conn_* calls for one connection never run at the same time: they
 * happen on that connection's I/O thread, or under a lock the transport
 * holds around all of them. Requests run on the worker pool; when one
 * finishes, the worker hands the finished job to the transport through
 * the post callback, and the transport calls cp_job_complete() (on the
 * I/O thread, or on the worker under that lock), then writes the
 * connection's output.
 *
 * Lifetime: the transport owns one reference, released by cp_conn_close()
 * when the client is gone or the transport is done with it. Jobs in flight
 * hold their own references, so a job can finish after its connection was
 * closed: cp_job_complete() then just drops it.
 */
#ifndef CP_CONN_H
#define CP_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch/method.h"
#include "rpc/pool.h"

typedef struct cp_conn cp_conn;
typedef struct cp_job cp_job;

/* Called on a worker thread; must arrange cp_job_complete(job) on the
 * connection's I/O thread (e.g. PostQueuedCompletionStatus, a wake pipe),
 * or call it at once under the lock that keeps the connection's calls
 * apart. */
typedef void (*cp_conn_post_fn)(void *post_ctx, cp_job *job);

/* The caller's identity for the audit trail ("S-1-5-21-...-1000"). */
#define CP_PEER_ID_MAX 192

/* One finished call of a CP_METHOD_MUTATES method, handed to the audit
 * hook on the worker thread right after the handler ran. Everything is
 * borrowed for the duration of the hook. */
typedef struct cp_call_record {
    const cp_service *svc;
    const cp_method *method;
    const char *path; /* "/v1.Filesystem/Mkdir" */
    uint32_t peer_pid;
    const char *peer_id; /* "" when unknown */
    const uint8_t *req;  /* the request message (protobuf bytes) */
    size_t req_len;
    int status;          /* CP_OK or the call's error status */
    const char *message; /* the error message; "" on success */
    int64_t duration_ms;
    /* req as the call decoded it (a ProtobufCMessage of method->req_desc,
     * valid during the audit hook), or NULL: the hook decodes req. */
    const void *req_msg;
    /* What else the call changed (cp_call_note), "" or NULL when nothing. */
    const char *note;
} cp_call_record;

typedef void (*cp_audit_fn)(void *ctx, const cp_call_record *r);

typedef struct cp_conn_opts {
    size_t max_recv_msg;     /* default 4 MiB */
    uint32_t max_streams;    /* concurrent streams; default 64 */
    size_t max_header_bytes; /* per request; default 16 KiB */
    /* Answered calls whose answers the client has not taken (its flow-
     * control window is shut, or it reads nothing) hold their bytes and
     * their streams' state. Past this many bytes held, a new call is
     * refused (RST_STREAM REFUSED_STREAM) until the client takes some;
     * calls already read still run. Default 32 KiB. */
    size_t max_held_bytes;
    uint32_t peer_pid; /* 0 when unknown */
    /* Set when the caller was refused for this service: every call gets
     * PERMISSION_DENIED with this message. NULL when authorized. */
    const char *deny_message;
    /* Who the caller is (set by the transport's authorize hook). */
    char peer_id[CP_PEER_ID_MAX];
    /* Called for every call of a CP_METHOD_MUTATES method; may be NULL. */
    cp_audit_fn audit;
    void *audit_ctx;
    /* Called before each new call is accepted while the caller is allowed:
     * the transport re-checks what the allowance rests on there (and calls
     * cp_conn_deny when it has lapsed), so that a check is paid per call
     * read, not per read of control frames. May be NULL. */
    void (*before_call)(void *ctx);
    void *before_call_ctx;
    /* Counts calls and connections (metrics.h); NULL: metrics off. */
    struct cp_metrics *metrics;
} cp_conn_opts;

/* NULL on out-of-memory. opts may be NULL for defaults. The service must
 * outlive the connection. */
cp_conn *cp_conn_new(const cp_service *svc, cp_pool *pool, const cp_conn_opts *opts,
                     cp_conn_post_fn post, void *post_ctx);

/* What one cp_conn_recv read, for the transport's write timing: calls
 * started (handed to the pool), and whether every whole frame read was a
 * control frame a client sends between calls (PING, SETTINGS,
 * WINDOW_UPDATE) with at least one PING to acknowledge (what grpc-go sends
 * as soon as it has read an answer). */
typedef struct cp_recv_info {
    size_t calls_started;
    bool ping_only;
} cp_recv_info;

/* Feeds bytes read from the client. Returns 0, or a negative status when
 * the connection must be closed (protocol error; output may still hold a
 * GOAWAY worth sending first). info, when not NULL, says what was read. */
int cp_conn_recv(cp_conn *c, const uint8_t *data, size_t len);
int cp_conn_recv_info(cp_conn *c, const uint8_t *data, size_t len, cp_recv_info *info);

/* Copies up to cap bytes of pending output into buf; returns the count
 * (0 when there is nothing to send) or a negative status on a fatal error. */
long cp_conn_send(cp_conn *c, uint8_t *buf, size_t cap);

/* False once the session is finished (both sides done, or GOAWAY sent and
 * no stream left): flush, then close. */
bool cp_conn_wants_io(cp_conn *c);

/* Calls in flight (running or queued on workers). */
size_t cp_conn_inflight(cp_conn *c);

/* Earliest grpc-timeout deadline of an open call, in cp_now_ms() time;
 * INT64_MAX when none. */
int64_t cp_conn_next_deadline(cp_conn *c);

/* Answers DEADLINE_EXCEEDED to every call whose deadline is <= now. */
void cp_conn_expire(cp_conn *c, int64_t now);

/* Graceful stop: GOAWAY, refuse new streams, let running calls finish. */
void cp_conn_shutdown(cp_conn *c);

/* Stop now: every call still in flight gets UNAVAILABLE. */
void cp_conn_abort_calls(cp_conn *c, const char *why);

/* The transport's data. */
/* From now on every new call gets PERMISSION_DENIED with message (which
 * must outlive c); calls already running finish. on_denied, if not NULL,
 * runs (on the I/O thread) for each call so refused, with its :path, e.g.
 * to audit it. For a connection whose authorization ended (the pipe
 * transport, when the process that opened it has exited). */
void cp_conn_deny(cp_conn *c, const char *message, void (*on_denied)(void *ctx, const char *path),
                  void *ctx);

/* opts.peer_id as the connection keeps it ("" when unknown). */
const char *cp_conn_peer_id(const cp_conn *c);

void cp_conn_set_user(cp_conn *c, void *user);
void *cp_conn_user(cp_conn *c);

/* Releases the transport's reference. */
void cp_conn_close(cp_conn *c);

/* Where the connection's calls run (above): delivers a finished job's response
 * (unless the stream or connection is gone) and frees the job. Returns the
 * connection when it has output to flush, NULL when it was closed. */
cp_conn *cp_job_complete(cp_job *job);

#endif
