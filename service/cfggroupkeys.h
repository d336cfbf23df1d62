/* cfggroupkeys.h - the keys of the configuration file that belong to one
 * group (groups.system.allowedServices, groups.smb.allowedServers,
 * groups.iscsi.allowedPortals): one row each in a table, parsed into that
 * group's settings in cp_config. A new key is a row and its parser.
 * Portable C. */
#ifndef CP_CFGGROUPKEYS_H
#define CP_CFGGROUPKEYS_H

#include "base/yamlwalk.h"
#include "service/config.h"

/* Parses key (node k, value v, key path where) of group's mapping into c
 * when it is that group's own key. Any other key is INVALID_ARGUMENT: a
 * key of another group says which group has it, an unknown key lists the
 * group's keys (versions, allowedCallers, pipeSecurity and its own). */
int cp_cfg_group_key(cp_yw *w, cp_config *c, const char *group, const char *key,
                     const yaml_node_t *k, const yaml_node_t *v, const char *where);

#endif
