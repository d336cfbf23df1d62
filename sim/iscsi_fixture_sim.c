/* iscsi_fixture_sim.c - the iscsi: section of the simulators' fixture
 * (test/fixtures/storage.yaml documents it): portals, their targets with
 * CHAP and LUNs, and the logins that exist at start. Every key checked, a
 * problem named by file, line, key path and cause; a CHAP secret never
 * appears in a message. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/iscsi_sim_internal.h"
#include "sim/simfixture_sim.h"

#define WHO "iscsi simulator"

static int nomem(cp_yw *w)
{
    return cp_error_set(w->e, CP_E_NOMEM, WHO ": out of memory");
}

/* The name rules Windows' initiator applies: iqn., eui. or naa. and no
 * blank or control character, at most 223 bytes. */
static int check_iqn(cp_yw *w, const yaml_node_t *n, const char *key, const char *iqn)
{
    bool ok = strlen(iqn) <= 223 &&
              (strncasecmp(iqn, "iqn.", 4) == 0 || strncasecmp(iqn, "eui.", 4) == 0 ||
               strncasecmp(iqn, "naa.", 4) == 0);
    for (const char *p = iqn; ok && *p != '\0'; p++)
        ok = isgraph((unsigned char)*p) != 0;
    return ok ? CP_OK
              : cp_yw_errf(w, n, "%s: \"%s\" is not an iSCSI name (iqn., eui. or naa.)", key, iqn);
}

static int check_address(cp_yw *w, const yaml_node_t *n, const char *key, const char *a)
{
    for (const char *p = a; *p != '\0'; p++)
        if (!isalnum((unsigned char)*p) && strchr(".-_:[]", *p) == NULL)
            return cp_yw_errf(w, n, "%s: \"%s\" is not a host name or address", key, a);
    return CP_OK;
}

static int load_chap(cp_yw *w, const yaml_node_t *n, const char *where, iscsi_target *t)
{
    static const char *const keys[] = {"username", "secret", NULL};
    int rc = cp_simfx_keys(w, n, where, keys);
    const yaml_node_t *u = cp_simfx_get(w, n, "username"), *s = cp_simfx_get(w, n, "secret");
    if (rc == CP_OK && (u == NULL || s == NULL))
        return cp_yw_errf(w, n, "%s: needs username and secret", where);
    char key[160];
    cp_simfx_path(key, sizeof(key), "%s.username", where);
    if (rc == CP_OK)
        rc = cp_simfx_text(w, u, key, t->chap_user, sizeof(t->chap_user));
    if (rc != CP_OK)
        return rc;
    cp_simfx_path(key, sizeof(key), "%s.secret", where);
    const char *secret = cp_yw_scalar(w, s, key);
    if (secret == NULL)
        return CP_E_INVALID_ARGUMENT;
    size_t len = strlen(secret);
    if (len < 12 || len > 16) /* Windows refuses others; the message leaves the secret out */
        return cp_yw_errf(w, s, "%s: must be 12 to 16 bytes long, as Windows requires (it has %zu)",
                          key, len);
    memcpy(t->chap_secret, secret, len + 1);
    t->chap = true;
    return CP_OK;
}

static int load_lun(cp_yw *w, const yaml_node_t *n, const char *where, iscsi_lun *l)
{
    static const char *const keys[] = {"size", "serial", NULL};
    int rc = cp_simfx_keys(w, n, where, keys);
    const yaml_node_t *size = cp_simfx_get(w, n, "size");
    if (rc == CP_OK && size == NULL)
        return cp_yw_errf(w, n, "%s: needs size", where);
    char key[160];
    cp_simfx_path(key, sizeof(key), "%s.size", where);
    if (rc == CP_OK)
        rc = cp_simfx_size(w, size, key, &l->size);
    if (rc == CP_OK)
        rc = cp_simfx_opt_text(w, n, where, "serial", l->serial, sizeof(l->serial));
    return rc;
}

static int find_target(const iscsi_model *m, const char *iqn, size_t *pi, size_t *ti)
{
    for (size_t i = 0; i < m->n_portals; i++)
        for (size_t k = 0; k < m->portals[i].n_targets; k++)
            if (strcasecmp(m->portals[i].targets[k].iqn, iqn) == 0) {
                *pi = i;
                *ti = k;
                return 1;
            }
    return 0;
}

