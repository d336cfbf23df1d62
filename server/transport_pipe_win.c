/* transport_pipe_win.c - transport.h on named pipes \\.\pipe\<name>.
 *
 * Threading: one I/O completion port, one I/O thread (the caller of
 * cp_transport_run). Every cp_conn_* call happens on it. Worker threads only
 * post finished jobs to the port (KEY_JOB); cp_transport_stop posts KEY_STOP.
 *
 * Per listener one instance is always listening (overlapped
 * ConnectNamedPipe). When a client connects, the next instance is created
 * first, then the connected one gets one overlapped ReadFile, always
 * pending, and at most one overlapped WriteFile in flight. Its cp_conn is
 * made when the first bytes arrive.
 *
 * Security: each instance is created with its listener's security
 * attributes (the group's protected DACL). Each connection is offered to
 * opts.authorize once, on its first bytes (so that impersonation can work)
 * and before they reach HTTP/2: a refused caller's connection answers
 * PERMISSION_DENIED to every call. An allowed connection stays allowed
 * only while the process that opened it lives: the hook leaves a handle on
 * that process, and before a call read from the pipe is accepted a
 * zero-timeout WaitForSingleObject on it tells whether it has exited (the
 * connection was handed on); then that call and every later one is
 * PERMISSION_DENIED, and opts.revoke audits each. The check is made once
 * per read that carries the start of a call (cp_conn_opts.before_call),
 * not for reads of control frames only (WINDOW_UPDATE, PING).
 *
 * Limits: at most opts.max_conns open connections (a client beyond that is
 * disconnected at once: UNAVAILABLE, and it retries); connections with no
 * call in flight and no traffic for opts.idle_ms get a GOAWAY and close.
 *
 * Completions: each instance is set to FILE_SKIP_COMPLETION_PORT_ON_SUCCESS
 * (SetFileCompletionNotificationModes, winbase.h) when the system allows,
 * so a ReadFile or WriteFile that completes at once is handled on the spot
 * instead of by a trip through the port: a response usually fits the pipe
 * buffer, and a client's next frames are often already there. At most
 * SYNC_READS reads in a row are handled so; then the read goes through the
 * port, and other connections get their turn. Answers of finished calls are
 * written once per batch of packets (the dirty list), so that calls
 * finishing together leave in one write rather than one write each. The
 * output of a read that started a call (or carried a PING alone) is held
 * up to HOLD_MS for that call's answer, so that the PING ACK and the
 * answer leave in one write (on_read). A port wait asks for as many
 * packets as calls are out on the pool (cp_transport_run).
 *
 * Lifetime: each pipe_conn counts the overlapped operations the kernel owns
 * (ops). Closing a pipe_conn closes its handle (which cancels its I/O) but
 * frees the memory holding the OVERLAPPEDs only when ops is back to zero,
 * i.e. after the port delivered every completion, cancelled ones included.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../winapi/winutil_win32.h"
#include "pipe_client_win.h"
#include "thread.h"
#include "transport.h"

#define PIPE_PREFIX "\\\\.\\pipe\\"
#define PIPE_QUOTA (64 * 1024) /* in/out buffer sizes of each instance */
#define PIPE_TIMEOUT_MS 50     /* default WaitNamedPipe timeout, as go-winio */
#define READ_BUF (16 * 1024)
#define WRITE_BUF (32 * 1024)
#define RELISTEN_RETRY_MS 250 /* after a failed CreateNamedPipeW at run time */
#define CLOSE_GRACE_MS 2000   /* final flush before writes are cancelled */
#define FREE_WAIT_MS 5000     /* cp_transport_free: wait for cancelled I/O */
#define BATCH 64
#define SYNC_READS 16 /* reads done at once before the port takes a turn */
#define HOLD_MS 10    /* output held back for the answer of a call just started */

enum { KEY_IO = 1, KEY_JOB, KEY_STOP };
enum { RUNNING, DRAINING, CLOSING };

typedef struct pipe_conn pipe_conn;
typedef struct listener listener;

typedef struct pipe_op {
    OVERLAPPED ov;
    pipe_conn *pc;
} pipe_op;

