/* transport_pipe_win.c - transport.h on named pipes \\.\pipe\<name>: the
 * completion loop, timers and stop. The design of the whole transport is
 * here; its pieces are in pipe_win.h (listening: pipe_listen_win.c; one
 * connection's I/O and caller checks: pipe_conn_win.c).
 *
 * Threading: LOOPS completion loops (pipe_win.h: pipe_loop), each an I/O
 * completion port and the one thread that waits on it, which reads,
 * accepts and times out for the connections of that loop. The first loop
 * runs on the caller of cp_transport_run, the others on threads it starts.
 * The pipes' first instances are the first loop's, made by
 * cp_transport_new, so the pipes are there before run. Each pipe has one
 * listening instance at a time; when a client takes it, the next one is
 * made at once on the loop that is to take the next client
 * (cp_pipe_place, pipe_listen_win.c: the first loop up to SPREAD
 * connections, then the least loaded), and the loop a connection lands on
 * serves it to the end. Why more than one: under load a loop is busy all
 * the time with the system calls of its reads (under Wine each is a
 * wineserver round trip: the read, the system APC that hands its data
 * over, its result, the port's packet), and the clients wait for it; a
 * second loop doubles that capacity. One port for several threads does not do it under Wine,
 * which hands a read's data to the thread that started it but a packet to
 * the port's longest waiter: two wake-ups per read. A worker thread that
 * finished a call answers it itself: it completes the job on its
 * connection and writes the output (post_job). The loop's lock keeps the
 * loop's thread and the workers apart: the loop's thread holds it except
 * while it waits on the port, a worker while it answers; every pipe_conn
 * and cp_conn of the loop is used under it. Loops share only the options,
 * the count of connections (max_conns, interlocked) and the stop request.
 * cp_transport_stop posts KEY_STOP to every loop; a worker answering while
 * the transport stops posts KEY_WAKE so that the loop sees the call gone.
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
 * packets as connections have calls out on the pool (loop_run).
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

static void begin_drain(pipe_loop *lp, int64_t now)
{
    int64_t drain = InterlockedCompareExchange64(&lp->t->stop_drain_ms, 0, 0);
    lp->phase = DRAINING;
    lp->drain_until = now + (drain > 0 ? drain : 0);
    for (size_t i = 0; i < lp->nls; i++)
        if (lp->ls[i].inst != NULL)
            cp_pc_close(lp->ls[i].inst);
    for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (pc->conn != NULL) {
            cp_conn_shutdown(pc->conn);
            cp_pc_flush(pc);
        } else if (pc->connected && pc->h != INVALID_HANDLE_VALUE) {
            cp_pc_close(pc); /* has never said a word: nothing to drain */
        }
    }
}

static void begin_close(pipe_loop *lp, int64_t now)
{
    lp->phase = CLOSING;
    lp->close_until = now + CLOSE_GRACE_MS;
    for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (pc->conn != NULL) {
            cp_conn_abort_calls(pc->conn, "csi-proxy is stopping");
            pc->closing = true;
            cp_pc_flush(pc);
        }
    }
}

static size_t inflight(pipe_loop *lp)
{
    size_t n = 0;
    for (pipe_conn *pc = lp->all; pc != NULL; pc = pc->next)
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
static int64_t tick(pipe_loop *lp, int64_t now)
{
    int64_t wait = INT64_MAX;
    if (lp->phase == RUNNING && InterlockedCompareExchange(&lp->t->stop_requested, 0, 0))
        begin_drain(lp, now);
    if (lp->phase == DRAINING && (inflight(lp) == 0 || now >= lp->drain_until))
        begin_close(lp, now);
    if (lp->phase == CLOSING && now >= lp->close_until) {
        /* Clients that do not read their last bytes: cancel and close. */
        for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
            next = pc->next;
            if (pc->h != INVALID_HANDLE_VALUE)
                cp_pc_close(pc);
        }
    }
    if (lp->phase == RUNNING) {
        for (size_t i = 0; i < lp->nls; i++) {
            listener *l = &lp->ls[i];
            if (l->owned && l->inst == NULL && now >= l->retry_at)
                cp_pipe_relisten(lp, l, now);
            if (l->owned && l->inst == NULL)
                min_wait(&wait, l->retry_at, now);
        }
    } else if (lp->phase == DRAINING) {
        min_wait(&wait, lp->drain_until, now);
    } else if (now < lp->close_until) {
        min_wait(&wait, lp->close_until, now);
    } /* else: only cancelled operations are left, and those always complete */
    if (lp->phase == RUNNING && lp->t->opts.idle_ms > 0) {
        for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
            next = pc->next;
            if (!pc->connected || pc->h == INVALID_HANDLE_VALUE || pc->closing ||
                (pc->conn != NULL && cp_conn_inflight(pc->conn) > 0))
                continue;
            if (now - pc->active_at >= lp->t->opts.idle_ms && pc->conn == NULL) {
                cp_pc_close(pc);
            } else if (now - pc->active_at >= lp->t->opts.idle_ms) {
                cp_conn_shutdown(pc->conn); /* GOAWAY: the client reconnects when it needs to */
                pc->closing = true;
                cp_pc_flush(pc);
            } else {
                min_wait(&wait, pc->active_at + lp->t->opts.idle_ms, now);
            }
        }
    }
    for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
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

