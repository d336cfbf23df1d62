/* hostops.c - what the Win32 host part of one PathExists costs, in process,
 * with no pipe and no gRPC: the same calls host/fs_win.c makes, timed one
 * group at a time, so the bench can say where a call's time goes.
 *
 *   bench-hostops [-n N] PATH      (PATH like C:\csiproxy-test\dir)
 *
 * One JSON result line per group (bench_util.h), name "host-<group>":
 *   resolve   the full resolution fs_resolve() falls back to when a component
 *             of the path is a link: CreateFileW (FILE_FLAG_BACKUP_SEMANTICS),
 *             GetFinalPathNameByHandleW with VOLUME_NAME_GUID,
 *             GetVolumePathNamesForVolumeNameW, CloseHandle
 *   final-dos the same open, GetFinalPathNameByHandleW with VOLUME_NAME_DOS
 *             only (a cheaper variant, for comparison)
 *   attrs     GetFileAttributesW on every component below the drive: the
 *             "does any component carry FILE_ATTRIBUTE_REPARSE_POINT?" fast
 *             path fs_resolve() takes for paths without links
 *   exists    GetFileAttributesExW on the path (the answer itself)
 *   drivetype GetDriveTypeW on the path's drive root: what asking "is this
 *             a local fixed drive?" on every call would cost (the fast path
 *             does not ask: a link is a reparse point on any drive)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "test/bench/bench_util.h"

#define WMAX 1024

static wchar_t path[WMAX], parent[WMAX];

static bool op_resolve(void)
{
    wchar_t final[WMAX], names[WMAX];
    HANDLE h = CreateFileW(parent, FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return false;
    DWORD n = GetFinalPathNameByHandleW(h, final, WMAX, FILE_NAME_NORMALIZED | VOLUME_NAME_GUID);
    bool ok = n > 0 && n < WMAX;
    wchar_t *brace = ok ? wcschr(final, L'}') : NULL;
    if (brace != NULL && brace[1] == L'\\') {
        brace[2] = 0;
        DWORD need = 0;
        ok = GetVolumePathNamesForVolumeNameW(final, names, WMAX, &need);
    }
    CloseHandle(h);
    return ok;
}

static bool op_final_dos(void)
{
    wchar_t final[WMAX];
    HANDLE h = CreateFileW(parent, FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return false;
    DWORD n = GetFinalPathNameByHandleW(h, final, WMAX, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    CloseHandle(h);
    return n > 0 && n < WMAX;
}

static bool op_attrs(void)
{
    wchar_t buf[WMAX];
    wcscpy(buf, path);
    for (wchar_t *s = buf + 3;; s++) { /* after "C:\" */
        if (*s == L'\\' || *s == 0) {
            wchar_t c = *s;
            *s = 0;
            DWORD a = GetFileAttributesW(buf);
            if (a == INVALID_FILE_ATTRIBUTES)
                return false;
            *s = c;
            if (c == 0)
                return true;
        }
    }
}

static bool op_exists(void)
{
    WIN32_FILE_ATTRIBUTE_DATA fad;
    return GetFileAttributesExW(path, GetFileExInfoStandard, &fad) != 0;
}

static bool op_drivetype(void)
{
    wchar_t root[4] = {path[0], L':', L'\\', 0};
    return GetDriveTypeW(root) == DRIVE_FIXED;
}

static int measure(const char *name, bool (*op)(void), int n)
{
    bu_samples s;
    uint64_t errors = 0;
    if (!bu_samples_init(&s, (size_t)n))
        return 1;
    for (int i = 0; i < n / 10; i++) /* warm-up */
        op();
    int64_t t0 = bu_now_ns();
    for (int i = 0; i < n; i++) {
        int64_t a = bu_now_ns();
        if (!op())
            errors++;
        bu_samples_add(&s, bu_now_ns() - a);
    }
    bu_print_result(name, &s, errors, (double)(bu_now_ns() - t0) / 1e9, NULL);
    bu_samples_free(&s);
    return errors == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int n = 2000, i = 1;
    if (argc > 2 && strcmp(argv[1], "-n") == 0) {
        n = (int)bu_arg_long(argv[2], "-n");
        i = 3;
    }
    if (i >= argc || n < 10 || MultiByteToWideChar(CP_UTF8, 0, argv[i], -1, path, WMAX) == 0 ||
        wcslen(path) < 4) {
        fprintf(stderr, "usage: bench-hostops [-n N] C:\\path\\to\\dir\n");
        return 2;
    }
    wcscpy(parent, path);
    wchar_t *last = wcsrchr(parent, L'\\');
    if (last != NULL && last > parent + 2)
        *last = 0;
    else
        parent[3] = 0;
    int rc = 0;
    rc |= measure("host-resolve", op_resolve, n);
    rc |= measure("host-final-dos", op_final_dos, n);
    rc |= measure("host-attrs", op_attrs, n);
    rc |= measure("host-exists", op_exists, n);
    rc |= measure("host-drivetype", op_drivetype, n);
    return rc;
}
