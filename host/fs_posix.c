/* fs_posix.c - the filesystem host ops on a POSIX file system, for the native
 * build (unit tests, conformance). "C:\a\b" lives at <root>/C/a/b (drive
 * letter upper-cased). Names are case-sensitive here, unlike Windows.
 *
 * Writes act on what was checked (fs.h, cp_fs_guard): the path is walked
 * from <root> one component at a time with openat(O_NOFOLLOW|O_DIRECTORY),
 * each relative to the descriptor opened before it; a link met on the way
 * is followed, and then the directory reached is named from its descriptor
 * (/proc/self/fd) and judged before anything is written through it. The
 * write itself (mkdirat, unlinkat, symlinkat) is relative to the
 * descriptor held. Removal never follows links: directories below the
 * starting point are opened with openat(O_NOFOLLOW) and walked through
 * their descriptors, so a link (or a directory swapped for a link
 * meanwhile) is unlinked, never entered.
 *
 * Mount points: Linux mounts (a directory on another device than its
 * parent) count as volume mount points, and so does every folder the
 * storage simulator of the same build has a volume mounted at, once the
 * two are connected (cp_fs_host_posix_set_mount_points, mountpoints.h):
 * is_link reports such a folder as Windows does, and removing it deletes
 * the mount point, never the volume's files (see drop_mount_folder).
 */
#include "host/fs.h"
#include "host/mountpoints.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct posix_fs {
    char *root;         /* as given */
    char *root_real;    /* realpath(root): resolve maps host paths back with it */
    cp_mount_points mp; /* volume_at NULL: not connected to a storage simulator */
} posix_fs;

/* --- errors ------------------------------------------------------------- */

static int errno_status(int err)
{
    switch (err) {
    case ENOENT:
        return CP_E_NOT_FOUND;
    case EEXIST:
        return CP_E_ALREADY_EXISTS;
    case ENOTEMPTY:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case EBUSY:
        return CP_E_FAILED_PRECONDITION;
    case EACCES:
    case EPERM:
    case EROFS:
        return CP_E_PERMISSION_DENIED;
    case ENAMETOOLONG:
    case EINVAL:
        return CP_E_INVALID_ARGUMENT;
    case ENOSPC:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
        return CP_E_RESOURCE_EXHAUSTED;
    default:
        return CP_E_UNKNOWN;
    }
}

/* "<op> <windows path>: <strerror>"; err is errno captured by the caller. */
static int os_error(cp_error *e, int err, const char *op, const char *wpath)
{
    return cp_error_set(e, errno_status(err), "%s %s: %s", op, wpath, strerror(err));
}

/* --- path mapping --------------------------------------------------------- */

/* "C:\a\b" -> "<root>/C/a/b". The group's rules already refused anything
 * else; this refuses it again so the mapping alone can never leave root. */
static int map_path(const posix_fs *fs, const char *wpath, char *out, size_t outlen, cp_error *e)
{
    if (!isalpha((unsigned char)wpath[0]) || wpath[1] != ':' || wpath[2] != '\\' ||
        strchr(wpath, '/') != NULL || strstr(wpath, "..") != NULL)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "not a drive-absolute path: %s", wpath);
    int n =
        snprintf(out, outlen, "%s/%c/%s", fs->root, toupper((unsigned char)wpath[0]), wpath + 3);
    if (n < 0 || (size_t)n >= outlen)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "path too long: %s", wpath);
    for (char *s = out + strlen(fs->root); *s != '\0'; s++)
        if (*s == '\\')
            *s = '/';
    size_t len = (size_t)n;
    while (len > 1 && out[len - 1] == '/')
        out[--len] = '\0';
    return CP_OK;
}

/* A real host path back to Windows syntax; paths outside the emulated
 * drives come back as "\\posix-host\..." so confinement refuses them. */
static int unmap_path(const posix_fs *fs, const char *host, char *out, size_t outlen, cp_error *e)
{
    size_t rl = strlen(fs->root_real);
    int n;
    if (strncmp(host, fs->root_real, rl) == 0 && host[rl] == '/' &&
        isalpha((unsigned char)host[rl + 1]) && (host[rl + 2] == '/' || host[rl + 2] == '\0')) {
        const char *rest = host[rl + 2] == '/' ? host + rl + 3 : "";
        n = snprintf(out, outlen, "%c:\\%s", toupper((unsigned char)host[rl + 1]), rest);
    } else {
        n = snprintf(out, outlen, "\\\\posix-host%s", host);
    }
    if (n < 0 || (size_t)n >= outlen)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "resolved path too long: %s", host);
    for (char *s = out; *s != '\0'; s++)
        if (*s == '/')
            *s = '\\';
    return CP_OK;
}

