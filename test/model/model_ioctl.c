/* model_ioctl.c - DeviceIoControl of the device model (model.h) on disk
 * and volume handles: every IOCTL and FSCTL the Win32 storage host uses,
 * plus IOCTL_DISK_GET_DRIVE_GEOMETRY_EX. Structure sizes and buffer rules
 * follow the control code's pages on Microsoft Learn, named per case: the
 * Win32 page (learn.microsoft.com/windows/win32/api/winioctl/...) and,
 * where that one is silent, the driver page of the same code
 * (learn.microsoft.com/windows-hardware/drivers/ddi/ntdddisk|ntddstor|
 * ntddvol|ntddscsi/...), whose NTSTATUS values reach the caller as Win32
 * errors: STATUS_BUFFER_TOO_SMALL ERROR_INSUFFICIENT_BUFFER,
 * STATUS_INFO_LENGTH_MISMATCH ERROR_BAD_LENGTH, STATUS_BUFFER_OVERFLOW
 * ERROR_MORE_DATA, STATUS_INVALID_PARAMETER ERROR_INVALID_PARAMETER,
 * STATUS_NOT_SUPPORTED ERROR_NOT_SUPPORTED. Checked against the docs in
 * the fix-cite review; what no page says is marked "Undocumented". The
 * access a code needs is checked as the I/O manager does (the
 * RequiredAccess bits of CTL_CODE against the handle's access;
 * Undocumented which error: the model says ERROR_ACCESS_DENIED). */
#include "test/model/model.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static BOOL fail(DWORD err)
{
    SetLastError(err);
    return FALSE;
}

/* Copies n bytes out, or ERROR_INSUFFICIENT_BUFFER when they do not fit.
 * Doc: "DeviceIoControl function", lpBytesReturned: "If the output buffer
 * is too small, the call fails, GetLastError returns
 * ERROR_INSUFFICIENT_BUFFER, and lpBytesReturned is zero"; the driver
 * pages of IOCTL_DISK_GET_LENGTH_INFO and IOCTL_DISK_UPDATE_DRIVE_SIZE say
 * STATUS_BUFFER_TOO_SMALL. Undocumented for IOCTL_STORAGE_GET_DEVICE_NUMBER,
 * IOCTL_DISK_GET_DISK_ATTRIBUTES and IOCTL_SCSI_GET_ADDRESS (their pages
 * give the minimum size, not the error), and IOCTL_DISK_GET_DRIVE_GEOMETRY
 * may also answer STATUS_INFO_LENGTH_MISMATCH (ERROR_BAD_LENGTH). */
static BOOL put(void *out, DWORD outlen, const void *src, DWORD n, LPDWORD ret)
{
    if (out == NULL || outlen < n)
        return fail(ERROR_INSUFFICIENT_BUFFER);
    memcpy(out, src, n);
    if (ret != NULL)
        *ret = n;
    return TRUE;
}

static uint64_t part_end(const m_part *p)
{
    return (uint64_t)p->pi.StartingOffset.QuadPart + (uint64_t)p->pi.PartitionLength.QuadPart;
}

/* "DRIVE_LAYOUT_INFORMATION_EX structure" (Win32): PartitionCount entries
 * after the header; "On hard disks with the MBR layout, this value will
 * always be a multiple of 4" (the unused entries have PARTITION_ENTRY_UNUSED).
 * "IOCTL_DISK_GET_DRIVE_LAYOUT_EX IOCTL (ntdddisk.h)": the buffer "must be
 * >= sizeof(DRIVE_LAYOUT_INFORMATION_EX)"; the caller "should send this
 * IOCTL request in a loop", doubling the buffer while it is rejected as too
 * small; Status "STATUS_SUCCESS, or possibly ... STATUS_INFO_LENGTH_MISMATCH,
 * STATUS_INSUFFICIENT_RESOURCES, or STATUS_BUFFER_TOO_SMALL". Undocumented:
 * which of ERROR_INSUFFICIENT_BUFFER and ERROR_BAD_LENGTH a too-small
 * buffer gets (the model: ERROR_INSUFFICIENT_BUFFER; the host grows the
 * buffer on either). */
