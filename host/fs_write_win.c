/* fs_write_win.c - the Windows filesystem host's writes that create
 * (mkdir_all, symlink), and what every write starts from: the judged open
 * of the directory it goes through and opens relative to that handle
 * (fs.h, cp_fs_guard).
 *
 * The directory a write goes through is opened (CreateFileW following
 * links, as resolve follows them), named from the handle
 * (fsw_handle_final, fsw_name: the same naming resolve gives a path) and
 * judged by the group's guard; the write is then made relative to that
 * handle with NtCreateFile (OBJECT_ATTRIBUTES.RootDirectory = the handle,
 * ObjectName = one name), never by walking the path again. The judgement
 * runs on every write, link or not: Wine's opens follow a link even with
 * FILE_OPEN_REPARSE_POINT, so a walk here could not tell that it went
 * through one. What is judged is what is written through: a parent swapped
 * for a link or junction after the group's check leads the open to
 * another directory, whose name the guard refuses. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <winioctl.h>
#include <winternl.h>

#include "host/fs_win_internal.h"
#include "base/winutil_win.h"

#define PREFIX_LEN 4       /* L"\\\\?\\" */
#define RESOLVED_MAX 32768 /* UTF-8 bytes of a judged name */

/* --- NtCreateFile relative to a handle ------------------------------------ */

typedef LONG(NTAPI *nt_create_file_fn)(PHANDLE, ACCESS_MASK, POBJECT_ATTRIBUTES, PIO_STATUS_BLOCK,
                                       PLARGE_INTEGER, ULONG, ULONG, ULONG, ULONG, PVOID, ULONG);
typedef ULONG(NTAPI *nt_status_to_error_fn)(LONG);

/* NtCreateFile and RtlNtStatusToDosError from ntdll.dll, loaded in every
 * process (GetModuleHandleW, GetProcAddress): the product's import table
 * stays KERNEL32/ADVAPI32/msvcrt (test/exe/check_imports.sh). */
static bool nt_functions(nt_create_file_fn *create, nt_status_to_error_fn *to_error)
{
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    if (ntdll == NULL)
        return false;
    *create = (nt_create_file_fn)(void (*)(void))GetProcAddress(ntdll, "NtCreateFile");
    *to_error =
        (nt_status_to_error_fn)(void (*)(void))GetProcAddress(ntdll, "RtlNtStatusToDosError");
    return *create != NULL && *to_error != NULL;
}

/* "NtCreateFile function (winternl.h)" and "ZwCreateFile function
 * (wdm.h)", Microsoft Learn: with OBJECT_ATTRIBUTES.RootDirectory set
 * ("OBJECT_ATTRIBUTES structure", "InitializeObjectAttributes macro"),
 * ObjectName is relative to the directory that handle is open on, so the
 * name is looked up there and nowhere else. FILE_OPEN_REPARSE_POINT in
 * options opens a reparse point itself instead of what it leads to;
 * FILE_CREATE fails (STATUS_OBJECT_NAME_COLLISION, ERROR_ALREADY_EXISTS)
 * when the name exists, so what it returns was made by this call;
 * FILE_OPEN_FOR_BACKUP_INTENT as CreateFileW's FILE_FLAG_BACKUP_SEMANTICS. */
