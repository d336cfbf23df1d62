/* cmdline.h - building a Windows command line (the service's binPath)
 * from arguments, quoted so that CommandLineToArgvW - which csi-proxy.exe
 * uses to read it back - returns exactly those arguments; and splitting
 * one read back from the SCM (an installed service's ImagePath, ours or
 * one written by upstream's `sc.exe create ... binPath= "..."`) into the
 * program and its arguments by the same rules. Portable C. */
#ifndef CP_CMDLINE_H
#define CP_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

/* Appends a space (unless out is empty) and arg, quoted when it is empty
 * or holds a space, tab, newline or double quote; backslashes are doubled
 * only where they precede a quote. Returns false (out unchanged) when
 * the result would not fit in cap bytes with its NUL. */
bool cp_cmdline_append(char *out, size_t cap, const char *arg);

/* Splits line into argv[0] (the program) and the arguments after it.
 * The program follows the SCM's reading of an ImagePath: quoted, up to
 * the closing quote; unquoted, up to the first ".exe" (any case) that
 * ends at a space or the end - so an unquoted C:\Program Files\...\x.exe
 * stays whole - else up to the first space. Arguments follow
 * CommandLineToArgvW's rules. Returns a NULL-terminated array of
 * malloc'd strings (free with cp_cmdline_free) and sets *argc, or NULL
 * when out of memory or the line has no program. */
char **cp_cmdline_split(const char *line, int *argc);

void cp_cmdline_free(char **argv);

#endif
