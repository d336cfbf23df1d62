/* pipealarm_win.c - see pipealarm_win.h. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdlib.h>
#include <wchar.h>

#include "base/winutil_win.h"
#include "service/eventlog_win.h"
#include "base/log.h"
#include "service/pipealarm_win.h"

void cp_pipealarm_win_sink(void *ctx, const char *pipe, const char *line)
{
    cp_eventlog_error(ctx, line);
    wchar_t *name = cp_win_utf8_to_wide(pipe), *text = cp_win_utf8_to_wide(line);
    HKEY key = NULL;
    /* "RegCreateKeyExW function (winreg.h)", "RegSetValueExW function
     * (winreg.h)", Microsoft Learn: the key inherits SOFTWARE's security
     * (Users read, SYSTEM and Administrators write), so the callers who
     * could make a foreign instance cannot remove the mark. */
    LSTATUS st = name == NULL || text == NULL
                     ? ERROR_NOT_ENOUGH_MEMORY
                     : RegCreateKeyExW(HKEY_LOCAL_MACHINE, CP_PIPEALARM_REG_KEY, 0, NULL, 0,
                                       KEY_SET_VALUE, NULL, &key, NULL);
    if (st == ERROR_SUCCESS) {
        st = RegSetValueExW(key, name, 0, REG_SZ, (const BYTE *)text,
                            (DWORD)((wcslen(text) + 1) * sizeof(wchar_t)));
        RegCloseKey(key);
    }
    if (st != ERROR_SUCCESS) {
        char why[256];
        CP_LOG_ERROR("pipe %s: cannot mark it for csi-proxy-cli health: %s (error %lu)", pipe,
                     cp_win_errtext((DWORD)st, why, sizeof(why)), (unsigned long)st);
    }
    free(name);
    free(text);
}

void cp_pipealarm_win_clear(void)
{
    /* "RegDeleteTreeW function (winreg.h)", Microsoft Learn: the key, its
     * values and subkeys; ERROR_FILE_NOT_FOUND when there is none. */
    LSTATUS st = RegDeleteTreeW(HKEY_LOCAL_MACHINE, CP_PIPEALARM_REG_KEY);
    if (st != ERROR_SUCCESS && st != ERROR_FILE_NOT_FOUND) {
        char why[256];
        CP_LOG_WARN("cannot clear the pipe alarms of an earlier run "
                    "(HKLM\\SOFTWARE\\csi-proxy\\PipeAlarms): %s (error %lu)",
                    cp_win_errtext((DWORD)st, why, sizeof(why)), (unsigned long)st);
    }
}
