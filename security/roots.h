/* roots.h - refusing a kubelet path or working directory that would hand
 * callers the whole system. csi-proxy changes files
 * under these roots as SYSTEM for its callers, so a root must not be:
 *
 *   - a drive root or share root: C:\, D:, \\server\share, \\?\C:\;
 *   - %SystemRoot% (C:\Windows) or Program Files (both), or anything below
 *     them: binaries and configuration the system runs;
 *   - ProgramData or the user profiles directory (C:\Users) themselves:
 *     every application's and every user's data (a directory below them,
 *     e.g. for kubelet's data, is fine);
 *   - a directory that holds any of these.
 *
 * The Windows build asks the system where the directories are
 * (GetSystemWindowsDirectoryW, and the registry values the known folders
 * ProgramFiles, ProgramFilesX86, ProgramData and UserProfiles default to)
 * and also refuses the usual C:\ names (the portable list, which the native
 * build uses alone since it serves Windows paths mapped under -root). The
 * root is compared after ".", ".." and repeated separators are resolved,
 * case-insensitively; on Windows also as GetFullPathNameW, GetLongPathNameW
 * and, when it exists, GetFinalPathNameByHandleW (junctions, links and 8.3
 * names) resolve it.
 */
#ifndef CP_ROOTS_H
#define CP_ROOTS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"

typedef struct cp_root_rule {
    const char *path; /* absolute, Windows form */
    const char *what; /* "%SystemRoot%", "Program Files", ... for messages */
    bool below;       /* everything below it is refused too */
} cp_root_rule;

/* C:\Windows, C:\Program Files, C:\Program Files (x86) (below: true),
 * C:\ProgramData, C:\Users. */
extern const cp_root_rule cp_roots_portable[];
extern const size_t cp_roots_portable_n;

/* The pure decision for path (absolute, Windows form). True when it may
 * be a root; false with why ("a drive root", "within C:\Windows
 * (%SystemRoot%)", ...). */
bool cp_roots_judge(const char *path, const cp_root_rule *rules, size_t n, char *why, size_t cap);

/* The platform's check (roots_win.c, roots_posix.c). what names the flag or
 * key ("-kubelet-path"). CP_OK, or CP_E_INVALID_ARGUMENT with e saying
 * "-kubelet-path C:\: a drive root: ...". */
int cp_roots_check(const char *what, const char *path, cp_error *e);

#endif
