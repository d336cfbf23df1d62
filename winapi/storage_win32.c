/* storage_win32.c - the storage host ops on Windows (the product).
 *
 * Documented Win32 first, one function per operation, each naming the
 * documentation it follows:
 *   disks       QueryDosDeviceW (the PhysicalDriveN names), then on
 *               \\.\PhysicalDriveN: IOCTL_STORAGE_GET_DEVICE_NUMBER,
 *               IOCTL_DISK_GET_LENGTH_INFO, IOCTL_DISK_GET_DISK_ATTRIBUTES
 *               (online), IOCTL_DISK_GET_DRIVE_LAYOUT_EX (style, partitions),
 *               IOCTL_STORAGE_QUERY_PROPERTY (StorageDeviceIdProperty: page
 *               0x83; StorageDeviceProperty: serial), IOCTL_SCSI_GET_ADDRESS
 *               (location)
 *   partitions  IOCTL_DISK_CREATE_DISK, IOCTL_DISK_SET_DRIVE_LAYOUT_EX,
 *               IOCTL_DISK_GROW_PARTITION, IOCTL_DISK_UPDATE_PROPERTIES,
 *               IOCTL_DISK_UPDATE_DRIVE_SIZE, IOCTL_DISK_SET_DISK_ATTRIBUTES
 *   volumes     FindFirstVolumeW/FindNextVolumeW, IOCTL_STORAGE_GET_DEVICE_NUMBER
 *               on the volume, GetVolumeInformationW, GetDiskFreeSpaceExW,
 *               SetVolumeMountPointW, DeleteVolumeMountPointW,
 *               GetVolumeNameForVolumeMountPointW, FlushFileBuffers on the
 *               volume, FSCTL_EXTEND_VOLUME
 *   WMI         only where Windows documents no other way: MSFT_Volume.Format
 *               and MSFT_StorageSetting.UpdateHostStorageCache, through one
 *               IWbemServices on ROOT\Microsoft\Windows\Storage created on
 *               first use and kept for the life of the process (in the MTA,
 *               kept alive by CoIncrementMTAUsage, so pool threads use it
 *               without initializing COM themselves).
 * No process is created and no command string is built.
 *
 * mingw-w64 lacks the disk-attribute IOCTLs (ntddisk.h): defined below
 * from the Windows Driver Kit documentation.
 *
 * Every Win32 error is captured on the very next line and turned into a
 * cp_status plus "<API> <object>: <system message> (error <n>)".
 */
#define WIN32_LEAN_AND_MEAN
#define COBJMACROS
#include <windows.h>

#include <objbase.h>
#include <oleauto.h>
#include <wbemcli.h>
#include <winioctl.h>
#include <ntddscsi.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../server/pipe_util_win.h"
#include "storage.h"
#include "storage_ids.h"

/* --- what mingw-w64 does not declare ------------------------------------ */

/* IOCTL_DISK_GET_DISK_ATTRIBUTES / IOCTL_DISK_SET_DISK_ATTRIBUTES and their
 * structures (ntddisk.h, Windows Driver Kit: "IOCTL_DISK_GET_DISK_ATTRIBUTES
 * IOCTL", "GET_DISK_ATTRIBUTES structure", "SET_DISK_ATTRIBUTES structure"). */
#ifndef IOCTL_DISK_GET_DISK_ATTRIBUTES
#define IOCTL_DISK_GET_DISK_ATTRIBUTES CTL_CODE(IOCTL_DISK_BASE, 0x003c, METHOD_BUFFERED, FILE_ANY_ACCESS)
#endif
#ifndef IOCTL_DISK_SET_DISK_ATTRIBUTES
#define IOCTL_DISK_SET_DISK_ATTRIBUTES                                                             \
    CTL_CODE(IOCTL_DISK_BASE, 0x003d, METHOD_BUFFERED, FILE_READ_ACCESS | FILE_WRITE_ACCESS)
#endif
#ifndef DISK_ATTRIBUTE_OFFLINE
#define DISK_ATTRIBUTE_OFFLINE 0x0000000000000001ULL
#endif

typedef struct cp_get_disk_attributes {
    DWORD Version; /* sizeof(cp_get_disk_attributes) */
    DWORD Reserved1;
    DWORDLONG Attributes;
} cp_get_disk_attributes;

typedef struct cp_set_disk_attributes {
    DWORD Version; /* sizeof(cp_set_disk_attributes) */
    BOOLEAN Persist;
    BOOLEAN Reserved1[3];
    DWORDLONG Attributes;
    DWORDLONG AttributesMask;
    DWORD Reserved2[4];
} cp_set_disk_attributes;

_Static_assert(sizeof(cp_get_disk_attributes) == 16, "GET_DISK_ATTRIBUTES is 16 bytes");
_Static_assert(sizeof(cp_set_disk_attributes) == 40, "SET_DISK_ATTRIBUTES is 40 bytes");

/* Partition type GUIDs (diskguid.h; "PARTITION_INFORMATION_GPT structure"). */
static const GUID basic_data_guid = {0xebd0a0a2, 0xb9e5, 0x4433,
                                     {0x87, 0xc0, 0x68, 0xb6, 0xb7, 0x26, 0x99, 0xc7}};
static const GUID esp_guid = {0xc12a7328, 0xf81f, 0x11d2,
                              {0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b}};
static const GUID msr_guid = {0xe3c9e316, 0x0b5c, 0x4db8,
                              {0x81, 0x7d, 0xf9, 0x2d, 0xf0, 0x02, 0x15, 0xae}};

/* WMI class and interface IDs (wbemcli.h; defined here so the link needs
 * no wbemuuid library). */
static const CLSID wbem_locator_clsid = {0x4590f811, 0x1d3a, 0x11d0,
                                         {0x89, 0x1f, 0x00, 0xaa, 0x00, 0x4b, 0x2e, 0x24}};
static const IID wbem_locator_iid = {0xdc12a687, 0x737f, 0x11cf,
                                     {0x88, 0x4d, 0x00, 0xaa, 0x00, 0x4b, 0x2e, 0x24}};

#define MIB (1024ull * 1024ull)
#define DESC_BUF 4096
#define NEW_VOLUME_WAIT_MS 15000

typedef struct w32 {
    SRWLOCK wmi_lock;
    IWbemServices *svc; /* ROOT\Microsoft\Windows\Storage, once connected */
    CO_MTA_USAGE_COOKIE mta;
    bool have_mta;
} w32;

/* --- errors ------------------------------------------------------------- */

static int win_status(DWORD err)
{
    switch (err) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
        return CP_E_NOT_FOUND;
    case ERROR_ALREADY_EXISTS:
    case ERROR_FILE_EXISTS:
        return CP_E_ALREADY_EXISTS;
    case ERROR_DIR_NOT_EMPTY:
    case ERROR_DIRECTORY:
    case ERROR_NOT_A_REPARSE_POINT:
    case ERROR_REPARSE_ATTRIBUTE_CONFLICT:
    case ERROR_DISK_FULL:
    case ERROR_NOT_READY:
        return CP_E_FAILED_PRECONDITION;
    case ERROR_ACCESS_DENIED:
    case ERROR_PRIVILEGE_NOT_HELD:
    case ERROR_WRITE_PROTECT:
        return CP_E_PERMISSION_DENIED;
    case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME:
    case ERROR_INVALID_PARAMETER:
        return CP_E_INVALID_ARGUMENT;
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_BUSY:
        return CP_E_UNAVAILABLE;
    case ERROR_NOT_SUPPORTED:
    case ERROR_CALL_NOT_IMPLEMENTED:
    case ERROR_INVALID_FUNCTION:
        return CP_E_UNIMPLEMENTED;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
        return CP_E_RESOURCE_EXHAUSTED;
    default:
        return CP_E_UNKNOWN;
    }
}

