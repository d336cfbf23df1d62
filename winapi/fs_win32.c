/* fs_win32.c - the filesystem host ops on Windows (the product).
 *
 * Paths arrive as UTF-8 "X:\..." (already checked by the group's rules),
 * are converted to UTF-16 once here and opened through the "\\?\" prefix:
 * no MAX_PATH limit, and names are taken literally (no "." / ".." / trailing
 * dot processing, no DOS device names) - the rules refuse such names, so
 * what we check is what we open.
 *
 * Links are never followed by removal: a reparse point met while deleting
 * is removed as an entry (RemoveDirectoryW on a directory symlink or
 * junction removes the link, not the target).
 *
 * Every Win32 error is captured on the very next line and turned into a
 * cp_status plus "<API> <path>: <system message> (error <n>)".
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "fs.h"
#include "winutil.h"

#define WIDE_MAX 32768      /* UTF-16 units in the longest Win32 path */
#define PREFIX_LEN 4        /* L"\\\\?\\" */
#define PREFIXED_ROOT_LEN 7 /* L"\\\\?\\C:\\" */

/* --- errors ------------------------------------------------------------- */

/* cp_win_error (winutil.h): the one Win32 error map and message form,
 * "<API> <path>: <system message> (error <n>)", a long path cut in the
 * middle so the cause always fits. Leaves the thread's last error set. */
static int win_error(cp_error *e, DWORD err, const char *api, const char *path)
{
    return cp_win_error(e, err, api, path);
}

/* "Missing" in the sense of Go's os.IsNotExist, plus a parent that is a
 * file (ERROR_DIRECTORY). */
static bool is_missing(DWORD err)
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
static wchar_t *to_wide(const char *path, bool prefix, cp_error *e)
{
    if (!drive_absolute(path)) {
        cp_error_set(e, CP_E_INVALID_ARGUMENT, "not a drive-absolute path: %s", path);
        return NULL;
    }
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    if (n == 0) {
        DWORD err = GetLastError();
        win_error(e, err, "MultiByteToWideChar", path);
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
        win_error(e, err, "MultiByteToWideChar", path);
        return NULL;
    }
    return w;
}

/* WideCharToMultiByte (stringapiset.h): a wide path for messages, without
 * the \\?\ prefix. Best effort: never fails. */
static void narrow(const wchar_t *w, char *out, size_t outlen)
{
    if (wcsncmp(w, L"\\\\?\\", PREFIX_LEN) == 0)
        w += PREFIX_LEN;
    if (WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)outlen, NULL, NULL) == 0)
        snprintf(out, outlen, "(a path too long to show)");
}

static int win_error_w(cp_error *e, DWORD err, const char *api, const wchar_t *wpath)
{
    char path[1024];
    narrow(wpath, path, sizeof(path));
    return win_error(e, err, api, path);
}

/* --- exists, mkdir -------------------------------------------------------- */

/* GetFileAttributesExW (fileapi.h): on a symbolic link it reports the link
 * itself ("Symbolic Link Effects on File Systems Functions"), i.e. Lstat
 * semantics: a dangling link exists. FindFirstFileW is the fallback for
 * files opened without sharing (ERROR_SHARING_VIOLATION), as Go's Lstat. */
static int fs_exists(void *ctx, const char *path, bool *exists, cp_error *e)
{
    (void)ctx;
    wchar_t *w = to_wide(path, true, e);
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
        if (!*exists && !is_missing(err))
            rc = win_error(e, err, "GetFileAttributesExW", path);
    }
    free(w);
    return rc;
}

/* CreateDirectoryW (fileapi.h) creates one level and fails with
 * ERROR_PATH_NOT_FOUND when the parent is missing, so walk down from the
 * drive root creating what is missing. An existing directory (or link to
 * one) is fine; anything else in the way is FAILED_PRECONDITION. */
