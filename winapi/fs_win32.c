/* fs_win32.c - the filesystem host ops on Windows (the product).
 *
 * Paths arrive as UTF-8 "X:\..." (already checked by the group's rules),
 * are converted to UTF-16 once here and opened through the "\\?\" prefix:
 * no MAX_PATH limit, and names are taken literally (no "." / ".." / trailing
 * dot processing, no DOS device names) - the rules refuse such names, so
 * what we check is what we open.
 *
 * Links are never followed by removal: the walk goes by handle, each
 * child opened relative to its parent without following a reparse point,
 * checked and deleted through its handle (see "removal" below).
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
#include <winternl.h>

#include "fs.h"
#include "fs_place.h"
#include "winutil_win32.h"

#define WIDE_MAX 32768      /* UTF-16 units in the longest Win32 path */
#define PREFIX_LEN 4        /* L"\\\\?\\" */
#define PREFIXED_ROOT_LEN 7 /* L"\\\\?\\C:\\" */

/* --- errors ------------------------------------------------------------- */

/* cp_win_error (winutil_win32.h): the one Win32 error map and message form,
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

/* The walk goes by open handle, never by path name below its start:
 *   - a child is opened relative to its open parent with NtOpenFile
 *     (winternl.h: "NtOpenFile function"; OBJECT_ATTRIBUTES.RootDirectory
 *     is the parent's handle, ObjectName the child's name alone) and
 *     FILE_OPEN_REPARSE_POINT ("bypass normal reparse point processing"),
 *     so a symbolic link, junction or mount point is opened as itself;
 *   - what was opened is judged through that handle:
 *     GetFileInformationByHandleEx(FileAttributeTagInfo) (winbase.h) gives
 *     its attributes and reparse tag, never the listing's stale copy;
 *   - only a directory that is not a reparse point is entered: reopened for
 *     listing with ReOpenFile (winbase.h: the same object, no name lookup)
 *     and listed with GetFileInformationByHandleEx(FileIdBothDirectoryInfo,
 *     first FileIdBothDirectoryRestartInfo);
 *   - everything is deleted through its handle with SetFileInformationByHandle
 *     (fileapi.h): FileDispositionInfoEx with FILE_DISPOSITION_FLAG_DELETE |
 *     POSIX_SEMANTICS | IGNORE_READONLY_ATTRIBUTE (Windows 10 1809 and
 *     later: "FILE_DISPOSITION_INFO_EX structure"), else FileDispositionInfo
 *     after clearing FILE_ATTRIBUTE_READONLY through the handle
 *     (FileBasicInfo), as Go's os.Remove does for a read-only file.
 * A directory is entered only when both its listing entry (or, at the
 * start, GetFileAttributesW, which reports a link itself) and its handle
 * say "a directory, not a reparse point". So a directory swapped for a
 * link between listing and descent is opened as the link and deleted as
 * one; its target is never entered. Where the name says "link" but the
 * handle holds a plain object, the open followed the link regardless of
 * FILE_OPEN_REPARSE_POINT (Wine 8 does so; Windows honours the flag): the
 * handle is dropped unused and the entry removed by name with
 * RemoveDirectoryW/DeleteFileW (fileapi.h), which remove a link itself,
 * never its target ("Symbolic Link Effects on File Systems Functions"). Deleting a
 * link or junction through a FILE_OPEN_REPARSE_POINT handle removes the
 * link, not its target; a volume mount folder loses its mount point, never
 * the volume's files. */

/* FileDispositionInfoEx (FILE_INFO_BY_HANDLE_CLASS 21) and its flags
 * (winbase.h, "FILE_DISPOSITION_INFO_EX structure": Windows 10 1607, the
 * read-only flag 1809): this build's headers hide them below those
 * versions. An older system refuses the class, and the plain
 * FileDispositionInfo follows. */
#define DISPOSITION_INFO_EX ((FILE_INFO_BY_HANDLE_CLASS)21)
#define DISPOSITION_DELETE 0x1u
#define DISPOSITION_POSIX_SEMANTICS 0x2u
#define DISPOSITION_IGNORE_READONLY 0x10u

