/* mountpoints.h - the volume mount points of a simulated storage host, as
 * the file-system host of the same build must see them.
 *
 * On Windows a volume mounted in a folder is a reparse point on that
 * folder (IO_REPARSE_TAG_MOUNT_POINT): the file system and the volume
 * manager share one truth. IsSymlink reports the folder as a link while its
 * volume is there, and removing the folder (RemoveDirectoryW, or a
 * recursive delete that never enters a reparse point) deletes the mount
 * point, not the volume's files. In the native build the POSIX fs host
 * (fs_posix.c) keeps plain directories and the storage simulator
 * (storage_mount_sim.c) keeps the mount-point table; this interface lets the fs
 * host consult and update that table so both agree as Windows does.
 *
 * Obtained from the simulator (cp_storage_sim_mount_points, storage_sim.h)
 * and handed to the fs host (cp_fs_host_posix_set_mount_points, fs.h) by
 * whoever builds both (service/main_posix.c, the unit tests). The
 * functions are thread-safe; neither is a "disk operation" of the
 * simulator (no latency, no per-disk overlap check), as removing a folder
 * on Windows is not serialized with disk operations either.
 */
#ifndef CP_WINAPI_MOUNTPOINTS_H
#define CP_WINAPI_MOUNTPOINTS_H

#include <stddef.h>

#include "base/status.h"

typedef struct cp_mount_points {
    void *ctx;
    /* CP_OK and the volume's id in id when dir ("C:\...", any ASCII case)
     * is the mount point of a volume that is present (its disk online);
     * CP_E_FAILED_PRECONDITION otherwise. */
    int (*volume_at)(void *ctx, const char *dir, char *id, size_t idlen);
    /* Deletes the mount point at dir, if any: CP_OK and its volume's id
     * in id; CP_E_FAILED_PRECONDITION when dir is no mount point. The
     * volume and its data stay. */
    int (*drop)(void *ctx, const char *dir, char *id, size_t idlen);
} cp_mount_points;

#endif