static int fs_mkdir_all(void *ctx, const char *path, cp_error *e)
{
    (void)ctx;
    wchar_t *w = to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    int rc = CP_OK;
    size_t len = wcslen(w);
    for (size_t i = PREFIXED_ROOT_LEN; rc == CP_OK && i <= len; i++) {
        if (i < len && w[i] != L'\\')
            continue;
        wchar_t saved = w[i];
        w[i] = L'\0';
        DWORD attrs = GetFileAttributesW(w);
        DWORD err = attrs == INVALID_FILE_ATTRIBUTES ? GetLastError() : ERROR_SUCCESS;
        if (attrs == INVALID_FILE_ATTRIBUTES && is_missing(err)) {
            if (!CreateDirectoryW(w, NULL)) {
                err = GetLastError();
                if (err != ERROR_ALREADY_EXISTS) /* else: created meanwhile; recheck */
                    rc = win_error_w(e, err, "CreateDirectoryW", w);
                else if ((attrs = GetFileAttributesW(w)) == INVALID_FILE_ATTRIBUTES)
                    rc = win_error_w(e, GetLastError(), "GetFileAttributesW", w);
            } else {
                attrs = FILE_ATTRIBUTE_DIRECTORY;
            }
        } else if (attrs == INVALID_FILE_ATTRIBUTES) {
            rc = win_error_w(e, err, "GetFileAttributesW", w);
        }
        if (rc == CP_OK && !(attrs & FILE_ATTRIBUTE_DIRECTORY)) {
            char where[1024];
            narrow(w, where, sizeof(where));
            rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "CreateDirectoryW %s: %s is a file, not a directory", path, where);
        }
        w[i] = saved;
    }
    free(w);
    return rc;
}

/* --- removal ------------------------------------------------------------- */

typedef struct wbuf {
    wchar_t *s;
    size_t len; /* s[len] == 0 */
} wbuf;

static bool wbuf_push(wbuf *b, const wchar_t *name)
{
    size_t n = wcslen(name);
    if (b->len + 1 + n >= WIDE_MAX)
        return false;
    b->s[b->len++] = L'\\';
    memcpy(b->s + b->len, name, (n + 1) * sizeof(wchar_t));
    b->len += n;
    return true;
}

static void wbuf_cut(wbuf *b, size_t len)
{
    b->len = len;
    b->s[len] = L'\0';
}

/* RemoveDirectoryW / DeleteFileW (fileapi.h) on one entry, never following
 * it: both remove a symbolic link or junction itself, not its target. A
 * read-only file or directory (not a link) is made writable and retried,
 * as Go's os.Remove does. */
static int remove_entry(const wchar_t *w, DWORD attrs, cp_error *e)
{
    bool dir = (attrs & FILE_ATTRIBUTE_DIRECTORY) != 0;
    if (dir ? RemoveDirectoryW(w) : DeleteFileW(w))
        return CP_OK;
    DWORD err = GetLastError();
    if (err == ERROR_ACCESS_DENIED && (attrs & FILE_ATTRIBUTE_READONLY) &&
        !(attrs & FILE_ATTRIBUTE_REPARSE_POINT)) {
        DWORD plain = attrs & ~(FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_DIRECTORY);
        if (SetFileAttributesW(w, plain != 0 ? plain : FILE_ATTRIBUTE_NORMAL) &&
            (dir ? RemoveDirectoryW(w) : DeleteFileW(w)))
            return CP_OK;
        err = GetLastError();
    }
    return win_error_w(e, err, dir ? "RemoveDirectoryW" : "DeleteFileW", w);
}

typedef struct level {
    HANDLE find;
    size_t len;  /* b->len of this directory's path */
    DWORD attrs; /* its attributes, to remove it when done */
} level;

/* FindFirstFileExW (fileapi.h) on "<dir>\*", FindExInfoBasic (no short
 * names). Pushes a level whose first entry is in *fd, or nothing for a
 * directory without entries (ERROR_FILE_NOT_FOUND, e.g. a drive root). */
static int open_level(wbuf *b, DWORD attrs, level **stack, size_t *depth, size_t *cap,
                      WIN32_FIND_DATAW *fd, cp_error *e)
{
    size_t len = b->len;
    if (!wbuf_push(b, L"*"))
        return win_error_w(e, ERROR_FILENAME_EXCED_RANGE, "FindFirstFileExW", b->s);
    HANDLE h = FindFirstFileExW(b->s, FindExInfoBasic, fd, FindExSearchNameMatch, NULL,
                                FIND_FIRST_EX_LARGE_FETCH);
    DWORD err = h == INVALID_HANDLE_VALUE ? GetLastError() : ERROR_SUCCESS;
    wbuf_cut(b, len);
    if (h == INVALID_HANDLE_VALUE)
        return err == ERROR_FILE_NOT_FOUND ? CP_OK : win_error_w(e, err, "FindFirstFileExW", b->s);
    if (*depth == *cap) {
        size_t ncap = *cap != 0 ? *cap * 2 : 16;
        level *n = realloc(*stack, ncap * sizeof(level));
        if (n == NULL) {
            FindClose(h);
            return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory walking a directory");
        }
        *stack = n;
        *cap = ncap;
    }
    (*stack)[(*depth)++] = (level){h, len, attrs};
    return CP_OK;
}