/* "<api> <object>: <system text> (error <n>)"; keeps the last error. */
static int win_error(cp_error *e, DWORD err, const char *api, const char *object)
{
    char text[256];
    cp_win_errtext(err, text, sizeof(text));
    int status = cp_error_set(e, win_status(err), "%s %s: %s (error %lu)", api, object, text,
                              (unsigned long)err);
    SetLastError(err);
    return status;
}

static int hr_error(cp_error *e, HRESULT hr, const char *what, const char *object)
{
    return cp_error_set(e, CP_E_UNKNOWN, "%s %s: HRESULT 0x%08lx", what, object,
                        (unsigned long)hr);
}

static int nomem(cp_error *e)
{
    return cp_error_set(e, CP_E_NOMEM, "storage: out of memory");
}

/* --- handles and IOCTLs ------------------------------------------------- */

/* CreateFileW (fileapi.h) on "\\.\PhysicalDriveN" ("Naming Files, Paths,
 * and Namespaces": physical disks). A missing disk is NOT_FOUND. */
static HANDLE open_disk(uint32_t number, DWORD access, cp_error *e)
{
    wchar_t path[40];
    swprintf(path, sizeof(path) / sizeof(path[0]), L"\\\\.\\PhysicalDrive%u", (unsigned)number);
    HANDLE h = CreateFileW(path, access, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                           0, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND)
            cp_error_set(e, CP_E_NOT_FOUND, "disk %u not found", (unsigned)number);
        else {
            char obj[32];
            snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
            win_error(e, err, "CreateFileW", obj);
        }
    }
    return h;
}

/* The volume device "\\?\Volume{guid}" (the ID without its trailing
 * backslash: "Naming a Volume"). */
static HANDLE open_volume(const char *id, DWORD access, cp_error *e)
{
    wchar_t path[CP_VOLUME_ID_LEN + 1];
    size_t n = strlen(id);
    if (n != CP_VOLUME_ID_LEN) {
        cp_error_set(e, CP_E_INVALID_ARGUMENT, "not a volume GUID path: %s", id);
        return INVALID_HANDLE_VALUE;
    }
    for (size_t i = 0; i + 1 < n; i++)
        path[i] = (wchar_t)(unsigned char)id[i];
    path[n - 1] = L'\0';
    HANDLE h = CreateFileW(path, access, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                           0, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND)
            cp_error_set(e, CP_E_NOT_FOUND, "volume %s not found", id);
        else
            win_error(e, err, "CreateFileW", id);
    }
    return h;
}

/* DeviceIoControl (ioapiset.h), synchronous. */
static int ioctl(HANDLE h, DWORD code, const char *name, const void *in, DWORD inlen, void *out,
                 DWORD outlen, DWORD *ret, const char *object, cp_error *e)
{
    DWORD n = 0;
    if (!DeviceIoControl(h, code, (void *)in, inlen, out, outlen, &n, NULL)) {
        DWORD err = GetLastError();
        return win_error(e, err, name, object);
    }
    if (ret != NULL)
        *ret = n;
    return CP_OK;
}