struct pipe_conn {
    cp_transport *t;
    listener *l;
    HANDLE h;      /* INVALID_HANDLE_VALUE once closed */
    cp_conn *conn; /* NULL while listening and once closed */
    pipe_op rd;    /* ConnectNamedPipe while listening, then ReadFile */
    pipe_op wr;    /* WriteFile */
    unsigned ops;  /* overlapped operations owned by the kernel */
    bool reading, writing;
    bool skip;  /* FILE_SKIP_COMPLETION_PORT_ON_SUCCESS is set */
    bool dirty; /* on t->dirty: answers to write after this batch */
    pipe_conn *dirty_next;
    bool closing;         /* close as soon as the output is written */
    bool connected;       /* the connect completed (counted in t->nconns) */
    int64_t deadline;     /* cached cp_conn_next_deadline() */
    int64_t hold_until;   /* output held until then (0: not held), see on_read */
    int64_t active_at;    /* last read or finished call, for opts.idle_ms */
    int64_t connected_at; /* FILETIME of the connect, for opts.authorize */
    HANDLE opener;        /* the allowed client process (authorize hook), or NULL */
    uint32_t pid;         /* its id, for the revoke hook */
    bool opener_checked;  /* before_call asked the system for the bytes of this read */
    uint8_t *rbuf;        /* READ_BUF, then WRITE_BUF for wbuf */
    uint8_t *wbuf;
    size_t wlen;
    pipe_conn *prev, *next; /* t->all */
};

struct listener {
    const cp_service *svc;
    char *name; /* \\.\pipe\csi-proxy-... (UTF-8, for messages) */
    wchar_t *wpath;
    SECURITY_ATTRIBUTES *sa; /* NULL: the default pipe security */
    bool created;            /* first instance made: later ones omit FIRST_PIPE_INSTANCE */
    pipe_conn *inst;         /* the listening instance; NULL while none */
    int64_t retry_at;        /* when inst is NULL: next attempt */
    DWORD last_err;          /* of the last failed CreateNamedPipeW (0: none) */
    unsigned failures;       /* failed attempts in a row to create the next instance */
};

struct cp_transport {
    cp_transport_opts opts;
    HANDLE iocp;
    listener *ls;
    size_t nls;
    pipe_conn *all;   /* every pipe_conn not yet freed */
    pipe_conn *dirty; /* connections with finished calls to write out */
    size_t nconns;    /* connected pipe_conns not yet closed */
    size_t jobs;      /* calls handed to the pool whose KEY_JOB has not come back */
    volatile LONG stop_requested;
    volatile LONG64 stop_drain_ms;
    int phase;
    int64_t drain_until, close_until;
};

/* ---- pipe_conn life cycle ------------------------------------------- */

static pipe_conn *pc_new(cp_transport *t, listener *l, HANDLE h)
{
    pipe_conn *pc = calloc(1, sizeof(*pc));
    if (pc == NULL)
        return NULL;
    pc->t = t;
    pc->l = l;
    pc->h = h;
    pc->rd.pc = pc;
    pc->wr.pc = pc;
    pc->deadline = INT64_MAX;
    pc->next = t->all;
    if (t->all != NULL)
        t->all->prev = pc;
    t->all = pc;
    return pc;
}

static void pc_maybe_free(pipe_conn *pc)
{
    if (pc->h != INVALID_HANDLE_VALUE || pc->ops > 0 || pc->dirty)
        return;
    cp_transport *t = pc->t;
    if (pc->prev != NULL)
        pc->prev->next = pc->next;
    else
        t->all = pc->next;
    if (pc->next != NULL)
        pc->next->prev = pc->prev;
    free(pc->rbuf);
    free(pc);
}

/* Releases the connection and the handle; the memory goes once the port
 * has returned every pending operation. pc may be freed on return. */
static void pc_close(pipe_conn *pc)
{
    if (pc->conn != NULL) {
        cp_conn_close(pc->conn);
        pc->conn = NULL;
    }
    if (pc->connected && pc->h != INVALID_HANDLE_VALUE)
        pc->t->nconns--;
    if (pc->l != NULL && pc->l->inst == pc)
        pc->l->inst = NULL;
    if (pc->opener != NULL) {
        CloseHandle(pc->opener);
        pc->opener = NULL;
    }
    if (pc->h != INVALID_HANDLE_VALUE) {
        if (pc->ops > 0)
            CancelIoEx(pc->h, NULL);
        CloseHandle(pc->h);
        pc->h = INVALID_HANDLE_VALUE;
    }
    pc_maybe_free(pc);
}

/* ---- listening ------------------------------------------------------ */

