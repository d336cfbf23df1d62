/* groups.c - the registry of served (group, version) services.
 *
 * Built once at start-up, read-only afterwards. Filesystem versions get
 * their method tables and the filesystem context (host ops + path rules);
 * disk and volume versions get theirs and the storage context (storage
 * host, per-disk locks, and the same host ops and rules for mount paths);
 * the system version gets the system host and the allowedServices policy;
 * every other catalog entry gets a definition with no methods, so its pipe
 * exists and the server answers its calls with UNIMPLEMENTED. Each table is
 * checked when the registry is built: a bad table is a start-up error, not
 * a wrong answer later.
 */
#include "groups/groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch.h"
#include "dispatch/health.h"
#include "groups/catalog.h"
#include "groups/common/disklocks.h"
#include "groups/common/pathrules.h"
#include "groups/common/storagegroup.h"
#include "groups/disk/disk.h"
#include "groups/filesystem/filesystem.h"
#include "groups/health.h"
#include "groups/iscsi/iscsi.h"
#include "groups/smb/smb.h"
#include "groups/system/system.h"
#include "groups/volume/volume.h"

struct cp_groups {
    cp_pathrules *rules;
    cp_fs_group_ctx fs_ctx;
    cp_storage_group_ctx storage_ctx; /* disk and volume services */
    bool own_storage;                 /* opened the default host: release it */
    cp_system_group_ctx system_ctx;
    bool own_system;
    cp_smb_group_ctx smb_ctx;
    bool own_smb;
    cp_iscsi_group_ctx iscsi_ctx;
    bool own_iscsi;
    char **smb_allowed;   /* copies of groups.smb.allowedServers */
    char **iscsi_allowed; /* copies of groups.iscsi.allowedPortals */
    char smb_self[CP_SMB_NAME_MAX], smb_self_dns[CP_SMB_NAME_MAX];
    char **allowed; /* copies of the allowed services */
    char *allowed_text;
    cp_service_def *stub_defs; /* one per catalog entry; used for groups without tables */
    cp_service *services;      /* catalog order */
    size_t n;
};

/* The groups that have tables, by (group, version). */
static const cp_service_def *const implemented[] = {
    &cp_fs_v1alpha1_def,     &cp_fs_v1beta1_def,      &cp_fs_v1beta2_def,
    &cp_fs_v1_def,           &cp_fs_v2alpha1_def,     &cp_disk_v1alpha1_def,
    &cp_disk_v1beta1_def,    &cp_disk_v1beta2_def,    &cp_disk_v1beta3_def,
    &cp_disk_v1_def,         &cp_volume_v1alpha1_def, &cp_volume_v1beta1_def,
    &cp_volume_v1beta2_def,  &cp_volume_v1beta3_def,  &cp_volume_v1_def,
    &cp_volume_v2alpha1_def, &cp_system_v1alpha1_def, &cp_smb_v1alpha1_def,
    &cp_smb_v1beta1_def,     &cp_smb_v1beta2_def,     &cp_smb_v1_def,
    &cp_iscsi_v1alpha1_def,  &cp_iscsi_v1alpha2_def,
};

static const cp_service_def *implemented_def(const cp_catalog_entry *c)
{
    for (size_t i = 0; i < sizeof(implemented) / sizeof(implemented[0]); i++)
        if (strcmp(implemented[i]->group, c->group) == 0 &&
            strcmp(implemented[i]->version, c->version) == 0)
            return implemented[i];
    return NULL;
}

/* Beyond cp_service_check (field maps, handlers): the table must belong to
 * its catalog entry, and each method must be one the proto declares, with
 * the proto's request and response types - a LinkPath entry pointing at
 * IsMountPoint's messages would otherwise decode garbage silently. */
static int check_against_catalog(const cp_service_def *def, const cp_catalog_entry *c, char *err,
                                 size_t errlen)
{
    if (def->svc_desc != c->desc || strcmp(def->service, c->desc->name) != 0) {
        snprintf(err, errlen, "%s: table is not for service %s", def->service, c->desc->name);
        return -1;
    }
    for (size_t i = 0; i < def->n_methods; i++) {
        const cp_method *m = &def->methods[i];
        const ProtobufCMethodDescriptor *pm =
            protobuf_c_service_descriptor_get_method_by_name(c->desc, m->name);
        if (pm == NULL) {
            snprintf(err, errlen, "%s/%s: the proto declares no such method", def->service,
                     m->name);
            return -1;
        }
        if (pm->input != m->req_desc || pm->output != m->resp_desc) {
            snprintf(err, errlen, "%s/%s: request/response types differ from the proto's",
                     def->service, m->name);
            return -1;
        }
    }
    return 0;
}

