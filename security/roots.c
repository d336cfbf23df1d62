/* roots.c - see roots.h. */
#include "security/roots.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const cp_root_rule cp_roots_portable[] = {
    {"C:\\Windows", "%SystemRoot%", true},
    {"C:\\Program Files", "Program Files", true},
    {"C:\\Program Files (x86)", "Program Files (x86)", true},
    {"C:\\ProgramData", "ProgramData", false},
    {"C:\\Users", "the user profiles directory", false},
};
const size_t cp_roots_portable_n = sizeof(cp_roots_portable) / sizeof(cp_roots_portable[0]);

#define NORM_MAX 1024

/* Upper-case, backslashes, no \\?\ prefix, no repeated separators, "."
 * and ".." resolved (never above the drive or the share), no trailing
 * separator: "C:" for a drive root, "\\S\H" for a share. False when too
 * long. */
static bool norm(const char *in, char *out)
{
    char tmp[NORM_MAX];
    size_t n = strlen(in);
    if (n >= sizeof(tmp))
        return false;
    for (size_t i = 0; i <= n; i++)
        tmp[i] = in[i] == '/' ? '\\' : (char)toupper((unsigned char)in[i]);
    const char *p = tmp;
    size_t len = 0, keep = 0; /* components ".." may not remove */
    if (strncmp(p, "\\\\?\\UNC\\", 8) == 0 || strncmp(p, "\\\\.\\UNC\\", 8) == 0) {
        p += 8;
        keep = 2;
    } else if (strncmp(p, "\\\\?\\", 4) == 0 || strncmp(p, "\\\\.\\", 4) == 0) {
        p += 4;
        keep = 1;
    } else if (p[0] == '\\' && p[1] == '\\') {
        p += 2;
        keep = 2;
    } else if (isalpha((unsigned char)p[0]) && p[1] == ':') {
        keep = 1;
    }
    if (keep == 2) {
        out[len++] = '\\';
        out[len++] = '\\';
    }
    size_t start = len, ncomp = 0;
    while (*p != '\0') {
        while (*p == '\\')
            p++;
        const char *s = p;
        while (*p != '\0' && *p != '\\')
            p++;
        size_t k = (size_t)(p - s);
        if (k == 0 || (k == 1 && s[0] == '.'))
            continue;
        if (k == 2 && s[0] == '.' && s[1] == '.') {
            if (ncomp > keep) { /* drop the last component */
                while (len > start && out[len - 1] != '\\')
                    len--;
                if (len > start)
                    len--;
                ncomp--;
            }
            continue;
        }
        if (ncomp > 0)
            out[len++] = '\\';
        memcpy(out + len, s, k);
        len += k;
        ncomp++;
    }
    out[len] = '\0';
    return true;
}

/* Whether a (normalised) is b or lies below it. */
static bool within(const char *a, const char *b)
{
    size_t n = strlen(b);
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '\\');
}

static bool is_drive_root(const char *p)
{
    if (p[0] == '\0' || strcmp(p, "\\") == 0)
        return true; /* "\": the root of the current drive */
    if (isalpha((unsigned char)p[0]) && p[1] == ':' && p[2] == '\0')
        return true;
    if (strncmp(p, "VOLUME{", 7) == 0 && strchr(p, '\\') == NULL)
        return true;
    if (p[0] == '\\' && p[1] == '\\') { /* \\server\share */
        const char *s = strchr(p + 2, '\\');
        return s == NULL || strchr(s + 1, '\\') == NULL;
    }
    return false;
}

bool cp_roots_judge(const char *path, const cp_root_rule *rules, size_t n, char *why, size_t cap)
{
    char p[NORM_MAX], r[NORM_MAX];
    if (!norm(path, p)) {
        snprintf(why, cap, "too long");
        return false;
    }
    if (is_drive_root(p)) {
        snprintf(why, cap, "a drive root: callers could change any file on the drive");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!norm(rules[i].path, r) || r[0] == '\0')
            continue;
        if (strcmp(p, r) == 0 || (rules[i].below && within(p, r))) {
            snprintf(why, cap, "%s %s (%s), a system directory",
                     strcmp(p, r) == 0 ? "is" : "within", rules[i].path, rules[i].what);
            return false;
        }
        if (within(r, p)) {
            snprintf(why, cap, "holds %s (%s), a system directory", rules[i].path, rules[i].what);
            return false;
        }
    }
    return true;
}