/* Creates the listener's next instance and starts an overlapped connect. */
static int listen_next(cp_transport *t, listener *l, cp_error *e)
{
    char why[256];
    DWORD open_mode = PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED;
    if (!l->created)
        open_mode |= FILE_FLAG_FIRST_PIPE_INSTANCE;
    HANDLE h = CreateNamedPipeW(
        l->wpath, open_mode,
        PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
        PIPE_UNLIMITED_INSTANCES, PIPE_QUOTA, PIPE_QUOTA, PIPE_TIMEOUT_MS, l->sa);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        l->last_err = err;
        if (!l->created && (err == ERROR_ACCESS_DENIED || err == ERROR_PIPE_BUSY))
            return cp_error_set(e, CP_E_ALREADY_EXISTS,
                                "pipe %s already exists: is another csi-proxy running?", l->name);
        return cp_error_set(e, CP_E_IO, "CreateNamedPipeW %s: %s (error %lu)", l->name,
                            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    /* Wine ignores FILE_FLAG_FIRST_PIPE_INSTANCE; the instance count tells
     * there too (on Windows the flag already refused it). */
    DWORD instances = 0;
    if (!l->created && GetNamedPipeHandleStateW(h, NULL, &instances, NULL, NULL, NULL, 0) &&
        instances > 1) {
        CloseHandle(h);
        return cp_error_set(e, CP_E_ALREADY_EXISTS,
                            "pipe %s already exists: is another csi-proxy running?", l->name);
    }
    if (CreateIoCompletionPort(h, t->iocp, KEY_IO, 0) == NULL) {
        DWORD err = GetLastError();
        CloseHandle(h);
        return cp_error_set(e, CP_E_IO, "CreateIoCompletionPort %s: %s (error %lu)", l->name,
                            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    l->created = true;
    pipe_conn *pc = pc_new(t, l, h);
    if (pc == NULL) {
        CloseHandle(h);
        return cp_error_set(e, CP_E_NOMEM, "pipe %s: out of memory", l->name);
    }
    l->inst = pc;
    pc->skip = SetFileCompletionNotificationModes(h, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS |
                                                         FILE_SKIP_SET_EVENT_ON_HANDLE) != FALSE;
    pc->ops++;
    BOOL connected = ConnectNamedPipe(h, &pc->rd.ov);
    if (!connected || pc->skip) {
        DWORD err = connected ? ERROR_PIPE_CONNECTED : GetLastError();
        if (err == ERROR_PIPE_CONNECTED || err == ERROR_NO_DATA) {
            /* A client came between create and connect (ERROR_NO_DATA: and
             * already closed its end; or the connect completed at once in
             * the skip mode): no packet will be queued for this,
             * so queue the completion ourselves. The connection then gets
             * the next instance listening and, for a client already gone,
             * ends on its first read. Failing here instead would stop the
             * service at start, or leave the pipe without a listener. */
            pc->rd.ov.Internal = 0;
            if (PostQueuedCompletionStatus(t->iocp, 0, KEY_IO, &pc->rd.ov))
                return CP_OK;
            err = GetLastError();
        }
        if (err != ERROR_IO_PENDING) {
            pc->ops--;
            pc_close(pc);
            return cp_error_set(e, CP_E_IO, "ConnectNamedPipe %s: %s (error %lu)", l->name,
                                cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
        }
    }
    return CP_OK;
}

/* Failed attempts between two reports of the same failure (a minute). */
#define RELISTEN_REPORT_EVERY (60000 / RELISTEN_RETRY_MS)

/* Creates the listener's next instance; on failure retries in
 * RELISTEN_RETRY_MS, and reports it through opts.listen_error at the first
 * failure, then once a minute, and when it recovers: a listener without an
 * instance serves no new client. ERROR_ACCESS_DENIED on an instance after
 * the first is the pipe's own DACL refusing this process
 * FILE_CREATE_PIPE_INSTANCE ("Named Pipe Security and Access Rights": "In
 * addition to the requested access rights, the DACL must allow the calling
 * thread FILE_CREATE_PIPE_INSTANCE access to the named pipe"): it will not
 * pass by retrying, and it leaves the group one connection at a time, so
 * it is named as such (issue 9 item 6; the configuration refuses such a
 * DACL, this is the last line). */
static void relisten(cp_transport *t, listener *l, int64_t now)
{
    cp_error e;
    e.msg[0] = '\0';
    if (listen_next(t, l, &e) == CP_OK) {
        if (l->failures > 0 && t->opts.listen_error != NULL) {
            char msg[CP_ERROR_MSG_MAX];
            snprintf(msg, sizeof(msg), "pipe %s: listening again after %u failed attempts", l->name,
                     l->failures);
            t->opts.listen_error(t->opts.listen_error_ctx, msg);
        }
        l->failures = 0;
        return;
    }
    l->retry_at = now + RELISTEN_RETRY_MS;
    if (l->failures++ % RELISTEN_REPORT_EVERY != 0 || t->opts.listen_error == NULL)
        return;
    char msg[CP_ERROR_MSG_MAX + 256];
    if (l->created && l->last_err == ERROR_ACCESS_DENIED)
        snprintf(msg, sizeof(msg),
                 "pipe %s: cannot create another instance: access denied: the pipe's DACL does "
                 "not give this service's account FILE_CREATE_PIPE_INSTANCE, so the group "
                 "serves one connection at a time (grant the account full access, e.g. "
                 "(A;;GA;;;SY)); retrying every %d ms (%u attempts)",
                 l->name, RELISTEN_RETRY_MS, l->failures);
    else
        snprintf(msg, sizeof(msg),
                 "pipe %s: cannot create another instance: %s; no new client is accepted "
                 "until it can; retrying every %d ms (%u attempts)",
                 l->name, e.msg, RELISTEN_RETRY_MS, l->failures);
    t->opts.listen_error(t->opts.listen_error_ctx, msg);
}

/* ---- connection I/O ------------------------------------------------- */

enum { IO_FAILED = -1, IO_PENDING, IO_DONE };

/* Starts the connection's read. IO_DONE: it completed at once and the port
 * gets no packet (pc->skip); *got bytes are in rbuf. IO_PENDING: the port
 * will deliver it. */
static int start_read(pipe_conn *pc, DWORD *got)
{
    memset(&pc->rd.ov, 0, sizeof(pc->rd.ov));
    pc->ops++;
    pc->reading = true;
    if (ReadFile(pc->h, pc->rbuf, READ_BUF, NULL, &pc->rd.ov)) {
        if (!pc->skip)
            return IO_PENDING; /* without the skip mode the port gets a packet anyway */
        pc->ops--;
        pc->reading = false;
        *got = (DWORD)pc->rd.ov.InternalHigh;
        return IO_DONE;
    }
    if (GetLastError() == ERROR_IO_PENDING)
        return IO_PENDING;
    pc->ops--;
    pc->reading = false;
    return IO_FAILED;
}

/* After anything happened on a connection: writes its output, refreshes its
 * deadline, closes it when it is finished. Last thing a caller does with
 * pc: it may be freed. */
static void flush(pipe_conn *pc)
{
    pc->hold_until = 0;
    if (pc->conn == NULL)
        return;
    while (!pc->writing) {
        while (pc->wlen < WRITE_BUF) {
            long n = cp_conn_send(pc->conn, pc->wbuf + pc->wlen, WRITE_BUF - pc->wlen);
            if (n < 0) {
                pc_close(pc);
                return;
            }
            if (n == 0)
                break;
            pc->wlen += (size_t)n;
        }
        if (pc->wlen > 0) {
            memset(&pc->wr.ov, 0, sizeof(pc->wr.ov));
            pc->ops++;
            pc->writing = true;
            BOOL done = WriteFile(pc->h, pc->wbuf, (DWORD)pc->wlen, NULL, &pc->wr.ov);
            if (!done && GetLastError() != ERROR_IO_PENDING) {
                pc->ops--;
                pc->writing = false;
                pc_close(pc);
                return;
            }
            if (done && pc->skip) { /* written at once, no packet: go on here */
                pc->ops--;
                pc->writing = false;
                DWORD n = (DWORD)pc->wr.ov.InternalHigh;
                if (n == 0 || n > pc->wlen) {
                    pc_close(pc);
                    return;
                }
                pc->wlen -= n;
                if (pc->wlen > 0)
                    memmove(pc->wbuf, pc->wbuf + n, pc->wlen);
                continue;
            }
        }
        break;
    }
    pc->deadline = cp_conn_next_deadline(pc->conn);
    if (!pc->writing && (pc->closing || !cp_conn_wants_io(pc->conn)))
        pc_close(pc);
}

/* Worker side: hand the finished job to the I/O thread. */
static void post_job(void *ctx, cp_job *job)
{
    cp_transport *t = ctx;
    /* Fails only when the system is out of non-paged memory; a job that can
     * never be posted is leaked (with its connection) rather than lost in a
     * way that would free memory the I/O thread still uses. */
    for (int i = 0; i < 100; i++) {
        if (PostQueuedCompletionStatus(t->iocp, 0, KEY_JOB, (OVERLAPPED *)job))
            return;
        Sleep(10);
    }
}

static void on_read(pipe_conn *pc, bool ok, DWORD n, int64_t now);
static void before_call(void *ctx);

static void on_connect(pipe_conn *pc, bool ok, int64_t now)
{
    cp_transport *t = pc->t;
    listener *l = pc->l;
    if (l->inst == pc)
        l->inst = NULL;
    if (t->phase == RUNNING)
        relisten(t, l, now); /* the next instance first: never a moment with none */
    if (!ok || t->phase != RUNNING) {
        pc_close(pc);
        return;
    }
    if (t->opts.max_conns > 0 && t->nconns >= t->opts.max_conns) {
        pc_close(pc); /* the client sees the pipe break and retries */
        return;
    }
    pc->connected = true;
    pc->connected_at = cp_win_filetime_now();
    t->nconns++;
    pc->active_at = now;
    pc->rbuf = malloc(READ_BUF + WRITE_BUF);
    if (pc->rbuf == NULL) {
        pc_close(pc);
        return;
    }
    pc->wbuf = pc->rbuf + READ_BUF;
    DWORD got = 0;
    int r = start_read(pc, &got);
    if (r == IO_FAILED)
        pc_close(pc);
    else if (r == IO_DONE) /* the client's first bytes were already there */
        on_read(pc, true, got, now);
}

/* On the client's first bytes: who is it, and may it use this group?
 * Deciding here rather than at connect lets impersonation work (Windows
 * impersonates "the last message read from the pipe") while the client
 * still holds the connection open. */
static bool open_conn(pipe_conn *pc)
{
    cp_transport *t = pc->t;
    ULONG pid = 0;
    if (!GetNamedPipeClientProcessId(pc->h, &pid))
        pid = 0;
    cp_conn_opts o = t->opts.conn;
    o.peer_pid = pid;
    o.deny_message = NULL;
    o.peer_id[0] = '\0';
    o.before_call = before_call;
    o.before_call_ctx = pc;
    cp_pipe_client client = {pc->h, pc->connected_at, NULL};
    if (t->opts.authorize != NULL)
        o.deny_message = t->opts.authorize(t->opts.authorize_ctx, pc->l->svc, pid, &client,
                                           o.peer_id, sizeof(o.peer_id));
    if (client.process != NULL && o.deny_message != NULL) {
        CloseHandle(client.process); /* refused anyway */
        client.process = NULL;
    }
    pc->opener = client.process;
    pc->pid = pid;
    pc->conn = cp_conn_new(pc->l->svc, t->opts.pool, &o, post_job, t);
    if (pc->conn == NULL)
        return false;
    cp_conn_set_user(pc->conn, pc);
    return true;
}

/* A call refused by before_call: the revoke hook audits it. */
static void revoked_call(void *ctx, const char *path)
{
    pipe_conn *pc = ctx;
    cp_transport *t = pc->t;
    if (t->opts.revoke != NULL)
        t->opts.revoke(t->opts.authorize_ctx, pc->l->svc, pc->pid, cp_conn_peer_id(pc->conn), path);
}

/* Before a call read from an allowed connection is accepted: has the
 * process that opened it exited? Then the call comes from a process it was
 * handed to, which was never identified: it and every call from here on
 * are refused (once decided, the handle is dropped and the refusal stays).
 * Asked by the connection (cp_conn_opts.before_call) for each new call,
 * and answered from the system once per read: the bytes of one read were
 * all written before it completed. */
static void before_call(void *ctx)
{
    pipe_conn *pc = ctx;
    if (pc->opener_checked)
        return;
    pc->opener_checked = true;
    if (pc->opener == NULL || WaitForSingleObject(pc->opener, 0) != WAIT_OBJECT_0)
        return;
    CloseHandle(pc->opener);
    pc->opener = NULL;
    static const char msg[] = "csi-proxy: the process that opened this connection has exited; "
                              "calls on a connection handed to another process are refused (see "
                              "the service's audit log)";
    cp_conn_deny(pc->conn, msg, revoked_call, pc);
}

/* Whether the n bytes are whole HTTP/2 frames (RFC 9113 section 4.1:
 * 24-bit length, type, flags, stream id) of the kinds a client sends
 * between calls, SETTINGS, WINDOW_UPDATE and PING, at least one of them a
 * PING to be acknowledged: what grpc-go sends after each response it
 * reads (its BDP ping). Anything else, or a frame cut by the read: false. */
static bool ping_only(const uint8_t *p, DWORD n)
{
    bool ping = false;
    for (DWORD at = 0; at < n;) {
        if (n - at < 9)
            return false;
        DWORD len = (DWORD)p[at] << 16 | (DWORD)p[at + 1] << 8 | p[at + 2];
        uint8_t type = p[at + 3];
        if (type == 6 && !(p[at + 4] & 1)) /* PING without ACK */
            ping = true;
        else if (type != 4 && type != 8 && type != 6)
            return false;
        if (len > n - at - 9)
            return false;
        at += 9 + len;
    }
    return ping;
}

/* n bytes arrived in rbuf; reads on while more are there at once (up to
 * SYNC_READS), then answers. */
static void on_read(pipe_conn *pc, bool ok, DWORD n, int64_t now)
{
    bool started = false; /* a call was handed to the pool */
    for (int round = 1;; round++) {
        pc->reading = false;
        pc->active_at = now;
        if (!ok) { /* ERROR_BROKEN_PIPE and friends: the client is gone */
            pc_close(pc);
            return;
        }
        if (n > 0 && pc->conn == NULL && (pc->t->phase != RUNNING || !open_conn(pc))) {
            pc_close(pc);
            return;
        }
        pc->opener_checked = false; /* new bytes: before_call asks the system again */
        size_t jobs = n > 0 ? cp_conn_inflight(pc->conn) : 0;
        if (n > 0 && cp_conn_recv(pc->conn, pc->rbuf, n) != CP_OK)
            pc->closing = true; /* protocol error: send the GOAWAY, then close */
        if (n > 0 && cp_conn_inflight(pc->conn) > jobs) { /* only cp_conn_recv starts calls */
            pc->t->jobs += cp_conn_inflight(pc->conn) - jobs;
            started = true;
        } else if (n > 0 && ping_only(pc->rbuf, n)) {
            started = true; /* the next call is likely on its way: see below */
        }
        if (pc->closing)
            break;
        DWORD got = 0;
        int r = start_read(pc, &got);
        if (r == IO_FAILED) {
            pc_close(pc);
            return;
        }
        if (r == IO_PENDING)
            break;
        if (round >= SYNC_READS) {
            /* Enough for one turn: hand the finished read to the port as
             * if it had queued it, and let other connections in. */
            pc->ops++;
            pc->reading = true;
            pc->rd.ov.Internal = 0; /* STATUS_SUCCESS */
            pc->rd.ov.InternalHigh = got;
            if (PostQueuedCompletionStatus(pc->t->iocp, got, KEY_IO, &pc->rd.ov))
                break;
            pc->ops--; /* could not post: carry on here */
            pc->reading = false;
        }
        n = got;
    }
    /* A read that started a call usually leaves only control frames to
     * send (grpc-go sends its BDP PING and WINDOW_UPDATE with the request:
     * the PING ACK), and a quick call's answer follows within a
     * millisecond: hold the output back for at most HOLD_MS so that both
     * leave in one WriteFile (two system calls each under Wine, write and
     * the wait for its result) instead of two. The same for a read of a
     * PING alone (ping_only), which a client calling in a loop sends just
     * before its next call. The answer's flush (flush_dirty) or tick() at
     * hold_until (set by the first read held) sends it all, PING ACK first
     * as nghttp2 queues it ("PING responses SHOULD be given higher
     * priority than any other frame", RFC 9113 section 6.7: it still
     * leads the write). Not on a connection that is closing. */
    if (started && !pc->closing && !pc->writing && pc->conn != NULL) {
        if (pc->hold_until == 0)
            pc->hold_until = now + HOLD_MS;
        pc->deadline = cp_conn_next_deadline(pc->conn);
        return;
    }
    flush(pc);
}

static void on_write(pipe_conn *pc, bool ok, DWORD n)
{
    pc->writing = false;
    if (!ok || n > pc->wlen) {
        pc_close(pc);
        return;
    }
    pc->wlen -= n;
    if (pc->wlen > 0)
        memmove(pc->wbuf, pc->wbuf + n, pc->wlen);
    flush(pc);
}

static void on_packet(cp_transport *t, const OVERLAPPED_ENTRY *ev, int64_t now)
{
    if (ev->lpCompletionKey == KEY_JOB) {
        if (t->jobs > 0)
            t->jobs--;
        cp_conn *c = cp_job_complete((cp_job *)ev->lpOverlapped);
        if (c != NULL) {
            pipe_conn *pc = cp_conn_user(c);
            pc->active_at = now;
            if (!pc->dirty) { /* written by flush_dirty() after this batch */
                pc->dirty = true;
                pc->dirty_next = pc->t->dirty;
                pc->t->dirty = pc;
            }
        }
        return;
    }
    if (ev->lpCompletionKey != KEY_IO || ev->lpOverlapped == NULL)
        return; /* KEY_STOP: the loop looks at stop_requested */
    pipe_op *op = CONTAINING_RECORD(ev->lpOverlapped, pipe_op, ov);
    pipe_conn *pc = op->pc;
    bool ok = (LONG)op->ov.Internal >= 0; /* NT_SUCCESS of the I/O status */
    pc->ops--;
    if (pc->h == INVALID_HANDLE_VALUE) { /* closed: a cancelled operation returns */
        pc_maybe_free(pc);
        return;
    }
    if (op == &pc->wr)
        on_write(pc, ok, ev->dwNumberOfBytesTransferred);
    else if (!pc->connected)
        on_connect(pc, ok, now);
    else
        on_read(pc, ok, ev->dwNumberOfBytesTransferred, now);
}

/* After a batch of packets: writes the answers of the calls that finished
 * in it, one flush per connection. */
static void flush_dirty(cp_transport *t)
{
    while (t->dirty != NULL) {
        pipe_conn *pc = t->dirty;
        t->dirty = pc->dirty_next;
        pc->dirty = false;
        if (pc->h == INVALID_HANDLE_VALUE)
            pc_maybe_free(pc); /* closed meanwhile */
        else
            flush(pc);
    }
}

/* ---- stop ----------------------------------------------------------- */

static void begin_drain(cp_transport *t, int64_t now)
{
    int64_t drain = InterlockedCompareExchange64(&t->stop_drain_ms, 0, 0);
    t->phase = DRAINING;
    t->drain_until = now + (drain > 0 ? drain : 0);
    for (size_t i = 0; i < t->nls; i++)
        if (t->ls[i].inst != NULL)
            pc_close(t->ls[i].inst);
    for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (pc->conn != NULL) {
            cp_conn_shutdown(pc->conn);
            flush(pc);
        } else if (pc->connected && pc->h != INVALID_HANDLE_VALUE) {
            pc_close(pc); /* has never said a word: nothing to drain */
        }
    }
}

static void begin_close(cp_transport *t, int64_t now)
{
    t->phase = CLOSING;
    t->close_until = now + CLOSE_GRACE_MS;
    for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (pc->conn != NULL) {
            cp_conn_abort_calls(pc->conn, "csi-proxy is stopping");
            pc->closing = true;
            flush(pc);
        }
    }
}

static size_t inflight(cp_transport *t)
{
    size_t n = 0;
    for (pipe_conn *pc = t->all; pc != NULL; pc = pc->next)
        if (pc->conn != NULL)
            n += cp_conn_inflight(pc->conn);
    return n;
}

static void min_wait(int64_t *wait, int64_t at, int64_t now)
{
    int64_t d = at > now ? at - now : 0;
    if (d < *wait)
        *wait = d;
}

/* Advances the stop phases, re-creates missing listening instances,
 * expires deadlines. Returns how long the loop may sleep (INT64_MAX: no
 * timer). */
static int64_t tick(cp_transport *t, int64_t now)
{
    int64_t wait = INT64_MAX;
    if (t->phase == RUNNING && InterlockedCompareExchange(&t->stop_requested, 0, 0))
        begin_drain(t, now);
    if (t->phase == DRAINING && (inflight(t) == 0 || now >= t->drain_until))
        begin_close(t, now);
    if (t->phase == CLOSING && now >= t->close_until) {
        /* Clients that do not read their last bytes: cancel and close. */
        for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
            next = pc->next;
            if (pc->h != INVALID_HANDLE_VALUE)
                pc_close(pc);
        }
    }
    if (t->phase == RUNNING) {
        for (size_t i = 0; i < t->nls; i++) {
            listener *l = &t->ls[i];
            if (l->inst == NULL && now >= l->retry_at)
                relisten(t, l, now);
            if (l->inst == NULL)
                min_wait(&wait, l->retry_at, now);
        }
    } else if (t->phase == DRAINING) {
        min_wait(&wait, t->drain_until, now);
    } else if (now < t->close_until) {
        min_wait(&wait, t->close_until, now);
    } /* else: only cancelled operations are left, and those always complete */
    if (t->phase == RUNNING && t->opts.idle_ms > 0) {
        for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
            next = pc->next;
            if (!pc->connected || pc->h == INVALID_HANDLE_VALUE || pc->closing ||
                (pc->conn != NULL && cp_conn_inflight(pc->conn) > 0))
                continue;
            if (now - pc->active_at >= t->opts.idle_ms && pc->conn == NULL) {
                pc_close(pc);
            } else if (now - pc->active_at >= t->opts.idle_ms) {
                cp_conn_shutdown(pc->conn); /* GOAWAY: the client reconnects when it needs to */
                pc->closing = true;
                flush(pc);
            } else {
                min_wait(&wait, pc->active_at + t->opts.idle_ms, now);
            }
        }
    }
    for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (pc->hold_until != 0 && pc->h != INVALID_HANDLE_VALUE) {
            if (now >= pc->hold_until) {
                flush(pc);                 /* may close pc; else its deadline is new: */
                min_wait(&wait, now, now); /* the loop looks again at once */
                continue;
            }
            min_wait(&wait, pc->hold_until, now);
        }
        if (pc->conn == NULL || pc->deadline == INT64_MAX)
            continue;
        if (pc->deadline <= now) {
            cp_conn_expire(pc->conn, now);
            flush(pc); /* refreshes pc->deadline, unless it closed pc */
        } else {
            min_wait(&wait, pc->deadline, now);
        }
    }
    return wait;
}

