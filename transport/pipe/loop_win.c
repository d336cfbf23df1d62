/* loop_win.c - transport.h on named pipes \\.\pipe\<name>: the loops
 * that wait for the pipes' I/O, timers and stop. The design and why it
 * has this shape are in docs/design/transport.md; the pieces are in
 * pipe_win.h (listening: listen_win.c; one connection's I/O and caller
 * checks: conn_win.c; foreign instances: watch_win.c). The contract:
 *
 * Threads: loops (pipe_win.h: pipe_loop), each one thread that starts the
 * overlapped operations of its pipe instances and waits for them in one
 * WaitForMultipleObjects on their events (wait_set); after a wait it takes
 * every finished operation (take_done). The first loop runs on the caller
 * of cp_transport_run, the others on threads started as connections need
 * them (cp_loop_start, up to LOOPS_MAX); operations beyond what the waits
 * take are looked at every POLL_MS. A connection is served to its end by
 * the loop it landed on (cp_pipe_place).
 *
 * Locks: the loop's lock keeps its thread and the workers apart: the
 * loop's thread holds it except while it waits, a worker while it answers
 * (post_job: finished jobs go on the loop's lock-free list and one worker
 * at a time completes them and writes the output). Every pipe_conn and
 * cp_conn of a loop is used under that lock. Loops share only the options,
 * the connection count (interlocked) and the stop request.
 *
 * Security: each connection is offered to opts.authorize once, on its
 * first bytes, before they reach HTTP/2; before a call read from the pipe
 * is accepted, the opener must still run (the loop's wait holds the
 * openers ahead of their reads' events; cp_pc_precheck for the others).
 *
 * Lifetime: each pipe_op says whether the system has it (out). Closing a
 * pipe_conn closes its handle (which cancels its I/O) but frees the memory
 * holding the OVERLAPPEDs only when no operation is out, i.e. after the
 * loop took every completion, cancelled ones included. Events of freed
 * pipe_conns are kept for the next ones (lp->spare).
 *
 * Stop: cp_transport_stop sets every loop's wake event; a worker answering
 * while the transport stops sets it too, and so does a worker whose write
 * did not complete at once (the loop's wait then takes its event).
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

/* Whether the system has finished op ("HasOverlappedIoCompleted macro
 * (winbase.h)", Microsoft Learn: Internal stops being STATUS_PENDING; for
 * an operation that reported ERROR_IO_PENDING, or one left for later,
 * again). */
static bool op_done(const pipe_op *op)
{
    return op->out && HasOverlappedIoCompleted(&op->ov);
}

