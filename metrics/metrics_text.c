/* metrics_text.c - the registry in Prometheus' text exposition format
 * 0.0.4: for each family "# HELP", "# TYPE", then its samples, families
 * sorted by name. Label values are escaped (\\, \", \n), and so is HELP
 * text (\\, \n), as the format requires. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics_internal.h"

typedef struct buf {
    char *p;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void printf_(buf *b, const char *fmt, ...) CP_PRINTF(2, 3);
static void printf_(buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* in_label: a label value (also escapes '"'); otherwise HELP text. */
static void put_escaped(buf *b, const char *s, bool in_label)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\')
            puts_(b, "\\\\");
        else if (*s == '\n')
            puts_(b, "\\n");
        else if (*s == '"' && in_label)
            puts_(b, "\\\"");
        else
            put(b, s, 1);
    }
}

static void header(buf *b, const char *name, const char *help, const char *type)
{
    printf_(b, "# HELP %s ", name);
    put_escaped(b, help, false);
    printf_(b, "\n# TYPE %s %s\n", name, type);
}

static void label(buf *b, bool first, const char *name, const char *value)
{
    printf_(b, "%s%s=\"", first ? "" : ",", name);
    put_escaped(b, value, true);
    puts_(b, "\"");
}

static void put_double(buf *b, double v)
{
    if (isnan(v))
        puts_(b, "NaN");
    else if (isinf(v))
        puts_(b, v > 0 ? "+Inf" : "-Inf");
    else
        printf_(b, "%.17g", v);
}

/* ---- gRPC families ---------------------------------------------------- */

static uint64_t ld(atomic_uint_fast64_t *a)
{
    return (uint64_t)atomic_load_explicit(a, memory_order_relaxed);
}

static const char *grpc_type(const cp_method *meth)
{
    return (meth->flags & CP_METHOD_SERVER_STREAM) ? "server_stream" : "unary";
}

/* name{[grpc_code="...",]grpc_method="...",grpc_service="...",grpc_type="..."[,le="..."]} */
static void grpc_series(buf *b, const char *name, const char *code, const cp_service_def *def,
                        const cp_method *meth, const char *le)
{
    puts_(b, name);
    puts_(b, "{");
    if (code != NULL)
        label(b, true, "grpc_code", code);
    label(b, code == NULL, "grpc_method", meth->name);
    label(b, false, "grpc_service", def->service);
    label(b, false, "grpc_type", grpc_type(meth));
    if (le != NULL)
        label(b, false, "le", le);
    puts_(b, "} ");
}

/* Started, received, and a unary call's sent: one each per call started,
 * as upstream counts (metrics.h); sent_family: a stream's sent messages
 * are counted apart. */
static void fam_per_call(buf *b, cp_metrics *m, const char *name, const char *help,
                         bool sent_family)
{
    header(b, name, help, "counter");
    for (size_t i = 0; i < m->n_svcs; i++) {
        cp_metrics_svc *s = &m->svcs[i];
        for (size_t k = 0; k < s->def->n_methods; k++) {
            bool stream = (s->def->methods[k].flags & CP_METHOD_SERVER_STREAM) != 0;
            uint64_t n = ld(sent_family && stream ? &s->slots[k].msg_sent : &s->slots[k].started);
            if (n == 0)
                continue;
            grpc_series(b, name, NULL, s->def, &s->def->methods[k], NULL);
            printf_(b, "%" PRIu64 "\n", n);
        }
    }
}

static void fam_started(buf *b, cp_metrics *m)
{
    fam_per_call(b, m, "grpc_server_started_total", "Total number of RPCs started on the server.",
                 false);
}

static void fam_received(buf *b, cp_metrics *m)
{
    fam_per_call(b, m, "grpc_server_msg_received_total",
                 "Total number of RPC stream messages received on the server.", false);
}

static void fam_sent(buf *b, cp_metrics *m)
{
    fam_per_call(b, m, "grpc_server_msg_sent_total",
                 "Total number of gRPC stream messages sent by the server.", true);
}

static void fam_handled(buf *b, cp_metrics *m)
{
    const char *name = "grpc_server_handled_total";
    header(b, name,
           "Total number of RPCs completed on the server, regardless of success or failure.",
           "counter");
    for (size_t i = 0; i < m->n_svcs; i++) {
        cp_metrics_svc *s = &m->svcs[i];
        for (size_t k = 0; k < s->def->n_methods; k++)
            for (int c = 0; c < CP_METRICS_CODES; c++) {
                uint64_t n = ld(&s->slots[k].handled[c]);
                if (n == 0)
                    continue;
                grpc_series(b, name, cp_metrics_code_name(c), s->def, &s->def->methods[k], NULL);
                printf_(b, "%" PRIu64 "\n", n);
            }
    }
}

static void fam_seconds(buf *b, cp_metrics *m)
{
    header(b, "grpc_server_handling_seconds",
           "Histogram of response latency (seconds) of gRPC that had been application-level "
           "handled by the server.",
           "histogram");
    for (size_t i = 0; i < m->n_svcs; i++) {
        cp_metrics_svc *s = &m->svcs[i];
        for (size_t k = 0; k < s->def->n_methods; k++) {
            cp_metrics_slot *slot = &s->slots[k];
            const cp_method *meth = &s->def->methods[k];
            uint64_t counts[CP_METRICS_BUCKETS + 1], total = 0;
            for (size_t j = 0; j <= CP_METRICS_BUCKETS; j++)
                total += counts[j] = ld(&slot->bucket[j]);
            if (total == 0)
                continue;
            uint64_t cum = 0;
            for (size_t j = 0; j < CP_METRICS_BUCKETS; j++) {
                cum += counts[j];
                grpc_series(b, "grpc_server_handling_seconds_bucket", NULL, s->def, meth,
                            cp_metrics_bound_text[j]);
                printf_(b, "%" PRIu64 "\n", cum);
            }
            grpc_series(b, "grpc_server_handling_seconds_bucket", NULL, s->def, meth, "+Inf");
            printf_(b, "%" PRIu64 "\n", total);
            uint64_t us = ld(&slot->sum_us);
            grpc_series(b, "grpc_server_handling_seconds_sum", NULL, s->def, meth, NULL);
            printf_(b, "%" PRIu64 ".%06" PRIu64 "\n", us / 1000000, us % 1000000);
            grpc_series(b, "grpc_server_handling_seconds_count", NULL, s->def, meth, NULL);
            printf_(b, "%" PRIu64 "\n", total);
        }
    }
}

