/* fs_remove_win.c - removal for the Windows filesystem host (fs_win.c):
 * Rmdir with and without force, and RmdirContents, by open handle, from
 * the judged handle of the directory the removal starts in (fs.h,
 * cp_fs_guard; fs_write_win.c). */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <winternl.h>

#include "host/fs_win_internal.h"

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
 * FILE_OPEN_REPARSE_POINT (Wine 8 does so, and only there is this
 * believed; Windows honours the flag): the
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
        return fsw_error_w(e, err, "SetFileInformationByHandle(FileDispositionInfoEx)",
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
    return fsw_error_w(e, err, "SetFileInformationByHandle(FileDispositionInfo)", name_for_msg);
}

/* Attributes and reparse tag of what h is open on. */
static int handle_attrs(HANDLE h, FILE_ATTRIBUTE_TAG_INFO *ti, const wchar_t *name, cp_error *e)
{
    if (GetFileInformationByHandleEx(h, FileAttributeTagInfo, ti, sizeof(*ti)))
        return CP_OK;
    return fsw_error_w(e, GetLastError(), "GetFileInformationByHandleEx(FileAttributeTagInfo)",
                       name);
}

static bool is_plain_dir(DWORD attrs)
{
    return (attrs & FILE_ATTRIBUTE_DIRECTORY) && !(attrs & FILE_ATTRIBUTE_REPARSE_POINT);
}

/* True on a host whose opens follow a link even with
 * FILE_OPEN_REPARSE_POINT: Wine, known by the wine_get_version export of
 * its ntdll. Windows honours the flag ("ZwCreateFile function (wdm.h)":
 * FILE_OPEN_REPARSE_POINT opens the reparse point itself). */
static bool opens_follow_links(void)
{
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    return ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL;
}

/* True when the name reports a link (listed: from a listing or
 * GetFileAttributesW) but the handle opened with FILE_OPEN_REPARSE_POINT
 * holds something that is not one, on a host whose opens follow links
 * anyway: the handle holds the link's target, never to be deleted. On
 * Windows such a disagreement only means the entry changed between the
 * listing and the open; the handle, opened without following, is what is
 * there, and only it is acted on (never the name, which a swapped parent
 * could send elsewhere). */
static bool followed_anyway(DWORD listed, DWORD held)
{
    return (listed & FILE_ATTRIBUTE_REPARSE_POINT) && !(held & FILE_ATTRIBUTE_REPARSE_POINT) &&
           opens_follow_links();
}

/* RemoveDirectoryW / DeleteFileW (fileapi.h) on the link w itself (see the
 * top of this section): both remove a symbolic link or junction, not its
 * target, and RemoveDirectoryW never removes a non-empty directory. */
