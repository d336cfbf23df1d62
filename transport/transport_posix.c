/* transport_posix.c - transport.h on Unix-domain sockets and poll(2), for
 * the native build: one socket <dir>/<name>.sock per service, one I/O
 * thread for every connection, worker completions through a wake pipe. */
#include "transport/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rpc/handover.h"
#include "base/thread.h"

#define OUT_CAP (64 * 1024)

typedef struct listener {
    int fd;
    const cp_service *svc;
    char path[108];
} listener;

typedef struct pconn {
    int fd;
    cp_conn *conn;
    uint8_t *out;
    size_t out_len, out_off;
    bool dead;
    size_t pidx; /* index in this round's pollfd array; 0 = not polled */
    struct pconn *next;
} pconn;

struct cp_transport {
    cp_transport_opts opts;
    listener *ls;
    size_t n_ls;
    pconn *conns;
    int wake[2];
    cp_mutex *mu;     /* guards stop_* */
    cp_handover done; /* finished jobs (workers push, the I/O thread takes) */
    bool stop_requested;
    int64_t drain_ms;
};

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void wake(cp_transport *t)
{
    char b = 1;
    ssize_t r = write(t->wake[1], &b, 1);
    (void)r; /* a full pipe is already a pending wake-up */
}

/* Worker side: queue the finished job for the I/O thread (handover.h);
 * queueing cannot fail. */
static void post_job(void *ctx, cp_job *job)
{
    cp_transport *t = ctx;
    cp_handover_push(&t->done, job);
    wake(t);
}

static int open_listener(listener *l, const char *dir, const cp_listen_spec *s, cp_error *e)
{
    l->svc = s->svc;
    l->fd = -1;
    if ((size_t)snprintf(l->path, sizeof(l->path), "%s/%s.sock", dir, s->name) >= sizeof(l->path))
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "socket path %s/%s.sock is too long", dir,
                            s->name);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, l->path, strlen(l->path) + 1);
    /* A socket someone answers on is another instance; a stale file is not. */
    int probe = socket(AF_UNIX, SOCK_STREAM, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
        close(probe);
        return cp_error_set(e, CP_E_ALREADY_EXISTS,
                            "socket %s is already served: is another csi-proxy running?", l->path);
    }
    if (probe >= 0)
        close(probe);
    unlink(l->path);
    l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(l->fd, 128) != 0 || set_nonblock(l->fd) != 0) {
        int err = errno;
        if (l->fd >= 0)
            close(l->fd);
        l->fd = -1;
        return cp_error_set(e, CP_E_UNAVAILABLE, "cannot listen on %s: %s", l->path, strerror(err));
    }
    return CP_OK;
}

cp_transport *cp_transport_new(const cp_transport_opts *opts, const cp_listen_spec *specs, size_t n,
                               cp_error *e)
{
    cp_transport *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        cp_error_set(e, CP_E_NOMEM, "out of memory");
        return NULL;
    }
    t->opts = *opts;
    t->wake[0] = t->wake[1] = -1;
    t->mu = cp_mutex_new();
    t->ls = calloc(n, sizeof(*t->ls));
    if (t->mu == NULL || t->ls == NULL || pipe(t->wake) != 0 || set_nonblock(t->wake[0]) != 0 ||
        set_nonblock(t->wake[1]) != 0) {
        cp_error_set(e, CP_E_NOMEM, "cannot set up the transport: %s", strerror(errno));
        goto fail;
    }
    for (; t->n_ls < n; t->n_ls++)
        if (open_listener(&t->ls[t->n_ls], opts->dir, &specs[t->n_ls], e) != CP_OK)
            goto fail;
    return t;
fail:
    cp_transport_free(t);
    return NULL;
}

static void flush(pconn *pc);

static void accept_all(cp_transport *t, listener *l)
{
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        cp_conn_opts o = t->opts.conn;
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
            o.peer_pid = (uint32_t)cred.pid;
        if (t->opts.authorize != NULL)
            o.deny_message = t->opts.authorize(t->opts.authorize_ctx, l->svc, o.peer_pid, &fd,
                                               o.peer_id, sizeof(o.peer_id));
        pconn *pc = calloc(1, sizeof(*pc));
        uint8_t *out = malloc(OUT_CAP);
        cp_conn *c = cp_conn_new(l->svc, t->opts.pool, &o, post_job, t);
        if (pc == NULL || out == NULL || c == NULL) {
            free(pc);
            free(out);
            if (c != NULL)
                cp_conn_close(c);
            close(fd);
            continue;
        }
        pc->fd = fd;
        pc->conn = c;
        pc->out = out;
        cp_conn_set_user(c, pc);
        pc->next = t->conns;
        t->conns = pc;
        flush(pc); /* our SETTINGS go first */
    }
}

/* Writes what the connection has; marks it dead on a write error. */
static void flush(pconn *pc)
{
    while (!pc->dead) {
        if (pc->out_off == pc->out_len) {
            long n = cp_conn_send(pc->conn, pc->out, OUT_CAP);
            if (n < 0) {
                pc->dead = true;
                return;
            }
            if (n == 0)
                return;
            pc->out_len = (size_t)n;
            pc->out_off = 0;
        }
        ssize_t w = send(pc->fd, pc->out + pc->out_off, pc->out_len - pc->out_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                pc->dead = true;
            return;
        }
        pc->out_off += (size_t)w;
    }
}

static void read_conn(pconn *pc)
{
    uint8_t buf[16384];
    for (;;) {
        ssize_t r = recv(pc->fd, buf, sizeof(buf), 0);
        if (r == 0) {
            pc->dead = true;
            return;
        }
        if (r < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                pc->dead = true;
            return;
        }
        if (cp_conn_recv(pc->conn, buf, (size_t)r) != CP_OK) {
            flush(pc); /* GOAWAY if nghttp2 queued one */
            pc->dead = true;
            return;
        }
        flush(pc);
    }
}