typedef LONG(NTAPI *nt_open_file_fn)(PHANDLE, ACCESS_MASK, POBJECT_ATTRIBUTES, PIO_STATUS_BLOCK,
                                     ULONG, ULONG);
typedef ULONG(NTAPI *nt_status_to_error_fn)(LONG);

/* NtOpenFile and RtlNtStatusToDosError from ntdll.dll (loaded in every
 * process; the default link has no import library for it). */
static bool nt_functions(nt_open_file_fn *open, nt_status_to_error_fn *to_error)
{
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    if (ntdll == NULL)
        return false;
    *open = (nt_open_file_fn)(void (*)(void))GetProcAddress(ntdll, "NtOpenFile");
    *to_error =
        (nt_status_to_error_fn)(void (*)(void))GetProcAddress(ntdll, "RtlNtStatusToDosError");
    return *open != NULL && *to_error != NULL;
}

#define OPEN_ACCESS (DELETE | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | SYNCHRONIZE)
#define SHARE_ALL (FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
#define LIST_BUF 65536 /* bytes of directory entries per query */

typedef struct wbuf {
    wchar_t *s;
    size_t len; /* s[len] == 0 */
} wbuf;

static bool wbuf_push(wbuf *b, const wchar_t *name, size_t n)
{
    if (b->len + 1 + n >= WIDE_MAX)
        return false;
    b->s[b->len++] = L'\\';
    memcpy(b->s + b->len, name, n * sizeof(wchar_t));
    b->len += n;
    b->s[b->len] = L'\0';
    return true;
}

static void wbuf_cut(wbuf *b, size_t len)
{
    b->len = len;
    b->s[len] = L'\0';
}

/* The child name of the open directory parent, without following it.
 * b->s names it in messages. ERROR_* in *err on failure. */
static HANDLE open_child(HANDLE parent, const wchar_t *name, size_t n, DWORD *err)
{
    nt_open_file_fn nt_open;
    nt_status_to_error_fn to_error;
    if (!nt_functions(&nt_open, &to_error)) {
        *err = ERROR_PROC_NOT_FOUND;
        return INVALID_HANDLE_VALUE;
    }
    UNICODE_STRING us;
    us.Buffer = (PWSTR)name;
    us.Length = (USHORT)(n * sizeof(wchar_t));
    us.MaximumLength = us.Length;
    OBJECT_ATTRIBUTES oa;
    InitializeObjectAttributes(&oa, &us, OBJ_CASE_INSENSITIVE, parent, NULL);
    IO_STATUS_BLOCK io;
    HANDLE h = INVALID_HANDLE_VALUE;
    LONG st = nt_open(&h, OPEN_ACCESS, &oa, &io, SHARE_ALL,
                      FILE_OPEN_REPARSE_POINT | FILE_SYNCHRONOUS_IO_NONALERT |
                          FILE_OPEN_FOR_BACKUP_INTENT);
    if (st < 0) {
        *err = to_error(st);
        return INVALID_HANDLE_VALUE;
    }
    return h;
}

/* Deletes what h is open on (see the top of this section). attrs are its
 * attributes, read through h. The name goes when h is closed (at once with
 * POSIX semantics). */
static int delete_by_handle(HANDLE h, DWORD attrs, const wchar_t *name_for_msg, cp_error *e)
{
    DWORD ex = DISPOSITION_DELETE | DISPOSITION_POSIX_SEMANTICS | DISPOSITION_IGNORE_READONLY;
    if (SetFileInformationByHandle(h, DISPOSITION_INFO_EX, &ex, sizeof(ex)))
        return CP_OK;
    DWORD err = GetLastError();
    if (err == ERROR_DIR_NOT_EMPTY)
        return win_error_w(e, err, "SetFileInformationByHandle(FileDispositionInfoEx)",
                           name_for_msg);
    /* Before Windows 10 1809, or a file system without POSIX deletes. */
    FILE_DISPOSITION_INFO d = {TRUE};
    if (SetFileInformationByHandle(h, FileDispositionInfo, &d, sizeof(d)))
        return CP_OK;
    err = GetLastError();
    if (err == ERROR_ACCESS_DENIED && (attrs & FILE_ATTRIBUTE_READONLY)) {
        FILE_BASIC_INFO bi = {0};
        DWORD plain = attrs & ~FILE_ATTRIBUTE_READONLY;
        bi.FileAttributes = plain != 0 ? plain : FILE_ATTRIBUTE_NORMAL;
        if (SetFileInformationByHandle(h, FileBasicInfo, &bi, sizeof(bi)) &&
            SetFileInformationByHandle(h, FileDispositionInfo, &d, sizeof(d)))
            return CP_OK;
        err = GetLastError();
    }
    return win_error_w(e, err, "SetFileInformationByHandle(FileDispositionInfo)", name_for_msg);
}

