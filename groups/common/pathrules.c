/* pathrules.c - path confinement to the kubelet path and working dirs.
 * The rules and their order are documented in pathrules.h. */
#include "groups/common/pathrules.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

/* Paths in messages are cut here: a request may carry a megabyte. */
#define SHOWN_MAX 300

struct cp_pathrules {
    size_t n;
    char **dirs;        /* display form: "C:\var\lib\kubelet"; a drive root is "C:\" */
    const char **flags; /* "-working-dir" or "-kubelet-path": where each came from */
    size_t *cmp_len;    /* bytes compared: without a trailing '\' ("C:" for a root) */
    char *dirs_text;    /* "C:\w1 C:\var\lib\kubelet", as Go prints a []string */
    /* Paths refused, for the metrics. Behind a pointer: the checks take the
     * policy const, and the count is not part of it. */
    atomic_uint_fast64_t *refused;
};

/* rc, counted when it refuses a path. */
static int counted(const cp_pathrules *r, int rc)
{
    if (rc == CP_E_INVALID_ARGUMENT)
        atomic_fetch_add_explicit(r->refused, 1, memory_order_relaxed);
    return rc;
}

/* --- small helpers ---------------------------------------------------- */

/* At most SHOWN_MAX bytes of p, never ending inside a UTF-8 character. */
static int shown_len(const char *p)
{
    return (int)cp_utf8_cut(p, strlen(p), SHOWN_MAX);
}

static const char *shown_more(const char *p)
{
    return strlen(p) > SHOWN_MAX ? "..." : "";
}

static bool is_ascii_alpha(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Locale-independent: only ASCII letters fold. */
static bool ascii_case_equal(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return false;
    return true;
}

static bool is_drive_absolute(const char *p)
{
    return is_ascii_alpha(p[0]) && p[1] == ':' && p[2] == '\\';
}

/* Length of p without one trailing '\'; a drive root "X:\" gives 2. */
static size_t compare_len(const char *p)
{
    size_t n = strlen(p);
    if (n > 0 && p[n - 1] == '\\')
        n--;
    return n;
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
 * Overlong forms matter: a lax decoder would turn C0 AE into '.'. */
static bool valid_utf8(const unsigned char *s)
{
    while (*s != 0) {
        unsigned c = *s;
        size_t n;
        unsigned min;
        if (c < 0x80) {
            s++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            n = 1, min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2, min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3, min = 0x10000;
        } else {
            return false;
        }
        unsigned cp = c & (0x3fu >> n);
        for (size_t i = 1; i <= n; i++) {
            if ((s[i] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        s += n + 1;
    }
    return true;
}

/* --- the rules ---------------------------------------------------------- */

static int bad_chars(const char *p, const char *why, cp_error *e)
{
    return cp_error_set(e, CP_E_INVALID_ARGUMENT, "path contains invalid characters: %.*s%s (%s)",
                        shown_len(p), p, shown_more(p), why);
}

/* Rule 3: characters after the drive prefix (upstream skips "X:\" only
 * when the path has one; so do we). */
static int check_chars(const char *p, cp_error *e)
{
    const char *rest = is_drive_absolute(p) ? p + 3 : p;
    for (const char *s = rest; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case ':':
            return bad_chars(p, "':' after the drive would name an alternate data stream", e);
        case '/':
            return bad_chars(p, "'/' is not accepted as a separator; use '\\'", e);
        case '"':
        case '?':
        case '*':
        case '|':
        case '<':
        case '>': {
            char why[48];
            snprintf(why, sizeof(why), "wildcard or reserved character '%c'", c);
            return bad_chars(p, why, e);
        }
        default:
            break;
        }
        if (c < 0x20)
            return bad_chars(p, "control character", e);
        if (c == '.' && s[1] == '.')
            return bad_chars(p, "'..' is not allowed", e);
    }
    if (!valid_utf8((const unsigned char *)p))
        return bad_chars(p, "not valid UTF-8", e);
    return CP_OK;
}

/* Rule 5: components of a drive-absolute path. */
static int check_components(const char *p, cp_error *e)
{
    const char *s = p + 3;
    while (*s != '\0') {
        const char *end = strchr(s, '\\');
        if (end == NULL)
            end = s + strlen(s);
        size_t n = (size_t)(end - s);
        const char *why = NULL;
        if (n == 0)
            why = "empty component ('\\\\' inside the path)";
        else if (n == 1 && s[0] == '.')
            why = "'.' component";
        else if (s[n - 1] == '.' || s[n - 1] == ' ')
            why = "component ends with '.' or ' ', which Windows strips";
        if (why != NULL)
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "invalid path %.*s%s: %s", shown_len(p),
                                p, shown_more(p), why);
        if (*end == '\0')
            break;
        s = end + 1; /* a single trailing '\' ends the loop here */
    }
    return CP_OK;
}

/* Rules 1-5: everything but confinement. */
static int check_syntax(const char *p, cp_error *e)
{
    size_t len = strlen(p);
    if (len > CP_PATHRULES_MAX_LEN)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "path length %lu exceeds maximum characters: %d (path %.*s%s)",
                            (unsigned long)len, CP_PATHRULES_MAX_LEN, shown_len(p), p,
                            shown_more(p));
    if (p[0] == '\\') {
        const char *kind = "a path must start with a drive letter";
        if (strncmp(p, "\\\\?\\", 4) == 0)
            kind = "\\\\?\\ paths are not allowed";
        else if (strncmp(p, "\\\\.\\", 4) == 0)
            kind = "device paths are not allowed";
        else if (p[1] == '\\')
            kind = "UNC paths are not allowed";
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "invalid character \\ at beginning of path: %s (%s)", p, kind);
    }
    int rc = check_chars(p, e);
    if (rc != CP_OK)
        return rc;
    if (!is_drive_absolute(p))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "not an absolute Windows path: %s", p);
    return check_components(p, e);
}

