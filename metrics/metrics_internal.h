/* metrics_internal.h - the registry's slots, shared by metrics.c (counting)
 * and metrics_text.c (rendering). Not for other modules. */
#ifndef CP_METRICS_INTERNAL_H
#define CP_METRICS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "metrics/metrics.h"

#define CP_METRICS_CODES 17   /* gRPC status codes 0-16 */
#define CP_METRICS_BUCKETS 14 /* upstream's bounds, 0.001 s ... 120 s */

/* Bucket upper bounds in microseconds, and as upstream prints them. */
extern const int64_t cp_metrics_bound_us[CP_METRICS_BUCKETS];
extern const char *const cp_metrics_bound_text[CP_METRICS_BUCKETS];

typedef struct cp_metrics_slot { /* one method */
    atomic_uint_fast64_t started;
    atomic_uint_fast64_t handled[CP_METRICS_CODES];
    /* observations in (bound[i-1], bound[i]]; [CP_METRICS_BUCKETS]: above
     * the last bound. Made cumulative when rendered. */
    atomic_uint_fast64_t bucket[CP_METRICS_BUCKETS + 1];
    atomic_uint_fast64_t sum_us;
    atomic_uint_fast64_t msg_sent; /* server_stream only: unary renders started */
} cp_metrics_slot;

typedef struct cp_metrics_svc { /* one service (group version) */
    const cp_service_def *def;
    cp_metrics_slot *slots; /* def->n_methods */
    bool shared;            /* served on every pipe: no csi_proxy_* series */
    atomic_int_fast64_t conns_open;
    atomic_uint_fast64_t conns_total;
    atomic_uint_fast64_t conns_refused;
    atomic_uint_fast64_t calls_refused;
} cp_metrics_svc;

typedef struct cp_metrics_collector {
    const char *name, *help, *label_name;
    cp_metrics_type type;
    cp_metrics_collect_fn fn;
    void *ctx;
} cp_metrics_collector;

struct cp_metrics {
    cp_metrics_svc svcs[CP_METRICS_MAX_SERVICES];
    size_t n_svcs;
    cp_metrics_collector collectors[CP_METRICS_MAX_COLLECTORS];
    size_t n_collectors;
};

#endif
