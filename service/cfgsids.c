/* cfgsids.c - see cfgsids.h. */
#include "service/cfgsids.h"

#include <stdlib.h>

typedef struct sidlist {
    cp_sid *items;
    size_t n;
} sidlist;

static int add_sid(cp_yw *w, const yaml_node_t *item, const char *key, size_t i, void *out)
{
    sidlist *l = out;
    const cp_cfg_resolver *r = w->ctx;
    const char *s = cp_yw_scalar(w, item, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    cp_sid sid;
    char why[256] = "";
    if (s[0] == 'S' && s[1] == '-') {
        if (!cp_sid_parse(s, &sid))
            return cp_yw_errf(w, item, "%s[%zu]: \"%s\" is not a valid SID", key, i, s);
    } else if (!cp_sid_well_known_name(s, &sid)) {
        if (r == NULL || r->fn == NULL || !r->fn(r->ctx, s, &sid, why, sizeof(why)))
            return cp_yw_errf(w, item,
                              "%s[%zu]: \"%s\" is neither a SID (S-1-...) nor a known account%s%s",
                              key, i, s, why[0] != '\0' ? ": " : "", why);
    }
    for (size_t k = 0; k < l->n; k++)
        if (cp_sid_equal(&l->items[k], &sid))
            return cp_yw_errf(w, item, "%s[%zu]: \"%s\" is listed twice", key, i, s);
    cp_sid *grown = realloc(l->items, (l->n + 1) * sizeof(*grown));
    if (grown == NULL)
        return cp_error_set(w->e, CP_E_NOMEM, "%s: out of memory", w->file);
    l->items = grown;
    l->items[l->n++] = sid;
    return CP_OK;
}

int cp_cfg_sids(cp_yw *w, const yaml_node_t *n, const char *key, cp_sid **items, size_t *count)
{
    sidlist l = {NULL, 0};
    int rc = cp_yw_each_item(w, n, key, add_sid, &l);
    if (rc == CP_OK && l.n == 0)
        rc =
            cp_yw_errf(w, n, "%s: an empty list would refuse every caller; list at least one", key);
    if (rc != CP_OK) {
        free(l.items);
        return rc;
    }
    free(*items);
    *items = l.items;
    *count = l.n;
    return CP_OK;
}