#define IOCTL(h, code, in, inlen, out, outlen, ret, obj, e)                                    \
    ioctl(h, code, #code, in, inlen, out, outlen, ret, obj, e)

/* IOCTL_DISK_GET_DRIVE_LAYOUT_EX ("IOCTL_DISK_GET_DRIVE_LAYOUT_EX IOCTL"):
 * grows the buffer while the driver says it is too small. Caller frees. */
static DRIVE_LAYOUT_INFORMATION_EX *get_layout(HANDLE h, const char *obj, cp_error *e)
{
    DWORD size = sizeof(DRIVE_LAYOUT_INFORMATION_EX) + 16 * sizeof(PARTITION_INFORMATION_EX);
    for (int tries = 0; tries < 8; tries++, size *= 2) {
        DRIVE_LAYOUT_INFORMATION_EX *l = calloc(1, size);
        if (l == NULL) {
            nomem(e);
            return NULL;
        }
        DWORD n;
        if (DeviceIoControl(h, IOCTL_DISK_GET_DRIVE_LAYOUT_EX, NULL, 0, l, size, &n, NULL))
            return l;
        DWORD err = GetLastError();
        free(l);
        if (err != ERROR_INSUFFICIENT_BUFFER && err != ERROR_MORE_DATA) {
            win_error(e, err, "IOCTL_DISK_GET_DRIVE_LAYOUT_EX", obj);
            return NULL;
        }
    }
    cp_error_set(e, CP_E_INTERNAL, "IOCTL_DISK_GET_DRIVE_LAYOUT_EX %s: layout too large", obj);
    return NULL;
}

static bool mbr_basic(BYTE type)
{
    /* "Disk Partition Types" (winioctl.h PARTITION_*): FAT and IFS (NTFS,
     * exFAT, ReFS) are what MSFT_Partition calls basic. */
    switch (type) {
    case PARTITION_FAT_12:
    case PARTITION_FAT_16:
    case PARTITION_HUGE:
    case PARTITION_IFS:
    case PARTITION_FAT32:
    case PARTITION_FAT32_XINT13:
    case PARTITION_XINT13:
        return true;
    default:
        return false;
    }
}

static bool used_entry(const DRIVE_LAYOUT_INFORMATION_EX *l, DWORD i)
{
    const PARTITION_INFORMATION_EX *p = &l->PartitionEntry[i];
    if (p->PartitionLength.QuadPart == 0)
        return false;
    return l->PartitionStyle != PARTITION_STYLE_MBR || p->Mbr.PartitionType != PARTITION_ENTRY_UNUSED;
}

static cp_part_kind part_kind(const DRIVE_LAYOUT_INFORMATION_EX *l, const PARTITION_INFORMATION_EX *p)
{
    if (l->PartitionStyle == PARTITION_STYLE_GPT) {
        if (IsEqualGUID(&p->Gpt.PartitionType, &basic_data_guid))
            return CP_PART_BASIC;
        if (IsEqualGUID(&p->Gpt.PartitionType, &esp_guid))
            return CP_PART_SYSTEM;
        if (IsEqualGUID(&p->Gpt.PartitionType, &msr_guid))
            return CP_PART_RESERVED;
        return CP_PART_OTHER;
    }
    if (p->Mbr.BootIndicator)
        return CP_PART_SYSTEM;
    return mbr_basic(p->Mbr.PartitionType) ? CP_PART_BASIC : CP_PART_OTHER;
}

/* End of the space partitions may use. A GPT disk keeps its backup table
 * at the end; when the disk grew since the table was written, the usable
 * end is where it will be once the layout is rewritten (grow_volume does):
 * the last MiB of the disk. */
static uint64_t usable_end(const DRIVE_LAYOUT_INFORMATION_EX *l, uint64_t disk_len)
{
    if (l->PartitionStyle == PARTITION_STYLE_GPT) {
        uint64_t end = (uint64_t)l->Gpt.StartingUsableOffset.QuadPart +
                       (uint64_t)l->Gpt.UsableLength.QuadPart;
        uint64_t grown = disk_len > MIB ? (disk_len - MIB) / MIB * MIB : 0;
        return grown > end ? grown : end;
    }
    return disk_len;
}

/* --- the boot disk ------------------------------------------------------ */

/* The disks under the volume holding %SystemRoot% (GetSystemWindowsDirectoryW,
 * GetVolumePathNameW, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS): MSFT_Disk.IsBoot.
 * Sets bit n of *mask for disk n < 64; *other for higher numbers. */
static void boot_disks(uint64_t *mask, uint32_t *first)
{
    *mask = 0;
    *first = UINT32_MAX;
    wchar_t win[MAX_PATH], root[MAX_PATH], vol[64];
    if (GetSystemWindowsDirectoryW(win, MAX_PATH) == 0 || !GetVolumePathNameW(win, root, MAX_PATH) ||
        !GetVolumeNameForVolumeMountPointW(root, vol, 64))
        return;
    size_t n = wcslen(vol);
    if (n > 0 && vol[n - 1] == L'\\')
        vol[n - 1] = L'\0';
    HANDLE h = CreateFileW(vol, 0, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return;
    union {
        VOLUME_DISK_EXTENTS x;
        BYTE b[sizeof(VOLUME_DISK_EXTENTS) + 31 * sizeof(DISK_EXTENT)];
    } u;
    DWORD ret;
    if (DeviceIoControl(h, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, NULL, 0, &u, sizeof(u), &ret,
                        NULL)) {
        for (DWORD i = 0; i < u.x.NumberOfDiskExtents && i < 32; i++) {
            DWORD d = u.x.Extents[i].DiskNumber;
            if (d < 64)
                *mask |= 1ull << d;
            else if (*first == UINT32_MAX)
                *first = d;
        }
    }
    CloseHandle(h);
}

/* --- disks -------------------------------------------------------------- */

static void *walloc(const cp_storage_alloc *a, size_t n)
{
    return a->alloc(a->actx, n > 0 ? n : 1);
}

/* IOCTL_STORAGE_QUERY_PROPERTY ("IOCTL_STORAGE_QUERY_PROPERTY IOCTL",
 * "STORAGE_PROPERTY_QUERY structure") for one property, standard query.
 * The raw descriptor is copied into caller memory; a device that does not
 * answer leaves *out NULL (not an error: upstream reports "" then). */
static void query_property(HANDLE h, STORAGE_PROPERTY_ID id, const cp_storage_alloc *a,
                           const uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    STORAGE_PROPERTY_QUERY q;
    memset(&q, 0, sizeof(q));
    q.PropertyId = id;
    q.QueryType = PropertyStandardQuery;
    uint8_t *buf = malloc(DESC_BUF);
    DWORD n = 0;
    if (buf == NULL)
        return;
    if (DeviceIoControl(h, IOCTL_STORAGE_QUERY_PROPERTY, &q, sizeof(q), buf, DESC_BUF, &n, NULL) &&
        n >= sizeof(STORAGE_DESCRIPTOR_HEADER)) {
        /* The header's Size is what the device has; n what we got. */
        DWORD size = ((STORAGE_DESCRIPTOR_HEADER *)buf)->Size;
        if (size > n)
            size = n;
        uint8_t *copy = walloc(a, size);
        if (copy != NULL) {
            memcpy(copy, buf, size);
            *out = copy;
            *len = size;
        }
    }
    free(buf);
}

/* Fills one disk's facts from its handle. */
static int describe_disk(HANDLE h, uint32_t number, uint64_t boot_mask, uint32_t boot_high,
                         const cp_storage_alloc *a, cp_disk_info *o, cp_error *e)
{
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    memset(o, 0, sizeof(*o));
    o->number = number;
    o->location = "";

    GET_LENGTH_INFORMATION len; /* "IOCTL_DISK_GET_LENGTH_INFO IOCTL" */
    int rc = IOCTL(h, IOCTL_DISK_GET_LENGTH_INFO, NULL, 0, &len, sizeof(len), NULL, obj, e);
    if (rc != CP_OK)
        return rc;
    o->size = (uint64_t)len.Length.QuadPart;

    /* "IOCTL_DISK_GET_DISK_ATTRIBUTES IOCTL": a disk that cannot say is
     * online (the attribute exists since Windows 7). */
    cp_get_disk_attributes attrs = {.Version = sizeof(attrs)};
    DWORD n;
    o->online = !DeviceIoControl(h, IOCTL_DISK_GET_DISK_ATTRIBUTES, NULL, 0, &attrs, sizeof(attrs),
                                 &n, NULL) ||
                (attrs.Attributes & DISK_ATTRIBUTE_OFFLINE) == 0;

    DRIVE_LAYOUT_INFORMATION_EX *l = get_layout(h, obj, e);
    if (l == NULL)
        return e->status;
    o->style = l->PartitionStyle == PARTITION_STYLE_GPT   ? CP_PART_STYLE_GPT
               : l->PartitionStyle == PARTITION_STYLE_MBR ? CP_PART_STYLE_MBR
                                                          : CP_PART_STYLE_RAW;
    for (DWORD i = 0; i < l->PartitionCount; i++)
        if (used_entry(l, i) && part_kind(l, &l->PartitionEntry[i]) == CP_PART_SYSTEM)
            o->is_system = true; /* MSFT_Disk.IsSystem: holds the system partition */
    free(l);
    o->is_boot = number < 64 ? (boot_mask >> number & 1) != 0 : number == boot_high;

    query_property(h, StorageDeviceIdProperty, a, &o->id_desc, &o->id_desc_len);
    query_property(h, StorageDeviceProperty, a, &o->dev_desc, &o->dev_desc_len);

    /* "IOCTL_SCSI_GET_ADDRESS IOCTL" (ntddscsi.h): disks behind a storport
     * miniport (SCSI, SAS, iSCSI, NVMe, virtual) have one. */
    SCSI_ADDRESS sa;
    memset(&sa, 0, sizeof(sa));
    if (DeviceIoControl(h, IOCTL_SCSI_GET_ADDRESS, NULL, 0, &sa, sizeof(sa), &n, NULL)) {
        unsigned port, path, target, lun;
        char loc[128];
        if (cp_scsi_address_read((const uint8_t *)&sa, n, &port, &path, &target, &lun)) {
            cp_location_format("", port, path, target, lun, loc, sizeof(loc));
            char *copy = walloc(a, strlen(loc) + 1);
            if (copy == NULL)
                return nomem(e);
            strcpy(copy, loc);
            o->location = copy;
        }
    }
    return CP_OK;
}

static int w32_get_disk(void *ctx, uint32_t number, const cp_storage_alloc *a, cp_disk_info *out,
                        cp_error *e)
{
    (void)ctx;
    uint64_t mask;
    uint32_t high;
    boot_disks(&mask, &high);
    HANDLE h = open_disk(number, GENERIC_READ, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    int rc = describe_disk(h, number, mask, high, a, out, e);
    CloseHandle(h);
    return rc;
}

/* QueryDosDeviceW with no name ("QueryDosDeviceW function": lists every
 * MS-DOS device name): the PhysicalDriveN links are the disks. */
static int w32_list_disks(void *ctx, const cp_storage_alloc *a, cp_disk_info **disks, size_t *n,
                          cp_error *e)
{
    DWORD cap = 65536;
    wchar_t *names = NULL;
    for (;;) {
        names = malloc(cap * sizeof(wchar_t));
        if (names == NULL)
            return nomem(e);
        if (QueryDosDeviceW(NULL, names, cap) != 0)
            break;
        DWORD err = GetLastError();
        free(names);
        if (err != ERROR_INSUFFICIENT_BUFFER || cap >= 16u * 1024 * 1024)
            return win_error(e, err, "QueryDosDeviceW", "(all devices)");
        cap *= 4;
    }
    size_t count = 0;
    for (const wchar_t *p = names; *p != L'\0'; p += wcslen(p) + 1)
        count += wcsncmp(p, L"PhysicalDrive", 13) == 0;
    cp_disk_info *out = walloc(a, count * sizeof(*out));
    int rc = out == NULL ? nomem(e) : CP_OK;
    size_t k = 0;
    uint64_t mask;
    uint32_t high;
    boot_disks(&mask, &high);
    for (const wchar_t *p = names; rc == CP_OK && *p != L'\0'; p += wcslen(p) + 1) {
        if (wcsncmp(p, L"PhysicalDrive", 13) != 0 || p[13] < L'0' || p[13] > L'9')
            continue;
        uint32_t number = (uint32_t)wcstoul(p + 13, NULL, 10);
        cp_error e2;
        HANDLE h = open_disk(number, GENERIC_READ, &e2);
        if (h == INVALID_HANDLE_VALUE)
            continue; /* removed meanwhile */
        rc = describe_disk(h, number, mask, high, a, &out[k], e);
        CloseHandle(h);
        if (rc == CP_OK)
            k++;
    }
    free(names);
    (void)ctx;
    if (rc != CP_OK)
        return rc;
    *disks = out;
    *n = k;
    return CP_OK;
}

/* "IOCTL_DISK_SET_DISK_ATTRIBUTES IOCTL": DISK_ATTRIBUTE_OFFLINE, persisted,
 * then "IOCTL_DISK_UPDATE_PROPERTIES IOCTL" so the partition manager sees it. */
static int w32_set_disk_online(void *ctx, uint32_t number, bool online, cp_error *e)
{
    (void)ctx;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = open_disk(number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    cp_set_disk_attributes s;
    memset(&s, 0, sizeof(s));
    s.Version = sizeof(s);
    s.Persist = TRUE;
    s.Attributes = online ? 0 : DISK_ATTRIBUTE_OFFLINE;
    s.AttributesMask = DISK_ATTRIBUTE_OFFLINE;
    int rc = IOCTL(h, IOCTL_DISK_SET_DISK_ATTRIBUTES, &s, sizeof(s), NULL, 0, NULL, obj, e);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
    CloseHandle(h);
    return rc;
}

/* --- WMI (Format and rescan only) ---------------------------------------- */

/* IWbemLocator::ConnectServer to ROOT\Microsoft\Windows\Storage ("Creating a
 * WMI Application Using C++", steps 3-5), once; CoSetProxyBlanket at
 * impersonation level. CoIncrementMTAUsage ("CoIncrementMTAUsage function")
 * keeps the multithreaded apartment alive, so any pool thread may call the
 * proxy (it is in the implicit MTA). */
static int wmi(w32 *w, IWbemServices **out, cp_error *e)
{
    AcquireSRWLockExclusive(&w->wmi_lock);
    HRESULT hr = S_OK;
    if (w->svc == NULL) {
        if (!w->have_mta && SUCCEEDED(hr = CoIncrementMTAUsage(&w->mta)))
            w->have_mta = true;
        IWbemLocator *loc = NULL;
        if (SUCCEEDED(hr))
            hr = CoCreateInstance(&wbem_locator_clsid, NULL, CLSCTX_INPROC_SERVER,
                                  &wbem_locator_iid, (void **)&loc);
        BSTR ns = SUCCEEDED(hr) ? SysAllocString(L"ROOT\\Microsoft\\Windows\\Storage") : NULL;
        if (SUCCEEDED(hr) && ns == NULL)
            hr = E_OUTOFMEMORY;
        if (SUCCEEDED(hr))
            hr = IWbemLocator_ConnectServer(loc, ns, NULL, NULL, NULL, 0, NULL, NULL, &w->svc);
        if (SUCCEEDED(hr))
            hr = CoSetProxyBlanket((IUnknown *)w->svc, RPC_C_AUTHN_WINNT, RPC_C_AUTHZ_NONE, NULL,
                                   RPC_C_AUTHN_LEVEL_CALL, RPC_C_IMP_LEVEL_IMPERSONATE, NULL,
                                   EOAC_NONE);
        if (FAILED(hr) && w->svc != NULL) {
            IWbemServices_Release(w->svc);
            w->svc = NULL;
        }
        SysFreeString(ns);
        if (loc != NULL)
            IWbemLocator_Release(loc);
    }
    if (w->svc != NULL)
        IWbemServices_AddRef(w->svc);
    *out = w->svc;
    ReleaseSRWLockExclusive(&w->wmi_lock);
    if (*out == NULL)
        return hr_error(e, hr, "WMI: connecting to", "ROOT\\Microsoft\\Windows\\Storage");
    return CP_OK;
}

/* Drops the cached connection after a transport failure, so the next call
 * connects again (winmgmt restarted). */
static void wmi_reset(w32 *w, HRESULT hr)
{
    if (hr != (HRESULT)RPC_E_DISCONNECTED && hr != (HRESULT)WBEM_E_TRANSPORT_FAILURE &&
        hr != (HRESULT)RPC_S_SERVER_UNAVAILABLE && hr != HRESULT_FROM_WIN32(RPC_S_SERVER_UNAVAILABLE))
        return;
    AcquireSRWLockExclusive(&w->wmi_lock);
    if (w->svc != NULL) {
        IWbemServices_Release(w->svc);
        w->svc = NULL;
    }
    ReleaseSRWLockExclusive(&w->wmi_lock);
}

/* The "ReturnValue" of a method's out-parameters (uint32). */
static HRESULT return_value(IWbemClassObject *out, ULONG *rv)
{
    VARIANT v;
    VariantInit(&v);
    HRESULT hr = IWbemClassObject_Get(out, L"ReturnValue", 0, &v, NULL, NULL);
    if (SUCCEEDED(hr)) {
        if (V_VT(&v) == VT_I4 || V_VT(&v) == VT_UI4)
            *rv = (ULONG)V_I4(&v);
        else
            hr = E_UNEXPECTED;
    }
    VariantClear(&v);
    return hr;
}

/* MSFT_StorageSetting.UpdateHostStorageCache, a static method ("Update-
 * HostStorageCache"; "MSFT_StorageSetting class"): Windows documents no
 * IOCTL that refreshes the storage management cache. */
static int w32_rescan(void *ctx, cp_error *e)
{
    w32 *w = ctx;
    IWbemServices *svc;
    int rc = wmi(w, &svc, e);
    if (rc != CP_OK)
        return rc;
    BSTR cls = SysAllocString(L"MSFT_StorageSetting");
    BSTR method = SysAllocString(L"UpdateHostStorageCache");
    IWbemClassObject *out = NULL;
    HRESULT hr = cls == NULL || method == NULL
                     ? E_OUTOFMEMORY
                     : IWbemServices_ExecMethod(svc, cls, method, 0, NULL, NULL, &out, NULL);
    ULONG rv = 0;
    if (SUCCEEDED(hr))
        hr = return_value(out, &rv);
    if (FAILED(hr)) {
        wmi_reset(w, hr);
        rc = hr_error(e, hr, "WMI: MSFT_StorageSetting.UpdateHostStorageCache", "");
    } else if (rv != 0) {
        rc = cp_error_set(e, CP_E_UNKNOWN,
                          "WMI: MSFT_StorageSetting.UpdateHostStorageCache returned %lu",
                          (unsigned long)rv);
    }
    if (out != NULL)
        IWbemClassObject_Release(out);
    SysFreeString(cls);
    SysFreeString(method);
    IWbemServices_Release(svc);
    return rc;
}

/* Sets one input parameter of a WMI method. */
static HRESULT put_param(IWbemClassObject *in, const wchar_t *name, VARIANT *v)
{
    HRESULT hr = IWbemClassObject_Put(in, name, 0, v, 0);
    VariantClear(v);
    return hr;
}

/* MSFT_Volume.Format(FileSystem "NTFS", FileSystemLabel "", Full false,
 * Force true) on the volume whose UniqueId is id ("Format method of the
 * MSFT_Volume class"): Windows documents no other way to format. The ID
 * was validated as "\\?\Volume{hex-guid}\", so it can be quoted into WQL
 * safely (backslashes doubled: "WQL-Supported Data Types", strings). */
static int w32_format_volume(void *ctx, const char *id, cp_error *e)
{
    w32 *w = ctx;
    wchar_t query[160];
    wchar_t wid[CP_VOLUME_ID_LEN * 2 + 1];
    size_t k = 0;
    for (const char *p = id; *p != '\0' && k + 2 < sizeof(wid) / sizeof(wid[0]); p++) {
        if (*p == '\\')
            wid[k++] = L'\\';
        wid[k++] = (wchar_t)(unsigned char)*p;
    }
    wid[k] = L'\0';
    swprintf(query, sizeof(query) / sizeof(query[0]),
             L"SELECT __PATH FROM MSFT_Volume WHERE UniqueId = '%ls'", wid);

    IWbemServices *svc;
    int rc = wmi(w, &svc, e);
    if (rc != CP_OK)
        return rc;
    BSTR lang = SysAllocString(L"WQL"), q = SysAllocString(query);
    BSTR cls = SysAllocString(L"MSFT_Volume"), method = SysAllocString(L"Format");
    IEnumWbemClassObject *en = NULL;
    IWbemClassObject *vol = NULL, *def = NULL, *in = NULL, *in_def = NULL, *out = NULL;
    VARIANT path;
    VariantInit(&path);
    ULONG got = 0, rv = 0;
    HRESULT hr = lang && q && cls && method ? S_OK : E_OUTOFMEMORY;
    if (SUCCEEDED(hr))
        hr = IWbemServices_ExecQuery(svc, lang, q, WBEM_FLAG_FORWARD_ONLY | WBEM_FLAG_RETURN_IMMEDIATELY,
                                     NULL, &en);
    if (SUCCEEDED(hr))
        hr = IEnumWbemClassObject_Next(en, WBEM_INFINITE, 1, &vol, &got);
    if (SUCCEEDED(hr) && got == 0) {
        rc = cp_error_set(e, CP_E_NOT_FOUND, "volume %s not found (MSFT_Volume)", id);
        goto out;
    }
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_Get(vol, L"__PATH", 0, &path, NULL, NULL);
    if (SUCCEEDED(hr) && V_VT(&path) != VT_BSTR)
        hr = E_UNEXPECTED;
    if (SUCCEEDED(hr))
        hr = IWbemServices_GetObject(svc, cls, 0, NULL, &def, NULL);
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_GetMethod(def, L"Format", 0, &in_def, NULL);
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_SpawnInstance(in_def, 0, &in);
    VARIANT v;
    if (SUCCEEDED(hr)) {
        VariantInit(&v);
        V_VT(&v) = VT_BSTR;
        V_BSTR(&v) = SysAllocString(L"NTFS");
        hr = put_param(in, L"FileSystem", &v);
    }
    if (SUCCEEDED(hr)) {
        VariantInit(&v);
        V_VT(&v) = VT_BSTR;
        V_BSTR(&v) = SysAllocString(L"");
        hr = put_param(in, L"FileSystemLabel", &v);
    }
    if (SUCCEEDED(hr)) {
        VariantInit(&v);
        V_VT(&v) = VT_BOOL;
        V_BOOL(&v) = VARIANT_FALSE;
        hr = put_param(in, L"Full", &v);
    }
    if (SUCCEEDED(hr)) {
        VariantInit(&v);
        V_VT(&v) = VT_BOOL;
        V_BOOL(&v) = VARIANT_TRUE;
        hr = put_param(in, L"Force", &v);
    }
    if (SUCCEEDED(hr))
        hr = IWbemServices_ExecMethod(svc, V_BSTR(&path), method, 0, NULL, in, &out, NULL);
    if (SUCCEEDED(hr))
        hr = return_value(out, &rv);
    if (FAILED(hr)) {
        wmi_reset(w, hr);
        rc = hr_error(e, hr, "WMI: MSFT_Volume.Format", id);
    } else if (rv != 0) {
        rc = cp_error_set(e, CP_E_UNKNOWN, "WMI: MSFT_Volume.Format %s returned %lu", id,
                          (unsigned long)rv);
    }
out:
    VariantClear(&path);
    if (out != NULL)
        IWbemClassObject_Release(out);
    if (in != NULL)
        IWbemClassObject_Release(in);
    if (in_def != NULL)
        IWbemClassObject_Release(in_def);
    if (def != NULL)
        IWbemClassObject_Release(def);
    if (vol != NULL)
        IWbemClassObject_Release(vol);
    if (en != NULL)
        IEnumWbemClassObject_Release(en);
    SysFreeString(lang);
    SysFreeString(q);
    SysFreeString(cls);
    SysFreeString(method);
    IWbemServices_Release(svc);
    return rc;
}

/* --- partitions ---------------------------------------------------------- */

static int need_online(HANDLE h, uint32_t number, cp_error *e)
{
    cp_get_disk_attributes attrs = {.Version = sizeof(attrs)};
    DWORD n;
    if (DeviceIoControl(h, IOCTL_DISK_GET_DISK_ATTRIBUTES, NULL, 0, &attrs, sizeof(attrs), &n, NULL) &&
        (attrs.Attributes & DISK_ATTRIBUTE_OFFLINE) != 0)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is offline", (unsigned)number);
    return CP_OK;
}

/* "IOCTL_DISK_CREATE_DISK IOCTL" with a GPT CREATE_DISK (a new disk GUID
 * from CoCreateGuid, 128 entries), then IOCTL_DISK_UPDATE_PROPERTIES. */
static int w32_init_gpt(void *ctx, uint32_t number, cp_error *e)
{
    (void)ctx;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = open_disk(number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    int rc = need_online(h, number, e);
    DRIVE_LAYOUT_INFORMATION_EX *l = rc == CP_OK ? get_layout(h, obj, e) : NULL;
    if (rc == CP_OK && l == NULL)
        rc = e->status;
    if (rc == CP_OK && l->PartitionStyle != PARTITION_STYLE_RAW)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is already initialized",
                          (unsigned)number);
    free(l);
    CREATE_DISK cd;
    memset(&cd, 0, sizeof(cd));
    cd.PartitionStyle = PARTITION_STYLE_GPT;
    cd.Gpt.MaxPartitionCount = 128;
    HRESULT hr = rc == CP_OK ? CoCreateGuid(&cd.Gpt.DiskId) : S_OK;
    if (FAILED(hr))
        rc = hr_error(e, hr, "CoCreateGuid", obj);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_CREATE_DISK, &cd, sizeof(cd), NULL, 0, NULL, obj, e);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
    CloseHandle(h);
    return rc;
}

static int w32_list_partitions(void *ctx, uint32_t number, const cp_storage_alloc *a,
                               cp_partition_info **parts, size_t *n, cp_error *e)
{
    (void)ctx;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = open_disk(number, GENERIC_READ, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    DRIVE_LAYOUT_INFORMATION_EX *l = get_layout(h, obj, e);
    CloseHandle(h);
    if (l == NULL)
        return e->status;
    cp_partition_info *out = walloc(a, l->PartitionCount * sizeof(*out));
    if (out == NULL) {
        free(l);
        return nomem(e);
    }
    size_t k = 0;
    for (DWORD i = 0; i < l->PartitionCount; i++) {
        if (!used_entry(l, i))
            continue;
        const PARTITION_INFORMATION_EX *p = &l->PartitionEntry[i];
        out[k].number = p->PartitionNumber;
        out[k].offset = (uint64_t)p->StartingOffset.QuadPart;
        out[k].size = (uint64_t)p->PartitionLength.QuadPart;
        out[k].kind = part_kind(l, p);
        k++;
    }
    free(l);
    *parts = out;
    *n = k;
    return CP_OK;
}

static uint32_t sector_size(HANDLE h)
{
    DISK_GEOMETRY g; /* "IOCTL_DISK_GET_DRIVE_GEOMETRY IOCTL" */
    DWORD n;
    if (DeviceIoControl(h, IOCTL_DISK_GET_DRIVE_GEOMETRY, NULL, 0, &g, sizeof(g), &n, NULL) &&
        g.BytesPerSector >= 512)
        return g.BytesPerSector;
    return 512;
}

/* Does any volume sit on (disk, partition)? (partition 0: any) */
static int volumes_on(uint32_t disk, uint32_t partition, const cp_storage_alloc *a, char ***ids,
                      size_t *n, cp_error *e);

static void *heap_alloc(void *actx, size_t n)
{
    (void)actx;
    return calloc(1, n);
}

/* "IOCTL_DISK_SET_DRIVE_LAYOUT_EX IOCTL": the current layout plus one basic
 * data partition from the first 1 MiB boundary after the last partition to
 * the end of usable space (GPT: PARTITION_BASIC_DATA_GUID with
 * GPT_BASIC_DATA_ATTRIBUTE_NO_DRIVE_LETTER, as CreatePartition with
 * AssignDriveLetter false; MBR: a primary IFS partition). Then
 * IOCTL_DISK_UPDATE_PROPERTIES, and a wait until the volume device exists,
 * so that ListVolumesOnDisk right after sees it (upstream refreshes the
 * disk object for the same reason). */
static int w32_create_basic_partition(void *ctx, uint32_t number, cp_error *e)
{
    (void)ctx;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = open_disk(number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    DRIVE_LAYOUT_INFORMATION_EX *l = NULL, *nl = NULL;
    GET_LENGTH_INFORMATION len;
    int rc = need_online(h, number, e);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_GET_LENGTH_INFO, NULL, 0, &len, sizeof(len), NULL, obj, e);
    if (rc == CP_OK && (l = get_layout(h, obj, e)) == NULL)
        rc = e->status;
    if (rc == CP_OK && l->PartitionStyle == PARTITION_STYLE_RAW)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is not initialized",
                          (unsigned)number);
    if (rc != CP_OK)
        goto out;

    uint32_t sector = sector_size(h);
    uint64_t start = l->PartitionStyle == PARTITION_STYLE_GPT
                         ? (uint64_t)l->Gpt.StartingUsableOffset.QuadPart
                         : MIB;
    DWORD slot = l->PartitionCount, max_num = 0;
    for (DWORD i = 0; i < l->PartitionCount; i++) {
        const PARTITION_INFORMATION_EX *p = &l->PartitionEntry[i];
        if (!used_entry(l, i)) {
            if (l->PartitionStyle == PARTITION_STYLE_MBR && i < 4 && slot == l->PartitionCount)
                slot = i;
            continue;
        }
        uint64_t end = (uint64_t)p->StartingOffset.QuadPart + (uint64_t)p->PartitionLength.QuadPart;
        if (end > start)
            start = end;
        if (p->PartitionNumber > max_num)
            max_num = p->PartitionNumber;
    }
    start = (start + MIB - 1) / MIB * MIB;
    uint64_t end = (uint64_t)usable_end(l, (uint64_t)len.Length.QuadPart) / sector * sector;
    if (end <= start || end - start < MIB) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "no free space left on disk %u",
                          (unsigned)number);
        goto out;
    }
    if (l->PartitionStyle == PARTITION_STYLE_MBR && slot >= 4) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                          "disk %u has no free primary partition entry", (unsigned)number);
        goto out;
    }
    DWORD count = l->PartitionStyle == PARTITION_STYLE_GPT ? l->PartitionCount + 1 : l->PartitionCount;
    if (l->PartitionStyle == PARTITION_STYLE_MBR && count < 4)
        count = 4;
    size_t size = sizeof(DRIVE_LAYOUT_INFORMATION_EX) + count * sizeof(PARTITION_INFORMATION_EX);
    if ((nl = calloc(1, size)) == NULL) {
        rc = nomem(e);
        goto out;
    }
    memcpy(nl, l, sizeof(DRIVE_LAYOUT_INFORMATION_EX) - sizeof(PARTITION_INFORMATION_EX));
    for (DWORD i = 0; i < l->PartitionCount; i++)
        nl->PartitionEntry[i] = l->PartitionEntry[i];
    nl->PartitionCount = count;
    if (l->PartitionStyle == PARTITION_STYLE_GPT) {
        slot = l->PartitionCount;
        /* a GPT disk grown since its table was written: the usable area
         * follows the new end once the layout is rewritten */
        if (end > (uint64_t)l->Gpt.StartingUsableOffset.QuadPart)
            nl->Gpt.UsableLength.QuadPart = (LONGLONG)(end - (uint64_t)l->Gpt.StartingUsableOffset.QuadPart);
    }
    PARTITION_INFORMATION_EX *np = &nl->PartitionEntry[slot];
    memset(np, 0, sizeof(*np));
    np->PartitionStyle = l->PartitionStyle;
    np->StartingOffset.QuadPart = (LONGLONG)start;
    np->PartitionLength.QuadPart = (LONGLONG)(end - start);
    np->PartitionNumber = max_num + 1;
    np->RewritePartition = TRUE;
    if (l->PartitionStyle == PARTITION_STYLE_GPT) {
        np->Gpt.PartitionType = basic_data_guid;
        HRESULT hr = CoCreateGuid(&np->Gpt.PartitionId);
        if (FAILED(hr)) {
            rc = hr_error(e, hr, "CoCreateGuid", obj);
            goto out;
        }
        np->Gpt.Attributes = GPT_BASIC_DATA_ATTRIBUTE_NO_DRIVE_LETTER;
        wcscpy(np->Gpt.Name, L"Basic data partition");
    } else {
        np->Mbr.PartitionType = PARTITION_IFS;
        np->Mbr.RecognizedPartition = TRUE;
        np->Mbr.HiddenSectors = (DWORD)(start / sector);
        for (DWORD i = 0; i < count; i++)
            nl->PartitionEntry[i].RewritePartition = TRUE;
    }
    rc = IOCTL(h, IOCTL_DISK_SET_DRIVE_LAYOUT_EX, nl, (DWORD)size, NULL, 0, NULL, obj, e);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
    if (rc == CP_OK) {
        /* The volume device appears asynchronously (PnP). */
        cp_storage_alloc ha = {heap_alloc, NULL};
        ULONGLONG until = GetTickCount64() + NEW_VOLUME_WAIT_MS;
        for (;;) {
            char **ids = NULL;
            size_t n = 0;
            cp_error e2;
            bool seen = volumes_on(number, max_num + 1, &ha, &ids, &n, &e2) == CP_OK && n > 0;
            for (size_t i = 0; ids != NULL && i < n; i++)
                free(ids[i]);
            free(ids);
            if (seen)
                break;
            if (GetTickCount64() > until) {
                rc = cp_error_set(e, CP_E_DEADLINE_EXCEEDED,
                                  "disk %u: partition %lu created but its volume did not appear "
                                  "within %d s",
                                  (unsigned)number, (unsigned long)(max_num + 1),
                                  NEW_VOLUME_WAIT_MS / 1000);
                break;
            }
            Sleep(100);
        }
    }
