/* storage_win_internal.h - what the Win32 storage host's files share
 * (storage_win.c: disks, errors, handles, the ops table;
 * storage_volume_win.c: partitions and volumes; storage_roles_win.c:
 * what Windows needs a volume for; storage_wmi_win.c: the
 * WMI operations; storage_calls_win.c: the real call table). Every call
 * to Windows about disks and volumes goes through w32s_sc (storage_calls_win.h). Windows build only; not for other
 * modules. */
#ifndef CP_WINAPI_STORAGE_WIN32_INTERNAL_H
#define CP_WINAPI_STORAGE_WIN32_INTERNAL_H

#define WIN32_LEAN_AND_MEAN
#define COBJMACROS
#include <windows.h>

#include <objbase.h>
#include <oleauto.h>
#include <wbemcli.h>
#include <winioctl.h>
#include <ntddscsi.h>

#include <stdbool.h>
#include <stdint.h>

#include "host/storage.h"
#include "host/storage_calls_win.h"
#include "host/storage_ids.h"
#include "base/winutil_win.h"
#include "host/wmi_win.h"

/* --- what mingw-w64 does not declare ------------------------------------ */

/* IOCTL_DISK_GET_DISK_ATTRIBUTES / IOCTL_DISK_SET_DISK_ATTRIBUTES and their
 * structures (ntddisk.h, Windows Driver Kit: "IOCTL_DISK_GET_DISK_ATTRIBUTES
 * IOCTL", "GET_DISK_ATTRIBUTES structure", "SET_DISK_ATTRIBUTES structure"). */
#ifndef IOCTL_DISK_GET_DISK_ATTRIBUTES
#define IOCTL_DISK_GET_DISK_ATTRIBUTES                                                             \
    CTL_CODE(IOCTL_DISK_BASE, 0x003c, METHOD_BUFFERED, FILE_ANY_ACCESS)
#endif
#ifndef IOCTL_DISK_SET_DISK_ATTRIBUTES
#define IOCTL_DISK_SET_DISK_ATTRIBUTES                                                             \
    CTL_CODE(IOCTL_DISK_BASE, 0x003d, METHOD_BUFFERED, FILE_READ_ACCESS | FILE_WRITE_ACCESS)
#endif
#ifndef DISK_ATTRIBUTE_OFFLINE
#define DISK_ATTRIBUTE_OFFLINE 0x0000000000000001ULL
#endif
#ifndef DISK_ATTRIBUTE_READ_ONLY
#define DISK_ATTRIBUTE_READ_ONLY 0x0000000000000002ULL
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
static const GUID basic_data_guid = {
    0xebd0a0a2, 0xb9e5, 0x4433, {0x87, 0xc0, 0x68, 0xb6, 0xb7, 0x26, 0x99, 0xc7}};
static const GUID esp_guid = {
    0xc12a7328, 0xf81f, 0x11d2, {0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b}};
static const GUID msr_guid = {
    0xe3c9e316, 0x0b5c, 0x4db8, {0x81, 0x7d, 0xf9, 0x2d, 0xf0, 0x02, 0x15, 0xae}};

#define MIB (1024ull * 1024ull)
#define DESC_BUF 4096
#define NEW_VOLUME_WAIT_MS 15000

/* The calls this process's host makes (storage_calls_win.h): set once by
 * cp_storage_host_open_win32, before any call; read without a lock. */
extern const cp_storage_calls *w32s_sc;

typedef struct w32 {
    cp_wmi_conn wmi; /* ROOT\Microsoft\Windows\Storage, once connected */
} w32;

/* --- shared by the host's files (storage_win.c unless said) ------------- */

/* Win32 errors: cp_win_error (winutil_win.h). */
int w32s_hr_error(cp_error *e, HRESULT hr, const char *what, const char *object);
int w32s_nomem(cp_error *e);

/* \\.\PhysicalDriveN / \\?\Volume{...}; INVALID_HANDLE_VALUE with e set
 * (NOT_FOUND "disk N not found" / "volume ... not found"). */
HANDLE w32s_open_disk(uint32_t number, DWORD access, cp_error *e);
HANDLE w32s_open_volume(const char *id, DWORD access, cp_error *e);

/* DeviceIoControl, synchronous; e names the control code and object. */
int w32s_ioctl(HANDLE h, DWORD code, const char *name, const void *in, DWORD inlen, void *out,
               DWORD outlen, DWORD *ret, const char *object, cp_error *e);
