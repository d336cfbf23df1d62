/* storage.h - what the disk and volume groups ask of the host, as an ops
 * table.
 *
 * Implementations:
 *   storage_win.c - the product: documented IOCTLs on \\.\PhysicalDriveN
 *                     and volume handles, mount-point and volume-name
 *                     functions of kernel32; WMI (one cached IWbemServices)
 *                     only for Format and the storage cache rescan.
 *   storage_sim.c   - a simulated host loaded from a YAML fixture (tests,
 *                     the demo, build/win/csi-proxy-sim.exe). Never linked
 *                     into csi-proxy.exe.
 *
 * The host reports facts; the groups decide. Identity strings that drivers
 * parse (page83, serial number, location) are NOT formatted here: the host
 * hands over the raw STORAGE_DEVICE_ID_DESCRIPTOR / STORAGE_DEVICE_DESCRIPTOR
 * bytes and the MSFT_Disk-style location string, and storage_ids.h turns
 * them into upstream's strings, in one place, for both hosts.
 *
 * Conventions:
 *   - Disks are named by their Windows number (N of \\.\PhysicalDriveN).
 *   - Volumes are named by their GUID path "\\?\Volume{guid}\" (lower-case
 *     hex, trailing backslash), already validated by the caller
 *     (cp_volume_id_parse in storage_ids.h).
 *   - Directories (mount points) are UTF-8 "X:\..." paths without a
 *     trailing backslash, already confined by the caller's path rules.
 *   - Every function returns CP_OK or a negative cp_status with e naming the
 *     operation, the object and the cause. An unknown disk or volume is
 *     CP_E_NOT_FOUND ("disk 7 not found", "volume \\?\Volume{...}\ not
 *     found"). Offline disks: their volumes are not listed and not found.
 *   - Lists are allocated with the caller's allocator (the call's arena):
 *     nothing to free.
 *   - The host is thread-safe. Callers serialize the operations that
 *     change one disk or its volumes (groups/common/disklocks.h); the host
 *     may rely on that, and the simulator checks it.
 */
#ifndef CP_WINAPI_STORAGE_H
#define CP_WINAPI_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* Zeroed memory that lives as long as the caller needs it (a call arena).
 * NULL when out of memory. */
typedef struct cp_storage_alloc {
    void *(*alloc)(void *actx, size_t n);
    void *actx;
} cp_storage_alloc;

/* MSFT_Disk.PartitionStyle values. */
typedef enum cp_part_style {
    CP_PART_STYLE_RAW = 0, /* not initialized */
    CP_PART_STYLE_MBR = 1,
    CP_PART_STYLE_GPT = 2,
} cp_part_style;

typedef struct cp_disk_info {
    uint32_t number;
    uint64_t size;  /* bytes */
    bool online;    /* NOT MSFT_Disk.IsOffline */
    bool is_boot;   /* holds the running Windows (MSFT_Disk.IsBoot) */
    bool is_system; /* holds the system (EFI/active) partition (IsSystem) */
    /* DISK_ATTRIBUTE_READ_ONLY: Windows refuses writes until it is
     * cleared (a disk reattached or restored from a snapshot may come
     * back with it: MSFT_Disk.IsReadOnly). */
    bool read_only;
    /* The media itself is write-protected (IOCTL_DISK_IS_WRITABLE:
     * ERROR_WRITE_PROTECT while the attribute is clear): no attribute
     * makes it writable. */
    bool write_protected;
    cp_part_style style;
    /* Identity as the device reports it (IOCTL_STORAGE_QUERY_PROPERTY).
     * NULL/0 when the device gave none. */
    const uint8_t *id_desc; /* StorageDeviceIdProperty: STORAGE_DEVICE_ID_DESCRIPTOR */
    size_t id_desc_len;
    const uint8_t *dev_desc; /* StorageDeviceProperty: STORAGE_DEVICE_DESCRIPTOR */
    size_t dev_desc_len;
    /* MSFT_Disk.Location form, e.g. "Integrated : Adapter 0 : Port 0 :
     * Target 1 : LUN 0"; "" when the disk has no SCSI address. */
    const char *location;
} cp_disk_info;