/* ---- ours, by group ------------------------------------------------------ */

typedef enum { OPEN, TOTAL, REFUSED_CONNS, REFUSED_CALLS } by_group;

static int64_t group_value(cp_metrics_svc *s, by_group what)
{
    switch (what) {
    case OPEN:
        return (int64_t)atomic_load_explicit(&s->conns_open, memory_order_relaxed);
    case TOTAL:
        return (int64_t)ld(&s->conns_total);
    case REFUSED_CONNS:
        return (int64_t)ld(&s->conns_refused);
    default:
        return (int64_t)ld(&s->calls_refused);
    }
}

/* One sample per group: the sum over its versions. A shared service (the
 * health service) has no pipes: its connections count under each pipe's
 * group. */
static void fam_group(buf *b, cp_metrics *m, const char *name, const char *help, const char *type,
                      by_group what)
{
    header(b, name, help, type);
    for (size_t i = 0; i < m->n_svcs; i++) {
        if (m->svcs[i].shared)
            continue;
        const char *g = m->svcs[i].def->group;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(m->svcs[j].def->group, g) == 0;
        if (seen)
            continue;
        int64_t v = 0;
        for (size_t j = i; j < m->n_svcs; j++)
            if (strcmp(m->svcs[j].def->group, g) == 0)
                v += group_value(&m->svcs[j], what);
        printf_(b, "%s{", name);
        label(b, true, "group", g);
        printf_(b, "} %" PRId64 "\n", v);
    }
}

static void fam_conns_open(buf *b, cp_metrics *m)
{
    fam_group(b, m, "csi_proxy_connections_open",
              "Connections to the group's pipes open now, refused callers' included.", "gauge",
              OPEN);
}

static void fam_conns_total(buf *b, cp_metrics *m)
{
    fam_group(b, m, "csi_proxy_connections_total",
              "Connections accepted on the group's pipes, refused callers' included.", "counter",
              TOTAL);
}

static void fam_refused_conns(buf *b, cp_metrics *m)
{
    fam_group(b, m, "csi_proxy_refused_connections_total",
              "Connections whose caller the group's authorization refused.", "counter",
              REFUSED_CONNS);
}

static void fam_refused_calls(buf *b, cp_metrics *m)
{
    fam_group(b, m, "csi_proxy_refused_calls_total",
              "Calls answered PERMISSION_DENIED because their caller was refused (not in "
              "grpc_server_handled_total).",
              "counter", REFUSED_CALLS);
}

/* ---- collectors ----------------------------------------------------------- */

typedef struct emit_ctx {
    buf *b;
    const cp_metrics_collector *c;
} emit_ctx;

static void emit(void *ctx, const char *label_value, double value)
{
    emit_ctx *e = ctx;
    puts_(e->b, e->c->name);
    if (e->c->label_name != NULL) {
        puts_(e->b, "{");
        label(e->b, true, e->c->label_name, label_value != NULL ? label_value : "");
        puts_(e->b, "}");
    }
    puts_(e->b, " ");
    put_double(e->b, value);
    puts_(e->b, "\n");
}

static void render_collector(buf *b, const cp_metrics_collector *c)
{
    header(b, c->name, c->help, c->type == CP_METRICS_COUNTER ? "counter" : "gauge");
    emit_ctx e = {b, c};
    c->fn(c->ctx, emit, &e);
}

/* ---- all families, by name ------------------------------------------------ */

typedef struct family {
    const char *name;
    void (*render)(buf *b, cp_metrics *m);
    const cp_metrics_collector *collector;
} family;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const family *)a)->name, ((const family *)b)->name);
}

char *cp_metrics_render(cp_metrics *m, size_t *len)
{
    family f[9 + CP_METRICS_MAX_COLLECTORS] = {
        {"grpc_server_started_total", fam_started, NULL},
        {"grpc_server_handled_total", fam_handled, NULL},
        {"grpc_server_msg_received_total", fam_received, NULL},
        {"grpc_server_msg_sent_total", fam_sent, NULL},
        {"grpc_server_handling_seconds", fam_seconds, NULL},
        {"csi_proxy_connections_open", fam_conns_open, NULL},
        {"csi_proxy_connections_total", fam_conns_total, NULL},
        {"csi_proxy_refused_connections_total", fam_refused_conns, NULL},
        {"csi_proxy_refused_calls_total", fam_refused_calls, NULL},
    };
    size_t n = 9;
    for (size_t i = 0; i < m->n_collectors; i++, n++)
        f[n] = (family){m->collectors[i].name, NULL, &m->collectors[i]};
    qsort(f, n, sizeof(f[0]), by_name);
    buf b = {0};
    put(&b, "", 0); /* an empty registry is "", not NULL */
    for (size_t i = 0; i < n; i++) {
        if (f[i].render != NULL)
            f[i].render(&b, m);
        else
            render_collector(&b, f[i].collector);
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