/* Attributes and reparse tag of what h is open on. */
static int handle_attrs(HANDLE h, FILE_ATTRIBUTE_TAG_INFO *ti, const wchar_t *name, cp_error *e)
{
    if (GetFileInformationByHandleEx(h, FileAttributeTagInfo, ti, sizeof(*ti)))
        return CP_OK;
    return win_error_w(e, GetLastError(), "GetFileInformationByHandleEx(FileAttributeTagInfo)",
                       name);
}

static bool is_plain_dir(DWORD attrs)
{
    return (attrs & FILE_ATTRIBUTE_DIRECTORY) && !(attrs & FILE_ATTRIBUTE_REPARSE_POINT);
}

/* True when the name reports a link (listed: from a listing or
 * GetFileAttributesW) but the handle opened with FILE_OPEN_REPARSE_POINT
 * holds something that is not one: the open followed it anyway. */
static bool followed_anyway(DWORD listed, DWORD held)
{
    return (listed & FILE_ATTRIBUTE_REPARSE_POINT) && !(held & FILE_ATTRIBUTE_REPARSE_POINT);
}

/* RemoveDirectoryW / DeleteFileW (fileapi.h) on the link w itself (see the
 * top of this section): both remove a symbolic link or junction, not its
 * target, and RemoveDirectoryW never removes a non-empty directory. */
static int remove_by_name(const wchar_t *w, DWORD listed, cp_error *e)
{
    bool dir = (listed & FILE_ATTRIBUTE_DIRECTORY) != 0;
    if (dir ? RemoveDirectoryW(w) : DeleteFileW(w))
        return CP_OK;
    return win_error_w(e, GetLastError(), dir ? "RemoveDirectoryW" : "DeleteFileW", w);
}

/* The names in one directory, listed once through its handle before any
 * is deleted (deleting while listing may skip entries). */
typedef struct names {
    wchar_t *text; /* per entry: 2 units of listed attributes, name, '\0' */
    size_t used, cap;
    size_t next; /* offset of the next name to handle */
} names;

static bool names_add(names *l, DWORD attrs, const wchar_t *name, size_t n)
{
    if (l->used + n + 3 > l->cap) {
        size_t ncap = l->cap != 0 ? l->cap * 2 : 1024;
        while (ncap < l->used + n + 3)
            ncap *= 2;
        wchar_t *t = realloc(l->text, ncap * sizeof(wchar_t));
        if (t == NULL)
            return false;
        l->text = t;
        l->cap = ncap;
    }
    l->text[l->used++] = (wchar_t)(attrs & 0xffff);
    l->text[l->used++] = (wchar_t)(attrs >> 16);
    memcpy(l->text + l->used, name, n * sizeof(wchar_t));
    l->used += n;
    l->text[l->used++] = L'\0';
    return true;
}

/* Lists directory dir (open with FILE_LIST_DIRECTORY) into l, "." and ".."
 * left out. GetFileInformationByHandleEx ends with ERROR_NO_MORE_FILES. */
