/* winutilcheck.c - base/winutil_win.h under Wine (test/wine/storage.sh runs
 * it): the one Win32 error map and the message form every Windows host
 * uses. Linked with build/win/libcore.a, so it tests the product's object.
 * Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed";
 * exit 0 only when all passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"

static int passed, failed;

static void check(int cond, const char *what)
{
    printf("%s - %s\n", cond ? "ok" : "not ok", what);
    if (cond)
        passed++;
    else
        failed++;
}

/* Every byte sequence is valid UTF-8 (no cut character). */
static int valid_utf8(const char *s)
{
    wchar_t *w = cp_win_utf8_to_wide(s);
    free(w);
    return w != NULL;
}

int main(void)
{
    static const struct {
        DWORD err;
        int want;
        const char *name;
    } map[] = {
        {ERROR_NOT_READY, CP_E_UNAVAILABLE, "ERROR_NOT_READY -> UNAVAILABLE (transient)"},
        {ERROR_SHARING_VIOLATION, CP_E_UNAVAILABLE, "ERROR_SHARING_VIOLATION -> UNAVAILABLE"},
        {ERROR_DISK_FULL, CP_E_RESOURCE_EXHAUSTED, "ERROR_DISK_FULL -> RESOURCE_EXHAUSTED"},
        {ERROR_HANDLE_DISK_FULL, CP_E_RESOURCE_EXHAUSTED,
         "ERROR_HANDLE_DISK_FULL -> RESOURCE_EXHAUSTED"},
        {ERROR_FILE_NOT_FOUND, CP_E_NOT_FOUND, "ERROR_FILE_NOT_FOUND -> NOT_FOUND"},
        {ERROR_PATH_NOT_FOUND, CP_E_NOT_FOUND, "ERROR_PATH_NOT_FOUND -> NOT_FOUND"},
        {ERROR_SERVICE_DOES_NOT_EXIST, CP_E_NOT_FOUND, "ERROR_SERVICE_DOES_NOT_EXIST -> NOT_FOUND"},
        {ERROR_ALREADY_EXISTS, CP_E_ALREADY_EXISTS, "ERROR_ALREADY_EXISTS -> ALREADY_EXISTS"},
        {ERROR_DIR_NOT_EMPTY, CP_E_FAILED_PRECONDITION,
         "ERROR_DIR_NOT_EMPTY -> FAILED_PRECONDITION"},
        {ERROR_SERVICE_DISABLED, CP_E_FAILED_PRECONDITION,
         "ERROR_SERVICE_DISABLED -> FAILED_PRECONDITION"},
        {ERROR_ACCESS_DENIED, CP_E_PERMISSION_DENIED, "ERROR_ACCESS_DENIED -> PERMISSION_DENIED"},
        {ERROR_INVALID_NAME, CP_E_INVALID_ARGUMENT, "ERROR_INVALID_NAME -> INVALID_ARGUMENT"},
        {ERROR_SERVICE_REQUEST_TIMEOUT, CP_E_DEADLINE_EXCEEDED,
         "ERROR_SERVICE_REQUEST_TIMEOUT -> DEADLINE_EXCEEDED"},
        {ERROR_NOT_SUPPORTED, CP_E_UNIMPLEMENTED, "ERROR_NOT_SUPPORTED -> UNIMPLEMENTED"},
        {ERROR_OUTOFMEMORY, CP_E_RESOURCE_EXHAUSTED, "ERROR_OUTOFMEMORY -> RESOURCE_EXHAUSTED"},
        {ERROR_CRC, CP_E_UNKNOWN, "an unmapped code (ERROR_CRC) -> UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        check(cp_win_status(map[i].err) == map[i].want, map[i].name);

    cp_error e;
    SetLastError(0);
    int rc = cp_win_error(&e, ERROR_DISK_FULL, "WriteFile", "C:\\var\\lib\\kubelet\\x");
    check(rc == CP_E_RESOURCE_EXHAUSTED && e.status == rc,
          "cp_win_error returns the mapped status");
    check(strncmp(e.msg, "WriteFile C:\\var\\lib\\kubelet\\x: ", 31) == 0,
          "message starts with \"<api> <object>: \"");
    check(strlen(e.msg) > 46 && strcmp(e.msg + strlen(e.msg) - 12, " (error 112)") == 0,
          "message ends with the system text and \" (error 112)\"");
    check(GetLastError() == ERROR_DISK_FULL, "the thread's last error is the one reported");

    /* A 600-byte object of 2-byte characters: cut in the middle, on
     * character boundaries, and the cause still there. */
    char big[601];
    for (int i = 0; i < 600; i += 2) {
        big[i] = (char)0xC3;
        big[i + 1] = (char)0xA9; /* U+00E9 */
    }
    big[600] = '\0';
    cp_win_error(&e, ERROR_FILE_NOT_FOUND, "CreateFileW", big);
    check(strstr(e.msg, "...") != NULL && strstr(e.msg, "(error 2)") != NULL &&
              strlen(e.msg) < 200 + 3 + 150 + 200,
          "a long object is cut in the middle and the cause is kept");
    check(valid_utf8(e.msg), "the cut message is valid UTF-8");

    cp_win_error(&e, ERROR_ACCESS_DENIED, "OpenSCManagerW", "");
    check(strncmp(e.msg, "OpenSCManagerW: ", 16) == 0, "an empty object is left out");

    wchar_t *w = cp_win_utf8_to_wide("C:\\\xc3\xa9t\xc3\xa9");
    char *back = w != NULL ? cp_win_wide_to_utf8(w) : NULL;
    check(w != NULL && wcscmp(w, L"C:\\\u00e9t\u00e9") == 0 && back != NULL &&
              strcmp(back, "C:\\\xc3\xa9t\xc3\xa9") == 0,
          "UTF-8 <-> UTF-16 round trip");
    free(w);
    free(back);
    check(cp_win_utf8_to_wide("bad \xc3(") == NULL, "invalid UTF-8 is refused");
    char text[128];
    check(strcmp(cp_win_errtext(0xDEAD0000u, text, sizeof(text)), "error 3735879680") == 0,
          "an unknown code's text falls back to \"error N\"");

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
