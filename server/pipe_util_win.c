/* pipe_util_win.c - see pipe_util_win.h. */
#include "pipe_util_win.h"

#include <stdio.h>
#include <stdlib.h>

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

int64_t cp_win_filetime_now(void)
{
    FILETIME ft;
    GetSystemTimeAsFileTime(&ft);
    return (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
}

const char *cp_win_errtext(DWORD err, char *buf, size_t len)
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
    return buf;
}
