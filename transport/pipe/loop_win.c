/* loop_win.c - transport.h on named pipes \\.\pipe\<name>: the loops
 * that take the pipes' I/O completions, timers, stop and failure. The
 * design and why it has this shape on Windows are in
 * docs/design/transport.md; the pieces are in pipe_win.h (listening:
 * listen_win.c; one connection's I/O and caller checks: conn_win.c;
 * foreign instances: watch_win.c). The contract:
 *
 * Threads: LOOPS loops, each one thread with its own I/O completion port
 * to which every pipe handle of the loop is bound; it waits in
 * GetQueuedCompletionStatusEx, with a timeout from its timers (never
 * shorter than they need, no polling), for any number of connections. The
 * first loop runs on the caller of cp_transport_run, the others on
 * threads it starts. Workers (rpc/pool.c) run calls and the caller checks
 * of first bytes, and write answers themselves (post_job).
 *
 * I/O ownership: ReadFile, ConnectNamedPipe and WriteFile are issued by
 * loop threads and workers only. Both live until every pipe handle is
 * closed: cp_transport_run returns only after each loop has closed all of
 * its handles (a loop whose wait failed closes its own and then waits for
 * the stop), and the pool is freed after run returns (service/app_win.c;
 * a pool never retires a worker). So no thread that issued I/O exits
 * while that I/O is out.
 *
 * Locks: the loop's lock keeps its thread and the workers apart: the
 * loop's thread holds it except while it waits, a worker while it answers
 * (post_job). Every pipe_conn and cp_conn of a loop is used under it.
 * Loops share only the options, the connection count (interlocked) and
 * the stop request.
 *
 * Lifetime: each pipe_op says whether the system has it (out), checking
 * whether a caller check has pc. Closing a pipe_conn closes its handle
 * (which cancels its I/O) but frees its memory only when neither is out,
 * i.e. after the loop took every completion, cancelled ones included.
 *
 * Stop: cp_transport_stop posts a wake packet to every loop: drain (GOAWAY,
 * calls finish), close (calls aborted, output flushed for CLOSE_GRACE_MS),
 * then every handle closed and every completion taken.
 *
 * Failure: a wait that fails ends that loop only: its connections are
 * closed, its listening instances made again on another loop, the
 * failure reported (opts.loop_failed); the other loops serve on.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "transport/pipe/pipe_client_win.h"
#include "transport/pipe/pipe_win.h"
#include "base/thread.h"

/* Test hook (cp_transport_test_fail_wait): loop index + 1 whose wait is
 * to fail once it has taken that many connects (0: none). */
static volatile LONG test_fail_loop;
static volatile LONG test_fail_after;

void cp_transport_test_fail_wait(unsigned loop, unsigned after_connects)
{
    InterlockedExchange(&test_fail_after, (LONG)after_connects);
    InterlockedExchange(&test_fail_loop, (LONG)loop + 1);
}

/* ---- the port --------------------------------------------------------- */

void cp_loop_wake(pipe_loop *lp)
{
    if (lp->port != NULL)
        PostQueuedCompletionStatus(lp->port, 0, KEY_WAKE, NULL);
}

bool cp_loop_bind(pipe_loop *lp, HANDLE h, pipe_conn *pc)
{
    /* "CreateIoCompletionPort function (ioapiset.h)", Microsoft Learn: with
     * an existing port, associates the file handle with it; every
     * completion of an overlapped operation on h is queued there with
     * CompletionKey (the pipe_conn). */
    if (CreateIoCompletionPort(h, lp->port, (ULONG_PTR)pc, 0) == NULL)
        return false;
    /* "SetFileCompletionNotificationModes function (winbase.h)", Microsoft
     * Learn: FILE_SKIP_COMPLETION_PORT_ON_SUCCESS - an operation that
     * returns success at once queues no packet (the caller handles it on
     * the spot); FILE_SKIP_SET_EVENT_ON_HANDLE - the handle's event is not
     * set (nothing waits on it). Without it every read and write done at
     * once would also wake the loop. If the system refuses, the handle is
     * not used (a packet would come for what was already handled). */
    return SetFileCompletionNotificationModes(h, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS |
                                                     FILE_SKIP_SET_EVENT_ON_HANDLE) != FALSE;
}