static BOOL get_layout(m_disk *d, void *out, DWORD outlen, LPDWORD ret)
{
    DWORD count = (DWORD)d->n_parts;
    if (d->style == PARTITION_STYLE_MBR)
        count = count < 4 ? 4 : (count + 3) / 4 * 4;
    if (d->style == PARTITION_STYLE_RAW)
        count = 0;
    DWORD size = (DWORD)(offsetof(DRIVE_LAYOUT_INFORMATION_EX, PartitionEntry) +
                         (count > 0 ? count : 1) * sizeof(PARTITION_INFORMATION_EX));
    if (out == NULL || outlen < size)
        return fail(ERROR_INSUFFICIENT_BUFFER);
    DRIVE_LAYOUT_INFORMATION_EX *l = out;
    memset(l, 0, size);
    l->PartitionStyle = d->style;
    l->PartitionCount = count;
    if (d->style == PARTITION_STYLE_GPT) {
        l->Gpt.DiskId = d->disk_id;
        l->Gpt.StartingUsableOffset.QuadPart = (LONGLONG)d->usable_start;
        l->Gpt.UsableLength.QuadPart = (LONGLONG)d->usable_len;
        l->Gpt.MaxPartitionCount = 128;
    } else if (d->style == PARTITION_STYLE_MBR) {
        l->Mbr.Signature = d->signature;
    }
    for (DWORD i = 0; i < count; i++) {
        if (i < d->n_parts)
            l->PartitionEntry[i] = d->parts[i].pi;
        else
            l->PartitionEntry[i].PartitionStyle = PARTITION_STYLE_MBR;
    }
    if (ret != NULL)
        *ret = size;
    return TRUE;
}

static bool used(DWORD style, const PARTITION_INFORMATION_EX *p)
{
    if (p->PartitionLength.QuadPart <= 0)
        return false;
    if (style == PARTITION_STYLE_GPT) {
        static const GUID none;
        return !IsEqualGUID(&p->Gpt.PartitionType, &none);
    }
    return p->Mbr.PartitionType != PARTITION_ENTRY_UNUSED;
}

/* "IOCTL_DISK_SET_DRIVE_LAYOUT_EX IOCTL (ntdddisk.h)": "Repartitions a
 * disk as specified"; the input "must be >= sizeof(DRIVE_LAYOUT_INFORMATION_EX)";
 * Status "possibly ... STATUS_INVALID_PARAMETER, STATUS_INFO_LENGTH_MISMATCH
 * ...". Undocumented: which error a short input or a bad table gets (the
 * model: ERROR_INVALID_PARAMETER for both; a bad table is one whose
 * partitions are off sector boundaries, outside the usable area or
 * overlapping). Undocumented: (1) that the partition
 * style cannot change here (the model: ERROR_INVALID_PARAMETER; CREATE_DISK
 * changes it); (2) how Windows numbers the partitions of the new table (the
 * model: 1, 2, ... in table order over the used entries); (3) that on a GPT
 * disk the usable area is recomputed from the length the disk driver
 * reports, which moves the backup table to the end of a grown disk (the
 * model does, ignoring the input's UsableLength); (4) when the volume of a
 * new partition arrives (the model: volume_arrival_ms after this call). */
