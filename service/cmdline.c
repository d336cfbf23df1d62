/* cmdline.c - see cmdline.h. The rules are those of CommandLineToArgvW
 * and the Microsoft C runtime: 2n backslashes + quote -> n backslashes
 * and a quote that toggles quoting; 2n+1 backslashes + quote -> n
 * backslashes and a literal quote; backslashes elsewhere are literal. */
#include "cmdline.h"

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