/* MSFT_Partition.Type, as far as PartitionDisk cares. */
typedef enum cp_part_kind {
    CP_PART_BASIC = 0, /* GPT basic data / MBR IFS, FAT: a "normal" partition */
    CP_PART_SYSTEM,    /* EFI system partition / MBR active system */
    CP_PART_RESERVED,  /* MSR */
    CP_PART_OTHER,     /* recovery, LDM, unknown */
} cp_part_kind;

typedef struct cp_partition_info {
    uint32_t number; /* 1-based, as MSFT_Partition.PartitionNumber */
    uint64_t offset;
    uint64_t size;
    cp_part_kind kind;
} cp_partition_info;

typedef struct cp_volume_info {
    uint32_t disk_number;
    uint32_t partition_number;
    bool formatted;          /* any known file system (MSFT_Volume.FileSystemType != 0) */
    char fs[16];             /* "NTFS", "ReFS", ...; "" when RAW */
    uint64_t size;           /* MSFT_Volume.Size */
    uint64_t size_remaining; /* MSFT_Volume.SizeRemaining */
    uint64_t partition_size; /* MSFT_Partition.Size */
    uint64_t partition_max;  /* MSFT_Partition.GetSupportedSize SizeMax */
} cp_volume_info;

/* What Windows itself needs a volume for (cp_volume_use.roles). A volume
 * with any of these is never changed through the proxy, wherever it lives
 * (groups/common/storagegroup.h). */
enum {
    CP_VOLUME_ROLE_SYSTEM = 1u << 0,    /* the system volume: the boot loader's
                                           (EFI system partition, MBR active) */
    CP_VOLUME_ROLE_BOOT = 1u << 1,      /* the boot volume: holds the running
                                           Windows (%SystemRoot%) */
    CP_VOLUME_ROLE_PAGEFILE = 1u << 2,  /* holds a paging file */
    CP_VOLUME_ROLE_CRASHDUMP = 1u << 3, /* holds the crash dump file or the
                                           dedicated dump file */
};

/* Most disks one volume may span that the host reports. */
#define CP_VOLUME_DISKS_MAX 32

typedef struct cp_volume_use {
    unsigned roles;                      /* CP_VOLUME_ROLE_* */
    uint32_t disks[CP_VOLUME_DISKS_MAX]; /* every disk holding part of it */
    size_t n_disks;
} cp_volume_use;

/* Longest "\\?\Volume{...}\" plus NUL. */
#define CP_VOLUME_ID_MAX 64