static bool within(const cp_pathrules *r, const char *p)
{
    size_t plen = compare_len(p);
    for (size_t i = 0; i < r->n; i++) {
        size_t d = r->cmp_len[i];
        if (plen >= d && ascii_case_equal(p, r->dirs[i], d) && (plen == d || p[d] == '\\'))
            return true;
    }
    return false;
}

static int check(const cp_pathrules *r, const char *path, cp_error *e)
{
    if (path == NULL)
        path = "";
    int rc = check_syntax(path, e);
    if (rc != CP_OK)
        return rc;
    if (!within(r, path))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "path: %s is not within the working directories: [%s]", path,
                            r->dirs_text);
    return CP_OK;
}

static int check_resolved(const cp_pathrules *r, const char *path, const char *resolved,
                          cp_error *e)
{
    bool ok = is_drive_absolute(resolved);
    for (const char *s = resolved; ok && *s != '\0'; s++) {
        /* a "." or ".." component: the host must hand back a final path */
        if (*s == '\\' && s[1] == '.' &&
            (s[2] == '\\' || s[2] == '\0' || (s[2] == '.' && (s[3] == '\\' || s[3] == '\0'))))
            ok = false;
    }
    if (!ok || !within(r, resolved))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "path: %s resolves to %s, which is not within the working "
                            "directories: [%s]",
                            path, resolved, r->dirs_text);
    return CP_OK;
}

/* The index of a configured directory that p (drive-absolute) is or is an
 * ancestor of, or -1. Same comparison as within():
 * ASCII case folded, one trailing '\' ignored, separator boundary. */
static long root_at_or_below(const cp_pathrules *r, const char *p)
{
    size_t plen = compare_len(p);
    for (size_t i = 0; i < r->n; i++) {
        size_t d = r->cmp_len[i];
        if (d >= plen && ascii_case_equal(p, r->dirs[i], plen) &&
            (d == plen || r->dirs[i][plen] == '\\'))
            return (long)i;
    }
    return -1;
}

static int check_keeps_roots(const cp_pathrules *r, const char *path, const char *resolved,
                             cp_error *e)
{
    if (path == NULL)
        path = "";
    const char *judged = resolved != NULL ? resolved : path;
    if (!is_drive_absolute(judged))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "path: %.*s%s is not a drive-absolute path",
                            shown_len(path), path, shown_more(path));
    long i = root_at_or_below(r, judged);
    if (i < 0)
        return CP_OK;
    const char *dir = r->dirs[i];
    char how[SHOWN_MAX + 64] = "";
    if (resolved != NULL && strcmp(resolved, path) != 0)
        snprintf(how, sizeof(how), " (it resolves to %.*s%s)", shown_len(resolved), resolved,
                 shown_more(resolved));
    if (compare_len(judged) == r->cmp_len[i])
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "path: %.*s%s%s is the configured directory %s (%s): it may be read "
                            "or created, never removed, emptied, replaced or mounted over",
                            shown_len(path), path, shown_more(path), how, dir, r->flags[i]);
    return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                        "path: %.*s%s%s contains the configured directory %s (%s), which may be "
                        "read or created, never removed, emptied, replaced or mounted over",
                        shown_len(path), path, shown_more(path), how, dir, r->flags[i]);
}

