/* roots_win.c - see roots.h. Where the system directories are, asked of
 * the system: GetSystemWindowsDirectoryW (%SystemRoot%, also on a
 * terminal server), and the registry values the known folders take their
 * defaults from - ProgramFilesDir, "ProgramFilesDir (x86)" and
 * ProgramW6432Dir under HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion
 * (FOLDERID_ProgramFiles, FOLDERID_ProgramFilesX86), ProgramData and
 * ProfilesDirectory under ...\Windows NT\CurrentVersion\ProfileList
 * (FOLDERID_ProgramData, FOLDERID_UserProfiles); see "KNOWNFOLDERID",
 * learn.microsoft.com/windows/win32/shell/knownfolderid. (Read from the
 * registry rather than SHGetKnownFolderPath so that the service needs no
 * shell32/ole32.) The portable list is refused as well. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "security/roots.h"

#define MAX_RULES 16

typedef struct sysdir {
    char path[MAX_PATH * 3];
    const char *what;
    bool below;
} sysdir;

static void add(sysdir *d, size_t *n, const wchar_t *w, const char *what, bool below)
{
    char *u = w != NULL && w[0] != L'\0' ? cp_win_wide_to_utf8(w) : NULL;
    if (u != NULL && *n < MAX_RULES && strlen(u) < sizeof(d[*n].path)) {
        snprintf(d[*n].path, sizeof(d[*n].path), "%s", u);
        d[*n].what = what;
        d[*n].below = below;
        (*n)++;
    }
    free(u);
}

static void add_reg(sysdir *d, size_t *n, const wchar_t *key, const wchar_t *value,
                    const char *what, bool below)
{
    wchar_t buf[MAX_PATH];
    DWORD size = sizeof(buf);
    /* RRF_RT_REG_SZ without RRF_NOEXPAND: a REG_EXPAND_SZ value
     * (%SystemDrive%\Users) comes back expanded. */
    if (RegGetValueW(HKEY_LOCAL_MACHINE, key, value, RRF_RT_REG_SZ | RRF_RT_REG_EXPAND_SZ, NULL,
                     buf, &size) == ERROR_SUCCESS)
        add(d, n, buf, what, below);
}

/* The path as the system resolves it: full, long names, and through
 * junctions and links when it exists. Writes "" when it cannot. */
static void resolve(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    wchar_t *w = cp_win_utf8_to_wide(path);
    wchar_t full[MAX_PATH * 2], lng[MAX_PATH * 2], fin[MAX_PATH * 2];
    if (w == NULL)
        return;
    DWORD n = GetFullPathNameW(w, MAX_PATH * 2, full, NULL);
    free(w);
    if (n == 0 || n >= MAX_PATH * 2)
        return;
    const wchar_t *best = full;
    n = GetLongPathNameW(full, lng, MAX_PATH * 2);
    if (n > 0 && n < MAX_PATH * 2)
        best = lng;
    /* FILE_FLAG_BACKUP_SEMANTICS opens a directory; no access is asked. */
    HANDLE h = CreateFileW(best, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h != INVALID_HANDLE_VALUE) {
        n = GetFinalPathNameByHandleW(h, fin, MAX_PATH * 2, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
        if (n > 0 && n < MAX_PATH * 2)
            best = fin;
        CloseHandle(h);
    }
    char *u = cp_win_wide_to_utf8(best);
    if (u != NULL)
        snprintf(out, cap, "%s", u);
    free(u);
}

/* The system directories, asked of the system once per process (the same
 * for every root checked: -kubelet-path and each -working-dir). */
static struct {
    INIT_ONCE once;
    sysdir d[MAX_RULES];
    size_t n;
} sys = {INIT_ONCE_STATIC_INIT};

static BOOL CALLBACK read_sysdirs(PINIT_ONCE once, PVOID param, PVOID *ctx)
{
    (void)once;
    (void)param;
    (void)ctx;
    sysdir *d = sys.d;
    size_t n = 0;
    wchar_t win[MAX_PATH];
    UINT wl = GetSystemWindowsDirectoryW(win, MAX_PATH);
    add(d, &n, wl > 0 && wl < MAX_PATH ? win : NULL, "%SystemRoot%", true);
    static const wchar_t cv[] = L"SOFTWARE\\Microsoft\\Windows\\CurrentVersion";
    static const wchar_t pl[] = L"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\ProfileList";
    add_reg(d, &n, cv, L"ProgramFilesDir", "Program Files", true);
    add_reg(d, &n, cv, L"ProgramFilesDir (x86)", "Program Files (x86)", true);
    add_reg(d, &n, cv, L"ProgramW6432Dir", "Program Files", true);
    add_reg(d, &n, pl, L"ProgramData", "ProgramData", false);
    add_reg(d, &n, pl, L"ProfilesDirectory", "the user profiles directory", false);
    sys.n = n;
    return TRUE;
}

int cp_roots_check(const char *what, const char *path, cp_error *e)
{
    InitOnceExecuteOnce(&sys.once, read_sysdirs, NULL, NULL);
    const sysdir *d = sys.d;
    size_t n = sys.n;
    cp_root_rule rules[MAX_RULES + 8];
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        rules[nr++] = (cp_root_rule){d[i].path, d[i].what, d[i].below};
    for (size_t i = 0; i < cp_roots_portable_n; i++)
        rules[nr++] = cp_roots_portable[i];
    char why[768], real[MAX_PATH * 6];
    if (!cp_roots_judge(path, rules, nr, why, sizeof(why)))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s %s: refused as a root: %s", what, path,
                            why);
    resolve(path, real, sizeof(real));
    if (real[0] != '\0' && !cp_roots_judge(real, rules, nr, why, sizeof(why)))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s %s (%s): refused as a root: %s", what,
                            path, real, why);
    return CP_OK;
}