static BOOL set_layout(m_disk *d, const void *in, DWORD inlen)
{
    const size_t hdr = offsetof(DRIVE_LAYOUT_INFORMATION_EX, PartitionEntry);
    const DRIVE_LAYOUT_INFORMATION_EX *l = in;
    if (in == NULL || inlen < sizeof(DRIVE_LAYOUT_INFORMATION_EX) || l->PartitionCount > 128 ||
        inlen < hdr + l->PartitionCount * sizeof(PARTITION_INFORMATION_EX))
        return fail(ERROR_INVALID_PARAMETER);
    if (l->PartitionStyle != d->style || d->style == PARTITION_STYLE_RAW)
        return fail(ERROR_INVALID_PARAMETER);
    if (d->style == PARTITION_STYLE_GPT)
        m_gpt_usable(d);
    uint64_t lo = d->style == PARTITION_STYLE_GPT ? d->usable_start : d->sector;
    uint64_t hi = d->style == PARTITION_STYLE_GPT ? d->usable_start + d->usable_len : d->length;
    m_part np[M_MAX_PARTS];
    memset(np, 0, sizeof(np));
    size_t k = 0;
    for (DWORD i = 0; i < l->PartitionCount; i++) {
        const PARTITION_INFORMATION_EX *p = &l->PartitionEntry[i];
        if (!used(d->style, p))
            continue;
        uint64_t off = (uint64_t)p->StartingOffset.QuadPart,
                 len = (uint64_t)p->PartitionLength.QuadPart;
        if (k == M_MAX_PARTS || (d->style == PARTITION_STYLE_MBR && k == 4) ||
            off % d->sector != 0 || len % d->sector != 0 || off < lo || off + len > hi)
            return fail(ERROR_INVALID_PARAMETER);
        for (size_t j = 0; j < k; j++)
            if (off < part_end(&np[j]) && (uint64_t)np[j].pi.StartingOffset.QuadPart < off + len)
                return fail(ERROR_INVALID_PARAMETER);
        memset(&np[k], 0, sizeof(np[k]));
        np[k].pi = *p;
        np[k].pi.PartitionStyle = d->style;
        np[k].pi.PartitionNumber = (DWORD)k + 1;
        np[k].pi.RewritePartition = FALSE;
        if (d->style == PARTITION_STYLE_MBR)
            np[k].pi.Mbr.RecognizedPartition = TRUE;
        bool kept = false;
        for (size_t j = 0; j < d->n_parts && !kept; j++)
            if (d->parts[j].pi.StartingOffset.QuadPart == p->StartingOffset.QuadPart &&
                d->parts[j].vol.exists) {
                np[k].vol = d->parts[j].vol;
                kept = true;
            }
        if (!kept && m_part_has_volume(d, p)) {
            m_vol *v = &np[k].vol;
            v->exists = true;
            v->guid.Data1 = 0x5157d15c;
            v->guid.Data2 = (unsigned short)d->number;
            v->guid.Data3 = 0x4000;
            v->guid.Data4[0] = 0x80;
            v->guid.Data4[7] = (unsigned char)(k + 1);
            v->appears_at = GetTickCount64() + m_model.arrival_ms;
            m_trace("disk %u: partition %u created, its volume arrives in %u ms", d->number,
                    (unsigned)k + 1, m_model.arrival_ms);
        }
        k++;
    }
    memcpy(d->parts, np, k * sizeof(np[0]));
    d->n_parts = k;
    return TRUE;
}

/* "IOCTL_DISK_CREATE_DISK IOCTL (ntdddisk.h)", "CREATE_DISK structure":
 * initializes the disk with an empty table of the given style (GPT: its
 * DiskId; the usable area per the UEFI layout, model_state.c). The input
 * "must be >= sizeof(CREATE_DISK). Otherwise, the driver returns with an
 * error status of STATUS_INFO_LENGTH_MISMATCH" (ERROR_BAD_LENGTH);
 * "STATUS_NOT_SUPPORTED if the partition style requested is not
 * supported" (ERROR_NOT_SUPPORTED). Undocumented: whether PARTITION_STYLE_RAW
 * is accepted here (the model accepts it and empties the table). */
static BOOL create_disk(m_disk *d, const void *in, DWORD inlen)
{
    const CREATE_DISK *c = in;
    if (in == NULL || inlen < sizeof(CREATE_DISK))
        return fail(ERROR_BAD_LENGTH);
    if (c->PartitionStyle == PARTITION_STYLE_GPT) {
        d->disk_id = c->Gpt.DiskId;
        m_gpt_usable(d);
    } else if (c->PartitionStyle == PARTITION_STYLE_MBR) {
        d->signature = c->Mbr.Signature;
    } else if (c->PartitionStyle != PARTITION_STYLE_RAW) {
        return fail(ERROR_NOT_SUPPORTED);
    }
    d->style = c->PartitionStyle;
    d->n_parts = 0;
    return TRUE;
}

/* "IOCTL_DISK_GROW_PARTITION IOCTL (ntdddisk.h)", "DISK_GROW_PARTITION
 * structure": enlarges partition PartitionNumber by BytesToGrow ("not the
 * new size") into the free space after it: "the space after the specified
 * partition must be free. A partition cannot be extended over another
 * existing partition". The input "must be >= sizeof(DISK_GROW_PARTITION).
 * Otherwise, the driver returns with an error status of
 * STATUS_BUFFER_TOO_SMALL" (ERROR_INSUFFICIENT_BUFFER). Status otherwise
 * "possibly ... STATUS_INVALID_PARAMETER, STATUS_UNSUCCESSFUL, or
 * STATUS_DRIVER_INTERNAL_ERROR". Undocumented: which one when the space is
 * not there (another partition, the end of the GPT usable area as last
 * written, the end of the disk the driver reports), for an unknown
 * partition number or a size off the sector size: the model says
 * ERROR_INVALID_PARAMETER. */
