/* storage_roles_win.c - what Windows needs a volume for, and the disks it
 * is on: volume_use of the Win32 storage host (storage.h; the groups refuse
 * to change such a volume). Documented sources only, read on every call
 * (nothing cached: a page file moved since is seen at once):
 *   disks      IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS on the volume
 *              ("IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS IOCTL",
 *              "VOLUME_DISK_EXTENTS structure": ERROR_MORE_DATA asks for a
 *              bigger buffer), else IOCTL_STORAGE_GET_DEVICE_NUMBER
 *   system     the volume's partition is the EFI system partition
 *              (PARTITION_INFORMATION_GPT.PartitionType PARTITION_SYSTEM_GUID)
 *              or the active MBR partition (PARTITION_INFORMATION_MBR.
 *              BootIndicator): what MSFT_Partition.IsSystem reports, and the
 *              same test that makes a disk the system disk (storage_win.c)
 *   boot       the volume holding GetSystemWindowsDirectoryW ("GetSystem
 *              WindowsDirectoryW function": %SystemRoot% of the running
 *              Windows), found by GetVolumePathNameW and
 *              GetVolumeNameForVolumeMountPointW
 *   page file  HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Memory
 *              Management: PagingFiles (REG_MULTI_SZ "C:\pagefile.sys 0 0":
 *              the page files Session Manager opens at boot, "Introduction
 *              to the page file", Microsoft Learn) and ExistingPageFiles
 *              (REG_MULTI_SZ "\??\C:\pagefile.sys": the ones in use now);
 *              entries parsed by sysfiles.c
 *   crash dump HKLM\SYSTEM\CurrentControlSet\Control\CrashControl: DumpFile
 *              (REG_EXPAND_SZ, default %SystemRoot%\MEMORY.DMP) and
 *              DedicatedDumpFile (REG_SZ; "Overview of memory dump file
 *              options for Windows" and "How to use the DedicatedDumpFile
 *              registry value", Microsoft Learn; a dedicated dump file may
 *              sit in a mounted folder, so its volume is found by
 *              GetVolumePathNameW, not by its drive letter)
 * A value that does not exist adds nothing; any other failure to read one
 * fails the call (the caller then refuses the change: fail closed). An
 * entry whose volume cannot be told is passed over here and named by
 * cp_sysfile_unresolved (logged at start, shown by `csi-proxy-cli health`).
 * Wine has none of these registry values and no disk extents; the checks a
 * node must confirm are in test/windows/staging.ps1. */
#include "host/storage_win_internal.h"
#include "host/sysfiles_win.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define PATH_CAP 1024

/* Sets role in *roles when a file the value names is on volume id. */
static int role_from_value(const wchar_t *key, const cp_sysfile_source *src, const char *id,
                           unsigned role, unsigned *roles, cp_error *e)
{
    wchar_t *list, value[64];
    MultiByteToWideChar(CP_UTF8, 0, src->value, -1, value, 64);
    int rc = cp_sysfile_read_strings(key, value, src->name, &list, e);
    if (rc != CP_OK || list == NULL)
        return rc;
    for (const wchar_t *s = list; *s != L'\0'; s += wcslen(s) + 1) {
        char on[CP_VOLUME_ID_LEN + 1], why[8];
        bool none;
        if (cp_sysfile_entry_volume(w32s_sc, s, src->paging, on, &none, why, sizeof(why)) &&
            strcmp(on, id) == 0)
            *roles |= role;
    }
    free(list);
    return CP_OK;
}

/* Every disk with an extent of the volume; one disk from
 * IOCTL_STORAGE_GET_DEVICE_NUMBER when the extents cannot be read. */
