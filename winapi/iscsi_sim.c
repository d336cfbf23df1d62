/* iscsi_sim.c - iscsi.h simulated: an initiator kept in memory. For the
 * native build's tests and csi-proxy-sim.exe; never linked into
 * csi-proxy.exe. Fixed in code:
 *
 *   a portal whose address starts with "unreachable" does not answer:
 *   AddTargetPortal fails with UNAVAILABLE. Any other portal A serves two
 *   targets (A lower-cased, '_', '[' and ']' made '-'):
 *     iqn.2026-01.local.sim:A-disks  two LUNs, any authentication
 *     iqn.2026-01.local.sim:A-chap   one LUN, CHAP user "sim-user" with
 *                                    secret "sim-secret-12" (one-way or
 *                                    mutual) only
 *   A login gives each LUN the lowest free disk number from 10 up; a
 *   logout frees them. As Windows, a CHAP secret must be 12 to 16 bytes,
 *   and mutual CHAP needs the initiator's secret set first. Secrets are
 *   compared, never kept or echoed. */
#include "iscsi.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../server/thread.h"

#define SIM_PREFIX "iqn.2026-01.local.sim:"
#define SIM_USER "sim-user"
#define SIM_SECRET "sim-secret-12"
#define SIM_FIRST_DISK 10
#define SIM_MAX_SESSIONS 32
#define SIM_LUNS_MAX 2

typedef struct sim_session {
    char iqn[CP_ISCSI_NAME_MAX];
    uint32_t disks[SIM_LUNS_MAX];
    size_t n_disks;
} sim_session;

typedef struct sim {
    cp_mutex *mu;
    cp_iscsi_portal portals[CP_ISCSI_LIST_MAX];
    size_t n_portals;
    sim_session sessions[SIM_MAX_SESSIONS];
    size_t n_sessions;
    bool mutual_set;
} sim;

static long find_portal(const sim *s, const cp_iscsi_portal *p)
{
    for (size_t i = 0; i < s->n_portals; i++)
        if (strcasecmp(s->portals[i].address, p->address) == 0 && s->portals[i].port == p->port)
            return (long)i;
    return -1;
}

static long find_session(const sim *s, const char *iqn)
{
    for (size_t i = 0; i < s->n_sessions; i++)
        if (strcasecmp(s->sessions[i].iqn, iqn) == 0)
            return (long)i;
    return -1;
}

/* The IQN of a portal's target "disks" or "chap". */
static void target_iqn(const cp_iscsi_portal *p, const char *kind, char *out, size_t len)
{
    int n = snprintf(out, len, "%s", SIM_PREFIX);
    for (const char *a = p->address; *a != '\0' && (size_t)n + 1 < len; a++, n++) {
        char c = (char)tolower((unsigned char)*a);
        out[n] = c == '_' || c == '[' || c == ']' ? '-' : c;
    }
    out[n] = '\0';
    snprintf(out + n, len - (size_t)n, "-%s", kind);
}

static int sim_add(void *ctx, const cp_iscsi_portal *p, cp_error *e)
{
    sim *s = ctx;
    if (strncasecmp(p->address, "unreachable", 11) == 0)
        return cp_error_set(e, CP_E_UNAVAILABLE, "target portal %s:%u does not answer", p->address,
                            (unsigned)p->port);
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    if (find_portal(s, p) >= 0)
        rc = cp_error_set(e, CP_E_ALREADY_EXISTS, "target portal %s:%u is already registered",
                          p->address, (unsigned)p->port);
    else if (s->n_portals == CP_ISCSI_LIST_MAX)
        rc = cp_error_set(e, CP_E_RESOURCE_EXHAUSTED, "target portal %s:%u: too many portals",
                          p->address, (unsigned)p->port);
    else
        s->portals[s->n_portals++] = *p;
    cp_mutex_unlock(s->mu);
    return rc;
}

static int not_registered(const cp_iscsi_portal *p, cp_error *e)
{
    return cp_error_set(e, CP_E_NOT_FOUND, "target portal %s:%u is not registered", p->address,
                        (unsigned)p->port);
}