out:
    free(nl);
    free(l);
    CloseHandle(h);
    return rc;
}

/* --- volumes ------------------------------------------------------------- */

/* IOCTL_STORAGE_GET_DEVICE_NUMBER on a volume handle ("IOCTL_STORAGE_GET_
 * DEVICE_NUMBER IOCTL"): for a basic volume, its disk and partition. */
static bool volume_place(HANDLE v, uint32_t *disk, uint32_t *partition)
{
    STORAGE_DEVICE_NUMBER sdn;
    DWORD n;
    if (!DeviceIoControl(v, IOCTL_STORAGE_GET_DEVICE_NUMBER, NULL, 0, &sdn, sizeof(sdn), &n, NULL))
        return false;
    *disk = sdn.DeviceNumber;
    *partition = sdn.PartitionNumber;
    return true;
}

/* FindFirstVolumeW / FindNextVolumeW ("Enumerating Volumes"). */
static int volumes_on(uint32_t disk, uint32_t partition, const cp_storage_alloc *a, char ***ids,
                      size_t *n, cp_error *e)
{
    wchar_t name[64];
    HANDLE f = FindFirstVolumeW(name, 64);
    if (f == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        return win_error(e, err, "FindFirstVolumeW", "(all volumes)");
    }
    size_t cap = 16, k = 0;
    char **out = walloc(a, cap * sizeof(*out));
    int rc = out == NULL ? nomem(e) : CP_OK;
    do {
        char id[CP_VOLUME_ID_LEN + 1];
        char *u8 = cp_win_wide_to_utf8(name);
        cp_error e2;
        bool ok = u8 != NULL && cp_volume_id_parse(u8, id, NULL, &e2) == CP_OK;
        free(u8);
        if (!ok || rc != CP_OK)
            continue;
        HANDLE v = open_volume(id, 0, &e2);
        uint32_t d = 0, p = 0;
        bool placed = v != INVALID_HANDLE_VALUE && volume_place(v, &d, &p);
        if (v != INVALID_HANDLE_VALUE)
            CloseHandle(v);
        if (!placed || d != disk || (partition != 0 && p != partition))
            continue;
        if (k == cap) {
            char **bigger = walloc(a, cap * 2 * sizeof(*out));
            if (bigger == NULL) {
                rc = nomem(e);
                continue;
            }
            memcpy(bigger, out, cap * sizeof(*out));
            if (a->alloc == heap_alloc)
                free(out);
            out = bigger;
            cap *= 2;
        }
        if ((out[k] = walloc(a, sizeof(id))) == NULL) {
            rc = nomem(e);
            continue;
        }
        memcpy(out[k++], id, sizeof(id));
    } while (FindNextVolumeW(f, name, 64));
    DWORD err = GetLastError();
    FindVolumeClose(f);
    if (rc == CP_OK && err != ERROR_NO_MORE_FILES)
        rc = win_error(e, err, "FindNextVolumeW", "(all volumes)");
    if (rc != CP_OK)
        return rc;
    *ids = out;
    *n = k;
    return CP_OK;
}