static int list_dir(HANDLE dir, names *l, void *buf, const wchar_t *name_for_msg, cp_error *e)
{
    FILE_INFO_BY_HANDLE_CLASS cls = FileIdBothDirectoryRestartInfo;
    for (;;) {
        if (!GetFileInformationByHandleEx(dir, cls, buf, LIST_BUF)) {
            DWORD err = GetLastError();
            if (err == ERROR_NO_MORE_FILES)
                return CP_OK;
            return win_error_w(e, err, "GetFileInformationByHandleEx(FileIdBothDirectoryInfo)",
                               name_for_msg);
        }
        cls = FileIdBothDirectoryInfo;
        const unsigned char *p = buf;
        for (;;) {
            const FILE_ID_BOTH_DIR_INFO *fi = (const FILE_ID_BOTH_DIR_INFO *)p;
            size_t n = fi->FileNameLength / sizeof(wchar_t);
            bool dots = (n == 1 && fi->FileName[0] == L'.') ||
                        (n == 2 && fi->FileName[0] == L'.' && fi->FileName[1] == L'.');
            if (!dots && !names_add(l, fi->FileAttributes, fi->FileName, n))
                return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory listing a directory");
            if (fi->NextEntryOffset == 0)
                break;
            p += fi->NextEntryOffset;
        }
    }
}

typedef struct level {
    HANDLE dir; /* open for listing and deletion; the top one is borrowed */
    names list;
    size_t len;  /* b->len of this directory's path (messages only) */
    DWORD attrs; /* its attributes, for a read-only directory */
} level;

/* ReOpenFile (winbase.h) of a plain directory for listing. */
static HANDLE open_for_listing(HANDLE h, DWORD *err)
{
    HANDLE d = ReOpenFile(h, OPEN_ACCESS | FILE_LIST_DIRECTORY, SHARE_ALL,
                          FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT);
    *err = d == INVALID_HANDLE_VALUE ? GetLastError() : ERROR_SUCCESS;
    return d;
}

/* Pushes directory dir (listed now) onto the stack. */
static int push_level(level **stack, size_t *depth, size_t *cap, HANDLE dir, DWORD attrs,
                      size_t len, void *buf, const wchar_t *name, cp_error *e)
{
    if (*depth == *cap) {
        size_t ncap = *cap != 0 ? *cap * 2 : 16;
        level *n = realloc(*stack, ncap * sizeof(level));
        if (n == NULL)
            return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory walking a directory");
        *stack = n;
        *cap = ncap;
    }
    level *lv = &(*stack)[(*depth)++];
    *lv = (level){dir, {NULL, 0, 0, 0}, len, attrs};
    return list_dir(dir, &lv->list, buf, name, e);
}

/* Deletes everything inside the directory top (open with FILE_LIST_DIRECTORY;
 * not closed here); b->s names it in messages. Iterative with a heap stack
 * (worker threads have small stacks; trees can be deep). */
