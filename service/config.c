/* config.c - see config.h. The file is loaded as a libyaml document and
 * walked against a fixed schema: each key is looked up in a table for its
 * place, so an unknown key is always an error, never ignored. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../groups/catalog.h"
#include "sddl.h"

static const char *const group_names[CP_CONFIG_N_GROUPS] = {"filesystem", "disk", "volume",
                                                            "smb",        "system", "iscsi"};
static const char *const default_callers[] = {"S-1-5-18", "S-1-5-32-544"};

/* The walk's state: the document, where errors go, and the resolver. */
typedef struct walk {
    yaml_document_t *doc;
    const char *file;
    cp_error *e;
    cp_config_resolve_fn resolve;
    void *resolve_ctx;
} walk;

static int line_of(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

static int errf(walk *w, const yaml_node_t *n, const char *fmt, ...) CP_PRINTF(3, 4);
static int errf(walk *w, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[CP_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cp_error_set(w->e, CP_E_INVALID_ARGUMENT, "%s:%d: %s", w->file, line_of(n), msg);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

static void free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* ---- scalars ------------------------------------------------------------ */

static const char *scalar(walk *w, const yaml_node_t *n, const char *key)
{
    if (n->type != YAML_SCALAR_NODE) {
        errf(w, n, "%s: expected a single value, not a %s", key,
             n->type == YAML_SEQUENCE_NODE ? "list" : "mapping");
        return NULL;
    }
    const char *s = (const char *)n->data.scalar.value;
    if (strlen(s) != n->data.scalar.length) {
        errf(w, n, "%s: contains a NUL character", key);
        return NULL;
    }
    return s;
}

static int get_string(walk *w, const yaml_node_t *n, const char *key, char **out)
{
    const char *s = scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    if (s[0] == '\0')
        return errf(w, n, "%s: must not be empty", key);
    char *d = dup_str(s);
    if (d == NULL)
        return cp_error_set(w->e, CP_E_NOMEM, "%s: out of memory", w->file);
    free(*out);
    *out = d;
    return CP_OK;
}

static int get_bool(walk *w, const yaml_node_t *n, const char *key, int *out)
{
    const char *s = scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    if (strcmp(s, "true") == 0)
        *out = 1;
    else if (strcmp(s, "false") == 0)
        *out = 0;
    else
        return errf(w, n, "%s: expected true or false, not \"%s\"", key, s);
    return CP_OK;
}

static int get_uint(walk *w, const yaml_node_t *n, const char *key, uint64_t lo, uint64_t hi,
                    uint64_t *out)
{
    const char *s = scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return errf(w, n, "%s: %s is too large", key, s);
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == s || *p != '\0')
        return errf(w, n, "%s: expected a whole number, not \"%s\"", key, s);
    if (v < lo || v > hi)
        return errf(w, n, "%s: %s is out of range [%llu, %llu]", key, s, (unsigned long long)lo,
                    (unsigned long long)hi);
    *out = v;
    return CP_OK;
}

/* Go's time.ParseDuration, restricted to non-negative ms/s/m/h:
 * "10s", "1m30s", "500ms", "0". */
static int get_duration(walk *w, const yaml_node_t *n, const char *key, int64_t *out_ms)
{
    const char *s = scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    if (strcmp(s, "0") == 0) {
        *out_ms = 0;
        return CP_OK;
    }
    const int64_t max_ms = 24LL * 3600 * 1000;
    int64_t total = 0;
    const char *p = s;
    while (*p != '\0') {
        int64_t v = 0;
        const char *start = p;
        for (; *p >= '0' && *p <= '9'; p++) {
            v = v * 10 + (*p - '0');
            if (v > max_ms)
                return errf(w, n, "%s: %s is longer than 24h", key, s);
        }
        int64_t unit;
        if (p == start)
            goto bad;
        if (strncmp(p, "ms", 2) == 0)
            unit = 1, p += 2;
        else if (*p == 's')
            unit = 1000, p++;
        else if (*p == 'm')
            unit = 60 * 1000, p++;
        else if (*p == 'h')
            unit = 3600 * 1000, p++;
        else
            goto bad;
        total += v * unit;
        if (total > max_ms)
            return errf(w, n, "%s: %s is longer than 24h", key, s);
    }
    if (p == s)
        goto bad;
    *out_ms = total;
    return CP_OK;
bad:
    return errf(w, n, "%s: expected a duration such as 10s, 500ms or 1m30s, not \"%s\"", key, s);
}

/* ---- lists -------------------------------------------------------------- */

typedef int (*item_fn)(walk *w, const yaml_node_t *item, const char *key, size_t i, void *out);

static int each_item(walk *w, const yaml_node_t *n, const char *key, item_fn fn, void *out)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return errf(w, n, "%s: expected a list", key);
    size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (count > CP_CONFIG_MAX_LIST)
        return errf(w, n, "%s: more than %d items", key, CP_CONFIG_MAX_LIST);
    for (size_t i = 0; i < count; i++) {
        const yaml_node_t *item = yaml_document_get_node(w->doc, n->data.sequence.items.start[i]);
        if (item == NULL)
            return errf(w, n, "%s: malformed list", key);
        int rc = fn(w, item, key, i, out);
        if (rc != CP_OK)
            return rc;
    }
    return CP_OK;
}

typedef struct strlist {
    char **items;
    size_t n;
} strlist;

static int add_string(walk *w, const yaml_node_t *item, const char *key, size_t i, void *out)
{
    strlist *l = out;
    char k[96];
    snprintf(k, sizeof(k), "%s[%zu]", key, i);
    char *s = NULL;
    int rc = get_string(w, item, k, &s);
    if (rc != CP_OK)
        return rc;
    char **grown = realloc(l->items, (l->n + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(s);
        return cp_error_set(w->e, CP_E_NOMEM, "%s: out of memory", w->file);
    }
    l->items = grown;
    l->items[l->n++] = s;
    return CP_OK;
}

static int get_strings(walk *w, const yaml_node_t *n, const char *key, char ***items, size_t *count)
{
    strlist l = {NULL, 0};
    int rc = each_item(w, n, key, add_string, &l);
    if (rc != CP_OK) {
        free_list(l.items, l.n);
        return rc;
    }
    free_list(*items, *count);
    *items = l.items;
    *count = l.n;
    return CP_OK;
}

typedef struct sidlist {
    cp_sid *items;
    size_t n;
} sidlist;

static int add_sid(walk *w, const yaml_node_t *item, const char *key, size_t i, void *out)
{
    sidlist *l = out;
    const char *s = scalar(w, item, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    cp_sid sid;
    char why[256] = "";
    if (s[0] == 'S' && s[1] == '-') {
        if (!cp_sid_parse(s, &sid))
            return errf(w, item, "%s[%zu]: \"%s\" is not a valid SID", key, i, s);
    } else if (!cp_sid_well_known_name(s, &sid)) {
        if (w->resolve == NULL || !w->resolve(w->resolve_ctx, s, &sid, why, sizeof(why)))
            return errf(w, item, "%s[%zu]: \"%s\" is neither a SID (S-1-...) nor a known account%s%s",
                        key, i, s, why[0] != '\0' ? ": " : "", why);
    }
    for (size_t k = 0; k < l->n; k++)
        if (cp_sid_equal(&l->items[k], &sid))
            return errf(w, item, "%s[%zu]: \"%s\" is listed twice", key, i, s);
    cp_sid *grown = realloc(l->items, (l->n + 1) * sizeof(*grown));
    if (grown == NULL)
        return cp_error_set(w->e, CP_E_NOMEM, "%s: out of memory", w->file);
    l->items = grown;
    l->items[l->n++] = sid;
    return CP_OK;
}

static int get_sids(walk *w, const yaml_node_t *n, const char *key, cp_sid **items, size_t *count)
{
    sidlist l = {NULL, 0};
    int rc = each_item(w, n, key, add_sid, &l);
    if (rc == CP_OK && l.n == 0)
        rc = errf(w, n, "%s: an empty list would refuse every caller; list at least one", key);
    if (rc != CP_OK) {
        free(l.items);
        return rc;
    }
    free(*items);
    *items = l.items;
    *count = l.n;
    return CP_OK;
}

/* ---- mappings ----------------------------------------------------------- */

/* Calls fn(key, value) for each pair; refuses repeated keys and keys that
 * are not plain strings. */
typedef int (*pair_fn)(walk *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                       void *ctx);

static int each_pair(walk *w, const yaml_node_t *n, const char *where, pair_fn fn, void *ctx)
{
    if (n->type != YAML_MAPPING_NODE)
        return errf(w, n, "%s: expected a mapping (key: value)", where);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        if (k == NULL || v == NULL)
            return errf(w, n, "%s: malformed mapping", where);
        if (k->type != YAML_SCALAR_NODE)
            return errf(w, k, "%s: keys must be plain names", where);
        const char *key = (const char *)k->data.scalar.value;
        for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
            const yaml_node_t *k2 = yaml_document_get_node(w->doc, q->key);
            if (k2 != NULL && k2->type == YAML_SCALAR_NODE &&
                strcmp((const char *)k2->data.scalar.value, key) == 0)
                return errf(w, k, "%s: key \"%s\" is given twice (first at line %d)", where, key,
                            line_of(k2));
        }
        int rc = fn(w, key, k, v, ctx);
        if (rc != CP_OK)
            return rc;
    }
    return CP_OK;
}

static int unknown_key(walk *w, const yaml_node_t *k, const char *where, const char *key,
                       const char *known)
{
    return errf(w, k, "%s: unknown key \"%s\" (known: %s)", where, key, known);
}

/* security: / groups.<g>: share these two keys. */
typedef struct sec {
    cp_sid *allowed;
    size_t n_allowed;
    char *sddl;
    int sddl_line;
} sec;

static int get_sddl(walk *w, const yaml_node_t *v, const char *key, sec *s)
{
    int rc = get_string(w, v, key, &s->sddl);
    if (rc != CP_OK)
        return rc;
    char why[256];
    if (!cp_sddl_check(s->sddl, why, sizeof(why)))
        return errf(w, v, "%s: invalid pipe security \"%s\": %s", key, s->sddl, why);
    s->sddl_line = line_of(v);
    return CP_OK;
}

static int security_pair(walk *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                         void *ctx)
{
    sec *s = ctx;
    if (strcmp(key, "allowedCallers") == 0)
        return get_sids(w, v, "security.allowedCallers", &s->allowed, &s->n_allowed);
    if (strcmp(key, "pipeSecurity") == 0)
        return get_sddl(w, v, "security.pipeSecurity", s);
    return unknown_key(w, k, "security", key, "allowedCallers, pipeSecurity");
}

typedef struct group_ctx {
    cp_config *c;
    cp_config_group *g;
    sec *s;
} group_ctx;

static int check_version(walk *w, const yaml_node_t *item, const char *key, size_t i, void *out)
{
    const char *group = out;
    const char *s = scalar(w, item, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    if (cp_catalog_find(group, s) == NULL) {
        char known[256] = "";
        for (size_t k = 0; k < cp_catalog_len; k++)
            if (strcmp(cp_catalog[k].group, group) == 0)
                snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
                         known[0] != '\0' ? ", " : "", cp_catalog[k].version);
        return errf(w, item, "%s[%zu]: %s has no version \"%s\" (it has: %s)", key, i, group, s,
                    known);
    }
    return CP_OK;
}

static int group_pair(walk *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                      void *ctx)
{
    group_ctx *gc = ctx;
    cp_config_group *g = gc->g;
    char where[64];
    snprintf(where, sizeof(where), "groups.%s.%s", g->name, key);
    if (strcmp(key, "versions") == 0) {
        int rc = each_item(w, v, where, check_version, (void *)g->name);
        if (rc == CP_OK)
            rc = get_strings(w, v, where, &g->versions, &g->n_versions);
        if (rc == CP_OK && g->n_versions == 0)
            rc = errf(w, v, "%s: empty; leave the group out to serve none of it", where);
        return rc;
    }
    if (strcmp(key, "allowedCallers") == 0)
        return get_sids(w, v, where, &gc->s->allowed, &gc->s->n_allowed);
    if (strcmp(key, "pipeSecurity") == 0)
        return get_sddl(w, v, where, gc->s);
    if (strcmp(key, "allowedServices") == 0) {
        if (strcmp(g->name, "system") != 0)
            return errf(w, k, "%s: only the system group starts and stops services", where);
        return get_strings(w, v, where, &gc->c->allowed_services, &gc->c->n_allowed_services);
    }
    return unknown_key(w, k, where, key,
                       strcmp(g->name, "system") == 0
                           ? "versions, allowedCallers, pipeSecurity, allowedServices"
                           : "versions, allowedCallers, pipeSecurity");
}

typedef struct load_ctx {
    cp_config *c;
    sec defaults;
    sec groups[CP_CONFIG_N_GROUPS];
    bool groups_given;
} load_ctx;

static int groups_pair(walk *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                       void *ctx)
{
    load_ctx *lc = ctx;
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        if (strcmp(key, group_names[i]) != 0)
            continue;
        cp_config_group *g = &lc->c->groups[i];
        g->served = true;
        g->line = line_of(k);
        /* "filesystem:" with nothing after it is a null scalar: serve it. */
        if (v->type == YAML_SCALAR_NODE &&
            (v->data.scalar.length == 0 || strcmp((const char *)v->data.scalar.value, "~") == 0 ||
             strcmp((const char *)v->data.scalar.value, "null") == 0))
            return CP_OK;
        group_ctx gc = {lc->c, g, &lc->groups[i]};
        char where[32];
        snprintf(where, sizeof(where), "groups.%s", key);
        return each_pair(w, v, where, group_pair, &gc);
    }
    return unknown_key(w, k, "groups", key, "filesystem, disk, volume, smb, system, iscsi");
}

