/* config.c - see config.h. The file is loaded as a libyaml document and
 * walked (yamlwalk.h) against a fixed schema: each mapping has a handler
 * that knows its keys, so an unknown key is always an error, never
 * ignored. */
#include "service/config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "groups/catalog.h"
#include "security/broad.h"
#include "security/redact.h"
#include "base/regfile.h"
#include "security/sddl.h"
#include "base/yamlwalk.h"
#include "service/cfgfile.h"
#include "base/yamldepth.h"

static const char *const group_names[CP_CONFIG_N_GROUPS] = {"filesystem", "disk",   "volume",
                                                            "smb",        "system", "iscsi"};
static const char *const default_callers[] = {"S-1-5-18", "S-1-5-32-544"};

/* security: / groups.<g>: share these two keys. */
typedef struct sec {
    cp_sid *allowed;
    size_t n_allowed;
    int allowed_line;
    char *sddl;
    int sddl_line;
} sec;

typedef struct load_ctx_sec {
    cp_config *c;
    sec *s;
} load_ctx_sec;

static int get_sddl(cp_yw *w, const yaml_node_t *v, const char *key, sec *s)
{
    int rc = cp_yw_string(w, v, key, &s->sddl);
    if (rc != CP_OK)
        return rc;
    char why[256];
    if (!cp_sddl_check(s->sddl, why, sizeof(why)))
        return cp_yw_errf(w, v, "%s: invalid pipe security \"%s\": %s", key, s->sddl, why);
    /* Refused rather than widened: the DACL the operator wrote is the one
     * enforced (sddl.h). */
    if (!cp_sddl_grants_system(s->sddl, why, sizeof(why)))
        return cp_yw_errf(w, v, "%s: pipe security \"%s\" cannot work: %s", key, s->sddl, why);
    s->sddl_line = cp_yw_line(v);
    return CP_OK;
}

static int security_pair(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                         void *ctx)
{
    load_ctx_sec *ls = ctx;
    sec *s = ls->s;
    if (strcmp(key, "allowedCallers") == 0) {
        s->allowed_line = cp_yw_line(v);
        return cp_yw_sids(w, v, "security.allowedCallers", &s->allowed, &s->n_allowed);
    }
    if (strcmp(key, "pipeSecurity") == 0)
        return get_sddl(w, v, "security.pipeSecurity", s);
    if (strcmp(key, "allowBroadCallers") == 0) {
        int b = 0;
        int rc = cp_yw_bool(w, v, "security.allowBroadCallers", &b);
        ls->c->allow_broad_callers = b != 0;
        return rc;
    }
    return cp_yw_unknown_key(w, k, "security", key,
                             "allowedCallers, pipeSecurity, allowBroadCallers");
}

typedef struct group_ctx {
    cp_config *c;
    cp_config_group *g;
    sec *s;
} group_ctx;

static int check_version(cp_yw *w, const yaml_node_t *item, const char *key, size_t i, void *out)
{
    const char *group = out;
    const char *s = cp_yw_scalar(w, item, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    if (cp_catalog_find(group, s) == NULL) {
        char known[256] = "";
        for (size_t k = 0; k < cp_catalog_len; k++)
            if (strcmp(cp_catalog[k].group, group) == 0)
                snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
                         known[0] != '\0' ? ", " : "", cp_catalog[k].version);
        return cp_yw_errf(w, item, "%s[%zu]: %s has no version \"%s\" (it has: %s)", key, i, group,
                          s, known);
    }
    return CP_OK;
}

/* groups.smb.allowedServers entries: a host name or address (letters,
 * digits, '-', '_', '.', ':'), or "*." followed by one (a whole domain). */
