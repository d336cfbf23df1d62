/* regfile_win.c - see regfile.h.
 *
 * Win32 turns some names into devices whatever the directory: "NUL",
 * "CON", "COM1".. and, on the Windows versions that still do, the same
 * names with an extension ("nul.yaml"), as "Naming Files, Paths, and
 * Namespaces" warns (learn.microsoft.com/windows/win32/fileio/naming-a-file).
 * So the file is opened first and then asked what it is: GetFileType must
 * say FILE_TYPE_DISK ("The specified file is a disk file"; FILE_TYPE_CHAR
 * is "typically an LPT device or a console", FILE_TYPE_PIPE "a socket, a
 * named pipe, or an anonymous pipe": learn.microsoft.com/windows/win32/api/
 * fileapi/nf-fileapi-getfiletype), and GetFileInformationByHandle must not
 * report FILE_ATTRIBUTE_DIRECTORY. The open asks SECURITY_SQOS_PRESENT |
 * SECURITY_ANONYMOUS, so that a pipe named as a file cannot impersonate
 * the service ("When the calling application specifies the
 * SECURITY_SQOS_PRESENT flag ... the server cannot impersonate", CreateFileW,
 * learn.microsoft.com/windows/win32/api/fileapi/nf-fileapi-createfilew).
 * A directory cannot be opened without FILE_FLAG_BACKUP_SEMANTICS, which
 * is not asked (it would also let an enabled backup privilege bypass the
 * file's ACL): GetFileAttributesW tells the case apart for the message. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <fcntl.h>
#include <stdbool.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "base/regfile.h"

static const char *kind(DWORD type)
{
    switch (type) {
    case FILE_TYPE_CHAR:
        return "a character device (such as NUL, CON or COM1)";
    case FILE_TYPE_PIPE:
        return "a pipe";
    default:
        return "a device of unknown type";
    }
}

static FILE *fail_win(cp_error *e, const char *path, DWORD err)
{
    char why[256];
    if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND) /* strerror(ENOENT)'s words */
        cp_error_set(e, CP_E_NOT_FOUND, "%s: No such file or directory", path);
    else
        cp_error_set(e, CP_E_IO, "%s: %s (error %lu)", path, cp_win_errtext(err, why, sizeof(why)),
                     (unsigned long)err);
    return NULL;
}

FILE *cp_regfile_open(const char *path, const char *mode, cp_error *e)
{
    bool append = mode[0] == 'a';
    wchar_t *w = cp_win_utf8_to_wide(path);
    if (w == NULL) {
        cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: not valid UTF-8", path);
        return NULL;
    }
    HANDLE h =
        CreateFileW(w, append ? FILE_APPEND_DATA | SYNCHRONIZE : GENERIC_READ,
                    FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, append ? OPEN_ALWAYS : OPEN_EXISTING,
                    FILE_ATTRIBUTE_NORMAL | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        DWORD attrs = GetFileAttributesW(w);
        free(w);
        if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY)) {
            cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a regular file: a directory", path);
            return NULL;
        }
        return fail_win(e, path, err);
    }
    free(w);
    DWORD type = GetFileType(h);
    BY_HANDLE_FILE_INFORMATION info;
    if (type != FILE_TYPE_DISK) {
        CloseHandle(h);
        cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a regular file: %s", path, kind(type));
        return NULL;
    }
    if (!GetFileInformationByHandle(h, &info)) {
        DWORD err = GetLastError();
        CloseHandle(h);
        return fail_win(e, path, err);
    }
    if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
        CloseHandle(h);
        cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a regular file: a directory", path);
        return NULL;
    }
    /* The C runtime's view of the handle: text mode for the log (as
     * fopen "a"), binary for reading. */
    int fd = _open_osfhandle((intptr_t)h, append ? _O_APPEND | _O_TEXT : _O_RDONLY | _O_BINARY);
    if (fd < 0) {
        CloseHandle(h);
        cp_error_set(e, CP_E_NOMEM, "%s: no file descriptor left", path);
        return NULL;
    }
    FILE *fp = _fdopen(fd, append ? "a" : "rb");
    if (fp == NULL) {
        _close(fd); /* closes h */
        cp_error_set(e, CP_E_NOMEM, "%s: out of memory", path);
    }
    return fp;
}
