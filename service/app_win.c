/* app_win.c - see app_win.h. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups/groups.h"
#include "base/winutil_win.h"
#include "rpc/pool.h"
#include "transport/transport.h"
#include "host/fs.h"
#include "host/sysfiles.h"
#include "service/app_win.h"
#include "service/cfgpolicy.h"
#include "security/audit.h"
#include "service/eventlog_win.h"
#include "service/eventq_win.h"
#include "security/gate_win.h"
#include "base/log.h"
#include "service/metrics_http_win.h"
#include "security/pipesec_win.h"
#include "security/redact.h"
#include "security/roots.h"
#include "service/pipealarm_win.h"
#include "security/sddl.h"

struct cp_app {
    const cp_flags *flags;
    const cp_config *config;
    cp_groups *groups;
    cp_pool *pool;
    cp_eventlog *eventlog;
    cp_eventq *eventq; /* audit records to the Event Log, off the callers' threads */
    cp_audit *audit;
    cp_pipesec *pipesec;
    cp_gate *gate;
    cp_transport *transport;
    cp_metrics *metrics;         /* NULL: -metrics-bind-address not given */
    cp_metrics_http *http;       /* serves metrics once the pipes are up */
    cp_pipealarm *alarm;         /* foreign instances of the pipes (pipealarm.h) */
    volatile LONG loop_failures; /* the transport's loops whose wait failed */
    SRWLOCK lock;                /* transport vs. stop_requested, across threads */
    bool stop_requested;
    int64_t stop_drain_ms;
};

cp_app *cp_app_new(const cp_flags *f, const cp_config *c)
{
    cp_app *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->flags = f;
    a->config = c;
    InitializeSRWLock(&a->lock);
    return a;
}

int64_t cp_app_drain_ms(const cp_app *a)
{
    return a->config->limits.drain_timeout_ms;
}

#define LOOP_FAILURES_METRIC "csi_proxy_transport_loop_failures_total"

static void loop_failures_collect(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx)
{
    cp_app *a = ctx;
    emit(emit_ctx, NULL, (double)InterlockedCompareExchange(&a->loop_failures, 0, 0));
}

/* The registry, when -metrics-bind-address asks for one: every service,
 * the groups' families and the audit's (metrics.h). Served later. */
static int setup_metrics(cp_app *a, cp_error *e)
{
    const char *addr = a->flags->metrics_bind_address;
    if (addr == NULL || addr[0] == '\0')
        return CP_OK; /* upstream's default: metrics off */
    a->metrics = cp_metrics_new();
    if (a->metrics == NULL || cp_groups_add_metrics(a->groups, a->metrics) != 0 ||
        cp_metrics_add_collector(a->metrics, CP_AUDIT_METRIC,
                                 "Audit records written, by kind: call (a state-changing call) "
                                 "or denied (a refused caller).",
                                 CP_METRICS_COUNTER, "kind", cp_audit_collect, a->audit) != 0 ||
        cp_metrics_add_collector(a->metrics, LOOP_FAILURES_METRIC,
                                 "Pipe transport loops whose wait for I/O failed: each closed "
                                 "the connections it served; the others serve on.",
                                 CP_METRICS_COUNTER, NULL, loop_failures_collect, a) != 0 ||
        cp_metrics_add_collector(a->metrics, CP_EVENTQ_METRIC, CP_EVENTQ_HELP, CP_METRICS_COUNTER,
                                 NULL, cp_eventq_collect, a->eventq) != 0)
        return cp_error_set(e, CP_E_NOMEM, "-metrics-bind-address: out of memory");
    return CP_OK;
}

static unsigned pool_threads(const cp_config *c)
{
    if (c->limits.worker_threads > 0)
        return c->limits.worker_threads;
    DWORD cpus = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    unsigned n = cpus > 0 && cpus < 512 ? 2u * (unsigned)cpus : 4u;
    return n < 4 ? 4 : n;
}