static int volume_disks(HANDLE v, const char *id, cp_volume_use *o, cp_error *e)
{
    DWORD count = 4;
    for (int tries = 0; tries < 4; tries++) {
        DWORD size = sizeof(VOLUME_DISK_EXTENTS) + count * sizeof(DISK_EXTENT);
        VOLUME_DISK_EXTENTS *x = calloc(1, size);
        if (x == NULL)
            return w32s_nomem(e);
        DWORD n;
        BOOL ok = w32s_sc->DeviceIoControl(v, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, NULL, 0, x,
                                           size, &n, NULL);
        DWORD err = ok ? ERROR_SUCCESS : GetLastError();
        if (ok) {
            for (DWORD i = 0; i < x->NumberOfDiskExtents; i++) {
                bool seen = false;
                for (size_t j = 0; j < o->n_disks; j++)
                    seen = seen || o->disks[j] == x->Extents[i].DiskNumber;
                if (seen)
                    continue;
                if (o->n_disks == CP_VOLUME_DISKS_MAX) {
                    free(x);
                    return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                                        "volume %s spans more than %d disks", id,
                                        CP_VOLUME_DISKS_MAX);
                }
                o->disks[o->n_disks++] = x->Extents[i].DiskNumber;
            }
            free(x);
            return CP_OK;
        }
        DWORD want = x->NumberOfDiskExtents;
        free(x);
        if (err != ERROR_MORE_DATA)
            break;
        count = want > count ? want : count * 2;
    }
    uint32_t disk, part;
    if (w32s_volume_place(v, &disk, &part)) {
        o->disks[0] = disk;
        o->n_disks = 1;
        return CP_OK;
    }
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "volume %s: cannot tell which disks hold it",
                        id);
}

/* The volume's partition is the system partition (EFI system partition or
 * active MBR partition). A volume that is not one basic partition is not. */
static int is_system_partition(HANDLE v, bool *out, cp_error *e)
{
    *out = false;
    uint32_t disk, part;
    if (!w32s_volume_place(v, &disk, &part))
        return CP_OK;
    DRIVE_LAYOUT_INFORMATION_EX *l = w32s_read_layout(disk, e);
    if (l == NULL)
        return e->status;
    for (DWORD i = 0; i < l->PartitionCount; i++)
        if (w32s_used_entry(l, i) && l->PartitionEntry[i].PartitionNumber == part &&
            w32s_part_kind(l, &l->PartitionEntry[i]) == CP_PART_SYSTEM)
            *out = true;
    free(l);
    return CP_OK;
}

int w32_volume_use(void *ctx, const char *id, cp_volume_use *o, cp_error *e)
{
    (void)ctx;
    memset(o, 0, sizeof(*o));
    HANDLE v = w32s_open_volume(id, 0, e);
    if (v == INVALID_HANDLE_VALUE)
        return e->status;
    bool sys = false;
    int rc = volume_disks(v, id, o, e);
    if (rc == CP_OK)
        rc = is_system_partition(v, &sys, e);
    w32s_sc->CloseHandle(v);
    if (rc != CP_OK)
        return rc;
    if (sys)
        o->roles |= CP_VOLUME_ROLE_SYSTEM;

    wchar_t win[PATH_CAP];
    char boot[CP_VOLUME_ID_LEN + 1];
    UINT n = GetSystemWindowsDirectoryW(win, PATH_CAP);
    if (n == 0 || n >= PATH_CAP || !cp_sysfile_volume_of(w32s_sc, win, boot))
        return cp_error_set(e, CP_E_INTERNAL,
                            "volume %s: cannot tell the boot volume "
                            "(the volume of GetSystemWindowsDirectoryW)",
                            id);
    if (strcmp(boot, id) == 0)
        o->roles |= CP_VOLUME_ROLE_BOOT;

    for (int i = 0; i < CP_SYSFILE_SOURCES && rc == CP_OK; i++) {
        const cp_sysfile_source *src = &cp_sysfile_sources[i];
        rc = role_from_value(cp_sysfile_key(src), src, id,
                             src->paging ? CP_VOLUME_ROLE_PAGEFILE : CP_VOLUME_ROLE_CRASHDUMP,
                             &o->roles, e);
    }
    return rc;
}