static int load_target(cp_yw *w, const yaml_node_t *n, const char *where, const iscsi_model *m,
                       iscsi_target *t)
{
    static const char *const keys[] = {"iqn", "chap", "luns", NULL};
    int rc = cp_simfx_keys(w, n, where, keys);
    const yaml_node_t *iqn = cp_simfx_get(w, n, "iqn"), *luns = NULL;
    if (rc == CP_OK && iqn == NULL)
        return cp_yw_errf(w, n, "%s: needs iqn", where);
    char key[160];
    cp_simfx_path(key, sizeof(key), "%s.iqn", where);
    size_t pi, ti, nl = 0;
    if (rc == CP_OK && (rc = cp_simfx_text(w, iqn, key, t->iqn, sizeof(t->iqn))) == CP_OK &&
        (rc = check_iqn(w, iqn, key, t->iqn)) == CP_OK && find_target(m, t->iqn, &pi, &ti))
        rc = cp_yw_errf(w, iqn, "%s: target %s is listed twice (a target has one portal here)", key,
                        t->iqn);
    const yaml_node_t *chap = cp_simfx_get(w, n, "chap");
    cp_simfx_path(key, sizeof(key), "%s.chap", where);
    if (rc == CP_OK && chap != NULL)
        rc = load_chap(w, chap, key, t);
    if (rc == CP_OK)
        rc = cp_simfx_list(w, n, where, "luns", &luns, &nl);
    if (rc == CP_OK && (nl == 0 || nl > CP_ISCSI_LIST_MAX))
        return cp_yw_errf(w, luns != NULL ? luns : n, "%s.luns: needs 1 to %d LUNs", where,
                          CP_ISCSI_LIST_MAX);
    if (rc == CP_OK && (t->luns = calloc(nl, sizeof(*t->luns))) == NULL)
        return nomem(w);
    for (size_t i = 0; rc == CP_OK && i < nl; i++) {
        cp_simfx_path(key, sizeof(key), "%s.luns[%zu]", where, i);
        rc = load_lun(w, cp_simfx_item(w, luns, i), key, &t->luns[i]);
        t->n_luns = i + 1;
    }
    return rc;
}

static const iscsi_portal_def *find_portal(const iscsi_model *m, const char *address, uint32_t port,
                                           size_t *at)
{
    for (size_t i = 0; i < m->n_portals; i++)
        if (strcasecmp(m->portals[i].portal.address, address) == 0 &&
            m->portals[i].portal.port == port) {
            *at = i;
            return &m->portals[i];
        }
    return NULL;
}

/* address: and port: (default 3260) of a portal or a session. */
static int load_address(cp_yw *w, const yaml_node_t *n, const char *where, cp_iscsi_portal *p)
{
    const yaml_node_t *a = cp_simfx_get(w, n, "address"), *port = cp_simfx_get(w, n, "port");
    if (a == NULL)
        return cp_yw_errf(w, n, "%s: needs address", where);
    char key[160];
    cp_simfx_path(key, sizeof(key), "%s.address", where);
    int rc = cp_simfx_text(w, a, key, p->address, sizeof(p->address));
    if (rc == CP_OK)
        rc = check_address(w, a, key, p->address);
    uint64_t v = 3260;
    cp_simfx_path(key, sizeof(key), "%s.port", where);
    if (rc == CP_OK && port != NULL)
        rc = cp_yw_uint(w, port, key, 1, 65535, &v);
    p->port = (uint32_t)v;
    return rc;
}

static int load_portal(cp_yw *w, const yaml_node_t *n, const char *where, iscsi_model *m,
                       iscsi_portal_def *d)
{
    static const char *const keys[] = {"address",    "port",    "reachable",
                                       "registered", "targets", NULL};
    d->reachable = true;
    const yaml_node_t *targets = NULL;
    size_t nt = 0, at;
    int rc = cp_simfx_keys(w, n, where, keys);
    if (rc == CP_OK)
        rc = load_address(w, n, where, &d->portal);
    if (rc == CP_OK && find_portal(m, d->portal.address, d->portal.port, &at) != NULL)
        return cp_yw_errf(w, n, "%s: portal %s:%u is listed twice", where, d->portal.address,
                          (unsigned)d->portal.port);
    if (rc == CP_OK)
        rc = cp_simfx_opt_bool(w, n, where, "reachable", &d->reachable);
    if (rc == CP_OK)
        rc = cp_simfx_opt_bool(w, n, where, "registered", &d->registered);
    if (rc == CP_OK)
        rc = cp_simfx_list(w, n, where, "targets", &targets, &nt);
    if (rc == CP_OK && nt > CP_ISCSI_LIST_MAX)
        return cp_yw_errf(w, targets, "%s.targets: more than %d targets", where, CP_ISCSI_LIST_MAX);
    if (rc == CP_OK && nt > 0 && (d->targets = calloc(nt, sizeof(*d->targets))) == NULL)
        return nomem(w);
    for (size_t i = 0; rc == CP_OK && i < nt; i++) {
        char key[160];
        cp_simfx_path(key, sizeof(key), "%s.targets[%zu]", where, i);
        rc = load_target(w, cp_simfx_item(w, targets, i), key, m, &d->targets[i]);
        d->n_targets = i + 1;
        for (size_t k = 0; rc == CP_OK && k < i; k++)
            if (strcasecmp(d->targets[k].iqn, d->targets[i].iqn) == 0)
                rc = cp_yw_errf(w, cp_simfx_item(w, targets, i),
                                "%s.iqn: target %s is listed twice", key, d->targets[i].iqn);
    }
    return rc;
}

