/* fs_win.c - the filesystem host ops on Windows (the product).
 *
 * Paths arrive as UTF-8 "X:\..." (already checked by the group's rules),
 * are converted to UTF-16 once here and opened through the "\\?\" prefix:
 * no MAX_PATH limit, and names are taken literally (no "." / ".." / trailing
 * dot processing, no DOS device names) - the rules refuse such names, so
 * what we check is what we open.
 *
 * Writes act on what was checked (fs.h, cp_fs_guard): the directory a
 * write goes through is opened, named from its handle as resolve names
 * paths (fsw_handle_final, fsw_name) and judged, and the write is made
 * relative to that handle (fs_write_win.c: mkdir, links, the judged
 * open; fs_remove_win.c: removal). Links are never followed by removal:
 * the walk goes by handle, each child opened relative to its parent
 * without following a reparse point, checked and deleted through its
 * handle.
 *
 * Every Win32 error is captured on the very next line and turned into a
 * cp_status plus "<API> <path>: <system message> (error <n>)".
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "host/fs.h"
#include "host/fs_place.h"
#include "host/fs_win_internal.h"
#include "base/winutil_win.h"

#define PREFIX_LEN 4 /* L"\\\\?\\" */

/* --- errors ------------------------------------------------------------- */

/* cp_win_error (winutil_win.h): the one Win32 error map and message form,
 * "<API> <path>: <system message> (error <n>)", a long path cut in the
 * middle so the cause always fits. Leaves the thread's last error set. */
int fsw_error(cp_error *e, DWORD err, const char *api, const char *path)
{
    return cp_win_error(e, err, api, path);
}

/* "Missing" in the sense of Go's os.IsNotExist, plus a parent that is a
 * file (ERROR_DIRECTORY). */
bool fsw_is_missing(DWORD err)
{
    return err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ||
           err == ERROR_INVALID_DRIVE || err == ERROR_DIRECTORY || err == ERROR_BAD_NETPATH;
}

/* --- UTF-8 <-> UTF-16, once, here ------------------------------------------- */

static bool drive_absolute(const char *p)
{
    return ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
           p[2] == '\\';
}

/* MultiByteToWideChar (stringapiset.h) with MB_ERR_INVALID_CHARS. With
 * prefix, "X:\..." becomes "\\?\X:\...". NULL with e set on failure;
 * caller frees. */
wchar_t *fsw_to_wide(const char *path, bool prefix, cp_error *e)
{
    if (!drive_absolute(path)) {
        cp_error_set(e, CP_E_INVALID_ARGUMENT, "not a drive-absolute path: %s", path);
        return NULL;
    }
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    if (n == 0) {
        DWORD err = GetLastError();
        fsw_error(e, err, "MultiByteToWideChar", path);
        return NULL;
    }
    size_t pre = prefix ? PREFIX_LEN : 0;
    wchar_t *w = malloc((pre + (size_t)n) * sizeof(wchar_t));
    if (w == NULL) {
        cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory for %s", path);
        return NULL;
    }
    memcpy(w, L"\\\\?\\", pre * sizeof(wchar_t));
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w + pre, n) == 0) {
        DWORD err = GetLastError();
        free(w);
        fsw_error(e, err, "MultiByteToWideChar", path);
        return NULL;
    }
    return w;
}

/* WideCharToMultiByte (stringapiset.h): a wide path for messages, without
 * the \\?\ prefix. Best effort: never fails. */
void fsw_narrow(const wchar_t *w, char *out, size_t outlen)
{
    if (wcsncmp(w, L"\\\\?\\", PREFIX_LEN) == 0)
        w += PREFIX_LEN;
    if (WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)outlen, NULL, NULL) == 0)
        snprintf(out, outlen, "(a path too long to show)");
}

int fsw_error_w(cp_error *e, DWORD err, const char *api, const wchar_t *wpath)
{
    char path[1024];
    fsw_narrow(wpath, path, sizeof(path));
    return fsw_error(e, err, api, path);
}

/* --- exists -------------------------------------------------------- */

/* GetFileAttributesExW (fileapi.h): on a symbolic link it reports the link
 * itself ("Symbolic Link Effects on File Systems Functions"), i.e. Lstat
 * semantics: a dangling link exists. FindFirstFileW is the fallback for
 * files opened without sharing (ERROR_SHARING_VIOLATION), as Go's Lstat. */