int cp_pathrules_check(const cp_pathrules *r, const char *path, cp_error *e)
{
    return counted(r, check(r, path, e));
}

int cp_pathrules_check_resolved(const cp_pathrules *r, const char *path, const char *resolved,
                                cp_error *e)
{
    return counted(r, check_resolved(r, path, resolved, e));
}

int cp_pathrules_check_keeps_roots(const cp_pathrules *r, const char *path, const char *resolved,
                                   cp_error *e)
{
    return counted(r, check_keeps_roots(r, path, resolved, e));
}

uint64_t cp_pathrules_refused(const cp_pathrules *r)
{
    return (uint64_t)atomic_load_explicit(r->refused, memory_order_relaxed);
}

/* --- configuration ------------------------------------------------------ */

static int add_dir(cp_pathrules *r, const char *flag, const char *dir, cp_error *e)
{
    if (dir == NULL || dir[0] == '\0')
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: an empty directory is not allowed",
                            flag);
    cp_error why;
    if (check_syntax(dir, &why) != CP_OK)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "%s %s: must be an absolute local path (X:\\...): %s", flag, dir,
                            why.msg);
    size_t n = strlen(dir);
    while (n > 3 && dir[n - 1] == '\\') /* check_syntax allowed one at most */
        n--;
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return cp_error_set(e, CP_E_NOMEM, "pathrules: out of memory");
    memcpy(copy, dir, n);
    copy[n] = '\0';
    r->dirs[r->n] = copy;
    r->flags[r->n] = flag;
    r->cmp_len[r->n] = compare_len(copy);
    r->n++;
    return CP_OK;
}

static int build_text(cp_pathrules *r, cp_error *e)
{
    size_t len = 1;
    for (size_t i = 0; i < r->n; i++)
        len += strlen(r->dirs[i]) + 1;
    r->dirs_text = malloc(len);
    if (r->dirs_text == NULL)
        return cp_error_set(e, CP_E_NOMEM, "pathrules: out of memory");
    char *w = r->dirs_text;
    for (size_t i = 0; i < r->n; i++) {
        if (i > 0)
            *w++ = ' ';
        size_t n = strlen(r->dirs[i]);
        memcpy(w, r->dirs[i], n);
        w += n;
    }
    *w = '\0';
    return CP_OK;
}

int cp_pathrules_new(const char *kubelet_path, const char *const *working_dirs,
                     size_t n_working_dirs, cp_pathrules **out, cp_error *e)
{
    *out = NULL;
    int rc = CP_E_NOMEM;
    cp_pathrules *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return cp_error_set(e, CP_E_NOMEM, "pathrules: out of memory");
    size_t cap = n_working_dirs + 1;
    r->dirs = calloc(cap, sizeof(*r->dirs));
    r->flags = calloc(cap, sizeof(*r->flags));
    r->cmp_len = calloc(cap, sizeof(*r->cmp_len));
    r->refused = calloc(1, sizeof(*r->refused));
    if (r->dirs == NULL || r->flags == NULL || r->cmp_len == NULL || r->refused == NULL) {
        rc = cp_error_set(e, CP_E_NOMEM, "pathrules: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n_working_dirs; i++) {
        rc = add_dir(r, "-working-dir", working_dirs[i], e);
        if (rc != CP_OK)
            goto fail;
    }
    rc = add_dir(r, "-kubelet-path", kubelet_path, e);
    if (rc != CP_OK)
        goto fail;
    rc = build_text(r, e);
    if (rc != CP_OK)
        goto fail;
    *out = r;
    return CP_OK;
fail:
    cp_pathrules_free(r);
    return rc;
}

void cp_pathrules_free(cp_pathrules *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->dirs[i]);
    free(r->dirs);
    free(r->flags);
    free(r->cmp_len);
    free(r->dirs_text);
    free(r->refused);
    free(r);
}

size_t cp_pathrules_count(const cp_pathrules *r)
{
    return r->n;
}

const char *cp_pathrules_dir(const cp_pathrules *r, size_t i)
{
    return i < r->n ? r->dirs[i] : NULL;
}