static int load_session(cp_yw *w, const yaml_node_t *n, const char *where, iscsi_model *m,
                        iscsi_session_def *s)
{
    static const char *const keys[] = {"address", "port", "iqn", NULL};
    cp_iscsi_portal p;
    int rc = cp_simfx_keys(w, n, where, keys);
    if (rc == CP_OK)
        rc = load_address(w, n, where, &p);
    if (rc != CP_OK)
        return rc;
    const yaml_node_t *iqn = cp_simfx_get(w, n, "iqn");
    const iscsi_portal_def *d = find_portal(m, p.address, p.port, &s->portal);
    if (iqn == NULL)
        return cp_yw_errf(w, n, "%s: needs iqn", where);
    char key[160], name[CP_ISCSI_NAME_MAX];
    cp_simfx_path(key, sizeof(key), "%s.iqn", where);
    if ((rc = cp_simfx_text(w, iqn, key, name, sizeof(name))) != CP_OK)
        return rc;
    if (d == NULL)
        return cp_yw_errf(w, n, "%s: portal %s:%u is not in iscsi.portals", where, p.address,
                          (unsigned)p.port);
    for (s->target = 0; s->target < d->n_targets; s->target++)
        if (strcasecmp(d->targets[s->target].iqn, name) == 0)
            break;
    if (s->target == d->n_targets)
        return cp_yw_errf(w, iqn, "%s: portal %s:%u has no target %s", key, p.address,
                          (unsigned)p.port, name);
    for (size_t i = 0; i < m->n_sessions; i++)
        if (m->sessions[i].portal == s->portal && m->sessions[i].target == s->target)
            return cp_yw_errf(w, iqn, "%s: target %s is logged in twice", key, name);
    return CP_OK;
}

static int load_section(cp_yw *w, const yaml_node_t *sec, void *ctx)
{
    static const char *const keys[] = {"portals", "sessions", "initiator_stopped", NULL};
    iscsi_model *m = ctx;
    const yaml_node_t *portals = NULL, *sessions = NULL;
    size_t np = 0, ns = 0;
    int rc = cp_simfx_keys(w, sec, "iscsi", keys);
    if (rc == CP_OK)
        rc = cp_simfx_opt_bool(w, sec, "iscsi", "initiator_stopped", &m->stopped);
    if (rc == CP_OK)
        rc = cp_simfx_list(w, sec, "iscsi", "portals", &portals, &np);
    if (rc == CP_OK)
        rc = cp_simfx_list(w, sec, "iscsi", "sessions", &sessions, &ns);
    if (rc == CP_OK && np > CP_ISCSI_LIST_MAX)
        return cp_yw_errf(w, portals, "iscsi.portals: more than %d portals", CP_ISCSI_LIST_MAX);
    if (rc == CP_OK && ((np > 0 && (m->portals = calloc(np, sizeof(*m->portals))) == NULL) ||
                        (ns > 0 && (m->sessions = calloc(ns, sizeof(*m->sessions))) == NULL)))
        return nomem(w);
    for (size_t i = 0; rc == CP_OK && i < np; i++) {
        char key[64];
        cp_simfx_path(key, sizeof(key), "iscsi.portals[%zu]", i);
        iscsi_portal_def d = {0};
        rc = load_portal(w, cp_simfx_item(w, portals, i), key, m, &d);
        m->portals[m->n_portals++] = d; /* freed with the model, even when bad */
    }
    for (size_t i = 0; rc == CP_OK && i < ns; i++) {
        char key[64];
        cp_simfx_path(key, sizeof(key), "iscsi.sessions[%zu]", i);
        rc = load_session(w, cp_simfx_item(w, sessions, i), key, m, &m->sessions[i]);
        if (rc == CP_OK)
            m->n_sessions = i + 1;
    }
    return rc;
}

int cp_iscsi_model_load(const char *path, const char *text, iscsi_model *m, cp_error *e)
{
    memset(m, 0, sizeof(*m));
    int rc = cp_simfx_load(WHO, path, text, "iscsi", load_section, m, e);
    if (rc != CP_OK)
        cp_iscsi_model_free(m);
    return rc;
}

void cp_iscsi_model_free(iscsi_model *m)
{
    for (size_t i = 0; i < m->n_portals; i++) {
        for (size_t k = 0; k < m->portals[i].n_targets; k++) {
            free(m->portals[i].targets[k].luns);
            /* the fixture's secret does not outlive the model */
            memset(m->portals[i].targets[k].chap_secret, 0,
                   sizeof(m->portals[i].targets[k].chap_secret));
        }
        free(m->portals[i].targets);
    }
    free(m->portals);
    free(m->sessions);
    memset(m, 0, sizeof(*m));
}