static int limits_pair(walk *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                       void *ctx)
{
    cp_config_limits *l = ctx;
    uint64_t u;
    int rc;
    if (strcmp(key, "maxMessageBytes") == 0) {
        rc = get_uint(w, v, "limits.maxMessageBytes", 1024, 64u * 1024 * 1024, &u);
        if (rc == CP_OK)
            l->max_message_bytes = u;
        return rc;
    }
    if (strcmp(key, "maxConnections") == 0) {
        rc = get_uint(w, v, "limits.maxConnections", 0, 100000, &u);
        if (rc == CP_OK)
            l->max_connections = (uint32_t)u;
        return rc;
    }
    if (strcmp(key, "workerThreads") == 0) {
        rc = get_uint(w, v, "limits.workerThreads", 0, 256, &u);
        if (rc == CP_OK)
            l->worker_threads = (uint32_t)u;
        return rc;
    }
    if (strcmp(key, "idleTimeout") == 0)
        return get_duration(w, v, "limits.idleTimeout", &l->idle_timeout_ms);
    if (strcmp(key, "drainTimeout") == 0)
        return get_duration(w, v, "limits.drainTimeout", &l->drain_timeout_ms);
    return unknown_key(w, k, "limits", key,
                       "maxMessageBytes, maxConnections, idleTimeout, drainTimeout, workerThreads");
}