/* A page-file or crash-dump entry whose volume cannot be told: that
 * volume is not kept from being changed (sysfiles.h), said at start. */
static void sysfile_warn(void *ctx, const char *line)
{
    (void)ctx;
    CP_LOG_WARN("%s", line);
}

static void log_security(const cp_config *c)
{
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        const cp_config_group *g = &c->groups[i];
        if (!g->served)
            continue;
        char callers[512] = "", sid[CP_SID_STR_MAX];
        for (size_t k = 0; k < g->n_allowed; k++)
            snprintf(callers + strlen(callers), sizeof(callers) - strlen(callers), "%s%s",
                     k > 0 ? " " : "", cp_sid_format(&g->allowed[k], sid, sizeof(sid)));
        CP_LOG_INFO("group %s: pipe security %s, allowed callers [%s]", g->name, g->pipe_sddl,
                    callers);
        char which[512];
        if (cp_sddl_caller_excess(g->pipe_sddl, which, sizeof(which)))
            CP_LOG_WARN("group %s: pipe security gives %s more than a client needs (WRITE_DAC, "
                        "WRITE_OWNER or DELETE): such a caller can rewrite the pipe's DACL or "
                        "owner; callers need FRFW (read and write) only",
                        g->name, which);
        if (cp_config_group_broad(g, which, sizeof(which))) /* only with allowBroadCallers */
            CP_LOG_WARN("group %s admits a broad group (%s): security.allowBroadCallers is true; "
                        "its members can make csi-proxy act as SYSTEM",
                        g->name, which);
    }
    if (c->system.services_restricted) {
        char list[512] = "";
        for (size_t k = 0; k < c->system.n_allowed_services; k++)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k > 0 ? " " : "",
                     c->system.allowed_services[k]);
        CP_LOG_INFO("group system: StartService/StopService limited to allowedServices [%s]", list);
    } else {
        CP_LOG_INFO("group system: StartService/StopService may touch any service "
                    "(no allowedServices in the configuration)");
    }
}

/* The listeners: the services the configuration serves, each with its
 * group's security attributes. */
/* The transport's listen_error: a pipe that cannot take new clients is an
 * error an operator must see. */
static void listen_error(void *ctx, const char *msg)
{
    (void)ctx;
    CP_LOG_ERROR("%s", msg);
}

/* The transport's loop_failed: one loop stopped serving; the others serve
 * on. An error an operator must see, and a count for alerting. */
static void loop_failed(void *ctx, const char *msg)
{
    cp_app *a = ctx;
    InterlockedIncrement(&a->loop_failures);
    CP_LOG_ERROR("%s", msg);
}

static int listen_specs(cp_app *a, cp_listen_spec **out, char (**names)[96], size_t *n_out,
                        cp_error *e)
{
    size_t n = cp_groups_count(a->groups), k = 0;
    cp_listen_spec *specs = calloc(n > 0 ? n : 1, sizeof(*specs));
    char(*nm)[96] = calloc(n > 0 ? n : 1, sizeof(*nm));
    if (specs == NULL || nm == NULL) {
        free(specs);
        free(nm);
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const cp_service *svc = cp_groups_service(a->groups, i);
        if (!cp_config_serves(a->config, svc->def->group, svc->def->version))
            continue;
        specs[k].svc = svc;
        cp_groups_pipe_name(svc->def, nm[k], sizeof(nm[k]));
        specs[k].name = nm[k];
        specs[k].security = cp_pipesec_attrs(a->pipesec, svc->def->group);
        if (specs[k].security == NULL) { /* a group the configuration does not know */
            free(specs);
            free(nm);
            return cp_error_set(e, CP_E_INTERNAL, "no pipe security for group %s", svc->def->group);
        }
        k++;
    }
    *out = specs;
    *names = nm;
    *n_out = k;
    return CP_OK;
}

