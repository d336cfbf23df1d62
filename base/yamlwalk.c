/* yamlwalk.c - see yamlwalk.h. */
#include "base/yamlwalk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cp_yw_line(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

int cp_yw_errf(cp_yw *w, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[CP_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cp_error_set(w->e, CP_E_INVALID_ARGUMENT, "%s:%d: %s", w->file, cp_yw_line(n), msg);
}

char *cp_yw_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

void cp_yw_free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* ---- scalars ------------------------------------------------------------ */

const char *cp_yw_scalar(cp_yw *w, const yaml_node_t *n, const char *key)
{
    if (n->type != YAML_SCALAR_NODE) {
        cp_yw_errf(w, n, "%s: expected a single value, not a %s", key,
                   n->type == YAML_SEQUENCE_NODE ? "list" : "mapping");
        return NULL;
    }
    const char *s = (const char *)n->data.scalar.value;
    if (strlen(s) != n->data.scalar.length) {
        cp_yw_errf(w, n, "%s: contains a NUL character", key);
        return NULL;
    }
    return s;
}

int cp_yw_string(cp_yw *w, const yaml_node_t *n, const char *key, char **out)
{
    const char *s = cp_yw_scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    if (s[0] == '\0')
        return cp_yw_errf(w, n, "%s: must not be empty", key);
    char *d = cp_yw_strdup(s);
    if (d == NULL)
        return cp_error_set(w->e, CP_E_NOMEM, "%s: out of memory", w->file);
    free(*out);
    *out = d;
    return CP_OK;
}

int cp_yw_bool(cp_yw *w, const yaml_node_t *n, const char *key, int *out)
{
    const char *s = cp_yw_scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    if (strcmp(s, "true") == 0)
        *out = 1;
    else if (strcmp(s, "false") == 0)
        *out = 0;
    else
        return cp_yw_errf(w, n, "%s: expected true or false, not \"%s\"", key, s);
    return CP_OK;
}

int cp_yw_uint(cp_yw *w, const yaml_node_t *n, const char *key, uint64_t lo, uint64_t hi,
               uint64_t *out)
{
    const char *s = cp_yw_scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return cp_yw_errf(w, n, "%s: %s is too large", key, s);
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == s || *p != '\0')
        return cp_yw_errf(w, n, "%s: expected a whole number, not \"%s\"", key, s);
    if (v < lo || v > hi)
        return cp_yw_errf(w, n, "%s: %s is out of range [%llu, %llu]", key, s,
                          (unsigned long long)lo, (unsigned long long)hi);
    *out = v;
    return CP_OK;
}

/* Go's time.ParseDuration, restricted to non-negative ms/s/m/h:
 * "10s", "1m30s", "500ms", "0". */
int cp_yw_duration(cp_yw *w, const yaml_node_t *n, const char *key, int64_t *out_ms)
{
    const char *s = cp_yw_scalar(w, n, key);
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
                return cp_yw_errf(w, n, "%s: %s is longer than 24h", key, s);
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
            return cp_yw_errf(w, n, "%s: %s is longer than 24h", key, s);
    }
    if (p == s)
        goto bad;
    *out_ms = total;
    return CP_OK;
bad:
    return cp_yw_errf(w, n, "%s: expected a duration such as 10s, 500ms or 1m30s, not \"%s\"", key,
                      s);
}

/* ---- lists -------------------------------------------------------------- */

int cp_yw_each_item(cp_yw *w, const yaml_node_t *n, const char *key, cp_yw_item_fn fn, void *out)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return cp_yw_errf(w, n, "%s: expected a list", key);
    size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    size_t max = w->max_list != 0 ? w->max_list : CP_YW_DEFAULT_MAX_LIST;
    if (count > max)
        return cp_yw_errf(w, n, "%s: more than %zu items", key, max);
    for (size_t i = 0; i < count; i++) {
        const yaml_node_t *item = yaml_document_get_node(w->doc, n->data.sequence.items.start[i]);
        if (item == NULL)
            return cp_yw_errf(w, n, "%s: malformed list", key);
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

static int add_string(cp_yw *w, const yaml_node_t *item, const char *key, size_t i, void *out)
{
    strlist *l = out;
    char k[96];
    snprintf(k, sizeof(k), "%s[%zu]", key, i);
    char *s = NULL;
    int rc = cp_yw_string(w, item, k, &s);
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

int cp_yw_strings(cp_yw *w, const yaml_node_t *n, const char *key, char ***items, size_t *count)
{
    strlist l = {NULL, 0};
    int rc = cp_yw_each_item(w, n, key, add_string, &l);
    if (rc != CP_OK) {
        cp_yw_free_list(l.items, l.n);
        return rc;
    }
    cp_yw_free_list(*items, *count);
    *items = l.items;
    *count = l.n;
    return CP_OK;
}

/* ---- mappings ----------------------------------------------------------- */

int cp_yw_each_pair(cp_yw *w, const yaml_node_t *n, const char *where, cp_yw_pair_fn fn, void *ctx)
{
    if (n->type != YAML_MAPPING_NODE)
        return cp_yw_errf(w, n, "%s: expected a mapping (key: value)", where);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        if (k == NULL || v == NULL)
            return cp_yw_errf(w, n, "%s: malformed mapping", where);
        if (k->type != YAML_SCALAR_NODE)
            return cp_yw_errf(w, k, "%s: keys must be plain names", where);
        const char *key = (const char *)k->data.scalar.value;
        for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
            const yaml_node_t *k2 = yaml_document_get_node(w->doc, q->key);
            if (k2 != NULL && k2->type == YAML_SCALAR_NODE &&
                strcmp((const char *)k2->data.scalar.value, key) == 0)
                return cp_yw_errf(w, k, "%s: key \"%s\" is given twice (first at line %d)", where,
                                  key, cp_yw_line(k2));
        }
        int rc = fn(w, key, k, v, ctx);
        if (rc != CP_OK)
            return rc;
    }
    return CP_OK;
}

int cp_yw_unknown_key(cp_yw *w, const yaml_node_t *k, const char *where, const char *key,
                      const char *known)
{
    return cp_yw_errf(w, k, "%s: unknown key \"%s\" (known: %s)", where, key, known);
}
