/* storage_calls_win.c - the real storage call table (storage_calls_win.h)
 * and csi-proxy.exe's storage host: the Win32 host on it. Kept apart from
 * storage_win.c so that an executable bringing its own
 * cp_storage_host_open_default (the simulator's, the device model's) never
 * links this table; csi-proxy.exe always does. */
#include "host/storage_win_internal.h"

const cp_storage_calls cp_storage_calls_win32 = {
    .CreateFileW = CreateFileW,
    .DeviceIoControl = DeviceIoControl,
    .FlushFileBuffers = FlushFileBuffers,
    .ReadFile = ReadFile,
    .CloseHandle = CloseHandle,
    .QueryDosDeviceW = QueryDosDeviceW,
    .FindFirstVolumeW = FindFirstVolumeW,
    .FindNextVolumeW = FindNextVolumeW,
    .FindVolumeClose = FindVolumeClose,
    .GetVolumeNameForVolumeMountPointW = GetVolumeNameForVolumeMountPointW,
    .GetVolumePathNameW = GetVolumePathNameW,
    .SetVolumeMountPointW = SetVolumeMountPointW,
    .DeleteVolumeMountPointW = DeleteVolumeMountPointW,
    .GetFileAttributesW = GetFileAttributesW,
    .FindFirstFileW = FindFirstFileW,
    .FindClose = FindClose,
    .GetVolumeInformationW = GetVolumeInformationW,
    .GetDiskFreeSpaceExW = GetDiskFreeSpaceExW,
    .update_host_storage_cache = w32w_update_host_storage_cache,
    .format_volume = w32w_format_volume,
    .disk_online = w32w_disk_online,
};

/* csi-proxy.exe's storage host. */
int cp_storage_host_open_default(cp_storage_host *out, cp_error *e)
{
    return cp_storage_host_open_win32(out, &cp_storage_calls_win32, e);
}