static int log_pair(walk *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                    void *ctx)
{
    cp_config_log *l = ctx;
    uint64_t u;
    int rc;
    if (strcmp(key, "v") == 0) {
        rc = get_uint(w, v, "log.v", 0, 10, &u);
        if (rc == CP_OK)
            l->v = (int)u;
        return rc;
    }
    if (strcmp(key, "file") == 0)
        return get_string(w, v, "log.file", &l->file);
    if (strcmp(key, "dir") == 0)
        return get_string(w, v, "log.dir", &l->dir);
    if (strcmp(key, "toStderr") == 0)
        return get_bool(w, v, "log.toStderr", &l->to_stderr);
    if (strcmp(key, "alsoToStderr") == 0)
        return get_bool(w, v, "log.alsoToStderr", &l->also_to_stderr);
    if (strcmp(key, "skipHeaders") == 0)
        return get_bool(w, v, "log.skipHeaders", &l->skip_headers);
    if (strcmp(key, "fileMaxSizeMB") == 0) {
        rc = get_uint(w, v, "log.fileMaxSizeMB", 0, 1024 * 1024, &u);
        if (rc == CP_OK)
            l->file_max_size_mb = (int64_t)u;
        return rc;
    }
    if (strcmp(key, "stderrThreshold") == 0) {
        static const char *const sev[] = {"INFO", "WARNING", "ERROR", "FATAL"};
        const char *s = scalar(w, v, "log.stderrThreshold");
        if (s == NULL)
            return CP_E_INVALID_ARGUMENT;
        for (int i = 0; i < 4; i++)
            if (strcmp(s, sev[i]) == 0)
                return l->stderr_threshold = i, CP_OK;
        return errf(w, v, "log.stderrThreshold: expected INFO, WARNING, ERROR or FATAL, not \"%s\"",
                    s);
    }
    return unknown_key(w, k, "log", key,
                       "v, file, dir, toStderr, alsoToStderr, skipHeaders, fileMaxSizeMB, "
                       "stderrThreshold");
}