static int fs_exists(void *ctx, const char *path, bool *exists, cp_error *e)
{
    (void)ctx;
    wchar_t *w = fsw_to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    int rc = CP_OK;
    WIN32_FILE_ATTRIBUTE_DATA fad;
    *exists = GetFileAttributesExW(w, GetFileExInfoStandard, &fad) != 0;
    if (!*exists) {
        DWORD err = GetLastError();
        if (err == ERROR_SHARING_VIOLATION) {
            WIN32_FIND_DATAW fd;
            HANDLE h = FindFirstFileW(w, &fd);
            if (h != INVALID_HANDLE_VALUE) {
                FindClose(h);
                *exists = true;
            } else {
                err = GetLastError();
            }
        }
        if (!*exists && !fsw_is_missing(err))
            rc = fsw_error(e, err, "GetFileAttributesExW", path);
    }
    free(w);
    return rc;
}

/* --- links ---------------------------------------------------------------- */

/* True for a symbolic link, junction or volume mount point (the tag, from
 * FindFirstFileW's WIN32_FIND_DATAW.dwReserved0, is IO_REPARSE_TAG_SYMLINK
 * or IO_REPARSE_TAG_MOUNT_POINT; junctions and volume mount points share
 * the latter) whose target exists: CreateFileW (fileapi.h) with
 * FILE_FLAG_BACKUP_SEMANTICS and without FILE_FLAG_OPEN_REPARSE_POINT
 * follows the link, so it succeeds only when the target is there. */
static int fs_is_link(void *ctx, const char *path, bool *is_link, cp_error *e)
{
    (void)ctx;
    *is_link = false;
    wchar_t *w = fsw_to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    int rc = CP_OK;
    DWORD attrs = GetFileAttributesW(w);
    if (attrs == INVALID_FILE_ATTRIBUTES) {
        rc = fsw_error(e, GetLastError(), "GetFileAttributesW", path);
        goto out;
    }
    if (!(attrs & FILE_ATTRIBUTE_REPARSE_POINT))
        goto out;
    WIN32_FIND_DATAW fd;
    HANDLE f = FindFirstFileW(w, &fd);
    if (f == INVALID_HANDLE_VALUE) {
        rc = fsw_error(e, GetLastError(), "FindFirstFileW", path);
        goto out;
    }
    FindClose(f);
    if (fd.dwReserved0 != IO_REPARSE_TAG_SYMLINK && fd.dwReserved0 != IO_REPARSE_TAG_MOUNT_POINT)
        goto out;
    HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h != INVALID_HANDLE_VALUE) {
        CloseHandle(h);
        *is_link = true;
    } else {
        DWORD err = GetLastError();
        if (err != ERROR_FILE_NOT_FOUND && err != ERROR_PATH_NOT_FOUND && err != ERROR_BAD_NETPATH)
            rc = fsw_error(e, err, "CreateFileW", path);
    }
out:
    free(w);
    return rc;
}

/* --- resolve -------------------------------------------------------------- */

/* The DOS names of a volume ("\\?\Volume{...}\"): GetVolumePathNamesForVolumeNameW
 * (fileapi.h) lists its drive letters and folder mount points as a
 * multi-string. *out (malloc'd, caller frees). */
static int volume_names(const wchar_t *volume, wchar_t **out, cp_error *e)
{
    *out = NULL;
    wchar_t *names = NULL;
    DWORD cap = 1024, need = 0;
    for (;;) {
        wchar_t *n = realloc(names, cap * sizeof(wchar_t));
        if (n == NULL) {
            free(names);
            return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory for volume names");
        }
        names = n;
        if (GetVolumePathNamesForVolumeNameW(volume, names, cap, &need))
            break;
        DWORD err = GetLastError();
        if (err != ERROR_MORE_DATA || need <= cap) {
            free(names);
            return fsw_error_w(e, err, "GetVolumePathNamesForVolumeNameW", volume);
        }
        cap = need;
    }
    *out = names;
    return CP_OK;
}

