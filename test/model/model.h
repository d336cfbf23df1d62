/* model.h - the device model: a machine's disks, partitions,
 * volumes and mounted folders in memory, answering the storage call table
 * (host/storage_calls_win.h) as Microsoft documents Windows answers. Linked
 * only into build/win/csi-proxy-model.exe (mk/model.mk), never into
 * csi-proxy.exe. Test code, Windows (mingw) build only.
 *
 * Files: model_state.c (the state, handles, volume arrival, the WMI
 * operations), model_ioctl.c (DeviceIoControl), model_names.c (the
 * name, mount-point and file-system functions, the table and the exe's
 * storage host), model_fixture.c (the YAML fixture).
 *
 * Every modelled behaviour names the documentation it follows in a comment
 * "Doc:"; where Windows' behaviour is not documented the comment says
 * "Undocumented:" and what the model does instead (README: "to confirm on
 * a node"). */
#ifndef CP_TEST_MODEL_H
#define CP_TEST_MODEL_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <winioctl.h>
#include <ntddscsi.h>

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "host/storage_calls_win.h"

#define M_MAX_DISKS 48
#define M_MAX_PARTS 16
#define M_MAX_MOUNTS 128
#define M_DESC_MAX 1024
#define M_MIB (1024ull * 1024ull)

/* mingw-w64 lacks these (ntddisk.h; "GET_DISK_ATTRIBUTES structure"). */
#ifndef IOCTL_DISK_GET_DISK_ATTRIBUTES
#define IOCTL_DISK_GET_DISK_ATTRIBUTES                                                             \
    CTL_CODE(IOCTL_DISK_BASE, 0x003c, METHOD_BUFFERED, FILE_ANY_ACCESS)
#endif
#ifndef IOCTL_DISK_SET_DISK_ATTRIBUTES
#define IOCTL_DISK_SET_DISK_ATTRIBUTES                                                             \
    CTL_CODE(IOCTL_DISK_BASE, 0x003d, METHOD_BUFFERED, FILE_READ_ACCESS | FILE_WRITE_ACCESS)
#endif
#ifndef ERROR_NO_SUCH_DEVICE
#define ERROR_NO_SUCH_DEVICE 433L /* "System Error Codes (0-499)" */
#endif
#define M_ATTR_OFFLINE 0x1ULL   /* DISK_ATTRIBUTE_OFFLINE */
#define M_ATTR_READ_ONLY 0x2ULL /* DISK_ATTRIBUTE_READ_ONLY */

typedef struct m_get_attrs {
    DWORD Version;
    DWORD Reserved1;
    DWORDLONG Attributes;
} m_get_attrs;
typedef struct m_set_attrs {
    DWORD Version;
    BOOLEAN Persist;
    BOOLEAN Reserved1[3];
    DWORDLONG Attributes;
    DWORDLONG AttributesMask;
    DWORD Reserved2[4];
} m_set_attrs;

typedef struct m_vol {
    bool exists; /* the partition has a volume device */
    GUID guid;
    char fs[16];      /* "" = RAW */
    uint64_t fs_size; /* bytes the file system covers */
    uint64_t used;
    char drive;           /* 'A'..'Z' or 0 */
    ULONGLONG appears_at; /* GetTickCount64() from which it is there */
    uint8_t *head;        /* its first bytes (fixture bytes); NULL: zeros */
    size_t head_len;
} m_vol;

typedef struct m_part {
    PARTITION_INFORMATION_EX pi;
    m_vol vol;
} m_part;