int cp_app_start(void *ctx, cp_error *e)
{
    cp_app *a = ctx;
    const cp_flags *f = a->flags;
    const cp_config *c = a->config;
    if (f->socket_dir != NULL || f->root != NULL)
        CP_LOG_WARN("-socket-dir and -root are for the native build; ignored on Windows");

    if (!cp_redact_set_extra(c->log.redact_fields, c->log.n_redact_fields))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "log.redactFields: too many or too long");
    if (c->log.n_redact_fields > 0) {
        char list[512] = "";
        for (size_t i = 0; i < c->log.n_redact_fields; i++)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i > 0 ? " " : "",
                     c->log.redact_fields[i]);
        CP_LOG_INFO("audit: also redacting request fields [%s]", list);
    }
    /* Roots that would hand callers the system: refused (roots.h). */
    int rrc = cp_roots_check("-kubelet-path", f->kubelet_path, e);
    for (size_t i = 0; rrc == CP_OK && i < f->n_working_dirs; i++)
        rrc = cp_roots_check("-working-dir", f->working_dirs[i], e);
    if (rrc != CP_OK)
        return rrc;

    cp_groups_config gc = {
        .kubelet_path = f->kubelet_path,
        .working_dirs = (const char *const *)f->working_dirs,
        .n_working_dirs = f->n_working_dirs,
        .fs = cp_fs_host_win32(),
        .system = c->system,
        .smb = c->smb,
        .iscsi = c->iscsi,
        .volume = c->volume,
    };
    gc.smb.privacy_off = !f->require_privacy;
    a->groups = cp_groups_new(&gc, e);
    if (a->groups == NULL)
        return e->status != CP_OK ? e->status : CP_E_INTERNAL;
    /* No thread yet: the first call starts the first worker (pool.h). */
    a->pool = cp_pool_new(pool_threads(c));
    if (a->pool == NULL)
        return cp_error_set(e, CP_E_NOMEM, "worker pool: out of memory");
    a->eventlog = cp_eventlog_open();
    a->eventq = a->eventlog != NULL ? cp_eventq_new(a->eventlog) : NULL;
    a->audit = a->eventq != NULL ? cp_audit_new(cp_eventq_report, a->eventq) : NULL;
    if (a->eventlog == NULL || a->eventq == NULL || a->audit == NULL)
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    cp_policy policy;
    cp_config_policy(c, &policy);
    a->pipesec = cp_pipesec_new(&policy, e);
    if (a->pipesec == NULL)
        return e->status;
    a->gate = cp_gate_new(&policy, a->audit, e);
    if (a->gate == NULL)
        return e->status;
    int mrc = setup_metrics(a, e);
    if (mrc != CP_OK)
        return mrc;

    cp_listen_spec *specs = NULL;
    char(*names)[96] = NULL;
    size_t n = 0;
    int rc = listen_specs(a, &specs, &names, &n, e);
    if (rc != CP_OK)
        return rc;
    if (n == 0) {
        rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: the configuration serves no pipe",
                          c->path != NULL ? c->path : "config");
        goto out;
    }
    /* Instances of the pipes another process makes: seen and reported
     * (pipealarm.h); the marks of an earlier run go first. */
    cp_pipealarm_win_clear();
    const char **pipe_names = calloc(n, sizeof(*pipe_names));
    for (size_t i = 0; pipe_names != NULL && i < n; i++)
        pipe_names[i] = names[i];
    a->alarm = pipe_names != NULL
                   ? cp_pipealarm_new(pipe_names, n, cp_pipealarm_win_sink, a->eventlog)
                   : NULL;
    free(pipe_names);
    if (a->alarm == NULL || (a->metrics != NULL &&
                             cp_metrics_add_collector(a->metrics, CP_PIPEALARM_METRIC,
                                                      CP_PIPEALARM_HELP, CP_METRICS_COUNTER, "pipe",
                                                      cp_pipealarm_collect, a->alarm) != 0)) {
        rc = cp_error_set(e, CP_E_NOMEM, "out of memory");
        goto out;
    }
    cp_transport_opts to = {
        .pool = a->pool,
        .conn = {.max_recv_msg = (size_t)c->limits.max_message_bytes,
                 .audit = cp_audit_call,
                 .audit_ctx = a->audit,
                 .metrics = a->metrics},
        .authorize = cp_gate_authorize,
        .authorize_ctx = a->gate,
        .revoke = cp_gate_revoke,
        .max_conns = c->limits.max_connections,
        .idle_ms = c->limits.idle_timeout_ms,
        .listen_error = listen_error,
        .foreign_instance = cp_pipealarm_report,
        .foreign_instance_ctx = a->alarm,
        .loop_failed = loop_failed,
        .loop_failed_ctx = a,
    };
    cp_transport *t = cp_transport_new(&to, specs, n, e);
    if (t == NULL) {
        rc = e->status != CP_OK ? e->status : CP_E_INTERNAL;
        goto out;
    }
    if (c->path != NULL)
        CP_LOG_INFO("configuration: %s", c->path);
    log_security(c);
    cp_sysfile_unresolved(sysfile_warn, NULL);
    CP_LOG_INFO("serving %zu pipes", n);
    for (size_t i = 0; i < n; i++)
        CP_LOG_INFO("  \\\\.\\pipe\\%s", names[i]);

    AcquireSRWLockExclusive(&a->lock);
    a->transport = t;
    if (a->stop_requested) /* a stop came while we were starting */
        cp_transport_stop(t, a->stop_drain_ms);
    ReleaseSRWLockExclusive(&a->lock);
    if (a->metrics != NULL) { /* after the pipes, as upstream: a failure stops the start */
        cp_metrics_addr addr;
        rc = cp_metrics_addr_parse(a->flags->metrics_bind_address, &addr, e);
        if (rc == CP_OK && (a->http = cp_metrics_http_start(a->metrics, &addr, e)) == NULL)
            rc = e->status != CP_OK ? e->status : CP_E_INTERNAL;
    }