typedef struct cp_storage_ops {
    /* --- disks --- */
    /* Every disk the host has, by number. */
    int (*list_disks)(void *ctx, const cp_storage_alloc *a, cp_disk_info **disks, size_t *n,
                      cp_error *e);
    /* One disk; NOT_FOUND "disk N not found". */
    int (*get_disk)(void *ctx, uint32_t number, const cp_storage_alloc *a, cp_disk_info *out,
                    cp_error *e);
    /* Brings the disk online or takes it offline (persistently). No-op when
     * already there. Online also clears DISK_ATTRIBUTE_READ_ONLY (in the
     * same change); FAILED_PRECONDITION naming the disk when the media is
     * write-protected. */
    int (*set_disk_online)(void *ctx, uint32_t number, bool online, cp_error *e);
    /* Clears DISK_ATTRIBUTE_READ_ONLY (persistently); FAILED_PRECONDITION
     * naming the disk when the media is write-protected. */
    int (*make_disk_writable)(void *ctx, uint32_t number, cp_error *e);
    /* Rescans buses and refreshes the storage cache (disks, partitions,
     * volumes, sizes). */
    int (*rescan)(void *ctx, cp_error *e);

    /* --- partitions (the disk must be online) --- */
    /* Initializes a RAW disk as GPT. FAILED_PRECONDITION when it is not RAW. */
    int (*init_gpt)(void *ctx, uint32_t number, cp_error *e);
    int (*list_partitions)(void *ctx, uint32_t number, const cp_storage_alloc *a,
                           cp_partition_info **parts, size_t *n, cp_error *e);
    /* Creates one basic data partition over the largest free space at the
     * end of the disk, with no drive letter; returns when its volume is
     * visible. FAILED_PRECONDITION when there is no free space. */
    int (*create_basic_partition)(void *ctx, uint32_t number, cp_error *e);

    /* --- volumes --- */
    /* The volume IDs on the disk's partitions; partition 0 = all. */
    int (*list_volumes)(void *ctx, uint32_t disk, uint32_t partition, const cp_storage_alloc *a,
                        char ***ids, size_t *n, cp_error *e);
    int (*get_volume)(void *ctx, const char *volume_id, cp_volume_info *out, cp_error *e);
    /* What Windows needs the volume for and the disks it is on (a basic
     * volume: one). Read-only. Fails (never guesses "none") when the host
     * cannot tell: callers refuse the change then. */
    int (*volume_use)(void *ctx, const char *volume_id, cp_volume_use *out, cp_error *e);
    /* Reads the volume's first bytes (the raw volume, not a file of it)
     * into buf: *got is len, or less when the volume is smaller. */
    int (*read_volume_head)(void *ctx, const char *volume_id, uint8_t *buf, size_t len, size_t *got,
                            cp_error *e);
    /* Quick format as NTFS, empty label, forced (MSFT_Volume.Format). */
    int (*format_volume)(void *ctx, const char *volume_id, cp_error *e);
    /* Grows the partition to exactly partition_size bytes and extends the
     * file system over it. Never shrinks: callers check. */
    int (*grow_volume)(void *ctx, const char *volume_id, uint64_t partition_size, cp_error *e);
    /* Flushes the volume's file-system cache to disk. */
    int (*flush_volume)(void *ctx, const char *volume_id, cp_error *e);
    /* Mounts the volume on the existing, empty directory dir
     * (SetVolumeMountPointW). dir already a mount point: ALREADY_EXISTS. */
    int (*add_mount_point)(void *ctx, const char *volume_id, const char *dir, cp_error *e);
    /* Removes the volume mount point at dir (DeleteVolumeMountPointW); the
     * directory stays. */
    int (*remove_mount_point)(void *ctx, const char *dir, cp_error *e);
    /* The volume mounted at dir (a directory that is a volume mount point):
     * writes its ID to id. FAILED_PRECONDITION "not a mounted folder" when
     * dir is something else; NOT_FOUND when dir does not exist. */
    int (*volume_at)(void *ctx, const char *dir, char *id, size_t idlen, cp_error *e);
    /* The volume behind drive letter X (X:\); NOT_FOUND when none. */
    int (*drive_volume)(void *ctx, char letter, char *id, size_t idlen, cp_error *e);

    /* Releases the host. */
    void (*destroy)(void *ctx);
} cp_storage_ops;

typedef struct cp_storage_host {
    const cp_storage_ops *ops;
    void *ctx;
} cp_storage_host;

/* The storage host this executable is built with: the Win32 host in
 * csi-proxy.exe (storage_win.c); the simulator in csi-proxy-sim.exe and
 * the native build (storage_sim.c), seeded from the fixture named by the
 * environment variable CSI_PROXY_SIM_FIXTURE, or empty when it is unset.
 * Release with out->ops->destroy(out->ctx). */
int cp_storage_host_open_default(cp_storage_host *out, cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

#define CP_STORAGE_SIM_FIXTURE_ENV "CSI_PROXY_SIM_FIXTURE"

#endif