typedef struct m_disk {
    uint32_t number; /* PhysicalDriveN, or CdRomN when cdrom */
    bool cdrom;
    uint64_t media;   /* bytes the device has now */
    uint64_t length;  /* bytes the disk driver reports (cached) */
    uint64_t grow_to; /* media after the next storage rescan; 0 none */
    uint32_t sector;
    bool offline, read_only, not_ready, collision;
    bool write_protected; /* the media: IOCTL_DISK_IS_WRITABLE fails */
    bool wmi_fails;       /* every WMI operation on it or its volumes fails */
    DWORD style;          /* PARTITION_STYLE_* */
    GUID disk_id;
    DWORD signature;
    uint64_t usable_start, usable_len; /* GPT */
    m_part parts[M_MAX_PARTS];
    size_t n_parts;
    uint8_t dev[M_DESC_MAX], id[M_DESC_MAX];
    size_t dev_len, id_len;
    bool has_scsi;
    bool nvme; /* an NVMe namespace: BusTypeNvme even with a SCSI address */
    SCSI_ADDRESS scsi;
} m_disk;

typedef struct m_mount {
    wchar_t dir[MAX_PATH]; /* "C:\...\dir\" as given, compared case-blind */
    GUID vol;
} m_mount;

typedef struct model {
    SRWLOCK lock;
    m_disk disks[M_MAX_DISKS];
    size_t n_disks;
    m_mount mounts[M_MAX_MOUNTS];
    size_t n_mounts;
    unsigned arrival_ms; /* fixture volume_arrival_ms */
    bool trace;          /* CSI_PROXY_MODEL_TRACE set: every call to stderr */
} model;

extern model m_model;

#define M_LOCK() AcquireSRWLockExclusive(&m_model.lock)
#define M_UNLOCK() ReleaseSRWLockExclusive(&m_model.lock)

void m_trace(const char *fmt, ...);

/* --- handles (model_state.c) --- */
enum { M_H_DISK = 1, M_H_VOLUME, M_H_FINDVOL };
typedef struct m_handle {
    int kind;
    m_disk *disk;    /* DISK, VOLUME (the disk holding it) */
    size_t part;     /* VOLUME: index in disk->parts */
    DWORD access;    /* CreateFileW dwDesiredAccess */
    wchar_t **names; /* FINDVOL */
    size_t n_names, pos;
    uint64_t off; /* VOLUME: the file pointer ReadFile reads at */
} m_handle;
HANDLE m_handle_new(const m_handle *h);
m_handle *m_handle_get(HANDLE h); /* NULL: not the model's */
void m_handle_free(HANDLE h);

/* --- state (model_state.c); callers hold the lock --- */
m_disk *m_disk_by_number(uint32_t number, bool cdrom);
bool m_vol_present(const m_disk *d, size_t part);
/* The present volume with that GUID: its disk and partition index. */
bool m_vol_find(const GUID *g, m_disk **d, size_t *part);
bool m_vol_by_drive(wchar_t letter, m_disk **d, size_t *part);
/* "\\?\Volume{...}" (with the backslash when slash) into out (>= 50). */
void m_vol_name(const GUID *g, bool slash, wchar_t *out);
/* Parses "\\?\Volume{...}" with or without the final backslash. */
bool m_vol_parse(const wchar_t *s, GUID *g, bool *slash);
bool m_part_has_volume(const m_disk *d, const PARTITION_INFORMATION_EX *pi);
void m_gpt_usable(m_disk *d);
void m_came_online(m_disk *d);
uint64_t m_fs_size(uint64_t bytes);

/* --- the table members (model_ioctl.c, model_names.c, model_state.c) --- */
BOOL WINAPI m_DeviceIoControl(HANDLE, DWORD, LPVOID, DWORD, LPVOID, DWORD, LPDWORD, LPOVERLAPPED);
BOOL WINAPI m_ReadFile(HANDLE, LPVOID, DWORD, LPDWORD, LPOVERLAPPED);
int m_update_host_storage_cache(struct cp_wmi_conn *c, cp_error *e);
int m_format_volume(struct cp_wmi_conn *c, const char *id, cp_error *e);
int m_disk_online(struct cp_wmi_conn *c, uint32_t number, cp_error *e);

/* --- fixture (model_fixture.c) --- */
/* Loads the YAML file at path into m_model. CP_OK or e set. */
int m_fixture_load(const char *path, cp_error *e);

#endif