static BOOL grow_partition(m_disk *d, const void *in, DWORD inlen)
{
    const DISK_GROW_PARTITION *g = in;
    if (in == NULL || inlen < sizeof(*g))
        return fail(ERROR_INSUFFICIENT_BUFFER);
    if (g->BytesToGrow.QuadPart < 0 || (uint64_t)g->BytesToGrow.QuadPart % d->sector != 0)
        return fail(ERROR_INVALID_PARAMETER);
    m_part *me = NULL;
    for (size_t i = 0; i < d->n_parts; i++)
        if (d->parts[i].pi.PartitionNumber == g->PartitionNumber)
            me = &d->parts[i];
    if (me == NULL)
        return fail(ERROR_INVALID_PARAMETER);
    uint64_t hi = d->style == PARTITION_STYLE_GPT ? d->usable_start + d->usable_len : d->length;
    uint64_t end = part_end(me) + (uint64_t)g->BytesToGrow.QuadPart;
    for (size_t i = 0; i < d->n_parts; i++)
        if (&d->parts[i] != me &&
            (uint64_t)d->parts[i].pi.StartingOffset.QuadPart >= part_end(me) &&
            (uint64_t)d->parts[i].pi.StartingOffset.QuadPart < hi)
            hi = (uint64_t)d->parts[i].pi.StartingOffset.QuadPart;
    if (end > hi)
        return fail(ERROR_INVALID_PARAMETER);
    me->pi.PartitionLength.QuadPart += g->BytesToGrow.QuadPart;
    return TRUE;
}

static BOOL disk_geometry(const m_disk *d, void *out, DWORD outlen, LPDWORD ret, bool ex)
{
    DISK_GEOMETRY_EX gx;
    memset(&gx, 0, sizeof(gx));
    gx.Geometry.MediaType = d->cdrom ? RemovableMedia : FixedMedia;
    gx.Geometry.TracksPerCylinder = 255;
    gx.Geometry.SectorsPerTrack = 63;
    gx.Geometry.BytesPerSector = d->sector;
    gx.Geometry.Cylinders.QuadPart = (LONGLONG)(d->length / (255ull * 63 * d->sector));
    gx.DiskSize.QuadPart = (LONGLONG)d->length;
    /* "DISK_GEOMETRY_EX structure": Geometry and DiskSize are the fixed
     * part; Data (partition and detection information) may follow.
     * "IOCTL_DISK_GET_DRIVE_GEOMETRY_EX IOCTL (ntdddisk.h)": the buffer
     * "must be at least (sizeof(DISK_GEOMETRY) + sizeof(LARGE_INTEGER))";
     * the model returns just that part. */
    if (ex)
        return put(out, outlen, &gx, (DWORD)offsetof(DISK_GEOMETRY_EX, Data), ret);
    return put(out, outlen, &gx.Geometry, sizeof(DISK_GEOMETRY), ret);
}

/* "IOCTL_STORAGE_QUERY_PROPERTY IOCTL (ntddstor.h)": the input "must be
 * >= sizeof(STORAGE_PROPERTY_QUERY)"; the caller casts the output to a
 * STORAGE_DESCRIPTOR_HEADER "and check[s] its Size member to determine the
 * number of bytes the structure actually requires" (so a buffer of at
 * least the header gets as much of the descriptor as fits); Status
 * "STATUS_SUCCESS, or possibly ... STATUS_INVALID_DEVICE_REQUEST,
 * STATUS_INVALID_PARAMETER, or STATUS_NOT_SUPPORTED". "STORAGE_PROPERTY_QUERY
 * structure": PropertyExistsQuery returns no structure. Undocumented: (1)
 * the error for an output smaller than the header (the model:
 * ERROR_INSUFFICIENT_BUFFER); (2) which of the listed errors a disk with
 * no such descriptor (no device identification page) gets (the model:
 * ERROR_NOT_SUPPORTED); (3) which one a short input gets (the model:
 * ERROR_INVALID_PARAMETER). */
