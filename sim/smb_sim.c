/* smb_sim.c - smb.h simulated: global mappings kept in memory, against the
 * SMB servers of the fixture's smb: section (smb_fixture_sim.c). For the
 * native build's tests and csi-proxy-sim.exe; never linked into
 * csi-proxy.exe. Mapping \\server\share, as Windows answers:
 *
 *   no fixture server matches, or it is reachable: false
 *                      UNAVAILABLE, "the network path was not found"
 *   another share of the server is mapped under another user name
 *                      FAILED_PRECONDITION (ERROR_SESSION_CREDENTIAL_CONFLICT),
 *                      naming the share and the mapping in the way
 *   the server does not offer the share
 *                      NOT_FOUND, "the network name cannot be found"
 *   no credentials of the server match the user name and password
 *                      PERMISSION_DENIED, "the user name or password is
 *                      incorrect"
 *
 * A server with drops_after_mapping: true answers the mapping, then no
 * longer: state() says UNREACHABLE. space() answers the server's total and
 * free sizes for any of its shares (defaults 100 GiB and 60 GiB), and
 * UNAVAILABLE for a server that does not answer. The fixture's mappings exist at
 * start. Passwords are compared, never kept from a call or echoed. This
 * machine is the fixture's computer_name / dns_name, at the fixed addresses
 * 192.0.2.10, 2001:db8::10 and fe80::10. */
#include "sim/smb_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/thread.h"
#include "sim/simfixture_sim.h"
#include "sim/smb_sim_internal.h"
#include "host/storage.h"

#define SIM_MAX_MAPPINGS 64

typedef struct sim {
    cp_mutex *mu;
    smb_model m;
    smb_mapping_def map[SIM_MAX_MAPPINGS];
    size_t n;
} sim;

static smb_mapping_def *find(sim *s, const char *root)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcasecmp(s->map[i].root, root) == 0)
            return &s->map[i];
    return NULL;
}

static int sim_state(void *ctx, const char *root, cp_smb_state *out, cp_error *e)
{
    (void)e;
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    const smb_server *srv = cp_smb_model_server(&s->m, root);
    *out = find(s, root) == NULL                          ? CP_SMB_UNMAPPED
           : srv == NULL || !srv->reachable || srv->drops ? CP_SMB_UNREACHABLE
                                                          : CP_SMB_MAPPED;
    cp_mutex_unlock(s->mu);
    return CP_OK;
}

static bool offers(const smb_server *srv, const char *share)
{
    for (size_t i = 0; i < srv->n_shares; i++)
        if (cp_simfx_match(srv->shares[i], share))
            return true;
    return srv->n_shares == 0;
}

static bool accepts(const smb_server *srv, const char *user, const char *password)
{
    for (size_t i = 0; i < srv->n_creds; i++)
        if (cp_simfx_match(srv->creds[i].user, user) &&
            strcmp(srv->creds[i].password, password) == 0)
            return true;
    return srv->n_creds == 0;
}