/* ---- transport.h ---------------------------------------------------- */

cp_transport *cp_transport_new(const cp_transport_opts *opts, const cp_listen_spec *specs, size_t n,
                               cp_error *e)
{
    cp_transport *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        cp_error_set(e, CP_E_NOMEM, "transport: out of memory");
        return NULL;
    }
    t->opts = *opts;
    t->iocp = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (t->iocp == NULL) {
        DWORD err = GetLastError();
        char why[256];
        cp_error_set(e, CP_E_IO, "CreateIoCompletionPort: %s (error %lu)",
                     cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
        free(t);
        return NULL;
    }
    t->ls = calloc(n > 0 ? n : 1, sizeof(*t->ls));
    if (t->ls == NULL) {
        cp_error_set(e, CP_E_NOMEM, "transport: out of memory");
        goto fail;
    }
    for (; t->nls < n; t->nls++) {
        listener *l = &t->ls[t->nls];
        l->svc = specs[t->nls].svc;
        l->sa = (SECURITY_ATTRIBUTES *)(specs[t->nls].security != NULL ? specs[t->nls].security
                                                                       : opts->security);
        size_t len = strlen(PIPE_PREFIX) + strlen(specs[t->nls].name) + 1;
        l->name = malloc(len);
        if (l->name != NULL) {
            snprintf(l->name, len, "%s%s", PIPE_PREFIX, specs[t->nls].name);
            l->wpath = cp_win_utf8_to_wide(l->name);
        }
        if (l->wpath == NULL) {
            cp_error_set(e, CP_E_NOMEM, "pipe %s: out of memory", specs[t->nls].name);
            t->nls++; /* so that free releases l->name */
            goto fail;
        }
        if (listen_next(t, l, e) != CP_OK) {
            t->nls++;
            goto fail;
        }
    }
    return t;
fail:
    cp_transport_free(t);
    return NULL;
}