static int top_pair(walk *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                    void *ctx)
{
    load_ctx *lc = ctx;
    cp_config *c = lc->c;
    if (strcmp(key, "kubeletPath") == 0)
        return get_string(w, v, "kubeletPath", &c->kubelet_path);
    if (strcmp(key, "workingDirs") == 0) {
        c->working_dirs_given = true;
        return get_strings(w, v, "workingDirs", &c->working_dirs, &c->n_working_dirs);
    }
    if (strcmp(key, "security") == 0)
        return each_pair(w, v, "security", security_pair, &lc->defaults);
    if (strcmp(key, "groups") == 0) {
        lc->groups_given = true;
        for (int i = 0; i < CP_CONFIG_N_GROUPS; i++)
            c->groups[i].served = false;
        return each_pair(w, v, "groups", groups_pair, lc);
    }
    if (strcmp(key, "limits") == 0)
        return each_pair(w, v, "limits", limits_pair, &c->limits);
    if (strcmp(key, "log") == 0)
        return each_pair(w, v, "log", log_pair, &c->log);
    return unknown_key(w, k, "top level", key,
                       "kubeletPath, workingDirs, security, groups, limits, log");
}

/* ---- effective per-group security --------------------------------------- */

/* Group settings win over security:, which wins over the defaults. The
 * pipe DACL is derived from the allowed callers unless given, so the two
 * agree unless the operator says otherwise. */