/* ---- one loop ------------------------------------------------------ */

static int loop_init(cp_transport *t, pipe_loop *lp, size_t nls, cp_error *e)
{
    lp->t = t;
    InitializeSRWLock(&lp->lock);
    lp->iocp = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (lp->iocp == NULL) {
        DWORD err = GetLastError();
        char why[256];
        return cp_error_set(e, CP_E_IO, "CreateIoCompletionPort: %s (error %lu)",
                            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    lp->ls = calloc(nls > 0 ? nls : 1, sizeof(*lp->ls));
    if (lp->ls == NULL)
        return cp_error_set(e, CP_E_NOMEM, "transport: out of memory");
    lp->nls = nls;
    return CP_OK;
}

/* Serves the loop until it has closed every connection after a stop. */
static int loop_run(pipe_loop *lp)
{
    OVERLAPPED_ENTRY ev[BATCH];
    AcquireSRWLockExclusive(&lp->lock);
    for (;;) {
        int64_t now = cp_now_ms();
        int64_t wait = tick(lp, now);
        if (lp->phase == CLOSING && lp->all == NULL)
            break;
        DWORD ms = wait == INT64_MAX ? INFINITE : (wait > 0x7ffffffe ? 0x7ffffffe : (DWORD)wait);
        /* As many packets as connections have calls out on the pool
         * (at least one): under Wine GetQueuedCompletionStatusEx ends a
         * batch that is not full with one more look at the port, which
         * finds it empty (a wineserver request; on Windows the batch is
         * one system call whatever its size); a full batch ends without
         * that look. Each such connection's read is a client's next
         * request to come, and a connection has one read at a time: 8
         * calls at once on one connection are one packet, not 8 (counting
         * calls, lp->jobs, asked for 8, and every wake paid the empty
         * look). Workers answer their calls meanwhile (post_job). */
        size_t next = lp->busy < lp->jobs ? lp->busy : lp->jobs;
        ULONG want = next < 1 ? 1 : (next > BATCH ? BATCH : (ULONG)next);
        ULONG got = 0;
        ReleaseSRWLockExclusive(&lp->lock);
        BOOL ok = GetQueuedCompletionStatusEx(lp->iocp, ev, want, &got, ms, FALSE);
        DWORD err = ok ? 0 : GetLastError();
        AcquireSRWLockExclusive(&lp->lock);
        if (!ok) {
            if (err != WAIT_TIMEOUT) {
                ReleaseSRWLockExclusive(&lp->lock);
                return CP_E_IO; /* the port itself is broken; free() cleans up */
            }
            got = 0;
        }
        now = cp_now_ms();
        cp_pc_precheck(ev, got);
        for (ULONG i = 0; i < got; i++)
            on_packet(&ev[i], now);
    }
    ReleaseSRWLockExclusive(&lp->lock);
    return CP_OK;
}

/* A loop after the first: it serves the instances cp_pipe_place puts on
 * it, from when its thread runs until it stops. */
static void loop_thread(void *arg)
{
    pipe_loop *lp = arg;
    InterlockedExchange(&lp->serving, 1);
    int rc = loop_run(lp);
    InterlockedExchange(&lp->serving, 0);
    if (rc != CP_OK)
        cp_transport_stop(lp->t, 0); /* a broken port: stop the whole transport */
}

/* Closes what is left of a loop after run, then lets the port return
 * every cancelled operation before any OVERLAPPED is freed (the pool is
 * gone: no worker answers any more). Whatever the kernel still owns after
 * FREE_WAIT_MS is leaked, never freed under it. Returns whether the loop
 * owns nothing any more (its port is closed then). */
static bool loop_free(pipe_loop *lp, int64_t until)
{
    lp->phase = CLOSING;
    for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        cp_pc_close(pc);
    }
    OVERLAPPED_ENTRY ev[BATCH];
    while (lp->iocp != NULL) {
        int64_t now = cp_now_ms();
        DWORD ms = lp->all == NULL || now >= until ? 0 : (DWORD)(until - now);
        ULONG got = 0;
        if (!GetQueuedCompletionStatusEx(lp->iocp, ev, BATCH, &got, ms, FALSE) || got == 0)
            break;
        for (ULONG i = 0; i < got; i++)
            on_packet(&ev[i], now);
    }
    if (lp->all != NULL) /* the kernel may still complete into them */
        return false;
    if (lp->iocp != NULL)
        CloseHandle(lp->iocp);
    lp->iocp = NULL;
    return true;
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
    for (size_t k = 0; k < LOOPS; k++)
        if (loop_init(t, &t->loops[k], n, e) != CP_OK)
            goto fail;
    /* The first loop's listeners own the names; the others point to them
     * and listen once their threads start (cp_transport_run). */
    pipe_loop *first = &t->loops[0];
    for (size_t i = 0; i < n; i++) {
        listener *l = &first->ls[i];
        l->svc = specs[i].svc;
        l->sa =
            (SECURITY_ATTRIBUTES *)(specs[i].security != NULL ? specs[i].security : opts->security);
        size_t len = strlen(PIPE_PREFIX) + strlen(specs[i].name) + 1;
        l->name = malloc(len);
        if (l->name != NULL) {
            snprintf(l->name, len, "%s%s", PIPE_PREFIX, specs[i].name);
            l->wpath = cp_win_utf8_to_wide(l->name);
        }
        if (l->wpath == NULL) {
            cp_error_set(e, CP_E_NOMEM, "pipe %s: out of memory", specs[i].name);
            goto fail;
        }
        if (cp_pipe_listen_next(first, l, e) != CP_OK)
            goto fail;
        l->owned = true;
        for (size_t k = 1; k < LOOPS; k++) {
            listener *o = &t->loops[k].ls[i];
            o->svc = l->svc;
            o->sa = l->sa;
            o->name = l->name;
            o->wpath = l->wpath;
            o->created = true; /* the first instance is the first loop's */
        }
    }
    return t;
fail:
    cp_transport_free(t);
    return NULL;
}

int cp_transport_run(cp_transport *t)
{
    /* The first loop's instances listen already (cp_transport_new); the
     * others make theirs on their own threads. A loop whose thread cannot
     * start makes no instance and serves nobody; the others serve. */
    for (size_t k = 1; k < LOOPS; k++)
        t->loops[k].thread = cp_thread_start(loop_thread, &t->loops[k]);
    int rc = loop_run(&t->loops[0]);
    if (rc != CP_OK)
        cp_transport_stop(t, 0);
    /* The others end once stopped (cp_transport_stop reached their ports). */
    for (size_t k = 1; k < LOOPS; k++)
        if (t->loops[k].thread != NULL) {
            cp_thread_join(t->loops[k].thread);
            t->loops[k].thread = NULL;
        }
    return rc;
}

void cp_transport_stop(cp_transport *t, int64_t drain_ms)
{
    InterlockedExchange64(&t->stop_drain_ms, drain_ms);
    InterlockedExchange(&t->stop_requested, 1);
    for (size_t k = 0; k < LOOPS; k++)
        if (t->loops[k].iocp != NULL)
            PostQueuedCompletionStatus(t->loops[k].iocp, 0, KEY_STOP, NULL);
}

void cp_transport_free(cp_transport *t)
{
    if (t == NULL)
        return;
    int64_t until = cp_now_ms() + FREE_WAIT_MS;
    bool done = true;
    for (size_t k = 0; k < LOOPS; k++)
        if (!loop_free(&t->loops[k], until))
            done = false;
    if (!done) /* listeners and names included: connections still point to them */
        return;
    listener *ls0 = t->loops[0].ls;
    for (size_t i = 0; ls0 != NULL && i < t->loops[0].nls; i++) {
        free(ls0[i].name);
        free(ls0[i].wpath);
    }
    for (size_t k = 0; k < LOOPS; k++)
        free(t->loops[k].ls);
    free(t);
}