static bool server_pattern_ok(const char *p)
{
    if (strncmp(p, "*.", 2) == 0)
        p += 2;
    if (*p == '\0' || *p == '.' || strlen(p) > 253)
        return false;
    for (; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.' || *p == ':'))
            return false;
    return true;
}

/* groups.iscsi.allowedPortals entries: what server_pattern_ok takes, and
 * an IPv6 address in brackets. */
static bool portal_pattern_ok(const char *p)
{
    size_t n = strlen(p);
    if (n > 2 && p[0] == '[' && p[n - 1] == ']') {
        char inner[256];
        if (n - 2 >= sizeof(inner) || memchr(p + 1, '[', n - 2) || memchr(p + 1, ']', n - 2))
            return false;
        memcpy(inner, p + 1, n - 2);
        inner[n - 2] = '\0';
        return strchr(inner, ':') != NULL && server_pattern_ok(inner);
    }
    const char *colon = strchr(p, ':'); /* an IPv6 address has two; "host:port" one */
    if (colon != NULL && strchr(colon + 1, ':') == NULL)
        return false;
    return server_pattern_ok(p);
}

static int group_pair(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                      void *ctx)
{
    group_ctx *gc = ctx;
    cp_config_group *g = gc->g;
    char where[64];
    snprintf(where, sizeof(where), "groups.%s.%s", g->name, key);
    if (strcmp(key, "versions") == 0) {
        int rc = cp_yw_each_item(w, v, where, check_version, (void *)g->name);
        if (rc == CP_OK)
            rc = cp_yw_strings(w, v, where, &g->versions, &g->n_versions);
        if (rc == CP_OK && g->n_versions == 0)
            rc = cp_yw_errf(w, v, "%s: empty; leave the group out to serve none of it", where);
        return rc;
    }
    if (strcmp(key, "allowedCallers") == 0) {
        gc->s->allowed_line = cp_yw_line(v);
        return cp_yw_sids(w, v, where, &gc->s->allowed, &gc->s->n_allowed);
    }
    if (strcmp(key, "pipeSecurity") == 0)
        return get_sddl(w, v, where, gc->s);
    if (strcmp(key, "allowedServices") == 0) {
        if (strcmp(g->name, "system") != 0)
            return cp_yw_errf(w, k, "%s: only the system group starts and stops services", where);
        gc->c->allowed_services_given = true;
        return cp_yw_strings(w, v, where, &gc->c->allowed_services, &gc->c->n_allowed_services);
    }
    if (strcmp(key, "allowedServers") == 0) {
        if (strcmp(g->name, "smb") != 0)
            return cp_yw_errf(w, k, "%s: only the smb group maps servers", where);
        gc->c->allowed_smb_servers_given = true;
        int rc =
            cp_yw_strings(w, v, where, &gc->c->allowed_smb_servers, &gc->c->n_allowed_smb_servers);
        for (size_t i = 0; rc == CP_OK && i < gc->c->n_allowed_smb_servers; i++)
            if (!server_pattern_ok(gc->c->allowed_smb_servers[i]))
                rc = cp_yw_errf(w, v,
                                "%s: \"%s\" is not a host name, an address or "
                                "\"*.\" followed by a domain",
                                where, gc->c->allowed_smb_servers[i]);
        return rc;
    }
    if (strcmp(key, "allowedPortals") == 0) {
        if (strcmp(g->name, "iscsi") != 0)
            return cp_yw_errf(w, k, "%s: only the iscsi group has target portals", where);
        gc->c->allowed_iscsi_portals_given = true;
        int rc = cp_yw_strings(w, v, where, &gc->c->allowed_iscsi_portals,
                               &gc->c->n_allowed_iscsi_portals);
        for (size_t i = 0; rc == CP_OK && i < gc->c->n_allowed_iscsi_portals; i++)
            if (!portal_pattern_ok(gc->c->allowed_iscsi_portals[i]))
                rc = cp_yw_errf(w, v,
                                "%s: \"%s\" is not a host name, an address or \"*.\" followed "
                                "by a domain (no port: any port of an allowed portal is allowed)",
                                where, gc->c->allowed_iscsi_portals[i]);
        return rc;
    }
    if (strcmp(key, "formatForeignFilesystems") == 0) {
        if (strcmp(g->name, "volume") != 0)
            return cp_yw_errf(w, k, "%s: only the volume group formats volumes", where);
        int b = 0;
        int rc = cp_yw_bool(w, v, where, &b);
        gc->c->format_foreign_filesystems = b != 0;
        return rc;
    }
    return cp_yw_unknown_key(
        w, k, where, key,
        strcmp(g->name, "volume") == 0
            ? "versions, allowedCallers, pipeSecurity, formatForeignFilesystems"
        : strcmp(g->name, "system") == 0 ? "versions, allowedCallers, pipeSecurity, allowedServices"
        : strcmp(g->name, "smb") == 0    ? "versions, allowedCallers, pipeSecurity, allowedServers"
        : strcmp(g->name, "iscsi") == 0  ? "versions, allowedCallers, pipeSecurity, allowedPortals"
                                         : "versions, allowedCallers, pipeSecurity");
}

typedef struct load_ctx {
    cp_config *c;
    sec defaults;
    sec groups[CP_CONFIG_N_GROUPS];
    bool groups_given;
} load_ctx;

static int groups_pair(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                       void *ctx)
{
    load_ctx *lc = ctx;
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        if (strcmp(key, group_names[i]) != 0)
            continue;
        cp_config_group *g = &lc->c->groups[i];
        g->served = true;
        g->line = cp_yw_line(k);
        /* "filesystem:" with nothing after it is a null cp_yw_scalar: serve it. */
        if (v->type == YAML_SCALAR_NODE &&
            (v->data.scalar.length == 0 || strcmp((const char *)v->data.scalar.value, "~") == 0 ||
             strcmp((const char *)v->data.scalar.value, "null") == 0))
            return CP_OK;
        group_ctx gc = {lc->c, g, &lc->groups[i]};
        char where[32];
        snprintf(where, sizeof(where), "groups.%s", key);
        return cp_yw_each_pair(w, v, where, group_pair, &gc);
    }
    return cp_yw_unknown_key(w, k, "groups", key, "filesystem, disk, volume, smb, system, iscsi");
}