HANDLE fsw_nt_create(HANDLE dir, const wchar_t *name, size_t n, ACCESS_MASK access,
                     ULONG disposition, ULONG options, DWORD *err)
{
    nt_create_file_fn nt_create;
    nt_status_to_error_fn to_error;
    if (!nt_functions(&nt_create, &to_error)) {
        *err = ERROR_PROC_NOT_FOUND;
        return INVALID_HANDLE_VALUE;
    }
    if (n == 0 || n * sizeof(wchar_t) > 0xfffe || wmemchr(name, L'\\', n) != NULL) {
        *err = ERROR_INVALID_NAME; /* one component, never a path */
        return INVALID_HANDLE_VALUE;
    }
    UNICODE_STRING us;
    us.Buffer = (PWSTR)name;
    us.Length = (USHORT)(n * sizeof(wchar_t));
    us.MaximumLength = us.Length;
    OBJECT_ATTRIBUTES oa;
    InitializeObjectAttributes(&oa, &us, OBJ_CASE_INSENSITIVE, dir, NULL);
    IO_STATUS_BLOCK io;
    HANDLE h = INVALID_HANDLE_VALUE;
    LONG st = nt_create(&h, access, &oa, &io, NULL, FILE_ATTRIBUTE_NORMAL, SHARE_ALL, disposition,
                        options | FILE_SYNCHRONOUS_IO_NONALERT | FILE_OPEN_FOR_BACKUP_INTENT, NULL,
                        0);
    if (st < 0) {
        *err = to_error(st);
        return INVALID_HANDLE_VALUE;
    }
    *err = ERROR_SUCCESS;
    return h;
}

/* The first n units of s, as a string of their own; malloc'd or NULL. */
static wchar_t *wdup_n(const wchar_t *s, size_t n)
{
    wchar_t *d = malloc((n + 1) * sizeof(wchar_t));
    if (d != NULL) {
        memcpy(d, s, n * sizeof(wchar_t));
        d[n] = L'\0';
    }
    return d;
}

/* --- the judged open ------------------------------------------------------ */

/* Asks g whether what h is open on, with rest appended, may be written:
 * the handle's final path named as resolve names paths, via being the
 * caller's path of h (no \\?\). */
static int judge_handle(HANDLE h, const wchar_t *via, const wchar_t *rest, const cp_fs_guard *g,
                        const char *path, cp_error *e)
{
    size_t rlen = wcslen(rest), vlen = wcslen(via);
    wchar_t *final = NULL;
    wchar_t *full_via = malloc((vlen + rlen + 2) * sizeof(wchar_t));
    char *named = malloc(RESOLVED_MAX);
    int rc = full_via == NULL || named == NULL
                 ? cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory judging %s", path)
                 : fsw_handle_final(h, path, rlen + 2, &final, e);
    if (rc == CP_OK) {
        size_t n = wcslen(final);
        if (rlen > 0) {
            if (n > 0 && final[n - 1] != L'\\')
                final[n++] = L'\\';
            wcscpy(final + n, rest);
        }
        wcscpy(full_via, via);
        if (rlen > 0) {
            if (vlen > 0 && full_via[vlen - 1] != L'\\')
                full_via[vlen++] = L'\\';
            wcscpy(full_via + vlen, rest);
        }
        rc = fsw_name(final, full_via, path, g->anchors, g->n_anchors, named, RESOLVED_MAX, e);
    }
    if (rc == CP_OK)
        rc = g->judge(g->arg, named, e);
    free(named);
    free(final);
    free(full_via);
    return rc;
}

int fsw_open_judged(const wchar_t *w, const wchar_t *rest, const cp_fs_guard *g, ACCESS_MASK access,
                    const char *path, HANDLE *out, DWORD *open_err, cp_error *e)
{
    *out = INVALID_HANDLE_VALUE;
    *open_err = ERROR_SUCCESS;
    /* CreateFileW (fileapi.h) without FILE_FLAG_OPEN_REPARSE_POINT follows
     * every link on the way, as resolve does; FILE_FLAG_BACKUP_SEMANTICS
     * opens a directory. */
    HANDLE h =
        CreateFileW(w, access, SHARE_ALL, NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        *open_err = GetLastError();
        return fsw_error_w(e, *open_err, "CreateFileW", w);
    }
    /* GetFileInformationByHandleEx(FileAttributeTagInfo) (winbase.h): what
     * was opened, read through the handle. */
    FILE_ATTRIBUTE_TAG_INFO ti;
    int rc = CP_OK;
    if (!GetFileInformationByHandleEx(h, FileAttributeTagInfo, &ti, sizeof(ti))) {
        rc = fsw_error_w(e, GetLastError(), "GetFileInformationByHandleEx", w);
    } else if (!(ti.FileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
        *open_err = ERROR_DIRECTORY;
        char where[1024];
        fsw_narrow(w, where, sizeof(where));
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: %s is a file, not a directory", path,
                          where);
    }
    if (rc == CP_OK && g != NULL) {
        const wchar_t *via = wcsncmp(w, L"\\\\?\\", PREFIX_LEN) == 0 ? w + PREFIX_LEN : w;
        rc = judge_handle(h, via, rest, g, path, e);
    }
    if (rc != CP_OK) {
        CloseHandle(h);
        return rc;
    }
    *out = h;
    return CP_OK;
}

