/* system_sim.c - system.h simulated: a fixed set of services in memory,
 * state kept across calls, and a fixed BIOS serial. For the native build's
 * tests and csi-proxy-sim.exe; never linked into csi-proxy.exe.
 *
 *   w32time       Windows Time                       manual, stopped
 *   msiscsi       Microsoft iSCSI Initiator Service  manual, stopped
 *   lanmanserver  Server                             automatic, running
 *   browser       Computer Browser (depends on lanmanserver)  automatic, running
 *   remoteregistry  Remote Registry                  disabled, stopped
 *
 * Names compare case-insensitively, as the SCM's do. */
#include "host/system_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/thread.h"

#define SIM_BIOS_SERIAL "SIM-BIOS-0001"

typedef struct sim_service {
    const char *name, *display, *depends_on;
    int start_type, state;
} sim_service;

static const sim_service initial[] = {
    {"w32time", "Windows Time", NULL, 3, 1},
    {"msiscsi", "Microsoft iSCSI Initiator Service", NULL, 3, 1},
    {"lanmanserver", "Server", NULL, 2, 4},
    {"browser", "Computer Browser", "lanmanserver", 2, 4},
    {"remoteregistry", "Remote Registry", NULL, 4, 1},
};
#define N_SERVICES (sizeof(initial) / sizeof(initial[0]))

typedef struct sim {
    cp_mutex *mu;
    sim_service svc[N_SERVICES];
} sim;

static sim_service *find(sim *s, const char *name)
{
    for (size_t i = 0; i < N_SERVICES; i++)
        if (strcasecmp(s->svc[i].name, name) == 0)
            return &s->svc[i];
    return NULL;
}

static int not_found(cp_error *e, const char *op, const char *name)
{
    return cp_error_set(e, CP_E_NOT_FOUND, "%s %s: the service does not exist", op, name);
}

static int sim_bios_serial(void *ctx, char *out, size_t outlen, cp_error *e)
{
    (void)ctx;
    if ((size_t)snprintf(out, outlen, "%s", SIM_BIOS_SERIAL) >= outlen)
        return cp_error_set(e, CP_E_INTERNAL, "BIOS serial: buffer too small");
    return CP_OK;
}

static int sim_get(void *ctx, const char *name, cp_service_info *out, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    sim_service *v = find(s, name);
    if (v != NULL) {
        snprintf(out->display_name, sizeof(out->display_name), "%s", v->display);
        out->start_type = v->start_type;
        out->state = v->state;
    }
    cp_mutex_unlock(s->mu);
    return v != NULL ? CP_OK : not_found(e, "GetService", name);
}

static int sim_start(void *ctx, const char *name, cp_error *e)
{
    sim *s = ctx;
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    sim_service *v = find(s, name);
    if (v == NULL)
        rc = not_found(e, "StartService", name);
    else if (v->start_type == 4)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "StartService %s: the service is disabled",
                          name);
    else
        v->state = 4;
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_stop(void *ctx, const char *name, bool force, cp_error *e)
{
    sim *s = ctx;
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    sim_service *v = find(s, name);
    if (v == NULL) {
        rc = not_found(e, "StopService", name);
    } else if (v->state != 1) {
        char running[256] = "";
        for (size_t i = 0; i < N_SERVICES; i++)
            if (s->svc[i].depends_on != NULL && strcasecmp(s->svc[i].depends_on, v->name) == 0 &&
                s->svc[i].state != 1)
                snprintf(running + strlen(running), sizeof(running) - strlen(running), "%s%s",
                         running[0] ? ", " : "", s->svc[i].name);
        if (running[0] != '\0' && !force) {
            rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "StopService %s: running services depend on it: %s (stop them "
                              "first, or set force)",
                              name, running);
        } else {
            for (size_t i = 0; i < N_SERVICES; i++)
                if (s->svc[i].depends_on != NULL && strcasecmp(s->svc[i].depends_on, v->name) == 0)
                    s->svc[i].state = 1;
            v->state = 1;
        }
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static void sim_destroy(void *ctx)
{
    sim *s = ctx;
    if (s == NULL)
        return;
    cp_mutex_free(s->mu);
    free(s);
}

static const cp_system_ops sim_ops = {
    .bios_serial = sim_bios_serial,
    .service_get = sim_get,
    .service_start = sim_start,
    .service_stop = sim_stop,
    .destroy = sim_destroy,
};

int cp_system_host_open_default(cp_system_host *out, cp_error *e)
{
    sim *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->mu = cp_mutex_new()) == NULL) {
        free(s);
        return cp_error_set(e, CP_E_NOMEM, "system simulator: out of memory");
    }
    memcpy(s->svc, initial, sizeof(initial));
    out->ops = &sim_ops;
    out->ctx = s;
    return CP_OK;
}