static int bind_entry(cp_groups *g, size_t i, cp_error *e)
{
    const cp_catalog_entry *c = &cp_catalog[i];
    const cp_service_def *def = implemented_def(c);
    void *ctx = NULL;
    if (def != NULL) {
        bool storage = strcmp(c->group, "disk") == 0 || strcmp(c->group, "volume") == 0;
        if (strcmp(c->group, "system") == 0)
            ctx = &g->system_ctx;
        else if (strcmp(c->group, "smb") == 0)
            ctx = &g->smb_ctx;
        else if (strcmp(c->group, "iscsi") == 0)
            ctx = &g->iscsi_ctx;
        else
            ctx = storage ? (void *)&g->storage_ctx : (void *)&g->fs_ctx;
    } else {
        cp_service_def *stub = &g->stub_defs[i];
        stub->group = c->group;
        stub->version = c->version;
        stub->service = c->desc->name;
        stub->svc_desc = c->desc;
        stub->methods = NULL;
        stub->n_methods = 0;
        def = stub;
    }
    char err[256];
    if (cp_service_check(def, err, sizeof(err)) != 0 ||
        check_against_catalog(def, c, err, sizeof(err)) != 0)
        return cp_error_set(e, CP_E_INTERNAL, "service table %s/%s is invalid: %s", c->group,
                            c->version, err);
    g->services[i].def = def;
    g->services[i].ctx = ctx;
    g->services[i].health = ctx != NULL ? cp_groups_health_probe(c->group) : NULL;
    return CP_OK;
}

/* The system group's host and its copy of the allowedServices policy. */
static int bind_system(cp_groups *g, const cp_groups_config *cfg, cp_error *e)
{
    cp_system_group_ctx *sc = &g->system_ctx;
    if (cfg->system_host.ops != NULL) {
        sc->host = cfg->system_host;
    } else {
        if (cp_system_host_open_default(&sc->host, e) != CP_OK)
            return e->status;
        g->own_system = true;
    }
    const cp_system_config *sys = &cfg->system;
    sc->restricted = sys->services_restricted;
    size_t n = sys->services_restricted ? sys->n_allowed_services : 0, text = 3;
    g->allowed = calloc(n + 1, sizeof(*g->allowed));
    if (g->allowed == NULL)
        return cp_error_set(e, CP_E_NOMEM, "groups: out of memory");
    for (size_t i = 0; i < n; i++) {
        g->allowed[i] = strdup(sys->allowed_services[i]);
        if (g->allowed[i] == NULL)
            return cp_error_set(e, CP_E_NOMEM, "groups: out of memory");
        text += strlen(g->allowed[i]) + 2;
    }
    g->allowed_text = malloc(text);
    if (g->allowed_text == NULL)
        return cp_error_set(e, CP_E_NOMEM, "groups: out of memory");
    strcpy(g->allowed_text, "[");
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            strcat(g->allowed_text, ", ");
        strcat(g->allowed_text, g->allowed[i]);
    }
    strcat(g->allowed_text, "]");
    sc->allowed = (const char *const *)g->allowed;
    sc->n_allowed = n;
    sc->allowed_text = g->allowed_text;
    return CP_OK;
}

/* The smb group's host, policy (allowedServers, this machine's names) and
 * the filesystem host and rules its links are made with. */
