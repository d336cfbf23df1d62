/* yamlwalk.h - a strict walk over a libyaml document, for the config
 * loader and the simulator fixtures: typed values, lists and mappings read
 * with every
 * problem reported as "<file>:<line>: <key path>: <why>" in a cp_error
 * (INVALID_ARGUMENT; CP_E_NOMEM when out of memory). Each function returns
 * CP_OK or that status. Portable C. */
#ifndef CP_YAMLWALK_H
#define CP_YAMLWALK_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "base/status.h"

/* Items in a list when the walk sets no cap of its own. */
#define CP_YW_DEFAULT_MAX_LIST 256

/* The walk's state: the document, where errors go, the most items a list
 * may hold (0: CP_YW_DEFAULT_MAX_LIST), and the caller's own state for its
 * callbacks (the walker never reads it). */
typedef struct cp_yw {
    yaml_document_t *doc;
    const char *file;
    cp_error *e;
    size_t max_list;
    void *ctx;
} cp_yw;

/* 1-based line of a node. */
int cp_yw_line(const yaml_node_t *n);

/* Sets w->e to "<file>:<line of n>: <message>"; returns INVALID_ARGUMENT. */
int cp_yw_errf(cp_yw *w, const yaml_node_t *n, const char *fmt, ...) CP_PRINTF(3, 4);

/* malloc'd copy (NULL when out of memory); frees a list of them. */
char *cp_yw_strdup(const char *s);
void cp_yw_free_list(char **list, size_t n);

/* A scalar's text (NULL after an error: not a scalar, or an embedded NUL). */
const char *cp_yw_scalar(cp_yw *w, const yaml_node_t *n, const char *key);

/* A non-empty string, replacing *out (freed). */
int cp_yw_string(cp_yw *w, const yaml_node_t *n, const char *key, char **out);

/* true / false only (no YAML 1.1 yes/no/on/off). */
int cp_yw_bool(cp_yw *w, const yaml_node_t *n, const char *key, int *out);

/* A decimal whole number in [lo, hi]. */
int cp_yw_uint(cp_yw *w, const yaml_node_t *n, const char *key, uint64_t lo, uint64_t hi,
               uint64_t *out);

/* A Go duration of ms/s/m/h parts ("10s", "1m30s", "500ms", "0"), at most
 * 24h, in milliseconds. */
int cp_yw_duration(cp_yw *w, const yaml_node_t *n, const char *key, int64_t *out_ms);

/* Calls fn for each item of a list of at most w->max_list items. */
typedef int (*cp_yw_item_fn)(cp_yw *w, const yaml_node_t *item, const char *key, size_t i,
                             void *out);
int cp_yw_each_item(cp_yw *w, const yaml_node_t *n, const char *key, cp_yw_item_fn fn, void *out);

/* A list of non-empty strings, replacing *items (freed). */
int cp_yw_strings(cp_yw *w, const yaml_node_t *n, const char *key, char ***items, size_t *count);

/* Calls fn(key, value) for each pair of a mapping; refuses keys that are
 * not plain scalars and keys given twice. */
typedef int (*cp_yw_pair_fn)(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                             void *ctx);
int cp_yw_each_pair(cp_yw *w, const yaml_node_t *n, const char *where, cp_yw_pair_fn fn, void *ctx);

/* The error for a key the schema does not have, listing the known ones. */
int cp_yw_unknown_key(cp_yw *w, const yaml_node_t *k, const char *where, const char *key,
                      const char *known);

#endif
