/* storage_win.c - the storage host ops on Windows (the product): errors,
 * handles, disks and the ops table here; partitions and volumes in
 * storage_volume_win.c; what Windows needs a volume for (system, boot,
 * page file, crash dump) in storage_roles_win.c; WMI in
 * storage_wmi_win.c.
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
 * cp_status plus "<API> <object>: <system message> (error <n>)" by
 * cp_win_error (winutil_win.h: the one map, shared with the filesystem host).
 */
#include "host/storage_win_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "base/log.h"
#include "base/winutil_win.h"

/* --- errors ------------------------------------------------------------- */

/* "<what> <object>: HRESULT 0x... (<name>)"; the WMI codes a storage call
 * meets are named ("WMI Error Constants"). */
int w32s_hr_error(cp_error *e, HRESULT hr, const char *what, const char *object)
{
    static const struct {
        HRESULT hr;
        const char *name;
        int status;
    } known[] = {
        {(HRESULT)WBEM_E_NOT_FOUND, "WBEM_E_NOT_FOUND", CP_E_NOT_FOUND},
        {(HRESULT)WBEM_E_INVALID_CLASS, "WBEM_E_INVALID_CLASS", CP_E_UNIMPLEMENTED},
        {(HRESULT)WBEM_E_INVALID_NAMESPACE, "WBEM_E_INVALID_NAMESPACE", CP_E_UNIMPLEMENTED},
        {(HRESULT)WBEM_E_ACCESS_DENIED, "WBEM_E_ACCESS_DENIED", CP_E_PERMISSION_DENIED},
        {(HRESULT)WBEM_E_INVALID_PARAMETER, "WBEM_E_INVALID_PARAMETER", CP_E_INVALID_ARGUMENT},
        {(HRESULT)WBEM_E_TRANSPORT_FAILURE, "WBEM_E_TRANSPORT_FAILURE", CP_E_UNAVAILABLE},
        {(HRESULT)E_OUTOFMEMORY, "E_OUTOFMEMORY", CP_E_RESOURCE_EXHAUSTED},
        {(HRESULT)E_ACCESSDENIED, "E_ACCESSDENIED", CP_E_PERMISSION_DENIED},
    };
    const char *name = cp_wmi_hr_name((uint32_t)hr); /* the connection to WMI was lost */
    int status = name != NULL ? CP_E_UNAVAILABLE : CP_E_UNKNOWN;
    if (name == NULL)
        name = "";
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (known[i].hr == hr) {
            name = known[i].name;
            status = known[i].status;
        }
    return cp_error_set(e, status, "%s%s%s: HRESULT 0x%08lx%s%s%s", what,
                        object[0] != '\0' ? " " : "", object, (unsigned long)hr,
                        name[0] != '\0' ? " (" : "", name, name[0] != '\0' ? ")" : "");
}

int w32s_nomem(cp_error *e)
{
    return cp_error_set(e, CP_E_NOMEM, "storage: out of memory");
}

/* --- handles and IOCTLs ------------------------------------------------- */

/* CreateFileW (fileapi.h) on "\\.\PhysicalDriveN" ("Naming Files, Paths,
 * and Namespaces": physical disks). A missing disk is NOT_FOUND. */
HANDLE w32s_open_disk(uint32_t number, DWORD access, cp_error *e)
{
    wchar_t path[40];
    swprintf(path, sizeof(path) / sizeof(path[0]), L"\\\\.\\PhysicalDrive%u", (unsigned)number);
    HANDLE h = w32s_sc->CreateFileW(path, access, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                                    OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND)
            cp_error_set(e, CP_E_NOT_FOUND, "disk %u not found", (unsigned)number);
        else {
            char obj[32];
            snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
            cp_win_error(e, err, "CreateFileW", obj);
        }
    }
    return h;
}

/* The volume device "\\?\Volume{guid}" (the ID without its trailing
 * backslash: "Naming a Volume"). */
HANDLE w32s_open_volume(const char *id, DWORD access, cp_error *e)
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
    HANDLE h = w32s_sc->CreateFileW(path, access, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                                    OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND)
            cp_error_set(e, CP_E_NOT_FOUND, "volume %s not found", id);
        else
            cp_win_error(e, err, "CreateFileW", id);
    }
    return h;
}

