/* model_names.c - the device model's (model.h) handle, name, mounted-folder
 * and file-system members of the storage call table, the table itself,
 * and build/win/csi-proxy-model.exe's storage host: the product's Win32
 * host (storage_win.c) on this table, seeded from the fixture named by
 * CSI_PROXY_MODEL_FIXTURE.
 *
 * Mounted folders on real Wine directories: the directory stays an
 * ordinary directory of the Wine prefix (Wine has no volume mount points);
 * the model records "this directory is a mount point of that volume" and
 * answers for it wherever the host asks: GetFileAttributesW adds
 * FILE_ATTRIBUTE_REPARSE_POINT, FindFirstFileW reports the reparse tag
 * IO_REPARSE_TAG_MOUNT_POINT, GetVolumeNameForVolumeMountPointW and
 * GetVolumePathNameW name the volume. Everything else about the directory
 * (exists, empty, files written into it) is the real directory's: files
 * written "into the volume" land in the Wine directory and the model's
 * free space does not change. A mount point whose directory was removed is
 * forgotten, as removing a mounted folder's directory removes the mount
 * point on Windows. Paths the model does not own go to the real
 * functions. */
#include "test/model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static BOOL fail(DWORD err)
{
    SetLastError(err);
    return FALSE;
}

static HANDLE fail_h(DWORD err)
{
    SetLastError(err);
    return INVALID_HANDLE_VALUE;
}

static bool put_str(const wchar_t *s, LPWSTR out, DWORD cch)
{
    size_t n = wcslen(s);
    if (out == NULL || cch <= n) {
        SetLastError(ERROR_FILENAME_EXCED_RANGE);
        return false;
    }
    wmemcpy(out, s, n + 1);
    return true;
}

/* --- mounted folders --------------------------------------------------- */

static bool ends_slash(const wchar_t *s)
{
    size_t n = wcslen(s);
    return n > 0 && s[n - 1] == L'\\';
}

/* dir with exactly one trailing backslash into out. */
static void norm_dir(const wchar_t *dir, wchar_t out[MAX_PATH])
{
    size_t n = wcslen(dir);
    while (n > 0 && dir[n - 1] == L'\\')
        n--;
    if (n > MAX_PATH - 2)
        n = MAX_PATH - 2;
    wmemcpy(out, dir, n);
    out[n] = L'\\';
    out[n + 1] = L'\0';
}

static bool real_exists(const wchar_t *dir)
{
    return GetFileAttributesW(dir) != INVALID_FILE_ATTRIBUTES;
}

/* The mount point at dir (lock held); forgets one whose directory is gone. */
static m_mount *mount_at(const wchar_t *dir)
{
    wchar_t nd[MAX_PATH];
    norm_dir(dir, nd);
    for (size_t i = 0; i < m_model.n_mounts; i++)
        if (_wcsicmp(m_model.mounts[i].dir, nd) == 0) {
            if (real_exists(nd))
                return &m_model.mounts[i];
            m_model.mounts[i] = m_model.mounts[--m_model.n_mounts];
            return NULL;
        }
    return NULL;
}

/* "SetVolumeMountPointW function": lpszVolumeMountPoint ends with a
 * backslash, lpszVolumeName is "\\?\Volume{GUID}\"; "Creating Mounted
 * Folders": the folder must be an empty directory. Undocumented: the
 * errors for a folder that is already a mount point or is not empty (the
 * model: ERROR_DIR_NOT_EMPTY), for a volume that does not exist
 * (ERROR_FILE_NOT_FOUND) and for a missing backslash
 * (ERROR_INVALID_NAME). */