/* --- mkdir ---------------------------------------------------------------- */

/* Creates path and its missing parents (fs.h). GetFileAttributesW
 * (fileapi.h) finds the longest existing prefix - a hint only: that
 * directory is then opened and judged with the missing rest appended
 * (fsw_open_judged), and each missing directory is made relative to the
 * handle of the one before it with NtCreateFile(FILE_CREATE,
 * FILE_DIRECTORY_FILE). A name that exists by then was not made here: it
 * is opened (following it, as the walk from the root would) and judged
 * again before anything is made inside it. An existing directory (or link
 * to one) is fine; anything else in the way is FAILED_PRECONDITION. */
int fsw_mkdir_all(void *ctx, const char *path, const cp_fs_guard *g, cp_error *e)
{
    (void)ctx;
    wchar_t *w = fsw_to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    int rc = CP_OK;
    size_t len = wcslen(w), cut = len;
    DWORD attrs;
    for (;;) {
        wchar_t saved = w[cut];
        w[cut] = L'\0';
        attrs = GetFileAttributesW(w);
        DWORD err = attrs == INVALID_FILE_ATTRIBUTES ? GetLastError() : ERROR_SUCCESS;
        w[cut] = saved;
        if (attrs != INVALID_FILE_ATTRIBUTES)
            break;
        if (!fsw_is_missing(err) || cut <= PREFIXED_ROOT_LEN) {
            rc = fsw_error(e, err, "GetFileAttributesW", path);
            goto out;
        }
        while (cut > PREFIXED_ROOT_LEN && w[cut - 1] != L'\\')
            cut--;
        if (cut > PREFIXED_ROOT_LEN)
            cut--; /* the parent, without its trailing '\' */
    }
    if (!(attrs & FILE_ATTRIBUTE_DIRECTORY)) {
        char where[1024];
        wchar_t saved = w[cut];
        w[cut] = L'\0';
        fsw_narrow(w, where, sizeof(where));
        w[cut] = saved;
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                          "CreateDirectoryW %s: %s is a file, not a directory", path, where);
        goto out;
    }
    if (cut == len) /* it exists: nothing to write */
        goto out;
    wchar_t *rest = w + cut + (w[cut] == L'\\');
    wchar_t *have = wdup_n(w, cut); /* the existing directory ("\\?\X:\" for a root) */
    HANDLE h = INVALID_HANDLE_VALUE;
    DWORD err;
    rc = have == NULL ? cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory for %s", path)
                      : fsw_open_judged(have, rest, g, DIR_ACCESS | FILE_ADD_SUBDIRECTORY, path, &h,
                                        &err, e);
    free(have);
    while (rc == CP_OK && *rest != L'\0') {
        size_t n = wcscspn(rest, L"\\");
        HANDLE c = fsw_nt_create(h, rest, n, DIR_ACCESS | FILE_ADD_SUBDIRECTORY, FILE_CREATE,
                                 FILE_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT, &err);
        if (c == INVALID_HANDLE_VALUE &&
            (err == ERROR_ALREADY_EXISTS || err == ERROR_FILE_EXISTS)) {
            /* made by someone else meanwhile: open it as the walk would
             * (following a link), then judge it before writing inside. */
            c = fsw_nt_create(h, rest, n, DIR_ACCESS | FILE_ADD_SUBDIRECTORY, FILE_OPEN,
                              FILE_DIRECTORY_FILE, &err);
            const wchar_t *below = rest[n] == L'\\' ? rest + n + 1 : rest + n;
            if (c != INVALID_HANDLE_VALUE && *below != L'\0' && g != NULL) {
                wchar_t held = rest[n];
                rest[n] = L'\0'; /* w + PREFIX_LEN: the path down to this name */
                rc = judge_handle(c, w + PREFIX_LEN, below, g, path, e);
                rest[n] = held;
            }
        }
        CloseHandle(h);
        h = c;
        if (c == INVALID_HANDLE_VALUE) {
            char where[1024];
            wchar_t held = rest[n];
            rest[n] = L'\0';
            fsw_narrow(w, where, sizeof(where));
            rest[n] = held;
            rc = err == ERROR_DIRECTORY
                     ? cp_error_set(e, CP_E_FAILED_PRECONDITION,
                                    "CreateDirectoryW %s: %s is a file, not a directory", path,
                                    where)
                     : fsw_error(e, err, "NtCreateFile", where);
            break;
        }
        rest += n + (rest[n] == L'\\');
    }
    if (h != INVALID_HANDLE_VALUE)
        CloseHandle(h);