static BOOL query_property(const m_disk *d, const void *in, DWORD inlen, void *out, DWORD outlen,
                           LPDWORD ret)
{
    const STORAGE_PROPERTY_QUERY *q = in;
    if (in == NULL || inlen < sizeof(STORAGE_PROPERTY_QUERY))
        return fail(ERROR_INVALID_PARAMETER);
    const uint8_t *desc;
    size_t len;
    if (q->PropertyId == StorageDeviceProperty)
        desc = d->dev, len = d->dev_len;
    else if (q->PropertyId == StorageDeviceIdProperty)
        desc = d->id, len = d->id_len;
    else
        return fail(ERROR_NOT_SUPPORTED);
    if (len == 0)
        return fail(ERROR_NOT_SUPPORTED);
    if (q->QueryType == PropertyExistsQuery) {
        if (ret != NULL)
            *ret = 0;
        return TRUE;
    }
    if (q->QueryType != PropertyStandardQuery)
        return fail(ERROR_INVALID_PARAMETER);
    if (out == NULL || outlen < sizeof(STORAGE_DESCRIPTOR_HEADER))
        return fail(ERROR_INSUFFICIENT_BUFFER);
    DWORD n = (DWORD)(len < outlen ? len : outlen);
    memcpy(out, desc, n);
    if (ret != NULL)
        *ret = n;
    return TRUE;
}

/* "IOCTL_DISK_SET_DISK_ATTRIBUTES IOCTL", "SET_DISK_ATTRIBUTES structure":
 * the bits of AttributesMask ("Indicates which attributes are being
 * changed") are set to Attributes. Version: the page says "Set to
 * sizeof(GET_DISK_ATTRIBUTES)" (16) while every public caller passes
 * sizeof(SET_DISK_ATTRIBUTES) (40), as the Win32 host does. Undocumented:
 * which one Windows checks, and the error for another value: the model
 * accepts both and answers ERROR_INVALID_PARAMETER otherwise (to confirm
 * on a node). Undocumented: that clearing DISK_ATTRIBUTE_OFFLINE
 * leaves offline a disk Windows keeps offline for a collision (the Win32
 * host assumes so; the model does: only MSFT_Disk.Online gives it new
 * identifiers and brings it online). */
static BOOL set_attributes(m_disk *d, const void *in, DWORD inlen)
{
    const m_set_attrs *s = in;
    if (in == NULL || inlen < sizeof(*s) ||
        (s->Version != sizeof(*s) && s->Version != sizeof(m_get_attrs)))
        return fail(ERROR_INVALID_PARAMETER);
    /* Undocumented: what clearing DISK_ATTRIBUTE_READ_ONLY does on media
     * write-protected at the hardware (the model: the attribute clears,
     * the media stays protected: IOCTL_DISK_IS_WRITABLE still fails). */
    if (s->AttributesMask & M_ATTR_OFFLINE) {
        bool off = (s->Attributes & M_ATTR_OFFLINE) != 0;
        if (off)
            d->offline = true;
        else if (d->offline && !d->collision) {
            d->offline = false;
            m_came_online(d);
        }
    }
    if (s->AttributesMask & M_ATTR_READ_ONLY)
        d->read_only = (s->Attributes & M_ATTR_READ_ONLY) != 0;
    return TRUE;
}

/* Codes on \\.\PhysicalDriveN (and \\.\CdRomN). Writes to an offline or
 * read-only disk fail. Undocumented: with which error (the model:
 * ERROR_WRITE_PROTECT, "The media is write protected"). */