/* The fast path of fs_resolve: true when resolving w ("\\?\X:\...") cannot
 * change it, so it is its own final path. GetFileAttributesW (fileapi.h) on
 * each existing prefix below the drive root: every way a path can lead
 * elsewhere - symbolic link, junction, volume mount point, a link left
 * dangling - is a reparse point and carries FILE_ATTRIBUTE_REPARSE_POINT
 * (also on SMB, whose client reports the server's links so), and what
 * follows the first missing component cannot lead anywhere yet. So the
 * object lives on the drive's own volume at the path as written, and so do
 * the configured directories the path lies in textually (prefixes of it):
 * no anchor is needed. Short 8.3 names and letter case may stay as given:
 * a short name names an entry of the same directory, and confinement
 * compares case-insensitively. Anything unusual (an empty, "." or ".."
 * component, an error other than "missing") is left to the full
 * resolution. Costs one attribute query per component (~8 us each under
 * Wine) against ~600 us for the full path, which goes through the mount
 * manager. */
static bool is_plain_path(wchar_t *w)
{
    size_t len = wcslen(w);
    for (size_t i = PREFIXED_ROOT_LEN, start = i; i <= len; i++) {
        if (i < len && w[i] != L'\\')
            continue;
        size_t n = i - start;
        if (n == 0 || (w[start] == L'.' && (n == 1 || (n == 2 && w[start + 1] == L'.'))))
            return false;
        wchar_t saved = w[i];
        w[i] = L'\0';
        DWORD attrs = GetFileAttributesW(w);
        DWORD err = attrs == INVALID_FILE_ATTRIBUTES ? GetLastError() : ERROR_SUCCESS;
        w[i] = saved;
        if (attrs == INVALID_FILE_ATTRIBUTES)
            return fsw_is_missing(err);
        if (attrs & FILE_ATTRIBUTE_REPARSE_POINT)
            return false;
        start = i + 1;
    }
    return true;
}

/* The final path of what h is open on, with GetFinalPathNameByHandleW
 * (fileapi.h): VOLUME_NAME_GUID ("\\?\Volume{G}\rest") first, because
 * VOLUME_NAME_DOS fails with ERROR_PATH_NOT_FOUND for a volume without a
 * drive letter - which is how volumes are mounted under the kubelet
 * directory; then VOLUME_NAME_DOS (network files have no volume GUID).
 * *out is malloc'd with room for extra more units; path names the request
 * in messages. */
int fsw_handle_final(HANDLE h, const char *path, size_t extra, wchar_t **out, cp_error *e)
{
    *out = NULL;
    wchar_t *final = malloc((WIDE_MAX + extra) * sizeof(wchar_t));
    if (final == NULL)
        return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory resolving %s", path);
    DWORD n =
        GetFinalPathNameByHandleW(h, final, WIDE_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_GUID);
    DWORD err = n == 0 ? GetLastError() : ERROR_SUCCESS;
    if (n == 0) {
        n = GetFinalPathNameByHandleW(h, final, WIDE_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
        err = n == 0 ? GetLastError() : ERROR_SUCCESS;
    }
    if (n == 0 || n >= WIDE_MAX) {
        free(final);
        return fsw_error(e, n == 0 ? err : ERROR_FILENAME_EXCED_RANGE, "GetFinalPathNameByHandleW",
                         path);
    }
    *out = final;
    return CP_OK;
}

/* Where w ("\\?\X:\...") really is: opens its longest existing prefix
 * following every link in it (CreateFileW with FILE_FLAG_BACKUP_SEMANTICS,
 * fileapi.h) and names what was opened (fsw_handle_final). The missing
 * rest of w is appended as is. *out is malloc'd. An entry that exists but
 * cannot be followed (a dangling link inside the path) fails closed; path
 * names the request in messages. */
static int locate(wchar_t *w, const char *path, wchar_t **out, cp_error *e)
{
    *out = NULL;
    size_t cut = wcslen(w);
    HANDLE h = INVALID_HANDLE_VALUE;
    for (;;) {
        wchar_t saved = w[cut];
        w[cut] = L'\0';
        h = CreateFileW(w, FILE_READ_ATTRIBUTES, SHARE_ALL, NULL, OPEN_EXISTING,
                        FILE_FLAG_BACKUP_SEMANTICS, NULL);
        DWORD err = h == INVALID_HANDLE_VALUE ? GetLastError() : ERROR_SUCCESS;
        if (h == INVALID_HANDLE_VALUE && fsw_is_missing(err) &&
            GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES) {
            char where[1024];
            fsw_narrow(w, where, sizeof(where));
            w[cut] = saved;
            return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                                "resolve %s: %s is a link whose target does not exist", path,
                                where);
        }
        w[cut] = saved;
        if (h != INVALID_HANDLE_VALUE)
            break;
        if (!fsw_is_missing(err))
            return fsw_error(e, err, "CreateFileW", path);
        if (cut <= PREFIXED_ROOT_LEN) { /* not even the drive: nothing to resolve */
            *out = malloc((wcslen(w) + 1) * sizeof(wchar_t));
            if (*out == NULL)
                return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory resolving %s", path);
            wcscpy(*out, w);
            return CP_OK;
        }
        while (cut > PREFIXED_ROOT_LEN && w[cut - 1] != L'\\')
            cut--;
        if (cut > PREFIXED_ROOT_LEN)
            cut--; /* try the parent, without its trailing '\' */
    }
    const wchar_t *missing = w + cut;
    int rc = fsw_handle_final(h, path, wcslen(missing) + 2, out, e);
    CloseHandle(h);
    if (rc == CP_OK && *missing != L'\0') {
        wchar_t *final = *out;
        size_t n = wcslen(final);
        if (n > 0 && final[n - 1] == L'\\')
            n--;
        wcscpy(final + n, missing); /* missing starts with '\' */
    }
    return rc;
}