out:
    free(w);
    return rc;
}

/* --- links ---------------------------------------------------------------- */

/* A link's target in UTF-16 as stored: drive-absolute as every host path,
 * or the UNC path \\server\share\... of an SMB mapping's link (groups/smb,
 * which checked it). *print is the target as given, *subst the NT form
 * Windows follows ("\??\C:\..." / "\??\UNC\server\share\..."). */
static int link_names(const char *target, wchar_t **print, wchar_t **subst, cp_error *e)
{
    *print = *subst = NULL;
    bool unc = target[0] == '\\' && target[1] == '\\' && target[2] != '?' && target[2] != '.' &&
               target[2] != '\0';
    wchar_t *w = unc ? cp_win_utf8_to_wide(target) : fsw_to_wide(target, false, e);
    if (w == NULL)
        return unc ? cp_error_set(e, CP_E_INVALID_ARGUMENT, "not a valid link target: %s", target)
                   : e->status;
    const wchar_t *head = unc ? L"\\??\\UNC" : L"\\??\\";
    const wchar_t *tail = unc ? w + 1 : w; /* "\server\share..." after "\??\UNC" */
    wchar_t *s = malloc((wcslen(head) + wcslen(tail) + 1) * sizeof(wchar_t));
    if (s == NULL) {
        free(w);
        return cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory for %s", target);
    }
    wcscpy(s, head);
    wcscat(s, tail);
    *print = w;
    *subst = s;
    return CP_OK;
}

/* The symbolic-link reparse buffer ("REPARSE_DATA_BUFFER structure
 * (ntifs.h)"; MS-FSCC "Symbolic Link Reparse Data Buffer"): tag, data
 * length, reserved, the two names' offsets and lengths in bytes, flags (0:
 * an absolute target), then the substitute name and the print name. */
#define LINK_HEADER 20 /* bytes before PathBuffer */
#define LINK_MAX 16384 /* MAXIMUM_REPARSE_DATA_BUFFER_SIZE */

