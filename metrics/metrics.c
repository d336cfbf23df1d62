/* metrics.c - the registry and its hot path: a slot per method, found from
 * the service definition and the method's place in its table, so counting
 * a call is a short scan of the services and a few atomic adds. */
#include "metrics/metrics.h"

#include <stdlib.h>

#include "metrics/metrics_internal.h"
#include "base/status.h"

/* pkg/server/metrics/metrics.go: WithHistogramBuckets(0.001, 0.01, 0.1,
 * 0.3, 0.6, 1, 3, 6, 9, 20, 30, 60, 90, 120). */
const int64_t cp_metrics_bound_us[CP_METRICS_BUCKETS] = {
    1000,    10000,   100000,   300000,   600000,   1000000,  3000000,
    6000000, 9000000, 20000000, 30000000, 60000000, 90000000, 120000000,
};
const char *const cp_metrics_bound_text[CP_METRICS_BUCKETS] = {
    "0.001", "0.01", "0.1", "0.3", "0.6", "1", "3", "6", "9", "20", "30", "60", "90", "120",
};

cp_metrics *cp_metrics_new(void)
{
    return calloc(1, sizeof(cp_metrics));
}

void cp_metrics_free(cp_metrics *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->n_svcs; i++)
        free(m->svcs[i].slots);
    free(m);
}

static cp_metrics_svc *find_svc(cp_metrics *m, const cp_service_def *def)
{
    for (size_t i = 0; i < m->n_svcs; i++)
        if (m->svcs[i].def == def)
            return &m->svcs[i];
    return NULL;
}

static int add_service(cp_metrics *m, const cp_service_def *def, bool shared)
{
    if (find_svc(m, def) != NULL)
        return 0;
    if (m->n_svcs == CP_METRICS_MAX_SERVICES)
        return -1;
    cp_metrics_svc *s = &m->svcs[m->n_svcs];
    /* calloc'd atomics start at zero on every platform we build for */
    s->slots = calloc(def->n_methods > 0 ? def->n_methods : 1, sizeof(cp_metrics_slot));
    if (s->slots == NULL)
        return -1;
    s->def = def;
    s->shared = shared;
    m->n_svcs++;
    return 0;
}

int cp_metrics_add_service(cp_metrics *m, const cp_service_def *def)
{
    return add_service(m, def, false);
}

int cp_metrics_add_shared_service(cp_metrics *m, const cp_service_def *def)
{
    return add_service(m, def, true);
}

static cp_metrics_slot *find_slot(cp_metrics *m, const cp_service_def *def, const cp_method *meth)
{
    if (m == NULL)
        return NULL;
    cp_metrics_svc *s = find_svc(m, def);
    if (s == NULL || meth < def->methods || meth >= def->methods + def->n_methods)
        return NULL;
    return &s->slots[meth - def->methods];
}

void cp_metrics_call_started(cp_metrics *m, const cp_service_def *def, const cp_method *meth)
{
    cp_metrics_slot *slot = find_slot(m, def, meth);
    if (slot != NULL)
        atomic_fetch_add_explicit(&slot->started, 1, memory_order_relaxed);
}

void cp_metrics_call_handled(cp_metrics *m, const cp_service_def *def, const cp_method *meth,
                             int status, int64_t duration_us)
{
    cp_metrics_slot *slot = find_slot(m, def, meth);
    if (slot == NULL)
        return;
    int code = cp_status_to_grpc(status);
    if (code < 0 || code >= CP_METRICS_CODES)
        code = 2; /* Unknown */
    if (duration_us < 0)
        duration_us = 0;
    size_t b = 0;
    while (b < CP_METRICS_BUCKETS && duration_us > cp_metrics_bound_us[b])
        b++;
    atomic_fetch_add_explicit(&slot->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&slot->sum_us, (uint_fast64_t)duration_us, memory_order_relaxed);
    atomic_fetch_add_explicit(&slot->handled[code], 1, memory_order_relaxed);
}

void cp_metrics_msg_sent(cp_metrics *m, const cp_service_def *def, const cp_method *meth)
{
    cp_metrics_slot *slot = find_slot(m, def, meth);
    if (slot != NULL)
        atomic_fetch_add_explicit(&slot->msg_sent, 1, memory_order_relaxed);
}

void cp_metrics_conn_opened(cp_metrics *m, const cp_service_def *def, bool refused)
{
    cp_metrics_svc *s = m != NULL ? find_svc(m, def) : NULL;
    if (s == NULL)
        return;
    atomic_fetch_add_explicit(&s->conns_total, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->conns_open, 1, memory_order_relaxed);
    if (refused)
        atomic_fetch_add_explicit(&s->conns_refused, 1, memory_order_relaxed);
}

void cp_metrics_conn_closed(cp_metrics *m, const cp_service_def *def)
{
    cp_metrics_svc *s = m != NULL ? find_svc(m, def) : NULL;
    if (s != NULL)
        atomic_fetch_sub_explicit(&s->conns_open, 1, memory_order_relaxed);
}

void cp_metrics_call_refused(cp_metrics *m, const cp_service_def *def)
{
    cp_metrics_svc *s = m != NULL ? find_svc(m, def) : NULL;
    if (s != NULL)
        atomic_fetch_add_explicit(&s->calls_refused, 1, memory_order_relaxed);
}

int cp_metrics_add_collector(cp_metrics *m, const char *name, const char *help,
                             cp_metrics_type type, const char *label_name, cp_metrics_collect_fn fn,
                             void *ctx)
{
    if (m->n_collectors == CP_METRICS_MAX_COLLECTORS)
        return -1;
    m->collectors[m->n_collectors++] =
        (cp_metrics_collector){name, help, label_name, type, fn, ctx};
    return 0;
}

const char *cp_metrics_code_name(int grpc_code)
{
    /* google.golang.org/grpc/codes: Code.String() */
    static const char *const names[CP_METRICS_CODES] = {
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    };
    if (grpc_code < 0 || grpc_code >= CP_METRICS_CODES)
        return "Unknown";
    return names[grpc_code];
}
