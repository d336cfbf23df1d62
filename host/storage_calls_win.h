/* storage_calls_win.h - everything the Win32 storage host (storage_win.c,
 * storage_volume_win.c, storage_roles_win.c) asks of Windows about
 * disks and volumes, as one table of calls, after SQLite's os_win.c
 * system-call table.
 *
 *   cp_storage_calls_win32  the real functions of kernel32 and the real
 *                           WMI operations (storage_calls_win.c): what
 *                           csi-proxy.exe runs, one pointer call each.
 *   the device model        test/model/ (build/win/csi-proxy-model.exe
 *                           only): answers as Microsoft documents Windows
 *                           answers, so that the host's own code runs in
 *                           the tests. Never linked into csi-proxy.exe
 *                           (test/exe/check_imports.sh checks).
 *
 * The Win32 members have the signatures of the functions they are named
 * after and the same contract, GetLastError included. What stays outside
 * the table, because it is not about disks or volumes and Wine runs it
 * as Windows does: GetLastError, GetSystemWindowsDirectoryW, the registry
 * (RegGetValueW, ExpandEnvironmentStringsW), RtlGenRandom, GetTickCount64
 * and Sleep.
 *
 * The WMI operations (Windows Storage Management API, documented only
 * through WMI) are a small interface of their own at the operation level:
 * the table does not model COM. Each returns CP_OK or a cp_status with e
 * set, as the real ones in storage_wmi_win.c do. Windows build only. */
#ifndef CP_WINAPI_STORAGE_CALLS_WIN32_H
#define CP_WINAPI_STORAGE_CALLS_WIN32_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdint.h>

#include "base/status.h"
#include "host/storage.h"

struct cp_wmi_conn;

typedef struct cp_storage_calls {
    /* handles: \\.\PhysicalDriveN and \\?\Volume{guid} */
    HANDLE(WINAPI *CreateFileW)(LPCWSTR, DWORD, DWORD, LPSECURITY_ATTRIBUTES, DWORD, DWORD, HANDLE);
    BOOL(WINAPI *DeviceIoControl)
    (HANDLE, DWORD, LPVOID, DWORD, LPVOID, DWORD, LPDWORD, LPOVERLAPPED);
    BOOL(WINAPI *FlushFileBuffers)(HANDLE);
    BOOL(WINAPI *ReadFile)(HANDLE, LPVOID, DWORD, LPDWORD, LPOVERLAPPED);
    BOOL(WINAPI *CloseHandle)(HANDLE);
    /* names */
    DWORD(WINAPI *QueryDosDeviceW)(LPCWSTR, LPWSTR, DWORD);
    HANDLE(WINAPI *FindFirstVolumeW)(LPWSTR, DWORD);
    BOOL(WINAPI *FindNextVolumeW)(HANDLE, LPWSTR, DWORD);
    BOOL(WINAPI *FindVolumeClose)(HANDLE);
    BOOL(WINAPI *GetVolumeNameForVolumeMountPointW)(LPCWSTR, LPWSTR, DWORD);
    BOOL(WINAPI *GetVolumePathNameW)(LPCWSTR, LPWSTR, DWORD);
    /* mounted folders */
    BOOL(WINAPI *SetVolumeMountPointW)(LPCWSTR, LPCWSTR);
    BOOL(WINAPI *DeleteVolumeMountPointW)(LPCWSTR);
    DWORD(WINAPI *GetFileAttributesW)(LPCWSTR);
    HANDLE(WINAPI *FindFirstFileW)(LPCWSTR, LPWIN32_FIND_DATAW);
    BOOL(WINAPI *FindClose)(HANDLE);
    /* file systems */
    BOOL(WINAPI *GetVolumeInformationW)
    (LPCWSTR, LPWSTR, DWORD, LPDWORD, LPDWORD, LPDWORD, LPWSTR, DWORD);
    BOOL(WINAPI *GetDiskFreeSpaceExW)(LPCWSTR, PULARGE_INTEGER, PULARGE_INTEGER, PULARGE_INTEGER);

    /* WMI, ROOT\Microsoft\Windows\Storage (storage_wmi_win.c) */
    /* MSFT_StorageSetting.UpdateHostStorageCache */
    int (*update_host_storage_cache)(struct cp_wmi_conn *c, cp_error *e);
    /* MSFT_Volume.Format(NTFS, "", Full false, Force true) of the volume
     * whose UniqueId is id */
    int (*format_volume)(struct cp_wmi_conn *c, const char *id, cp_error *e);
    /* MSFT_Disk.Online of disk number */
    int (*disk_online)(struct cp_wmi_conn *c, uint32_t number, cp_error *e);
} cp_storage_calls;

/* The real table (storage_calls_win.c). */
extern const cp_storage_calls cp_storage_calls_win32;

/* The Win32 storage host on `calls` (storage_win.c). One host per
 * process: the table is the process's. cp_storage_host_open_default is
 * this with cp_storage_calls_win32; the model exe's, with the model. */
int cp_storage_host_open_win32(cp_storage_host *out, const cp_storage_calls *calls, cp_error *e);

#endif
