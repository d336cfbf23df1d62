/* smb_fixture_sim.c - the smb: section of the simulators' fixture
 * (test/fixtures/storage.yaml documents it): this machine's names, SMB
 * servers with their shares and the credentials each accepts, and the
 * global mappings that exist at start. Every key checked, a problem named
 * by file, line, key path and cause; a password never appears in a
 * message. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/simfixture_sim.h"
#include "sim/smb_sim_internal.h"

#define WHO "smb simulator"
/* A share's size and free bytes when the fixture names none. */
#define DEFAULT_TOTAL (100ull << 30)
#define DEFAULT_FREE (60ull << 30)

static int nomem(cp_yw *w)
{
    return cp_error_set(w->e, CP_E_NOMEM, WHO ": out of memory");
}

void cp_smb_root_part(const char *root, int part, char *out, size_t len)
{
    const char *s = root + 2, *sep = strchr(s, '\\');
    if (part == 1)
        s = sep != NULL ? sep + 1 : "";
    const char *end = part == 0 && sep != NULL ? sep : s + strlen(s);
    size_t n = (size_t)(end - s) < len ? (size_t)(end - s) : len - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

const smb_server *cp_smb_model_server(const smb_model *m, const char *root)
{
    char server[CP_SMB_NAME_MAX];
    cp_smb_root_part(root, 0, server, sizeof(server));
    for (size_t i = 0; i < m->n_servers; i++)
        if (cp_simfx_match(m->servers[i].name, server))
            return &m->servers[i];
    return NULL;
}

static int load_cred(cp_yw *w, const yaml_node_t *n, const char *where, smb_cred *c)
{
    static const char *const keys[] = {"username", "password", NULL};
    int rc = cp_simfx_keys(w, n, where, keys);
    if (rc == CP_OK &&
        (cp_simfx_get(w, n, "username") == NULL || cp_simfx_get(w, n, "password") == NULL))
        return cp_yw_errf(w, n, "%s: needs username and password", where);
    if (rc == CP_OK)
        rc = cp_simfx_opt_text(w, n, where, "username", c->user, sizeof(c->user));
    if (rc == CP_OK) { /* checked here so that no message can quote it */
        const yaml_node_t *p = cp_simfx_get(w, n, "password");
        char key[160];
        cp_simfx_path(key, sizeof(key), "%s.password", where);
        const char *pw = cp_yw_scalar(w, p, key);
        if (pw == NULL)
            return CP_E_INVALID_ARGUMENT;
        if (pw[0] == '\0' || strlen(pw) >= sizeof(c->password))
            return cp_yw_errf(w, p, "%s: must be 1 to %zu bytes long", key,
                              sizeof(c->password) - 1);
        memcpy(c->password, pw, strlen(pw) + 1);
    }
    return rc;
}

/* total and free: the size and free bytes of each of the server's shares
 * (GetDiskFreeSpaceExW on the share root). */
static int load_space(cp_yw *w, const yaml_node_t *n, const char *where, smb_server *s)
{
    const yaml_node_t *t = cp_simfx_get(w, n, "total"), *f = cp_simfx_get(w, n, "free");
    char key[160];
    int rc = CP_OK;
    if (t != NULL) {
        cp_simfx_path(key, sizeof(key), "%s.total", where);
        rc = cp_simfx_size(w, t, key, &s->total);
        if (rc == CP_OK && f == NULL)
            s->free_bytes = s->total / 2;
    }
    if (rc == CP_OK && f != NULL) {
        cp_simfx_path(key, sizeof(key), "%s.free", where);
        rc = cp_simfx_size(w, f, key, &s->free_bytes);
        if (rc == CP_OK && s->free_bytes > s->total)
            return cp_yw_errf(w, f, "%s: more than the share's total (%llu bytes)", key,
                              (unsigned long long)s->total);
    }
    return rc;
}

static int load_server(cp_yw *w, const yaml_node_t *n, const char *where, smb_server *s)
{
    static const char *const keys[] = {
        "name", "reachable", "drops_after_mapping", "shares", "credentials", "total", "free", NULL};
    s->reachable = true;
    s->total = DEFAULT_TOTAL;
    s->free_bytes = DEFAULT_FREE;
    const yaml_node_t *shares = NULL, *creds = NULL;
    size_t ns = 0, nc = 0;
    int rc = cp_simfx_keys(w, n, where, keys);
    if (rc == CP_OK && cp_simfx_get(w, n, "name") == NULL)
        return cp_yw_errf(w, n, "%s: needs name", where);
    if (rc == CP_OK)
        rc = cp_simfx_opt_text(w, n, where, "name", s->name, sizeof(s->name));
    for (const char *p = s->name; rc == CP_OK && *p != '\0'; p++)
        if (!isalnum((unsigned char)*p) && strchr(".-_*:", *p) == NULL)
            rc = cp_yw_errf(w, cp_simfx_get(w, n, "name"),
                            "%s.name: \"%s\" is not a server name or pattern", where, s->name);
    if (rc == CP_OK)
        rc = cp_simfx_opt_bool(w, n, where, "reachable", &s->reachable);
    if (rc == CP_OK)
        rc = cp_simfx_opt_bool(w, n, where, "drops_after_mapping", &s->drops);
    if (rc == CP_OK)
        rc = load_space(w, n, where, s);
    if (rc == CP_OK)
        rc = cp_simfx_list(w, n, where, "shares", &shares, &ns);
    if (rc == CP_OK)
        rc = cp_simfx_list(w, n, where, "credentials", &creds, &nc);
    if (rc == CP_OK && ((ns > 0 && (s->shares = calloc(ns, sizeof(*s->shares))) == NULL) ||
                        (nc > 0 && (s->creds = calloc(nc, sizeof(*s->creds))) == NULL)))
        return nomem(w);
    for (size_t i = 0; rc == CP_OK && i < ns; i++) {
        char key[160];
        cp_simfx_path(key, sizeof(key), "%s.shares[%zu]", where, i);
        rc = cp_simfx_text(w, cp_simfx_item(w, shares, i), key, s->shares[i], sizeof(s->shares[i]));
        s->n_shares = i + 1;
    }
    for (size_t i = 0; rc == CP_OK && i < nc; i++) {
        char key[160];
        cp_simfx_path(key, sizeof(key), "%s.credentials[%zu]", where, i);
        rc = load_cred(w, cp_simfx_item(w, creds, i), key, &s->creds[i]);
        s->n_creds = i + 1;
    }
    return rc;
}

static int load_mapping(cp_yw *w, const yaml_node_t *n, const char *where, const smb_model *m,
                        smb_mapping_def *d)
{
    static const char *const keys[] = {"remote", "username", NULL};
    int rc = cp_simfx_keys(w, n, where, keys);
    if (rc == CP_OK &&
        (cp_simfx_get(w, n, "remote") == NULL || cp_simfx_get(w, n, "username") == NULL))
        return cp_yw_errf(w, n, "%s: needs remote and username", where);
    if (rc == CP_OK)
        rc = cp_simfx_opt_text(w, n, where, "remote", d->root, sizeof(d->root));
    if (rc == CP_OK)
        rc = cp_simfx_opt_text(w, n, where, "username", d->user, sizeof(d->user));
    if (rc != CP_OK)
        return rc;
    const yaml_node_t *r = cp_simfx_get(w, n, "remote");
    for (char *p = d->root; *p != '\0'; p++)
        *p = *p == '/' ? '\\' : (char)tolower((unsigned char)*p);
    const char *sep = strncmp(d->root, "\\\\", 2) == 0 ? strchr(d->root + 2, '\\') : NULL;
    if (sep == NULL || sep == d->root + 2 || sep[1] == '\0' || strchr(sep + 1, '\\') != NULL)
        return cp_yw_errf(w, r, "%s.remote: \"%s\" is not a share root \\\\server\\share", where,
                          d->root);
    if (cp_smb_model_server(m, d->root) == NULL)
        return cp_yw_errf(w, r, "%s.remote: no server of smb.servers is %s's", where, d->root);
    for (size_t i = 0; i < m->n_mappings; i++)
        if (strcmp(m->mappings[i].root, d->root) == 0)
            return cp_yw_errf(w, r, "%s.remote: %s is mapped twice", where, d->root);
    return CP_OK;
}

static int load_section(cp_yw *w, const yaml_node_t *sec, void *ctx)
{
    static const char *const keys[] = {"computer_name", "dns_name", "servers", "mappings", NULL};
    smb_model *m = ctx;
    const yaml_node_t *servers = NULL, *maps = NULL;
    size_t ns = 0, nm = 0;
    int rc = cp_simfx_keys(w, sec, "smb", keys);
    if (rc == CP_OK)
        rc = cp_simfx_opt_text(w, sec, "smb", "computer_name", m->netbios, sizeof(m->netbios));
    if (rc == CP_OK)
        rc = cp_simfx_opt_text(w, sec, "smb", "dns_name", m->dns, sizeof(m->dns));
    if (rc == CP_OK)
        rc = cp_simfx_list(w, sec, "smb", "servers", &servers, &ns);
    if (rc == CP_OK)
        rc = cp_simfx_list(w, sec, "smb", "mappings", &maps, &nm);
    if (rc == CP_OK && ((ns > 0 && (m->servers = calloc(ns, sizeof(*m->servers))) == NULL) ||
                        (nm > 0 && (m->mappings = calloc(nm, sizeof(*m->mappings))) == NULL)))
        return nomem(w);
    for (size_t i = 0; rc == CP_OK && i < ns; i++) {
        char key[64];
        cp_simfx_path(key, sizeof(key), "smb.servers[%zu]", i);
        rc = load_server(w, cp_simfx_item(w, servers, i), key, &m->servers[i]);
        m->n_servers = i + 1;
    }
    for (size_t i = 0; rc == CP_OK && i < nm; i++) {
        char key[64];
        cp_simfx_path(key, sizeof(key), "smb.mappings[%zu]", i);
        rc = load_mapping(w, cp_simfx_item(w, maps, i), key, m, &m->mappings[i]);
        if (rc == CP_OK)
            m->n_mappings = i + 1;
    }
    return rc;
}

int cp_smb_model_load(const char *path, const char *text, smb_model *m, cp_error *e)
{
    memset(m, 0, sizeof(*m));
    snprintf(m->netbios, sizeof(m->netbios), "SIMNODE");
    snprintf(m->dns, sizeof(m->dns), "simnode.sim.local");
    if (path == NULL && text == NULL)
        return CP_OK;
    int rc = cp_simfx_load(WHO, path, text, "smb", load_section, m, e);
    if (rc != CP_OK)
        cp_smb_model_free(m);
    return rc;
}

void cp_smb_model_free(smb_model *m)
{
    for (size_t i = 0; i < m->n_servers; i++) {
        free(m->servers[i].shares);
        for (size_t k = 0; k < m->servers[i].n_creds; k++)
            memset(m->servers[i].creds[k].password, 0, sizeof(m->servers[i].creds[k].password));
        free(m->servers[i].creds);
    }
    free(m->servers);
    free(m->mappings);
    memset(m, 0, sizeof(*m));
}
