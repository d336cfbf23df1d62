/* iscsi_sim.c - iscsi.h simulated: an initiator kept in memory, seeded from
 * the fixture's iscsi: section (iscsi_fixture_sim.c). For the native
 * build's tests and csi-proxy-sim.exe; never linked into csi-proxy.exe.
 *
 *   A portal the fixture does not list, or lists with reachable: false,
 *   does not answer: AddTargetPortal fails UNAVAILABLE. Discovery through
 *   a registered portal gives the IQNs of its targets. A login to a target
 *   with chap: needs one-way or mutual CHAP with its user name and secret
 *   (PERMISSION_DENIED otherwise); as Windows, a CHAP secret must be 12 to
 *   16 bytes, and mutual CHAP needs the initiator's secret set first.
 *   Secrets are compared, never copied into a message.
 *
 *   A login makes the target's LUNs arrive as disks of the storage
 *   simulator attached to it (cp_storage_sim_add_disk): online, RAW, with
 *   the lowest free disk numbers, the iSCSI bus type, an LIO-style vendor
 *   and product, a serial and a page 83 NAA identifier unique to the LUN,
 *   and the location "Integrated : Adapter 3 : Port 0 : Target T : LUN L"
 *   (T per login). A logout removes them (cp_storage_sim_remove_disks), as
 *   a device removal: a folder where a volume of theirs was mounted is left
 *   a dangling mount point, as Windows leaves it; the logout is refused
 *   (FAILED_PRECONDITION) while an operation on one of the disks runs, as
 *   Windows refuses while a handle is open on the device. Without a storage
 *   simulator (unit tests of this file alone) the disk numbers are the
 *   lowest not used by another login.
 *
 * Locking: the initiator's mutex is taken before the storage simulator's
 * (which calls nobody), never the other way round. */
#include "sim/iscsi_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/thread.h"
#include "sim/iscsi_sim_internal.h"
#include "sim/simfixture_sim.h"
#include "sim/storage_sim.h"

#define SIM_MAX_SESSIONS 32
#define SIM_ADAPTER 3    /* the initiator's SCSI port number */
#define SIM_BUS_ISCSI 9u /* STORAGE_BUS_TYPE BusTypeiScsi */

typedef struct sim_session {
    const iscsi_portal_def *portal;
    iscsi_target *t;
    uint32_t target_id; /* the SCSI target number of this login */
    uint32_t disks[CP_ISCSI_LIST_MAX];
    size_t n_disks;
} sim_session;

typedef struct sim {
    cp_mutex *mu;
    iscsi_model m;
    cp_iscsi_portal portals[CP_ISCSI_LIST_MAX]; /* registered */
    size_t n_portals;
    sim_session sessions[SIM_MAX_SESSIONS];
    size_t n_sessions;
    uint32_t next_target_id;
    bool mutual_set;
    cp_storage_host storage; /* ops NULL: not attached */
} sim;

static long find_portal(const sim *s, const cp_iscsi_portal *p)
{
    for (size_t i = 0; i < s->n_portals; i++)
        if (strcasecmp(s->portals[i].address, p->address) == 0 && s->portals[i].port == p->port)
            return (long)i;
    return -1;
}

static iscsi_portal_def *portal_def(sim *s, const cp_iscsi_portal *p)
{
    for (size_t i = 0; i < s->m.n_portals; i++)
        if (strcasecmp(s->m.portals[i].portal.address, p->address) == 0 &&
            s->m.portals[i].portal.port == p->port)
            return &s->m.portals[i];
    return NULL;
}

static iscsi_target *target_def(iscsi_portal_def *d, const char *iqn)
{
    for (size_t i = 0; d != NULL && i < d->n_targets; i++)
        if (strcasecmp(d->targets[i].iqn, iqn) == 0)
            return &d->targets[i];
    return NULL;
}

static long find_session(const sim *s, const char *iqn)
{
    for (size_t i = 0; i < s->n_sessions; i++)
        if (strcasecmp(s->sessions[i].t->iqn, iqn) == 0)
            return (long)i;
    return -1;
}

static int not_registered(const cp_iscsi_portal *p, cp_error *e)
{
    return cp_error_set(e, CP_E_NOT_FOUND, "target portal %s:%u is not registered", p->address,
                        (unsigned)p->port);
}

/* --- the disks of a login ---------------------------------------------------- */

