/* simfixture_sim.c - see simfixture_sim.h. */
#include "sim/simfixture_sim.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/storage.h"

typedef struct section_ctx {
    const char *section;
    cp_simfx_fn fn;
    void *ctx;
} section_ctx;

static int root_pair(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                     void *arg)
{
    (void)k;
    section_ctx *c = arg;
    return strcmp(key, c->section) == 0 ? c->fn(w, v, c->ctx) : CP_OK;
}

const char *cp_simfx_default_path(void)
{
    const char *path = getenv(CP_STORAGE_SIM_FIXTURE_ENV);
    return path != NULL && path[0] != '\0' ? path : NULL;
}

int cp_simfx_load(const char *who, const char *path, const char *text, const char *section,
                  cp_simfx_fn fn, void *ctx, cp_error *e)
{
    char file[512];
    snprintf(file, sizeof(file), "%s: fixture %s", who, path != NULL ? path : "(string)");
    FILE *f = NULL;
    if (path != NULL && (f = fopen(path, "rb")) == NULL)
        return cp_error_set(e, CP_E_NOT_FOUND, "%s: cannot open fixture %s", who, path);
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc = CP_OK;
    if (!yaml_parser_initialize(&parser)) {
        rc = cp_error_set(e, CP_E_NOMEM, "%s: out of memory", who);
    } else {
        if (f != NULL)
            yaml_parser_set_input_file(&parser, f);
        else
            yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
        if (!yaml_parser_load(&parser, &doc)) {
            rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s:%lu: %s", file,
                              (unsigned long)parser.problem_mark.line + 1,
                              parser.problem != NULL ? parser.problem : "YAML error");
        } else {
            cp_yw w = {.doc = &doc, .file = file, .e = e, .max_list = CP_SIMFX_MAX_LIST};
            const yaml_node_t *root = yaml_document_get_root_node(&doc);
            section_ctx c = {section, fn, ctx};
            if (root != NULL)
                rc = cp_yw_each_pair(&w, root, "(top level)", root_pair, &c);
            yaml_document_delete(&doc);
        }
        yaml_parser_delete(&parser);
    }
    if (f != NULL)
        fclose(f);
    return rc;
}

const yaml_node_t *cp_simfx_get(cp_yw *w, const yaml_node_t *n, const char *key)
{
    if (n == NULL || n->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
        if (k != NULL && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(w->doc, p->value);
    }
    return NULL;
}

typedef struct keys_ctx {
    const char *where;
    const char *const *known;
} keys_ctx;

static int check_key(cp_yw *w, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                     void *arg)
{
    (void)v;
    const keys_ctx *c = arg;
    char list[256] = "";
    for (size_t i = 0; c->known[i] != NULL; i++) {
        if (strcmp(key, c->known[i]) == 0)
            return CP_OK;
        size_t used = strlen(list);
        snprintf(list + used, sizeof(list) - used, "%s%s", i > 0 ? ", " : "", c->known[i]);
    }
    return cp_yw_unknown_key(w, k, c->where, key, list);
}

int cp_simfx_keys(cp_yw *w, const yaml_node_t *n, const char *where, const char *const *known)
{
    keys_ctx c = {where, known};
    return cp_yw_each_pair(w, n, where, check_key, &c);
}

int cp_simfx_size(cp_yw *w, const yaml_node_t *n, const char *key, uint64_t *out)
{
    static const struct {
        const char *sfx;
        uint64_t mul;
    } units[] = {
        {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40}};
    const char *s = cp_yw_scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    uint64_t v = 0, mul = 1;
    const char *p = s;
    for (; *p >= '0' && *p <= '9' && v < (1ull << 50); p++)
        v = v * 10 + (uint64_t)(*p - '0');
    bool unit_ok = *p == '\0';
    for (size_t i = 0; !unit_ok && i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(p, units[i].sfx) == 0) {
            mul = units[i].mul;
            unit_ok = true;
        }
    if (p == s || !unit_ok)
        return cp_yw_errf(w, n, "%s: expected a size such as 1GiB (KiB, MiB, GiB, TiB), not \"%s\"",
                          key, s);
    if (v > (1ull << 50) / mul || v * mul < (1ull << 20))
        return cp_yw_errf(w, n, "%s: %s is out of range [1MiB, 1PiB]", key, s);
    *out = v * mul;
    return CP_OK;
}

int cp_simfx_text(cp_yw *w, const yaml_node_t *n, const char *key, char *out, size_t cap)
{
    const char *s = cp_yw_scalar(w, n, key);
    if (s == NULL)
        return CP_E_INVALID_ARGUMENT;
    if (s[0] == '\0')
        return cp_yw_errf(w, n, "%s: must not be empty", key);
    if (strlen(s) >= cap)
        return cp_yw_errf(w, n, "%s: longer than %zu bytes", key, cap - 1);
    memcpy(out, s, strlen(s) + 1);
    return CP_OK;
}

int cp_simfx_opt_bool(cp_yw *w, const yaml_node_t *m, const char *where, const char *key, bool *out)
{
    const yaml_node_t *n = cp_simfx_get(w, m, key);
    if (n == NULL)
        return CP_OK;
    char path[160];
    cp_simfx_path(path, sizeof(path), "%s.%s", where, key);
    int v = 0, rc = cp_yw_bool(w, n, path, &v);
    if (rc == CP_OK)
        *out = v != 0;
    return rc;
}

int cp_simfx_opt_text(cp_yw *w, const yaml_node_t *m, const char *where, const char *key, char *out,
                      size_t cap)
{
    const yaml_node_t *n = cp_simfx_get(w, m, key);
    if (n == NULL)
        return CP_OK;
    char path[160];
    cp_simfx_path(path, sizeof(path), "%s.%s", where, key);
    return cp_simfx_text(w, n, path, out, cap);
}

bool cp_simfx_match(const char *pattern, const char *s)
{
    if (*pattern == '\0')
        return *s == '\0';
    if (*pattern == '*')
        return cp_simfx_match(pattern + 1, s) || (*s != '\0' && cp_simfx_match(pattern, s + 1));
    return *s != '\0' && tolower((unsigned char)*pattern) == tolower((unsigned char)*s) &&
           cp_simfx_match(pattern + 1, s + 1);
}

const char *cp_simfx_path(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    return out;
}

int cp_simfx_list(cp_yw *w, const yaml_node_t *m, const char *where, const char *key,
                  const yaml_node_t **list, size_t *n)
{
    *list = cp_simfx_get(w, m, key);
    *n = 0;
    if (*list == NULL)
        return CP_OK;
    if ((*list)->type != YAML_SEQUENCE_NODE)
        return cp_yw_errf(w, *list, "%s.%s: expected a list", where, key);
    *n = (size_t)((*list)->data.sequence.items.top - (*list)->data.sequence.items.start);
    if (*n > CP_SIMFX_MAX_LIST)
        return cp_yw_errf(w, *list, "%s.%s: more than %d items", where, key, CP_SIMFX_MAX_LIST);
    return CP_OK;
}

const yaml_node_t *cp_simfx_item(cp_yw *w, const yaml_node_t *list, size_t i)
{
    return yaml_document_get_node(w->doc, list->data.sequence.items.start[i]);
}
