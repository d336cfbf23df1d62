/* sysfiles_win.c - the page-file and crash-dump entries of the registry
 * (sysfiles.h) read on Windows, and the volume each names: shared by the
 * storage host's role detection (storage_roles_win.c, through its call
 * table) and by cp_sysfile_unresolved (the service at start and
 * `csi-proxy-cli health`, through the system's calls), which links none
 * of the storage host. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "base/winutil_win.h"
#include "host/storage_ids.h"
#include "host/sysfiles_win.h"

#define MM_KEY L"SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Memory Management"
#define CRASH_KEY L"SYSTEM\\CurrentControlSet\\Control\\CrashControl"
#define PATH_CAP 1024

/* The normalized ID of the volume holding path (which need not exist):
 * GetVolumePathNameW ("GetVolumePathNameW function": the mount point, drive
 * root or mounted folder, the path is on), then
 * GetVolumeNameForVolumeMountPointW. false when no local volume holds it. */
bool cp_sysfile_volume_of(const cp_storage_calls *sc, const wchar_t *path,
                          char id[CP_VOLUME_ID_LEN + 1])
{
    /* the host's table; the system's calls where no host was opened
     * (cp_sysfile_unresolved in csi-proxy-cli and at start) */
    wchar_t root[PATH_CAP], vol[64];
    if (!(sc != NULL ? sc->GetVolumePathNameW(path, root, PATH_CAP)
                     : GetVolumePathNameW(path, root, PATH_CAP)))
        return false;
    /* A \\?\Volume{G}\ root is the volume's name already. */
    if (wcsncmp(root, L"\\\\?\\Volume{", 11) == 0 && wcslen(root) < 64)
        wcscpy(vol, root);
    else if (!(sc != NULL ? sc->GetVolumeNameForVolumeMountPointW(root, vol, 64)
                          : GetVolumeNameForVolumeMountPointW(root, vol, 64)))
        return false;
    char *u8 = cp_win_wide_to_utf8(vol);
    cp_error e;
    bool ok = u8 != NULL && cp_volume_id_parse(u8, id, NULL, &e) == CP_OK;
    free(u8);
    return ok;
}

/* A registry value under HKLM as a list of strings ("RegGetValueW
 * function"; REG_SZ, REG_EXPAND_SZ expanded by ExpandEnvironmentStringsW,
 * REG_MULTI_SZ): a malloc'd list ending with an empty string, or *out NULL
 * when the value does not exist. */
int cp_sysfile_read_strings(const wchar_t *key, const wchar_t *value, const char *name,
                            wchar_t **out, cp_error *e)
{
    const DWORD flags = RRF_RT_REG_SZ | RRF_RT_REG_EXPAND_SZ | RRF_RT_REG_MULTI_SZ | RRF_NOEXPAND;
    *out = NULL;
    for (int tries = 0; tries < 4; tries++) {
        DWORD size = 0, type = 0;
        LSTATUS st = RegGetValueW(HKEY_LOCAL_MACHINE, key, value, flags, &type, NULL, &size);
        if (st == ERROR_FILE_NOT_FOUND)
            return CP_OK;
        if (st != ERROR_SUCCESS)
            return cp_win_error(e, (DWORD)st, "RegGetValueW", name);
        DWORD cap = size + 2 * sizeof(wchar_t);
        wchar_t *buf = calloc(1, cap);
        if (buf == NULL)
            return cp_error_set(e, CP_E_NOMEM, "%s: out of memory", name);
        DWORD got = size;
        st = RegGetValueW(HKEY_LOCAL_MACHINE, key, value, flags, &type, buf, &got);
        if (st == ERROR_MORE_DATA) { /* changed meanwhile */
            free(buf);
            continue;
        }
        if (st != ERROR_SUCCESS) {
            free(buf);
            return st == ERROR_FILE_NOT_FOUND ? CP_OK
                                              : cp_win_error(e, (DWORD)st, "RegGetValueW", name);
        }
        if (type != REG_EXPAND_SZ) {
            *out = buf; /* calloc'd beyond the data: the list ends there */
            return CP_OK;
        }
        DWORD n = ExpandEnvironmentStringsW(buf, NULL, 0);
        wchar_t *x = n > 0 ? calloc(n + 2, sizeof(wchar_t)) : NULL;
        if (x == NULL || ExpandEnvironmentStringsW(buf, x, n) == 0) {
            DWORD err = GetLastError();
            free(buf);
            free(x);
            return cp_win_error(e, err, "ExpandEnvironmentStringsW", name);
        }
        free(buf);
        *out = x;
        return CP_OK;
    }
    return cp_error_set(e, CP_E_UNAVAILABLE, "RegGetValueW %s: the value kept changing", name);
}

/* The volume of one entry of a value (sysfiles.h), in id: true. false
 * with *none when the entry names nothing to look up, else with why. */
bool cp_sysfile_entry_volume(const cp_storage_calls *sc, const wchar_t *entry, bool paging,
                             char id[CP_VOLUME_ID_LEN + 1], bool *none, char *why, size_t cap)
{
    *none = false;
    char *u8 = cp_win_wide_to_utf8(entry);
    if (u8 == NULL)
        return snprintf(why, cap, "not valid UTF-16, or out of memory"), false;
    char path[PATH_CAP * 3];
    cp_sysfile_kind k = cp_sysfile_entry(u8, paging, path, sizeof(path));
    free(u8);
    if (k != CP_SYSFILE_PATH) {
        *none = k == CP_SYSFILE_NONE;
        snprintf(why, cap, "%s", path);
        return false;
    }
    wchar_t *w = cp_win_utf8_to_wide(path);
    if (w != NULL && cp_sysfile_volume_of(sc, w, id)) {
        free(w);
        return true;
    }
    DWORD err = GetLastError();
    char t[256];
    snprintf(why, cap, "GetVolumePathNameW/GetVolumeNameForVolumeMountPointW on %s: %s", path,
             w == NULL ? "out of memory" : cp_win_errtext(err, t, sizeof(t)));
    free(w);
    return false;
}

const wchar_t *cp_sysfile_key(const cp_sysfile_source *src)
{
    return src->paging ? MM_KEY : CRASH_KEY;
}

int cp_sysfile_unresolved(void (*report)(void *ctx, const char *line), void *ctx)
{
    int bad = 0;
    char line[2048];
    for (int i = 0; i < CP_SYSFILE_SOURCES; i++) {
        const cp_sysfile_source *src = &cp_sysfile_sources[i];
        wchar_t *list, value[64];
        cp_error e;
        MultiByteToWideChar(CP_UTF8, 0, src->value, -1, value, 64);
        if (cp_sysfile_read_strings(cp_sysfile_key(src), value, src->name, &list, &e) != CP_OK) {
            snprintf(line, sizeof(line),
                     "%s: %s; csi-proxy cannot tell which volumes hold these files", src->name,
                     e.msg);
            report(ctx, line);
            return -1;
        }
        if (list == NULL)
            continue;
        for (const wchar_t *s = list; *s != L'\0'; s += wcslen(s) + 1) {
            char on[CP_VOLUME_ID_LEN + 1], why[PATH_CAP * 3 + 128];
            bool none;
            if (cp_sysfile_entry_volume(NULL, s, src->paging, on, &none, why, sizeof(why)) || none)
                continue;
            char *u8 = cp_win_wide_to_utf8(s);
            cp_sysfile_problem(src, u8 != NULL ? u8 : "?", why, line, sizeof(line));
            free(u8);
            report(ctx, line);
            bad++;
        }
        free(list);
    }
    return bad;
}