static int remove_by_name(const wchar_t *w, DWORD listed, cp_error *e)
{
    bool dir = (listed & FILE_ATTRIBUTE_DIRECTORY) != 0;
    if (dir ? RemoveDirectoryW(w) : DeleteFileW(w))
        return CP_OK;
    return fsw_error_w(e, GetLastError(), dir ? "RemoveDirectoryW" : "DeleteFileW", w);
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
            return fsw_error_w(e, err, "GetFileInformationByHandleEx(FileIdBothDirectoryInfo)",
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
            rc = fsw_error_w(e, ERROR_FILENAME_EXCED_RANGE, "NtOpenFile", b->s);
            break;
        }
        DWORD err = ERROR_SUCCESS;
        HANDLE h = open_child(cur->dir, name, n, &err);
        if (h == INVALID_HANDLE_VALUE) {
            if (!fsw_is_missing(err)) /* gone meanwhile: nothing to delete */
                rc = fsw_error_w(e, err, "NtOpenFile", b->s);
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
                rc = fsw_error_w(e, err, "ReOpenFile", b->s);
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
    wchar_t *w = fsw_to_wide(path, true, e);
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

/* The entry path names is removed relative to its parent's handle: the
 * parent is opened and judged (fsw_open_judged, fs_write_win.c), the
 * entry opened inside it without following it (open_child:
 * FILE_OPEN_REPARSE_POINT), so a link is removed as a link whatever its
 * target; a plain directory is emptied through a handle to it and then
 * deleted through the same handle. */
int fsw_remove(void *ctx, const char *path, bool recursive, const cp_fs_guard *g, cp_error *e)
{
    (void)ctx;
    wbuf b;
    int rc = new_wbuf(path, &b, e);
    if (rc != CP_OK)
        return rc;
    wchar_t *slash = wcsrchr(b.s, L'\\');
    if (slash == NULL || slash < b.s + PREFIXED_ROOT_LEN - 1 || slash[1] == L'\0') {
        free(b.s);
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "Rmdir %s: no name to remove", path);
    }
    const wchar_t *name = slash + 1;
    size_t keep = (size_t)(slash - b.s) + (slash == b.s + PREFIXED_ROOT_LEN - 1); /* "X:\" */
    wchar_t *parent = malloc((keep + 1) * sizeof(wchar_t));
    if (parent == NULL) {
        free(b.s);
        return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory for %s", path);
    }
    memcpy(parent, b.s, keep * sizeof(wchar_t));
    parent[keep] = L'\0';
    HANDLE hp = INVALID_HANDLE_VALUE, h = INVALID_HANDLE_VALUE;
    DWORD err = ERROR_SUCCESS;
    rc = fsw_open_judged(parent, name, g, DIR_ACCESS, path, &hp, &err, e);
    free(parent);
    if (rc != CP_OK && err != ERROR_SUCCESS && fsw_is_missing(err))
        rc = recursive ? CP_OK /* already gone, as RemoveAll */
                       : fsw_error(e, err, "CreateFileW", path);
    if (rc == CP_OK && hp != INVALID_HANDLE_VALUE) {
        h = open_child(hp, name, wcslen(name), &err);
        if (h == INVALID_HANDLE_VALUE)
            rc = recursive && fsw_is_missing(err) ? CP_OK : fsw_error(e, err, "NtOpenFile", path);
    }
    if (h == INVALID_HANDLE_VALUE)
        goto out;
    /* GetFileAttributesW reports a link itself (fileapi.h) */
    DWORD named = GetFileAttributesW(b.s);
    if (named == INVALID_FILE_ATTRIBUTES)
        named = FILE_ATTRIBUTE_REPARSE_POINT; /* unknown: never entered */
    FILE_ATTRIBUTE_TAG_INFO ti;
    rc = handle_attrs(h, &ti, b.s, e);
    if (rc == CP_OK && followed_anyway(named, ti.FileAttributes)) {
        CloseHandle(h);
        h = INVALID_HANDLE_VALUE;
        rc = remove_by_name(b.s, named, e);
        goto out;
    }
    if (rc == CP_OK && recursive && is_plain_dir(ti.FileAttributes) && is_plain_dir(named)) {
        HANDLE d = open_for_listing(h, &err);
        if (d == INVALID_HANDLE_VALUE) {
            rc = fsw_error(e, err, "ReOpenFile", path);
        } else {
            CloseHandle(h);
            h = d;
            rc = clear_tree(h, &b, e);
        }
    }
    if (rc == CP_OK)
        rc = delete_by_handle(h, ti.FileAttributes, b.s, e);
out:
    if (h != INVALID_HANDLE_VALUE)
        CloseHandle(h);
    if (hp != INVALID_HANDLE_VALUE)
        CloseHandle(hp);
    free(b.s);
    return rc;
}

/* The directory itself may be a link: it is opened following links and
 * judged where it leads (fsw_open_judged); nothing below it is followed. */
int fsw_remove_contents(void *ctx, const char *path, const cp_fs_guard *g, cp_error *e)
{
    (void)ctx;
    wbuf b;
    int rc = new_wbuf(path, &b, e);
    if (rc != CP_OK)
        return rc;
    HANDLE h;
    DWORD err;
    rc = fsw_open_judged(b.s, L"", g, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
                         path, &h, &err, e);
    if (rc != CP_OK && err == ERROR_DIRECTORY)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "RmdirContents %s: not a directory", path);
    else if (rc != CP_OK && err != ERROR_SUCCESS)
        rc = fsw_error(e, err, "CreateFileW", path);
    if (rc == CP_OK) {
        rc = clear_tree(h, &b, e);
        CloseHandle(h);
    }
    free(b.s);
    return rc;
}
