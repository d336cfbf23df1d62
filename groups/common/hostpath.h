/* hostpath.h - confinement of host paths after link resolution, shared by
 * the filesystem group and the volume group. The volume group's paths
 * (MountVolume, UnmountVolume/DismountVolume, GetVolumeIDFromTargetPath/
 * GetVolumeIDFromMount, GetClosestVolumeIDFromTargetPath) get the same
 * rules as the filesystem group's (pathrules.h); upstream applies none to
 * any volume RPC.
 *
 * A mount directory is judged as an entry: the rules on the text, then its
 * parent is resolved through links by the file-system host and the result,
 * with the last name appended, must still lie inside a configured
 * directory. The entry itself is not followed: once mounted, it leads to
 * another volume (\\?\Volume{...}\), which is exactly what a mount point
 * is, not an escape.
 *
 * That check is by name. A write of the filesystem or smb group then hands
 * the host a guard (cp_hostpath_guard) with which the host judges again,
 * through the handle it writes through, where it really is (host/fs.h
 * cp_fs_guard), so a directory swapped for a link after the check is
 * refused, not written through. The volume group's mount and unmount calls
 * still name the folder to the storage host by path.
 */
#ifndef CP_GROUPS_HOSTPATH_H
#define CP_GROUPS_HOSTPATH_H

#include <stdbool.h>

#include "dispatch/method.h"
#include "host/fs.h"
#include "groups/common/pathrules.h"

/* What the request does with the path it names. A configured directory
 * (and any ancestor of one) may be named for CP_PATH_READ, never for
 * CP_PATH_REPLACE (cp_pathrules_check_keeps_roots), neither as given nor
 * as resolved: the kubelet directory holds every pod's data. */
typedef enum cp_path_intent {
    CP_PATH_READ,    /* reads it, or creates it when missing: PathExists,
                        IsSymlink, Mkdir, a link's source, volume lookups */
    CP_PATH_REPLACE, /* removes, empties, replaces or mounts over it: Rmdir,
                        RmdirContents, a new link's path, MountVolume,
                        UnmountVolume */
} cp_path_intent;

/* The second step alone, for a path whose rules (cp_pathrules_check)
 * already passed: resolve links - the parent only when entry is true (the
 * operation acts on the entry itself and never follows it), else the whole
 * path (the operation follows it) - and check that the result, with the
 * name appended for an entry, still lies inside (cp_pathrules_check_resolved).
 * The host resolves with the configured directories as anchors (fs.h), so
 * a path is judged by where its object really lives, not by a mount folder
 * it went through. With CP_PATH_REPLACE, neither path nor its resolution
 * may be or contain a configured directory.
 * Same results and errors as cp_hostpath_confine_entry below. */
int cp_hostpath_confine(cp_call *call, const cp_pathrules *rules, const cp_fs_host *fs,
                        const char *path, bool entry, cp_path_intent intent, const char **out,
                        cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

/* Rules, then cp_hostpath_confine(entry = true, intent).
 * CP_OK and *out = the normalized path (no trailing '\' except for a drive
 * root "X:\"), allocated in the call's arena; or CP_E_INVALID_ARGUMENT
 * (a rule is broken: e names the path and the rule), CP_E_NOMEM, or what
 * the host's resolve reported (e.g. FAILED_PRECONDITION for a dangling link
 * in the parent). */
int cp_hostpath_confine_entry(cp_call *call, const cp_pathrules *rules, const cp_fs_host *fs,
                              const char *path, cp_path_intent intent, const char **out,
                              cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

/* The guard (fs.h cp_fs_guard) a writing host operation on path gets once
 * cp_hostpath_confine() passed: the host judges through it, on the
 * directory handle it really writes through, what cp_hostpath_confine
 * judged by name - cp_pathrules_check_resolved and, for CP_PATH_REPLACE,
 * cp_pathrules_check_keeps_roots, on that handle's final path - so a link
 * swapped in after the check is refused instead of written through. In
 * the call's arena; NULL when out of memory. */
cp_fs_guard *cp_hostpath_guard(cp_call *call, const cp_pathrules *rules, const char *path,
                               cp_path_intent intent);

/* Paths as drivers send them to the RPCs upstream never validates (the
 * volume group's paths, IsSymlink): a raw kubelet path may lack its drive
 * letter ("\var\lib\kubelet\..." when kubelet's root dir has none).
 * Windows resolves such a path against the current drive; mount-utils'
 * NormalizeWindowsPath prefixes "c:". Here the system drive
 * (cp_fs_system_drive: %SystemDrive% on Windows, "C:" natively) is
 * prefixed to a path starting with exactly one '\'; every other path is
 * returned as is (UNC, \\?\ and device paths stay refused by the rules).
 * In the call's arena; NULL when out of memory. */
const char *cp_hostpath_with_drive(cp_call *call, const char *path);

/* Where path leads once every link in it is followed: the host resolves
 * the whole path (fs.h resolve) and the result must lie inside a
 * configured directory (cp_pathrules_check_resolved). CP_OK and *out = the
 * resolved path (call's arena); CP_E_INVALID_ARGUMENT when it leads
 * outside; what resolve reported otherwise (FAILED_PRECONDITION for a
 * dangling link). Call only for a path cp_pathrules_check() accepted. */
int cp_hostpath_follow(cp_call *call, const cp_pathrules *rules, const cp_fs_host *fs,
                       const char *path, const char **out, cp_error *e)
#if defined(__GNUC__)
    __attribute__((warn_unused_result))
#endif
    ;

/* The parent of a normalized path ("C:\a\b" -> "C:\a", "C:\a" -> "C:\"),
 * in the call's arena; NULL for a drive root or when out of memory. */
char *cp_hostpath_parent(cp_call *call, const char *path);

#endif