static int limits_pair(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                       void *ctx)
{
    cp_config_limits *l = ctx;
    uint64_t u;
    int rc;
    if (strcmp(key, "maxMessageBytes") == 0) {
        rc = cp_yw_uint(w, v, "limits.maxMessageBytes", 1024, 64u * 1024 * 1024, &u);
        if (rc == CP_OK)
            l->max_message_bytes = u;
        return rc;
    }
    if (strcmp(key, "maxConnections") == 0) {
        rc = cp_yw_uint(w, v, "limits.maxConnections", 0, 100000, &u);
        if (rc == CP_OK)
            l->max_connections = (uint32_t)u;
        return rc;
    }
    if (strcmp(key, "workerThreads") == 0) {
        rc = cp_yw_uint(w, v, "limits.workerThreads", 0, 256, &u);
        if (rc == CP_OK)
            l->worker_threads = (uint32_t)u;
        return rc;
    }
    if (strcmp(key, "idleTimeout") == 0)
        return cp_yw_duration(w, v, "limits.idleTimeout", &l->idle_timeout_ms);
    if (strcmp(key, "drainTimeout") == 0)
        return cp_yw_duration(w, v, "limits.drainTimeout", &l->drain_timeout_ms);
    return cp_yw_unknown_key(
        w, k, "limits", key,
        "maxMessageBytes, maxConnections, idleTimeout, drainTimeout, workerThreads");
}

/* What cp_redact_set_extra takes. */
static bool redact_fits(char *const *names, size_t n)
{
    if (n > CP_REDACT_MAX_EXTRA)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) >= 64)
            return false;
    return true;
}

