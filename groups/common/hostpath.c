/* hostpath.c - see hostpath.h. The two-step check (rules, then rules again
 * after link resolution) that the filesystem and volume groups share. */
#include "groups/common/hostpath.h"

#include <string.h>

/* Room for what the host may resolve a parent to (links can lengthen it). */
#define RESOLVED_MAX 32768

char *cp_hostpath_parent(cp_call *call, const char *path)
{
    const char *last = strrchr(path, '\\');
    if (last == NULL || strlen(path) <= 3) /* "X:\" has no parent */
        return NULL;
    size_t plen = (size_t)(last - path);
    char *parent = cp_call_alloc(call, plen + 2);
    if (parent == NULL)
        return NULL;
    memcpy(parent, path, plen);
    if (plen == 2) /* "X:" -> "X:\" */
        parent[plen++] = '\\';
    parent[plen] = '\0';
    return parent;
}

/* The configured directories as the host's resolve takes them. */
static const char *const *anchors(cp_call *call, const cp_pathrules *rules)
{
    size_t n = cp_pathrules_count(rules);
    const char **a = cp_call_alloc(call, (n + 1) * sizeof(*a));
    if (a == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        a[i] = cp_pathrules_dir(rules, i);
    a[n] = NULL;
    return a;
}

int cp_hostpath_confine(cp_call *call, const cp_pathrules *rules, const cp_fs_host *fs,
                        const char *path, bool entry, cp_path_intent intent, const char **out,
                        cp_error *e)
{
    char *norm = cp_call_strdup(call, path);
    char *resolved = cp_call_alloc(call, RESOLVED_MAX);
    const char *const *anchor = anchors(call, rules);
    if (norm == NULL || resolved == NULL || anchor == NULL)
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    size_t n = strlen(norm);
    if (n > 3 && norm[n - 1] == '\\')
        norm[--n] = '\0';
    int rc;
    if (intent == CP_PATH_REPLACE &&
        (rc = cp_pathrules_check_keeps_roots(rules, path, NULL, e)) != CP_OK)
        return rc;

    /* An entry is judged by its parent plus its name; a drive root has no
     * parent and is resolved itself. */
    char *parent = entry ? cp_hostpath_parent(call, norm) : NULL;
    if (entry && parent == NULL && n > 3)
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    rc = fs->ops->resolve(fs->ctx, parent != NULL ? parent : norm, anchor,
                          cp_pathrules_count(rules), resolved, RESOLVED_MAX, e);
    if (rc != CP_OK)
        return rc;
    const char *final = resolved;
    if (parent != NULL) {
        const char *name = strrchr(norm, '\\') + 1;
        size_t rlen = strlen(resolved);
        bool sep = rlen > 0 && resolved[rlen - 1] == '\\';
        char *joined = cp_call_alloc(call, rlen + strlen(name) + 2);
        if (joined == NULL)
            return cp_error_set(e, CP_E_NOMEM, "out of memory");
        memcpy(joined, resolved, rlen);
        if (!sep)
            joined[rlen++] = '\\';
        strcpy(joined + rlen, name);
        final = joined;
    }
    rc = cp_pathrules_check_resolved(rules, path, final, e);
    if (rc == CP_OK && intent == CP_PATH_REPLACE)
        rc = cp_pathrules_check_keeps_roots(rules, path, final, e);
    if (rc == CP_OK)
        *out = norm;
    return rc;
}

int cp_hostpath_confine_entry(cp_call *call, const cp_pathrules *rules, const cp_fs_host *fs,
                              const char *path, cp_path_intent intent, const char **out,
                              cp_error *e)
{
    int rc = cp_pathrules_check(rules, path, e);
    if (rc != CP_OK)
        return rc;
    return cp_hostpath_confine(call, rules, fs, path, true, intent, out, e);
}

typedef struct guard_arg {
    const cp_pathrules *rules;
    const char *path;
    cp_path_intent intent;
} guard_arg;

static int judge(void *arg, const char *final, cp_error *e)
{
    const guard_arg *a = arg;
    int rc = cp_pathrules_check_resolved(a->rules, a->path, final, e);
    if (rc == CP_OK && a->intent == CP_PATH_REPLACE)
        rc = cp_pathrules_check_keeps_roots(a->rules, a->path, final, e);
    return rc;
}

cp_fs_guard *cp_hostpath_guard(cp_call *call, const cp_pathrules *rules, const char *path,
                               cp_path_intent intent)
{
    cp_fs_guard *g = cp_call_alloc(call, sizeof(*g));
    guard_arg *a = cp_call_alloc(call, sizeof(*a));
    const char *const *anchor = anchors(call, rules);
    if (g == NULL || a == NULL || anchor == NULL)
        return NULL;
    *a = (guard_arg){rules, path, intent};
    *g = (cp_fs_guard){anchor, cp_pathrules_count(rules), judge, a};
    return g;
}

const char *cp_hostpath_with_drive(cp_call *call, const char *path)
{
    if (path[0] != '\\' || path[1] == '\\')
        return path;
    size_t n = strlen(path);
    char *out = cp_call_alloc(call, n + 3);
    if (out == NULL)
        return NULL;
    out[0] = cp_fs_system_drive();
    out[1] = ':';
    memcpy(out + 2, path, n + 1);
    return out;
}

int cp_hostpath_follow(cp_call *call, const cp_pathrules *rules, const cp_fs_host *fs,
                       const char *path, const char **out, cp_error *e)
{
    char *resolved = cp_call_alloc(call, RESOLVED_MAX);
    const char *const *anchor = anchors(call, rules);
    if (resolved == NULL || anchor == NULL)
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    int rc = fs->ops->resolve(fs->ctx, path, anchor, cp_pathrules_count(rules), resolved,
                              RESOLVED_MAX, e);
    if (rc == CP_OK)
        rc = cp_pathrules_check_resolved(rules, path, resolved, e);
    if (rc == CP_OK) {
        size_t n = strlen(resolved);
        if (n > 3 && resolved[n - 1] == '\\')
            resolved[n - 1] = '\0';
        *out = resolved;
    }
    return rc;
}