/* Deletes everything inside directory b->s. Iterative with a heap stack
 * (worker threads have small stacks; trees can be deep). Reparse points
 * are leaves: removed, never entered. */
static int clear_tree(wbuf *b, cp_error *e)
{
    level *stack = NULL;
    size_t depth = 0, cap = 0, top_len = b->len;
    WIN32_FIND_DATAW fd;
    int rc = open_level(b, FILE_ATTRIBUTE_DIRECTORY, &stack, &depth, &cap, &fd, e);
    bool have = depth > 0; /* fd holds an entry not yet handled */
    while (rc == CP_OK && depth > 0) {
        level *cur = &stack[depth - 1];
        if (!have && !FindNextFileW(cur->find, &fd)) {
            DWORD err = GetLastError();
            FindClose(cur->find);
            level done = *cur;
            depth--;
            wbuf_cut(b, done.len);
            if (err != ERROR_NO_MORE_FILES)
                rc = win_error_w(e, err, "FindNextFileW", b->s);
            else if (depth > 0) /* a subdirectory is now empty */
                rc = remove_entry(b->s, done.attrs, e);
            if (depth > 0)
                wbuf_cut(b, stack[depth - 1].len);
            continue;
        }
        have = false;
        if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
            continue;
        if (!wbuf_push(b, fd.cFileName)) {
            rc = win_error_w(e, ERROR_FILENAME_EXCED_RANGE, "FindNextFileW", b->s);
            break;
        }
        DWORD a = fd.dwFileAttributes;
        if ((a & FILE_ATTRIBUTE_DIRECTORY) && !(a & FILE_ATTRIBUTE_REPARSE_POINT)) {
            size_t before = depth;
            rc = open_level(b, a, &stack, &depth, &cap, &fd, e);
            if (rc == CP_OK && depth > before) {
                have = true;
                continue;
            }
        }
        if (rc == CP_OK)
            rc = remove_entry(b->s, a, e);
        wbuf_cut(b, stack[depth - 1].len);
    }
    while (depth > 0)
        FindClose(stack[--depth].find);
    free(stack);
    wbuf_cut(b, top_len);
    return rc;
}

static int new_wbuf(const char *path, wbuf *b, cp_error *e)
{
    wchar_t *w = to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    b->s = malloc(WIDE_MAX * sizeof(wchar_t));
    if (b->s == NULL) {
        free(w);
        return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory for %s", path);
    }
    b->len = wcslen(w);
    memcpy(b->s, w, (b->len + 1) * sizeof(wchar_t));
    free(w);
    return CP_OK;
}

/* GetFileAttributesW (fileapi.h) sees the entry itself, so a link is
 * removed as a link whatever its target. */
static int fs_remove(void *ctx, const char *path, bool recursive, cp_error *e)
{
    (void)ctx;
    wbuf b;
    int rc = new_wbuf(path, &b, e);
    if (rc != CP_OK)
        return rc;
    DWORD attrs = GetFileAttributesW(b.s);
    if (attrs == INVALID_FILE_ATTRIBUTES) {
        DWORD err = GetLastError();
        rc = (recursive && is_missing(err)) ? CP_OK /* already gone, as RemoveAll */
                                            : win_error(e, err, "GetFileAttributesW", path);
    } else {
        bool tree = (attrs & FILE_ATTRIBUTE_DIRECTORY) && !(attrs & FILE_ATTRIBUTE_REPARSE_POINT);
        if (recursive && tree)
            rc = clear_tree(&b, e);
        if (rc == CP_OK)
            rc = remove_entry(b.s, attrs, e);
    }
    free(b.s);
    return rc;
}

/* The directory itself may be a link: the group confined its target. */
static int fs_remove_contents(void *ctx, const char *path, cp_error *e)
{
    (void)ctx;
    wbuf b;
    int rc = new_wbuf(path, &b, e);
    if (rc != CP_OK)
        return rc;
    DWORD attrs = GetFileAttributesW(b.s);
    if (attrs == INVALID_FILE_ATTRIBUTES)
        rc = win_error(e, GetLastError(), "GetFileAttributesW", path);
    else if (!(attrs & FILE_ATTRIBUTE_DIRECTORY))
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "RmdirContents %s: not a directory", path);
    else
        rc = clear_tree(&b, e);
    free(b.s);
    return rc;
}