static BOOL disk_ioctl(m_disk *d, DWORD code, LPVOID in, DWORD inlen, LPVOID out, DWORD outlen,
                       LPDWORD ret)
{
    bool writes = code == IOCTL_DISK_SET_DRIVE_LAYOUT_EX || code == IOCTL_DISK_CREATE_DISK ||
                  code == IOCTL_DISK_GROW_PARTITION;
    if (writes && (d->offline || d->read_only || d->write_protected))
        return fail(ERROR_WRITE_PROTECT);
    switch (code) {
    case IOCTL_STORAGE_GET_DEVICE_NUMBER: {
        /* "STORAGE_DEVICE_NUMBER structure": DeviceType a FILE_DEVICE_*
         * value, DeviceNumber "The number of this device", PartitionNumber
         * "-1" when "the device can[not] be partitioned". Undocumented:
         * that DeviceNumber is the N of PhysicalDriveN / CdRomN and that
         * the whole disk answers PartitionNumber 0 (the model does). */
        STORAGE_DEVICE_NUMBER n = {d->cdrom ? FILE_DEVICE_CD_ROM : FILE_DEVICE_DISK, d->number,
                                   d->cdrom ? (DWORD)-1 : 0};
        return put(out, outlen, &n, sizeof(n), ret);
    }
    case IOCTL_DISK_GET_LENGTH_INFO: { /* "GET_LENGTH_INFORMATION structure" */
        GET_LENGTH_INFORMATION g = {{.QuadPart = (LONGLONG)d->length}};
        return put(out, outlen, &g, sizeof(g), ret);
    }
    case IOCTL_DISK_GET_DRIVE_GEOMETRY:
        return disk_geometry(d, out, outlen, ret, false);
    case IOCTL_DISK_GET_DRIVE_GEOMETRY_EX:
        return disk_geometry(d, out, outlen, ret, true);
    case IOCTL_DISK_UPDATE_DRIVE_SIZE:
        /* "IOCTL_DISK_UPDATE_DRIVE_SIZE IOCTL": "Updates device extension
         * with drive size information for current media"; returns the
         * DISK_GEOMETRY. Until then the driver reports the old length. */
        if (d->length != d->media)
            m_trace("disk %u: drive size %llu -> %llu", d->number, (unsigned long long)d->length,
                    (unsigned long long)d->media);
        d->length = d->media;
        return disk_geometry(d, out, outlen, ret, false);
    case IOCTL_DISK_GET_DISK_ATTRIBUTES: {
        /* "GET_DISK_ATTRIBUTES structure": Version "sizeof(GET_DISK_ATTRIBUTES)",
         * DISK_ATTRIBUTE_OFFLINE 0x1, DISK_ATTRIBUTE_READ_ONLY 0x2. */
        m_get_attrs a = {sizeof(a), 0,
                         (d->offline ? M_ATTR_OFFLINE : 0) | (d->read_only ? M_ATTR_READ_ONLY : 0)};
        return put(out, outlen, &a, sizeof(a), ret);
    }
    case IOCTL_DISK_SET_DISK_ATTRIBUTES:
        return set_attributes(d, in, inlen);
    case IOCTL_DISK_IS_WRITABLE:
        /* "IOCTL_DISK_IS_WRITABLE IOCTL (ntdddisk.h)": no buffers; Status
         * STATUS_SUCCESS or "STATUS_MEDIA_WRITE_PROTECTED"
         * (ERROR_WRITE_PROTECT). Undocumented: whether the
         * DISK_ATTRIBUTE_READ_ONLY attribute also makes it fail (the
         * model: it does, so the host judges the media only while the
         * attribute is clear). */
        if (d->write_protected || d->read_only)
            return fail(ERROR_WRITE_PROTECT);
        return TRUE;
    case IOCTL_DISK_UPDATE_PROPERTIES:
        /* "IOCTL_DISK_UPDATE_PROPERTIES IOCTL": "Invalidates the cached
         * partition table and re-enumerates the device". */
        return TRUE;
    case IOCTL_DISK_GET_DRIVE_LAYOUT_EX:
        return get_layout(d, out, outlen, ret);
    case IOCTL_DISK_SET_DRIVE_LAYOUT_EX:
        return set_layout(d, in, inlen);
    case IOCTL_DISK_CREATE_DISK:
        return create_disk(d, in, inlen);
    case IOCTL_DISK_GROW_PARTITION:
        return grow_partition(d, in, inlen);
    case IOCTL_STORAGE_QUERY_PROPERTY:
        return query_property(d, in, inlen, out, outlen, ret);
    case IOCTL_SCSI_GET_ADDRESS: {
        /* "IOCTL_SCSI_GET_ADDRESS IOCTL (ntddscsi.h)": output ">=
         * sizeof(SCSI_ADDRESS)"; "SCSI_ADDRESS structure": Length "the
         * length of this structure in bytes". Undocumented: the error of a
         * disk with no SCSI address (the model: ERROR_INVALID_FUNCTION). */
        if (!d->has_scsi)
            return fail(ERROR_INVALID_FUNCTION);
        return put(out, outlen, &d->scsi, sizeof(d->scsi), ret);
    }
    default:
        return fail(ERROR_INVALID_FUNCTION);
    }
}