static BOOL WINAPI m_SetVolumeMountPointW(LPCWSTR dir, LPCWSTR vol)
{
    GUID g;
    bool slash;
    if (dir == NULL || vol == NULL || !ends_slash(dir) || !m_vol_parse(vol, &g, &slash) || !slash)
        return fail(ERROR_INVALID_NAME);
    DWORD attrs = GetFileAttributesW(dir);
    if (attrs == INVALID_FILE_ATTRIBUTES)
        return FALSE; /* the real error: ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND */
    if (!(attrs & FILE_ATTRIBUTE_DIRECTORY))
        return fail(ERROR_DIRECTORY);
    wchar_t pat[MAX_PATH + 2];
    swprintf(pat, MAX_PATH + 2, L"%ls*", dir);
    WIN32_FIND_DATAW fd;
    HANDLE f = FindFirstFileW(pat, &fd);
    bool empty = true;
    if (f != INVALID_HANDLE_VALUE) {
        do
            empty = empty && (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0);
        while (FindNextFileW(f, &fd));
        FindClose(f);
    }
    M_LOCK();
    m_disk *d;
    size_t p;
    DWORD err = 0;
    if (!m_vol_find(&g, &d, &p))
        err = ERROR_FILE_NOT_FOUND;
    else if (mount_at(dir) != NULL || !empty)
        err = ERROR_DIR_NOT_EMPTY;
    else if (m_model.n_mounts == M_MAX_MOUNTS)
        err = ERROR_NOT_ENOUGH_MEMORY;
    else {
        m_mount *m = &m_model.mounts[m_model.n_mounts++];
        norm_dir(dir, m->dir);
        m->vol = g;
    }
    M_UNLOCK();
    m_trace("SetVolumeMountPointW %ls %ls -> %lu", dir, vol, (unsigned long)err);
    return err == 0 ? TRUE : fail(err);
}

/* "DeleteVolumeMountPointW function" (a trailing backslash required).
 * Undocumented: the error for a folder that is not a mount point (the
 * model: ERROR_NOT_A_REPARSE_POINT). */
static BOOL WINAPI m_DeleteVolumeMountPointW(LPCWSTR dir)
{
    if (dir == NULL || !ends_slash(dir))
        return fail(ERROR_INVALID_NAME);
    M_LOCK();
    m_mount *m = mount_at(dir);
    if (m != NULL)
        *m = m_model.mounts[--m_model.n_mounts];
    M_UNLOCK();
    m_trace("DeleteVolumeMountPointW %ls -> %s", dir, m != NULL ? "ok" : "not a mount point");
    if (m != NULL)
        return TRUE;
    return real_exists(dir) ? fail(ERROR_NOT_A_REPARSE_POINT) : FALSE;
}

/* "Determining Whether a Directory Is a Mounted Folder": the directory has
 * FILE_ATTRIBUTE_REPARSE_POINT and its reparse tag (WIN32_FIND_DATAW.
 * dwReserved0) is IO_REPARSE_TAG_MOUNT_POINT. */
static DWORD WINAPI m_GetFileAttributesW(LPCWSTR path)
{
    DWORD a = GetFileAttributesW(path);
    if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_DIRECTORY))
        return a;
    M_LOCK();
    if (mount_at(path) != NULL)
        a |= FILE_ATTRIBUTE_REPARSE_POINT;
    M_UNLOCK();
    return a;
}

static HANDLE WINAPI m_FindFirstFileW(LPCWSTR path, LPWIN32_FIND_DATAW fd)
{
    HANDLE f = FindFirstFileW(path, fd);
    if (f == INVALID_HANDLE_VALUE || wcschr(path, L'*') != NULL || wcschr(path, L'?') != NULL)
        return f;
    M_LOCK();
    if (mount_at(path) != NULL) {
        fd->dwFileAttributes |= FILE_ATTRIBUTE_REPARSE_POINT;
        fd->dwReserved0 = IO_REPARSE_TAG_MOUNT_POINT;
    }
    M_UNLOCK();
    return f;
}

/* --- names --------------------------------------------------------------- */

/* "GetVolumeNameForVolumeMountPointW function": the path ends with a
 * backslash (a drive root "X:\", a mounted folder, or a volume GUID path);
 * "a reasonable size for the buffer ... is 50 characters". Undocumented:
 * the errors for a path that is no mount point (the model: a directory
 * that exists ERROR_NOT_A_REPARSE_POINT, else the real error; an unknown
 * drive letter ERROR_FILE_NOT_FOUND; no backslash ERROR_INVALID_NAME; a
 * short buffer ERROR_FILENAME_EXCED_RANGE). */