int cp_transport_run(cp_transport *t)
{
    OVERLAPPED_ENTRY ev[BATCH];
    for (;;) {
        int64_t now = cp_now_ms();
        int64_t wait = tick(t, now);
        if (t->phase == CLOSING && t->all == NULL)
            return CP_OK;
        DWORD ms = wait == INT64_MAX ? INFINITE : (wait > 0x7ffffffe ? 0x7ffffffe : (DWORD)wait);
        /* As many packets as calls are out on the pool (at least one):
         * GetQueuedCompletionStatusEx ends a batch that is not full with
         * one more look at the port, which finds it empty (a system call,
         * a wineserver request under Wine); with one call out, or none,
         * the packet awaited is the only one, and a full batch of one ends
         * without that look. Answers finishing together still leave in
         * one write per connection (flush_dirty). */
        ULONG want = t->jobs < 1 ? 1 : (t->jobs > BATCH ? BATCH : (ULONG)t->jobs);
        ULONG got = 0;
        if (!GetQueuedCompletionStatusEx(t->iocp, ev, want, &got, ms, FALSE)) {
            if (GetLastError() != WAIT_TIMEOUT)
                return CP_E_IO; /* the port itself is broken; free() cleans up */
            got = 0;
        }
        now = cp_now_ms();
        for (ULONG i = 0; i < got; i++)
            on_packet(t, &ev[i], now);
        flush_dirty(t);
    }
}

