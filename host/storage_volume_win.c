/* storage_volume_win.c - partitions (IOCTL_DISK_CREATE_DISK,
 * IOCTL_DISK_SET_DRIVE_LAYOUT_EX, IOCTL_DISK_GROW_PARTITION) and volumes
 * (volume enumeration, GetVolumeInformationW, GetDiskFreeSpaceExW, mount
 * points, FlushFileBuffers, FSCTL_EXTEND_VOLUME) of the Win32 storage host;
 * see storage_win.c. */
#include "host/storage_win_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "base/winutil_win.h"

#include <ntsecapi.h>

/* --- partitions ---------------------------------------------------------- */

/* A new random (version 4) GUID for a disk or partition, as CoCreateGuid
 * makes one ("CoCreateGuid function": UuidCreate, RFC 4122 section 4.4),
 * from RtlGenRandom (ntsecapi.h, in advapi32) so that partitioning needs
 * no ole32. */
static int new_guid(GUID *g, const char *obj, cp_error *e)
{
    if (!RtlGenRandom(g, sizeof(*g)))
        return w32s_hr_error(e, HRESULT_FROM_WIN32(GetLastError()), "RtlGenRandom", obj);
    g->Data3 = (unsigned short)((g->Data3 & 0x0FFF) | 0x4000);
    g->Data4[0] = (unsigned char)((g->Data4[0] & 0x3F) | 0x80);
    return CP_OK;
}

int w32s_need_online(HANDLE h, uint32_t number, cp_error *e)
{
    cp_get_disk_attributes attrs = {.Version = sizeof(attrs)};
    DWORD n;
    if (w32s_sc->DeviceIoControl(h, IOCTL_DISK_GET_DISK_ATTRIBUTES, NULL, 0, &attrs, sizeof(attrs),
                                 &n, NULL) &&
        (attrs.Attributes & DISK_ATTRIBUTE_OFFLINE) != 0)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is offline", (unsigned)number);
    return CP_OK;
}

/* "IOCTL_DISK_CREATE_DISK IOCTL" with a GPT CREATE_DISK (a new disk GUID
 * from new_guid, 128 entries), then IOCTL_DISK_UPDATE_PROPERTIES.
 *
 * A RAW disk that is offline (a SAN policy of OfflineShared/OfflineAll
 * keeps new disks offline) is brought online first: an offline disk
 * refuses writes, and drivers call PartitionDisk before SetDiskState
 *. A RAW disk has no volume, so this exposes nothing.
 * "IOCTL_DISK_SET_DISK_ATTRIBUTES IOCTL" clears DISK_ATTRIBUTE_OFFLINE,
 * persisted, as SetDiskState(online) does. */
int w32_init_gpt(void *ctx, uint32_t number, cp_error *e)
{
    (void)ctx;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = w32s_open_disk(number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    DRIVE_LAYOUT_INFORMATION_EX *l = w32s_get_layout(h, obj, e);
    int rc = l == NULL ? e->status : CP_OK;
    if (rc == CP_OK && l->PartitionStyle != PARTITION_STYLE_RAW)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is already initialized",
                          (unsigned)number);
    free(l);
    cp_error e2;
    if (rc == CP_OK && w32s_need_online(h, number, &e2) != CP_OK) {
        cp_set_disk_attributes s;
        memset(&s, 0, sizeof(s));
        s.Version = sizeof(s);
        s.Persist = TRUE;
        s.AttributesMask = DISK_ATTRIBUTE_OFFLINE; /* Attributes 0: online */
        rc = IOCTL(h, IOCTL_DISK_SET_DISK_ATTRIBUTES, &s, sizeof(s), NULL, 0, NULL, obj, e);
        if (rc == CP_OK)
            rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
        if (rc == CP_OK)
            rc = w32s_need_online(h, number, e);
        /* Write-protected media (storage_attrs_win.c): refused, offline again. */
        if (rc == CP_OK && (rc = w32s_need_writable_media(h, number, e)) != CP_OK)
            w32s_offline_again(h);
    }
    CREATE_DISK cd;
    memset(&cd, 0, sizeof(cd));
    cd.PartitionStyle = PARTITION_STYLE_GPT;
    cd.Gpt.MaxPartitionCount = 128;
    if (rc == CP_OK)
        rc = new_guid(&cd.Gpt.DiskId, obj, e);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_CREATE_DISK, &cd, sizeof(cd), NULL, 0, NULL, obj, e);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
    w32s_sc->CloseHandle(h);
    return rc;
}