/* --- links ---------------------------------------------------------------- */

/* CreateSymbolicLinkW (winbase.h). SYMBOLIC_LINK_FLAG_DIRECTORY when the
 * target is a directory; SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE is
 * refused with ERROR_INVALID_PARAMETER before Windows 10 1703, so retry
 * without it (as Go's os.Symlink). The target is stored as given ("C:\..."
 * without \\?\), which is what readers of the link expect. Afterwards the
 * link must really exist: Wine's CreateSymbolicLinkW returns TRUE and
 * creates nothing, and that must never pass for success. */
static int fs_symlink(void *ctx, const char *link_path, const char *target, cp_error *e)
{
    (void)ctx;
    int rc = CP_OK;
    wchar_t *wl = to_wide(link_path, true, e);
    wchar_t *wt_long = wl != NULL ? to_wide(target, true, e) : NULL;
    wchar_t *wt = wt_long != NULL ? to_wide(target, false, e) : NULL;
    if (wt == NULL) {
        rc = e->status;
        goto out;
    }
    if (GetFileAttributesW(wl) != INVALID_FILE_ATTRIBUTES) {
        rc = cp_error_set(e, CP_E_ALREADY_EXISTS, "CreateSymbolicLinkW %s -> %s: %s already exists",
                          link_path, target, link_path);
        goto out;
    }
    DWORD ta = GetFileAttributesW(wt_long);
    DWORD flags = (ta != INVALID_FILE_ATTRIBUTES && (ta & FILE_ATTRIBUTE_DIRECTORY))
                      ? SYMBOLIC_LINK_FLAG_DIRECTORY
                      : 0;
    BOOLEAN made = CreateSymbolicLinkW(wl, wt, flags | SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE);
    DWORD err = made ? ERROR_SUCCESS : GetLastError();
    if (!made && err == ERROR_INVALID_PARAMETER) {
        made = CreateSymbolicLinkW(wl, wt, flags);
        err = made ? ERROR_SUCCESS : GetLastError();
    }
    if (!made) {
        rc = win_error(e, err, "CreateSymbolicLinkW", link_path);
        goto out;
    }
    DWORD la = GetFileAttributesW(wl);
    if (la == INVALID_FILE_ATTRIBUTES || !(la & FILE_ATTRIBUTE_REPARSE_POINT))
        rc = cp_error_set(e, CP_E_INTERNAL,
                          "CreateSymbolicLinkW %s -> %s reported success but %s; this host's "
                          "CreateSymbolicLinkW does not create links (a stub, as in Wine)",
                          link_path, target,
                          la == INVALID_FILE_ATTRIBUTES ? "nothing exists at the link path"
                                                        : "what exists there is not a link");
out:
    free(wt);
    free(wt_long);
    free(wl);
    return rc;
}

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
    wchar_t *w = to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    int rc = CP_OK;
    DWORD attrs = GetFileAttributesW(w);
    if (attrs == INVALID_FILE_ATTRIBUTES) {
        rc = win_error(e, GetLastError(), "GetFileAttributesW", path);
        goto out;
    }
    if (!(attrs & FILE_ATTRIBUTE_REPARSE_POINT))
        goto out;
    WIN32_FIND_DATAW fd;
    HANDLE f = FindFirstFileW(w, &fd);
    if (f == INVALID_HANDLE_VALUE) {
        rc = win_error(e, GetLastError(), "FindFirstFileW", path);
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
            rc = win_error(e, err, "CreateFileW", path);
    }
out:
    free(w);
    return rc;
}

/* --- resolve -------------------------------------------------------------- */

/* The DOS name of a volume ("\\?\Volume{...}\"): GetVolumePathNamesForVolumeNameW
 * (fileapi.h) lists its drive letters and folder mount points. Prefer the
 * longest one that via (the path we were asked about) goes through - that
 * is how the caller reached the volume - else the first. *out (malloc'd,
 * caller frees) is that name without its trailing '\', or NULL when the
 * volume has no DOS name at all. */