static void drain_done(cp_transport *t)
{
    char b[256];
    while (read(t->wake[0], b, sizeof(b)) > 0)
        ;
    for (cp_job *j = cp_handover_take(&t->done), *next; j != NULL; j = next) {
        next = cp_handover_next(j);
        cp_conn *c = cp_job_complete(j);
        if (c != NULL)
            flush(cp_conn_user(c));
    }
}

static void reap(cp_transport *t)
{
    for (pconn **pp = &t->conns; *pp != NULL;) {
        pconn *pc = *pp;
        if (!pc->dead && cp_conn_wants_io(pc->conn)) {
            pp = &pc->next;
            continue;
        }
        *pp = pc->next;
        close(pc->fd);
        cp_conn_close(pc->conn);
        free(pc->out);
        free(pc);
    }
}

static size_t inflight(cp_transport *t)
{
    size_t n = 0;
    for (pconn *pc = t->conns; pc != NULL; pc = pc->next)
        n += cp_conn_inflight(pc->conn);
    return n;
}

int cp_transport_run(cp_transport *t)
{
    struct pollfd *fds = NULL;
    size_t cap = 0;
    int64_t stop_at = INT64_MAX;
    bool stopping = false;
    for (;;) {
        cp_mutex_lock(t->mu);
        bool stop_now = t->stop_requested && !stopping;
        int64_t drain = t->drain_ms;
        cp_mutex_unlock(t->mu);
        if (stop_now) {
            stopping = true;
            stop_at = cp_now_ms() + drain;
            for (size_t i = 0; i < t->n_ls; i++) {
                close(t->ls[i].fd);
                unlink(t->ls[i].path);
                t->ls[i].fd = -1;
            }
            for (pconn *pc = t->conns; pc != NULL; pc = pc->next) {
                cp_conn_shutdown(pc->conn);
                flush(pc);
            }
        }
        if (stopping && (inflight(t) == 0 || cp_now_ms() >= stop_at)) {
            for (pconn *pc = t->conns; pc != NULL; pc = pc->next) {
                cp_conn_abort_calls(pc->conn, "csi-proxy is stopping");
                flush(pc);
                pc->dead = true;
            }
            reap(t);
            break;
        }

        size_t n = 1 + t->n_ls;
        for (pconn *pc = t->conns; pc != NULL; pc = pc->next)
            n++;
        if (n > cap) {
            struct pollfd *nf = realloc(fds, n * sizeof(*nf));
            if (nf == NULL) {
                free(fds);
                return CP_E_NOMEM;
            }
            fds = nf;
            cap = n;
        }
        size_t k = 0;
        fds[k++] = (struct pollfd){.fd = t->wake[0], .events = POLLIN};
        for (size_t i = 0; i < t->n_ls; i++)
            fds[k++] = (struct pollfd){.fd = t->ls[i].fd, .events = POLLIN};
        int64_t deadline = stop_at;
        for (pconn *pc = t->conns; pc != NULL; pc = pc->next) {
            pc->pidx = k;
            short ev = POLLIN;
            if (pc->out_off < pc->out_len)
                ev |= POLLOUT;
            fds[k++] = (struct pollfd){.fd = pc->fd, .events = ev};
            int64_t d = cp_conn_next_deadline(pc->conn);
            if (d < deadline)
                deadline = d;
        }
        int timeout = -1;
        if (deadline != INT64_MAX) {
            int64_t left = deadline - cp_now_ms();
            timeout = left < 0 ? 0 : (left > 60000 ? 60000 : (int)left);
        }
        if (poll(fds, k, timeout) < 0 && errno != EINTR) {
            free(fds);
            return CP_E_IO;
        }
        if (fds[0].revents)
            drain_done(t);
        for (size_t i = 0; i < t->n_ls; i++)
            if (fds[1 + i].fd >= 0 && (fds[1 + i].revents & POLLIN))
                accept_all(t, &t->ls[i]);
        /* Connections accepted just now were not polled: pidx is 0. */
        int64_t now = cp_now_ms();
        for (pconn *pc = t->conns; pc != NULL; pc = pc->next) {
            short re = pc->pidx != 0 ? fds[pc->pidx].revents : 0;
            pc->pidx = 0;
            if (re & (POLLIN | POLLHUP | POLLERR))
                read_conn(pc);
            if (re & POLLOUT)
                flush(pc);
            cp_conn_expire(pc->conn, now);
            flush(pc);
        }
        reap(t);
    }
    free(fds);
    return CP_OK;
}

void cp_transport_stop(cp_transport *t, int64_t drain_ms)
{
    cp_mutex_lock(t->mu);
    t->stop_requested = true;
    t->drain_ms = drain_ms;
    cp_mutex_unlock(t->mu);
    wake(t);
}

void cp_transport_free(cp_transport *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n_ls; i++) {
        if (t->ls[i].fd >= 0) {
            close(t->ls[i].fd);
            unlink(t->ls[i].path);
        }
    }
    free(t->ls);
    while (t->conns != NULL) {
        pconn *pc = t->conns;
        t->conns = pc->next;
        close(pc->fd);
        cp_conn_close(pc->conn);
        free(pc->out);
        free(pc);
    }
    for (cp_job *j = cp_handover_take(&t->done), *next; j != NULL; j = next) {
        next = cp_handover_next(j);
        cp_job_complete(j);
    }
    if (t->wake[0] >= 0)
        close(t->wake[0]);
    if (t->wake[1] >= 0)
        close(t->wake[1]);
    cp_mutex_free(t->mu);
    free(t);
}