static DWORD set_link(HANDLE h, const wchar_t *print, const wchar_t *subst)
{
    size_t pb = wcslen(print) * sizeof(wchar_t), sb = wcslen(subst) * sizeof(wchar_t);
    if (LINK_HEADER + pb + sb > LINK_MAX)
        return ERROR_FILENAME_EXCED_RANGE;
    unsigned char *buf = calloc(1, LINK_HEADER + pb + sb);
    if (buf == NULL)
        return ERROR_NOT_ENOUGH_MEMORY;
    ULONG tag = IO_REPARSE_TAG_SYMLINK, flags = 0;
    USHORT f[6] = {(USHORT)(12 + sb + pb), 0, 0, (USHORT)sb, (USHORT)sb, (USHORT)pb};
    memcpy(buf, &tag, 4);
    memcpy(buf + 4, f, sizeof(f)); /* length, reserved, subst off/len, print off/len */
    memcpy(buf + 16, &flags, 4);
    memcpy(buf + LINK_HEADER, subst, sb);
    memcpy(buf + LINK_HEADER + sb, print, pb);
    DWORD got = 0, err = ERROR_SUCCESS;
    /* "FSCTL_SET_REPARSE_POINT IOCTL (winioctl.h)": the caller needs
     * SE_CREATE_SYMBOLIC_LINK_NAME, which LocalSystem holds. */
    if (!DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, buf, (DWORD)(LINK_HEADER + pb + sb), NULL, 0,
                         &got, NULL))
        err = GetLastError();
    free(buf);
    return err;
}

/* Enables SeCreateSymbolicLinkPrivilege in the process token when it is
 * held but disabled (an elevated administrator's console): "Enabling and
 * Disabling Privileges in C++", LookupPrivilegeValueW (winbase.h),
 * AdjustTokenPrivileges (securitybaseapi.h), which reports
 * ERROR_NOT_ALL_ASSIGNED through GetLastError when it is not held. */
static bool enable_link_privilege(void)
{
    HANDLE tok;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY, &tok))
        return false;
    TOKEN_PRIVILEGES tp = {1, {{{0, 0}, SE_PRIVILEGE_ENABLED}}};
    bool ok =
        LookupPrivilegeValueW(NULL, L"SeCreateSymbolicLinkPrivilege", &tp.Privileges[0].Luid) &&
        AdjustTokenPrivileges(tok, FALSE, &tp, 0, NULL, NULL) && GetLastError() == ERROR_SUCCESS;
    CloseHandle(tok);
    return ok;
}

/* Drops what h was created as (a failed link): FileDispositionInfo
 * through the handle (SetFileInformationByHandle, fileapi.h). */
static void drop_created(HANDLE h)
{
    FILE_DISPOSITION_INFO d = {TRUE};
    SetFileInformationByHandle(h, FileDispositionInfo, &d, sizeof(d));
    CloseHandle(h);
}

/* Creates the link at link_path (fs.h): link_path's parent is opened and
 * judged (fsw_open_judged), the link's own entry is made relative to that
 * handle with NtCreateFile(FILE_CREATE, FILE_OPEN_REPARSE_POINT) - a
 * directory for a directory link, a file otherwise, which is what
 * SYMBOLIC_LINK_FLAG_DIRECTORY makes CreateSymbolicLinkW create - and
 * turned into a symbolic link through its handle (FSCTL_SET_REPARSE_POINT).
 * CP_FS_LINK_AUTO makes a directory link when the target is a directory
 * now (GetFileAttributesW, fileapi.h), as upstream's os.Symlink;
 * CP_FS_LINK_DIR always does. The target is stored as given ("C:\..."
 * without \\?\), which is what readers of the link expect. Afterwards the
 * link must really be one (FileAttributeTagInfo through the handle): a
 * host that accepts the call and makes no link must never pass for
 * success. */
