/* cmdline.h - building a Windows command line (the service's binPath)
 * from arguments, quoted so that CommandLineToArgvW - which csi-proxy.exe
 * uses to read it back - returns exactly those arguments. Portable C. */
#ifndef CP_CMDLINE_H
#define CP_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

/* Appends a space (unless out is empty) and arg, quoted when it is empty
 * or holds a space, tab, newline or double quote; backslashes are doubled
 * only where they precede a quote. Returns false (out unchanged) when
 * the result would not fit in cap bytes with its NUL. */
bool cp_cmdline_append(char *out, size_t cap, const char *arg);

#endif
