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

/* prefix (a full path) as the system resolves it: long names, and
 * through junctions and links. Returns best (prefix itself when it cannot
 * do better). */
static const wchar_t *resolve_existing(const wchar_t *prefix, wchar_t *lng, wchar_t *fin, DWORD cap)
{
    const wchar_t *best = prefix;
    /* "GetLongPathNameW function (fileapi.h)": fails for a path that does
     * not exist, hence only on the existing prefix. */
    DWORD n = GetLongPathNameW(prefix, lng, cap);
    if (n > 0 && n < cap)
        best = lng;
    /* FILE_FLAG_BACKUP_SEMANTICS opens a directory; no access is asked.
     * "GetFinalPathNameByHandleW function (fileapi.h)". */
    HANDLE h = CreateFileW(best, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h != INVALID_HANDLE_VALUE) {
        n = GetFinalPathNameByHandleW(h, fin, cap, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
        if (n > 0 && n < cap)
            best = fin;
        CloseHandle(h);
    }
    return best;
}

/* The path as the system resolves it: full, then its longest existing
 * prefix resolved (long names, junctions, links) with the missing rest
 * appended as given. A root that does not exist yet is still judged by
 * where it would be created: an 8.3 name such as C:\PROGRA~1\x, or a
 * junction above it, names a system directory only the system can tell.
 * Writes "" when it cannot. */
static void resolve(const char *path, char *out, size_t cap)
{
    enum { CAP = MAX_PATH * 2 };
    out[0] = '\0';
    wchar_t *w = cp_win_utf8_to_wide(path);
    wchar_t full[CAP], pre[CAP], lng[CAP], fin[CAP], res[CAP * 2];
    if (w == NULL)
        return;
    /* "GetFullPathNameW function (fileapi.h)". */
    DWORD n = GetFullPathNameW(w, CAP, full, NULL);
    free(w);
    if (n == 0 || n >= CAP)
        return;
    wcscpy(pre, full);
    size_t rest = wcslen(full); /* where the missing part starts in full */
    /* "GetFileAttributesW function (fileapi.h)": INVALID_FILE_ATTRIBUTES
     * when the path does not exist. */
    while (GetFileAttributesW(pre) == INVALID_FILE_ATTRIBUTES) {
        wchar_t *slash = wcsrchr(pre, L'\\');
        if (slash == NULL || slash - pre < 2 || slash[1] == L'\0') {
            /* nothing of it exists: not even "C:\" or "\\server" */
            pre[0] = L'\0';
            break;
        }
        rest = (size_t)(slash - pre);
        if (slash == pre + 2 && pre[1] == L':')
            slash[1] = L'\0'; /* keep "C:\": "C:" is the drive's current directory */
        else
            slash[0] = L'\0';
    }
    const wchar_t *best = pre[0] != L'\0' ? resolve_existing(pre, lng, fin, CAP) : full;
    if (pre[0] == L'\0')
        rest = wcslen(full);
    size_t bl = wcslen(best);
    const wchar_t *tail = full + rest;
    if (bl + wcslen(tail) + 2 > CAP * 2)
        return;
    wcscpy(res, best);
    if (tail[0] != L'\0') {
        if (bl > 0 && res[bl - 1] == L'\\' && tail[0] == L'\\')
            tail++;
        else if (bl > 0 && res[bl - 1] != L'\\' && tail[0] != L'\\')
            wcscat(res, L"\\");
        wcscat(res, tail);
    }
    char *u = cp_win_wide_to_utf8(res);
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
