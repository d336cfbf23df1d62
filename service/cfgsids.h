/* cfgsids.h - the configuration file's lists of callers: SIDs given as
 * S-1-... strings or account names, read with the YAML walker
 * (base/yamlwalk.h). Portable C. */
#ifndef CP_CFGSIDS_H
#define CP_CFGSIDS_H

#include <stddef.h>

#include "base/yamlwalk.h"
#include "security/sid.h"
#include "service/config.h"

/* The resolver a walk over the configuration carries in its ctx. */
typedef struct cp_cfg_resolver {
    cp_config_resolve_fn fn; /* may be NULL: well-known names only */
    void *ctx;
} cp_cfg_resolver;

/* A non-empty list of distinct SIDs given as S-1-... strings or account
 * names (well-known, else the cp_cfg_resolver in w->ctx, which may be
 * NULL), replacing *items (freed). */
int cp_cfg_sids(cp_yw *w, const yaml_node_t *n, const char *key, cp_sid **items, size_t *count);

#endif