static int w32_list_volumes(void *ctx, uint32_t disk, uint32_t partition,
                            const cp_storage_alloc *a, char ***ids, size_t *n, cp_error *e)
{
    (void)ctx;
    HANDLE h = open_disk(disk, 0, e); /* NOT_FOUND for an unknown disk */
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    CloseHandle(h);
    return volumes_on(disk, partition, a, ids, n, e);
}

/* UTF-16 "\\?\Volume{...}\" of an ID. */
static void wide_id(const char *id, wchar_t out[CP_VOLUME_ID_LEN + 1])
{
    size_t i = 0;
    for (; id[i] != '\0' && i < CP_VOLUME_ID_LEN; i++)
        out[i] = (wchar_t)(unsigned char)id[i];
    out[i] = L'\0';
}

/* GetVolumeInformationW ("GetVolumeInformationW function": file-system
 * name; a volume without one fails with ERROR_UNRECOGNIZED_VOLUME or says
 * "RAW"), GetDiskFreeSpaceExW (size and free bytes, as MSFT_Volume.Size
 * and SizeRemaining), and the partition's size and room to grow from the
 * disk's layout (MSFT_Partition.Size, GetSupportedSize). */
static int w32_get_volume(void *ctx, const char *id, cp_volume_info *o, cp_error *e)
{
    (void)ctx;
    memset(o, 0, sizeof(*o));
    HANDLE v = open_volume(id, 0, e);
    if (v == INVALID_HANDLE_VALUE)
        return e->status;
    bool placed = volume_place(v, &o->disk_number, &o->partition_number);
    CloseHandle(v);
    if (!placed)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "volume %s is not a basic volume on one partition", id);
    wchar_t wid[CP_VOLUME_ID_LEN + 1], fs[MAX_PATH + 1];
    wide_id(id, wid);
    if (GetVolumeInformationW(wid, NULL, 0, NULL, NULL, NULL, fs, MAX_PATH + 1)) {
        char *u8 = cp_win_wide_to_utf8(fs);
        if (u8 != NULL && strcmp(u8, "RAW") != 0 && u8[0] != '\0') {
            snprintf(o->fs, sizeof(o->fs), "%s", u8);
            o->formatted = true;
        }
        free(u8);
    } else {
        DWORD err = GetLastError();
        if (err != ERROR_UNRECOGNIZED_VOLUME)
            return win_error(e, err, "GetVolumeInformationW", id);
    }

    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)o->disk_number);
    HANDLE h = open_disk(o->disk_number, GENERIC_READ, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    GET_LENGTH_INFORMATION len;
    DRIVE_LAYOUT_INFORMATION_EX *l = NULL;
    int rc = IOCTL(h, IOCTL_DISK_GET_LENGTH_INFO, NULL, 0, &len, sizeof(len), NULL, obj, e);
    if (rc == CP_OK && (l = get_layout(h, obj, e)) == NULL)
        rc = e->status;
    CloseHandle(h);
    if (rc != CP_OK)
        return rc;
    const PARTITION_INFORMATION_EX *me = NULL;
    for (DWORD i = 0; i < l->PartitionCount; i++)
        if (used_entry(l, i) && l->PartitionEntry[i].PartitionNumber == o->partition_number)
            me = &l->PartitionEntry[i];
    if (me == NULL) {
        free(l);
        return cp_error_set(e, CP_E_NOT_FOUND, "volume %s: partition %u not in disk %u's layout",
                            id, (unsigned)o->partition_number, (unsigned)o->disk_number);
    }
    uint64_t off = (uint64_t)me->StartingOffset.QuadPart;
    uint64_t limit = usable_end(l, (uint64_t)len.Length.QuadPart);
    for (DWORD i = 0; i < l->PartitionCount; i++) {
        uint64_t s = (uint64_t)l->PartitionEntry[i].StartingOffset.QuadPart;
        if (used_entry(l, i) && s > off && s < limit)
            limit = s;
    }
    o->partition_size = (uint64_t)me->PartitionLength.QuadPart;
    o->partition_max = limit > off ? limit - off : o->partition_size;
    if (o->partition_max < o->partition_size)
        o->partition_max = o->partition_size;
    free(l);

    if (o->formatted) {
        ULARGE_INTEGER avail, total, free_bytes;
        if (!GetDiskFreeSpaceExW(wid, &avail, &total, &free_bytes)) {
            DWORD err = GetLastError();
            return win_error(e, err, "GetDiskFreeSpaceExW", id);
        }
        o->size = total.QuadPart;
        o->size_remaining = free_bytes.QuadPart;
    } else {
        o->size = o->partition_size; /* MSFT_Volume of a RAW volume: Size, no SizeRemaining */
    }
    return CP_OK;
}

