/* fs_win_internal.h - what the Windows filesystem host's files share:
 * fs_win.c (exists, is_link, resolve, the ops table), fs_write_win.c
 * (mkdir, links, the judged open and relative opens every write starts
 * from), fs_remove_win.c (removal by handle) and fs_link_win.c (reading a
 * link). Windows build only. */
#ifndef CP_FS_WIN32_INTERNAL_H
#define CP_FS_WIN32_INTERNAL_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>

#include "base/status.h"
#include "host/fs.h"

#define WIDE_MAX 32768 /* UTF-16 units in the longest Win32 path */
#define SHARE_ALL (FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
#define PREFIXED_ROOT_LEN 7 /* L"\\\\?\\C:\\" */
/* Enough to list a directory and open or create names inside it. */
#define DIR_ACCESS (FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES | SYNCHRONIZE)

/* cp_win_error for a UTF-8 / a UTF-16 path; leaves the last error set. */
int fsw_error(cp_error *e, DWORD err, const char *api, const char *path);
int fsw_error_w(cp_error *e, DWORD err, const char *api, const wchar_t *wpath);

/* "Missing" in the sense of Go's os.IsNotExist, plus a parent that is a
 * file (ERROR_DIRECTORY). */
bool fsw_is_missing(DWORD err);

/* path as UTF-16, with the "\\?\" prefix when prefix is set; malloc'd, or
 * NULL with e set. */
wchar_t *fsw_to_wide(const char *path, bool prefix, cp_error *e);

/* A wide path for messages, without the \\?\ prefix, as UTF-8. Best
 * effort: never fails. */
void fsw_narrow(const wchar_t *w, char *out, size_t outlen);

/* The final path of what h is open on (GetFinalPathNameByHandleW,
 * VOLUME_NAME_GUID, else VOLUME_NAME_DOS); malloc'd with room for extra
 * more units. */
int fsw_handle_final(HANDLE h, const char *path, size_t extra, wchar_t **out, cp_error *e);

/* Names a final path as resolve does (fs.h); via is the caller's path
 * without \\?\. final may be changed. UTF-8 into out. */
int fsw_name(wchar_t *final, const wchar_t *via, const char *path, const char *const *anchors,
             size_t n_anchors, char *out, size_t outlen, cp_error *e);

/* NtCreateFile relative to the open directory dir (fs_write_win.c): name
 * (n units, one component) is looked up in dir alone. INVALID_HANDLE_VALUE
 * and the Win32 error in *err on failure. */
HANDLE fsw_nt_create(HANDLE dir, const wchar_t *name, size_t n, ACCESS_MASK access,
                     ULONG disposition, ULONG options, DWORD *err);

/* Opens directory w ("\\?\X:\...") following links, then, when g is not
 * NULL, names that handle (fsw_handle_final, fsw_name) with rest ("" or
 * "name\...") appended and asks g->judge (fs.h cp_fs_guard). path names
 * the request in messages. *open_err: the Win32 error when the open itself
 * failed (ERROR_DIRECTORY when w is not a directory), else ERROR_SUCCESS. */
int fsw_open_judged(const wchar_t *w, const wchar_t *rest, const cp_fs_guard *g, ACCESS_MASK access,
                    const char *path, HANDLE *out, DWORD *open_err, cp_error *e);

/* The ops table's writers (fs.h). */
int fsw_mkdir_all(void *ctx, const char *path, const cp_fs_guard *g, cp_error *e);
int fsw_remove(void *ctx, const char *path, bool recursive, const cp_fs_guard *g, cp_error *e);
int fsw_remove_contents(void *ctx, const char *path, const cp_fs_guard *g, cp_error *e);
int fsw_symlink(void *ctx, const char *link_path, const char *target, cp_fs_link_kind kind,
                const cp_fs_guard *g, cp_error *e);
/* fs_link_win.c */
int fsw_read_link(void *ctx, const char *path, char *out, size_t outlen, cp_error *e);

#endif