static BOOL WINAPI m_GetVolumeNameForVolumeMountPointW(LPCWSTR path, LPWSTR out, DWORD cch)
{
    if (path == NULL || !ends_slash(path))
        return fail(ERROR_INVALID_NAME);
    GUID g;
    bool slash, found = false;
    m_disk *d;
    size_t p;
    M_LOCK();
    if (m_vol_parse(path, &g, &slash))
        found = m_vol_find(&g, &d, &p);
    else if (wcslen(path) == 3 && path[1] == L':')
        found = m_vol_by_drive(path[0], &d, &p);
    else {
        m_mount *m = mount_at(path);
        if (m != NULL && m_vol_find(&m->vol, &d, &p))
            found = true;
    }
    if (found)
        g = d->parts[p].vol.guid;
    M_UNLOCK();
    if (!found) {
        if (wcslen(path) == 3 || wcsncmp(path, L"\\\\?\\", 4) == 0)
            return fail(ERROR_FILE_NOT_FOUND);
        return real_exists(path) ? fail(ERROR_NOT_A_REPARSE_POINT) : FALSE;
    }
    wchar_t name[50];
    m_vol_name(&g, true, name);
    return put_str(name, out, cch);
}

/* "GetVolumePathNameW function": the mount point (a mounted folder or a
 * drive root) that path is on, with a trailing backslash; path need not
 * exist. */
static BOOL WINAPI m_GetVolumePathNameW(LPCWSTR path, LPWSTR out, DWORD cch)
{
    if (path == NULL || wcslen(path) < 2 || path[1] != L':')
        return GetVolumePathNameW(path, out, cch);
    wchar_t best[MAX_PATH] = {path[0], L':', L'\\', L'\0'};
    wchar_t full[MAX_PATH];
    norm_dir(path, full);
    M_LOCK();
    for (size_t i = 0; i < m_model.n_mounts; i++) {
        size_t n = wcslen(m_model.mounts[i].dir);
        if (_wcsnicmp(full, m_model.mounts[i].dir, n) == 0 && n > wcslen(best) &&
            real_exists(m_model.mounts[i].dir))
            wcscpy(best, m_model.mounts[i].dir);
    }
    M_UNLOCK();
    return put_str(best, out, cch);
}

/* "QueryDosDeviceW function": lpDeviceName NULL lists every MS-DOS device
 * name, each NUL-terminated, the list ending with one more NUL; a buffer
 * too small: ERROR_INSUFFICIENT_BUFFER. The model's names: its disks
 * (PhysicalDriveN), CD-ROMs (CdRomN), drive letters, and two names that
 * are not disks. */
static DWORD WINAPI m_QueryDosDeviceW(LPCWSTR name, LPWSTR out, DWORD cch)
{
    wchar_t buf[8192];
    size_t k = 0;
    M_LOCK();
    for (size_t i = 0; i < m_model.n_disks; i++) {
        const m_disk *d = &m_model.disks[i];
        wchar_t one[64], target[64];
        swprintf(one, 64, d->cdrom ? L"CdRom%u" : L"PhysicalDrive%u", d->number);
        swprintf(target, 64, d->cdrom ? L"\\Device\\CdRom%u" : L"\\Device\\Harddisk%u\\DR%u",
                 d->number, d->number);
        if (name != NULL && _wcsicmp(name, one) == 0) {
            M_UNLOCK();
            size_t n = wcslen(target);
            if (cch < n + 2) {
                SetLastError(ERROR_INSUFFICIENT_BUFFER);
                return 0;
            }
            wmemcpy(out, target, n + 1);
            out[n + 1] = L'\0';
            return (DWORD)(n + 2);
        }
        size_t n = wcslen(one);
        if (k + n + 1 < 8000) {
            wmemcpy(buf + k, one, n + 1);
            k += n + 1;
        }
    }
    M_UNLOCK();
    if (name != NULL) {
        SetLastError(ERROR_FILE_NOT_FOUND);
        return 0;
    }
    static const wchar_t *const extra[] = {L"NUL", L"COM1", L"PhysicalDriveX"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = wcslen(extra[i]);
        wmemcpy(buf + k, extra[i], n + 1);
        k += n + 1;
    }
    buf[k++] = L'\0';
    if (out == NULL || cch < k) {
        SetLastError(ERROR_INSUFFICIENT_BUFFER);
        return 0;
    }
    wmemcpy(out, buf, k);
    return (DWORD)k;
}

