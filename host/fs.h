/* fs.h - what the filesystem group asks of the host, as an ops table.
 *
 * Paths are UTF-8 Windows paths ("C:\var\lib\kubelet\pods\x"), already
 * checked by the group's path rules. Implementations:
 *   fs_win.c  - the product: Win32 calls, UTF-16 only inside.
 *   fs_posix.c  - the native build (tests, conformance): maps "C:\a\b" to
 *                 <root>/C/a/b on the Linux file system.
 * Every function returns CP_OK or a negative cp_status and fills e with a
 * message naming the operation, the path and the system's error text.
 */
#ifndef CP_WINAPI_FS_H
#define CP_WINAPI_FS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"

/* How a host operation that writes learns that what it is about to write
 * lies where the group allowed it. The group checked the path by name
 * (after resolving links); between that check and the write, a caller who
 * can write under a root could swap a directory on the way for a link. So
 * a host never walks the path again by name to write: it writes (creates,
 * deletes, lists, links) only relative to a directory handle it holds, and
 * before it writes through a handle that a link may have led it to, it
 * names that open directory (its final path, resolved as resolve() does,
 * the rest of the path appended) and asks judge. What is judged is what
 * is written through.
 *   fs_posix.c walks from its root one component at a time with
 *     openat(O_NOFOLLOW|O_DIRECTORY); a link met on the way is followed
 *     and the directory reached is judged; without a followed link the
 *     object is where its name says, which the group checked.
 *   fs_win.c opens the directory following links and judges it every
 *     time (Wine's opens follow a link even with FILE_OPEN_REPARSE_POINT,
 *     so a walk could not tell), then creates and opens names inside it
 *     with NtCreateFile relative to that handle. */
typedef struct cp_fs_guard {
    const char *const *anchors; /* as resolve takes them */
    size_t n_anchors;
    /* CP_OK lets the write go on; otherwise e says why and the operation
     * fails with that status, having written nothing there. */
    int (*judge)(void *arg, const char *final, cp_error *e);
    void *arg;
} cp_fs_guard;

/* What kind of link symlink() makes. */
typedef enum cp_fs_link_kind {
    CP_FS_LINK_AUTO, /* a directory link when the target is a directory
                        (CreateSymlink, as upstream's os.Symlink) */
    CP_FS_LINK_DIR,  /* always a directory link (an SMB mapping's local
                        path, as upstream's New-Item -ItemType SymbolicLink
                        of a share) */
} cp_fs_link_kind;

typedef struct cp_fs_ops {
    /* Lstat semantics: a dangling link exists. */
    int (*exists)(void *ctx, const char *path, bool *exists, cp_error *e);
    /* The writing operations below take a guard (see cp_fs_guard; NULL
     * only for a caller that confines nothing, such as the hosts' own
     * tests) and act through handles, never by walking path again by
     * name.
     *
     * Creates path and missing parents; an existing directory is success,
     * a file in the way is FAILED_PRECONDITION/ALREADY_EXISTS. Each missing
     * directory is made relative to its open parent. */
    int (*mkdir_all)(void *ctx, const char *path, const cp_fs_guard *g, cp_error *e);
    /* recursive=false: remove a file, link or empty directory; missing is
     * NOT_FOUND. recursive=true: remove the tree, never following links
     * (a link is removed, not its target); missing is success. The entry
     * is removed relative to its open parent; the tree below it goes by
     * open directory, not by path name: each entry is opened relative to
     * its open parent without following a link, checked through that open
     * handle, and a directory is listed and removed through it; so a
     * directory swapped for a link after it was listed is removed as a
     * link, never entered. */
    int (*remove)(void *ctx, const char *path, bool recursive, const cp_fs_guard *g, cp_error *e);
    /* Removes every entry inside directory path, never following links
     * below path (the same walk). path itself is followed when it is a
     * link, and then judged again through the directory handle reached. */
    int (*remove_contents)(void *ctx, const char *path, const cp_fs_guard *g, cp_error *e);
    /* Creates link at link_path pointing to target (kind above), relative
     * to link_path's open parent. link_path existing is ALREADY_EXISTS.
     * target is only stored in the link, never opened for writing. */
    int (*symlink)(void *ctx, const char *link_path, const char *target, cp_fs_link_kind kind,
                   const cp_fs_guard *g, cp_error *e);
    /* True when path is a symlink/reparse point or a volume mount point
     * whose target exists; missing path is NOT_FOUND. */
    int (*is_link)(void *ctx, const char *path, bool *is_link, cp_error *e);
    /* Resolves reparse points/links of the longest existing prefix of path
     * and writes the final path (same syntax as the input) to out. Used to
     * confine paths after link resolution. The missing rest is appended as
     * is. An existing entry that cannot be followed (a dangling link inside
     * the path) is FAILED_PRECONDITION: callers fail closed. A target with
     * no drive-letter form comes back in a form confinement refuses
     * (\\server\..., \\?\Volume{...}\...).
     *
     * anchors (n_anchors of them, "X:\..." each) are the directories
     * requests are confined to. The result names where the object really
     * lives, never merely the mount folder the path went through:
     *   - on a protected volume - one that holds an anchor, or the running
     *     Windows - the result goes through the anchor whose real place on
     *     that volume holds the object ("anchor\rest"); an object outside
     *     every anchor's place there comes back in a form that is outside
     *     every anchor (its drive-letter form, else \\?\Volume{...}\...),
     *     whatever folder it was reached through;
     *   - on any other volume (a data volume a CSI driver mounted at a
     *     staging folder) the result goes through the mount folder the
     *     path went through, else the volume's first DOS name.
     * The POSIX host has no volumes and ignores anchors. */
    int (*resolve)(void *ctx, const char *path, const char *const *anchors, size_t n_anchors,
                   char *out, size_t outlen, cp_error *e);
    /* What the symbolic link at path stores, not followed, in Windows
     * syntax: "X:\..." or a share's "\\server\share\..." (as the smb
     * group's links store it). Nothing is opened through the link, so the
     * answer does not depend on the target being reachable. A path that is
     * no symbolic link (a directory, a mount point, a file) is
     * FAILED_PRECONDITION; a missing one NOT_FOUND. */
    int (*read_link)(void *ctx, const char *path, char *out, size_t outlen, cp_error *e);
} cp_fs_ops;

typedef struct cp_fs_host {
    const cp_fs_ops *ops;
    void *ctx;
} cp_fs_host;

/* The letter of the drive Windows runs from, for paths that come without
 * one (groups/common/hostpath.h): %SystemDrive% in the Windows builds
 * (fs_win.c), 'C' natively (fs_posix.c). Upper case. */
char cp_fs_system_drive(void);

/* The product implementation (Windows build only). */
cp_fs_host cp_fs_host_win32(void);

/* The native implementation rooted at root (native build only). root is
 * copied. Free with cp_fs_host_posix_free. */
int cp_fs_host_posix_new(const char *root, cp_fs_host *out, cp_error *e);
void cp_fs_host_posix_free(cp_fs_host *h);

/* Connects the native host to the storage simulator's mount points
 * (mountpoints.h; copied, NULL disconnects), so that IsSymlink and Rmdir
 * see a folder a volume is mounted at as Windows does. Native build only;
 * call before serving. */
struct cp_mount_points;
void cp_fs_host_posix_set_mount_points(cp_fs_host *h, const struct cp_mount_points *mp);

#endif
