/* storage_attrs_win.c - the Win32 storage host's writability checks and
 * raw reads (see storage_win.c):
 *   DISK_ATTRIBUTE_READ_ONLY    read with IOCTL_DISK_GET_DISK_ATTRIBUTES,
 *                               cleared with IOCTL_DISK_SET_DISK_ATTRIBUTES
 *                               (SetDiskState(online) clears it in the same
 *                               call that clears offline, storage_win.c)
 *   write-protected media       IOCTL_DISK_IS_WRITABLE: the disk driver
 *                               answers STATUS_MEDIA_WRITE_PROTECTED
 *                               (ERROR_WRITE_PROTECT) for media no attribute
 *                               makes writable
 *   a volume's first bytes      ReadFile on the volume handle (the same
 *                               \\?\Volume{guid} path the host opens for
 *                               every volume call), for FormatVolume's
 *                               foreign file-system check
 */
#include "host/storage_win_internal.h"

#include <stdio.h>
#include <string.h>

/* "IOCTL_DISK_IS_WRITABLE IOCTL (ntdddisk.h)": Status STATUS_SUCCESS, or
 * "STATUS_INSUFFICIENT_RESOURCES, STATUS_IO_DEVICE_ERROR, or
 * STATUS_MEDIA_WRITE_PROTECTED" (ERROR_WRITE_PROTECT, "System Error Codes
 * (0-499)": "The media is write protected"). Only that last one says the
 * media is protected; a disk that cannot answer is taken as writable, as
 * a disk that cannot report its attributes is taken as online. */
static bool media_write_protected(HANDLE h)
{
    DWORD n;
    return !w32s_sc->DeviceIoControl(h, IOCTL_DISK_IS_WRITABLE, NULL, 0, NULL, 0, &n, NULL) &&
           GetLastError() == ERROR_WRITE_PROTECT;
}

/* "GET_DISK_ATTRIBUTES structure": DISK_ATTRIBUTE_READ_ONLY 0x2, "The disk
 * is read-only". Whether IOCTL_DISK_IS_WRITABLE also fails for that
 * attribute, or for an offline disk, is not documented: the media is
 * judged only on an online disk whose attribute is clear (an offline
 * one is judged when it is brought online, and put back offline when
 * its media is protected). */
void w32s_read_only(HANDLE h, bool online, bool *read_only, bool *write_protected)
{
    cp_get_disk_attributes attrs = {.Version = sizeof(attrs)};
    DWORD n;
    *read_only = w32s_sc->DeviceIoControl(h, IOCTL_DISK_GET_DISK_ATTRIBUTES, NULL, 0, &attrs,
                                          sizeof(attrs), &n, NULL) &&
                 (attrs.Attributes & DISK_ATTRIBUTE_READ_ONLY) != 0;
    *write_protected = online && !*read_only && media_write_protected(h);
}

/* Puts back DISK_ATTRIBUTE_OFFLINE (persisted) on a disk brought online
 * whose media turned out write-protected, so that the refused call
 * changes nothing. Best effort: the refusal is what the caller gets. */
void w32s_offline_again(HANDLE h)
{
    cp_set_disk_attributes s;
    memset(&s, 0, sizeof(s));
    s.Version = sizeof(s);
    s.Persist = TRUE;
    s.Attributes = DISK_ATTRIBUTE_OFFLINE;
    s.AttributesMask = DISK_ATTRIBUTE_OFFLINE;
    DWORD n;
    if (w32s_sc->DeviceIoControl(h, IOCTL_DISK_SET_DISK_ATTRIBUTES, &s, sizeof(s), NULL, 0, &n,
                                 NULL))
        w32s_sc->DeviceIoControl(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, &n, NULL);
}

int w32s_write_protected_error(uint32_t number, cp_error *e)
{
    return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                        "disk %u is write-protected at the hardware (the media is write "
                        "protected): it cannot be made writable",
                        (unsigned)number);
}

int w32s_need_writable_media(HANDLE h, uint32_t number, cp_error *e)
{
    return media_write_protected(h) ? w32s_write_protected_error(number, e) : CP_OK;
}

/* "IOCTL_DISK_SET_DISK_ATTRIBUTES IOCTL", "SET_DISK_ATTRIBUTES structure":
 * AttributesMask DISK_ATTRIBUTE_READ_ONLY ("The read-only attribute is
 * being changed"), Attributes 0, Persist TRUE ("these settings are
 * persisted across reboots"); then "IOCTL_DISK_UPDATE_PROPERTIES IOCTL" so
 * the partition manager sees it; then the media is judged. */
int w32_make_disk_writable(void *ctx, uint32_t number, cp_error *e)
{
    (void)ctx;
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    HANDLE h = w32s_open_disk(number, GENERIC_READ | GENERIC_WRITE, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    cp_set_disk_attributes s;
    memset(&s, 0, sizeof(s));
    s.Version = sizeof(s);
    s.Persist = TRUE;
    s.AttributesMask = DISK_ATTRIBUTE_READ_ONLY;
    int rc = CP_OK;
    DWORD n;
    if (!w32s_sc->DeviceIoControl(h, IOCTL_DISK_SET_DISK_ATTRIBUTES, &s, sizeof(s), NULL, 0, &n,
                                  NULL)) {
        DWORD err = GetLastError();
        rc = err == ERROR_WRITE_PROTECT
                 ? w32s_write_protected_error(number, e)
                 : cp_win_error(e, err, "IOCTL_DISK_SET_DISK_ATTRIBUTES", obj);
    }
    if (rc == CP_OK)
        rc = IOCTL(h, IOCTL_DISK_UPDATE_PROPERTIES, NULL, 0, NULL, 0, NULL, obj, e);
    if (rc == CP_OK)
        rc = w32s_need_writable_media(h, number, e);
    w32s_sc->CloseHandle(h);
    return rc;
}

#define HEAD_CHUNK (64u * 1024u)

/* "ReadFile function" on the volume handle, from offset 0 in 64 KiB
 * pieces. "File Buffering": a volume handle may be opened noncached "at
 * the discretion of the file system", so the reads are whole sectors (64
 * KiB is a multiple of every sector size) into page-aligned memory
 * (VirtualAlloc). "When a synchronous read operation reaches the end of a
 * file, ReadFile returns TRUE and sets *lpNumberOfBytesRead to zero": a
 * volume smaller than len ends the reading there; so does an error after
 * the first piece (the end of a device may answer one). */
int w32_read_volume_head(void *ctx, const char *id, uint8_t *buf, size_t len, size_t *got,
                         cp_error *e)
{
    (void)ctx;
    *got = 0;
    HANDLE h = w32s_open_volume(id, GENERIC_READ, e);
    if (h == INVALID_HANDLE_VALUE)
        return e->status;
    uint8_t *chunk = VirtualAlloc(NULL, HEAD_CHUNK, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
    int rc = chunk == NULL ? w32s_nomem(e) : CP_OK;
    while (rc == CP_OK && *got < len) {
        DWORD n = 0;
        if (!w32s_sc->ReadFile(h, chunk, HEAD_CHUNK, &n, NULL)) {
            DWORD err = GetLastError();
            if (*got == 0)
                rc = cp_win_error(e, err, "ReadFile", id);
            break;
        }
        size_t take = n < len - *got ? n : len - *got;
        memcpy(buf + *got, chunk, take);
        *got += take;
        if (n < HEAD_CHUNK)
            break;
    }
    if (chunk != NULL)
        VirtualFree(chunk, 0, MEM_RELEASE);
    w32s_sc->CloseHandle(h);
    return rc;
}