/* --- volume enumeration ("Enumerating Volumes") ------------------------- */

static HANDLE WINAPI m_FindFirstVolumeW(LPWSTR out, DWORD cch)
{
    m_handle h = {.kind = M_H_FINDVOL};
    h.names = calloc(M_MAX_DISKS * M_MAX_PARTS, sizeof(wchar_t *));
    if (h.names == NULL)
        return fail_h(ERROR_NOT_ENOUGH_MEMORY);
    M_LOCK();
    for (size_t i = 0; i < m_model.n_disks; i++)
        for (size_t j = 0; j < m_model.disks[i].n_parts; j++)
            if (m_vol_present(&m_model.disks[i], j) &&
                (h.names[h.n_names] = malloc(50 * sizeof(wchar_t))) != NULL)
                m_vol_name(&m_model.disks[i].parts[j].vol.guid, true, h.names[h.n_names++]);
    M_UNLOCK();
    if (h.n_names == 0) {
        free(h.names);
        return fail_h(ERROR_NO_MORE_FILES);
    }
    if (!put_str(h.names[0], out, cch)) {
        for (size_t i = 0; i < h.n_names; i++)
            free(h.names[i]);
        free(h.names);
        return INVALID_HANDLE_VALUE;
    }
    h.pos = 1;
    return m_handle_new(&h);
}

/* "FindNextVolumeW function": ERROR_NO_MORE_FILES after the last one. */
static BOOL WINAPI m_FindNextVolumeW(HANDLE f, LPWSTR out, DWORD cch)
{
    m_handle *h = m_handle_get(f);
    if (h == NULL || h->kind != M_H_FINDVOL)
        return fail(ERROR_INVALID_HANDLE);
    if (h->pos >= h->n_names)
        return fail(ERROR_NO_MORE_FILES);
    if (!put_str(h->names[h->pos], out, cch))
        return FALSE;
    h->pos++;
    return TRUE;
}

static BOOL WINAPI m_FindVolumeClose(HANDLE f)
{
    m_handle *h = m_handle_get(f);
    if (h == NULL || h->kind != M_H_FINDVOL)
        return fail(ERROR_INVALID_HANDLE);
    m_handle_free(f);
    return TRUE;
}

/* --- handles ------------------------------------------------------------- */

/* "CreateFileW function", "Physical Disks and Volumes": \\.\PhysicalDriveN,
 * \\.\CdRomN, \\.\X: and \\?\Volume{GUID} (no trailing backslash: with
 * one, the root directory is opened instead); dwCreationDisposition
 * OPEN_EXISTING and dwShareMode with FILE_SHARE_WRITE are required.
 * Undocumented: the errors when they are not given (the model:
 * ERROR_INVALID_PARAMETER, ERROR_SHARING_VIOLATION). A disk that is not
 * ready opens; its IOCTLs fail (model_ioctl.c). */
static HANDLE WINAPI m_CreateFileW(LPCWSTR path, DWORD access, DWORD share,
                                   LPSECURITY_ATTRIBUTES sa, DWORD disp, DWORD flags, HANDLE tmpl)
{
    m_handle h = {.access = access};
    GUID g;
    bool slash, ours = true;
    unsigned n;
    wchar_t c;
    DWORD err = 0;
    M_LOCK();
    if (swscanf(path, L"\\\\.\\PhysicalDrive%u%lc", &n, &c) == 1) {
        h.kind = M_H_DISK;
        h.disk = m_disk_by_number(n, false);
    } else if (swscanf(path, L"\\\\.\\CdRom%u%lc", &n, &c) == 1) {
        h.kind = M_H_DISK;
        h.disk = m_disk_by_number(n, true);
    } else if (m_vol_parse(path, &g, &slash)) {
        h.kind = M_H_VOLUME;
        if (slash || !m_vol_find(&g, &h.disk, &h.part))
            h.disk = NULL;
    } else if (wcslen(path) == 6 && wcsncmp(path, L"\\\\.\\", 4) == 0 && path[5] == L':') {
        h.kind = M_H_VOLUME;
        if (!m_vol_by_drive(path[4], &h.disk, &h.part))
            h.disk = NULL;
    } else {
        ours = false;
    }
    if (ours && h.disk == NULL)
        err = ERROR_FILE_NOT_FOUND;
    else if (ours && disp != OPEN_EXISTING)
        err = ERROR_INVALID_PARAMETER;
    else if (ours && !(share & FILE_SHARE_WRITE))
        err = ERROR_SHARING_VIOLATION;
    M_UNLOCK();
    if (!ours)
        return CreateFileW(path, access, share, sa, disp, flags, tmpl);
    m_trace("CreateFileW %ls access 0x%lx -> %lu", path, (unsigned long)access, (unsigned long)err);
    if (err != 0)
        return fail_h(err);
    return m_handle_new(&h);
}