/* "\\?\Volume{G}\" of the volume holding the running Windows
 * (GetSystemWindowsDirectoryW, sysinfoapi.h, located as any path), or NULL
 * when it cannot be told. malloc'd. */
static wchar_t *system_volume(void)
{
    wchar_t dir[MAX_PATH + 1];
    UINT n = GetSystemWindowsDirectoryW(dir, MAX_PATH);
    if (n == 0 || n >= MAX_PATH || n < 3 || dir[1] != L':')
        return NULL;
    wchar_t root[PREFIXED_ROOT_LEN + 1] = L"\\\\?\\X:\\";
    root[PREFIX_LEN] = dir[0];
    wchar_t *loc = NULL;
    cp_error e;
    if (locate(root, "(the Windows directory's drive)", &loc, &e) != CP_OK)
        return NULL;
    return loc;
}

/* Names final (a located path, fsw_handle_final's form; changed in place)
 * as resolve does (fs.h): on a volume, by cp_fs_place (host/fs_place.h)
 * against the anchors' own locations and the system volume, never by the
 * mount folder via (the caller's path, no \\?\) came through when the
 * volume holds an anchor or the running Windows; a network path in the
 * \\server\share form confinement refuses. UTF-8 into out. */
int fsw_name(wchar_t *final, const wchar_t *via, const char *path, const char *const *anchors,
             size_t n_anchors, char *out, size_t outlen, cp_error *e)
{
    int rc = CP_OK;
    wchar_t *names = NULL, *named = NULL, *sysvol = NULL;
    wchar_t **awide = NULL;
    cp_fs_anchor *anchor = NULL;
    const wchar_t *shown = final;
    if (wcsncmp(final, L"\\\\?\\Volume{", 11) == 0) {
        wchar_t *brace = wcschr(final, L'}');
        if (brace == NULL || brace[1] != L'\\') {
            rc = cp_error_set(e, CP_E_INTERNAL, "resolve %s: unexpected final path", path);
            goto out;
        }
        wchar_t saved = brace[2];
        brace[2] = L'\0';
        rc = volume_names(final, &names, e);
        brace[2] = saved;
        if (rc != CP_OK)
            goto out;
        awide = calloc(n_anchors + 1, sizeof(*awide));
        anchor = calloc(n_anchors + 1, sizeof(*anchor));
        if (awide == NULL || anchor == NULL) {
            rc = cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory resolving %s", path);
            goto out;
        }
        for (size_t i = 0; i < n_anchors; i++) {
            cp_error ignored; /* an anchor that cannot be located protects nothing
                                 and holds nothing: rule 1 never names through it */
            wchar_t *aw = fsw_to_wide(anchors[i], true, &ignored);
            awide[i] = aw;
            anchor[i].text = aw != NULL ? aw + PREFIX_LEN : L"";
            wchar_t *loc = NULL;
            if (aw != NULL && locate(aw, anchors[i], &loc, &ignored) == CP_OK)
                anchor[i].location = loc;
        }
        sysvol = system_volume();
        named = cp_fs_place(final, via, names, sysvol, anchor, n_anchors);
        if (named == NULL) {
            rc = cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory resolving %s", path);
            goto out;
        }
        shown = named;
    } else if (wcsncmp(final, L"\\\\?\\UNC\\", 8) == 0) {
        final[6] = L'\\'; /* "\\?\UNC\server\share" -> "\\server\share", refused */
        shown = final + 6;
    } else if (wcsncmp(final, L"\\\\?\\", PREFIX_LEN) == 0) {
        shown = final + PREFIX_LEN;
        size_t n = wcslen(final);
        if (n > PREFIXED_ROOT_LEN && final[n - 1] == L'\\')
            final[n - 1] = L'\0';
    }
    if (WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, shown, -1, out, (int)outlen, NULL,
                            NULL) == 0)
        rc = fsw_error(e, GetLastError(), "WideCharToMultiByte", path);
