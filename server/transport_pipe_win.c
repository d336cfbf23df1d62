/* transport_pipe_win.c - transport.h on named pipes \\.\pipe\<name>: the
 * completion loop, timers and stop. The design of the whole transport is
 * here; its pieces are in pipe_win.h (listening: pipe_listen_win.c; one
 * connection's I/O and caller checks: pipe_conn_win.c).
 *
 * Threading: one I/O completion port, one I/O thread (the caller of
 * cp_transport_run), which reads, accepts and times out. A worker thread
 * that finished a call answers it itself: it completes the job on its
 * connection and writes the output (post_job). One lock (t->lock) keeps
 * them apart: the I/O thread holds it except while it waits on the port,
 * a worker while it answers; every pipe_conn and cp_conn is used under it.
 * cp_transport_stop posts KEY_STOP; a worker answering while the
 * transport stops posts KEY_WAKE so that the loop sees the call gone.
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
 * not for reads of control frames only (WINDOW_UPDATE, PING); the reads
 * that one port wait returns share one WaitForMultipleObjects on their
 * openers when none of them has exited (cp_pc_precheck).
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
 * port, and other connections get their turn. The
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
#include "pipe_win.h"
#include "thread.h"

static void on_packet(const OVERLAPPED_ENTRY *ev, int64_t now)
{
    if (ev->lpCompletionKey != KEY_IO || ev->lpOverlapped == NULL)
        return; /* KEY_STOP, KEY_WAKE: the loop looks again (tick) */
    pipe_op *op = CONTAINING_RECORD(ev->lpOverlapped, pipe_op, ov);
    pipe_conn *pc = op->pc;
    bool ok = (LONG)op->ov.Internal >= 0; /* NT_SUCCESS of the I/O status */
    pc->ops--;
    if (pc->h == INVALID_HANDLE_VALUE) { /* closed: a cancelled operation returns */
        cp_pc_maybe_free(pc);
        return;
    }
    if (op == &pc->wr)
        cp_pc_on_write(pc, ok, ev->dwNumberOfBytesTransferred);
    else if (!pc->connected)
        cp_pc_on_connect(pc, ok, now);
    else
        cp_pc_on_read(pc, ok, ev->dwNumberOfBytesTransferred, now);
}

/* ---- stop ----------------------------------------------------------- */

static void begin_drain(cp_transport *t, int64_t now)
{
    int64_t drain = InterlockedCompareExchange64(&t->stop_drain_ms, 0, 0);
    t->phase = DRAINING;
    t->drain_until = now + (drain > 0 ? drain : 0);
    for (size_t i = 0; i < t->nls; i++)
        if (t->ls[i].inst != NULL)
            cp_pc_close(t->ls[i].inst);
    for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (pc->conn != NULL) {
            cp_conn_shutdown(pc->conn);
            cp_pc_flush(pc);
        } else if (pc->connected && pc->h != INVALID_HANDLE_VALUE) {
            cp_pc_close(pc); /* has never said a word: nothing to drain */
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
            cp_pc_flush(pc);
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
                cp_pc_close(pc);
        }
    }
    if (t->phase == RUNNING) {
        for (size_t i = 0; i < t->nls; i++) {
            listener *l = &t->ls[i];
            if (l->inst == NULL && now >= l->retry_at)
                cp_pipe_relisten(t, l, now);
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
                cp_pc_close(pc);
            } else if (now - pc->active_at >= t->opts.idle_ms) {
                cp_conn_shutdown(pc->conn); /* GOAWAY: the client reconnects when it needs to */
                pc->closing = true;
                cp_pc_flush(pc);
            } else {
                min_wait(&wait, pc->active_at + t->opts.idle_ms, now);
            }
        }
    }
    for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (pc->hold_until != 0 && pc->h != INVALID_HANDLE_VALUE) {
            if (now >= pc->hold_until) {
                cp_pc_flush(pc);           /* may close pc; else its deadline is new: */
                min_wait(&wait, now, now); /* the loop looks again at once */
                continue;
            }
            min_wait(&wait, pc->hold_until, now);
        }
        if (pc->conn == NULL || pc->deadline == INT64_MAX)
            continue;
        if (pc->deadline <= now) {
            cp_conn_expire(pc->conn, now);
            cp_pc_flush(pc); /* refreshes pc->deadline, unless it closed pc */
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
    InitializeSRWLock(&t->lock);
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
        if (cp_pipe_listen_next(t, l, e) != CP_OK) {
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
    AcquireSRWLockExclusive(&t->lock);
    for (;;) {
        int64_t now = cp_now_ms();
        int64_t wait = tick(t, now);
        if (t->phase == CLOSING && t->all == NULL)
            break;
        DWORD ms = wait == INT64_MAX ? INFINITE : (wait > 0x7ffffffe ? 0x7ffffffe : (DWORD)wait);
        /* As many packets as calls are out on the pool (at least one):
         * GetQueuedCompletionStatusEx ends a batch that is not full with
         * one more look at the port, which finds it empty (a system call,
         * a wineserver request under Wine); with one call out, or none,
         * the packet awaited is the only one, and a full batch of one ends
         * without that look. Each call out is a client's next request
         * to come. Workers answer their calls meanwhile (post_job). */
        ULONG want = t->jobs < 1 ? 1 : (t->jobs > BATCH ? BATCH : (ULONG)t->jobs);
        ULONG got = 0;
        ReleaseSRWLockExclusive(&t->lock);
        BOOL ok = GetQueuedCompletionStatusEx(t->iocp, ev, want, &got, ms, FALSE);
        DWORD err = ok ? 0 : GetLastError();
        AcquireSRWLockExclusive(&t->lock);
        if (!ok) {
            if (err != WAIT_TIMEOUT) {
                ReleaseSRWLockExclusive(&t->lock);
                return CP_E_IO; /* the port itself is broken; free() cleans up */
            }
            got = 0;
        }
        now = cp_now_ms();
        cp_pc_precheck(ev, got);
        for (ULONG i = 0; i < got; i++)
            on_packet(&ev[i], now);
    }
    ReleaseSRWLockExclusive(&t->lock);
    return CP_OK;
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
     * operation before any OVERLAPPED is freed (the pool is gone: no
     * worker answers any more). Whatever the kernel still owns after
     * FREE_WAIT_MS is leaked, never freed under it. */
    t->phase = CLOSING;
    for (pipe_conn *pc = t->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        cp_pc_close(pc);
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
            on_packet(&ev[i], now);
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