static BOOL WINAPI m_CloseHandle(HANDLE h)
{
    m_handle *mh = m_handle_get(h);
    if (mh == NULL)
        return CloseHandle(h);
    if (mh->kind == M_H_FINDVOL)
        return fail(ERROR_INVALID_HANDLE);
    m_handle_free(h);
    return TRUE;
}

/* "FlushFileBuffers function": a volume handle flushes every file of the
 * volume; the handle must have GENERIC_WRITE access (else
 * ERROR_ACCESS_DENIED). */
static BOOL WINAPI m_FlushFileBuffers(HANDLE h)
{
    m_handle *mh = m_handle_get(h);
    if (mh == NULL)
        return FlushFileBuffers(h);
    if (!(mh->access & (GENERIC_WRITE | GENERIC_ALL)))
        return fail(ERROR_ACCESS_DENIED);
    M_LOCK();
    bool gone = mh->kind == M_H_VOLUME && !m_vol_present(mh->disk, mh->part);
    M_UNLOCK();
    return gone ? fail(ERROR_NO_SUCH_DEVICE) : TRUE;
}

/* --- file systems -------------------------------------------------------- */

/* The model volume a root path names ("\\?\Volume{GUID}\", "X:\" or a
 * mounted folder, with the trailing backslash); lock held. */
static bool root_volume(LPCWSTR root, m_disk **d, size_t *p, bool *ours)
{
    GUID g;
    bool slash;
    *ours = true;
    if (m_vol_parse(root, &g, &slash))
        return slash && m_vol_find(&g, d, p);
    if (wcslen(root) == 3 && root[1] == L':' && root[2] == L'\\')
        return m_vol_by_drive(root[0], d, p);
    m_mount *m = mount_at(root);
    if (m != NULL)
        return m_vol_find(&m->vol, d, p);
    *ours = false;
    return false;
}

/* "GetVolumeInformationW function": lpRootPathName with a trailing
 * backslash; the file-system name ("NTFS", "FAT32", "CDFS", ...).
 * Undocumented: what a volume with no file system answers (the Win32 host
 * takes ERROR_UNRECOGNIZED_VOLUME or "RAW"; the model fails with
 * ERROR_UNRECOGNIZED_VOLUME). */
static BOOL WINAPI m_GetVolumeInformationW(LPCWSTR root, LPWSTR label, DWORD label_cch,
                                           LPDWORD serial, LPDWORD maxlen, LPDWORD flags, LPWSTR fs,
                                           DWORD fs_cch)
{
    m_disk *d;
    size_t p;
    bool ours;
    M_LOCK();
    bool found = root != NULL && root_volume(root, &d, &p, &ours);
    char name[16] = "";
    DWORD ser = 0;
    if (found) {
        snprintf(name, sizeof(name), "%s", d->parts[p].vol.fs);
        ser = (DWORD)d->parts[p].vol.guid.Data1;
    }
    M_UNLOCK();
    if (!ours)
        return GetVolumeInformationW(root, label, label_cch, serial, maxlen, flags, fs, fs_cch);
    if (!found)
        return fail(ERROR_FILE_NOT_FOUND);
    if (name[0] == '\0')
        return fail(ERROR_UNRECOGNIZED_VOLUME);
    if (label != NULL && label_cch > 0)
        label[0] = L'\0';
    if (serial != NULL)
        *serial = ser;
    if (maxlen != NULL)
        *maxlen = 255;
    if (flags != NULL)
        *flags = FILE_CASE_PRESERVED_NAMES | FILE_UNICODE_ON_DISK;
    if (fs != NULL) {
        if (fs_cch <= strlen(name))
            return fail(ERROR_BAD_LENGTH);
        for (size_t i = 0; i <= strlen(name); i++)
            fs[i] = (wchar_t)(unsigned char)name[i];
    }
    return TRUE;
}