/* DeviceIoControl (ioapiset.h), synchronous. */
int w32s_ioctl(HANDLE h, DWORD code, const char *name, const void *in, DWORD inlen, void *out,
               DWORD outlen, DWORD *ret, const char *object, cp_error *e)
{
    DWORD n = 0;
    if (!w32s_sc->DeviceIoControl(h, code, (void *)in, inlen, out, outlen, &n, NULL)) {
        DWORD err = GetLastError();
        return cp_win_error(e, err, name, object);
    }
    if (ret != NULL)
        *ret = n;
    return CP_OK;
}

#define IOCTL(h, code, in, inlen, out, outlen, ret, obj, e)                                        \
    w32s_ioctl(h, code, #code, in, inlen, out, outlen, ret, obj, e)

/* IOCTL_DISK_GET_DRIVE_LAYOUT_EX ("IOCTL_DISK_GET_DRIVE_LAYOUT_EX IOCTL
 * (ntdddisk.h)": send it "in a loop", doubling the buffer while it is too
 * small; the status may be STATUS_BUFFER_TOO_SMALL or
 * STATUS_INFO_LENGTH_MISMATCH, ERROR_INSUFFICIENT_BUFFER or ERROR_BAD_LENGTH
 * here). Caller frees. */
DRIVE_LAYOUT_INFORMATION_EX *w32s_get_layout(HANDLE h, const char *obj, cp_error *e)
{
    DWORD size = sizeof(DRIVE_LAYOUT_INFORMATION_EX) + 16 * sizeof(PARTITION_INFORMATION_EX);
    for (int tries = 0; tries < 8; tries++, size *= 2) {
        DRIVE_LAYOUT_INFORMATION_EX *l = calloc(1, size);
        if (l == NULL) {
            w32s_nomem(e);
            return NULL;
        }
        DWORD n;
        if (w32s_sc->DeviceIoControl(h, IOCTL_DISK_GET_DRIVE_LAYOUT_EX, NULL, 0, l, size, &n, NULL))
            return l;
        DWORD err = GetLastError();
        free(l);
        if (err != ERROR_INSUFFICIENT_BUFFER && err != ERROR_MORE_DATA && err != ERROR_BAD_LENGTH) {
            cp_win_error(e, err, "IOCTL_DISK_GET_DRIVE_LAYOUT_EX", obj);
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

DRIVE_LAYOUT_INFORMATION_EX *w32s_read_layout(uint32_t number, cp_error *e)
{
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = w32s_open_disk(number, GENERIC_READ, e);
    if (h == INVALID_HANDLE_VALUE)
        return NULL;
    DRIVE_LAYOUT_INFORMATION_EX *l = w32s_get_layout(h, obj, e);
    w32s_sc->CloseHandle(h);
    return l;
}

bool w32s_used_entry(const DRIVE_LAYOUT_INFORMATION_EX *l, DWORD i)
{
    const PARTITION_INFORMATION_EX *p = &l->PartitionEntry[i];
    if (p->PartitionLength.QuadPart == 0)
        return false;
    return l->PartitionStyle != PARTITION_STYLE_MBR ||
           p->Mbr.PartitionType != PARTITION_ENTRY_UNUSED;
}

cp_part_kind w32s_part_kind(const DRIVE_LAYOUT_INFORMATION_EX *l, const PARTITION_INFORMATION_EX *p)
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
uint64_t w32s_usable_end(const DRIVE_LAYOUT_INFORMATION_EX *l, uint64_t disk_len)
{
    if (l->PartitionStyle == PARTITION_STYLE_GPT) {
        uint64_t end =
            (uint64_t)l->Gpt.StartingUsableOffset.QuadPart + (uint64_t)l->Gpt.UsableLength.QuadPart;
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
    if (GetSystemWindowsDirectoryW(win, MAX_PATH) == 0 ||
        !w32s_sc->GetVolumePathNameW(win, root, MAX_PATH) ||
        !w32s_sc->GetVolumeNameForVolumeMountPointW(root, vol, 64))
        return;
    size_t n = wcslen(vol);
    if (n > 0 && vol[n - 1] == L'\\')
        vol[n - 1] = L'\0';
    HANDLE h = w32s_sc->CreateFileW(vol, 0, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                                    0, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return;
    union {
        VOLUME_DISK_EXTENTS x;
        BYTE b[sizeof(VOLUME_DISK_EXTENTS) + 31 * sizeof(DISK_EXTENT)];
    } u;
    DWORD ret;
    if (w32s_sc->DeviceIoControl(h, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, NULL, 0, &u, sizeof(u),
                                 &ret, NULL)) {
        for (DWORD i = 0; i < u.x.NumberOfDiskExtents && i < 32; i++) {
            DWORD d = u.x.Extents[i].DiskNumber;
            if (d < 64)
                *mask |= 1ull << d;
            else if (*first == UINT32_MAX)
                *first = d;
        }
    }
    w32s_sc->CloseHandle(h);
}

/* --- disks -------------------------------------------------------------- */

void *w32s_alloc(const cp_storage_alloc *a, size_t n)
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
    if (w32s_sc->DeviceIoControl(h, IOCTL_STORAGE_QUERY_PROPERTY, &q, sizeof(q), buf, DESC_BUF, &n,
                                 NULL) &&
        n >= sizeof(STORAGE_DESCRIPTOR_HEADER)) {
        /* The header's Size is what the device has; n what we got. */
        DWORD size = ((STORAGE_DESCRIPTOR_HEADER *)buf)->Size;
        if (size > n)
            size = n;
        uint8_t *copy = w32s_alloc(a, size);
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
    o->online = !w32s_sc->DeviceIoControl(h, IOCTL_DISK_GET_DISK_ATTRIBUTES, NULL, 0, &attrs,
                                          sizeof(attrs), &n, NULL) ||
                (attrs.Attributes & DISK_ATTRIBUTE_OFFLINE) == 0;
    w32s_read_only(h, o->online, &o->read_only, &o->write_protected); /* storage_attrs_win.c */

    DRIVE_LAYOUT_INFORMATION_EX *l = w32s_get_layout(h, obj, e);
    if (l == NULL)
        return e->status;
    o->style = l->PartitionStyle == PARTITION_STYLE_GPT   ? CP_PART_STYLE_GPT
               : l->PartitionStyle == PARTITION_STYLE_MBR ? CP_PART_STYLE_MBR
                                                          : CP_PART_STYLE_RAW;
    for (DWORD i = 0; i < l->PartitionCount; i++)
        if (w32s_used_entry(l, i) && w32s_part_kind(l, &l->PartitionEntry[i]) == CP_PART_SYSTEM)
            o->is_system = true; /* MSFT_Disk.IsSystem: holds the system partition */
    free(l);
    o->is_boot = number < 64 ? (boot_mask >> number & 1) != 0 : number == boot_high;

    query_property(h, StorageDeviceIdProperty, a, &o->id_desc, &o->id_desc_len);
    query_property(h, StorageDeviceProperty, a, &o->dev_desc, &o->dev_desc_len);

    /* "IOCTL_SCSI_GET_ADDRESS IOCTL" (ntddscsi.h): disks behind a storport
     * miniport (SCSI, SAS, iSCSI, NVMe, virtual) have one. */
    SCSI_ADDRESS sa;
    memset(&sa, 0, sizeof(sa));
    if (w32s_sc->DeviceIoControl(h, IOCTL_SCSI_GET_ADDRESS, NULL, 0, &sa, sizeof(sa), &n, NULL)) {
        unsigned port, path, target, lun;
        char loc[128];
        if (cp_scsi_address_read((const uint8_t *)&sa, n, &port, &path, &target, &lun)) {
            cp_location_format("", port, path, target, lun, loc, sizeof(loc));
            char *copy = w32s_alloc(a, strlen(loc) + 1);
            if (copy == NULL)
                return w32s_nomem(e);
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
    HANDLE h = w32s_open_disk(number, GENERIC_READ, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    int rc = describe_disk(h, number, mask, high, a, out, e);
    w32s_sc->CloseHandle(h);
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
            return w32s_nomem(e);
        if (w32s_sc->QueryDosDeviceW(NULL, names, cap) != 0)
            break;
        DWORD err = GetLastError();
        free(names);
        if (err != ERROR_INSUFFICIENT_BUFFER || cap >= 16u * 1024 * 1024)
            return cp_win_error(e, err, "QueryDosDeviceW", "(all devices)");
        cap *= 4;
    }
    size_t count = 0;
    for (const wchar_t *p = names; *p != L'\0'; p += wcslen(p) + 1)
        count += wcsncmp(p, L"PhysicalDrive", 13) == 0;
    cp_disk_info *out = w32s_alloc(a, count * sizeof(*out));
    int rc = out == NULL ? w32s_nomem(e) : CP_OK;
    size_t k = 0;
    uint64_t mask;
    uint32_t high;
    boot_disks(&mask, &high);
    for (const wchar_t *p = names; rc == CP_OK && *p != L'\0'; p += wcslen(p) + 1) {
        if (wcsncmp(p, L"PhysicalDrive", 13) != 0 || p[13] < L'0' || p[13] > L'9')
            continue;
        uint32_t number = (uint32_t)wcstoul(p + 13, NULL, 10);
        cp_error e2;
        HANDLE h = w32s_open_disk(number, GENERIC_READ, &e2);
        if (h == INVALID_HANDLE_VALUE) {
            if (e2.status != CP_E_NOT_FOUND) /* NOT_FOUND: removed meanwhile */
                CP_LOG_WARN("storage: listing disks: skipping %s", e2.msg);
            continue;
        }
        /* One disk that does not answer (ERROR_NOT_READY from an empty
         * virtual-media drive, ERROR_NO_SUCH_DEVICE or ERROR_FILE_NOT_FOUND
         * from a disk vanishing mid-detach: "System Error Codes") must not
         * fail the listing for every other disk: it is left out and logged
         * (the simulator's fixture disk 18 does the same). */
        int r = describe_disk(h, number, mask, high, a, &out[k], &e2);
        w32s_sc->CloseHandle(h);
        if (r == CP_OK)
            k++;
        else if (r == CP_E_NOMEM)
            rc = w32s_nomem(e);
        else
            CP_LOG_WARN("storage: listing disks: skipping %s", e2.msg);
    }
    free(names);
    (void)ctx;
    if (rc != CP_OK)
        return rc;
    *disks = out;
    *n = k;
    return CP_OK;
}

/* Whether the disk says DISK_ATTRIBUTE_OFFLINE ("IOCTL_DISK_GET_DISK_
 * ATTRIBUTES IOCTL"); a disk that cannot say is online, as describe_disk. */
static bool offline_attr(HANDLE h)
{
    cp_get_disk_attributes attrs = {.Version = sizeof(attrs)};
    DWORD n;
    return w32s_sc->DeviceIoControl(h, IOCTL_DISK_GET_DISK_ATTRIBUTES, NULL, 0, &attrs,
                                    sizeof(attrs), &n, NULL) &&
           (attrs.Attributes & DISK_ATTRIBUTE_OFFLINE) != 0;
}

/* After a disk came online: waits for the volume of each of its basic
 * partitions, as create_basic_partition does, so that ListVolumesOnDisk
 * right after SetDiskState(online) sees them. */
static int wait_basic_volumes(HANDLE h, uint32_t number, const char *obj, cp_error *e)
{
    DRIVE_LAYOUT_INFORMATION_EX *l = w32s_get_layout(h, obj, e);
    if (l == NULL)
        return e->status;
    ULONGLONG until = GetTickCount64() + NEW_VOLUME_WAIT_MS;
    int rc = CP_OK;
    for (DWORD i = 0; rc == CP_OK && i < l->PartitionCount; i++)
        if (w32s_used_entry(l, i) && w32s_part_kind(l, &l->PartitionEntry[i]) == CP_PART_BASIC)
            rc = w32s_wait_volume(number, l->PartitionEntry[i].PartitionNumber, until,
                                  "brought online", e);
    free(l);
    return rc;
}

/* "IOCTL_DISK_SET_DISK_ATTRIBUTES IOCTL": DISK_ATTRIBUTE_OFFLINE, persisted,
 * then "IOCTL_DISK_UPDATE_PROPERTIES IOCTL" so the partition manager sees it.
 *
 * Online: the attribute is read back, because clearing it does not bring
 * every offline disk online. A disk kept offline for a collision
 * ("VDS_DISK_OFFLINE_REASON enumeration": VDSDiskOfflineReasonCollision,
 * MSFT_Disk.OfflineReason 4 - an MBR signature, or a GPT disk or partition
 * GUID, equal to another online disk's: a snapshot restored beside its
 * source) stays offline until it gets new identifiers; Windows does that
 * when the disk is brought online through the Storage Management API
 * ("Online method of the MSFT_Disk class"; Disk Management and diskpart
 * "online disk" replace the duplicate signature/GUIDs), so a disk still
 * offline is brought online that way, then checked again. Then the call
 * waits for the volumes of its basic partitions.
 *
 * Online also clears DISK_ATTRIBUTE_READ_ONLY in the same SET_DISK_
 * ATTRIBUTES (AttributesMask: "Indicates which attributes are being
 * changed"): a disk reattached or restored from a snapshot may come back
 * read-only, and would then mount and fail every write. Media
 * write-protected at the hardware stays so: the set may fail with
 * ERROR_WRITE_PROTECT, or IOCTL_DISK_IS_WRITABLE says it after
 * (storage_attrs_win.c); either is FAILED_PRECONDITION naming the disk,
 * and a disk that was offline is put back offline. */
static int w32_set_disk_online(void *ctx, uint32_t number, bool online, cp_error *e)
{
    w32 *w = ctx;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = w32s_open_disk(number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    bool was_offline = offline_attr(h);
    cp_set_disk_attributes s;
    memset(&s, 0, sizeof(s));
    s.Version = sizeof(s);
    s.Persist = TRUE;
    s.Attributes = online ? 0 : DISK_ATTRIBUTE_OFFLINE;
    s.AttributesMask = DISK_ATTRIBUTE_OFFLINE | (online ? DISK_ATTRIBUTE_READ_ONLY : 0);
    int rc = CP_OK;
    DWORD n;
    if (!w32s_sc->DeviceIoControl(h, IOCTL_DISK_SET_DISK_ATTRIBUTES, &s, sizeof(s), NULL, 0, &n,
                                  NULL)) {
        DWORD err = GetLastError();
        rc = online && err == ERROR_WRITE_PROTECT
                 ? w32s_write_protected_error(number, e)
                 : cp_win_error(e, err, "IOCTL_DISK_SET_DISK_ATTRIBUTES", obj);
    }
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
    if (rc == CP_OK && online && offline_attr(h)) {
        rc = w32s_sc->disk_online(&w->wmi, number, e);
        if (rc == CP_OK)
            rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
        if (rc == CP_OK && offline_attr(h))
            rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "disk %u is still offline after MSFT_Disk.Online (see its "
                              "OfflineReason: Get-Disk -Number %u)",
                              (unsigned)number, (unsigned)number);
    }
    if (rc == CP_OK && online) {
        rc = w32s_need_writable_media(h, number, e);
        if (rc != CP_OK && was_offline)
            w32s_offline_again(h); /* refused: left as it was */
    }
    if (rc == CP_OK && online)
        rc = wait_basic_volumes(h, number, obj, e);
    w32s_sc->CloseHandle(h);
    return rc;
}

/* The WMI operations, through the table. */
static int w32_rescan(void *ctx, cp_error *e)
{
    w32 *w = ctx;
    return w32s_sc->update_host_storage_cache(&w->wmi, e);
}

static int w32_format_volume(void *ctx, const char *id, cp_error *e)
{
    w32 *w = ctx;
    return w32s_sc->format_volume(&w->wmi, id, e);
}

static void w32_destroy(void *ctx)
{
    w32 *w = ctx;
    if (w == NULL)
        return;
    w32s_wmi_release(w);
    free(w);
}

static const cp_storage_ops w32_ops = {
    .list_disks = w32_list_disks,
    .get_disk = w32_get_disk,
    .set_disk_online = w32_set_disk_online,
    .make_disk_writable = w32_make_disk_writable,
    .rescan = w32_rescan,
    .init_gpt = w32_init_gpt,
    .list_partitions = w32_list_partitions,
    .create_basic_partition = w32_create_basic_partition,
    .list_volumes = w32_list_volumes,
    .get_volume = w32_get_volume,
    .volume_use = w32_volume_use,
    .read_volume_head = w32_read_volume_head,
    .format_volume = w32_format_volume,
    .grow_volume = w32_grow_volume,
    .flush_volume = w32_flush_volume,
    .add_mount_point = w32_add_mount_point,
    .remove_mount_point = w32_remove_mount_point,
    .volume_at = w32_volume_at,
    .drive_volume = w32_drive_volume,
    .destroy = w32_destroy,
};

const cp_storage_calls *w32s_sc;

/* The Win32 host on `calls` (storage_calls_win.h; csi-proxy.exe's is
 * cp_storage_calls_win32, storage_calls_win.c). Nothing is opened here:
 * WMI connects on the first Format or Rescan. */
int cp_storage_host_open_win32(cp_storage_host *out, const cp_storage_calls *calls, cp_error *e)
{
    w32s_sc = calls;
    w32 *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return w32s_nomem(e);
    cp_wmi_conn_init(&w->wmi, L"ROOT\\Microsoft\\Windows\\Storage");
    out->ops = &w32_ops;
    out->ctx = w;
    return CP_OK;
}
