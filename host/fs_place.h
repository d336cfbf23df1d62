/* fs_place.h - where an object a path leads to really lives, as a path
 * confinement can judge (the decision behind fs_win.c's resolve, kept
 * portable so that it is unit-tested natively).
 *
 * Windows names an object by its volume and its path on that volume:
 * GetFinalPathNameByHandleW(VOLUME_NAME_GUID) gives "\\?\Volume{G}\rest".
 * A volume may have several DOS names at once - drive letters and folder
 * mount points (GetVolumePathNamesForVolumeNameW) - and an object is
 * reachable through each. Which of them is "where it lives" decides
 * confinement: the system volume mounted at a folder inside the kubelet
 * directory makes C:\Windows reachable as ...\kubelet\pods\x\mnt\Windows.
 *
 * The rule (fs.h, resolve):
 *   1. an anchor (a configured directory, with its own location) on the
 *      object's volume whose location holds the object: the object is
 *      named through that anchor ("anchor\rest");
 *   2. otherwise, on a protected volume - one holding an anchor, or the
 *      system volume (the running Windows) - the object is outside every
 *      anchor: it is named by the volume's drive letter, else by its
 *      shortest mount folder that the caller's path did not come through,
 *      and when even that name would look inside an anchor (the object is
 *      hidden under a mount folder), by its "\\?\Volume{G}\rest" form,
 *      which confinement refuses;
 *   3. on any other volume (a data volume a CSI driver mounted at a staging
 *      folder) the mount folder the caller's path came through is where it
 *      lives (the longest such name), else the volume's first DOS name,
 *      else the GUID form.
 * Volume GUIDs and names compare ASCII-case-insensitively with a separator
 * boundary (the GUIDs are hex; the paths come normalized from the file
 * system, so both sides carry the same case).
 */
#ifndef CP_WINAPI_FS_PLACE_H
#define CP_WINAPI_FS_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

typedef struct cp_fs_anchor {
    const wchar_t *text;     /* "C:\var\lib\kubelet", as configured */
    const wchar_t *location; /* "\\?\Volume{G}\var\lib\kubelet", or NULL: unknown */
} cp_fs_anchor;

/* location: "\\?\Volume{G}\rest" ("\\?\Volume{G}\" for the volume root).
 * via: the caller's path ("C:\...", no \\?\). names: the volume's DOS names
 * as GetVolumePathNamesForVolumeNameW lists them (each "X:\..." ending in
 * '\', the list ended by an empty string), or NULL. system_volume:
 * "\\?\Volume{G}\" of the running Windows, or NULL. Returns the malloc'd
 * name (no trailing '\' except "X:\"), or NULL when out of memory. */
wchar_t *cp_fs_place(const wchar_t *location, const wchar_t *via, const wchar_t *names,
                     const wchar_t *system_volume, const cp_fs_anchor *anchors, size_t n_anchors);

#endif
