/* sysfiles.c - see sysfiles.h. */
#include "host/sysfiles.h"

#include <stdio.h>
#include <string.h>

const cp_sysfile_source cp_sysfile_sources[CP_SYSFILE_SOURCES] = {
    {"PagingFiles",
     "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Memory "
     "Management\\PagingFiles",
     "page file", true},
    {"ExistingPageFiles",
     "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Memory "
     "Management\\ExistingPageFiles",
     "page file", true},
    {"DumpFile", "HKLM\\SYSTEM\\CurrentControlSet\\Control\\CrashControl\\DumpFile",
     "crash dump file", false},
    {"DedicatedDumpFile",
     "HKLM\\SYSTEM\\CurrentControlSet\\Control\\CrashControl\\DedicatedDumpFile", "crash dump file",
     false},
};

static bool is_letter(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "X:\" */
static bool drive_path(const char *p)
{
    return is_letter(p[0]) && p[1] == ':' && p[2] == '\\';
}

/* "Volume{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}\" (case as Windows writes
 * it; the volume calls compare the rest) */
static bool volume_guid(const char *p)
{
    if (strncmp(p, "Volume{", 7) != 0)
        return false;
    p += 7;
    for (int i = 0; i < 36; i++) {
        char c = p[i];
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? c != '-' : !(is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return p[36] == '}' && p[37] == '\\';
}

static cp_sysfile_kind bad(char *out, size_t cap, const char *why)
{
    snprintf(out, cap, "%s", why);
    return CP_SYSFILE_BAD;
}

cp_sysfile_kind cp_sysfile_entry(const char *entry, bool paging, char *out, size_t cap)
{
    char buf[1024];
    size_t n = strlen(entry);
    if (n >= sizeof(buf) || n >= cap)
        return bad(out, cap, "longer than a path may be here");
    memcpy(buf, entry, n + 1);
    /* PagingFiles: up to two size fields after the name */
    for (int field = 0; paging && field < 2; field++) {
        while (n > 0 && buf[n - 1] == ' ')
            buf[--n] = '\0';
        size_t sp = n;
        while (sp > 0 && buf[sp - 1] != ' ')
            sp--;
        bool digits = sp > 0 && sp < n;
        for (size_t i = sp; digits && i < n; i++)
            digits = is_digit(buf[i]);
        if (!digits)
            break;
        n = sp - 1;
        buf[n] = '\0';
    }
    while (n > 0 && buf[n - 1] == ' ')
        buf[--n] = '\0';
    const char *p = buf;
    while (*p == ' ')
        p++;
    if (*p == '\0' || (p[0] == '?' && p[1] == ':'))
        return CP_SYSFILE_NONE;
    bool prefixed = strncmp(p, "\\??\\", 4) == 0 || strncmp(p, "\\\\?\\", 4) == 0;
    const char *rest = prefixed ? p + 4 : p;
    if (drive_path(rest)) { /* \??\C:\x is C:\x */
        snprintf(out, cap, "%s", rest);
        return CP_SYSFILE_PATH;
    }
    if (prefixed && volume_guid(rest)) { /* \??\Volume{G}\x is \\?\Volume{G}\x */
        snprintf(out, cap, "\\\\?\\%s", rest);
        return CP_SYSFILE_PATH;
    }
    if (prefixed && strncmp(rest, "UNC\\", 4) == 0)
        return bad(out, cap, "a network path: on no local volume");
    if (prefixed)
        return bad(out, cap, "a device path the volume calls do not take");
    if (p[0] == '\\' && p[1] == '\\')
        return bad(out, cap, "a network path: on no local volume");
    if (p[0] == '\\')
        return bad(out, cap, "an NT object path the volume calls do not take");
    return bad(out, cap, "not an absolute path");
}

void cp_sysfile_problem(const cp_sysfile_source *s, const char *entry, const char *why, char *out,
                        size_t cap)
{
    snprintf(out, cap,
             "%s entry \"%s\" (%s): its volume cannot be told (%s); csi-proxy does not keep "
             "that volume from being changed for it",
             s->what, entry, s->name, why);
}
