/* fs_link_win.c - read_link of the Windows filesystem host (fs.h): what a
 * symbolic link stores, read from its reparse point without following it.
 * Windows build only. */
#include "host/fs_win_internal.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>
#include <winioctl.h>

/* The symbolic-link reparse buffer ("REPARSE_DATA_BUFFER structure
 * (ntifs.h)"; MS-FSCC "Symbolic Link Reparse Data Buffer"), as
 * fs_write_win.c writes it: tag, data length, reserved, substitute name
 * offset and length, print name offset and length (bytes, from
 * PathBuffer), flags, then PathBuffer. */
#define LINK_HEADER 20
#define LINK_MAX 16384 /* MAXIMUM_REPARSE_DATA_BUFFER_SIZE */

/* The NT form Windows follows, back to Win32 syntax: "\??\UNC\server\..."
 * -> "\\server\...", "\??\C:\..." -> "C:\...". Returns a pointer into s
 * (which may be changed), or NULL for any other form. */
static wchar_t *win32_form(wchar_t *s)
{
    if (wcsncmp(s, L"\\??\\UNC\\", 8) == 0) {
        s[6] = L'\\'; /* "\??\UNC\server" -> "\\server" from index 6 */
        return s + 6;
    }
    if (wcsncmp(s, L"\\??\\", 4) == 0 && iswalpha(s[4]) && s[5] == L':' && s[6] == L'\\')
        return s + 4;
    return NULL;
}

/* CreateFileW with FILE_FLAG_OPEN_REPARSE_POINT opens the link itself
 * ("CreateFileW function (fileapi.h)": the reparse point is not followed),
 * FILE_FLAG_BACKUP_SEMANTICS for a directory link;
 * "FSCTL_GET_REPARSE_POINT IOCTL (winioctl.h)" returns its reparse data.
 * ERROR_NOT_A_REPARSE_POINT, or a tag other than IO_REPARSE_TAG_SYMLINK
 * (a mount point, a deduplicated file), is "no symbolic link". */
int fsw_read_link(void *ctx, const char *path, char *out, size_t outlen, cp_error *e)
{
    (void)ctx;
    wchar_t *w = fsw_to_wide(path, true, e);
    if (w == NULL)
        return e->status;
    HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES, SHARE_ALL, NULL, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, NULL);
    DWORD err = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return fsw_error(e, err, "CreateFileW", path);
    unsigned char *buf = malloc(LINK_MAX);
    if (buf == NULL) {
        CloseHandle(h);
        return cp_error_set(e, CP_E_NOMEM, "read link %s: out of memory", path);
    }
    DWORD got = 0;
    BOOL ok = DeviceIoControl(h, FSCTL_GET_REPARSE_POINT, NULL, 0, buf, LINK_MAX, &got, NULL);
    err = GetLastError();
    CloseHandle(h);
    int rc = CP_OK;
    ULONG tag = 0;
    if (ok && got >= LINK_HEADER)
        memcpy(&tag, buf, 4);
    /* a file system without reparse points answers "not supported" */
    if (!ok && err != ERROR_NOT_A_REPARSE_POINT && err != ERROR_INVALID_FUNCTION &&
        err != ERROR_NOT_SUPPORTED) {
        rc = fsw_error(e, err, "DeviceIoControl(FSCTL_GET_REPARSE_POINT)", path);
    } else if (!ok || tag != IO_REPARSE_TAG_SYMLINK) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "read link %s: not a symbolic link", path);
    } else {
        USHORT f[6];
        memcpy(f, buf + 4, sizeof(f)); /* length, reserved, subst off/len, print off/len */
        size_t off = f[2], len = f[3];
        if (LINK_HEADER + off + len > got || len % sizeof(wchar_t) != 0) {
            rc = cp_error_set(e, CP_E_INTERNAL, "read link %s: malformed reparse data", path);
        } else {
            wchar_t *name = calloc(len / sizeof(wchar_t) + 1, sizeof(wchar_t));
            if (name == NULL)
                rc = cp_error_set(e, CP_E_NOMEM, "read link %s: out of memory", path);
            wchar_t *form = NULL;
            if (name != NULL) {
                memcpy(name, buf + LINK_HEADER + off, len);
                form = win32_form(name);
                if (form == NULL)
                    rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                                      "read link %s: a relative or device target", path);
            }
            if (form != NULL &&
                WideCharToMultiByte(CP_UTF8, 0, form, -1, out, (int)outlen, NULL, NULL) == 0)
                rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "read link %s: target too long", path);
            free(name);
        }
    }
    free(buf);
    return rc;
}