bool cp_loop_post(pipe_loop *lp, pipe_conn *pc, pipe_op *op, DWORD n)
{
    op->ov.Internal = 0; /* STATUS_SUCCESS */
    op->ov.InternalHigh = n;
    /* "PostQueuedCompletionStatus function (ioapiset.h)", Microsoft Learn:
     * the packet comes out of GetQueuedCompletionStatusEx with these
     * bytes, key and OVERLAPPED. */
    return PostQueuedCompletionStatus(lp->port, n, (ULONG_PTR)pc, &op->ov) != FALSE;
}

/* ---- completions ------------------------------------------------------ */

/* The completed operation op of pc: hands it to what it was for. */
static void on_done(pipe_conn *pc, pipe_op *op, DWORD n, int64_t now)
{
    bool ok = (LONG)op->ov.Internal >= 0; /* NT_SUCCESS of the I/O status */
    op->out = false;
    if (pc->h == INVALID_HANDLE_VALUE) { /* closed: a cancelled operation is done */
        cp_pc_maybe_free(pc);
        return;
    }
    if (!ok && op == &pc->rd && pc->connected)
        pc->peer_gone = true; /* the client closed first: its instance goes with ours */
    if (op == &pc->wr)
        cp_pc_on_write(pc, ok, n);
    else if (!pc->connected)
        cp_pc_on_connect(pc, ok, now);
    else
        cp_pc_on_read(pc, ok, n, now);
}

/* Hands the completions one wait took to their connections: first the
 * hand-off check of all the reads among them at once (cp_pc_precheck),
 * then each. A handler may close its own pipe_conn, never free another's
 * with a completion still in e[] (that one has an operation out). */
