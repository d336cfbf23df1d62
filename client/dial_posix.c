/* dial_posix.c - connect to the native server's Unix sockets. */
#include "client/dial.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct cp_dial {
    int fd;
    char *target;
};

int cp_dial_resolve(cp_arena *a, const char *pipe, const char *socket_dir, const char *group,
                    const char *version, char **target, cp_error *e)
{
    const char *name = NULL;
    char *p = NULL;
    if (pipe != NULL) {
        if (strchr(pipe, '/') != NULL) {
            p = cp_arena_strdup(a, pipe);
            goto done;
        }
        const char *bs = strrchr(pipe, '\\');
        name = bs != NULL ? bs + 1 : pipe;
        if (*name == '\0')
            return cp_error_set(e, CP_E_INVALID_ARGUMENT, "--pipe \"%s\": no name in it", pipe);
    }
    const char *dir = socket_dir;
    if (dir == NULL || *dir == '\0')
        dir = getenv("CSI_PROXY_SOCKET_DIR");
    if (dir == NULL || *dir == '\0')
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "no socket directory: give --socket-dir DIR or set "
                            "CSI_PROXY_SOCKET_DIR (or --pipe /path/to/socket)");
    if (name != NULL)
        p = cp_arena_printf(a, "%s/%s.sock", dir, name);
    else
        p = cp_arena_printf(a, "%s/csi-proxy-%s-%s.sock", dir, group, version);
done:
    if (p == NULL)
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    *target = p;
    return CP_OK;
}

int cp_dial_open(const char *target, cp_dial **out, cp_error *e)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(target) >= sizeof(sa.sun_path))
        return cp_error_set(e, CP_E_UNAVAILABLE, "cannot connect to %s: path longer than %u bytes",
                            target, (unsigned)sizeof(sa.sun_path) - 1);
    memcpy(sa.sun_path, target, strlen(target) + 1);
    cp_dial *d = calloc(1, sizeof(*d));
    if (d == NULL || (d->target = strdup(target)) == NULL) {
        free(d);
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    }
    d->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (d->fd < 0) {
        int err = errno;
        cp_dial_close(d);
        return cp_error_set(e, CP_E_UNAVAILABLE, "cannot connect to %s: socket: %s", target,
                            strerror(err));
    }
    int rc;
    do {
        rc = connect(d->fd, (struct sockaddr *)&sa, sizeof(sa));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int err = errno;
        cp_dial_close(d);
        return cp_error_set(e, CP_E_UNAVAILABLE, "cannot connect to %s: %s", target, strerror(err));
    }
    *out = d;
    return CP_OK;
}

bool cp_dial_alarm(const char *target, char *why, size_t cap)
{
    (void)target;
    if (cap > 0)
        why[0] = '\0';
    return false; /* the native server has no pipe instances to watch */
}

void cp_dial_close(cp_dial *d)
{
    if (d == NULL)
        return;
    if (d->fd >= 0)
        close(d->fd);
    free(d->target);
    free(d);
}

static int dial_write(void *ctx, const uint8_t *buf, size_t len, cp_error *e)
{
    cp_dial *d = ctx;
    while (len > 0) {
        /* MSG_NOSIGNAL: a server that went away is an error, not SIGPIPE. */
        ssize_t n = send(d->fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return cp_error_set(e, CP_E_IO, "write to %s: %s", d->target, strerror(errno));
        }
        buf += n;
        len -= (size_t)n;
    }
    return CP_OK;
}

static long dial_read(void *ctx, uint8_t *buf, size_t cap, int64_t timeout_ms, cp_error *e)
{
    cp_dial *d = ctx;
    for (;;) {
        struct pollfd pfd = {.fd = d->fd, .events = POLLIN};
        int wait = timeout_ms < 0 ? -1 : timeout_ms > 1000000000 ? 1000000000 : (int)timeout_ms;
        int rc = poll(&pfd, 1, wait);
        if (rc < 0 && errno == EINTR)
            continue; /* the deadline is rechecked by the caller's loop */
        if (rc < 0)
            return cp_error_set(e, CP_E_IO, "poll on %s: %s", d->target, strerror(errno));
        if (rc == 0)
            return CP_E_DEADLINE_EXCEEDED;
        ssize_t n = recv(d->fd, buf, cap, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            if (errno == ECONNRESET)
                return 0;
            return cp_error_set(e, CP_E_IO, "read from %s: %s", d->target, strerror(errno));
        }
        return (long)n;
    }
}

int64_t cp_dial_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cp_dial_sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int64_t dial_now(void *ctx)
{
    (void)ctx;
    return cp_dial_now_ms();
}

cp_h2c_io cp_dial_io(cp_dial *d)
{
    return (cp_h2c_io){.write = dial_write, .read = dial_read, .now_ms = dial_now, .ctx = d};
}
