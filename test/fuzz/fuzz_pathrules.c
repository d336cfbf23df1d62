/* fuzz_pathrules.c - libFuzzer target: the path validator
 * (groups/common/pathrules.h).
 *
 * Input: byte 0 picks the mode; the rest is split at NUL bytes.
 *   mode even: rules = kubelet C:\var\lib\kubelet + working dirs D:\work\,
 *              C:\var\lib\other; part 0 is checked as a request path, part
 *              1 as what the host resolved it to.
 *   mode odd:  part 0 is the kubelet path, part 1 a working dir (building
 *              the rules may fail), part 2 the request path.
 *
 * Oracles (an independent reading of the rules in pathrules.h): a path the
 * validator accepts is at most 260 bytes, drive-absolute, valid UTF-8,
 * holds no "..", '/', control character, wildcard or second ':', no empty,
 * "." or dot/space-ending component, and lies inside a configured
 * directory with a separator boundary; the verdict does not change when
 * ASCII letters change case; every refusal is INVALID_ARGUMENT with a
 * message. A resolved path accepted by the second check is drive-absolute,
 * inside a directory and has no "." or ".." component.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups/common/pathrules.h"
#include "dispatch/wirecheck.h"

static cp_pathrules *fixed;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const wd[] = {"D:\\work\\", "C:\\var\\lib\\other"};
    cp_error e;
    if (cp_pathrules_new("C:\\var\\lib\\kubelet", wd, 2, &fixed, &e) != CP_OK)
        abort();
    return 0;
}

static void fail(const char *what, const char *path)
{
    fprintf(stderr, "fuzz_pathrules: %s: \"%s\"\n", what, path);
    abort();
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool inside(const cp_pathrules *r, const char *p)
{
    size_t plen = strlen(p);
    if (plen > 0 && p[plen - 1] == '\\')
        plen--;
    for (size_t i = 0; i < cp_pathrules_count(r); i++) {
        const char *d = cp_pathrules_dir(r, i);
        size_t dl = strlen(d);
        if (dl > 0 && d[dl - 1] == '\\')
            dl--;
        if (plen < dl)
            continue;
        bool eq = true;
        for (size_t k = 0; k < dl && eq; k++)
            eq = lower(p[k]) == lower(d[k]);
        if (eq && (plen == dl || p[dl] == '\\'))
            return true;
    }
    return false;
}

static bool drive_absolute(const char *p)
{
    char c = lower(p[0]);
    return c >= 'a' && c <= 'z' && p[1] == ':' && p[2] == '\\';
}

static void check_accepted(const cp_pathrules *r, const char *p)
{
    size_t n = strlen(p);
    if (n > CP_PATHRULES_MAX_LEN)
        fail("accepted a path over 260 bytes", p);
    if (!drive_absolute(p))
        fail("accepted a path that is not drive-absolute", p);
    if (!cp_utf8_valid((const uint8_t *)p, n))
        fail("accepted invalid UTF-8", p);
    if (strstr(p, "..") != NULL)
        fail("accepted ..", p);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || strchr("/?*|<>\"", c) != NULL || (c == ':' && i != 1))
            fail("accepted a forbidden character", p);
    }
    /* components after "X:\" */
    const char *s = p + 3;
    while (*s != '\0') {
        const char *end = strchr(s, '\\');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len == 0)
            fail("accepted an empty component", p);
        if (s[len - 1] == '.' || s[len - 1] == ' ')
            fail("accepted a component ending in '.' or ' '", p);
        if (end == NULL)
            break;
        s = end + 1; /* one trailing '\' leaves "" here: the loop ends */
    }
    if (!inside(r, p))
        fail("accepted a path outside every configured directory", p);
}

static int check(const cp_pathrules *r, const char *p)
{
    cp_error e = {0};
    int rc = cp_pathrules_check(r, p, &e);
    if (rc == CP_OK) {
        check_accepted(r, p);
    } else if (rc != CP_E_INVALID_ARGUMENT || e.msg[0] == '\0') {
        fail("refused without INVALID_ARGUMENT and a message", p);
    }
    return rc;
}

static void check_resolved(const cp_pathrules *r, const char *p, const char *resolved)
{
    cp_error e = {0};
    int rc = cp_pathrules_check_resolved(r, p, resolved, &e);
    if (rc != CP_OK) {
        if (rc != CP_E_INVALID_ARGUMENT || e.msg[0] == '\0')
            fail("resolved path refused without INVALID_ARGUMENT and a message", resolved);
        return;
    }
    if (!drive_absolute(resolved) || !inside(r, resolved))
        fail("accepted a resolved path outside the directories", resolved);
    for (const char *s = resolved; *s != '\0'; s++)
        if (*s == '\\' && s[1] == '.' &&
            (s[2] == '\\' || s[2] == '\0' || (s[2] == '.' && (s[3] == '\\' || s[3] == '\0'))))
            fail("accepted a resolved path with a . or .. component", resolved);
}

static void swapcase(char *s)
{
    for (; *s != '\0'; s++) {
        if (*s >= 'a' && *s <= 'z')
            *s = (char)(*s - 'a' + 'A');
        else if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    /* parts[i]: NUL-separated, each NUL-terminated in buf */
    char *buf = malloc(size + 3);
    memcpy(buf, data + 1, size - 1);
    memset(buf + size - 1, 0, 4);
    const char *parts[3] = {"", "", ""};
    size_t k = 0;
    char *s = buf, *end = buf + size - 1;
    while (k < 3 && s <= end) {
        parts[k++] = s;
        s += strlen(s) + 1;
    }

    const cp_pathrules *r = fixed;
    cp_pathrules *own = NULL;
    const char *path = parts[0], *other = parts[1];
    if (mode & 1) {
        cp_error e = {0};
        const char *wd[] = {parts[1]};
        int rc = cp_pathrules_new(parts[0], wd, 1, &own, &e);
        if (rc != CP_OK) {
            if (own != NULL || e.msg[0] == '\0')
                fail("cp_pathrules_new failed without a message, or set *out", parts[0]);
            free(buf);
            return 0;
        }
        /* Each configured directory is itself an acceptable path. */
        for (size_t i = 0; i < cp_pathrules_count(own); i++)
            if (check(own, cp_pathrules_dir(own, i)) != CP_OK)
                fail("a configured directory is not accepted", cp_pathrules_dir(own, i));
        r = own;
        path = parts[2];
        other = parts[2];
    }

    int rc = check(r, path);
    char *flipped = strdup(path);
    swapcase(flipped);
    if ((check(r, flipped) == CP_OK) != (rc == CP_OK))
        fail("the verdict changed with the case of ASCII letters", path);
    free(flipped);
    check_resolved(r, path, other);

    cp_pathrules_free(own);
    free(buf);
    return 0;
}