/* Codes on \\?\Volume{GUID}. */
static BOOL volume_ioctl(m_disk *d, size_t part, DWORD code, LPVOID in, DWORD inlen, LPVOID out,
                         DWORD outlen, LPDWORD ret)
{
    m_part *p = &d->parts[part];
    switch (code) {
    case IOCTL_STORAGE_GET_DEVICE_NUMBER: {
        STORAGE_DEVICE_NUMBER n = {d->cdrom ? FILE_DEVICE_CD_ROM : FILE_DEVICE_DISK, d->number,
                                   d->cdrom ? (DWORD)-1 : p->pi.PartitionNumber};
        return put(out, outlen, &n, sizeof(n), ret);
    }
    case IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS: {
        /* "IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS IOCTL (ntddvol.h)": a
         * buffer "< sizeof(VOLUME_DISK_EXTENTS)": Information 0 and
         * STATUS_INVALID_PARAMETER (ERROR_INVALID_PARAMETER); "at least
         * sizeof(VOLUME_DISK_EXTENTS) but too small for all data":
         * Information sizeof(VOLUME_DISK_EXTENTS) and STATUS_BUFFER_OVERFLOW
         * (ERROR_MORE_DATA, the count filled in: "VOLUME_DISK_EXTENTS
         * structure"). A basic volume has one extent, which
         * sizeof(VOLUME_DISK_EXTENTS) holds, so the model never answers
         * ERROR_MORE_DATA. Undocumented: what a CD-ROM volume answers (the
         * model: ERROR_INVALID_FUNCTION). */
        if (d->cdrom)
            return fail(ERROR_INVALID_FUNCTION);
        VOLUME_DISK_EXTENTS x;
        memset(&x, 0, sizeof(x));
        x.NumberOfDiskExtents = 1;
        x.Extents[0].DiskNumber = d->number;
        x.Extents[0].StartingOffset = p->pi.StartingOffset;
        x.Extents[0].ExtentLength = p->pi.PartitionLength;
        if (out == NULL || outlen < sizeof(x))
            return fail(ERROR_INVALID_PARAMETER);
        return put(out, outlen, &x, sizeof(x), ret);
    }
    case IOCTL_DISK_GET_LENGTH_INFO: {
        GET_LENGTH_INFORMATION g = {{.QuadPart = p->pi.PartitionLength.QuadPart}};
        return put(out, outlen, &g, sizeof(g), ret);
    }
    case FSCTL_EXTEND_VOLUME: {
        /* "FSCTL_EXTEND_VOLUME control code" (MSDN aa364564): lpInBuffer
         * "A pointer to a LONGLONG value that specifies the total size of
         * the volume, in sectors". "FSCTL_EXTEND_VOLUME IOCTL": "supported
         * on NTFS, RAW, and ReFS file systems"; it "cannot be used to
         * reduce the size of a volume. The new volume size must be at least
         * one cluster larger than the previous volume size. The underlying
         * partition must have enough sectors to contain the extended
         * volume". Undocumented: the errors for a size beyond the partition
         * or less than a cluster larger (the model: ERROR_INVALID_PARAMETER)
         * and for a read-only disk (ERROR_WRITE_PROTECT); what extending a
         * RAW volume changes (the model: nothing, it succeeds). */
        if (in == NULL || inlen < sizeof(LONGLONG))
            return fail(ERROR_INVALID_PARAMETER);
        if (d->read_only)
            return fail(ERROR_WRITE_PROTECT);
        LONGLONG sectors = *(const LONGLONG *)in;
        uint64_t bytes = (uint64_t)sectors * d->sector;
        if (sectors <= 0 || bytes > (uint64_t)p->pi.PartitionLength.QuadPart)
            return fail(ERROR_INVALID_PARAMETER);
        if (p->vol.fs[0] == '\0')
            return TRUE;                              /* RAW */
        if (m_fs_size(bytes) < p->vol.fs_size + 4096) /* a 4 KiB cluster (m_fs_size) */
            return fail(ERROR_INVALID_PARAMETER);
        p->vol.fs_size = m_fs_size(bytes);
        return TRUE;
    }
    default:
        return fail(ERROR_INVALID_FUNCTION);
    }
}

