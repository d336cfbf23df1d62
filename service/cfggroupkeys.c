/* cfggroupkeys.c - see cfggroupkeys.h. */
#include "service/cfggroupkeys.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

/* A list of strings into a group's settings: *list is owned by the
 * config (freed by cp_config_free), typed as the group reads it. */
static int get_list(cp_yw *w, const yaml_node_t *v, const char *where, const char *const **list,
                    size_t *n)
{
    char **items = NULL;
    size_t count = 0;
    int rc = cp_yw_strings(w, v, where, &items, &count);
    if (rc != CP_OK)
        return rc;
    cp_yw_free_list((char **)*list, *n);
    *list = (const char *const *)items;
    *n = count;
    return CP_OK;
}

static int get_allowed_services(cp_yw *w, const yaml_node_t *v, const char *where, cp_config *c)
{
    c->system.services_restricted = true;
    return get_list(w, v, where, &c->system.allowed_services, &c->system.n_allowed_services);
}

static int get_allowed_servers(cp_yw *w, const yaml_node_t *v, const char *where, cp_config *c)
{
    cp_smb_config *smb = &c->smb;
    smb->servers_restricted = true;
    int rc = get_list(w, v, where, &smb->allowed_servers, &smb->n_allowed_servers);
    for (size_t i = 0; rc == CP_OK && i < smb->n_allowed_servers; i++)
        if (!server_pattern_ok(smb->allowed_servers[i]))
            rc = cp_yw_errf(w, v,
                            "%s: \"%s\" is not a host name, an address or "
                            "\"*.\" followed by a domain",
                            where, smb->allowed_servers[i]);
    return rc;
}

static int get_volume_stats(cp_yw *w, const yaml_node_t *v, const char *where, cp_config *c)
{
    int b = 1;
    int rc = cp_yw_bool(w, v, where, &b);
    c->smb.volume_stats_off = b == 0;
    return rc;
}

static int get_format_foreign(cp_yw *w, const yaml_node_t *v, const char *where, cp_config *c)
{
    int b = 0;
    int rc = cp_yw_bool(w, v, where, &b);
    c->volume.format_foreign_filesystems = b != 0;
    return rc;
}

static int get_allowed_portals(cp_yw *w, const yaml_node_t *v, const char *where, cp_config *c)
{
    cp_iscsi_config *ic = &c->iscsi;
    ic->portals_restricted = true;
    int rc = get_list(w, v, where, &ic->allowed_portals, &ic->n_allowed_portals);
    for (size_t i = 0; rc == CP_OK && i < ic->n_allowed_portals; i++)
        if (!portal_pattern_ok(ic->allowed_portals[i]))
            rc = cp_yw_errf(w, v,
                            "%s: \"%s\" is not a host name, an address or \"*.\" followed "
                            "by a domain (no port: any port of an allowed portal is allowed)",
                            where, ic->allowed_portals[i]);
    return rc;
}

/* The keys of one group beyond versions, allowedCallers and pipeSecurity:
 * a row each, parsed into that group's settings. A key of another group
 * is refused with `elsewhere`. */
static const struct group_key {
    const char *group, *key;
    int (*parse)(cp_yw *w, const yaml_node_t *v, const char *where, cp_config *c);
    const char *elsewhere;
} group_keys[] = {
    {"system", "allowedServices", get_allowed_services,
     "only the system group starts and stops services"},
    {"smb", "allowedServers", get_allowed_servers, "only the smb group maps servers"},
    {"smb", "volumeStats", get_volume_stats, "only the smb group has SMB volume stats"},
    {"volume", "formatForeignFilesystems", get_format_foreign,
     "only the volume group formats volumes"},
    {"iscsi", "allowedPortals", get_allowed_portals, "only the iscsi group has target portals"},
};
#define N_GROUP_KEYS (sizeof(group_keys) / sizeof(group_keys[0]))

int cp_cfg_group_key(cp_yw *w, cp_config *c, const char *group, const char *key,
                     const yaml_node_t *k, const yaml_node_t *v, const char *where)
{
    char known[256] = "versions, allowedCallers, pipeSecurity";
    for (size_t i = 0; i < N_GROUP_KEYS; i++) {
        const struct group_key *gk = &group_keys[i];
        bool mine = strcmp(gk->group, group) == 0;
        if (strcmp(gk->key, key) == 0)
            return mine ? gk->parse(w, v, where, c)
                        : cp_yw_errf(w, k, "%s: %s", where, gk->elsewhere);
        if (mine)
            snprintf(known + strlen(known), sizeof(known) - strlen(known), ", %s", gk->key);
    }
    return cp_yw_unknown_key(w, k, where, key, known);
}