/* --- ops ------------------------------------------------------------------ */

static int fs_exists(void *ctx, const char *path, bool *exists, cp_error *e)
{
    char host[PATH_MAX];
    struct stat st;
    int rc = map_path(ctx, path, host, sizeof(host), e);
    if (rc != CP_OK)
        return rc;
    if (lstat(host, &st) == 0) {
        *exists = true;
        return CP_OK;
    }
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
        *exists = false;
        return CP_OK;
    }
    return os_error(e, err, "lstat", path);
}

/* --- the walk (fs.h, cp_fs_guard) ------------------------------------------ */

typedef struct walk {
    const posix_fs *fs;
    const cp_fs_guard *g;
    const char *path; /* the Windows path, for messages */
    char host[PATH_MAX];
    char *next;  /* host: the component the walk opens next */
    int fd;      /* the directory reached */
    bool judged; /* no link followed since the start, or judged since */
} walk;

static int walk_start(walk *w, const posix_fs *fs, const char *path, const cp_fs_guard *g,
                      cp_error *e)
{
    w->fs = fs;
    w->g = g;
    w->path = path;
    w->fd = -1;
    w->judged = true; /* below <root>, the path's own text: the group checked it */
    int rc = map_path(fs, path, w->host, sizeof(w->host), e);
    if (rc != CP_OK)
        return rc;
    w->next = w->host + strlen(fs->root) + 1;
    w->fd = open(fs->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return w->fd >= 0 ? CP_OK : os_error(e, errno, "open", path);
}

static void walk_end(walk *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

/* The component at w->next, NUL-terminated in place; *more tells whether
 * others follow it. */
static char *component(walk *w, bool *more)
{
    char *name = w->next;
    char *slash = strchr(name, '/');
    *more = slash != NULL;
    if (slash != NULL)
        *slash = '\0';
    return name;
}

static void advance(walk *w, char *name, bool more)
{
    size_t n = strlen(name);
    if (more)
        name[n++] = '/';
    w->next = name + n;
}

/* Before writing through w->fd: when a link was followed to reach it, its
 * real place (read back from the descriptor) with rest (the host
 * components still to come, '/'-separated, or "") appended goes to the
 * guard. */
static int walk_judge(walk *w, const char *rest, cp_error *e)
{
    if (w->judged || w->g == NULL)
        return CP_OK;
    char proc[64], real[PATH_MAX], joined[PATH_MAX + 8], final[PATH_MAX + 64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w->fd);
    ssize_t n = readlink(proc, real, sizeof(real) - 1);
    if (n < 0)
        return os_error(e, errno, "readlink (the directory reached by)", w->path);
    real[n] = '\0';
    int len = snprintf(joined, sizeof(joined), "%s%s%s", real, *rest != '\0' ? "/" : "", rest);
    if (len < 0 || (size_t)len >= sizeof(joined))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "resolve %s: path too long", w->path);
    int rc = unmap_path(w->fs, joined, final, sizeof(final), e);
    if (rc == CP_OK)
        rc = w->g->judge(w->g->arg, final, e);
    if (rc == CP_OK)
        w->judged = true;
    return rc;
}

/* Opens the directory name inside w->fd and moves there. A link is
 * followed (w->judged drops). errno-style result: 0, or the errno of the
 * failed open (ENOTDIR: something that is not a directory is there). */
static int walk_into(walk *w, const char *name)
{
    for (int tries = 0; tries < 8; tries++) {
        int fd = openat(w->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        bool followed = false;
        if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
            struct stat st;
            if (fstatat(w->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                return errno;
            if (S_ISDIR(st.st_mode))
                continue; /* swapped back meanwhile: look again */
            if (!S_ISLNK(st.st_mode))
                return ENOTDIR;
            fd = openat(w->fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            followed = true;
        }
        if (fd < 0)
            return errno;
        close(w->fd);
        w->fd = fd;
        if (followed)
            w->judged = false;
        return 0;
    }
    return ELOOP;
}

/* Walks to the directory holding the last component; *name is that
 * component (in w->host). A missing directory on the way: ENOENT in *err
 * and CP_E_NOT_FOUND with e set. */
static int walk_to_parent(walk *w, char **name, int *err, cp_error *e)
{
    for (;;) {
        bool more;
        char *c = component(w, &more);
        if (!more) {
            *name = c;
            return CP_OK;
        }
        *err = walk_into(w, c);
        advance(w, c, more);
        if (*err == ENOTDIR)
            return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                                "open %s: a file that is not a directory is on the way", w->path);
        if (*err != 0)
            return os_error(e, *err, "open", w->path);
    }
}

static int fs_mkdir_all(void *ctx, const char *path, const cp_fs_guard *g, cp_error *e)
{
    walk w;
    int rc = walk_start(&w, ctx, path, g, e);
    /* Open each component in turn, the drive directory too; a missing one
     * is made relative to the directory reached, once that is judged. */
    while (rc == CP_OK && *w.next != '\0') {
        bool more;
        char *name = component(&w, &more);
        int err = walk_into(&w, name);
        for (int tries = 0; err == ENOENT && tries < 8; tries++) {
            struct stat st;
            if (fstatat(w.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                break; /* a link that leads nowhere: not ours to replace */
            if (more)
                name[strlen(name)] = '/';
            rc = walk_judge(&w, name, e);
            if (more)
                *strchr(name, '/') = '\0';
            if (rc != CP_OK)
                break;
            if (mkdirat(w.fd, name, 0755) != 0 && errno != EEXIST) {
                err = errno;
                break;
            }
            err = walk_into(&w, name);
        }
        advance(&w, name, more);
        if (rc != CP_OK)
            break;
        if (err == ENOTDIR)
            rc = cp_error_set(e, CP_E_FAILED_PRECONDITION,
                              "mkdir %s: a file that is not a directory is in the way", path);
        else if (err != 0)
            rc = os_error(e, err, "mkdir", path);
    }
    walk_end(&w);
    return rc;
}

/* Windows deletes a folder that is a volume mount point as it deletes a
 * junction: the mount point goes, the volume and its files stay
 * (RemoveDirectoryW; fs_win.c never enters a reparse point). Here the
 * files a process wrote through the mount folder lie in that directory,
 * so when the simulator had a volume mounted at path, its mount point is
 * deleted and the directory is moved, whole, out of every drive to
 * <root>/.sim-volumes/<volume guid>.<n>: the volume's files are kept, the
 * path is free. host names the directory relative to at (AT_FDCWD: a
 * full host path). *dropped tells whether path was such a folder. */
static int drop_mount_folder(const posix_fs *fs, const char *path, int at, const char *host,
                             bool *dropped, cp_error *e)
{
    char id[128], store[PATH_MAX], dest[PATH_MAX + 32];
    *dropped = false;
    if (fs->mp.drop == NULL || fs->mp.drop(fs->mp.ctx, path, id, sizeof(id)) != CP_OK)
        return CP_OK;
    *dropped = true;
    const char *g = strchr(id, '{');
    size_t glen = g != NULL ? strcspn(g + 1, "}") : 0;
    snprintf(store, sizeof(store), "%s/.sim-volumes", fs->root);
    if (mkdir(store, 0755) != 0 && errno != EEXIST)
        return os_error(e, errno, "mkdir (volume store for)", path);
    for (unsigned n = 1; n < 10000; n++) {
        snprintf(dest, sizeof(dest), "%s/%.*s.%u", store, (int)glen, g != NULL ? g + 1 : "", n);
        if (renameat(at, host, AT_FDCWD, dest) == 0)
            return CP_OK;
        if (errno != EEXIST && errno != ENOTEMPTY)
            return os_error(e, errno, "rename (the volume's files out of)", path);
    }
    return cp_error_set(e, CP_E_RESOURCE_EXHAUSTED, "remove %s: no room to keep the volume's files",
                        path);
}

/* Deletes everything inside the directory open as dfd; wpath names it in
 * messages (a buffer of PATH_MAX bytes, extended and restored per entry).
 * Consumes dfd. */
static int clear_dir(const posix_fs *fs, int dfd, char *wpath, cp_error *e)
{
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        int err = errno;
        close(dfd);
        return os_error(e, err, "opendir", wpath);
    }
    int rc = CP_OK;
    size_t base = strlen(wpath);
    struct dirent *de;
    while (rc == CP_OK && (errno = 0, de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(wpath + base, PATH_MAX - base, "\\%s", de->d_name);
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = os_error(e, errno, "lstat", wpath);
        } else if (S_ISDIR(st.st_mode)) {
            bool dropped = false;
            rc = drop_mount_folder(fs, wpath, dirfd(d), de->d_name, &dropped, e);
            if (rc != CP_OK || dropped) {
                wpath[base] = '\0';
                continue;
            }
            int cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0)
                rc = os_error(e, errno, "open", wpath);
            else if ((rc = clear_dir(fs, cfd, wpath, e)) == CP_OK &&
                     unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0)
                rc = os_error(e, errno, "rmdir", wpath);
        } else if (unlinkat(dirfd(d), de->d_name, 0) != 0) {
            rc = os_error(e, errno, "unlink", wpath);
        }
        wpath[base] = '\0';
    }
    if (rc == CP_OK && errno != 0)
        rc = os_error(e, errno, "readdir", wpath);
    closedir(d);
    return rc;
}

static int fs_remove(void *ctx, const char *path, bool recursive, const cp_fs_guard *g, cp_error *e)
{
    walk w;
    char *name = NULL;
    int err = 0;
    struct stat st;
    int rc = walk_start(&w, ctx, path, g, e);
    if (rc == CP_OK)
        rc = walk_to_parent(&w, &name, &err, e);
    if (rc != CP_OK) {
        walk_end(&w);
        /* already gone: success, as upstream's RemoveAll */
        return recursive && (err == ENOENT || err == ENOTDIR) ? CP_OK : rc;
    }
    rc = walk_judge(&w, name, e);
    if (rc == CP_OK && fstatat(w.fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        err = errno;
        rc = recursive && (err == ENOENT || err == ENOTDIR) ? CP_OK
                                                            : os_error(e, err, "lstat", path);
        walk_end(&w);
        return rc;
    }
    if (rc == CP_OK && !S_ISDIR(st.st_mode)) { /* files and links alike: the entry itself */
        if (unlinkat(w.fd, name, 0) != 0)
            rc = os_error(e, errno, "unlink", path);
        walk_end(&w);
        return rc;
    }
    bool dropped = false;
    if (rc == CP_OK)
        rc = drop_mount_folder(ctx, path, w.fd, name, &dropped, e);
    if (rc == CP_OK && !dropped && recursive) {
        int dfd = openat(w.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0) {
            rc = os_error(e, errno, "open", path);
        } else {
            char wpath[PATH_MAX];
            snprintf(wpath, sizeof(wpath), "%s", path);
            rc = clear_dir(ctx, dfd, wpath, e);
        }
    }
    if (rc == CP_OK && !dropped && unlinkat(w.fd, name, AT_REMOVEDIR) != 0) {
        err = errno;
        if (err == EEXIST) /* POSIX allows it for a non-empty directory */
            err = ENOTEMPTY;
        rc = os_error(e, err, "rmdir", path);
    }
    walk_end(&w);
    return rc;
}

static int fs_remove_contents(void *ctx, const char *path, const cp_fs_guard *g, cp_error *e)
{
    walk w;
    char *name = NULL;
    int err = 0;
    int rc = walk_start(&w, ctx, path, g, e);
    if (rc == CP_OK)
        rc = walk_to_parent(&w, &name, &err, e);
    /* The directory itself may be a link: followed, then judged where it
     * leads (walk_into, walk_judge). */
    if (rc == CP_OK && (err = walk_into(&w, name)) != 0)
        rc = err == ENOTDIR ? cp_error_set(e, CP_E_FAILED_PRECONDITION,
                                           "RmdirContents %s: not a directory", path)
                            : os_error(e, err, "open", path);
    if (rc == CP_OK)
        rc = walk_judge(&w, "", e);
    if (rc == CP_OK) {
        int dfd = dup(w.fd);
        char wpath[PATH_MAX];
        snprintf(wpath, sizeof(wpath), "%s", path);
        rc = dfd < 0 ? os_error(e, errno, "dup", path) : clear_dir(ctx, dfd, wpath, e);
    }
    walk_end(&w);
    return rc;
}

static int fs_symlink(void *ctx, const char *link_path, const char *target, cp_fs_link_kind kind,
                      const cp_fs_guard *g, cp_error *e)
{
    (void)kind; /* POSIX links have no kind */
    char htarget[PATH_MAX];
    int rc = CP_OK;
    /* A share's path (\\server\share\..., the smb group's links) is kept
     * as the link's text: there is no share to map it onto here. */
    if (strncmp(target, "\\\\", 2) == 0)
        snprintf(htarget, sizeof(htarget), "%s", target);
    else
        rc = map_path(ctx, target, htarget, sizeof(htarget), e);
    if (rc != CP_OK)
        return rc;
    walk w;
    char *name = NULL;
    int err = 0;
    struct stat st;
    rc = walk_start(&w, ctx, link_path, g, e);
    if (rc == CP_OK)
        rc = walk_to_parent(&w, &name, &err, e);
    if (rc == CP_OK)
        rc = walk_judge(&w, name, e);
    if (rc == CP_OK && fstatat(w.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        rc = cp_error_set(e, CP_E_ALREADY_EXISTS, "symlink %s -> %s: %s already exists", link_path,
                          target, link_path);
    if (rc == CP_OK && symlinkat(htarget, w.fd, name) != 0)
        rc = os_error(e, errno, "symlink", link_path);
    walk_end(&w);
    return rc;
}

/* A directory on another device than its parent is a mount point: what
 * Windows calls a volume mounted in a folder. */
static bool is_mount_dir(const char *host, const struct stat *st)
{
    char parent[PATH_MAX];
    struct stat pst;
    int n = snprintf(parent, sizeof(parent), "%s/..", host);
    if (n < 0 || (size_t)n >= sizeof(parent))
        return false;
    return lstat(parent, &pst) == 0 && pst.st_dev != st->st_dev;
}

static int fs_is_link(void *ctx, const char *path, bool *is_link, cp_error *e)
{
    char host[PATH_MAX];
    struct stat st, tst;
    int rc = map_path(ctx, path, host, sizeof(host), e);
    if (rc != CP_OK)
        return rc;
    if (lstat(host, &st) != 0)
        return os_error(e, errno, "lstat", path);
    *is_link = false;
    if (S_ISLNK(st.st_mode)) {
        if (stat(host, &tst) == 0) {
            *is_link = true;
        } else {
            int err = errno;
            if (err != ENOENT && err != ENOTDIR && err != ELOOP)
                return os_error(e, err, "stat", path);
        }
    } else if (S_ISDIR(st.st_mode)) {
        const posix_fs *fs = ctx;
        char id[128];
        *is_link = is_mount_dir(host, &st) ||
                   (fs->mp.volume_at != NULL &&
                    fs->mp.volume_at(fs->mp.ctx, path, id, sizeof(id)) == CP_OK);
    }
    return CP_OK;
}

/* realpath() of the longest existing prefix, the rest appended as is (it
 * does not exist, so it holds no links). An existing entry whose target is
 * missing (a dangling link inside the path) fails closed. No volumes here:
 * anchors are not needed. */
static int fs_resolve(void *ctx, const char *path, const char *const *anchors, size_t n_anchors,
                      char *out, size_t outlen, cp_error *e)
{
    (void)anchors;
    (void)n_anchors;
    const posix_fs *fs = ctx;
    char host[PATH_MAX], real[PATH_MAX], joined[PATH_MAX];
    int rc = map_path(fs, path, host, sizeof(host), e);
    if (rc != CP_OK)
        return rc;
    size_t drive_len = strlen(fs->root) + 2; /* "<root>/C" */
    size_t cut = strlen(host);               /* host[0..cut) is tried */
    for (;;) {
        char saved = host[cut];
        host[cut] = '\0';
        bool ok = realpath(host, real) != NULL;
        int err = errno;
        struct stat st;
        if (!ok && (err == ENOENT || err == ENOTDIR) && lstat(host, &st) == 0)
            return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                                "resolve %s: a link inside the path leads nowhere (%s)", path,
                                strerror(err));
        host[cut] = saved;
        if (ok)
            break;
        if (err != ENOENT && err != ENOTDIR)
            return os_error(e, err, "realpath", path);
        while (cut > drive_len && host[cut - 1] != '/')
            cut--;
        if (cut <= drive_len) { /* even the drive is missing: nothing to resolve */
            if ((size_t)snprintf(out, outlen, "%s", path) >= outlen)
                return cp_error_set(e, CP_E_INVALID_ARGUMENT, "resolve %s: too long", path);
            return CP_OK;
        }
        cut--; /* drop the '/' */
    }
    int n = snprintf(joined, sizeof(joined), "%s%s", real, host + cut);
    if (n < 0 || (size_t)n >= sizeof(joined))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "resolve %s: path too long", path);
    return unmap_path(fs, joined, out, outlen, e);
}

/* The link's text in Windows syntax: a share's path as fs_symlink kept
 * it, a host path (under the given or the real root) mapped back. */
static int fs_read_link(void *ctx, const char *path, char *out, size_t outlen, cp_error *e)
{
    const posix_fs *fs = ctx;
    char host[PATH_MAX], text[PATH_MAX], real[PATH_MAX];
    int rc = map_path(fs, path, host, sizeof(host), e);
    if (rc != CP_OK)
        return rc;
    ssize_t n = readlink(host, text, sizeof(text) - 1);
    if (n < 0) {
        int err = errno;
        if (err == EINVAL)
            return cp_error_set(e, CP_E_FAILED_PRECONDITION, "read link %s: not a symbolic link",
                                path);
        return os_error(e, err, "readlink", path);
    }
    text[n] = '\0';
    if (strncmp(text, "\\\\", 2) == 0) {
        if ((size_t)n >= outlen)
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "read link %s: target too long", path);
        memcpy(out, text, (size_t)n + 1);
        return CP_OK;
    }
    if (text[0] != '/')
        return cp_error_set(e, CP_E_FAILED_PRECONDITION, "read link %s: a relative link (%s)", path,
                            text);
    size_t rl = strlen(fs->root);
    if (strncmp(text, fs->root, rl) == 0 && text[rl] == '/') {
        int k = snprintf(real, sizeof(real), "%s%s", fs->root_real, text + rl);
        if (k < 0 || (size_t)k >= sizeof(real))
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "read link %s: target too long", path);
        return unmap_path(fs, real, out, outlen, e);
    }
    return unmap_path(fs, text, out, outlen, e);
}

static const cp_fs_ops posix_ops = {
    .exists = fs_exists,
    .mkdir_all = fs_mkdir_all,
    .remove = fs_remove,
    .remove_contents = fs_remove_contents,
    .symlink = fs_symlink,
    .is_link = fs_is_link,
    .resolve = fs_resolve,
    .read_link = fs_read_link,
};

int cp_fs_host_posix_new(const char *root, cp_fs_host *out, cp_error *e)
{
    out->ops = NULL;
    out->ctx = NULL;
    char real[PATH_MAX];
    if (realpath(root, real) == NULL)
        return os_error(e, errno, "realpath", root);
    posix_fs *fs = calloc(1, sizeof(*fs));
    if (fs == NULL)
        return cp_error_set(e, CP_E_NOMEM, "fs_posix: out of memory");
    fs->root = strdup(root);
    fs->root_real = strdup(real);
    for (size_t n = fs->root != NULL ? strlen(fs->root) : 0; n > 1 && fs->root[n - 1] == '/'; n--)
        fs->root[n - 1] = '\0';
    if (fs->root == NULL || fs->root_real == NULL) {
        cp_fs_host h = {&posix_ops, fs};
        cp_fs_host_posix_free(&h);
        return cp_error_set(e, CP_E_NOMEM, "fs_posix: out of memory");
    }
    out->ops = &posix_ops;
    out->ctx = fs;
    return CP_OK;
}

void cp_fs_host_posix_free(cp_fs_host *h)
{
    if (h == NULL || h->ctx == NULL)
        return;
    posix_fs *fs = h->ctx;
    free(fs->root);
    free(fs->root_real);
    free(fs);
    h->ctx = NULL;
    h->ops = NULL;
}

void cp_fs_host_posix_set_mount_points(cp_fs_host *h, const cp_mount_points *mp)
{
    posix_fs *fs = h->ctx;
    if (mp != NULL)
        fs->mp = *mp;
    else
        memset(&fs->mp, 0, sizeof(fs->mp));
}

char cp_fs_system_drive(void)
{
    return 'C'; /* the native build emulates a Windows whose system drive is C: */
}
