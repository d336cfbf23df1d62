/* storagegroup.h - what the disk and volume groups share: their runtime
 * context (one per process, owned by groups.c and bound to all 11 disk and
 * volume services) and small helpers for their handlers.
 */
#ifndef CP_GROUPS_STORAGEGROUP_H
#define CP_GROUPS_STORAGEGROUP_H

#include <stdbool.h>

#include "dispatch/method.h"
#include "host/fs.h"
#include "host/smb_host.h"
#include "host/storage.h"
#include "groups/common/disklocks.h"
#include "groups/common/inflight.h"
#include "groups/common/pathrules.h"

/* cp_service.ctx of every disk and volume service. All members are
 * borrowed: groups.c keeps them alive longer than any call. */
typedef struct cp_storage_group_ctx {
    cp_storage_host storage;
    cp_disklocks *locks; /* per-disk serialization */
    /* one run for identical FormatVolume, PartitionDisk, MountVolume calls */
    cp_inflight *inflight;
    cp_fs_host fs; /* resolves links of mount paths */
    const cp_pathrules *rules;
    const cp_smb_host *smb; /* the smb group's host: SMB shares in the volume group */
    bool smb_volume_stats;  /* groups.smb.volumeStats (groups/volume/smbvol.h) */
    bool format_foreign;    /* groups.volume.formatForeignFilesystems */
} cp_storage_group_ctx;

static inline const cp_storage_group_ctx *cp_sg_ctx(cp_call *call)
{
    return (const cp_storage_group_ctx *)cp_call_ctx(call);
}

/* The storage host the call's group runs on. */
static inline const cp_storage_host *cp_sg_host(cp_call *call)
{
    return &cp_sg_ctx(call)->storage;
}

/* The per-disk lock of disk for this call: CP_OK, or CP_PARKED (return
 * it at once; see disklocks.h). */
static inline int cp_sg_lock_disk(cp_call *call, uint32_t disk)
{
    return cp_disklocks_lock(cp_sg_ctx(call)->locks, call, disk);
}

static inline void cp_sg_unlock_disk(cp_call *call, uint32_t disk)
{
    cp_disklocks_unlock(cp_sg_ctx(call)->locks, call, disk);
}

/* "PartitionDisk" from "/v1.Disk/PartitionDisk": messages name the RPC the
 * client called, legacy names included. */
const char *cp_sg_method(cp_call *call);

/* Records "<Method>: <e->msg>" with e's status; returns the status. */
int cp_sg_fail(cp_call *call, const cp_error *e);

/* An allocator on the call's arena, for host lists. */
cp_storage_alloc cp_sg_alloc(cp_call *call);

/* FAILED_PRECONDITION when d is the boot or system disk: `what` says what
 * was refused ("partition it", "take it offline", ...). CP_OK otherwise. */
int cp_sg_refuse_boot(const cp_disk_info *d, const char *what, cp_error *e);

/* FAILED_PRECONDITION when volume id is one Windows needs: it has a role
 * in u->roles (system, boot, page file, crash dump: wherever it lives), or
 * it is on the boot or system disk (disks[i] describes u->disks[i]).
 * `what` says what was refused ("mount it"). The message names the volume
 * and every reason: "volume \\?\Volume{...}\ holds the page file:
 * refusing to mount it". CP_OK otherwise (a data volume, drive letter or
 * not). */
int cp_sg_refuse_volume(const char *id, const cp_volume_use *u, const cp_disk_info *disks,
                        const char *what, cp_error *e);

/* FAILED_PRECONDITION when the first bytes of volume id (RAW to Windows)
 * carry a file system or container Windows does not mount
 * (host/fssig.h): "volume \\?\Volume{...}\ holds ext2/3/4 (superblock
 * magic 0xEF53 at byte 1080): refusing to format over it". The host's
 * error when it cannot read them. CP_OK otherwise. */
int cp_sg_refuse_foreign(const cp_storage_host *h, const char *id, cp_error *e);

/* FAILED_PRECONDITION when disk holds a volume Windows needs wherever it
 * lives (system, boot, page file, crash dump: "volume \\?\Volume{...}\
 * holds the page file: refusing to take disk 15 offline"), or when the
 * host cannot tell (its error). `what` says what was refused. */
int cp_sg_refuse_needed_volumes(const cp_storage_host *h, uint32_t disk, const cp_storage_alloc *a,
                                const char *what, cp_error *e);

#endif