static int bind_smb(cp_groups *g, const cp_groups_config *cfg, cp_error *e)
{
    cp_smb_group_ctx *sc = &g->smb_ctx;
    if (cfg->smb_host.ops != NULL) {
        sc->host = cfg->smb_host;
    } else {
        if (cp_smb_host_open_default(&sc->host, e) != CP_OK)
            return e->status;
        g->own_smb = true;
    }
    sc->fs = cfg->fs;
    sc->rules = g->rules;
    const cp_smb_config *smb = &cfg->smb;
    sc->require_privacy = !smb->privacy_off;
    cp_error ne;
    if (sc->host.ops->computer_name(sc->host.ctx, g->smb_self, g->smb_self_dns, sizeof(g->smb_self),
                                    &ne) != CP_OK)
        g->smb_self[0] = g->smb_self_dns[0] = '\0';
    sc->policy.self = g->smb_self;
    sc->policy.self_dns = g->smb_self_dns;
    size_t n = smb->servers_restricted ? smb->n_allowed_servers : 0;
    g->smb_allowed = calloc(n + 1, sizeof(*g->smb_allowed));
    if (g->smb_allowed == NULL)
        return cp_error_set(e, CP_E_NOMEM, "groups: out of memory");
    for (size_t i = 0; i < n; i++)
        if ((g->smb_allowed[i] = strdup(smb->allowed_servers[i])) == NULL)
            return cp_error_set(e, CP_E_NOMEM, "groups: out of memory");
    sc->policy.restricted = smb->servers_restricted;
    sc->policy.allowed = (const char *const *)g->smb_allowed;
    sc->policy.n_allowed = n;
    return CP_OK;
}

/* The iscsi group's host: the configured one, or this build's default. A
 * simulated initiator is given the storage host, where its logins' LUNs
 * appear as disks (iscsi.h attach_storage). Its portal policy
 * (allowedPortals). */
static int bind_iscsi(cp_groups *g, const cp_groups_config *cfg, cp_error *e)
{
    const cp_iscsi_config *ic = &cfg->iscsi;
    size_t n = ic->portals_restricted ? ic->n_allowed_portals : 0;
    g->iscsi_allowed = calloc(n + 1, sizeof(*g->iscsi_allowed));
    if (g->iscsi_allowed == NULL)
        return cp_error_set(e, CP_E_NOMEM, "groups: out of memory");
    for (size_t i = 0; i < n; i++)
        if ((g->iscsi_allowed[i] = strdup(ic->allowed_portals[i])) == NULL)
            return cp_error_set(e, CP_E_NOMEM, "groups: out of memory");
    g->iscsi_ctx.policy.restricted = ic->portals_restricted;
    g->iscsi_ctx.policy.allowed = (const char *const *)g->iscsi_allowed;
    g->iscsi_ctx.policy.n_allowed = n;
    if (cfg->iscsi_host.ops != NULL) {
        g->iscsi_ctx.host = cfg->iscsi_host;
    } else {
        if (cp_iscsi_host_open_default(&g->iscsi_ctx.host, e) != CP_OK)
            return e->status;
        g->own_iscsi = true;
    }
    const cp_iscsi_host *h = &g->iscsi_ctx.host;
    if (h->ops->attach_storage != NULL &&
        h->ops->attach_storage(h->ctx, &g->storage_ctx.storage, e) != CP_OK)
        return e->status;
    return CP_OK;
}

cp_groups *cp_groups_new(const cp_groups_config *cfg, cp_error *e)
{
    if (cfg->fs.ops == NULL) {
        cp_error_set(e, CP_E_INVALID_ARGUMENT, "groups: no filesystem host operations given");
        return NULL;
    }
    cp_groups *g = calloc(1, sizeof(*g));
    if (g == NULL)
        goto nomem;
    g->stub_defs = calloc(cp_catalog_len, sizeof(*g->stub_defs));
    g->services = calloc(cp_catalog_len, sizeof(*g->services));
    if (g->stub_defs == NULL || g->services == NULL)
        goto nomem;

    const char *kubelet = cfg->kubelet_path != NULL ? cfg->kubelet_path : CP_DEFAULT_KUBELET_PATH;
    if (cp_pathrules_new(kubelet, cfg->working_dirs, cfg->n_working_dirs, &g->rules, e) != CP_OK)
        goto fail;
    g->fs_ctx.fs = cfg->fs;
    g->fs_ctx.rules = g->rules;
    if (cfg->storage.ops != NULL) {
        g->storage_ctx.storage = cfg->storage;
    } else {
        if (cp_storage_host_open_default(&g->storage_ctx.storage, e) != CP_OK)
            goto fail;
        g->own_storage = true;
    }
    g->storage_ctx.locks = cp_disklocks_new();
    g->storage_ctx.inflight = cp_inflight_new();
    if (g->storage_ctx.locks == NULL || g->storage_ctx.inflight == NULL)
        goto nomem;
    g->storage_ctx.fs = cfg->fs;
    g->storage_ctx.rules = g->rules;
    g->storage_ctx.format_foreign = cfg->volume.format_foreign_filesystems;
    if (bind_system(g, cfg, e) != CP_OK || bind_smb(g, cfg, e) != CP_OK ||
        bind_iscsi(g, cfg, e) != CP_OK)
        goto fail;
    g->storage_ctx.smb = &g->smb_ctx.host;
    g->storage_ctx.smb_volume_stats = !cfg->smb.volume_stats_off;
    g->fs_ctx.smb = &g->smb_ctx.host;

    for (size_t i = 0; i < cp_catalog_len; i++)
        if (bind_entry(g, i, e) != CP_OK)
            goto fail;
    g->n = cp_catalog_len;
    return g;
nomem:
    cp_error_set(e, CP_E_NOMEM, "groups: out of memory");
fail:
    cp_groups_free(g);
    return NULL;
}