/* The completed operation op of pc: hands it to what it was for. */
static void on_done(pipe_conn *pc, pipe_op *op, int64_t now)
{
    bool ok = (LONG)op->ov.Internal >= 0; /* NT_SUCCESS of the I/O status */
    DWORD n = (DWORD)op->ov.InternalHigh;
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

/* Takes every operation of the loop the system has finished: writes
 * first, then reads and connects, whose reads share one hand-off check
 * (cp_pc_precheck). A handler may close and free its own pipe_conn and
 * make new ones (at the list's head), never another's: the ones found are
 * kept until handled (each holds an operation, so none is freed first). */
static void take_done(pipe_loop *lp, int64_t now)
{
    pipe_conn *rd[MAXIMUM_WAIT_OBJECTS] = {NULL};
    size_t n = 0;
    lp->again = false;
    for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        if (op_done(&pc->wr)) {
            bool rd_out = pc->rd.out; /* else pc may be freed now */
            on_done(pc, &pc->wr, now);
            if (!rd_out)
                continue;
        }
        if (op_done(&pc->rd)) {
            /* A connect: its time, as soon after it as the loop can tell
             * (never before it), for the authorize hook's pid-reuse
             * guard: a process created later cannot be the client. */
            if (!pc->connected && pc->connected_at == 0)
                pc->connected_at = cp_win_filetime_now();
            if (n < MAXIMUM_WAIT_OBJECTS)
                rd[n++] = pc;
            else
                lp->again = true; /* the rest at the next look */
        }
    }
    cp_pc_precheck(rd, n);
    for (size_t i = 0; i < n; i++)
        on_done(rd[i], &rd[i]->rd, now);
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
    /* Auto-reset: set while the loop is not waiting, it stays set and ends
     * the next wait, which resets it ("CreateEventW function
     * (synchapi.h)", Microsoft Learn: an auto-reset event "remains
     * signaled until a single waiting thread is released"). */
    lp->wake = CreateEventW(NULL, FALSE, FALSE, NULL);
    if (lp->wake == NULL) {
        DWORD err = GetLastError();
        char why[256];
        return cp_error_set(e, CP_E_IO, "CreateEvent: %s (error %lu)",
                            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    lp->ls = calloc(nls > 0 ? nls : 1, sizeof(*lp->ls));
    if (lp->ls == NULL)
        return cp_error_set(e, CP_E_NOMEM, "transport: out of memory");
    lp->nls = nls;
    return CP_OK;
}

/* One wait of a loop (wait_set): hs[0 .. nopen-1] are the openers of
 * allowed connections whose reads are in the wait (who[i]), then the wake
 * event, then those reads' events (who[i]: the same connections, in the
 * same order), then the events of the loop's other operations the system
 * has (the listening instances' connects, other reads, pending writes;
 * who[i] NULL). all: none left out (else they are looked at every
 * POLL_MS). */
typedef struct loop_wait {
    HANDLE hs[MAXIMUM_WAIT_OBJECTS];
    pipe_conn *who[MAXIMUM_WAIT_OBJECTS];
    DWORD n, nopen;
    bool all;
} loop_wait;

/* A read of an allowed connection: the wait asks for its opener too. */
static bool watched(const pipe_conn *pc)
{
    return pc->rd.out && pc->connected && pc->h != INVALID_HANDLE_VALUE && pc->conn != NULL &&
           pc->opener != NULL;
}

/* Why the openers are in the wait, before everything else: the hand-off
 * check (before_call) asks, after a read completed, whether the process
 * that opened the connection has exited. With bWaitAll FALSE,
 * WaitForMultipleObjects returns "the array index of the signaled object
 * with the smallest index value of all the signaled objects"
 * ("WaitForMultipleObjects function (synchapi.h)", Microsoft Learn), and a
 * process is signaled once it has exited. So when the wait returns the
 * event of a watched read, that read had completed (its event set) and
 * none of the openers had exited when the wait was satisfied: the check
 * of that read is answered without a call of its own (opener_fresh). When
 * it returns an opener, that connection refuses every call from then on
 * (cp_pc_opener_exited, as before_call would at its next call). Reads
 * found done besides the one that answered ask as before (cp_pc_precheck,
 * before_call). */
static void wait_set(pipe_loop *lp, loop_wait *w)
{
    DWORD k = 0;
    w->all = true;
    /* Pairs first, as many as leave room for the wake event. */
    for (pipe_conn *pc = lp->all; pc != NULL && k < (MAXIMUM_WAIT_OBJECTS - 1) / 2; pc = pc->next)
        if (watched(pc)) {
            w->hs[k] = pc->opener;
            w->who[k++] = pc;
        }
    w->nopen = k;
    w->hs[k] = lp->wake;
    w->who[k++] = NULL;
    for (DWORD i = 0; i < w->nopen; i++) {
        w->hs[k] = w->who[i]->rd.ev;
        w->who[k++] = w->who[i];
    }
    DWORD paired = 0; /* watched ones met so far: the first nopen are in */
    for (pipe_conn *pc = lp->all; pc != NULL; pc = pc->next) {
        bool in = watched(pc) && paired++ < w->nopen;
        pipe_op *ops[2] = {in ? NULL : &pc->rd, &pc->wr};
        for (int j = 0; j < 2; j++) {
            if (ops[j] == NULL || !ops[j]->out)
                continue;
            if (k == MAXIMUM_WAIT_OBJECTS) {
                w->all = false;
                continue;
            }
            w->hs[k] = ops[j]->ev;
            w->who[k++] = NULL;
        }
    }
    w->n = k;
}

/* Serves the loop until it has closed every connection after a stop. */
static int loop_run(pipe_loop *lp)
{
    loop_wait w;
    AcquireSRWLockExclusive(&lp->lock);
    for (;;) {
        int64_t now = cp_now_ms();
        int64_t wait = tick(lp, now);
        if (lp->phase == CLOSING && lp->all == NULL)
            break;
        if (!lp->again) {
            wait_set(lp, &w);
            if (!w.all && wait > POLL_MS)
                wait = POLL_MS; /* the ones left out are looked at this often */
            DWORD ms = wait == INT64_MAX ? INFINITE
                                         : (wait > 0x7ffffffe ? 0x7ffffffe : (DWORD)wait);
            /* Workers answer their calls meanwhile (post_job); none frees
             * a pipe_conn with an operation out, nor closes its opener
             * (cp_pc_close), so every handle and who[] stays valid. */
            ReleaseSRWLockExclusive(&lp->lock);
            DWORD r = WaitForMultipleObjects(w.n, w.hs, FALSE, ms);
            AcquireSRWLockExclusive(&lp->lock);
            if (r == WAIT_FAILED) {
                ReleaseSRWLockExclusive(&lp->lock);
                return CP_E_IO; /* free() cleans up */
            }
            DWORD i = r - WAIT_OBJECT_0; /* WAIT_TIMEOUT and the like: beyond w.n */
            if (i < w.nopen)
                cp_pc_opener_exited(w.who[i]);
            else if (i < w.n && w.who[i] != NULL)
                w.who[i]->opener_fresh = true;
        }
        take_done(lp, cp_now_ms());
    }
    ReleaseSRWLockExclusive(&lp->lock);
    return CP_OK;
}

/* A loop after the first: it serves the instances cp_pipe_place puts on
 * it until it stops. */
static void loop_thread(void *arg)
{
    pipe_loop *lp = arg;
    if (loop_run(lp) != CP_OK)
        cp_transport_stop(lp->t, 0); /* a broken wait: stop the whole transport */
}

/* Loops start in index order, each from a loop already running (or from
 * cp_transport_run), which stores its thread before it ends itself:
 * cp_transport_run joins them in index order, so it reads each loop's
 * thread after the loop that started it has ended. A thread that cannot
 * start ends the starting for good (the loops there serve on). */
bool cp_loop_start(cp_transport *t, LONG nl)
{
    if (nl >= LOOPS_MAX || InterlockedCompareExchange(&t->starting, 1, 0) != 0)
        return false;
    bool ok = false;
    if (InterlockedCompareExchange(&t->nloops, 0, 0) == nl) {
        pipe_loop *lp = &t->loops[nl];
        lp->thread = cp_thread_start(loop_thread, lp);
        if (lp->thread != NULL) {
            InterlockedIncrement(&t->nloops);
            ok = true;
        }
    }
    InterlockedExchange(&t->starting, ok ? 0 : 1);
    return ok;
}

/* Closes what is left of a loop after run, then waits for the system to
 * finish every cancelled operation before any OVERLAPPED is freed (the
 * pool is gone: no worker answers any more). Whatever the system still
 * has after FREE_WAIT_MS is leaked, never freed under it. Returns whether
 * the loop owns nothing any more (its events are closed then). */
static bool loop_free(pipe_loop *lp, int64_t until)
{
    lp->phase = CLOSING;
    for (pipe_conn *pc = lp->all, *next; pc != NULL; pc = next) {
        next = pc->next;
        cp_pc_close(pc);
    }
    loop_wait w;
    for (;;) {
        take_done(lp, cp_now_ms());
        int64_t now = cp_now_ms();
        if (lp->all == NULL || now >= until)
            break;
        wait_set(lp, &w); /* everything is closed: reads (cancelled) only */
        DWORD ms = (DWORD)(until - now);
        if (!w.all && ms > POLL_MS)
            ms = POLL_MS;
        if (WaitForMultipleObjects(w.n, w.hs, FALSE, ms) == WAIT_FAILED)
            break;
    }
    if (lp->all != NULL) /* the system may still complete into them */
        return false;
    while (lp->nspare > 0)
        CloseHandle(lp->spare[--lp->nspare]);
    if (lp->wake != NULL)
        CloseHandle(lp->wake);
    lp->wake = NULL;
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
    t->nloops = 1; /* the first runs on cp_transport_run's caller */
    /* A wait takes the wake event, the listening instances, and per
     * connection its opener and its read (wait_set). */
    t->room = n + 3 < MAXIMUM_WAIT_OBJECTS ? (LONG)(MAXIMUM_WAIT_OBJECTS - 1 - n) / 2 : 1;
    t->watch = calloc(n > 0 ? n : 1, sizeof(*t->watch));
    if (t->watch == NULL) {
        cp_error_set(e, CP_E_NOMEM, "transport: out of memory");
        free(t);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        InitializeSRWLock(&t->watch[i].lock);
    for (size_t k = 0; k < LOOPS_MAX; k++)
        if (loop_init(t, &t->loops[k], n, e) != CP_OK)
            goto fail;
    /* The first loop's listeners own the names; the others point to them
     * and listen once their threads start (cp_transport_run). */
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
        for (size_t k = 1; k < LOOPS_MAX; k++) {
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
    /* The first loop's instances listen already (cp_transport_new); the
     * others make theirs on their own threads. A loop whose thread cannot
     * start makes no instance and serves nobody; the others serve. */
    cp_loop_start(t, 1);
    int rc = loop_run(&t->loops[0]);
    if (rc != CP_OK)
        cp_transport_stop(t, 0);
    /* The others end once stopped (cp_transport_stop set their wake events). */
    for (size_t k = 1; k < LOOPS_MAX; k++)
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
    for (size_t k = 0; k < LOOPS_MAX; k++)
        if (t->loops[k].wake != NULL)
            SetEvent(t->loops[k].wake);
}

void cp_transport_free(cp_transport *t)
{
    if (t == NULL)
        return;
    int64_t until = cp_now_ms() + FREE_WAIT_MS;
    bool done = true;
    for (size_t k = 0; k < LOOPS_MAX; k++)
        if (!loop_free(&t->loops[k], until))
            done = false;
    if (!done) /* listeners and names included: connections still point to them */
        return;
    listener *ls0 = t->loops[0].ls;
    for (size_t i = 0; ls0 != NULL && i < t->loops[0].nls; i++) {
        free(ls0[i].name);
        free(ls0[i].wpath);
    }
    for (size_t k = 0; k < LOOPS_MAX; k++)
        free(t->loops[k].ls);
    free(t->watch);
    free(t);
}
