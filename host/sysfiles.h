/* sysfiles.h - the files Windows keeps on a volume for itself (page files,
 * crash dumps) as its registry names them, turned into paths the volume
 * calls take. Portable, so that the parsing is unit-tested natively; the
 * registry reads and the volume look-ups are in storage_roles_win.c.
 *
 * The entries:
 *   PagingFiles        "C:\pagefile.sys 1024 4096": name, then initial and
 *                      maximum size in MB (either may be absent);
 *                      "?:\pagefile.sys": system managed, on no volume of its
 *                      own (ExistingPageFiles names where it is)
 *   ExistingPageFiles  "\??\C:\pagefile.sys": an NT object-manager path;
 *                      \??\ is the DOS-devices directory, which Win32 names
 *                      with the \\?\ prefix ("Naming Files, Paths, and
 *                      Namespaces", Microsoft Learn: "Win32 File Namespaces")
 *   DumpFile           "%SystemRoot%\MEMORY.DMP", expanded by the reader
 *   DedicatedDumpFile  "D:\dedicateddumpfile.sys", possibly in a mounted
 *                      folder
 * GetVolumePathNameW answers a relative path, or an NT path it was given
 * as such, with the boot volume ("GetVolumePathNameW function", Microsoft
 * Learn), so a path that is neither a drive path nor a \\?\ volume path is
 * not handed to it: it is an entry whose volume cannot be told. */
#ifndef CP_SYSFILES_H
#define CP_SYSFILES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum cp_sysfile_kind {
    CP_SYSFILE_PATH, /* out: "C:\pagefile.sys" or "\\?\Volume{G}\pagefile.sys" */
    CP_SYSFILE_NONE, /* nothing to look up: empty, or "?:\..." (system managed) */
    CP_SYSFILE_BAD,  /* names no volume that can be told; out: why */
} cp_sysfile_kind;

/* One registry entry (UTF-8). paging: a PagingFiles or ExistingPageFiles
 * entry (sizes may follow the name). Writes the path, or for
 * CP_SYSFILE_BAD the reason ("not an absolute path"), into out (cap
 * bytes). */
cp_sysfile_kind cp_sysfile_entry(const char *entry, bool paging, char *out, size_t cap);

/* The registry values read, in the order they are reported. */
typedef struct cp_sysfile_source {
    const char *value; /* the value's name: "PagingFiles" */
    const char *name;  /* as messages name it: "HKLM\...\Memory Management\PagingFiles" */
    const char *what;  /* "page file", "crash dump file" */
    bool paging;
} cp_sysfile_source;

#define CP_SYSFILE_SOURCES 4
extern const cp_sysfile_source cp_sysfile_sources[CP_SYSFILE_SOURCES];

/* The line naming an entry whose volume cannot be told: what it is, the
 * entry, where it was read and why, and what that leaves unprotected. */
void cp_sysfile_problem(const cp_sysfile_source *s, const char *entry, const char *why, char *out,
                        size_t cap);

/* Calls report for each page-file or crash-dump entry of this host whose
 * volume cannot be told (ctx passed on; line as cp_sysfile_problem makes
 * it). Returns how many, or -1 when the registry could not be read (line
 * says why, reported too). Windows: storage_roles_win.c; elsewhere there
 * are none. */
int cp_sysfile_unresolved(void (*report)(void *ctx, const char *line), void *ctx);

#endif
