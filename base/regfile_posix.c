/* regfile_posix.c - see regfile.h. open(2) with O_NONBLOCK so that a FIFO
 * does not block the open; fstat(2) decides (S_ISREG), on the descriptor
 * that is then read, so there is no window between check and use. */
#include "base/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISFIFO(m))
        return "a pipe (FIFO)";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

FILE *cp_regfile_open(const char *path, const char *mode, cp_error *e)
{
    int append = mode[0] == 'a';
    int flags = (append ? O_WRONLY | O_APPEND | O_CREAT : O_RDONLY) | O_NONBLOCK | O_CLOEXEC;
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        /* A directory to append to (EISDIR), a FIFO without a reader to
         * write to (ENXIO): say what it is rather than the errno. */
        int err = errno;
        struct stat st;
        if (err != ENOENT && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
            cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a regular file: %s", path,
                         kind(st.st_mode));
        else
            cp_error_set(e, err == ENOENT ? CP_E_NOT_FOUND : CP_E_IO, "%s: %s", path,
                         strerror(err));
        errno = err;
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        cp_error_set(e, CP_E_IO, "%s: %s", path, strerror(err));
        errno = err;
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        cp_error_set(e, CP_E_FAILED_PRECONDITION, "%s: not a regular file: %s", path,
                     kind(st.st_mode));
        errno = EINVAL;
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *fp = fdopen(fd, append ? "a" : "rb");
    if (fp == NULL) {
        int err = errno;
        close(fd);
        cp_error_set(e, CP_E_IO, "%s: %s", path, strerror(err));
        errno = err;
    }
    return fp;
}