#define IOCTL(h, code, in, inlen, out, outlen, ret, obj, e)                                        \
    w32s_ioctl(h, code, #code, in, inlen, out, outlen, ret, obj, e)

/* IOCTL_DISK_GET_DRIVE_LAYOUT_EX into a malloc'd buffer (caller frees);
 * NULL with e set. */
DRIVE_LAYOUT_INFORMATION_EX *w32s_get_layout(HANDLE h, const char *obj, cp_error *e);
/* The layout of disk `number`, opened for reading and closed again (the
 * read-only callers); NULL with e set. */
DRIVE_LAYOUT_INFORMATION_EX *w32s_read_layout(uint32_t number, cp_error *e);
bool w32s_used_entry(const DRIVE_LAYOUT_INFORMATION_EX *l, DWORD i);
cp_part_kind w32s_part_kind(const DRIVE_LAYOUT_INFORMATION_EX *l,
                            const PARTITION_INFORMATION_EX *p);
uint64_t w32s_usable_end(const DRIVE_LAYOUT_INFORMATION_EX *l, uint64_t disk_len);
void *w32s_alloc(const cp_storage_alloc *a, size_t n);

/* storage_volume_win.c */
int w32s_need_online(HANDLE h, uint32_t number, cp_error *e);
uint32_t w32s_sector_size(HANDLE h);
bool w32s_volume_place(HANDLE v, uint32_t *disk, uint32_t *partition);
int w32s_wait_volume(uint32_t number, uint32_t partition, ULONGLONG until, const char *done,
                     cp_error *e);
int w32s_volumes_on(uint32_t disk, uint32_t partition, const cp_storage_alloc *a, char ***ids,
                    size_t *n, cp_error *e);
void *w32s_heap_alloc(void *actx, size_t n);
void w32s_wide_id(const char *id, wchar_t out[CP_VOLUME_ID_LEN + 1]);
int w32_init_gpt(void *ctx, uint32_t number, cp_error *e);
int w32_list_partitions(void *ctx, uint32_t number, const cp_storage_alloc *a,
                        cp_partition_info **parts, size_t *n, cp_error *e);
int w32_create_basic_partition(void *ctx, uint32_t number, cp_error *e);
int w32_list_volumes(void *ctx, uint32_t disk, uint32_t partition, const cp_storage_alloc *a,
                     char ***ids, size_t *n, cp_error *e);
int w32_get_volume(void *ctx, const char *id, cp_volume_info *o, cp_error *e);
int w32_grow_volume(void *ctx, const char *id, uint64_t size, cp_error *e);
int w32_flush_volume(void *ctx, const char *id, cp_error *e);
int w32_add_mount_point(void *ctx, const char *id, const char *dir, cp_error *e);
int w32_remove_mount_point(void *ctx, const char *dir, cp_error *e);
int w32_volume_at(void *ctx, const char *dir, char *id, size_t idlen, cp_error *e);
int w32_drive_volume(void *ctx, char letter, char *id, size_t idlen, cp_error *e);

/* storage_attrs_win.c: the read-only attribute, write-protected media,
 * a volume's first bytes */
/* DISK_ATTRIBUTE_READ_ONLY, and media write-protected at the hardware
 * (judged only on an online disk whose attribute is clear), of an open
 * disk. */
void w32s_read_only(HANDLE h, bool online, bool *read_only, bool *write_protected);
/* DISK_ATTRIBUTE_OFFLINE set again (persisted), errors ignored. */
void w32s_offline_again(HANDLE h);
/* FAILED_PRECONDITION naming the disk when its media is write-protected
 * (IOCTL_DISK_IS_WRITABLE: ERROR_WRITE_PROTECT); CP_OK otherwise. */
int w32s_need_writable_media(HANDLE h, uint32_t number, cp_error *e);
int w32s_write_protected_error(uint32_t number, cp_error *e);
int w32_make_disk_writable(void *ctx, uint32_t number, cp_error *e);
int w32_read_volume_head(void *ctx, const char *id, uint8_t *buf, size_t len, size_t *got,
                         cp_error *e);

/* storage_roles_win.c */
int w32_volume_use(void *ctx, const char *id, cp_volume_use *o, cp_error *e);

/* storage_wmi_win.c: the real WMI operations of cp_storage_calls_win32 */
int w32w_update_host_storage_cache(struct cp_wmi_conn *c, cp_error *e);
int w32w_format_volume(struct cp_wmi_conn *c, const char *id, cp_error *e);
int w32w_disk_online(struct cp_wmi_conn *c, uint32_t number, cp_error *e);
void w32s_wmi_release(w32 *w);

#endif