static int clear_tree(HANDLE top, wbuf *b, cp_error *e)
{
    level *stack = NULL;
    size_t depth = 0, cap = 0, top_len = b->len;
    void *buf = malloc(LIST_BUF);
    if (buf == NULL)
        return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory walking a directory");
    int rc = push_level(&stack, &depth, &cap, top, FILE_ATTRIBUTE_DIRECTORY, b->len, buf, b->s, e);
    while (rc == CP_OK && depth > 0) {
        level *cur = &stack[depth - 1];
        wbuf_cut(b, cur->len);
        if (cur->list.next >= cur->list.used) { /* done: delete it (not the top) */
            level done = *cur;
            depth--;
            free(done.list.text);
            if (depth > 0) {
                rc = delete_by_handle(done.dir, done.attrs, b->s, e);
                CloseHandle(done.dir);
            }
            continue;
        }
        const wchar_t *entry = cur->list.text + cur->list.next;
        DWORD listed = (DWORD)(uint16_t)entry[0] | (DWORD)(uint16_t)entry[1] << 16;
        const wchar_t *name = entry + 2;
        size_t n = wcslen(name);
        cur->list.next += n + 3;
        if (!wbuf_push(b, name, n)) {
            rc = win_error_w(e, ERROR_FILENAME_EXCED_RANGE, "NtOpenFile", b->s);
            break;
        }
        DWORD err = ERROR_SUCCESS;
        HANDLE h = open_child(cur->dir, name, n, &err);
        if (h == INVALID_HANDLE_VALUE) {
            if (!is_missing(err)) /* gone meanwhile: nothing to delete */
                rc = win_error_w(e, err, "NtOpenFile", b->s);
            continue;
        }
        FILE_ATTRIBUTE_TAG_INFO ti;
        rc = handle_attrs(h, &ti, b->s, e);
        if (rc == CP_OK && followed_anyway(listed, ti.FileAttributes)) {
            CloseHandle(h);
            rc = remove_by_name(b->s, listed, e);
            continue;
        }
        if (rc == CP_OK && is_plain_dir(ti.FileAttributes) && is_plain_dir(listed)) {
            HANDLE d = open_for_listing(h, &err);
            CloseHandle(h);
            if (d == INVALID_HANDLE_VALUE) {
                rc = win_error_w(e, err, "ReOpenFile", b->s);
                continue;
            }
            rc = push_level(&stack, &depth, &cap, d, ti.FileAttributes, b->len, buf, b->s, e);
            if (rc != CP_OK && (depth == 0 || stack[depth - 1].dir != d))
                CloseHandle(d); /* never pushed */
            continue;
        }
        if (rc == CP_OK) /* a file, link, junction or mount point: the entry itself */
            rc = delete_by_handle(h, ti.FileAttributes, b->s, e);
        CloseHandle(h);
    }
    while (depth > 0) {
        level *lv = &stack[--depth];
        free(lv->list.text);
        if (depth > 0)
            CloseHandle(lv->dir);
    }
    free(stack);
    free(buf);
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

/* CreateFileW (fileapi.h) with FILE_FLAG_OPEN_REPARSE_POINT opens the entry
 * itself, so a link is removed as a link whatever its target; a plain
 * directory is emptied through a handle to it and then deleted through the
 * same handle. */
static int fs_remove(void *ctx, const char *path, bool recursive, cp_error *e)
{
    (void)ctx;
    wbuf b;
    int rc = new_wbuf(path, &b, e);
    if (rc != CP_OK)
        return rc;
    HANDLE h = CreateFileW(b.s, OPEN_ACCESS, SHARE_ALL, NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        rc = (recursive && is_missing(err)) ? CP_OK /* already gone, as RemoveAll */
                                            : win_error(e, err, "CreateFileW", path);
        free(b.s);
        return rc;
    }
    /* GetFileAttributesW reports a link itself (fileapi.h) */
    DWORD named = GetFileAttributesW(b.s);
    if (named == INVALID_FILE_ATTRIBUTES)
        named = FILE_ATTRIBUTE_REPARSE_POINT; /* unknown: never entered */
    FILE_ATTRIBUTE_TAG_INFO ti;
    rc = handle_attrs(h, &ti, b.s, e);
    if (rc == CP_OK && followed_anyway(named, ti.FileAttributes)) {
        CloseHandle(h);
        rc = remove_by_name(b.s, named, e);
        free(b.s);
        return rc;
    }
    if (rc == CP_OK && recursive && is_plain_dir(ti.FileAttributes) && is_plain_dir(named)) {
        DWORD err;
        HANDLE d = open_for_listing(h, &err);
        if (d == INVALID_HANDLE_VALUE) {
            rc = win_error(e, err, "ReOpenFile", path);
        } else {
            CloseHandle(h);
            h = d;
            rc = clear_tree(h, &b, e);
        }
    }
    if (rc == CP_OK)
        rc = delete_by_handle(h, ti.FileAttributes, b.s, e);
    CloseHandle(h);
    free(b.s);
    return rc;
}

/* The directory itself may be a link: the group confined its target, so
 * it is opened following links (CreateFileW without
 * FILE_FLAG_OPEN_REPARSE_POINT); nothing below it is followed. */
static int fs_remove_contents(void *ctx, const char *path, cp_error *e)
{
    (void)ctx;
    wbuf b;
    int rc = new_wbuf(path, &b, e);
    if (rc != CP_OK)
        return rc;
    HANDLE h = CreateFileW(b.s, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE, SHARE_ALL,
                           NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        rc = win_error(e, GetLastError(), "CreateFileW", path);
        free(b.s);
        return rc;
    }
    FILE_ATTRIBUTE_TAG_INFO ti;
    rc = handle_attrs(h, &ti, b.s, e);
    if (rc == CP_OK && !(ti.FileAttributes & FILE_ATTRIBUTE_DIRECTORY))
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "RmdirContents %s: not a directory", path);
    else if (rc == CP_OK)
        rc = clear_tree(h, &b, e);
    CloseHandle(h);
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
    BOOLEAN made =
        CreateSymbolicLinkW(wl, wt, flags | SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE);
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
            return win_error_w(e, err, "GetVolumePathNamesForVolumeNameW", volume);
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
            return is_missing(err);
        if (attrs & FILE_ATTRIBUTE_REPARSE_POINT)
            return false;
        start = i + 1;
    }
    return true;
}