static int finish_group(cp_config *c, cp_config_group *g, const sec *own, const sec *defs,
                        cp_error *e)
{
    const sec *src = own->n_allowed > 0 ? own : defs->n_allowed > 0 ? defs : NULL;
    if (src != NULL) {
        cp_sid *copy = malloc(src->n_allowed * sizeof(*copy));
        if (copy == NULL)
            return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
        memcpy(copy, src->allowed, src->n_allowed * sizeof(*copy));
        free(g->allowed);
        g->allowed = copy;
        g->n_allowed = src->n_allowed;
    }
    const sec *sd = own->sddl != NULL ? own : (own->n_allowed == 0 && defs->sddl != NULL) ? defs
                                                                                          : NULL;
    char *s;
    if (sd != NULL) {
        s = dup_str(sd->sddl);
        g->pipe_sddl_line = sd->sddl_line;
    } else {
        size_t cap = 16 + g->n_allowed * (CP_SID_STR_MAX + 16);
        s = malloc(cap);
        if (s != NULL && cp_sddl_for_sids(g->allowed, g->n_allowed, s, cap) == 0) {
            free(s);
            s = NULL;
        }
        g->pipe_sddl_line = 0;
    }
    if (s == NULL)
        return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
    free(g->pipe_sddl);
    g->pipe_sddl = s;
    (void)c;
    return CP_OK;
}