/* "IOCTL_DISK_GROW_PARTITION IOCTL" by the missing bytes, after
 * IOCTL_DISK_UPDATE_DRIVE_SIZE (the disk may have grown) and, on a GPT disk
 * whose backup table still sits at the old end, a rewrite of the same
 * layout (IOCTL_DISK_SET_DRIVE_LAYOUT_EX) that moves it to the new end;
 * then "FSCTL_EXTEND_VOLUME IOCTL" with the new size in sectors, as the
 * file system needs to be told (skipped for a RAW volume). */
static int w32_grow_volume(void *ctx, const char *id, uint64_t size, cp_error *e)
{
    cp_volume_info v;
    int rc = w32_get_volume(ctx, id, &v, e);
    if (rc != CP_OK)
        return rc;
    if (size <= v.partition_size)
        return CP_OK;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)v.disk_number);
    HANDLE h = open_disk(v.disk_number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    DISK_GEOMETRY g;
    rc = IOCTL(h, IOCTL_DISK_UPDATE_DRIVE_SIZE, NULL, 0, &g, sizeof(g), NULL, obj, e);
    DRIVE_LAYOUT_INFORMATION_EX *l = NULL;
    if (rc == CP_OK && (l = get_layout(h, obj, e)) == NULL)
        rc = e->status;
    if (rc == CP_OK && l->PartitionStyle == PARTITION_STYLE_GPT) {
        uint64_t end = (uint64_t)l->Gpt.StartingUsableOffset.QuadPart +
                       (uint64_t)l->Gpt.UsableLength.QuadPart;
        uint64_t want_end = 0;
        for (DWORD i = 0; i < l->PartitionCount; i++)
            if (used_entry(l, i) && l->PartitionEntry[i].PartitionNumber == v.partition_number)
                want_end = (uint64_t)l->PartitionEntry[i].StartingOffset.QuadPart + size;
        if (want_end > end) {
            size_t lsize = sizeof(DRIVE_LAYOUT_INFORMATION_EX) +
                           l->PartitionCount * sizeof(PARTITION_INFORMATION_EX);
            rc = IOCTL(h, IOCTL_DISK_SET_DRIVE_LAYOUT_EX, l, (DWORD)lsize, NULL, 0, NULL, obj, e);
        }
    }
    free(l);
    DISK_GROW_PARTITION grow = {.PartitionNumber = v.partition_number,
                                .BytesToGrow = {.QuadPart = (LONGLONG)(size - v.partition_size)}};
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_GROW_PARTITION, &grow, sizeof(grow), NULL, 0, NULL, obj, e);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
    uint32_t sector = sector_size(h);
    CloseHandle(h);
    if (rc != CP_OK || !v.formatted)
        return rc;
    HANDLE vh = open_volume(id, GENERIC_READ | GENERIC_WRITE, e);
    if (vh == INVALID_HANDLE_VALUE)
        return e->status;
    LONGLONG sectors = (LONGLONG)(size / sector);
    rc = IOCTL(vh, FSCTL_EXTEND_VOLUME, &sectors, sizeof(sectors), NULL, 0, NULL, id, e);
    CloseHandle(vh);
    return rc;
}