/* Where w ("\\?\X:\...") really is: opens its longest existing prefix
 * following every link in it (CreateFileW with FILE_FLAG_BACKUP_SEMANTICS,
 * fileapi.h) and names what was opened with GetFinalPathNameByHandleW
 * (fileapi.h): VOLUME_NAME_GUID ("\\?\Volume{G}\rest") first, because
 * VOLUME_NAME_DOS fails with ERROR_PATH_NOT_FOUND for a volume without a
 * drive letter - which is how volumes are mounted under the kubelet
 * directory; then VOLUME_NAME_DOS (network files have no volume GUID). The
 * missing rest of w is appended as is. *out is malloc'd. An entry that
 * exists but cannot be followed (a dangling link inside the path) fails
 * closed; path names the request in messages. */
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
        if (h == INVALID_HANDLE_VALUE && is_missing(err) &&
            GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES) {
            char where[1024];
            narrow(w, where, sizeof(where));
            w[cut] = saved;
            return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                                "resolve %s: %s is a link whose target does not exist", path,
                                where);
        }
        w[cut] = saved;
        if (h != INVALID_HANDLE_VALUE)
            break;
        if (!is_missing(err))
            return win_error(e, err, "CreateFileW", path);
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
    int rc = CP_OK;
    const wchar_t *missing = w + cut;
    wchar_t *final = malloc((WIDE_MAX + wcslen(missing) + 2) * sizeof(wchar_t));
    if (final == NULL) {
        CloseHandle(h);
        return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory resolving %s", path);
    }
    DWORD n =
        GetFinalPathNameByHandleW(h, final, WIDE_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_GUID);
    DWORD err = n == 0 ? GetLastError() : ERROR_SUCCESS;
    if (n == 0) {
        n = GetFinalPathNameByHandleW(h, final, WIDE_MAX, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
        err = n == 0 ? GetLastError() : ERROR_SUCCESS;
    }
    CloseHandle(h);
    if (n == 0 || n >= WIDE_MAX) {
        free(final);
        return win_error(e, n == 0 ? err : ERROR_FILENAME_EXCED_RANGE, "GetFinalPathNameByHandleW",
                         path);
    }
    if (*missing != L'\0') {
        if (n > 0 && final[n - 1] == L'\\')
            n--;
        wcscpy(final + n, missing); /* missing starts with '\' */
    }
    *out = final;
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

/* Resolves path (see fs.h). The fast path when nothing in it can lead
 * elsewhere; else the object is located (locate) and, when it lives on a
 * volume, named by cp_fs_place (winapi/fs_place.h) against the anchors'
 * own locations and the system volume: never by the mount folder the path
 * came through when the volume holds an anchor or the running Windows. */
static int fs_resolve(void *ctx, const char *path, const char *const *anchors, size_t n_anchors,
                      char *out, size_t outlen, cp_error *e)
{
    (void)ctx;
    int rc = CP_OK;
    wchar_t *final = NULL, *names = NULL, *named = NULL, *sysvol = NULL;
    wchar_t **awide = NULL;
    cp_fs_anchor *anchor = NULL;
    wchar_t *w = to_wide(path, true, e);
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
        goto out;
    }
    rc = locate(w, path, &final, e);
    if (rc != CP_OK)
        goto out;

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
            wchar_t *aw = to_wide(anchors[i], true, &ignored);
            awide[i] = aw;
            anchor[i].text = aw != NULL ? aw + PREFIX_LEN : L"";
            wchar_t *loc = NULL;
            if (aw != NULL && locate(aw, anchors[i], &loc, &ignored) == CP_OK)
                anchor[i].location = loc;
        }
        sysvol = system_volume();
        named = cp_fs_place(final, w + PREFIX_LEN, names, sysvol, anchor, n_anchors);
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
        rc = win_error(e, GetLastError(), "WideCharToMultiByte", path);
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