static int sim_remove(void *ctx, const cp_iscsi_portal *p, cp_error *e)
{
    sim *s = ctx;
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    long i = find_portal(s, p);
    if (i < 0)
        rc = not_registered(p, e);
    else
        s->portals[i] = s->portals[--s->n_portals];
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_list(void *ctx, cp_iscsi_portal *out, size_t max, size_t *n, cp_error *e)
{
    (void)e;
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    *n = s->n_portals < max ? s->n_portals : max;
    memcpy(out, s->portals, *n * sizeof(*out));
    cp_mutex_unlock(s->mu);
    return CP_OK;
}

static int sim_discover(void *ctx, const cp_iscsi_portal *p, char (*iqns)[CP_ISCSI_NAME_MAX],
                        size_t max, size_t *n, cp_error *e)
{
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    bool known = find_portal(s, p) >= 0;
    cp_mutex_unlock(s->mu);
    if (!known)
        return not_registered(p, e);
    *n = 0;
    if (max >= 2) {
        target_iqn(p, "disks", iqns[0], CP_ISCSI_NAME_MAX);
        target_iqn(p, "chap", iqns[1], CP_ISCSI_NAME_MAX);
        *n = 2;
    }
    return CP_OK;
}

static bool disk_used(const sim *s, uint32_t d)
{
    for (size_t i = 0; i < s->n_sessions; i++)
        for (size_t k = 0; k < s->sessions[i].n_disks; k++)
            if (s->sessions[i].disks[k] == d)
                return true;
    return false;
}

static int sim_connect(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_iscsi_auth auth,
                       const char *user, const char *secret, cp_error *e)
{
    sim *s = ctx;
    char disks[CP_ISCSI_NAME_MAX], chap[CP_ISCSI_NAME_MAX];
    target_iqn(p, "disks", disks, sizeof(disks));
    target_iqn(p, "chap", chap, sizeof(chap));
    bool is_chap = strcasecmp(iqn, chap) == 0;
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    size_t secret_len = strlen(secret);
    if (find_portal(s, p) < 0)
        rc = not_registered(p, e);
    else if (!is_chap && strcasecmp(iqn, disks) != 0)
        rc = cp_error_set(e, CP_E_NOT_FOUND, "target %s is not known through portal %s:%u", iqn,
                          p->address, (unsigned)p->port);
    else if (find_session(s, iqn) >= 0)
        rc = cp_error_set(e, CP_E_ALREADY_EXISTS, "target %s is already connected", iqn);
    else if (auth != CP_ISCSI_AUTH_NONE && (secret_len < 12 || secret_len > 16))
        rc = cp_error_set(e, CP_E_INVALID_ARGUMENT,
                          "logging in to %s: a CHAP secret must be 12 to 16 bytes long (it has "
                          "%lu)",
                          iqn, (unsigned long)secret_len);
    else if (auth == CP_ISCSI_AUTH_MUTUAL_CHAP && !s->mutual_set)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                          "logging in to %s with mutual CHAP: the initiator has no mutual CHAP "
                          "secret (SetMutualChapSecret)",
                          iqn);
    else if (is_chap && (auth == CP_ISCSI_AUTH_NONE || strcmp(user, SIM_USER) != 0 ||
                         strcmp(secret, SIM_SECRET) != 0))
        rc = cp_error_set(e, CP_E_PERMISSION_DENIED, "logging in to %s: authentication failure",
                          iqn);
    else if (s->n_sessions == SIM_MAX_SESSIONS)
        rc = cp_error_set(e, CP_E_RESOURCE_EXHAUSTED, "logging in to %s: too many sessions", iqn);
    if (rc == CP_OK) {
        sim_session *ss = &s->sessions[s->n_sessions];
        snprintf(ss->iqn, sizeof(ss->iqn), "%s", iqn);
        ss->n_disks = 0;
        size_t luns = is_chap ? 1 : 2;
        for (uint32_t d = SIM_FIRST_DISK; ss->n_disks < luns; d++)
            if (!disk_used(s, d))
                ss->disks[ss->n_disks++] = d;
        s->n_sessions++;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_disconnect(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_error *e)
{
    (void)p;
    sim *s = ctx;
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    long i = find_session(s, iqn);
    if (i < 0)
        rc = cp_error_set(e, CP_E_NOT_FOUND, "target %s is not connected", iqn);
    else
        s->sessions[i] = s->sessions[--s->n_sessions];
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_disks(void *ctx, const cp_iscsi_portal *p, const char *iqn, uint32_t *out,
                     size_t max, size_t *n, cp_error *e)
{
    (void)p;
    sim *s = ctx;
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    long i = find_session(s, iqn);
    if (i < 0) {
        rc = cp_error_set(e, CP_E_NOT_FOUND, "target %s is not connected", iqn);
    } else {
        const sim_session *ss = &s->sessions[i];
        *n = ss->n_disks < max ? ss->n_disks : max;
        memcpy(out, ss->disks, *n * sizeof(*out));
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_set_mutual(void *ctx, const char *secret, cp_error *e)
{
    sim *s = ctx;
    size_t n = strlen(secret);
    if (n != 0 && (n < 12 || n > 16))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "the mutual CHAP secret must be 12 to 16 bytes long (it has %lu)",
                            (unsigned long)n);
    cp_mutex_lock(s->mu);
    s->mutual_set = n != 0;
    cp_mutex_unlock(s->mu);
    return CP_OK;
}

static void sim_destroy(void *ctx)
{
    sim *s = ctx;
    cp_mutex_free(s->mu);
    free(s);
}

static const cp_iscsi_ops sim_ops = {
    .add_portal = sim_add,
    .remove_portal = sim_remove,
    .list_portals = sim_list,
    .discover = sim_discover,
    .connect = sim_connect,
    .disconnect = sim_disconnect,
    .disks = sim_disks,
    .set_mutual_chap_secret = sim_set_mutual,
    .destroy = sim_destroy,
};

int cp_iscsi_host_open_default(cp_iscsi_host *out, cp_error *e)
{
    sim *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->mu = cp_mutex_new()) == NULL) {
        free(s);
        return cp_error_set(e, CP_E_NOMEM, "iscsi simulator: out of memory");
    }
    out->ops = &sim_ops;
    out->ctx = s;
    return CP_OK;
}