static int volume_dos_name(const wchar_t *volume, const wchar_t *via, wchar_t **out, cp_error *e)
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
            return win_error_w(e, err, "GetVolumePathNamesForVolumeNameW", volume);
        }
        cap = need;
    }
    const wchar_t *best = NULL;
    size_t best_len = 0, via_len = wcslen(via);
    bool best_through = false;
    for (const wchar_t *s = names; *s != L'\0'; s += wcslen(s) + 1) {
        size_t n = wcslen(s);
        if (n > 0 && s[n - 1] == L'\\')
            n--;
        bool through = n <= via_len && (via[n] == L'\0' || via[n] == L'\\') &&
                       CompareStringOrdinal(via, (int)n, s, (int)n, TRUE) == CSTR_EQUAL;
        if (best == NULL || (through && (!best_through || n > best_len))) {
            best = s;
            best_len = n;
            best_through = through;
        }
    }
    int rc = CP_OK;
    if (best != NULL) {
        *out = malloc((best_len + 1) * sizeof(wchar_t));
        if (*out == NULL) {
            rc = cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory for volume names");
        } else {
            memcpy(*out, best, best_len * sizeof(wchar_t));
            (*out)[best_len] = L'\0';
        }
    }
    free(names);
    return rc;
}

/* Appends "\" + piece (its own leading and trailing '\' dropped). */
static size_t append_piece(wchar_t *dst, size_t len, const wchar_t *piece)
{
    size_t n = wcslen(piece);
    while (n > 0 && piece[0] == L'\\')
        piece++, n--;
    while (n > 0 && piece[n - 1] == L'\\')
        n--;
    if (n == 0)
        return len;
    dst[len++] = L'\\';
    memcpy(dst + len, piece, n * sizeof(wchar_t));
    len += n;
    dst[len] = L'\0';
    return len;
}

/* The fast path of fs_resolve: true when resolving w ("\\?\X:\...") cannot
 * change it, so it is its own final path. GetFileAttributesW (fileapi.h) on
 * each existing prefix below the drive root: every way a path can lead
 * elsewhere - symbolic link, junction, volume mount point, a link left
 * dangling - is a reparse point and carries FILE_ATTRIBUTE_REPARSE_POINT
 * (also on SMB, whose client reports the server's links so), and what
 * follows the first missing component cannot lead anywhere yet. Short 8.3
 * names and letter case may stay as given: a short name names an entry of
 * the same directory, and confinement compares case-insensitively.
 * Anything unusual (an empty, "." or ".." component, an error other than
 * "missing") is left to the full resolution. Costs one attribute query per
 * component (~8 us each under Wine) against ~600 us for the full path,
 * which goes through the mount manager. */
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
            return is_missing(err);
        if (attrs & FILE_ATTRIBUTE_REPARSE_POINT)
            return false;
        start = i + 1;
    }
    return true;
}

/* Opens the longest existing prefix of path following every link in it
 * (CreateFileW with FILE_FLAG_BACKUP_SEMANTICS, fileapi.h) and names what
 * was opened with GetFinalPathNameByHandleW (fileapi.h). VOLUME_NAME_GUID
 * first, mapped back through volume_dos_name(), because VOLUME_NAME_DOS
 * fails with ERROR_PATH_NOT_FOUND for a volume without a drive letter -
 * which is how volumes are mounted under the kubelet directory; then
 * VOLUME_NAME_DOS (network files have no volume GUID). The missing rest of
 * the path is appended as is. An entry that exists but cannot be followed
 * (a dangling link inside the path) fails closed. */