BOOL WINAPI m_DeviceIoControl(HANDLE h, DWORD code, LPVOID in, DWORD inlen, LPVOID out,
                              DWORD outlen, LPDWORD ret, LPOVERLAPPED ov)
{
    (void)ov;
    m_handle *mh = m_handle_get(h);
    if (mh == NULL || (mh->kind != M_H_DISK && mh->kind != M_H_VOLUME))
        return fail(ERROR_INVALID_HANDLE);
    DWORD need = (code >> 14) & 3;
    if (((need & FILE_READ_ACCESS) && !(mh->access & (GENERIC_READ | GENERIC_ALL))) ||
        ((need & FILE_WRITE_ACCESS) && !(mh->access & (GENERIC_WRITE | GENERIC_ALL)))) {
        m_trace("DeviceIoControl 0x%08lx: the handle lacks the access the code needs",
                (unsigned long)code);
        return fail(ERROR_ACCESS_DENIED);
    }
    if (ret != NULL)
        *ret = 0;
    M_LOCK();
    BOOL ok;
    m_disk *d = mh->disk;
    if (d->not_ready)
        ok = fail(ERROR_NOT_READY); /* "System Error Codes": the device is not ready */
    else if (mh->kind == M_H_DISK)
        ok = disk_ioctl(d, code, in, inlen, out, outlen, ret);
    else if (!m_vol_present(d, mh->part))
        /* Undocumented: what a handle to a volume that went away answers
         * (the model: ERROR_NO_SUCH_DEVICE). */
        ok = fail(ERROR_NO_SUCH_DEVICE);
    else
        ok = volume_ioctl(d, mh->part, code, in, inlen, out, outlen, ret);
    DWORD err = ok ? 0 : GetLastError();
    M_UNLOCK();
    m_trace("DeviceIoControl %s %u code 0x%08lx -> %s %lu",
            mh->kind == M_H_DISK ? "disk" : "volume", d->number, (unsigned long)code,
            ok ? "ok" : "error", (unsigned long)err);
    SetLastError(err);
    return ok;
}

/* "ReadFile function" on a volume handle (\\?\Volume{GUID}): the raw
 * volume from the handle's file pointer, which starts at 0 and moves by
 * what was read. "File Buffering": a volume handle may be noncached, and
 * then a read's size must be a whole number of sectors (the model
 * enforces it: ERROR_INVALID_PARAMETER; Undocumented which error Windows
 * gives). "When a synchronous read operation reaches the end of a file,
 * ReadFile returns TRUE and sets *lpNumberOfBytesRead to zero". The
 * handle needs GENERIC_READ (Doc: "CreateFileW function"; else
 * ERROR_ACCESS_DENIED). The bytes are the fixture's, zeros elsewhere; a
 * volume formatted since has none left of them (model_state.c). */
BOOL WINAPI m_ReadFile(HANDLE h, LPVOID buf, DWORD n, LPDWORD got, LPOVERLAPPED ov)
{
    m_handle *mh = m_handle_get(h);
    if (mh == NULL)
        return ReadFile(h, buf, n, got, ov);
    if (got != NULL)
        *got = 0;
    if (mh->kind != M_H_VOLUME || ov != NULL)
        return fail(ERROR_INVALID_HANDLE);
    if (!(mh->access & (GENERIC_READ | GENERIC_ALL)))
        return fail(ERROR_ACCESS_DENIED);
    M_LOCK();
    m_disk *d = mh->disk;
    BOOL ok = TRUE;
    DWORD err = 0;
    if (d->not_ready) {
        ok = FALSE, err = ERROR_NOT_READY;
    } else if (!m_vol_present(d, mh->part)) {
        ok = FALSE, err = ERROR_NO_SUCH_DEVICE;
    } else if (n % d->sector != 0) {
        ok = FALSE, err = ERROR_INVALID_PARAMETER;
    } else {
        const m_part *p = &d->parts[mh->part];
        uint64_t size = (uint64_t)p->pi.PartitionLength.QuadPart;
        uint64_t take = mh->off >= size ? 0 : size - mh->off < n ? size - mh->off : n;
        memset(buf, 0, (size_t)take);
        for (uint64_t i = 0; i < take; i++)
            if (p->vol.head != NULL && mh->off + i < p->vol.head_len)
                ((uint8_t *)buf)[i] = p->vol.head[mh->off + i];
        mh->off += take;
        if (got != NULL)
            *got = (DWORD)take;
    }
    M_UNLOCK();
    m_trace("ReadFile volume of disk %u: %lu bytes -> %s %lu", d->number, (unsigned long)n,
            ok ? "ok" : "error", (unsigned long)err);
    if (!ok)
        return fail(err);
    return TRUE;
}