/* FlushFileBuffers on the volume handle ("FlushFileBuffers function": a
 * volume handle flushes every file of the volume; needs write access). */
static int w32_flush_volume(void *ctx, const char *id, cp_error *e)
{
    (void)ctx;
    HANDLE v = open_volume(id, GENERIC_READ | GENERIC_WRITE, e);
    if (v == INVALID_HANDLE_VALUE)
        return e->status;
    int rc = CP_OK;
    if (!FlushFileBuffers(v)) {
        DWORD err = GetLastError();
        rc = win_error(e, err, "FlushFileBuffers", id);
    }
    CloseHandle(v);
    return rc;
}

/* "X:\dir" -> L"X:\dir\" (the mount-point functions want the backslash). */
static wchar_t *wide_dir(const char *dir, cp_error *e)
{
    size_t n = strlen(dir);
    char *with = malloc(n + 2);
    if (with == NULL) {
        nomem(e);
        return NULL;
    }
    memcpy(with, dir, n);
    if (n == 0 || dir[n - 1] != '\\')
        with[n++] = '\\';
    with[n] = '\0';
    wchar_t *w = cp_win_utf8_to_wide(with);
    free(with);
    if (w == NULL)
        cp_error_set(e, CP_E_INVALID_ARGUMENT, "not valid UTF-8: %s", dir);
    return w;
}

