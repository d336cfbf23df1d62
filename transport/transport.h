/* transport.h - listeners and connections for a set of services.
 *
 * One listener per service. Two implementations, picked by the build:
 *   transport/pipe/ - named pipes \\.\pipe\<name>, overlapped I/O on
 *                     I/O completion ports (the product);
 *   transport_posix.c    - Unix-domain sockets <dir>/<name>.sock (native
 *                          tests, fuzzing, conformance).
 * Both feed bytes to cp_conn and write what it produces; neither knows
 * HTTP/2 or gRPC.
 */
#ifndef CP_TRANSPORT_H
#define CP_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "rpc/conn.h"
#include "dispatch/method.h"
#include "rpc/pool.h"
#include "base/status.h"

typedef struct cp_listen_spec {
    const cp_service *svc;
    const char *name;     /* "csi-proxy-filesystem-v1" */
    const void *security; /* windows: SECURITY_ATTRIBUTES* for this listener; NULL: opts.security */
} cp_listen_spec;

/* Decides, once per connection on its first bytes, whether the caller may use the
 * service (per-group authorization). Returns NULL to allow, or a deny
 * message that outlives the transport. pid is the client process id (0 if
 * unknown); os_handle is the platform's connection (windows: a
 * cp_pipe_client*, pipe_client_win.h; posix: int* fd). It may write the caller's identity into
 * peer_id (peer_id_cap bytes, for the audit). May be NULL: allow all.
 * Windows: called on worker threads of opts.pool (never on a thread that
 * does the pipes' I/O), possibly at once (the hook locks what it shares). */
typedef const char *(*cp_authorize_fn)(void *ctx, const cp_service *svc, uint32_t pid,
                                       void *os_handle, char *peer_id, size_t peer_id_cap);

/* Windows: the process that opened an allowed connection
 * (cp_pipe_client.process) had exited when the connection's next bytes
 * arrived, so whoever writes them holds a handle it was given (or the
 * opener's last words arrive late): every call read from then on is
 * refused, PERMISSION_DENIED. Called on the connection's loop thread (or
 * a worker answering on it) for each such call,
 * with its :path, to audit it (trailing frames that start no call are not
 * reported). ctx is authorize_ctx. May be NULL. */
typedef void (*cp_revoke_fn)(void *ctx, const cp_service *svc, uint32_t pid, const char *peer_id,
                             const char *path);

typedef struct cp_transport_opts {
    const char *dir; /* posix: socket directory; windows: unused */
    cp_pool *pool;
    cp_conn_opts conn; /* per-connection limits */
    cp_authorize_fn authorize;
    void *authorize_ctx;
    cp_revoke_fn revoke;  /* windows */
    const void *security; /* windows: SECURITY_ATTRIBUTES* for pipes, or NULL */
    uint32_t max_conns;   /* windows: open connections at most (0: no limit) */
    int64_t idle_ms;      /* windows: close connections idle this long (0: never) */
    /* windows: a listener could not create its next pipe instance (it
     * retries), or listens again; msg names the pipe and the cause. Called
     * on the listening loop's thread (each loop has its own instances), at
     * the first failure, then once a minute, and on recovery. May be NULL. */
    void (*listen_error)(void *ctx, const char *msg);
    void *listen_error_ctx;
    /* windows: pipe (\\.\pipe\...) has server instances this process did
     * not make: another process created its own, and clients that land on
     * it hand it their calls. reported is the system's count, ours the
     * instances this process has. Called on a loop's thread once such
     * instances have stayed WATCH_CONFIRM_MS, and again only after they
     * were gone. May be NULL. */
    void (*foreign_instance)(void *ctx, const char *pipe, unsigned long reported,
                             unsigned long ours);
    void *foreign_instance_ctx;
    /* windows: one loop's wait for its I/O failed; msg says which, the
     * connections it closed and whether the others serve on (its
     * listening instances listen on another loop). Called on that loop's
     * thread. May be NULL. */
    void (*loop_failed)(void *ctx, const char *msg);
    void *loop_failed_ctx;
} cp_transport_opts;

typedef struct cp_transport cp_transport;

/* Creates every listener. If one cannot be created (e.g. the name is
 * already in use by another instance), closes the others and returns NULL
 * with e naming the listener and the cause. */
cp_transport *cp_transport_new(const cp_transport_opts *opts, const cp_listen_spec *specs, size_t n,
                               cp_error *e);

/* Serves until cp_transport_stop(); returns 0, or a negative status.
 * Windows: on the thread that called cp_transport_new (it started the
 * first connects, and lives until run returns). */
int cp_transport_run(cp_transport *t);

/* Thread-safe. Stops accepting, lets calls in flight finish for up to
 * drain_ms (then they get UNAVAILABLE), closes everything; run() returns. */
void cp_transport_stop(cp_transport *t, int64_t drain_ms);

/* After run() returned. */
void cp_transport_free(cp_transport *t);

/* Test builds (windows): the wait of loop `loop` (0-based) fails, as if
 * GetQueuedCompletionStatusEx had returned FALSE, once that loop has taken
 * after_connects connects. Before cp_transport_run. */
void cp_transport_test_fail_wait(unsigned loop, unsigned after_connects);

#endif