static int fs_resolve(void *ctx, const char *path, char *out, size_t outlen, cp_error *e)
{
    (void)ctx;
    int rc = CP_OK;
    HANDLE h = INVALID_HANDLE_VALUE;
    wchar_t *final = NULL, *dos = NULL, *joined = NULL;
    wchar_t *w = to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    size_t cut = wcslen(w);
    if (cut > PREFIXED_ROOT_LEN && is_plain_path(w)) {
        size_t plen = strlen(path);
        while (plen > 3 && path[plen - 1] == '\\')
            plen--;
        if (plen >= outlen)
            rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "resolve %s: too long", path);
        else
            memcpy(out, path, plen), out[plen] = '\0';
        goto out;
    }
    for (;;) {
        wchar_t saved = w[cut];
        w[cut] = L'\0';
        h = CreateFileW(w, FILE_READ_ATTRIBUTES,
                        FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                        OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
        DWORD err = h == INVALID_HANDLE_VALUE ? GetLastError() : ERROR_SUCCESS;
        if (h == INVALID_HANDLE_VALUE && is_missing(err) &&
            GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES) {
            char where[1024];
            narrow(w, where, sizeof(where));
            rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "resolve %s: %s is a link whose target does not exist", path, where);
            goto out;
        }
        w[cut] = saved;
        if (h != INVALID_HANDLE_VALUE)
            break;
        if (!is_missing(err)) {
            rc = win_error(e, err, "CreateFileW", path);
            goto out;
        }
        if (cut <= PREFIXED_ROOT_LEN) { /* not even the drive: nothing to resolve */
            if ((size_t)snprintf(out, outlen, "%s", path) >= outlen)
                rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "resolve %s: too long", path);
            goto out;
        }
        while (cut > PREFIXED_ROOT_LEN && w[cut - 1] != L'\\')
            cut--;
        if (cut > PREFIXED_ROOT_LEN)
            cut--; /* try the parent, without its trailing '\' */
    }

    final = malloc(WIDE_MAX * sizeof(wchar_t));
    if (final == NULL) {
        rc = cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory resolving %s", path);
        goto out;
    }
    DWORD n = GetFinalPathNameByHandleW(h, final, WIDE_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_GUID);
    DWORD err = n == 0 ? GetLastError() : ERROR_SUCCESS;
    if (n == 0) {
        n = GetFinalPathNameByHandleW(h, final, WIDE_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
        err = n == 0 ? GetLastError() : ERROR_SUCCESS;
    }
    if (n == 0 || n >= WIDE_MAX) {
        rc = win_error(e, n == 0 ? err : ERROR_FILENAME_EXCED_RANGE, "GetFinalPathNameByHandleW",
                       path);
        goto out;
    }

    /* head: the DOS form of the volume or share; rest: the path on it. */
    const wchar_t *head = final, *rest = L"";
    size_t head_len = n;
    if (wcsncmp(final, L"\\\\?\\Volume{", 11) == 0) {
        wchar_t *brace = wcschr(final, L'}');
        if (brace != NULL && brace[1] == L'\\') {
            wchar_t saved = brace[2];
            brace[2] = L'\0';
            rc = volume_dos_name(final, w + PREFIX_LEN, &dos, e);
            brace[2] = saved;
            if (rc != CP_OK)
                goto out;
            if (dos != NULL) { /* else the GUID form stands, and confinement refuses it */
                head = dos;
                head_len = wcslen(dos);
                rest = brace + 2;
            }
        }
    } else if (wcsncmp(final, L"\\\\?\\UNC\\", 8) == 0) {
        head = L"\\", head_len = 1, rest = final + 8; /* "\\server\share\..." */
    } else if (wcsncmp(final, L"\\\\?\\", PREFIX_LEN) == 0) {
        head = final + PREFIX_LEN, head_len = n - PREFIX_LEN;
    }
    while (head_len > 1 && head[head_len - 1] == L'\\')
        head_len--;
    joined = malloc((head_len + wcslen(rest) + wcslen(w + cut) + 4) * sizeof(wchar_t));
    if (joined == NULL) {
        rc = cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory resolving %s", path);
        goto out;
    }
    memcpy(joined, head, head_len * sizeof(wchar_t));
    joined[head_len] = L'\0';
    size_t len = append_piece(joined, head_len, rest);
    len = append_piece(joined, len, w + cut);
    if (len == 2 && joined[1] == L':') { /* a drive root keeps its '\' */
        joined[2] = L'\\';
        joined[3] = L'\0';
    }
    if (WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, joined, -1, out, (int)outlen, NULL,
                            NULL) == 0)
        rc = win_error(e, GetLastError(), "WideCharToMultiByte", path);
out:
    if (h != INVALID_HANDLE_VALUE)
        CloseHandle(h);
    free(joined);
    free(dos);
    free(final);
    free(w);
    return rc;
}

static const cp_fs_ops win32_ops = {
    .exists = fs_exists,
    .mkdir_all = fs_mkdir_all,
    .remove = fs_remove,
    .remove_contents = fs_remove_contents,
    .symlink = fs_symlink,
    .is_link = fs_is_link,
    .resolve = fs_resolve,
};

cp_fs_host cp_fs_host_win32(void)
{
    cp_fs_host h = {&win32_ops, NULL};
    return h;
}