out:
    free(names);
    free(specs);
    return rc;
}

int cp_app_run(void *ctx)
{
    cp_app *a = ctx;
    int rc = cp_transport_run(a->transport);
    CP_LOG_INFO("stopped serving");
    return rc;
}

void cp_app_stop(void *ctx, int64_t drain_ms)
{
    cp_app *a = ctx;
    AcquireSRWLockExclusive(&a->lock);
    if (!a->stop_requested) {
        a->stop_requested = true;
        a->stop_drain_ms = drain_ms;
        if (a->transport != NULL)
            cp_transport_stop(a->transport, drain_ms);
    }
    ReleaseSRWLockExclusive(&a->lock);
}

/* Workers still inside a handler (a drain that timed out) keep the pool,
 * the transport, the groups and the audit alive: the process is about to
 * exit and they may still post to the transport. */
void cp_app_free(cp_app *a)
{
    if (a == NULL)
        return;
    cp_metrics_http_stop(a->http); /* it reads the groups and the audit */
    a->http = NULL;
    if (a->pool != NULL && cp_pool_busy(a->pool) > 0) {
        CP_LOG_WARN("%zu calls still running at exit", cp_pool_busy(a->pool));
        return;
    }
    cp_pool_free(a->pool); /* before the transport: workers post to it */
    AcquireSRWLockExclusive(&a->lock);
    cp_transport *t = a->transport;
    a->transport = NULL;
    ReleaseSRWLockExclusive(&a->lock);
    cp_transport_free(t); /* before pipesec and gate: pipes use them */
    if (a->groups != NULL)
        cp_groups_free(a->groups);
    cp_gate_free(a->gate);
    cp_pipesec_free(a->pipesec);
    cp_pipealarm_free(a->alarm);
    cp_audit_free(a->audit);
    cp_metrics_free(a->metrics);
    cp_eventq_free(a->eventq); /* writes what is queued */
    cp_eventlog_close(a->eventlog);
    free(a);
}