static int log_pair(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                    void *ctx)
{
    cp_config_log *l = ctx;
    uint64_t u;
    int rc;
    if (strcmp(key, "v") == 0) {
        rc = cp_yw_uint(w, v, "log.v", 0, 10, &u);
        if (rc == CP_OK)
            l->v = (int)u;
        return rc;
    }
    if (strcmp(key, "file") == 0)
        return cp_yw_string(w, v, "log.file", &l->file);
    if (strcmp(key, "dir") == 0)
        return cp_yw_string(w, v, "log.dir", &l->dir);
    if (strcmp(key, "toStderr") == 0)
        return cp_yw_bool(w, v, "log.toStderr", &l->to_stderr);
    if (strcmp(key, "alsoToStderr") == 0)
        return cp_yw_bool(w, v, "log.alsoToStderr", &l->also_to_stderr);
    if (strcmp(key, "skipHeaders") == 0)
        return cp_yw_bool(w, v, "log.skipHeaders", &l->skip_headers);
    if (strcmp(key, "fileMaxSizeMB") == 0) {
        rc = cp_yw_uint(w, v, "log.fileMaxSizeMB", 0, 1024 * 1024, &u);
        if (rc == CP_OK)
            l->file_max_size_mb = (int64_t)u;
        return rc;
    }
    if (strcmp(key, "redactFields") == 0) {
        int rc = cp_yw_strings(w, v, "log.redactFields", &l->redact_fields, &l->n_redact_fields);
        if (rc == CP_OK && !redact_fits(l->redact_fields, l->n_redact_fields))
            rc = cp_yw_errf(w, v, "log.redactFields: at most %d names, each under 64 bytes",
                            CP_REDACT_MAX_EXTRA);
        return rc;
    }
    if (strcmp(key, "stderrThreshold") == 0) {
        static const char *const sev[] = {"INFO", "WARNING", "ERROR", "FATAL"};
        const char *s = cp_yw_scalar(w, v, "log.stderrThreshold");
        if (s == NULL)
            return CP_E_INVALID_ARGUMENT;
        for (int i = 0; i < 4; i++)
            if (strcmp(s, sev[i]) == 0)
                return l->stderr_threshold = i, CP_OK;
        return cp_yw_errf(
            w, v, "log.stderrThreshold: expected INFO, WARNING, ERROR or FATAL, not \"%s\"", s);
    }
    return cp_yw_unknown_key(w, k, "log", key,
                             "v, file, dir, toStderr, alsoToStderr, skipHeaders, fileMaxSizeMB, "
                             "stderrThreshold, redactFields");
}

static int top_pair(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                    void *ctx)
{
    load_ctx *lc = ctx;
    cp_config *c = lc->c;
    if (strcmp(key, "kubeletPath") == 0)
        return cp_yw_string(w, v, "kubeletPath", &c->kubelet_path);
    if (strcmp(key, "workingDirs") == 0) {
        c->working_dirs_given = true;
        return cp_yw_strings(w, v, "workingDirs", &c->working_dirs, &c->n_working_dirs);
    }
    if (strcmp(key, "security") == 0) {
        load_ctx_sec ls = {c, &lc->defaults};
        return cp_yw_each_pair(w, v, "security", security_pair, &ls);
    }
    if (strcmp(key, "groups") == 0) {
        lc->groups_given = true;
        for (int i = 0; i < CP_CONFIG_N_GROUPS; i++)
            c->groups[i].served = false;
        return cp_yw_each_pair(w, v, "groups", groups_pair, lc);
    }
    if (strcmp(key, "limits") == 0)
        return cp_yw_each_pair(w, v, "limits", limits_pair, &c->limits);
    if (strcmp(key, "log") == 0)
        return cp_yw_each_pair(w, v, "log", log_pair, &c->log);
    return cp_yw_unknown_key(w, k, "top level", key,
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
    const sec *sd = own->sddl != NULL                             ? own
                    : (own->n_allowed == 0 && defs->sddl != NULL) ? defs
                                                                  : NULL;
    char *s;
    if (sd != NULL) {
        s = cp_yw_strdup(sd->sddl);
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

/* ---- broad callers (broad.h) ------------------------------------------ */

bool cp_config_group_broad(const cp_config_group *g, char *which, size_t cap)
{
    char w[256];
    if (cp_broad_list(g->allowed, g->n_allowed, w, sizeof(w)))
        return snprintf(which, cap, "allowed callers: %s", w), true;
    if (cp_broad_sddl(g->pipe_sddl, w, sizeof(w)))
        return snprintf(which, cap, "pipe security %s grants %s", g->pipe_sddl, w), true;
    return false;
}

/* A served group that admits a broad group, by its own keys or by
 * security:'s, is an error at the key that says so. */
static int refuse_broad(const cp_config *c, const load_ctx *lc, const char *name, cp_error *e)
{
    static const char fix[] = "csi-proxy acts as SYSTEM for its callers; set "
                              "security.allowBroadCallers: true to allow it anyway";
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        const cp_config_group *g = &c->groups[i];
        const sec *own = &lc->groups[i], *defs = &lc->defaults;
        char w[256];
        if (!g->served)
            continue;
        if (cp_broad_list(g->allowed, g->n_allowed, w, sizeof(w))) {
            bool mine = own->n_allowed > 0;
            return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                "%s:%d: %s%s.allowedCallers: %s admits a broad group to the %s "
                                "group; %s",
                                name, mine ? own->allowed_line : defs->allowed_line,
                                mine ? "groups." : "security", mine ? g->name : "", w, g->name,
                                fix);
        }
        if (cp_broad_sddl(g->pipe_sddl, w, sizeof(w))) {
            bool mine = own->sddl != NULL;
            return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                "%s:%d: %s%s.pipeSecurity: \"%s\" grants %s access to the %s "
                                "group's pipes; %s",
                                name, g->pipe_sddl_line, mine ? "groups." : "security",
                                mine ? g->name : "", g->pipe_sddl, w, g->name, fix);
        }
    }
    return CP_OK;
}