out:
    for (size_t i = 0; anchor != NULL && i < n_anchors; i++)
        free((wchar_t *)anchor[i].location);
    for (size_t i = 0; awide != NULL && i < n_anchors; i++)
        free(awide[i]);
    free(anchor);
    free(awide);
    free(sysvol);
    free(named);
    free(names);
    return rc;
}

/* Resolves path (see fs.h). The fast path when nothing in it can lead
 * elsewhere; else the object is located (locate) and named (fsw_name). */
static int fs_resolve(void *ctx, const char *path, const char *const *anchors, size_t n_anchors,
                      char *out, size_t outlen, cp_error *e)
{
    (void)ctx;
    int rc = CP_OK;
    wchar_t *final = NULL;
    wchar_t *w = fsw_to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    if (wcslen(w) > PREFIXED_ROOT_LEN && is_plain_path(w)) {
        size_t plen = strlen(path);
        while (plen > 3 && path[plen - 1] == '\\')
            plen--;
        if (plen >= outlen)
            rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "resolve %s: too long", path);
        else
            memcpy(out, path, plen), out[plen] = '\0';
    } else if ((rc = locate(w, path, &final, e)) == CP_OK) {
        rc = fsw_name(final, w + PREFIX_LEN, path, anchors, n_anchors, out, outlen, e);
    }
    free(final);
    free(w);
    return rc;
}

static const cp_fs_ops win32_ops = {
    .exists = fs_exists,
    .mkdir_all = fsw_mkdir_all,
    .remove = fsw_remove,
    .remove_contents = fsw_remove_contents,
    .symlink = fsw_symlink,
    .is_link = fs_is_link,
    .resolve = fs_resolve,
    .read_link = fsw_read_link,
};

cp_fs_host cp_fs_host_win32(void)
{
    cp_fs_host h = {&win32_ops, NULL};
    return h;
}

/* %SystemDrive% ("C:"), read with GetEnvironmentVariableW (processenv.h);
 * the service's environment carries it as every process's does (Microsoft
 * "Environment Variables" / "Recognized environment variables"). Failing
 * that, the drive of GetSystemWindowsDirectoryW (sysinfoapi.h: "the path
 * of the shared Windows directory", e.g. C:\Windows); failing both, 'C',
 * the letter mount-utils' NormalizeWindowsPath assumes. */
char cp_fs_system_drive(void)
{
    wchar_t buf[MAX_PATH + 1];
    DWORD n = GetEnvironmentVariableW(L"SystemDrive", buf, MAX_PATH + 1);
    if (!(n >= 2 && n <= MAX_PATH && buf[1] == L':'))
        n = GetSystemWindowsDirectoryW(buf, MAX_PATH + 1);
    if (n >= 2 && n <= MAX_PATH && buf[1] == L':') {
        wchar_t c = buf[0];
        if (c >= L'a' && c <= L'z')
            c = (wchar_t)(c - L'a' + L'A');
        if (c >= L'A' && c <= L'Z')
            return (char)c;
    }
    return 'C';
}
