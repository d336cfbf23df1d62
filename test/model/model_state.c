/* model_state.c - the device model's state (model.h): handles, lookups,
 * when a volume is there, and the three WMI operations of the call table
 * (storage_calls_win.h) at the operation level. */
#include "test/model/model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

model m_model = {.lock = SRWLOCK_INIT};

void m_trace(const char *fmt, ...)
{
    if (!m_model.trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("model: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* --- handles: heap pointers the model hands out and recognises ---------- */

#define M_MAX_HANDLES 4096
static m_handle *handles[M_MAX_HANDLES];
static SRWLOCK hlock = SRWLOCK_INIT;

HANDLE m_handle_new(const m_handle *h)
{
    m_handle *p = malloc(sizeof(*p));
    if (p == NULL) {
        SetLastError(ERROR_NOT_ENOUGH_MEMORY);
        return INVALID_HANDLE_VALUE;
    }
    *p = *h;
    AcquireSRWLockExclusive(&hlock);
    for (size_t i = 0; i < M_MAX_HANDLES; i++)
        if (handles[i] == NULL) {
            handles[i] = p;
            ReleaseSRWLockExclusive(&hlock);
            return (HANDLE)p;
        }
    ReleaseSRWLockExclusive(&hlock);
    free(p);
    SetLastError(ERROR_TOO_MANY_OPEN_FILES);
    return INVALID_HANDLE_VALUE;
}

m_handle *m_handle_get(HANDLE h)
{
    m_handle *found = NULL;
    AcquireSRWLockShared(&hlock);
    for (size_t i = 0; i < M_MAX_HANDLES && found == NULL; i++)
        if (handles[i] != NULL && (HANDLE)handles[i] == h)
            found = handles[i];
    ReleaseSRWLockShared(&hlock);
    return found;
}

void m_handle_free(HANDLE h)
{
    m_handle *p = NULL;
    AcquireSRWLockExclusive(&hlock);
    for (size_t i = 0; i < M_MAX_HANDLES; i++)
        if (handles[i] != NULL && (HANDLE)handles[i] == h) {
            p = handles[i];
            handles[i] = NULL;
        }
    ReleaseSRWLockExclusive(&hlock);
    if (p != NULL && p->names != NULL) {
        for (size_t i = 0; i < p->n_names; i++)
            free(p->names[i]);
        free(p->names);
    }
    free(p);
}

/* --- lookups ------------------------------------------------------------ */

m_disk *m_disk_by_number(uint32_t number, bool cdrom)
{
    for (size_t i = 0; i < m_model.n_disks; i++)
        if (m_model.disks[i].number == number && m_model.disks[i].cdrom == cdrom)
            return &m_model.disks[i];
    return NULL;
}

/* Doc: "IVdsDiskOnline Interface" ([MS-VDS] 3.1.12.8): "An online disk
 * exposes the volumes on that disk"; "An offline disk does not expose any
 * volumes". Undocumented: how long after a partition
 * is created or a disk comes online its volume device arrives (PnP,
 * asynchronous); the model says volume_arrival_ms. */
bool m_vol_present(const m_disk *d, size_t part)
{
    const m_vol *v = &d->parts[part].vol;
    return v->exists && !d->offline && !d->not_ready && GetTickCount64() >= v->appears_at;
}

bool m_vol_find(const GUID *g, m_disk **d, size_t *part)
{
    for (size_t i = 0; i < m_model.n_disks; i++)
        for (size_t j = 0; j < m_model.disks[i].n_parts; j++)
            if (IsEqualGUID(&m_model.disks[i].parts[j].vol.guid, g) &&
                m_vol_present(&m_model.disks[i], j)) {
                *d = &m_model.disks[i];
                *part = j;
                return true;
            }
    return false;
}

bool m_vol_by_drive(wchar_t letter, m_disk **d, size_t *part)
{
    wchar_t up = letter >= L'a' && letter <= L'z' ? letter - 32 : letter;
    for (size_t i = 0; i < m_model.n_disks; i++)
        for (size_t j = 0; j < m_model.disks[i].n_parts; j++)
            if (m_model.disks[i].parts[j].vol.drive == (char)up &&
                m_vol_present(&m_model.disks[i], j)) {
                *d = &m_model.disks[i];
                *part = j;
                return true;
            }
    return false;
}

/* Doc: "Naming a Volume": volume GUID paths are "\\?\Volume{GUID}\".
 * Undocumented: the case of the hex digits (the page's example is lower
 * case, "\\?\Volume{26a21bda-a627-11d7-9931-806e6f6e6963}\"; the model
 * writes lower case). */
void m_vol_name(const GUID *g, bool slash, wchar_t *out)
{
    swprintf(out, 50, L"\\\\?\\Volume{%08lx-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}%ls",
             (unsigned long)g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
             g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7], slash ? L"\\" : L"");
}

bool m_vol_parse(const wchar_t *s, GUID *g, bool *slash)
{
    if (wcsncmp(s, L"\\\\?\\Volume{", 11) != 0 || wcslen(s) < 48)
        return false;
    unsigned long d1;
    unsigned d2, d3, b[8];
    if (swscanf(s + 11, L"%8lx-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x", &d1, &d2, &d3, &b[0], &b[1],
                &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]) != 11 ||
        s[47] != L'}')
        return false;
    if (s[48] != L'\0' && !(s[48] == L'\\' && s[49] == L'\0'))
        return false;
    g->Data1 = d1;
    g->Data2 = (unsigned short)d2;
    g->Data3 = (unsigned short)d3;
    for (int i = 0; i < 8; i++)
        g->Data4[i] = (unsigned char)b[i];
    *slash = s[48] == L'\\';
    return true;
}

static const GUID basic_guid = {
    0xebd0a0a2, 0xb9e5, 0x4433, {0x87, 0xc0, 0x68, 0xb6, 0xb7, 0x26, 0x99, 0xc7}};
static const GUID esp = {
    0xc12a7328, 0xf81f, 0x11d2, {0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b}};
static const GUID recovery = {
    0xde94bba4, 0x06d1, 0x4d40, {0xa1, 0x6a, 0xbf, 0xd5, 0x01, 0x79, 0xd6, 0xac}};

/* Doc: "PARTITION_INFORMATION_GPT structure" lists the GPT partition
 * types (basic data, EFI system, Microsoft reserved, LDM, recovery) and
 * "Disk Partition Types" the MBR ones. Undocumented: which types get a
 * volume device (the model: basic data, EFI system and recovery on GPT,
 * every used MBR type but extended; the MSR none). */
bool m_part_has_volume(const m_disk *d, const PARTITION_INFORMATION_EX *pi)
{
    if (d->style == PARTITION_STYLE_GPT)
        return IsEqualGUID(&pi->Gpt.PartitionType, &basic_guid) ||
               IsEqualGUID(&pi->Gpt.PartitionType, &esp) ||
               IsEqualGUID(&pi->Gpt.PartitionType, &recovery);
    return pi->Mbr.PartitionType != PARTITION_ENTRY_UNUSED &&
           pi->Mbr.PartitionType != PARTITION_EXTENDED;
}

/* UEFI specification (GPT disk layout; not a Microsoft page): the primary
 * header at LBA 1 and at least 16 KiB of entries (128 x 128 bytes) before
 * the first usable LBA; the backup entries and header after the last one.
 * "DRIVE_LAYOUT_INFORMATION_GPT structure" (ntdddisk.h): StartingUsableOffset
 * is "immediately following the primary partition table". Undocumented:
 * that Windows writes exactly 128 entries (the model does). */
void m_gpt_usable(m_disk *d)
{
    uint64_t entries = (128 * 128 + d->sector - 1) / d->sector;
    d->usable_start = (2 + entries) * d->sector;
    uint64_t tail = (1 + entries) * d->sector;
    d->usable_len = d->length > d->usable_start + tail ? d->length - d->usable_start - tail : 0;
}

void m_came_online(m_disk *d)
{
    ULONGLONG at = GetTickCount64() + m_model.arrival_ms;
    for (size_t i = 0; i < d->n_parts; i++)
        if (d->parts[i].vol.exists)
            d->parts[i].vol.appears_at = at;
}

/* Undocumented: the exact size NTFS reports for a partition (its boot
 * sector backup, the cluster rounding). The model: whole 4 KiB clusters. */
uint64_t m_fs_size(uint64_t bytes)
{
    return bytes / 4096 * 4096;
}

/* --- WMI at the operation level (storage_calls_win.h) ------------------------ */

/* MSFT_StorageSetting.UpdateHostStorageCache. Doc: "UpdateHostStorageCache
 * method of the MSFT_StorageSetting class": "Updates the internal cache of
 * software objects (that is, Disks, Partitions, Volumes) for the storage
 * setting"; "Update-HostStorageCache": "equivalent to a VDS Rescan".
 * Undocumented: that it is what makes a disk grown by the cloud show its
 * new capacity; the model grows disks with grow_to here, and the disk
 * driver keeps reporting the old length until IOCTL_DISK_UPDATE_DRIVE_SIZE
 * (model_ioctl.c). */
int m_update_host_storage_cache(struct cp_wmi_conn *c, cp_error *e)
{
    (void)c;
    (void)e;
    M_LOCK();
    for (size_t i = 0; i < m_model.n_disks; i++) {
        m_disk *d = &m_model.disks[i];
        if (d->grow_to > d->media) {
            m_trace("rescan: disk %u grows %llu -> %llu", d->number, (unsigned long long)d->media,
                    (unsigned long long)d->grow_to);
            d->media = d->grow_to;
            d->grow_to = 0;
        }
    }
    M_UNLOCK();
    return CP_OK;
}

/* A disk whose WMI operations fail (fixture wmi_fails): the Storage
 * Management provider cannot serve it, as when the services behind it
 * (the defragmentation service behind MSFT_Partition.GetSupportedSize
 * and Resize) are disabled. Doc: "WMI Error Constants": WBEM_E_FAILED
 * 0x80041001. */
static int wmi_down(cp_error *e, const char *what, const char *object)
{
    return cp_error_set(e, CP_E_UNAVAILABLE, "WMI: %s %s: HRESULT 0x80041001 (WBEM_E_FAILED)", what,
                        object);
}

/* MSFT_Volume.Format (NTFS, quick, forced). Doc: "Format method of the
 * MSFT_Volume class": ReturnValue 0 success. A volume that is not there
 * is not found by the query on UniqueId (the real operation says so after
 * refreshing the cache). Undocumented: the bytes NTFS's metadata takes on
 * a fresh volume; the model says 1% (at most 64 MiB). */
int m_format_volume(struct cp_wmi_conn *c, const char *id, cp_error *e)
{
    (void)c;
    wchar_t wid[64];
    size_t n = strlen(id);
    for (size_t i = 0; i <= n && i < 63; i++)
        wid[i] = (wchar_t)(unsigned char)id[i];
    wid[63] = L'\0';
    GUID g;
    bool slash;
    m_disk *d;
    size_t p;
    int rc = CP_OK;
    M_LOCK();
    if (!m_vol_parse(wid, &g, &slash) || !m_vol_find(&g, &d, &p)) {
        rc = cp_error_set(e, CP_E_NOT_FOUND,
                          "volume %s not found (MSFT_Volume, after updating the host storage "
                          "cache)",
                          id);
    } else if (d->wmi_fails) {
        rc = wmi_down(e, "MSFT_Volume.Format", id);
    } else if (d->read_only || d->write_protected) {
        /* Doc: "Format method of the MSFT_Volume class" return values:
         * Success (0), Not Supported (1), Unspecified Error (2), Timeout
         * (3), Failed (4), Invalid Parameter (5), Access denied (40001),
         * ... Undocumented: which one a write-protected disk gets (the
         * model: Failed (4)). */
        rc = cp_error_set(e, CP_E_UNKNOWN, "WMI: MSFT_Volume.Format %s returned %lu", id, 4ul);
    } else {
        m_vol *v = &d->parts[p].vol;
        snprintf(v->fs, sizeof(v->fs), "NTFS");
        v->fs_size = m_fs_size((uint64_t)d->parts[p].pi.PartitionLength.QuadPart);
        v->used = v->fs_size / 100 < 64 * M_MIB ? v->fs_size / 100 : 64 * M_MIB;
        v->head = NULL; /* NTFS's boot sector and metadata replace what was there */
        v->head_len = 0;
        m_trace("format: %s NTFS %llu bytes", id, (unsigned long long)v->fs_size);
    }
    M_UNLOCK();
    return rc;
}

/* MSFT_Disk.Online. Doc: "Online method of the MSFT_Disk class": "Brings
 * the disk online" (ReturnValue 0 success). "VDS_DISK_OFFLINE_REASON
 * enumeration": VDSDiskOfflineReasonCollision, an MBR disk whose signature
 * or a GPT disk whose DiskId is that of another disk. Undocumented: that
 * Online gives such a disk new identifiers (the model changes its
 * signature and DiskId; to confirm on a node). */
int m_disk_online(struct cp_wmi_conn *c, uint32_t number, cp_error *e)
{
    (void)c;
    int rc = CP_OK;
    M_LOCK();
    m_disk *d = m_disk_by_number(number, false);
    if (d == NULL) {
        rc = cp_error_set(e, CP_E_NOT_FOUND, "disk %u not found (MSFT_Disk)", (unsigned)number);
    } else if (d->wmi_fails) {
        char obj[32];
        snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
        rc = wmi_down(e, "MSFT_Disk.Online", obj);
    } else if (d->offline) {
        if (d->collision) {
            d->collision = false;
            d->signature ^= 0x5a5a0000u;
            d->disk_id.Data1 ^= 0x5a5a0000u;
        }
        d->offline = false;
        m_came_online(d);
        m_trace("MSFT_Disk.Online: disk %u online", (unsigned)number);
    }
    M_UNLOCK();
    return rc;
}