/* ---- public ----------------------------------------------------------- */

int cp_config_defaults(cp_config *c)
{
    memset(c, 0, sizeof(*c));
    c->limits.max_message_bytes = CP_CONFIG_DEFAULT_MAX_MESSAGE;
    c->limits.drain_timeout_ms = CP_CONFIG_DEFAULT_DRAIN_MS;
    c->limits.max_connections = CP_CONFIG_DEFAULT_MAX_CONNECTIONS;
    c->log = (cp_config_log){.v = -1,
                             .to_stderr = -1,
                             .also_to_stderr = -1,
                             .skip_headers = -1,
                             .file_max_size_mb = -1,
                             .stderr_threshold = -1};
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
    c->path = cp_yw_strdup(name);
    if (c->path == NULL)
        return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
    if (len > CP_CONFIG_MAX_FILE)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: larger than %d bytes", name,
                            CP_CONFIG_MAX_FILE);

    /* Nesting costs libyaml quadratic time: capped while parsing. */
    int drc = cp_yaml_depth_check(name, yaml, len, e);
    if (drc != CP_OK)
        return drc;
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

    cp_yw w = {&doc, name, e, resolve, ctx};
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
        rc = cp_yw_each_pair(&w, root, "top level", top_pair, &lc);
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
    if (rc == CP_OK && !c->allow_broad_callers)
        rc = refuse_broad(c, &lc, name, e);
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
    FILE *fp = cp_cfgfile_open(path, e); /* a regular file only the trusted can change */
    if (fp == NULL)
        return e->status;
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
    cp_yw_free_list(c->working_dirs, c->n_working_dirs);
    for (int i = 0; i < CP_CONFIG_N_GROUPS; i++) {
        cp_yw_free_list(c->groups[i].versions, c->groups[i].n_versions);
        free(c->groups[i].allowed);
        free(c->groups[i].pipe_sddl);
    }
    cp_yw_free_list(c->allowed_services, c->n_allowed_services);
    cp_yw_free_list(c->allowed_smb_servers, c->n_allowed_smb_servers);
    cp_yw_free_list(c->allowed_iscsi_portals, c->n_allowed_iscsi_portals);
    free(c->log.file);
    free(c->log.dir);
    cp_yw_free_list(c->log.redact_fields, c->log.n_redact_fields);
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
            if ((dirs[i] = cp_yw_strdup(c->working_dirs[i])) == NULL) {
                cp_yw_free_list(dirs, i);
                return CP_E_NOMEM;
            }
        }
        cp_yw_free_list(f->working_dirs, f->n_working_dirs);
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