static void take(OVERLAPPED_ENTRY *e, ULONG n, int64_t now)
{
    pipe_conn *rd[BATCH] = {NULL};
    size_t nrd = 0;
    for (ULONG i = 0; i < n; i++) {
        pipe_conn *pc = (pipe_conn *)e[i].lpCompletionKey;
        if (pc == NULL || e[i].lpOverlapped != &pc->rd.ov)
            continue;
        /* A connect: its time, as soon after it as the loop can tell
         * (never before it), for the authorize hook's pid-reuse guard: a
         * process created later cannot be the client. */
        if (!pc->connected && pc->connected_at == 0)
            pc->connected_at = cp_win_filetime_now();
        else if (pc->connected)
            rd[nrd++] = pc;
    }
    cp_pc_precheck(rd, nrd);
    for (ULONG i = 0; i < n; i++) {
        pipe_conn *pc = (pipe_conn *)e[i].lpCompletionKey;
        OVERLAPPED *ov = e[i].lpOverlapped;
        if (pc == NULL || ov == NULL)
            continue; /* KEY_WAKE: the loop looks at its timers and the stop */
        if (ov == &pc->rd.ov)
            on_done(pc, &pc->rd, e[i].dwNumberOfBytesTransferred, now);
        else if (ov == &pc->wr.ov)
            on_done(pc, &pc->wr, e[i].dwNumberOfBytesTransferred, now);
        else if (pc->chk != NULL && ov == &pc->chk->ov)
            cp_pc_on_check(pc, now);
    }
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
 * expires deadlines, idle connections and held output. Returns how long
 * the loop may sleep (INT64_MAX: no timer). Every timer here is at least
 * RELISTEN_RETRY_MS, WATCH_MS, HOLD_BOUND_MS, a grpc-timeout or the idle
 * timeout away: none asks for a wait shorter than a timer tick. */
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
            if (l->owned && l->inst != NULL) { /* instances not made here (watch_win.c) */
                if (now >= l->check_at)
                    cp_pipe_watch(lp, l, now);
                min_wait(&wait, l->check_at, now);
            }
        }
    } else if (lp->phase == DRAINING) {
        min_wait(&wait, lp->drain_until, now);
    } else if (now < lp->close_until) {
        min_wait(&wait, lp->close_until, now);
    } /* else: only cancelled operations are left, and those always complete */
    if (lp->phase == RUNNING && lp->t->opts.idle_ms > 0) {
        for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
            next = pc->next;
            if (!pc->connected || pc->h == INVALID_HANDLE_VALUE || pc->closing || pc->checking ||
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

static int loop_init(cp_transport *t, pipe_loop *lp, size_t index, size_t nls, cp_error *e)
{
    lp->t = t;
    lp->index = index;
    InitializeSRWLock(&lp->lock);
    /* "CreateIoCompletionPort function (ioapiset.h)", Microsoft Learn:
     * INVALID_HANDLE_VALUE and no existing port create a port not yet
     * associated with a file; NumberOfConcurrentThreads 1: one thread (the
     * loop's) takes its packets. */
    lp->port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (lp->port == NULL) {
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

/* Whether the test hook makes this wait fail. */
static bool test_fails(pipe_loop *lp, LONG *connects)
{
    LONG k = InterlockedCompareExchange(&test_fail_loop, 0, 0);
    if (k == 0 || (size_t)(k - 1) != lp->index)
        return false;
    return *connects >= InterlockedCompareExchange(&test_fail_after, 0, 0);
}

/* The loop's wait failed (err): it ends its connections and hands its
 * listening instances to the other loops, says so, and serves nobody
 * from then on. Called with the loop's lock held; returns without it,
 * once the transport stops. */
static int loop_fail(pipe_loop *lp, DWORD err)
{
    cp_transport *t = lp->t;
    InterlockedExchange(&lp->failed, 1);
    unsigned long ended = 0;
    for (pipe_conn *pc = lp->all; pc != NULL; pc = pc->next)
        if (pc->connected && pc->h != INVALID_HANDLE_VALUE)
            ended++;
    lp->phase = CLOSING;
    for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (pc->h != INVALID_HANDLE_VALUE)
            cp_pc_close(pc); /* its memory stays while the system has an operation */
    }
    ReleaseSRWLockExclusive(&lp->lock);
    bool served = cp_pipe_hand_over(lp);
    if (t->opts.loop_failed != NULL) {
        char why[256], msg[CP_ERROR_MSG_MAX + 256];
        snprintf(msg, sizeof(msg),
                 "pipe transport: loop %zu of %d: GetQueuedCompletionStatusEx failed: %s (error "
                 "%lu); %lu connections it served were closed; %s",
                 lp->index + 1, LOOPS, cp_win_errtext(err, why, sizeof(why)), (unsigned long)err,
                 ended,
                 served ? "its listening instances listen on another loop, the others serve on"
                        : "no loop is left: the service stops");
        t->opts.loop_failed(t->opts.loop_failed_ctx, msg);
    }
    if (!served) {
        cp_transport_stop(t, 0);
        return CP_E_IO;
    }
    WaitForSingleObject(t->stopped, INFINITE);
    return CP_OK;
}

/* Serves the loop until it has closed every connection after a stop. */
static int loop_run(pipe_loop *lp)
{
    OVERLAPPED_ENTRY e[BATCH];
    LONG connects = 0;
    /* One packet per wait: a wait that asks for more looks at the port
     * once more after the last packet it takes (a wineserver request
     * under Wine; on Windows a batch is one system call either way), and
     * packets already queued come back at once without sleeping. */
    const ULONG ask = 1;
    AcquireSRWLockExclusive(&lp->lock);
    for (;;) {
        int64_t now = cp_now_ms();
        int64_t wait = tick(lp, now);
        if (lp->phase == CLOSING && lp->all == NULL)
            break;
        DWORD ms = wait == INT64_MAX ? INFINITE : (wait > 0x7ffffffe ? 0x7ffffffe : (DWORD)wait);
        /* Workers answer their calls meanwhile (post_job); none frees a
         * pipe_conn with an operation out. */
        ReleaseSRWLockExclusive(&lp->lock);
        ULONG got = 0;
        BOOL ok;
        DWORD err = 0;
        if (test_fails(lp, &connects)) {
            ok = FALSE;
            err = ERROR_INVALID_HANDLE;
        } else {
            /* "GetQueuedCompletionStatusEx function (ioapiset.h)",
             * Microsoft Learn: takes up to ulCount packets at once; FALSE
             * with WAIT_TIMEOUT when none came in dwMilliseconds, FALSE
             * with another error when the wait itself failed. */
            ok = GetQueuedCompletionStatusEx(lp->port, e, ask, &got, ms, FALSE);
            err = ok ? 0 : GetLastError();
        }
        AcquireSRWLockExclusive(&lp->lock);
        if (!ok && err != WAIT_TIMEOUT)
            return loop_fail(lp, err);
        if (!ok)
            got = 0;
        for (ULONG i = 0; i < got; i++) {
            pipe_conn *pc = (pipe_conn *)e[i].lpCompletionKey;
            if (pc != NULL && e[i].lpOverlapped == &pc->rd.ov && !pc->connected)
                connects++;
        }
        take(e, got, cp_now_ms());
    }
    ReleaseSRWLockExclusive(&lp->lock);
    return CP_OK;
}

/* A loop after the first: it serves the instances cp_pipe_place puts on
 * it until it stops. */
static void loop_thread(void *arg)
{
    loop_run(arg);
}

/* Closes what is left of a loop after run, then takes the completion of
 * every cancelled operation before any OVERLAPPED is freed (the pool is
 * gone: no worker answers any more). Whatever the system still has after
 * FREE_WAIT_MS is leaked, never freed under it. Returns whether the loop
 * owns nothing any more (its port is closed then). */
static bool loop_free(pipe_loop *lp, int64_t until)
{
    lp->phase = CLOSING;
    for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        cp_pc_close(pc); /* one whose check never ran stays: leaked */
    }
    OVERLAPPED_ENTRY e[BATCH];
    while (lp->all != NULL && lp->port != NULL) {
        int64_t now = cp_now_ms();
        if (now >= until)
            break;
        ULONG got = 0;
        if (!GetQueuedCompletionStatusEx(lp->port, e, BATCH, &got, (DWORD)(until - now), FALSE))
            break; /* a timeout, or the port is gone: what is left is leaked */
        take(e, got, now);
    }
    if (lp->all != NULL) /* the system may still complete into them */
        return false;
    if (lp->port != NULL)
        CloseHandle(lp->port);
    lp->port = NULL;
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
    t->watch = calloc(n > 0 ? n : 1, sizeof(*t->watch));
    t->stopped = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (t->watch == NULL || t->stopped == NULL) {
        cp_error_set(e, CP_E_NOMEM, "transport: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        InitializeSRWLock(&t->watch[i].lock);
    for (size_t k = 0; k < LOOPS; k++)
        if (loop_init(t, &t->loops[k], k, n, e) != CP_OK)
            goto fail;
    /* The first loop's listeners own the names; the others point to them. */
    pipe_loop *first = &t->loops[0];
    for (size_t i = 0; i < n; i++) {
        listener *l = &first->ls[i];
        l->svc = specs[i].svc;
        l->w = &t->watch[i];
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
            o->w = l->w;
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
    /* A loop whose thread cannot start counts as failed: it takes no
     * instance, the others serve. */
    for (size_t k = 1; k < LOOPS; k++) {
        t->loops[k].thread = cp_thread_start(loop_thread, &t->loops[k]);
        if (t->loops[k].thread == NULL)
            InterlockedExchange(&t->loops[k].failed, 1);
    }
    int rc = loop_run(&t->loops[0]);
    /* The others end once stopped (cp_transport_stop woke them). */
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
    if (t->stopped != NULL)
        SetEvent(t->stopped);
    for (size_t k = 0; k < LOOPS; k++)
        cp_loop_wake(&t->loops[k]);
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
    free(t->watch);
    if (t->stopped != NULL)
        CloseHandle(t->stopped);
    free(t);
}