/* SetVolumeMountPointW ("SetVolumeMountPointW function"; "Creating Mounted
 * Folders"): dir must be an existing empty directory. */
static int w32_add_mount_point(void *ctx, const char *id, const char *dir, cp_error *e)
{
    (void)ctx;
    wchar_t wid[CP_VOLUME_ID_LEN + 1];
    wide_id(id, wid);
    wchar_t *wdir = wide_dir(dir, e);
    if (wdir == NULL)
        return e->status;
    int rc = CP_OK;
    if (!SetVolumeMountPointW(wdir, wid)) {
        DWORD err = GetLastError();
        rc = win_error(e, err, "SetVolumeMountPointW", dir);
    }
    free(wdir);
    return rc;
}

/* DeleteVolumeMountPointW ("DeleteVolumeMountPointW function"; "Deleting
 * Mounted Folders"). */
static int w32_remove_mount_point(void *ctx, const char *dir, cp_error *e)
{
    (void)ctx;
    wchar_t *wdir = wide_dir(dir, e);
    if (wdir == NULL)
        return e->status;
    int rc = CP_OK;
    if (!DeleteVolumeMountPointW(wdir)) {
        DWORD err = GetLastError();
        rc = win_error(e, err, "DeleteVolumeMountPointW", dir);
    }
    free(wdir);
    return rc;
}

/* "Determining Whether a Directory Is a Mounted Folder": a reparse point
 * whose tag (WIN32_FIND_DATAW.dwReserved0) is IO_REPARSE_TAG_MOUNT_POINT,
 * and GetVolumeNameForVolumeMountPointW gives its volume (a junction has
 * the same tag, but no volume). */
static int w32_volume_at(void *ctx, const char *dir, char *id, size_t idlen, cp_error *e)
{
    (void)ctx;
    wchar_t *wdir = wide_dir(dir, e);
    if (wdir == NULL)
        return e->status;
    size_t n = wcslen(wdir);
    wdir[n - 1] = L'\0'; /* without the backslash for the attribute calls */
    int rc = CP_OK;
    DWORD attrs = GetFileAttributesW(wdir);
    if (attrs == INVALID_FILE_ATTRIBUTES) {
        DWORD err = GetLastError();
        rc = win_error(e, err, "GetFileAttributesW", dir);
        goto out;
    }
    if ((attrs & FILE_ATTRIBUTE_REPARSE_POINT) == 0) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
        goto out;
    }
    WIN32_FIND_DATAW fd;
    HANDLE f = FindFirstFileW(wdir, &fd);
    if (f == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        rc = win_error(e, err, "FindFirstFileW", dir);
        goto out;
    }
    FindClose(f);
    if (fd.dwReserved0 != IO_REPARSE_TAG_MOUNT_POINT) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
        goto out;
    }
    wdir[n - 1] = L'\\';
    wchar_t vol[64];
    if (!GetVolumeNameForVolumeMountPointW(wdir, vol, 64)) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
        goto out;
    }
    char *u8 = cp_win_wide_to_utf8(vol);
    char norm[CP_VOLUME_ID_LEN + 1];
    if (u8 == NULL)
        rc = nomem(e);
    else if ((rc = cp_volume_id_parse(u8, norm, NULL, e)) == CP_OK)
        snprintf(id, idlen, "%s", norm);
    free(u8);
out:
    free(wdir);
    return rc;
}

/* GetVolumeNameForVolumeMountPointW on "X:\" ("GetVolumeNameForVolume
 * MountPointW function"). */
static int w32_drive_volume(void *ctx, char letter, char *id, size_t idlen, cp_error *e)
{
    (void)ctx;
    wchar_t root[4] = {(wchar_t)(unsigned char)letter, L':', L'\\', L'\0'};
    wchar_t vol[64];
    char obj[4] = {letter, ':', '\\', '\0'};
    if (!GetVolumeNameForVolumeMountPointW(root, vol, 64)) {
        DWORD err = GetLastError();
        return win_error(e, err, "GetVolumeNameForVolumeMountPointW", obj);
    }
    char *u8 = cp_win_wide_to_utf8(vol);
    char norm[CP_VOLUME_ID_LEN + 1];
    int rc = u8 == NULL ? nomem(e) : cp_volume_id_parse(u8, norm, NULL, e);
    if (rc == CP_OK)
        snprintf(id, idlen, "%s", norm);
    free(u8);
    return rc;
}

static void w32_destroy(void *ctx)
{
    w32 *w = ctx;
    if (w == NULL)
        return;
    if (w->svc != NULL)
        IWbemServices_Release(w->svc);
    if (w->have_mta)
        CoDecrementMTAUsage(w->mta);
    free(w);
}

static const cp_storage_ops w32_ops = {
    .list_disks = w32_list_disks,
    .get_disk = w32_get_disk,
    .set_disk_online = w32_set_disk_online,
    .rescan = w32_rescan,
    .init_gpt = w32_init_gpt,
    .list_partitions = w32_list_partitions,
    .create_basic_partition = w32_create_basic_partition,
    .list_volumes = w32_list_volumes,
    .get_volume = w32_get_volume,
    .format_volume = w32_format_volume,
    .grow_volume = w32_grow_volume,
    .flush_volume = w32_flush_volume,
    .add_mount_point = w32_add_mount_point,
    .remove_mount_point = w32_remove_mount_point,
    .volume_at = w32_volume_at,
    .drive_volume = w32_drive_volume,
    .destroy = w32_destroy,
};

/* csi-proxy.exe's storage host. Nothing is opened here: WMI connects on
 * the first Format or Rescan. */
int cp_storage_host_open_default(cp_storage_host *out, cp_error *e)
{
    w32 *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return nomem(e);
    InitializeSRWLock(&w->wmi_lock);
    out->ops = &w32_ops;
    out->ctx = w;
    return CP_OK;
}
