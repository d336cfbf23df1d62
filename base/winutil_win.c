/* winutil_win.c - see winutil_win.h. */
#include "base/winutil_win.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

wchar_t *cp_win_utf8_to_wide(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
    if (n <= 0)
        return NULL;
    wchar_t *w = malloc((size_t)n * sizeof(*w));
    if (w == NULL)
        return NULL;
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
        free(w);
        return NULL;
    }
    return w;
}

char *cp_win_wide_to_utf8(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    if (n <= 0)
        return NULL;
    char *s = malloc((size_t)n);
    if (s == NULL)
        return NULL;
    if (WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) != n) {
        free(s);
        return NULL;
    }
    return s;
}

/* "GetSystemTimePreciseAsFileTime function (sysinfoapi.h)", Microsoft
 * Learn: "the current system date and time with the highest possible level
 * of precision (<1us)", where GetSystemTimeAsFileTime moves in steps of the
 * clock tick (about 15.6 ms). Windows 8 / Server 2012 and later. */
int64_t cp_win_filetime_now(void)
{
    FILETIME ft;
    GetSystemTimePreciseAsFileTime(&ft);
    return (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
}

/* "FormatMessageW function" with FORMAT_MESSAGE_FROM_SYSTEM: English when
 * the text is installed (log readers and tests match it), else the user's
 * language. */
bool cp_win_systext(DWORD err, char *buf, size_t len)
{
    DWORD saved = GetLastError();
    wchar_t wmsg[512];
    DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, err,
                             MAKELANGID(LANG_ENGLISH, SUBLANG_DEFAULT), wmsg,
                             sizeof(wmsg) / sizeof(wmsg[0]), NULL);
    if (n == 0) /* no English text installed: take the user's language */
        n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, err, 0,
                           wmsg, sizeof(wmsg) / sizeof(wmsg[0]), NULL);
    while (n > 0 && (wmsg[n - 1] == L'\r' || wmsg[n - 1] == L'\n' || wmsg[n - 1] == L' ' ||
                     wmsg[n - 1] == L'.'))
        n--;
    int k = 0;
    if (n > 0 && len > 1)
        k = WideCharToMultiByte(CP_UTF8, 0, wmsg, (int)n, buf, (int)(len - 1), NULL, NULL);
    if (k > 0)
        buf[k] = '\0';
    else if (len > 0)
        snprintf(buf, len, "error %lu", (unsigned long)err);
    SetLastError(saved);
    return k > 0;
}

const char *cp_win_errtext(DWORD err, char *buf, size_t len)
{
    cp_win_systext(err, buf, len);
    return buf;
}

/* "System Error Codes" (winerror.h), grouped by what the caller can do. */
int cp_win_status(DWORD err)
{
    switch (err) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_NET_NAME:
    case ERROR_SERVICE_DOES_NOT_EXIST:
        return CP_E_NOT_FOUND;
    case ERROR_ALREADY_EXISTS:
    case ERROR_FILE_EXISTS:
        return CP_E_ALREADY_EXISTS;
    case ERROR_DIR_NOT_EMPTY:
    case ERROR_DIRECTORY:
    case ERROR_CANT_RESOLVE_FILENAME:
    case ERROR_NOT_A_REPARSE_POINT:
    case ERROR_REPARSE_ATTRIBUTE_CONFLICT:
    case ERROR_SERVICE_DISABLED:
    case ERROR_DEPENDENT_SERVICES_RUNNING:
    case ERROR_SERVICE_DEPENDENCY_FAIL:
    case ERROR_SERVICE_MARKED_FOR_DELETE:
    case ERROR_SERVICE_CANNOT_ACCEPT_CTRL:
        return CP_E_FAILED_PRECONDITION;
    case ERROR_ACCESS_DENIED:
    case ERROR_PRIVILEGE_NOT_HELD:
    case ERROR_WRITE_PROTECT:
        return CP_E_PERMISSION_DENIED;
    case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME:
    case ERROR_FILENAME_EXCED_RANGE:
    case ERROR_INVALID_PARAMETER:
    case ERROR_NO_UNICODE_TRANSLATION:
        return CP_E_INVALID_ARGUMENT;
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_BUSY:
    case ERROR_NOT_READY:
    case ERROR_PIPE_BUSY:
    case ERROR_SERVICE_DATABASE_LOCKED:
        return CP_E_UNAVAILABLE;
    case ERROR_SERVICE_REQUEST_TIMEOUT:
        return CP_E_DEADLINE_EXCEEDED;
    case ERROR_NOT_SUPPORTED:
    case ERROR_CALL_NOT_IMPLEMENTED:
    case ERROR_INVALID_FUNCTION:
        return CP_E_UNIMPLEMENTED;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_INSUFFICIENT_BUFFER:
    case ERROR_MORE_DATA:
        return CP_E_RESOURCE_EXHAUSTED;
    default:
        return CP_E_UNKNOWN;
    }
}

int cp_win_error(cp_error *e, DWORD err, const char *api, const char *object)
{
    char text[512];
    return cp_win_error_as(e, cp_win_status(err), err, cp_win_errtext(err, text, sizeof(text)), api,
                           object);
}

int cp_win_error_as(cp_error *e, int status, DWORD err, const char *text, const char *api,
                    const char *object)
{
    size_t len = strlen(object);
    int head = (int)len;
    const char *dots = "", *tail = "";
    if (len > CP_WIN_OBJECT_MAX) {
        head = (int)cp_utf8_cut(object, len, CP_WIN_OBJECT_HEAD);
        size_t from = len - CP_WIN_OBJECT_TAIL;
        while (from < len && ((unsigned char)object[from] & 0xC0) == 0x80)
            from++; /* start the tail on a character, not inside one */
        dots = "...";
        tail = object + from;
    }
    status = cp_error_set(e, status, "%s%s%.*s%s%s: %s (error %lu)", api, len > 0 ? " " : "", head,
                          object, dots, tail, text, (unsigned long)err);
    SetLastError(err);
    return status;
}