/* ---- public ----------------------------------------------------------- */

int cp_config_defaults(cp_config *c)
{
    memset(c, 0, sizeof(*c));
    c->limits.max_message_bytes = CP_CONFIG_DEFAULT_MAX_MESSAGE;
    c->limits.drain_timeout_ms = CP_CONFIG_DEFAULT_DRAIN_MS;
    c->log = (cp_config_log){.v = -1, .to_stderr = -1, .also_to_stderr = -1, .skip_headers = -1,
                             .file_max_size_mb = -1, .stderr_threshold = -1};
    sec defs = {0};
    cp_sid sids[2];
    for (int i = 0; i < 2; i++)
        cp_sid_parse(default_callers[i], &sids[i]);
    defs.allowed = sids;
    defs.n_allowed = 2;
    sec none = {0};
    cp_error e;
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        c->groups[i].name = group_names[i];
        c->groups[i].served = true;
        if (finish_group(c, &c->groups[i], &none, &defs, &e) != CP_OK)
            return CP_E_NOMEM;
    }
    return CP_OK;
}

static void free_sec(sec *s)
{
    free(s->allowed);
    free(s->sddl);
}

int cp_config_load_string(cp_config *c, const char *name, const char *yaml, size_t len,
                          cp_config_resolve_fn resolve, void *ctx, cp_error *e)
{
    cp_error_clear(e);
    if (cp_config_defaults(c) != CP_OK)
        return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
    c->path = dup_str(name);
    if (c->path == NULL)
        return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
    if (len > CP_CONFIG_MAX_FILE)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: larger than %d bytes", name,
                            CP_CONFIG_MAX_FILE);

    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    if (!yaml_parser_load(&parser, &doc)) {
        int rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s:%d: YAML: %s%s%s", name,
                              (int)parser.problem_mark.line + 1,
                              parser.problem != NULL ? parser.problem : "malformed",
                              parser.context != NULL ? " " : "",
                              parser.context != NULL ? parser.context : "");
        yaml_parser_delete(&parser);
        return rc;
    }
    /* A second document in the file would be ignored silently: refuse. */
    yaml_document_t extra;
    bool more = false;
    int extra_line = (int)parser.mark.line + 1;
    if (!yaml_parser_load(&parser, &extra)) {
        more = true; /* a broken second document */
        extra_line = (int)parser.problem_mark.line + 1;
    } else {
        yaml_node_t *r2 = yaml_document_get_root_node(&extra);
        more = r2 != NULL;
        if (r2 != NULL)
            extra_line = (int)r2->start_mark.line + 1;
        yaml_document_delete(&extra);
    }
    yaml_parser_delete(&parser);

    walk w = {&doc, name, e, resolve, ctx};
    load_ctx lc = {.c = c};
    int rc = CP_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (more) {
        rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s:%d: more than one YAML document", name,
                          extra_line);
    } else if (root == NULL) {
        rc = CP_OK; /* an empty file: the defaults */
    } else if (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0) {
        rc = CP_OK;
    } else {
        rc = each_pair(&w, root, "top level", top_pair, &lc);
    }
    for (int i = 0; rc == CP_OK && i < CP_CONFIG_N_GROUPS; i++) {
        sec defs = lc.defaults;
        if (defs.n_allowed == 0) {
            /* the built-in callers, unless security: names others */
            defs.allowed = c->groups[i].allowed;
            defs.n_allowed = c->groups[i].n_allowed;
        }
        rc = finish_group(c, &c->groups[i], &lc.groups[i], &defs, e);
    }
    free_sec(&lc.defaults);
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++)
        free_sec(&lc.groups[i]);
    yaml_document_delete(&doc);
    return rc;
}

