/* volume.c - the volume group's logic, shared by every version (see
 * volume.h).
 *
 * Order of checks in each handler: upstream's empty-field checks (its
 * text), the volume ID's form, the path rules, then host lookups (NOT_FOUND
 * names the object), the refusal of volumes Windows needs (every call
 * that changes a volume or its mount points: refuse_system_volume), and
 * the operation itself under the lock of the disk that holds the volume.
 */
#include "groups/volume/volume.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/thread.h"
#include "host/storage_ids.h"
#include "groups/common/hostpath.h"
#include "groups/common/pbreflect.h"
#include "groups/common/smblink.h"
#include "groups/volume/smbvol.h"

#define GROW_MIN (100 * 1024 * 1024) /* upstream skips growth below 100 MiB */
#define CLOSEST_STEPS 256            /* upstream's bound on the walk */
/* ListVolumesOnDisk's wait for the volume of a disk just brought online
 * (Windows announces volumes asynchronously): at most this long, polling. */
#define ARRIVAL_WAIT_MS 10000
#define ARRIVAL_POLL_MS 50

/* Legacy RPCs forward to their successors; upstream wraps their errors. */
static const char *forwarded_to(const char *method)
{
    static const char *const pairs[][2] = {
        {"DismountVolume", "UnmountVolume"},
        {"VolumeStats", "GetVolumeStats"},
        {"GetVolumeDiskNumber", "GetDiskNumberFromVolumeID"},
        {"GetVolumeIDFromMount", "GetVolumeIDFromTargetPath"},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        if (strcmp(method, pairs[i][0]) == 0)
            return pairs[i][1];
    return NULL;
}

/* Records "<Method>: [Forward to <New> failed, err=]<text>". */
static int vfail(cp_call *call, int status, const char *fmt, ...) CP_PRINTF(3, 4);
static int vfail(cp_call *call, int status, const char *fmt, ...)
{
    char text[CP_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    const char *m = cp_sg_method(call);
    const char *to = forwarded_to(m);
    if (to != NULL)
        return cp_call_fail(call, status, "%s: Forward to %s failed, err=%s", m, to, text);
    return cp_call_fail(call, status, "%s: %s", m, text);
}

static int efail(cp_call *call, const cp_error *e)
{
    return vfail(call, e->status, "%s", e->msg);
}

/* Upstream's "volume id empty" check, then the form of the ID. norm gets
 * the lower-case ID the hosts use. An SMB share's ID (smbvol.h) names no
 * disk volume: refused by name, with the code any other ID gets. */
static int check_id(cp_call *call, const char *id, const char *empty_text,
                    char norm[CP_VOLUME_ID_LEN + 1])
{
    if (id[0] == '\0')
        return vfail(call, CP_E_INVALID_ARGUMENT, "%s", empty_text);
    char root[CP_SMBLINK_ROOT_MAX];
    if (cp_smbvol_parse(id, root, sizeof(root)))
        return vfail(call, CP_E_INVALID_ARGUMENT,
                     "volume ID %s names the SMB share %s, not a disk volume%s", id, root,
                     cp_sg_ctx(call)->smb_volume_stats
                         ? ": only GetVolumeStats takes it"
                         : " (SMB volume stats are off: groups.smb.volumeStats)");
    cp_error e;
    if (cp_volume_id_parse(id, norm, NULL, &e) != CP_OK)
        return efail(call, &e);
    return CP_OK;
}

/* Upstream's empty check, the path rules, and the directory must exist.
 * CP_PATH_REPLACE (mount, unmount) refuses a configured directory. A path
 * without a drive letter gets the system drive (cp_hostpath_with_drive):
 * upstream validates no volume path and drivers send kubelet's raw ones. */
static int check_dir(cp_call *call, const char *path, const char *empty_text, cp_path_intent intent,
                     const char **dir)
{
    if (path[0] == '\0')
        return vfail(call, CP_E_INVALID_ARGUMENT, "%s", empty_text);
    const cp_storage_group_ctx *ctx = cp_sg_ctx(call);
    cp_error e;
    path = cp_hostpath_with_drive(call, path); /* raw kubelet paths (fact 7) */
    if (path == NULL)
        return vfail(call, CP_E_NOMEM, "out of memory");
    if (cp_hostpath_confine_entry(call, ctx->rules, &ctx->fs, path, intent, dir, &e) != CP_OK)
        return efail(call, &e);
    bool exists = false;
    if (ctx->fs.ops->exists(ctx->fs.ctx, *dir, &exists, &e) != CP_OK)
        return efail(call, &e);
    if (!exists)
        return vfail(call, CP_E_NOT_FOUND, "directory %s does not exist", *dir);
    return CP_OK;
}

static int get_volume(cp_call *call, const char *id, cp_volume_info *v)
{
    cp_error e;
    if (cp_sg_host(call)->ops->get_volume(cp_sg_host(call)->ctx, id, v, &e) != CP_OK)
        return efail(call, &e);
    return CP_OK;
}

/* Volumes Windows needs are never changed: the system, boot, page-file
 * and crash-dump volumes wherever they live, and every volume on the boot
 * or system disk (cp_sg_refuse_volume). `what` is the refused change
 * ("mount it"). A host that cannot tell refuses too (its error). */
static int refuse_system_volume(cp_call *call, const char *id, const char *what)
{
    const cp_storage_host *h = cp_sg_host(call);
    cp_storage_alloc a = cp_sg_alloc(call);
    cp_volume_use u;
    cp_error e;
    if (h->ops->volume_use(h->ctx, id, &u, &e) != CP_OK)
        return efail(call, &e);
    cp_disk_info *disks = cp_call_alloc(call, (u.n_disks + 1) * sizeof(*disks));
    if (disks == NULL)
        return vfail(call, CP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < u.n_disks && i < CP_VOLUME_DISKS_MAX; i++)
        if (h->ops->get_disk(h->ctx, u.disks[i], &a, &disks[i], &e) != CP_OK)
            return efail(call, &e);
    if (cp_sg_refuse_volume(id, &u, disks, what, &e) != CP_OK)
        return efail(call, &e);
    return CP_OK;
}

/* The volume of an ID that passed check_id, and one this call may change
 * (refuse_system_volume: `what` is the change). */
static int volume_to_change(cp_call *call, const char *id, const char *what, cp_volume_info *v)
{
    int rc = get_volume(call, id, v);
    return rc == CP_OK ? refuse_system_volume(call, id, what) : rc;
}

/* check_id with upstream's "volume id empty", then the volume. */
static int known_volume(cp_call *call, const char *raw, char id[CP_VOLUME_ID_LEN + 1],
                        cp_volume_info *v)
{
    int rc = check_id(call, raw, "volume id empty", id);
    return rc == CP_OK ? get_volume(call, id, v) : rc;
}

/* --- handlers ------------------------------------------------------------- */

/* Whether the disk should show a volume: it is online and has a basic
 * partition (the one asked for, or any for partition 0). */
static bool expects_volume(cp_call *call, uint32_t disk, uint32_t partition)
{
    const cp_storage_host *h = cp_sg_host(call);
    cp_storage_alloc a = cp_sg_alloc(call);
    cp_disk_info d;
    cp_partition_info *parts = NULL;
    size_t n = 0;
    cp_error e;
    if (h->ops->get_disk(h->ctx, disk, &a, &d, &e) != CP_OK || !d.online)
        return false;
    if (h->ops->list_partitions(h->ctx, disk, &a, &parts, &n, &e) != CP_OK)
        return false;
    for (size_t i = 0; i < n; i++)
        if (parts[i].kind == CP_PART_BASIC && (partition == 0 || parts[i].number == partition))
            return true;
    return false;
}

/* Waits about ms milliseconds (nothing signals the condition). */
static void pause_ms(int64_t ms)
{
    cp_mutex *m = cp_mutex_new();
    cp_cond *c = cp_cond_new();
    if (m != NULL && c != NULL) {
        int64_t until = cp_now_ms() + ms;
        cp_mutex_lock(m);
        for (int64_t now = cp_now_ms(); now < until; now = cp_now_ms())
            cp_cond_timedwait(c, m, until - now);
        cp_mutex_unlock(m);
    }
    if (c != NULL)
        cp_cond_free(c);
    if (m != NULL)
        cp_mutex_free(m);
}

/* EBS and Azure Disk use VolumeIds[0] unchecked right after PartitionDisk
 * (and SetDiskState): an online disk with a basic partition whose volume
 * has not arrived yet is waited for, ARRIVAL_WAIT_MS at most; after that
 * the empty list is the answer. */
int cp_volume_handle_list(cp_call *call, const void *req, void *resp)
{
    const cp_volume_request *q = req;
    cp_volume_response *r = resp;
    const cp_storage_host *h = cp_sg_host(call);
    cp_storage_alloc a = cp_sg_alloc(call);
    char **ids = NULL;
    size_t n = 0;
    cp_error e;
    if (cp_sg_lock_disk(call, q->disk_number) != CP_OK)
        return CP_PARKED;
    int rc = h->ops->list_volumes(h->ctx, q->disk_number, q->partition_number, &a, &ids, &n, &e);
    if (rc == CP_OK && n == 0 && expects_volume(call, q->disk_number, q->partition_number)) {
        int64_t until = cp_now_ms() + ARRIVAL_WAIT_MS;
        while (rc == CP_OK && n == 0 && cp_now_ms() < until) {
            pause_ms(ARRIVAL_POLL_MS);
            rc =
                h->ops->list_volumes(h->ctx, q->disk_number, q->partition_number, &a, &ids, &n, &e);
        }
    }
    cp_sg_unlock_disk(call, q->disk_number);
    if (rc != CP_OK)
        return efail(call, &e);
    r->volume_ids = (const char **)ids;
    r->n_volume_ids = n;
    return CP_OK;
}

static int mount(cp_call *call, const cp_volume_request *q)
{
    const cp_storage_host *h = cp_sg_host(call);
    char id[CP_VOLUME_ID_LEN + 1];
    const char *dir;
    cp_volume_info v;
    int rc = check_id(call, q->volume_id, "MountVolumeRequest.VolumeId is empty", id);
    if (rc == CP_OK && q->target_path[0] == '\0')
        rc = vfail(call, CP_E_INVALID_ARGUMENT, "MountVolumeRequest.TargetPath is empty");
    if (rc == CP_OK)
        rc = check_dir(call, q->target_path, "", CP_PATH_REPLACE, &dir);
    if (rc == CP_OK)
        rc = volume_to_change(call, id, "mount it", &v);
    if (rc != CP_OK)
        return rc;

    cp_error e;
    if (cp_sg_lock_disk(call, v.disk_number) != CP_OK)
        return CP_PARKED;
    rc = h->ops->add_mount_point(h->ctx, id, dir, &e);
    if (rc != CP_OK) {
        /* Already mounted here (a retry): success, as upstream. */
        char there[CP_VOLUME_ID_LEN + 1];
        cp_error e2;
        if (h->ops->volume_at(h->ctx, dir, there, sizeof(there), &e2) == CP_OK) {
            if (strcmp(there, id) == 0)
                rc = CP_OK;
            else
                rc = cp_error_set(&e, CP_E_FAILED_PRECONDITION,
                                  "%s is already the mount point of volume %s", dir, there);
        }
    }
    cp_sg_unlock_disk(call, v.disk_number);
    return rc == CP_OK ? CP_OK : efail(call, &e);
}

int cp_volume_handle_unmount(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_volume_request *q = req;
    const cp_storage_host *h = cp_sg_host(call);
    char id[CP_VOLUME_ID_LEN + 1];
    const char *dir;
    cp_volume_info v;
    int rc = check_id(call, q->volume_id, "volume id empty", id);
    if (rc == CP_OK && q->target_path[0] == '\0')
        rc = vfail(call, CP_E_INVALID_ARGUMENT, "target path empty");
    if (rc == CP_OK)
        rc = check_dir(call, q->target_path, "", CP_PATH_REPLACE, &dir);
    if (rc == CP_OK)
        rc = volume_to_change(call, id, "unmount it", &v);
    if (rc != CP_OK)
        return rc;

    cp_error e;
    char there[CP_VOLUME_ID_LEN + 1];
    if (cp_sg_lock_disk(call, v.disk_number) != CP_OK)
        return CP_PARKED;
    rc = h->ops->flush_volume(h->ctx, id, &e); /* as upstream: flush first */
    bool mounted = false;
    if (rc == CP_OK) {
        rc = h->ops->volume_at(h->ctx, dir, there, sizeof(there), &e);
        mounted = rc == CP_OK;
        if (rc == CP_E_FAILED_PRECONDITION) /* not a mount point (any more) */
            rc = CP_OK;
    }
    if (rc == CP_OK && mounted && strcmp(there, id) != 0)
        rc = cp_error_set(&e, CP_E_FAILED_PRECONDITION,
                          "%s is the mount point of volume %s, not of %s", dir, there, id);
    if (rc == CP_OK && mounted)
        rc = h->ops->remove_mount_point(h->ctx, dir, &e);
    cp_sg_unlock_disk(call, v.disk_number);
    return rc == CP_OK ? CP_OK : efail(call, &e);
}

int cp_volume_handle_is_formatted(cp_call *call, const void *req, void *resp)
{
    const cp_volume_request *q = req;
    char id[CP_VOLUME_ID_LEN + 1];
    cp_volume_info v;
    int rc = known_volume(call, q->volume_id, id, &v);
    if (rc != CP_OK)
        return rc;
    ((cp_volume_response *)resp)->formatted = v.formatted;
    return CP_OK;
}

static int format(cp_call *call, const cp_volume_request *q)
{
    const cp_storage_host *h = cp_sg_host(call);
    char id[CP_VOLUME_ID_LEN + 1];
    cp_volume_info v;
    int rc = check_id(call, q->volume_id, "volume id empty", id);
    if (rc == CP_OK)
        rc = volume_to_change(call, id, "format it", &v);
    if (rc != CP_OK)
        return rc;
    cp_error e;
    if (cp_sg_lock_disk(call, v.disk_number) != CP_OK)
        return CP_PARKED;
    /* A volume Windows reads as RAW may hold a file system it does not
     * mount (ext4, XFS, LUKS, ...): never formatted over unless the
     * operator allows it. One Windows mounts is not foreign. */
    if (!v.formatted && !cp_sg_ctx(call)->format_foreign)
        rc = cp_sg_refuse_foreign(h, id, &e);
    if (rc == CP_OK)
        rc = h->ops->format_volume(h->ctx, id, &e);
    cp_sg_unlock_disk(call, v.disk_number);
    return rc == CP_OK ? CP_OK : efail(call, &e);
}

/* Runs work(call, q) once for identical calls in flight (inflight.h): a
 * retry of a call still running answers the first one's result. */
static int once(cp_call *call, const cp_volume_request *q, const char *const *parts, size_t n,
                int (*work)(cp_call *, const cp_volume_request *))
{
    cp_inflight *t = cp_sg_ctx(call)->inflight;
    int rc = cp_inflight_join(t, call, parts, n);
    if (rc != CP_INFLIGHT_LEAD)
        return rc;
    rc = work(call, q);
    if (rc != CP_PARKED)
        cp_inflight_done(t, call, rc);
    return rc;
}

int cp_volume_handle_mount(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_volume_request *q = req;
    const char *parts[] = {q->volume_id, q->target_path};
    return once(call, q, parts, 2, mount);
}

int cp_volume_handle_format(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_volume_request *q = req;
    const char *parts[] = {q->volume_id};
    return once(call, q, parts, 1, format);
}

/* Parses "<disk>" or "<disk>-part<partition>" (decimal, as Azure Disk's
 * NodeStage sends as ResizeVolume's VolumeId; partition 0 = none given). */
static bool parse_disk_source(const char *s, uint32_t *disk, uint32_t *partition)
{
    uint64_t v[2] = {0, 0};
    int k = 0;
    const char *p = s;
    for (;;) {
        const char *start = p;
        for (; *p >= '0' && *p <= '9'; p++)
            if ((v[k] = v[k] * 10 + (uint64_t)(*p - '0')) > UINT32_MAX)
                return false;
        if (p == start || p - start > 10)
            return false;
        if (*p == '\0')
            break;
        if (k == 1 || strncmp(p, "-part", 5) != 0)
            return false;
        p += 5;
        k = 1;
    }
    *disk = (uint32_t)v[0];
    *partition = (uint32_t)v[1];
    return true;
}

/* Azure Disk (DRIVER-CONTRACTS fact 25, Q2): its NodeStage ends with
 * ResizeVolume(VolumeId = the disk number) and fails the stage on an
 * error. Such an ID names the disk's single volume (the one PartitionDisk
 * made); a disk with none is NOT_FOUND, one with several INVALID_ARGUMENT
 * (which to grow is not ours to guess). Writes the volume ID to out. */
static int resolve_disk_source(cp_call *call, uint32_t disk, uint32_t partition,
                               char out[CP_VOLUME_ID_LEN + 1])
{
    const cp_storage_host *h = cp_sg_host(call);
    cp_storage_alloc a = cp_sg_alloc(call);
    cp_disk_info d;
    char **ids = NULL;
    size_t n = 0;
    cp_error e;
    if (h->ops->get_disk(h->ctx, disk, &a, &d, &e) != CP_OK ||
        cp_sg_refuse_boot(&d, "resize its volume", &e) != CP_OK)
        return efail(call, &e);
    if (h->ops->list_volumes(h->ctx, disk, partition, &a, &ids, &n, &e) != CP_OK)
        return efail(call, &e);
    char part[32] = "";
    if (partition != 0)
        snprintf(part, sizeof(part), " partition %u", (unsigned)partition);
    if (n == 0)
        return vfail(call, CP_E_NOT_FOUND, "disk %u%s has no volume to resize%s", (unsigned)disk,
                     part, d.online ? "" : " (the disk is offline)");
    if (n > 1)
        return vfail(call, CP_E_INVALID_ARGUMENT,
                     "disk %u%s has %zu volumes: name the one to resize by its volume ID",
                     (unsigned)disk, part, n);
    cp_error pe;
    if (cp_volume_id_parse(ids[0], out, NULL, &pe) != CP_OK)
        return efail(call, &pe);
    return CP_OK;
}

int cp_volume_handle_resize(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_volume_request *q = req;
    const cp_storage_host *h = cp_sg_host(call);
    char id[CP_VOLUME_ID_LEN + 1];
    cp_volume_info v;
    uint32_t by_disk, by_part;
    int rc = parse_disk_source(q->volume_id, &by_disk, &by_part)
                 ? resolve_disk_source(call, by_disk, by_part, id)
                 : check_id(call, q->volume_id, "volume id empty", id);
    if (rc == CP_OK && q->size_bytes < 0)
        rc = vfail(call, CP_E_INVALID_ARGUMENT, "size %lld of volume %s is negative",
                   (long long)q->size_bytes, id);
    if (rc == CP_OK)
        rc = volume_to_change(call, id, "resize it", &v);
    if (rc != CP_OK)
        return rc;

    cp_error e;
    if (cp_sg_lock_disk(call, v.disk_number) != CP_OK)
        return CP_PARKED;
    rc = h->ops->get_volume(h->ctx, id, &v, &e); /* sizes as of now, under the lock */
    uint64_t want = q->size_bytes == 0 ? v.partition_max : (uint64_t)q->size_bytes;
    if (rc == CP_OK && want >= v.partition_size && want - v.partition_size >= GROW_MIN) {
        if (want > v.partition_max)
            rc = cp_error_set(&e, CP_E_OUT_OF_RANGE,
                              "cannot grow volume %s to %llu bytes: its partition can grow to "
                              "%llu bytes at most",
                              id, (unsigned long long)want, (unsigned long long)v.partition_max);
        else
            rc = h->ops->grow_volume(h->ctx, id, want, &e);
    }
    /* else: less than 100 MiB more, or smaller: nothing to do (upstream). */
    cp_sg_unlock_disk(call, v.disk_number);
    return rc == CP_OK ? CP_OK : efail(call, &e);
}

int cp_volume_handle_stats(cp_call *call, const void *req, void *resp)
{
    const cp_volume_request *q = req;
    cp_volume_response *r = resp;
    const cp_storage_group_ctx *ctx = cp_sg_ctx(call);
    char id[CP_VOLUME_ID_LEN + 1];
    char root[CP_SMBLINK_ROOT_MAX];
    cp_volume_info v;
    if (ctx->smb_volume_stats && ctx->smb != NULL &&
        cp_smbvol_parse(q->volume_id, root, sizeof(root))) {
        cp_error e;
        if (cp_smbvol_stats(ctx->smb, q->volume_id, root, &r->total_bytes, &r->used_bytes, &e) !=
            CP_OK)
            return efail(call, &e);
        return CP_OK;
    }
    int rc = known_volume(call, q->volume_id, id, &v);
    if (rc != CP_OK)
        return rc;
    r->total_bytes = (int64_t)v.size;
    r->used_bytes = (int64_t)(v.size - (v.size_remaining < v.size ? v.size_remaining : v.size));
    return CP_OK;
}

int cp_volume_handle_disk_number(cp_call *call, const void *req, void *resp)
{
    const cp_volume_request *q = req;
    cp_volume_response *r = resp;
    char id[CP_VOLUME_ID_LEN + 1];
    cp_volume_info v;
    int rc = known_volume(call, q->volume_id, id, &v);
    if (rc != CP_OK)
        return rc;
    r->disk_number = v.disk_number;
    r->disk_number64 = v.disk_number;
    return CP_OK;
}

/* EBS decides "nothing is staged here" by matching the error text against
 * `(Get-Item -Path \S+).Target, output: , error: <nil>|because it does not
 * exist` (DRIVER-CONTRACTS §1.3, facts 3-5): csi-proxy v1.2.1's texts for a
 * directory with no target and for a missing path. Any other text fails
 * NodeStageVolume on its fresh staging directory and an unstage retry
 * for ever. So our explanation is followed by the v1.2.1 wording; the
 * status codes stay ours (FAILED_PRECONDITION, NOT_FOUND). */
#define V121_NO_TARGET "cmd: (Get-Item -Path $Env:mountpath).Target, output: , error: <nil>"
#define LINK_STEPS 8 /* directory links followed at most, each confined */

/* The SMB share dir leads to (smbvol.h), when the feature is on: CP_OK
 * with its ID in resp, CP_SMBLINK_NONE (nothing recorded) when dir leads
 * to no share, else the failure, recorded. */
static int share_id(cp_call *call, const char *dir, cp_volume_response *resp)
{
    const cp_storage_group_ctx *ctx = cp_sg_ctx(call);
    if (!ctx->smb_volume_stats)
        return CP_SMBLINK_NONE;
    cp_smblink *l = cp_call_alloc(call, sizeof(*l));
    char *id = cp_call_alloc(call, CP_SMBLINK_ROOT_MAX + 16);
    if (l == NULL || id == NULL)
        return vfail(call, CP_E_NOMEM, "out of memory");
    cp_error e;
    int rc = cp_smblink_find(call, ctx->rules, &ctx->fs, ctx->smb, dir, l, &e);
    if (rc == CP_SMBLINK_NONE)
        return rc;
    if (rc != CP_OK)
        return rc == CP_E_FAILED_PRECONDITION ? vfail(call, rc, "%s (" V121_NO_TARGET ")", e.msg)
                                              : efail(call, &e);
    if (!cp_smbvol_id(l->root, id, CP_SMBLINK_ROOT_MAX + 16))
        return vfail(call, CP_E_INVALID_ARGUMENT, "%s leads to the share %s: name too long", dir,
                     l->root);
    resp->volume_id = id;
    return CP_OK;
}

static int no_such_dir(cp_call *call, const char *dir)
{
    return vfail(call, CP_E_NOT_FOUND,
                 "directory %s does not exist (Cannot find path '%s' because it does not exist.)",
                 dir, dir);
}

/* Kubelet's pod path is a directory link (CreateSymlink) to the staging
 * mount point, and drivers ask for the volume behind it (fact 6): a
 * directory that is no mount point but a link is followed - the host
 * resolves it and the result is confined again (cp_hostpath_follow) -
 * at most LINK_STEPS times, then the mount-point test runs on where it
 * leads. csi-proxy v1.2.1 followed each .Target the same way. */
int cp_volume_handle_id_from_target(cp_call *call, const void *req, void *resp)
{
    const cp_volume_request *q = req;
    const cp_storage_group_ctx *ctx = cp_sg_ctx(call);
    const cp_storage_host *h = cp_sg_host(call);
    const char *dir;
    if (q->target_path[0] == '\0')
        return vfail(call, CP_E_INVALID_ARGUMENT, "target path is empty");
    const char *path = cp_hostpath_with_drive(call, q->target_path);
    if (path == NULL)
        return vfail(call, CP_E_NOMEM, "out of memory");
    cp_error e;
    bool exists = false;
    if (cp_hostpath_confine_entry(call, ctx->rules, &ctx->fs, path, CP_PATH_READ, &dir, &e) !=
            CP_OK ||
        ctx->fs.ops->exists(ctx->fs.ctx, dir, &exists, &e) != CP_OK)
        return efail(call, &e);
    if (!exists)
        return no_such_dir(call, dir);
    char *id = cp_call_alloc(call, CP_VOLUME_ID_MAX);
    if (id == NULL)
        return vfail(call, CP_E_NOMEM, "out of memory");
    /* A link chain that ends at an SMB share is answered only where the
     * walk below would fail (share_id), so every disk volume resolves as
     * before. */
    const char *cur = dir;
    int share;
    for (int step = 0;; step++) {
        int rc = h->ops->volume_at(h->ctx, cur, id, CP_VOLUME_ID_MAX, &e);
        if (rc == CP_OK) {
            ((cp_volume_response *)resp)->volume_id = id;
            return CP_OK;
        }
        if (rc == CP_E_NOT_FOUND) /* gone meanwhile, or a link to nowhere */
            return (share = share_id(call, dir, resp)) != CP_SMBLINK_NONE ? share
                                                                          : no_such_dir(call, cur);
        if (rc != CP_E_FAILED_PRECONDITION)
            return efail(call, &e);
        bool link = false;
        cp_error e2;
        if (step == LINK_STEPS || ctx->fs.ops->is_link(ctx->fs.ctx, cur, &link, &e2) != CP_OK ||
            !link)
            break;
        const char *next;
        if (cp_hostpath_follow(call, ctx->rules, &ctx->fs, cur, &next, &e2) != CP_OK)
            return (share = share_id(call, dir, resp)) != CP_SMBLINK_NONE ? share
                                                                          : efail(call, &e2);
        cur = next;
    }
    if ((share = share_id(call, dir, resp)) != CP_SMBLINK_NONE)
        return share;
    if (cur != dir)
        return vfail(call, CP_E_FAILED_PRECONDITION,
                     "%s leads to %s, which is not a mounted folder (" V121_NO_TARGET ")", dir,
                     cur);
    return vfail(call, CP_E_FAILED_PRECONDITION, "%s: not a mounted folder (" V121_NO_TARGET ")",
                 dir);
}

/* Upstream's walk: from the path towards its drive root, the first
 * directory that is a volume mount point gives the volume; at the root,
 * the volume of the drive letter. Mount points are reparse points, so
 * the walk never needs to follow them any further. */
int cp_volume_handle_closest_id(cp_call *call, const void *req, void *resp)
{
    const cp_volume_request *q = req;
    const cp_storage_host *h = cp_sg_host(call);
    const char *dir;
    int rc = check_dir(call, q->target_path, "target path is empty", CP_PATH_READ, &dir);
    if (rc != CP_OK)
        return rc;
    char *id = cp_call_alloc(call, CP_VOLUME_ID_MAX);
    if (id == NULL)
        return vfail(call, CP_E_NOMEM, "out of memory");
    cp_error e;
    const char *cur = dir;
    for (int i = 0; i < CLOSEST_STEPS; i++) {
        rc = h->ops->volume_at(h->ctx, cur, id, CP_VOLUME_ID_MAX, &e);
        if (rc == CP_OK) {
            ((cp_volume_response *)resp)->volume_id = id;
            return CP_OK;
        }
        if (rc != CP_E_FAILED_PRECONDITION)
            break;
        const char *parent = cp_hostpath_parent(call, cur);
        if (parent == NULL) {
            rc = h->ops->drive_volume(h->ctx, cur[0], id, CP_VOLUME_ID_MAX, &e);
            if (rc == CP_OK) {
                ((cp_volume_response *)resp)->volume_id = id;
                return CP_OK;
            }
            break;
        }
        cur = parent;
    }
    if (rc == CP_OK || rc == CP_E_FAILED_PRECONDITION)
        cp_error_set(&e, CP_E_INTERNAL, "failed to find the closest volume for path=%s", dir);
    return vfail(call, e.status, "error getting the closest volume for the path=%s, err=%s",
                 q->target_path, e.msg);
}

int cp_volume_handle_flush(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const cp_volume_request *q = req;
    const cp_storage_host *h = cp_sg_host(call);
    char id[CP_VOLUME_ID_LEN + 1];
    cp_volume_info v;
    int rc = check_id(call, q->volume_id, "volume id empty", id);
    if (rc == CP_OK)
        rc = volume_to_change(call, id, "flush its cache", &v);
    if (rc != CP_OK)
        return rc;
    cp_error e;
    if (cp_sg_lock_disk(call, v.disk_number) != CP_OK)
        return CP_PARKED;
    rc = h->ops->flush_volume(h->ctx, id, &e);
    cp_sg_unlock_disk(call, v.disk_number);
    return rc == CP_OK ? CP_OK : efail(call, &e);
}

/* --- converters ------------------------------------------------------------- */

int cp_volume_conv_list_legacy(cp_call *call, const ProtobufCMessage *in, void *req)
{
    const char *s = cp_pb_get_string(in, "disk_id");
    char why[256];
    cp_volume_request *q = req;
    q->partition_number = 0; /* old versions list every partition */
    if (cp_parse_disk_number(s != NULL ? s : "", &q->disk_number, why, sizeof(why)) != CP_OK)
        return vfail(call, CP_E_INVALID_ARGUMENT, "Failed to parse diskId: err=%s", why);
    return CP_OK;
}

int cp_volume_conv_list(cp_call *call, const void *resp, ProtobufCMessage *out)
{
    const cp_volume_response *r = resp;
    return cp_pb_set_strings(call, out, "volume_ids", r->volume_ids, r->n_volume_ids);
}

/* --- field maps ------------------------------------------------------------- */

#define REQ(f, member, kind)                                                                       \
    {                                                                                              \
        f, offsetof(cp_volume_request, member), kind                                               \
    }
#define RESP(f, member, kind)                                                                      \
    {                                                                                              \
        f, offsetof(cp_volume_response, member), kind                                              \
    }

const cp_fieldmap cp_volume_map_disk_partition[] = {
    REQ("disk_number", disk_number, CP_F_UINT32),
    REQ("partition_number", partition_number, CP_F_UINT32),
    {NULL},
};
const cp_fieldmap cp_volume_map_id[] = {REQ("volume_id", volume_id, CP_F_STRING), {NULL}};
const cp_fieldmap cp_volume_map_id_path[] = {
    REQ("volume_id", volume_id, CP_F_STRING),
    REQ("path", target_path, CP_F_STRING),
    {NULL},
};
const cp_fieldmap cp_volume_map_id_target[] = {
    REQ("volume_id", volume_id, CP_F_STRING),
    REQ("target_path", target_path, CP_F_STRING),
    {NULL},
};
const cp_fieldmap cp_volume_map_id_size[] = {
    REQ("volume_id", volume_id, CP_F_STRING),
    REQ("size", size_bytes, CP_F_INT64),
    {NULL},
};
const cp_fieldmap cp_volume_map_id_size_bytes[] = {
    REQ("volume_id", volume_id, CP_F_STRING),
    REQ("size_bytes", size_bytes, CP_F_INT64),
    {NULL},
};
const cp_fieldmap cp_volume_map_mount[] = {REQ("mount", target_path, CP_F_STRING), {NULL}};
const cp_fieldmap cp_volume_map_target[] = {REQ("target_path", target_path, CP_F_STRING), {NULL}};
const cp_fieldmap cp_volume_map_formatted[] = {RESP("formatted", formatted, CP_F_BOOL), {NULL}};
const cp_fieldmap cp_volume_map_stats[] = {
    RESP("total_bytes", total_bytes, CP_F_INT64),
    RESP("used_bytes", used_bytes, CP_F_INT64),
    {NULL},
};
const cp_fieldmap cp_volume_map_volume_stats[] = {
    RESP("volumeSize", total_bytes, CP_F_INT64),
    RESP("volumeUsedSize", used_bytes, CP_F_INT64),
    {NULL},
};
const cp_fieldmap cp_volume_map_disk_number[] = {
    RESP("disk_number", disk_number, CP_F_UINT32),
    {NULL},
};
const cp_fieldmap cp_volume_map_disk_number64[] = {
    RESP("diskNumber", disk_number64, CP_F_INT64),
    {NULL},
};
const cp_fieldmap cp_volume_map_volume_id[] = {RESP("volume_id", volume_id, CP_F_STRING), {NULL}};