int w32_list_partitions(void *ctx, uint32_t number, const cp_storage_alloc *a,
                        cp_partition_info **parts, size_t *n, cp_error *e)
{
    (void)ctx;
    DRIVE_LAYOUT_INFORMATION_EX *l = w32s_read_layout(number, e);
    if (l == NULL)
        return e->status;
    cp_partition_info *out = w32s_alloc(a, l->PartitionCount * sizeof(*out));
    if (out == NULL) {
        free(l);
        return w32s_nomem(e);
    }
    size_t k = 0;
    for (DWORD i = 0; i < l->PartitionCount; i++) {
        if (!w32s_used_entry(l, i))
            continue;
        const PARTITION_INFORMATION_EX *p = &l->PartitionEntry[i];
        out[k].number = p->PartitionNumber;
        out[k].offset = (uint64_t)p->StartingOffset.QuadPart;
        out[k].size = (uint64_t)p->PartitionLength.QuadPart;
        out[k].kind = w32s_part_kind(l, p);
        k++;
    }
    free(l);
    *parts = out;
    *n = k;
    return CP_OK;
}

uint32_t w32s_sector_size(HANDLE h)
{
    DISK_GEOMETRY g; /* "IOCTL_DISK_GET_DRIVE_GEOMETRY IOCTL" */
    DWORD n;
    if (w32s_sc->DeviceIoControl(h, IOCTL_DISK_GET_DRIVE_GEOMETRY, NULL, 0, &g, sizeof(g), &n,
                                 NULL) &&
        g.BytesPerSector >= 512)
        return g.BytesPerSector;
    return 512;
}

