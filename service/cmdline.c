/* cmdline.c - see cmdline.h. The rules are those of CommandLineToArgvW
 * and the Microsoft C runtime: 2n backslashes + quote -> n backslashes
 * and a quote that toggles quoting; 2n+1 backslashes + quote -> n
 * backslashes and a literal quote; backslashes elsewhere are literal. */
#include "service/cmdline.h"

#include <stdlib.h>
#include <string.h>

bool cp_cmdline_append(char *out, size_t cap, const char *arg)
{
    size_t len = strlen(out), start = len;
    bool quote = arg[0] == '\0' || strpbrk(arg, " \t\n\v\"") != NULL;
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (len + 1 >= cap)                                                                        \
            goto full;                                                                             \
        out[len++] = (c);                                                                          \
    } while (0)
    if (start > 0)
        PUT(' ');
    if (!quote) {
        for (const char *p = arg; *p != '\0'; p++)
            PUT(*p);
    } else {
        PUT('"');
        for (const char *p = arg;; p++) {
            size_t bs = 0;
            while (*p == '\\') {
                bs++;
                p++;
            }
            if (*p == '\0') { /* before the closing quote: double them all */
                for (size_t i = 0; i < 2 * bs; i++)
                    PUT('\\');
                break;
            }
            if (*p == '"') {
                for (size_t i = 0; i < 2 * bs + 1; i++)
                    PUT('\\');
            } else {
                for (size_t i = 0; i < bs; i++)
                    PUT('\\');
            }
            PUT(*p);
        }
        PUT('"');
    }
#undef PUT
    out[len] = '\0';
    return true;
full:
    out[start] = '\0';
    return false;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

/* Length of the unquoted program at s: up to a ".exe" followed by a
 * blank or the end, else up to the first blank. */
static size_t program_len(const char *s)
{
    for (size_t i = 0; s[i] != '\0'; i++)
        if (s[i] == '.' && lower(s[i + 1]) == 'e' && lower(s[i + 2]) == 'x' &&
            lower(s[i + 3]) == 'e' && (s[i + 4] == '\0' || blank(s[i + 4])))
            return i + 4;
    size_t n = 0;
    while (s[n] != '\0' && !blank(s[n]))
        n++;
    return n;
}

/* One argument by CommandLineToArgvW's rules, from *sp into o (room for
 * strlen(*sp) + 1 bytes); *sp is left after it. */
static void one_arg(const char **sp, char *o)
{
    const char *s = *sp;
    bool inq = false;
    for (;;) {
        size_t bs = 0;
        while (*s == '\\') {
            bs++;
            s++;
        }
        if (*s == '"') {
            for (size_t i = 0; i < bs / 2; i++)
                *o++ = '\\';
            if (bs % 2 == 1) {
                *o++ = '"';
                s++;
            } else if (inq && s[1] == '"') { /* "" inside quotes: a literal quote */
                *o++ = '"';
                s += 2;
            } else {
                inq = !inq;
                s++;
            }
            continue;
        }
        for (size_t i = 0; i < bs; i++)
            *o++ = '\\';
        if (*s == '\0' || (!inq && blank(*s)))
            break;
        *o++ = *s++;
    }
    *o = '\0';
    *sp = s;
}

char **cp_cmdline_split(const char *line, int *argc)
{
    size_t len = strlen(line), cap = len / 2 + 3, n = 0;
    char **argv = calloc(cap, sizeof(*argv));
    if (argv == NULL)
        return NULL;
    const char *s = line;
    while (blank(*s))
        s++;
    size_t plen;
    const char *prog = s;
    if (*s == '"') {
        prog = ++s;
        const char *q = strchr(s, '"');
        plen = q != NULL ? (size_t)(q - s) : strlen(s);
        s += plen + (q != NULL);
    } else {
        plen = program_len(s);
        s += plen;
    }
    if (plen == 0 || (argv[n] = malloc(plen + 1)) == NULL)
        goto fail;
    memcpy(argv[n], prog, plen);
    argv[n++][plen] = '\0';
    for (;;) {
        while (blank(*s))
            s++;
        if (*s == '\0')
            break;
        if ((argv[n] = malloc(strlen(s) + 1)) == NULL)
            goto fail;
        one_arg(&s, argv[n++]);
    }
    *argc = (int)n;
    return argv;
fail:
    cp_cmdline_free(argv);
    return NULL;
}

void cp_cmdline_free(char **argv)
{
    if (argv == NULL)
        return;
    for (size_t i = 0; argv[i] != NULL; i++)
        free(argv[i]);
    free(argv);
}