int fsw_symlink(void *ctx, const char *link_path, const char *target, cp_fs_link_kind kind,
                const cp_fs_guard *g, cp_error *e)
{
    (void)ctx;
    wchar_t *print = NULL, *subst = NULL;
    HANDLE h = INVALID_HANDLE_VALUE, c = INVALID_HANDLE_VALUE;
    wchar_t *wl = fsw_to_wide(link_path, true, e);
    int rc = wl != NULL ? link_names(target, &print, &subst, e) : e->status;
    if (rc != CP_OK)
        goto out;
    wchar_t *slash = wcsrchr(wl, L'\\');
    if (slash == NULL || slash < wl + PREFIXED_ROOT_LEN - 1 || slash[1] == L'\0') {
        rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "CreateSymlink %s: no name to create",
                          link_path);
        goto out;
    }
    bool dir = kind == CP_FS_LINK_DIR;
    if (kind == CP_FS_LINK_AUTO) {
        wchar_t *wt = fsw_to_wide(target, true, e);
        DWORD ta = wt != NULL ? GetFileAttributesW(wt) : INVALID_FILE_ATTRIBUTES;
        dir = ta != INVALID_FILE_ATTRIBUTES && (ta & FILE_ATTRIBUTE_DIRECTORY);
        free(wt);
    }
    const wchar_t *name = slash + 1;
    size_t keep = (size_t)(slash - wl) + (slash == wl + PREFIXED_ROOT_LEN - 1); /* "X:\" */
    wchar_t *parent = wdup_n(wl, keep);
    DWORD err;
    rc = parent == NULL
             ? cp_error_set(e, CP_E_NOMEM, "fs_win32: out of memory for %s", link_path)
             : fsw_open_judged(parent, name, g, DIR_ACCESS | FILE_ADD_FILE | FILE_ADD_SUBDIRECTORY,
                               link_path, &h, &err, e);
    free(parent);
    if (rc != CP_OK)
        goto out;
    c = fsw_nt_create(
        h, name, wcslen(name),
        FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES | DELETE | SYNCHRONIZE,
        FILE_CREATE,
        (dir ? FILE_DIRECTORY_FILE : FILE_NON_DIRECTORY_FILE) | FILE_OPEN_REPARSE_POINT, &err);
    if (c == INVALID_HANDLE_VALUE) {
        rc = err == ERROR_ALREADY_EXISTS || err == ERROR_FILE_EXISTS
                 ? cp_error_set(e, CP_E_ALREADY_EXISTS, "CreateSymlink %s -> %s: %s already exists",
                                link_path, target, link_path)
                 : fsw_error(e, err, "NtCreateFile", link_path);
        goto out;
    }
    err = set_link(c, print, subst);
    if (err == ERROR_PRIVILEGE_NOT_HELD && enable_link_privilege())
        err = set_link(c, print, subst);
    FILE_ATTRIBUTE_TAG_INFO ti = {0};
    if (err == ERROR_SUCCESS &&
        !GetFileInformationByHandleEx(c, FileAttributeTagInfo, &ti, sizeof(ti)))
        err = GetLastError();
    if (err == ERROR_NOT_SUPPORTED || err == ERROR_INVALID_FUNCTION ||
        err == ERROR_CALL_NOT_IMPLEMENTED ||
        (err == ERROR_SUCCESS && (!(ti.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) ||
                                  ti.ReparseTag != IO_REPARSE_TAG_SYMLINK))) {
        char why[256];
        rc = cp_error_set(e, CP_E_INTERNAL,
                          "CreateSymlink %s -> %s: FSCTL_SET_REPARSE_POINT %s (error %lu), so "
                          "nothing exists at the link path; this host's file system does not "
                          "create links (a stub, as in Wine)",
                          link_path, target,
                          err == ERROR_SUCCESS ? "reported success but made no link"
                                               : cp_win_errtext(err, why, sizeof(why)),
                          (unsigned long)err);
    } else if (err != ERROR_SUCCESS) {
        rc = fsw_error(e, err, "FSCTL_SET_REPARSE_POINT", link_path);
    }
    if (rc != CP_OK) {
        drop_created(c);
        c = INVALID_HANDLE_VALUE;
    }
out:
    if (c != INVALID_HANDLE_VALUE)
        CloseHandle(c);
    if (h != INVALID_HANDLE_VALUE)
        CloseHandle(h);
    free(subst);
    free(print);
    free(wl);
    return rc;
}