static int sim_map(void *ctx, const char *root, const char *username, const char *password,
                   bool require_privacy, cp_error *e)
{
    (void)require_privacy;
    sim *s = ctx;
    char server[CP_SMB_NAME_MAX], share[CP_SMB_NAME_MAX], other[CP_SMB_NAME_MAX];
    cp_smb_root_part(root, 0, server, sizeof(server));
    cp_smb_root_part(root, 1, share, sizeof(share));
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    const smb_server *srv = cp_smb_model_server(&s->m, root);
    if (srv == NULL || !srv->reachable)
        rc = cp_error_set(e, CP_E_UNAVAILABLE, "mapping %s: the network path was not found", root);
    for (size_t i = 0; i < s->n && rc == CP_OK; i++) {
        cp_smb_root_part(s->map[i].root, 0, other, sizeof(other));
        if (strcasecmp(other, server) == 0 && strcasecmp(s->map[i].user, username) != 0)
            rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "mapping %s: %s is already mapped with other credentials "
                              "(multiple connections to a server by the same user are not "
                              "allowed); remove its mappings first",
                              root, s->map[i].root);
    }
    if (rc == CP_OK && !offers(srv, share))
        rc = cp_error_set(e, CP_E_NOT_FOUND, "mapping %s: the network name cannot be found", root);
    if (rc == CP_OK && !accepts(srv, username, password != NULL ? password : ""))
        rc = cp_error_set(e, CP_E_PERMISSION_DENIED,
                          "mapping %s: the user name or password is incorrect", root);
    if (rc == CP_OK && find(s, root) != NULL)
        rc = cp_error_set(e, CP_E_ALREADY_EXISTS, "mapping %s: already mapped", root);
    if (rc == CP_OK && s->n == SIM_MAX_MAPPINGS)
        rc = cp_error_set(e, CP_E_RESOURCE_EXHAUSTED, "mapping %s: too many mappings", root);
    if (rc == CP_OK) {
        snprintf(s->map[s->n].root, sizeof(s->map[s->n].root), "%s", root);
        snprintf(s->map[s->n].user, sizeof(s->map[s->n].user), "%s", username);
        s->n++;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_unmap(void *ctx, const char *root, cp_error *e)
{
    sim *s = ctx;
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    smb_mapping_def *m = find(s, root);
    if (m == NULL)
        rc = cp_error_set(e, CP_E_NOT_FOUND, "no SMB global mapping of %s", root);
    else
        *m = s->map[--s->n];
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_computer_name(void *ctx, char *netbios, char *dns, size_t len, cp_error *e)
{
    (void)e;
    sim *s = ctx;
    snprintf(netbios, len, "%s", s->m.netbios);
    snprintf(dns, len, "%s", s->m.dns);
    return CP_OK;
}

/* This simulated machine's addresses: a fixed list, documentation
 * prefixes only (RFC 5737, RFC 3849) and a link-local one. */
static int sim_local_addresses(void *ctx, cp_smb_addr *out, size_t max, size_t *n, cp_error *e)
{
    (void)ctx;
    (void)e;
    static const cp_smb_addr fixed[] = {
        {4, {192, 0, 2, 10}},
        {6, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10}},
        {6, {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10}},
    };
    size_t k = sizeof(fixed) / sizeof(fixed[0]);
    for (size_t i = 0; i < k && i < max; i++)
        out[i] = fixed[i];
    *n = k;
    return CP_OK;
}

static int sim_space(void *ctx, const char *root, uint64_t *total, uint64_t *free_bytes,
                     cp_error *e)
{
    sim *s = ctx;
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    const smb_server *srv = cp_smb_model_server(&s->m, root);
    if (srv == NULL || !srv->reachable || srv->drops) {
        rc = cp_error_set(e, CP_E_UNAVAILABLE, "free space of %s: the network path was not found",
                          root);
    } else {
        *total = srv->total;
        *free_bytes = srv->free_bytes;
    }
    cp_mutex_unlock(s->mu);
    return rc;
}

static void sim_destroy(void *ctx)
{
    sim *s = ctx;
    if (s == NULL)
        return;
    cp_smb_model_free(&s->m);
    cp_mutex_free(s->mu);
    free(s);
}

static const cp_smb_ops sim_ops = {
    .state = sim_state,
    .map = sim_map,
    .unmap = sim_unmap,
    .computer_name = sim_computer_name,
    .local_addresses = sim_local_addresses,
    .space = sim_space,
    .destroy = sim_destroy,
};

static int sim_open(const char *path, const char *text, cp_smb_host *out, cp_error *e)
{
    sim *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->mu = cp_mutex_new()) == NULL) {
        free(s);
        return cp_error_set(e, CP_E_NOMEM, "smb simulator: out of memory");
    }
    int rc = cp_smb_model_load(path, text, &s->m, e);
    if (rc == CP_OK && s->m.n_mappings > SIM_MAX_MAPPINGS)
        rc = cp_error_set(e, CP_E_INVALID_ARGUMENT,
                          "smb simulator: more than %d mappings in the fixture", SIM_MAX_MAPPINGS);
    if (rc != CP_OK) {
        sim_destroy(s);
        return rc;
    }
    for (size_t i = 0; i < s->m.n_mappings; i++)
        s->map[s->n++] = s->m.mappings[i];
    out->ops = &sim_ops;
    out->ctx = s;
    return CP_OK;
}

int cp_smb_sim_new(const char *path, cp_smb_host *out, cp_error *e)
{
    return sim_open(path, NULL, out, e);
}

int cp_smb_sim_new_from_string(const char *yaml, cp_smb_host *out, cp_error *e)
{
    return sim_open(NULL, yaml, out, e);
}

/* In the simulator builds this is the default host, seeded from the
 * fixture the storage simulator reads (CSI_PROXY_SIM_FIXTURE, storage.h). */
int cp_smb_host_open_default(cp_smb_host *out, cp_error *e)
{
    return cp_smb_sim_new(cp_simfx_default_path(), out, e);
}
