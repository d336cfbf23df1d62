/* metrics.h - the Prometheus metrics of -metrics-bind-address.
 *
 * Upstream csi-proxy wraps every gRPC server in go-grpc-middleware's
 * prometheus provider (pkg/server/metrics/metrics.go) with the handling
 * time histogram on, buckets 0.001 ... 120 s. We keep its series, names,
 * label names and values:
 *
 *   grpc_server_started_total{grpc_method,grpc_service,grpc_type}
 *   grpc_server_handled_total{grpc_code,grpc_method,grpc_service,grpc_type}
 *   grpc_server_msg_received_total / grpc_server_msg_sent_total{...}
 *   grpc_server_handling_seconds{_bucket,_sum,_count}{...}
 *
 * grpc_service is the proto service ("v1.Filesystem"), grpc_code
 * grpc-go's code name ("OK", "InvalidArgument", "PermissionDenied", ...),
 * grpc_type "unary" (every csi-proxy RPC is) or "server_stream" (the
 * standard health service's Watch, served on every pipe besides its own
 * service, counted under grpc_service="grpc.health.v1.Health" as upstream
 * counts a grpc-go health server registered on the same server). A series
 * appears once its method was called, as with upstream (it does not
 * pre-register them). Counted are the calls handed to a method (upstream:
 * the calls its interceptor saw); a refused caller's calls and unknown
 * methods are not (the latter would let a client make up label values),
 * they have their own counters below.
 *
 * What go-grpc-middleware's interceptors (interceptors/server.go, with the
 * prometheus provider's reporter) count, and so do we:
 *   unary          started when the handler is called; one message received
 *                  then; one sent and handled{code} with the handling time
 *                  when it returns (sent whatever the code). Rendered:
 *                  received == sent == started.
 *   server_stream  started once when the stream's call starts, before its
 *                  one request message (received: one per call started);
 *                  sent once per message the stream sends; handled{code}
 *                  once, with the stream's whole life as handling time,
 *                  when it ends: the code it ends with when the server
 *                  ends it, Canceled when the client resets it, its
 *                  deadline passes or its connection closes (what a
 *                  grpc-go health server's Watch returns when its
 *                  stream's context ends).
 *
 * Ours, named csi_proxy_*: connections (open, accepted, refused) and calls
 * refused, by group; and whatever a collector adds at scrape time (audit
 * records, path refusals, calls waiting per disk).
 *
 * Hot path: atomic increments in slots made at start-up, no lock, no
 * allocation. Services and collectors are added before serving starts
 * (not thread-safe against the hot path). Rendering (scrape) allocates.
 * Portable C.
 */
#ifndef CP_METRICS_H
#define CP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch/method.h"

typedef struct cp_metrics cp_metrics;

/* Services (versions) the registry can count at most. */
#define CP_METRICS_MAX_SERVICES 64
/* Collectors at most. */
#define CP_METRICS_MAX_COLLECTORS 16

/* NULL on out-of-memory. Free with cp_metrics_free (after serving). */
cp_metrics *cp_metrics_new(void);
void cp_metrics_free(cp_metrics *m);

/* Makes the slots of def's methods. Adding the same def twice does
 * nothing. 0, or -1 when out of memory or full. */
int cp_metrics_add_service(cp_metrics *m, const cp_service_def *def)
    __attribute__((warn_unused_result));

/* The same for a service every pipe serves besides its own (the standard
 * health service): its calls are counted, it has no pipes, connections or
 * refused calls of its own (those count under the pipe's group), so it has
 * no csi_proxy_* series. */
int cp_metrics_add_shared_service(cp_metrics *m, const cp_service_def *def)
    __attribute__((warn_unused_result));

/* ---- hot path: thread-safe, m may be NULL (metrics off) ---------------- */

/* A call was handed to method meth of def (a stream: once, when it
 * starts). A def or method the registry does not know is not counted. */
void cp_metrics_call_started(cp_metrics *m, const cp_service_def *def, const cp_method *meth);
/* It finished with status (CP_OK or a negative cp_status) after
 * duration_us microseconds (a stream: once, when it ends). */
void cp_metrics_call_handled(cp_metrics *m, const cp_service_def *def, const cp_method *meth,
                             int status, int64_t duration_us);
/* A server-streaming call of meth sent a message (unary calls count theirs
 * from started). */
void cp_metrics_msg_sent(cp_metrics *m, const cp_service_def *def, const cp_method *meth);

/* A connection to def's listener was made; refused: its caller was
 * refused (every call will get PERMISSION_DENIED). */
void cp_metrics_conn_opened(cp_metrics *m, const cp_service_def *def, bool refused);
/* The transport closed it. */
void cp_metrics_conn_closed(cp_metrics *m, const cp_service_def *def);
/* A call of a refused caller was answered PERMISSION_DENIED. */
void cp_metrics_call_refused(cp_metrics *m, const cp_service_def *def);

/* ---- collectors: read at scrape time ---------------------------------- */

/* What a collector calls for each sample: label_value is NULL for a family
 * without a label. */
typedef void (*cp_metrics_emit_fn)(void *emit_ctx, const char *label_value, double value);
/* Emits the family's samples, on the scraping thread. */
typedef void (*cp_metrics_collect_fn)(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx);

typedef enum cp_metrics_type { CP_METRICS_COUNTER, CP_METRICS_GAUGE } cp_metrics_type;

/* Adds a family rendered by fn. name and help are literals (not copied);
 * label_name is NULL for a family without a label. 0, or -1 when full. */
int cp_metrics_add_collector(cp_metrics *m, const char *name, const char *help,
                             cp_metrics_type type, const char *label_name, cp_metrics_collect_fn fn,
                             void *ctx) __attribute__((warn_unused_result));

/* ---- rendering -------------------------------------------------------- */

/* The content type of cp_metrics_render's text. */
#define CP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Every family in the text exposition format 0.0.4, families sorted by
 * name, each with its HELP and TYPE lines. Returns the text (caller frees)
 * and its length in *len; NULL when out of memory. Thread-safe. */
char *cp_metrics_render(cp_metrics *m, size_t *len);

/* grpc-go's name of a gRPC status code ("OK", "InvalidArgument", ...);
 * "Unknown" for codes outside 0-16. */
const char *cp_metrics_code_name(int grpc_code);

#endif