int cp_config_load_file(cp_config *c, const char *path, cp_config_resolve_fn resolve, void *ctx,
                        cp_error *e)
{
    cp_error_clear(e);
    if (cp_config_defaults(c) != CP_OK)
        return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return cp_error_set(e, errno == ENOENT ? CP_E_NOT_FOUND : CP_E_IO, "%s: %s", path,
                            strerror(errno));
    char *buf = malloc(CP_CONFIG_MAX_FILE + 1);
    if (buf == NULL) {
        fclose(fp);
        return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
    }
    size_t n = fread(buf, 1, CP_CONFIG_MAX_FILE + 1, fp);
    bool read_err = ferror(fp) != 0;
    fclose(fp);
    int rc;
    if (read_err)
        rc = cp_error_set(e, CP_E_IO, "%s: read error", path);
    else if (n > CP_CONFIG_MAX_FILE)
        rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: larger than %d bytes", path,
                          CP_CONFIG_MAX_FILE);
    else {
        cp_config_free(c);
        rc = cp_config_load_string(c, path, buf, n, resolve, ctx, e);
    }
    free(buf);
    return rc;
}

void cp_config_free(cp_config *c)
{
    free(c->path);
    free(c->kubelet_path);
    free_list(c->working_dirs, c->n_working_dirs);
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        free_list(c->groups[i].versions, c->groups[i].n_versions);
        free(c->groups[i].allowed);
        free(c->groups[i].pipe_sddl);
    }
    free_list(c->allowed_services, c->n_allowed_services);
    free(c->log.file);
    free(c->log.dir);
    memset(c, 0, sizeof(*c));
}

const cp_config_group *cp_config_group_of(const cp_config *c, const char *group)
{
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++)
        if (c->groups[i].name != NULL && strcmp(c->groups[i].name, group) == 0)
            return &c->groups[i];
    return NULL;
}

bool cp_config_serves(const cp_config *c, const char *group, const char *version)
{
    const cp_config_group *g = cp_config_group_of(c, group);
    if (g == NULL || !g->served)
        return false;
    if (g->n_versions == 0)
        return true;
    for (size_t i = 0; i < g->n_versions; i++)
        if (strcmp(g->versions[i], version) == 0)
            return true;
    return false;
}

int cp_config_fill_flags(const cp_config *c, cp_flags *f)
{
    if (c->kubelet_path != NULL && !cp_flags_given(f, "kubelet-path"))
        f->kubelet_path = c->kubelet_path;
    if (c->working_dirs_given && !cp_flags_given(f, "working-dir")) {
        char **dirs = calloc(c->n_working_dirs > 0 ? c->n_working_dirs : 1, sizeof(*dirs));
        if (dirs == NULL)
            return CP_E_NOMEM;
        for (size_t i = 0; i < c->n_working_dirs; i++) {
            if ((dirs[i] = dup_str(c->working_dirs[i])) == NULL) {
                free_list(dirs, i);
                return CP_E_NOMEM;
            }
        }
        free_list(f->working_dirs, f->n_working_dirs);
        f->working_dirs = dirs;
        f->n_working_dirs = c->n_working_dirs;
    }
    const cp_config_log *l = &c->log;
    if (l->v >= 0 && !cp_flags_given(f, "v"))
        f->v = l->v;
    if (l->file != NULL && !cp_flags_given(f, "log_file"))
        f->log_file = l->file;
    if (l->dir != NULL && !cp_flags_given(f, "log_dir"))
        f->log_dir = l->dir;
    if (l->to_stderr >= 0 && !cp_flags_given(f, "logtostderr"))
        f->logtostderr = l->to_stderr != 0;
    if (l->also_to_stderr >= 0 && !cp_flags_given(f, "alsologtostderr"))
        f->alsologtostderr = l->also_to_stderr != 0;
    if (l->skip_headers >= 0 && !cp_flags_given(f, "skip_headers"))
        f->skip_headers = l->skip_headers != 0;
    if (l->file_max_size_mb >= 0 && !cp_flags_given(f, "log_file_max_size"))
        f->log_file_max_size = (uint64_t)l->file_max_size_mb;
    if (l->stderr_threshold >= 0 && !cp_flags_given(f, "stderrthreshold"))
        f->stderrthreshold = l->stderr_threshold;
    return CP_OK;
}