/* "GetDiskFreeSpaceExW function": total and free bytes of the volume
 * holding the directory. Undocumented: a RAW volume (the model:
 * ERROR_UNRECOGNIZED_VOLUME). */
static BOOL WINAPI m_GetDiskFreeSpaceExW(LPCWSTR dir, PULARGE_INTEGER avail, PULARGE_INTEGER total,
                                         PULARGE_INTEGER free_bytes)
{
    m_disk *d;
    size_t p;
    bool ours;
    M_LOCK();
    bool found = dir != NULL && root_volume(dir, &d, &p, &ours);
    uint64_t t = 0, u = 0;
    bool raw = true;
    if (found) {
        raw = d->parts[p].vol.fs[0] == '\0';
        t = d->parts[p].vol.fs_size;
        u = d->parts[p].vol.used;
    }
    M_UNLOCK();
    if (!ours)
        return GetDiskFreeSpaceExW(dir, avail, total, free_bytes);
    if (!found)
        return fail(ERROR_FILE_NOT_FOUND);
    if (raw)
        return fail(ERROR_UNRECOGNIZED_VOLUME);
    if (avail != NULL)
        avail->QuadPart = t - u;
    if (total != NULL)
        total->QuadPart = t;
    if (free_bytes != NULL)
        free_bytes->QuadPart = t - u;
    return TRUE;
}

/* --- the table and the model exe's storage host --------------------------- */

static const cp_storage_calls model_calls = {
    .CreateFileW = m_CreateFileW,
    .DeviceIoControl = m_DeviceIoControl,
    .FlushFileBuffers = m_FlushFileBuffers,
    .ReadFile = m_ReadFile,
    .CloseHandle = m_CloseHandle,
    .QueryDosDeviceW = m_QueryDosDeviceW,
    .FindFirstVolumeW = m_FindFirstVolumeW,
    .FindNextVolumeW = m_FindNextVolumeW,
    .FindVolumeClose = m_FindVolumeClose,
    .GetVolumeNameForVolumeMountPointW = m_GetVolumeNameForVolumeMountPointW,
    .GetVolumePathNameW = m_GetVolumePathNameW,
    .SetVolumeMountPointW = m_SetVolumeMountPointW,
    .DeleteVolumeMountPointW = m_DeleteVolumeMountPointW,
    .GetFileAttributesW = m_GetFileAttributesW,
    .FindFirstFileW = m_FindFirstFileW,
    .FindClose = FindClose,
    .GetVolumeInformationW = m_GetVolumeInformationW,
    .GetDiskFreeSpaceExW = m_GetDiskFreeSpaceExW,
    .update_host_storage_cache = m_update_host_storage_cache,
    .format_volume = m_format_volume,
    .disk_online = m_disk_online,
};

/* csi-proxy-model.exe's storage host: the Win32 host on the model. */
int cp_storage_host_open_default(cp_storage_host *out, cp_error *e)
{
    const char *path = getenv("CSI_PROXY_MODEL_FIXTURE");
    m_model.trace = getenv("CSI_PROXY_MODEL_TRACE") != NULL;
    if (path == NULL || path[0] == '\0')
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "storage device model: CSI_PROXY_MODEL_FIXTURE is not set");
    int rc = m_fixture_load(path, e);
    if (rc != CP_OK)
        return rc;
    fprintf(stderr, "storage device model: %u disks from %s, the Win32 storage host on it\n",
            (unsigned)m_model.n_disks, path);
    return cp_storage_host_open_win32(out, &model_calls, e);
}