void *w32s_heap_alloc(void *actx, size_t n)
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
int w32_create_basic_partition(void *ctx, uint32_t number, cp_error *e)
{
    (void)ctx;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = w32s_open_disk(number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    DRIVE_LAYOUT_INFORMATION_EX *l = NULL, *nl = NULL;
    GET_LENGTH_INFORMATION len;
    int rc = w32s_need_online(h, number, e);
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_GET_LENGTH_INFO, NULL, 0, &len, sizeof(len), NULL, obj, e);
    if (rc == CP_OK && (l = w32s_get_layout(h, obj, e)) == NULL)
        rc = e->status;
    if (rc == CP_OK && l->PartitionStyle == PARTITION_STYLE_RAW)
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "disk %u is not initialized",
                          (unsigned)number);
    if (rc != CP_OK)
        goto out;

    uint32_t sector = w32s_sector_size(h);
    uint64_t start = l->PartitionStyle == PARTITION_STYLE_GPT
                         ? (uint64_t)l->Gpt.StartingUsableOffset.QuadPart
                         : MIB;
    DWORD slot = l->PartitionCount, max_num = 0;
    for (DWORD i = 0; i < l->PartitionCount; i++) {
        const PARTITION_INFORMATION_EX *p = &l->PartitionEntry[i];
        if (!w32s_used_entry(l, i)) {
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
    uint64_t end = (uint64_t)w32s_usable_end(l, (uint64_t)len.Length.QuadPart) / sector * sector;
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
    DWORD count = l->PartitionStyle == PARTITION_STYLE_GPT ? l->PartitionCount + 1
                                                           : l->PartitionCount;
    if (l->PartitionStyle == PARTITION_STYLE_MBR && count < 4)
        count = 4;
    size_t size = sizeof(DRIVE_LAYOUT_INFORMATION_EX) + count * sizeof(PARTITION_INFORMATION_EX);
    if ((nl = calloc(1, size)) == NULL) {
        rc = w32s_nomem(e);
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
            nl->Gpt.UsableLength.QuadPart =
                (LONGLONG)(end - (uint64_t)l->Gpt.StartingUsableOffset.QuadPart);
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
        rc = new_guid(&np->Gpt.PartitionId, obj, e);
        if (rc != CP_OK)
            goto out;
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
    if (rc == CP_OK)
        rc = w32s_wait_volume(number, max_num + 1, GetTickCount64() + NEW_VOLUME_WAIT_MS, "created",
                              e);
out:
    free(nl);
    free(l);
    w32s_sc->CloseHandle(h);
    return rc;
}

/* Waits until the volume of partition `partition` of disk `number` exists:
 * the volume device appears asynchronously (PnP) after
 * IOCTL_DISK_UPDATE_PROPERTIES or an online. DEADLINE_EXCEEDED past
 * `until` (GetTickCount64), naming the disk, the partition and what was
 * done to it (`done`: "created", "brought online"). */
int w32s_wait_volume(uint32_t number, uint32_t partition, ULONGLONG until, const char *done,
                     cp_error *e)
{
    cp_storage_alloc ha = {w32s_heap_alloc, NULL};
    for (;;) {
        char **ids = NULL;
        size_t n = 0;
        cp_error e2;
        bool seen = w32s_volumes_on(number, partition, &ha, &ids, &n, &e2) == CP_OK && n > 0;
        for (size_t i = 0; ids != NULL && i < n; i++)
            free(ids[i]);
        free(ids);
        if (seen)
            return CP_OK;
        if (GetTickCount64() > until)
            return cp_error_set(e, CP_E_DEADLINE_EXCEEDED,
                                "disk %u: partition %lu %s but its volume did not appear within "
                                "%d s",
                                (unsigned)number, (unsigned long)partition, done,
                                NEW_VOLUME_WAIT_MS / 1000);
        Sleep(100);
    }
}

/* --- volumes ------------------------------------------------------------- */

/* IOCTL_STORAGE_GET_DEVICE_NUMBER on a volume handle ("IOCTL_STORAGE_GET_
 * DEVICE_NUMBER IOCTL"): for a basic volume, its disk and partition.
 * DeviceNumber counts per device type ("STORAGE_DEVICE_NUMBER structure":
 * DeviceType is the FILE_DEVICE_* of the device, DeviceNumber its number
 * among them), so the volume of CD-ROM 0 (FILE_DEVICE_CD_ROM, or _DVD)
 * also says DeviceNumber 0: only FILE_DEVICE_DISK volumes live on
 * \\.\PhysicalDriveN. */
bool w32s_volume_place(HANDLE v, uint32_t *disk, uint32_t *partition)
{
    STORAGE_DEVICE_NUMBER sdn;
    DWORD n;
    if (!w32s_sc->DeviceIoControl(v, IOCTL_STORAGE_GET_DEVICE_NUMBER, NULL, 0, &sdn, sizeof(sdn),
                                  &n, NULL))
        return false;
    if (sdn.DeviceType != FILE_DEVICE_DISK)
        return false;
    *disk = sdn.DeviceNumber;
    *partition = sdn.PartitionNumber;
    return true;
}

/* FindFirstVolumeW / FindNextVolumeW ("Enumerating Volumes"). */
int w32s_volumes_on(uint32_t disk, uint32_t partition, const cp_storage_alloc *a, char ***ids,
                    size_t *n, cp_error *e)
{
    wchar_t name[64];
    HANDLE f = w32s_sc->FindFirstVolumeW(name, 64);
    if (f == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        return cp_win_error(e, err, "FindFirstVolumeW", "(all volumes)");
    }
    size_t cap = 16, k = 0;
    char **out = w32s_alloc(a, cap * sizeof(*out));
    int rc = out == NULL ? w32s_nomem(e) : CP_OK;
    do {
        char id[CP_VOLUME_ID_LEN + 1];
        char *u8 = cp_win_wide_to_utf8(name);
        cp_error e2;
        bool ok = u8 != NULL && cp_volume_id_parse(u8, id, NULL, &e2) == CP_OK;
        free(u8);
        if (!ok || rc != CP_OK)
            continue;
        HANDLE v = w32s_open_volume(id, 0, &e2);
        uint32_t d = 0, p = 0;
        bool placed = v != INVALID_HANDLE_VALUE && w32s_volume_place(v, &d, &p);
        if (v != INVALID_HANDLE_VALUE)
            w32s_sc->CloseHandle(v);
        if (!placed || d != disk || (partition != 0 && p != partition))
            continue;
        if (k == cap) {
            char **bigger = w32s_alloc(a, cap * 2 * sizeof(*out));
            if (bigger == NULL) {
                rc = w32s_nomem(e);
                continue;
            }
            memcpy(bigger, out, cap * sizeof(*out));
            if (a->alloc == w32s_heap_alloc)
                free(out);
            out = bigger;
            cap *= 2;
        }
        if ((out[k] = w32s_alloc(a, sizeof(id))) == NULL) {
            rc = w32s_nomem(e);
            continue;
        }
        memcpy(out[k++], id, sizeof(id));
    } while (w32s_sc->FindNextVolumeW(f, name, 64));
    DWORD err = GetLastError();
    w32s_sc->FindVolumeClose(f);
    if (rc == CP_OK && err != ERROR_NO_MORE_FILES)
        rc = cp_win_error(e, err, "FindNextVolumeW", "(all volumes)");
    if (rc != CP_OK)
        return rc;
    *ids = out;
    *n = k;
    return CP_OK;
}

int w32_list_volumes(void *ctx, uint32_t disk, uint32_t partition, const cp_storage_alloc *a,
                     char ***ids, size_t *n, cp_error *e)
{
    (void)ctx;
    HANDLE h = w32s_open_disk(disk, 0, e); /* NOT_FOUND for an unknown disk */
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    w32s_sc->CloseHandle(h);
    return w32s_volumes_on(disk, partition, a, ids, n, e);
}

/* UTF-16 "\\?\Volume{...}\" of an ID. */
void w32s_wide_id(const char *id, wchar_t out[CP_VOLUME_ID_LEN + 1])
{
    size_t i = 0;
    for (; i < CP_VOLUME_ID_LEN && id[i] != '\0'; i++)
        out[i] = (wchar_t)(unsigned char)id[i];
    out[i] = L'\0';
}

/* GetVolumeInformationW ("GetVolumeInformationW function": file-system
 * name; a volume without one fails with ERROR_UNRECOGNIZED_VOLUME or says
 * "RAW"), GetDiskFreeSpaceExW (size and free bytes, as MSFT_Volume.Size
 * and SizeRemaining), and the partition's size and room to grow from the
 * disk's layout (MSFT_Partition.Size, GetSupportedSize). */
int w32_get_volume(void *ctx, const char *id, cp_volume_info *o, cp_error *e)
{
    (void)ctx;
    memset(o, 0, sizeof(*o));
    HANDLE v = w32s_open_volume(id, 0, e);
    if (v == INVALID_HANDLE_VALUE)
        return e->status;
    bool placed = w32s_volume_place(v, &o->disk_number, &o->partition_number);
    w32s_sc->CloseHandle(v);
    if (!placed)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "volume %s is not a basic volume on one partition", id);
    wchar_t wid[CP_VOLUME_ID_LEN + 1], fs[MAX_PATH + 1];
    w32s_wide_id(id, wid);
    if (w32s_sc->GetVolumeInformationW(wid, NULL, 0, NULL, NULL, NULL, fs, MAX_PATH + 1)) {
        char *u8 = cp_win_wide_to_utf8(fs);
        if (u8 != NULL && strcmp(u8, "RAW") != 0 && u8[0] != '\0') {
            snprintf(o->fs, sizeof(o->fs), "%s", u8);
            o->formatted = true;
        }
        free(u8);
    } else {
        DWORD err = GetLastError();
        if (err != ERROR_UNRECOGNIZED_VOLUME)
            return cp_win_error(e, err, "GetVolumeInformationW", id);
    }

    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)o->disk_number);
    /* The disk may have grown since the disk driver last looked (a cloud
     * volume expanded): IOCTL_DISK_GET_LENGTH_INFO answers the length
     * cached in the device extension until "IOCTL_DISK_UPDATE_DRIVE_SIZE
     * IOCTL" ("Updates device extension with drive size information for
     * current media"; used "in conjunction with IOCTL_DISK_GROW_PARTITION"
     * to extend a disk) refreshes it. Without it ResizeVolume(0) reads a
     * stale partition_max and does nothing. The IOCTL
     * needs read and write access; a handle without write access skips it
     * (best effort: the length read then is what the driver has). */
    HANDLE h = w32s_open_disk(o->disk_number, GENERIC_READ | GENERIC_WRITE, e);
    if (h != INVALID_HANDLE_VALUE) {
        DISK_GEOMETRY g;
        DWORD n;
        (void)w32s_sc->DeviceIoControl(h, IOCTL_DISK_UPDATE_DRIVE_SIZE, NULL, 0, &g, sizeof(g), &n,
                                       NULL);
    } else if (e->status == CP_E_PERMISSION_DENIED) {
        h = w32s_open_disk(o->disk_number, GENERIC_READ, e);
    }
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    GET_LENGTH_INFORMATION len;
    DRIVE_LAYOUT_INFORMATION_EX *l = NULL;
    int rc = IOCTL(h, IOCTL_DISK_GET_LENGTH_INFO, NULL, 0, &len, sizeof(len), NULL, obj, e);
    if (rc == CP_OK && (l = w32s_get_layout(h, obj, e)) == NULL)
        rc = e->status;
    w32s_sc->CloseHandle(h);
    if (rc != CP_OK)
        return rc;
    const PARTITION_INFORMATION_EX *me = NULL;
    for (DWORD i = 0; i < l->PartitionCount; i++)
        if (w32s_used_entry(l, i) && l->PartitionEntry[i].PartitionNumber == o->partition_number)
            me = &l->PartitionEntry[i];
    if (me == NULL) {
        free(l);
        return cp_error_set(e, CP_E_NOT_FOUND, "volume %s: partition %u not in disk %u's layout",
                            id, (unsigned)o->partition_number, (unsigned)o->disk_number);
    }
    uint64_t off = (uint64_t)me->StartingOffset.QuadPart;
    uint64_t limit = w32s_usable_end(l, (uint64_t)len.Length.QuadPart);
    for (DWORD i = 0; i < l->PartitionCount; i++) {
        uint64_t s = (uint64_t)l->PartitionEntry[i].StartingOffset.QuadPart;
        if (w32s_used_entry(l, i) && s > off && s < limit)
            limit = s;
    }
    o->partition_size = (uint64_t)me->PartitionLength.QuadPart;
    o->partition_max = limit > off ? limit - off : o->partition_size;
    if (o->partition_max < o->partition_size)
        o->partition_max = o->partition_size;
    free(l);

    if (o->formatted) {
        ULARGE_INTEGER avail, total, free_bytes;
        if (!w32s_sc->GetDiskFreeSpaceExW(wid, &avail, &total, &free_bytes)) {
            DWORD err = GetLastError();
            return cp_win_error(e, err, "GetDiskFreeSpaceExW", id);
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
int w32_grow_volume(void *ctx, const char *id, uint64_t size, cp_error *e)
{
    cp_volume_info v;
    int rc = w32_get_volume(ctx, id, &v, e);
    if (rc != CP_OK)
        return rc;
    if (size <= v.partition_size)
        return CP_OK;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)v.disk_number);
    HANDLE h = w32s_open_disk(v.disk_number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    DISK_GEOMETRY g;
    rc = IOCTL(h, IOCTL_DISK_UPDATE_DRIVE_SIZE, NULL, 0, &g, sizeof(g), NULL, obj, e);
    DRIVE_LAYOUT_INFORMATION_EX *l = NULL;
    if (rc == CP_OK && (l = w32s_get_layout(h, obj, e)) == NULL)
        rc = e->status;
    if (rc == CP_OK && l->PartitionStyle == PARTITION_STYLE_GPT) {
        uint64_t end =
            (uint64_t)l->Gpt.StartingUsableOffset.QuadPart + (uint64_t)l->Gpt.UsableLength.QuadPart;
        uint64_t want_end = 0;
        for (DWORD i = 0; i < l->PartitionCount; i++)
            if (w32s_used_entry(l, i) && l->PartitionEntry[i].PartitionNumber == v.partition_number)
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
    uint32_t sector = w32s_sector_size(h);
    w32s_sc->CloseHandle(h);
    if (rc != CP_OK || !v.formatted)
        return rc;
    HANDLE vh = w32s_open_volume(id, GENERIC_READ | GENERIC_WRITE, e);
    if (vh == INVALID_HANDLE_VALUE)
        return e->status;
    LONGLONG sectors = (LONGLONG)(size / sector);
    rc = IOCTL(vh, FSCTL_EXTEND_VOLUME, &sectors, sizeof(sectors), NULL, 0, NULL, id, e);
    w32s_sc->CloseHandle(vh);
    return rc;
}

/* FlushFileBuffers on the volume handle ("FlushFileBuffers function": a
 * volume handle flushes every file of the volume; needs write access). */
int w32_flush_volume(void *ctx, const char *id, cp_error *e)
{
    (void)ctx;
    HANDLE v = w32s_open_volume(id, GENERIC_READ | GENERIC_WRITE, e);
    if (v == INVALID_HANDLE_VALUE)
        return e->status;
    int rc = CP_OK;
    if (!w32s_sc->FlushFileBuffers(v)) {
        DWORD err = GetLastError();
        rc = cp_win_error(e, err, "FlushFileBuffers", id);
    }
    w32s_sc->CloseHandle(v);
    return rc;
}

/* "X:\dir" -> L"X:\dir\" (the mount-point functions want the backslash). */

static wchar_t *wide_dir(const char *dir, cp_error *e)
{
    size_t n = strlen(dir);
    char *with = malloc(n + 2);
    if (with == NULL) {
        w32s_nomem(e);
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
int w32_add_mount_point(void *ctx, const char *id, const char *dir, cp_error *e)
{
    (void)ctx;
    wchar_t wid[CP_VOLUME_ID_LEN + 1];
    w32s_wide_id(id, wid);
    wchar_t *wdir = wide_dir(dir, e);
    if (wdir == NULL)
        return e->status;
    int rc = CP_OK;
    if (!w32s_sc->SetVolumeMountPointW(wdir, wid)) {
        DWORD err = GetLastError();
        rc = cp_win_error(e, err, "SetVolumeMountPointW", dir);
    }
    free(wdir);
    return rc;
}

/* DeleteVolumeMountPointW ("DeleteVolumeMountPointW function"; "Deleting
 * Mounted Folders"). */
int w32_remove_mount_point(void *ctx, const char *dir, cp_error *e)
{
    (void)ctx;
    wchar_t *wdir = wide_dir(dir, e);
    if (wdir == NULL)
        return e->status;
    int rc = CP_OK;
    if (!w32s_sc->DeleteVolumeMountPointW(wdir)) {
        DWORD err = GetLastError();
        rc = cp_win_error(e, err, "DeleteVolumeMountPointW", dir);
    }
    free(wdir);
    return rc;
}

/* "Determining Whether a Directory Is a Mounted Folder": a reparse point
 * whose tag (WIN32_FIND_DATAW.dwReserved0) is IO_REPARSE_TAG_MOUNT_POINT,
 * and GetVolumeNameForVolumeMountPointW gives its volume (a junction has
 * the same tag, but no volume). */
int w32_volume_at(void *ctx, const char *dir, char *id, size_t idlen, cp_error *e)
{
    (void)ctx;
    wchar_t *wdir = wide_dir(dir, e);
    if (wdir == NULL)
        return e->status;
    size_t n = wcslen(wdir);
    if (n > 3) /* without the backslash for the attribute calls; "X:\" keeps it */
        wdir[n - 1] = L'\0';
    int rc = CP_OK;
    DWORD attrs = w32s_sc->GetFileAttributesW(wdir);
    if (attrs == INVALID_FILE_ATTRIBUTES) {
        DWORD err = GetLastError();
        rc = cp_win_error(e, err, "GetFileAttributesW", dir);
        goto out;
    }
    if ((attrs & FILE_ATTRIBUTE_REPARSE_POINT) == 0) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
        goto out;
    }
    WIN32_FIND_DATAW fd;
    HANDLE f = w32s_sc->FindFirstFileW(wdir, &fd);
    if (f == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        rc = cp_win_error(e, err, "FindFirstFileW", dir);
        goto out;
    }
    w32s_sc->FindClose(f);
    if (fd.dwReserved0 != IO_REPARSE_TAG_MOUNT_POINT) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
        goto out;
    }
    wdir[n - 1] = L'\\';
    wchar_t vol[64];
    if (!w32s_sc->GetVolumeNameForVolumeMountPointW(wdir, vol, 64)) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder", dir);
        goto out;
    }
    char *u8 = cp_win_wide_to_utf8(vol);
    char norm[CP_VOLUME_ID_LEN + 1];
    if (u8 == NULL)
        rc = w32s_nomem(e);
    else if ((rc = cp_volume_id_parse(u8, norm, NULL, e)) == CP_OK)
        snprintf(id, idlen, "%s", norm);
    free(u8);
out:
    free(wdir);
    return rc;
}

/* GetVolumeNameForVolumeMountPointW on "X:\" ("GetVolumeNameForVolume
 * MountPointW function"). */
int w32_drive_volume(void *ctx, char letter, char *id, size_t idlen, cp_error *e)
{
    (void)ctx;
    wchar_t root[4] = {(wchar_t)(unsigned char)letter, L':', L'\\', L'\0'};
    wchar_t vol[64];
    char obj[4] = {letter, ':', '\\', '\0'};
    if (!w32s_sc->GetVolumeNameForVolumeMountPointW(root, vol, 64)) {
        DWORD err = GetLastError();
        return cp_win_error(e, err, "GetVolumeNameForVolumeMountPointW", obj);
    }
    char *u8 = cp_win_wide_to_utf8(vol);
    char norm[CP_VOLUME_ID_LEN + 1];
    int rc = u8 == NULL ? w32s_nomem(e) : cp_volume_id_parse(u8, norm, NULL, e);
    if (rc == CP_OK)
        snprintf(id, idlen, "%s", norm);
    free(u8);
    return rc;
}