void cp_groups_free(cp_groups *g)
{
    if (g == NULL)
        return;
    cp_pathrules_free(g->rules);
    if (g->own_storage)
        g->storage_ctx.storage.ops->destroy(g->storage_ctx.storage.ctx);
    cp_disklocks_free(g->storage_ctx.locks);
    cp_inflight_free(g->storage_ctx.inflight);
    if (g->own_system)
        g->system_ctx.host.ops->destroy(g->system_ctx.host.ctx);
    for (size_t i = 0; g->allowed != NULL && g->allowed[i] != NULL; i++)
        free(g->allowed[i]);
    free(g->allowed);
    if (g->own_iscsi)
        g->iscsi_ctx.host.ops->destroy(g->iscsi_ctx.host.ctx);
    if (g->own_smb)
        g->smb_ctx.host.ops->destroy(g->smb_ctx.host.ctx);
    for (size_t i = 0; g->smb_allowed != NULL && g->smb_allowed[i] != NULL; i++)
        free(g->smb_allowed[i]);
    free(g->smb_allowed);
    for (size_t i = 0; g->iscsi_allowed != NULL && g->iscsi_allowed[i] != NULL; i++)
        free(g->iscsi_allowed[i]);
    free(g->iscsi_allowed);
    free(g->allowed_text);
    free(g->services);
    free(g->stub_defs);
    free(g);
}

size_t cp_groups_count(const cp_groups *g)
{
    return g->n;
}

const cp_service *cp_groups_service(const cp_groups *g, size_t i)
{
    return i < g->n ? &g->services[i] : NULL;
}

void cp_groups_pipe_name(const cp_service_def *def, char *out, size_t outlen)
{
    snprintf(out, outlen, "csi-proxy-%s-%s", def->group, def->version);
}

/* ---- metrics ----------------------------------------------------------- */

static void collect_path_refusals(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx)
{
    const cp_groups *g = ctx;
    emit(emit_ctx, NULL, (double)cp_pathrules_refused(g->rules));
}

typedef struct disk_emit {
    cp_metrics_emit_fn emit;
    void *emit_ctx;
} disk_emit;

static void emit_disk(void *ctx, uint32_t disk, size_t waiting)
{
    disk_emit *d = ctx;
    char label[16];
    snprintf(label, sizeof(label), "%lu", (unsigned long)disk);
    d->emit(d->emit_ctx, label, (double)waiting);
}

static void collect_disk_waiting(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx)
{
    const cp_groups *g = ctx;
    disk_emit d = {emit, emit_ctx};
    cp_disklocks_each(g->storage_ctx.locks, emit_disk, &d);
}

int cp_groups_add_metrics(cp_groups *g, cp_metrics *m)
{
    for (size_t i = 0; i < g->n; i++)
        if (cp_metrics_add_service(m, g->services[i].def) != 0)
            return -1;
    /* every pipe also serves the standard health service */
    if (cp_metrics_add_shared_service(m, &cp_health_def) != 0)
        return -1;
    if (cp_metrics_add_collector(m, "csi_proxy_path_refusals_total",
                                 "Paths refused by the path rules (working directories, "
                                 "kubelet path, path syntax).",
                                 CP_METRICS_COUNTER, NULL, collect_path_refusals, g) != 0 ||
        cp_metrics_add_collector(m, "csi_proxy_disk_waiting_calls",
                                 "Calls queued behind the lock of a disk held now, by disk number.",
                                 CP_METRICS_GAUGE, "disk", collect_disk_waiting, g) != 0)
        return -1;
    return 0;
}