void cp_transport_stop(cp_transport *t, int64_t drain_ms)
{
    InterlockedExchange64(&t->stop_drain_ms, drain_ms);
    InterlockedExchange(&t->stop_requested, 1);
    PostQueuedCompletionStatus(t->iocp, 0, KEY_STOP, NULL);
}

void cp_transport_free(cp_transport *t)
{
    if (t == NULL)
        return;
    /* Close what is left, then let the port return every cancelled
     * operation (and drop jobs finished after run() returned) before any
     * OVERLAPPED is freed. Whatever the kernel still owns after
     * FREE_WAIT_MS is leaked, never freed under it. */
    t->phase = CLOSING;
    for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        pc_close(pc);
    }
    int64_t until = cp_now_ms() + FREE_WAIT_MS;
    OVERLAPPED_ENTRY ev[BATCH];
    for (;;) {
        int64_t now = cp_now_ms();
        DWORD ms = t->all == NULL || now >= until ? 0 : (DWORD)(until - now);
        ULONG got = 0;
        if (!GetQueuedCompletionStatusEx(t->iocp, ev, BATCH, &got, ms, FALSE) || got == 0)
            break;
        for (ULONG i = 0; i < got; i++)
            on_packet(t, &ev[i], now);
        flush_dirty(t);
    }
    if (t->all == NULL) /* else the kernel may still complete into them */
        CloseHandle(t->iocp);
    for (size_t i = 0; i < t->nls; i++) {
        free(t->ls[i].name);
        free(t->ls[i].wpath);
    }
    if (t->all == NULL) {
        free(t->ls);
        free(t);
    }
}
