/* smb_sim.c - smb.h simulated: global mappings kept in memory. For the
 * native build's tests and csi-proxy-sim.exe; never linked into
 * csi-proxy.exe. Its servers, by name (the first label of the server):
 *
 *   unreachable*  does not answer: map fails with UNAVAILABLE
 *   stale*        maps, then no longer answers: state says UNREACHABLE
 *   anything else answers; the password "wrong" is a logon failure
 *
 * As Windows, one server takes one set of credentials: mapping a share of
 * a server already mapped under another user name is FAILED_PRECONDITION
 * (ERROR_SESSION_CREDENTIAL_CONFLICT). The simulated machine is named
 * SIMNODE (DNS simnode.sim.local). Passwords are compared, never kept. */
#include "smb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../server/thread.h"

#define SIM_MAX_MAPPINGS 64

typedef struct sim_mapping {
    char root[CP_SMB_NAME_MAX];
    char user[CP_SMB_NAME_MAX];
} sim_mapping;

typedef struct sim {
    cp_mutex *mu;
    sim_mapping m[SIM_MAX_MAPPINGS];
    size_t n;
} sim;

/* "\\server\share" -> "server" in out. */
static void server_of(const char *root, char *out, size_t len)
{
    const char *s = root + 2, *end = strchr(s, '\\');
    size_t n = end != NULL ? (size_t)(end - s) : strlen(s);
    if (n >= len)
        n = len - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

static bool has_prefix(const char *root, const char *prefix)
{
    return strncasecmp(root + 2, prefix, strlen(prefix)) == 0;
}

static sim_mapping *find(sim *s, const char *root)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcasecmp(s->m[i].root, root) == 0)
            return &s->m[i];
    return NULL;
}

static int sim_state(void *ctx, const char *root, cp_smb_state *out, cp_error *e)
{
    (void)e;
    sim *s = ctx;
    cp_mutex_lock(s->mu);
    *out = find(s, root) == NULL       ? CP_SMB_UNMAPPED
           : has_prefix(root, "stale") ? CP_SMB_UNREACHABLE
                                       : CP_SMB_MAPPED;
    cp_mutex_unlock(s->mu);
    return CP_OK;
}

static int sim_map(void *ctx, const char *root, const char *username, const char *password,
                   bool require_privacy, cp_error *e)
{
    (void)require_privacy;
    sim *s = ctx;
    char server[CP_SMB_NAME_MAX], other[CP_SMB_NAME_MAX];
    server_of(root, server, sizeof(server));
    if (has_prefix(root, "unreachable"))
        return cp_error_set(e, CP_E_UNAVAILABLE, "mapping %s: the network path was not found",
                            root);
    if (password != NULL && strcmp(password, "wrong") == 0)
        return cp_error_set(e, CP_E_PERMISSION_DENIED,
                            "mapping %s: the user name or password is incorrect", root);
    int rc = CP_OK;
    cp_mutex_lock(s->mu);
    for (size_t i = 0; i < s->n && rc == CP_OK; i++) {
        server_of(s->m[i].root, other, sizeof(other));
        if (strcasecmp(other, server) == 0 && strcmp(s->m[i].user, username) != 0)
            rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "mapping %s: %s is already mapped with other credentials "
                              "(multiple connections to a server by the same user are not "
                              "allowed); remove its mappings first",
                              root, s->m[i].root);
    }
    if (rc == CP_OK && find(s, root) != NULL)
        rc = cp_error_set(e, CP_E_ALREADY_EXISTS, "mapping %s: already mapped", root);
    if (rc == CP_OK && s->n == SIM_MAX_MAPPINGS)
        rc = cp_error_set(e, CP_E_RESOURCE_EXHAUSTED, "mapping %s: too many mappings", root);
    if (rc == CP_OK) {
        snprintf(s->m[s->n].root, sizeof(s->m[s->n].root), "%s", root);
        snprintf(s->m[s->n].user, sizeof(s->m[s->n].user), "%s", username);
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
    sim_mapping *m = find(s, root);
    if (m == NULL)
        rc = cp_error_set(e, CP_E_NOT_FOUND, "no SMB global mapping of %s", root);
    else
        *m = s->m[--s->n];
    cp_mutex_unlock(s->mu);
    return rc;
}

static int sim_computer_name(void *ctx, char *netbios, char *dns, size_t len, cp_error *e)
{
    (void)ctx;
    (void)e;
    snprintf(netbios, len, "SIMNODE");
    snprintf(dns, len, "simnode.sim.local");
    return CP_OK;
}

static void sim_destroy(void *ctx)
{
    sim *s = ctx;
    cp_mutex_free(s->mu);
    free(s);
}

static const cp_smb_ops sim_ops = {
    .state = sim_state,
    .map = sim_map,
    .unmap = sim_unmap,
    .computer_name = sim_computer_name,
    .destroy = sim_destroy,
};

int cp_smb_host_open_default(cp_smb_host *out, cp_error *e)
{
    sim *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->mu = cp_mutex_new()) == NULL) {
        free(s);
        return cp_error_set(e, CP_E_NOMEM, "smb simulator: out of memory");
    }
    out->ops = &sim_ops;
    out->ctx = s;
    return CP_OK;
}