static uint64_t fnv1a(const char *s, uint64_t h)
{
    for (; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* LUN `lun` of t as the storage simulator's disk: identity derived from the
 * IQN and LUN number unless the fixture gives a serial. */
static void lun_disk(const iscsi_target *t, size_t lun, uint32_t target_id, char *serial,
                     size_t serial_len, cp_storage_sim_disk *d)
{
    char key[CP_ISCSI_NAME_MAX + 32];
    snprintf(key, sizeof(key), "%s/%zu", t->iqn, lun);
    uint64_t h1 = fnv1a(key, 0xcbf29ce484222325ull), h2 = fnv1a(key, h1 ^ 0x9e3779b97f4a7c15ull);
    if (t->luns[lun].serial[0] != '\0')
        snprintf(serial, serial_len, "%s", t->luns[lun].serial);
    else
        snprintf(serial, serial_len, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(h1 >> 32),
                 (unsigned)(h1 >> 16) & 0xffff, (unsigned)h1 & 0xffff,
                 (unsigned)(h2 >> 48) & 0xffff, (unsigned long long)(h2 & 0xffffffffffffull));
    memset(d, 0, sizeof(*d));
    d->size = t->luns[lun].size;
    d->vendor = "LIO-ORG ";
    d->product = "sim-lun         ";
    d->serial = serial;
    d->bus_type = SIM_BUS_ISCSI;
    /* NAA 6 (IEEE registered extended), LIO's OUI 00-14-05, then the hash. */
    d->naa[0] = 0x60;
    d->naa[1] = 0x01;
    d->naa[2] = 0x40;
    d->naa[3] = (uint8_t)(0x50 | ((h1 >> 60) & 0x0f));
    for (int i = 0; i < 6; i++)
        d->naa[4 + i] = (uint8_t)(h1 >> (8 * i));
    for (int i = 0; i < 6; i++)
        d->naa[10 + i] = (uint8_t)(h2 >> (8 * i));
    d->naa_len = 16;
    d->port = SIM_ADAPTER;
    d->target = target_id;
    d->lun = (uint32_t)lun;
}

static bool number_taken(const sim *s, const sim_session *except, uint32_t n)
{
    for (size_t i = 0; i < s->n_sessions; i++)
        for (size_t k = 0; &s->sessions[i] != except && k < s->sessions[i].n_disks; k++)
            if (s->sessions[i].disks[k] == n)
                return true;
    return false;
}

static bool in_list(const uint32_t *l, size_t n, uint32_t v)
{
    for (size_t i = 0; i < n; i++)
        if (l[i] == v)
            return true;
    return false;
}

/* Removes ss's disks from the storage simulator, each LUN keeping what its
 * disk held for the next login (s->mu held). */
static int depart(sim *s, sim_session *ss, cp_error *e)
{
    struct cp_storage_sim_media *media[CP_ISCSI_LIST_MAX];
    int rc = s->storage.ops == NULL
                 ? CP_OK
                 : cp_storage_sim_remove_disks(&s->storage, ss->disks, ss->n_disks, media, e);
    for (size_t k = 0; rc == CP_OK && s->storage.ops != NULL && k < ss->n_disks; k++) {
        iscsi_lun *l = &ss->t->luns[k];
        cp_storage_sim_media_free(l->media);
        l->media = media[k];
    }
    if (rc == CP_OK)
        ss->n_disks = 0;
    return rc;
}

/* Gives ss's LUNs their disks (s->mu held): in the storage simulator when
 * one is attached, all or none. */
static int arrive(sim *s, sim_session *ss, cp_error *e)
{
    ss->n_disks = 0;
    for (size_t lun = 0; lun < ss->t->n_luns; lun++) {
        if (s->storage.ops == NULL) {
            uint32_t n = 0;
            while (number_taken(s, ss, n) || in_list(ss->disks, ss->n_disks, n))
                n++;
            ss->disks[ss->n_disks++] = n;
            continue;
        }
        char serial[CP_ISCSI_SIM_SERIAL_MAX];
        cp_storage_sim_disk d;
        lun_disk(ss->t, lun, ss->target_id, serial, sizeof(serial), &d);
        iscsi_lun *l = &ss->t->luns[lun];
        int rc = cp_storage_sim_add_disk(&s->storage, &d, l->media, &ss->disks[ss->n_disks], e);
        if (rc != CP_OK) { /* the LUNs that arrived leave again, keeping their data */
            cp_error ignored;
            (void)depart(s, ss, &ignored);
            return rc;
        }
        l->media = NULL; /* the disk has it now */
        ss->n_disks++;
    }
    return CP_OK;
}

/* --- ops ------------------------------------------------------------------ */

/* The initiator service stopped (fixture initiator_stopped): every call
 * fails as the Win32 host's do when MSiSCSI does not run. */
static int stopped(const sim *s, cp_error *e)
{
    if (!s->m.stopped)
        return CP_OK;
    return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                        "iscsi simulator: the iSCSI initiator service (MSiSCSI) is not running; "
                        "start it and set it to start automatically");
}

/* Takes s->mu when the initiator service runs: CP_OK with it held, else
 * e set (and returned), unlocked. */
static int lock_running(sim *s, cp_error *e)
{
    if (stopped(s, e) != CP_OK)
        return e->status;
    cp_mutex_lock(s->mu);
    return CP_OK;
}

static int sim_add(void *ctx, const cp_iscsi_portal *p, cp_error *e)
{
    sim *s = ctx;
    if (lock_running(s, e) != CP_OK)
        return e->status;
    int rc = CP_OK;
    const iscsi_portal_def *d = portal_def(s, p);
    if (d == NULL || !d->reachable)
        rc = cp_error_set(e, CP_E_UNAVAILABLE, "target portal %s:%u does not answer", p->address,
                          (unsigned)p->port);
    else if (find_portal(s, p) >= 0)
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

static int sim_remove(void *ctx, const cp_iscsi_portal *p, cp_error *e)
{
    sim *s = ctx;
    if (lock_running(s, e) != CP_OK)
        return e->status;
    int rc = CP_OK;
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
    sim *s = ctx;
    if (lock_running(s, e) != CP_OK)
        return e->status;
    *n = s->n_portals < max ? s->n_portals : max;
    memcpy(out, s->portals, *n * sizeof(*out));
    cp_mutex_unlock(s->mu);
    return CP_OK;
}

static int sim_discover(void *ctx, const cp_iscsi_portal *p, char (*iqns)[CP_ISCSI_NAME_MAX],
                        size_t max, size_t *n, cp_error *e)
{
    sim *s = ctx;
    if (lock_running(s, e) != CP_OK)
        return e->status;
    int rc = CP_OK;
    const iscsi_portal_def *d = portal_def(s, p);
    if (find_portal(s, p) < 0 || d == NULL) {
        rc = not_registered(p, e);
    } else {
        *n = d->n_targets < max ? d->n_targets : max;
        for (size_t i = 0; i < *n; i++)
            snprintf(iqns[i], CP_ISCSI_NAME_MAX, "%s", d->targets[i].iqn);
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

/* Whether a login with these credentials passes t's authentication. */
static bool authenticated(const iscsi_target *t, cp_iscsi_auth auth, const char *user,
                          const char *secret)
{
    return !t->chap || (auth != CP_ISCSI_AUTH_NONE && strcmp(user, t->chap_user) == 0 &&
                        strcmp(secret, t->chap_secret) == 0);
}

static int sim_connect(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_iscsi_auth auth,
                       const char *user, const char *secret, cp_error *e)
{
    sim *s = ctx;
    if (stopped(s, e) != CP_OK)
        return e->status;
    int rc = CP_OK;
    size_t secret_len = strlen(secret);
    cp_mutex_lock(s->mu);
    iscsi_portal_def *d = portal_def(s, p);
    iscsi_target *t = target_def(d, iqn);
    if (find_portal(s, p) < 0)
        rc = not_registered(p, e);
    else if (t == NULL)
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
    else if (!authenticated(t, auth, user, secret))
        rc = cp_error_set(e, CP_E_PERMISSION_DENIED, "logging in to %s: authentication failure",
                          iqn);
    else if (s->n_sessions == SIM_MAX_SESSIONS)
        rc = cp_error_set(e, CP_E_RESOURCE_EXHAUSTED, "logging in to %s: too many sessions", iqn);
    if (rc == CP_OK) {
        sim_session *ss = &s->sessions[s->n_sessions];
        *ss = (sim_session){.portal = d, .t = t, .target_id = s->next_target_id};
        rc = arrive(s, ss, e);
        if (rc == CP_OK) {
            s->n_sessions++;
            s->next_target_id++;
        }
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

/* The session with target iqn, of a running initiator, with s->mu held
 * (the caller unlocks it); else NULL, e set, unlocked. */
static sim_session *lock_session(sim *s, const char *iqn, cp_error *e)
{
    if (lock_running(s, e) != CP_OK)
        return NULL;
    long i = find_session(s, iqn);
    if (i < 0) {
        cp_mutex_unlock(s->mu);
        cp_error_set(e, CP_E_NOT_FOUND, "target %s is not connected", iqn);
        return NULL;
    }
    return &s->sessions[i];
}

static int sim_disconnect(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_error *e)
{
    (void)p;
    sim *s = ctx;
    sim_session *ss = lock_session(s, iqn, e);
    if (ss == NULL)
        return e->status;
    cp_error se;
    int rc = depart(s, ss, &se);
    if (rc != CP_OK)
        cp_error_set(e, rc, "logging out of %s: %s", iqn, se.msg);
    else
        *ss = s->sessions[--s->n_sessions];
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_disks(void *ctx, const cp_iscsi_portal *p, const char *iqn, uint32_t *out,
                     size_t max, size_t *n, cp_error *e)
{
    (void)p;
    sim *s = ctx;
    const sim_session *ss = lock_session(s, iqn, e);
    if (ss != NULL) {
        *n = ss->n_disks < max ? ss->n_disks : max;
        memcpy(out, ss->disks, *n * sizeof(*out));
        cp_mutex_unlock(s->mu);
    }
    return ss != NULL ? CP_OK : e->status;
}

static int sim_set_mutual(void *ctx, const char *secret, cp_error *e)
{
    sim *s = ctx;
    if (stopped(s, e) != CP_OK)
        return e->status;
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

/* The fixture's logins get their disks in the storage simulator now. */
static int sim_attach_storage(void *ctx, const cp_storage_host *storage, cp_error *e)
{
    sim *s = ctx;
    int rc = CP_OK;
    if (!cp_storage_sim_takes_disks(storage))
        return CP_OK; /* a storage host of a unit test: disks stay numbered here */
    cp_mutex_lock(s->mu);
    s->storage = *storage;
    for (size_t i = 0; rc == CP_OK && i < s->n_sessions; i++)
        rc = arrive(s, &s->sessions[i], e);
    cp_mutex_unlock(s->mu);
    return rc;
}

static void sim_destroy(void *ctx)
{
    sim *s = ctx;
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->m.n_portals; i++)
        for (size_t k = 0; k < s->m.portals[i].n_targets; k++)
            for (size_t l = 0; l < s->m.portals[i].targets[k].n_luns; l++)
                cp_storage_sim_media_free(s->m.portals[i].targets[k].luns[l].media);
    cp_iscsi_model_free(&s->m);
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
    .attach_storage = sim_attach_storage,
    .destroy = sim_destroy,
};

/* The fixture's registered portals and logins (disks numbered locally
 * until a storage simulator is attached). */
static int seed(sim *s, cp_error *e)
{
    for (size_t i = 0; i < s->m.n_portals; i++)
        if (s->m.portals[i].registered)
            s->portals[s->n_portals++] = s->m.portals[i].portal;
    if (s->m.n_sessions > SIM_MAX_SESSIONS)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "iscsi simulator: more than %d sessions in the fixture",
                            SIM_MAX_SESSIONS);
    for (size_t i = 0; i < s->m.n_sessions; i++) {
        iscsi_portal_def *d = &s->m.portals[s->m.sessions[i].portal];
        sim_session *ss = &s->sessions[s->n_sessions];
        *ss = (sim_session){.portal = d,
                            .t = &d->targets[s->m.sessions[i].target],
                            .target_id = s->next_target_id++};
        int rc = arrive(s, ss, e);
        if (rc != CP_OK)
            return rc;
        s->n_sessions++;
    }
    return CP_OK;
}

static int sim_open(const char *path, const char *text, cp_iscsi_host *out, cp_error *e)
{
    sim *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->mu = cp_mutex_new()) == NULL) {
        free(s);
        return cp_error_set(e, CP_E_NOMEM, "iscsi simulator: out of memory");
    }
    int rc = CP_OK;
    if (path != NULL || text != NULL)
        rc = cp_iscsi_model_load(path, text, &s->m, e);
    if (rc == CP_OK)
        rc = seed(s, e);
    if (rc != CP_OK) {
        sim_destroy(s);
        return rc;
    }
    out->ops = &sim_ops;
    out->ctx = s;
    return CP_OK;
}

int cp_iscsi_sim_new(const char *path, cp_iscsi_host *out, cp_error *e)
{
    return sim_open(path, NULL, out, e);
}

int cp_iscsi_sim_new_from_string(const char *yaml, cp_iscsi_host *out, cp_error *e)
{
    return sim_open(NULL, yaml, out, e);
}

/* In the simulator builds this is the default host, seeded from the
 * fixture the storage simulator reads (CSI_PROXY_SIM_FIXTURE, storage.h). */
int cp_iscsi_host_open_default(cp_iscsi_host *out, cp_error *e)
{
    return cp_iscsi_sim_new(cp_simfx_default_path(), out, e);
}
