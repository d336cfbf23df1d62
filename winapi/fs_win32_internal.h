/* fs_win32_internal.h - what the Windows filesystem host's two files share:
 * fs_win32.c (exists, mkdir, links, resolve, the ops table) and
 * fs_remove_win32.c (removal by handle). Windows build only. */
#ifndef CP_FS_WIN32_INTERNAL_H
#define CP_FS_WIN32_INTERNAL_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>

#include "../server/status.h"

#define WIDE_MAX 32768 /* UTF-16 units in the longest Win32 path */
#define SHARE_ALL (FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)

/* cp_win_error for a UTF-8 / a UTF-16 path; leaves the last error set. */
int fsw_error(cp_error *e, DWORD err, const char *api, const char *path);
int fsw_error_w(cp_error *e, DWORD err, const char *api, const wchar_t *wpath);

/* "Missing" in the sense of Go's os.IsNotExist, plus a parent that is a
 * file (ERROR_DIRECTORY). */
bool fsw_is_missing(DWORD err);

/* path as UTF-16, with the "\\?\" prefix when prefix is set; malloc'd, or
 * NULL with e set. */
wchar_t *fsw_to_wide(const char *path, bool prefix, cp_error *e);

/* The ops table's remove and remove_contents (fs.h). */
int fsw_remove(void *ctx, const char *path, bool recursive, cp_error *e);
int fsw_remove_contents(void *ctx, const char *path, cp_error *e);

#endif
