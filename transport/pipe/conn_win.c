/* conn_win.c - one connection of the named-pipe transport
 * (pipe_win.h): its reads and writes, the caller check on its first bytes
 * (on the worker pool) and the hand-off check before each call. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "transport/pipe/pipe_client_win.h"
#include "transport/pipe/pipe_win.h"
#include "rpc/handover.h"
#include "base/thread.h"

/* ---- connection I/O ------------------------------------------------- */

enum { IO_FAILED = -1, IO_PENDING, IO_DONE };

/* Starts the connection's read. IO_DONE: it completed at once; *got bytes
 * are in rbuf, and no packet comes for it (the handle skips the port on
 * success, cp_loop_bind). IO_PENDING: its completion comes to the loop's
 * port. */
static int start_read(pipe_conn *pc, DWORD *got)
{
    memset(&pc->rd.ov, 0, sizeof(pc->rd.ov));
    /* "ReadFile function (fileapi.h)", Microsoft Learn: with an OVERLAPPED
     * on a handle opened with FILE_FLAG_OVERLAPPED it returns at once;
     * ERROR_IO_PENDING when the read completes later. */
    if (ReadFile(pc->h, pc->rbuf, READ_BUF, NULL, &pc->rd.ov)) {
        *got = (DWORD)pc->rd.ov.InternalHigh;
        return IO_DONE;
    }
    DWORD err = GetLastError();
    if (err != ERROR_IO_PENDING) {
        /* the client closed first: its instance goes with ours (pipe_watch) */
        pc->peer_gone = err == ERROR_BROKEN_PIPE || err == ERROR_PIPE_NOT_CONNECTED;
        return IO_FAILED;
    }
    pc->rd.out = true;
    return IO_PENDING;
}

/* After anything happened on a connection: writes its output, refreshes its
 * deadline, closes it when it is finished. Last thing a caller does with
 * pc: it may be freed. Runs on the loop's thread or on a worker (post_job):
 * either lives until every pipe handle is closed (loop_win.c). */
void cp_pc_flush(pipe_conn *pc)
{
    pc->hold_until = 0;
    if (pc->conn == NULL)
        return;
    while (!pc->writing) {
        while (pc->wlen < WRITE_BUF) {
            long n = cp_conn_send(pc->conn, pc->wbuf + pc->wlen, WRITE_BUF - pc->wlen);
            if (n < 0) {
                cp_pc_close(pc);
                return;
            }
            if (n == 0)
                break;
            pc->wlen += (size_t)n;
        }
        if (pc->wlen > 0) {
            memset(&pc->wr.ov, 0, sizeof(pc->wr.ov));
            pc->writing = true;
            /* "WriteFile function (fileapi.h)", Microsoft Learn: as ReadFile
             * above; a pending write completes to the loop's port. */
            BOOL done = WriteFile(pc->h, pc->wbuf, (DWORD)pc->wlen, NULL, &pc->wr.ov);
            if (!done && GetLastError() != ERROR_IO_PENDING) {
                pc->writing = false;
                cp_pc_close(pc);
                return;
            }
            if (!done) { /* the loop takes its completion (cp_pc_on_write) */
                pc->wr.out = true;
                break;
            }
            pc->writing = false; /* written at once: go on here */
            DWORD n = (DWORD)pc->wr.ov.InternalHigh;
            if (n == 0 || n > pc->wlen) {
                cp_pc_close(pc);
                return;
            }
            pc->wlen -= n;
            if (pc->wlen > 0)
                memmove(pc->wbuf, pc->wbuf + n, pc->wlen);
            continue;
        }
        break;
    }
    pc->deadline = cp_conn_next_deadline(pc->conn);
    if (!pc->writing && (pc->closing || !cp_conn_wants_io(pc->conn)))
        cp_pc_close(pc);
}

/* Worker side, the call's handler has run: the worker itself hands the
 * answer to the connection and writes it, under its loop's lock (ctx is
 * the loop), rather than handing the job to the loop's thread, which
 * would have to wake for it (under Wine a packet posted and the loop's
 * wake-up). A write that cannot complete at once completes to the loop's
 * port (cp_pc_on_write). Calls that finish together leave in one write
 * per connection, handed over by one worker (cp_handover): each finished
 * job goes on the loop's lock-free list (lp->answered), and only the
 * worker that finds nobody handing over takes the lock and hands over the
 * whole list; the others go back to the pool at once. The answer's flush
 * also sends what a read held for it (cp_pc_on_read). While the transport
 * stops, the loop's thread is woken so that it sees the call gone (tick). */
static void post_job(void *ctx, cp_job *job)
{
    pipe_loop *lp = ctx;
    if (!cp_handover_put(&lp->answered, job))
        return; /* the worker handing over takes this one too */
    AcquireSRWLockExclusive(&lp->lock);
    do {
        for (cp_job *j = cp_handover_take(&lp->answered), *next; j != NULL; j = next) {
            next = cp_handover_next(j);
            cp_conn *c = cp_job_complete(j);
            if (c == NULL)
                continue;
            pipe_conn *pc = cp_conn_user(c);
            pc->active_at = cp_now_ms();
            if (!pc->dirty) {
                pc->dirty = true;
                pc->dirty_next = lp->dirty;
                lp->dirty = pc;
            }
        }
        while (lp->dirty != NULL) { /* one write per connection for all of them */
            pipe_conn *pc = lp->dirty;
            lp->dirty = pc->dirty_next;
            pc->dirty = false;
            if (pc->h == INVALID_HANDLE_VALUE)
                cp_pc_maybe_free(pc); /* closed meanwhile */
            else
                cp_pc_flush(pc); /* may close pc */
        }
    } while (cp_handover_end(&lp->answered));
    bool wake = lp->phase != RUNNING;
    ReleaseSRWLockExclusive(&lp->lock);
    if (wake)
        cp_loop_wake(lp);
}

static void before_call(void *ctx);
static void start_check(pipe_conn *pc, DWORD n);

void cp_pc_on_connect(pipe_conn *pc, bool ok, int64_t now)
{
    pipe_loop *lp = pc->lp;
    listener *l = pc->l;
    if (l->inst == pc)
        l->inst = NULL;
    if (lp->phase == RUNNING) /* the next instance first: never a moment with none */
        cp_pipe_place(lp, l, ok, now);
    if (!ok || lp->phase != RUNNING) {
        cp_pc_close(pc);
        return;
    }
    size_t max = lp->t->opts.max_conns;
    if ((size_t)InterlockedIncrement(&lp->t->nconns) > max && max > 0) { /* over all loops */
        InterlockedDecrement(&lp->t->nconns);
        cp_pc_close(pc); /* the client sees the pipe break and retries */
        return;
    }
    pc->connected = true; /* counted: cp_pc_close takes it off nconns */
    InterlockedIncrement(&lp->nconn);
    if (pc->connected_at == 0) /* the loop takes it when it takes the connect */
        pc->connected_at = cp_win_filetime_now();
    pc->active_at = now;
    pc->rbuf = malloc(READ_BUF + WRITE_BUF);
    if (pc->rbuf == NULL) {
        cp_pc_close(pc);
        return;
    }
    pc->wbuf = pc->rbuf + READ_BUF;
    DWORD got = 0;
    int r = start_read(pc, &got);
    if (r == IO_FAILED)
        cp_pc_close(pc);
    else if (r == IO_DONE) /* the client's first bytes were already there */
        cp_pc_on_read(pc, true, got, now);
}

/* ---- the caller check, on the worker pool ----------------------------- */

/* On the client's first bytes: who is it, and may it use this group?
 * Deciding here rather than at connect lets impersonation work (Windows
 * impersonates "the last message read from the pipe") while the client
 * still holds the connection open. The check (opts.authorize: process,
 * token, AccessCheck, the audit of a refusal) runs on a worker, not on
 * the loop's thread, so that a burst of callers being checked or refused
 * never holds up the reads and writes of the others. The handle stays
 * open while the check runs (cp_pc_close waits for it: checking). */
static cp_task_result check_run(cp_task *task)
{
    pipe_check *ck = (pipe_check *)task;
    pipe_conn *pc = ck->pc;
    cp_transport *t = pc->lp->t;
    ULONG pid = 0;
    if (!GetNamedPipeClientProcessId(pc->h, &pid))
        pid = 0;
    ck->pid = pid;
    ck->peer_id[0] = '\0';
    cp_pipe_client client = {pc->h, pc->connected_at, NULL};
    ck->deny = t->opts.authorize(t->opts.authorize_ctx, pc->l->svc, pid, &client, ck->peer_id,
                                 sizeof(ck->peer_id));
    if (client.process != NULL && ck->deny != NULL) {
        CloseHandle(client.process); /* refused anyway */
        client.process = NULL;
    }
    ck->process = client.process;
    /* The rest runs here, under the loop's lock, as a worker answering a
     * call does (post_job): the connection is made, its first bytes fed
     * and its next read started, with no hop back to the loop's thread.
     * A loop whose wait failed is seen here: the connection is closed. */
    pipe_loop *lp = pc->lp;
    AcquireSRWLockExclusive(&lp->lock);
    pc->check_done = true;
    if (InterlockedCompareExchange(&lp->failed, 0, 0)) {
        pc->checking = false;
        pc->check_done = false;
        if (ck->process != NULL)
            CloseHandle(ck->process);
        ck->process = NULL;
        cp_pc_close(pc);
    } else {
        cp_pc_on_check(pc, cp_now_ms());
        /* The loop sleeps on the timers it knew of: a held PING ACK's bound
         * or a grpc-timeout set here is one it did not. "PostQueuedCompletionStatus
         * function (ioapiset.h)", Microsoft Learn. */
        bool timer = lp->phase != RUNNING;
        for (pipe_conn *p = lp->all; p != NULL && !timer; p = p->next)
            timer = p == pc && pc->h != INVALID_HANDLE_VALUE &&
                    ((pc->hold_until != 0 && pc->conn != NULL && cp_conn_inflight(pc->conn) == 0) ||
                     pc->deadline != INT64_MAX);
        if (timer)
            cp_loop_wake(lp);
    }
    ReleaseSRWLockExclusive(&lp->lock);
    return CP_TASK_DONE;
}

static bool make_conn(pipe_conn *pc, const char *deny, uint32_t pid, const char *peer_id)
{
    pipe_loop *lp = pc->lp;
    cp_conn_opts o = lp->t->opts.conn;
    o.peer_pid = pid;
    o.deny_message = deny;
    snprintf(o.peer_id, sizeof(o.peer_id), "%s", peer_id);
    o.before_call = before_call;
    o.before_call_ctx = pc;
    pc->pid = pid;
    pc->conn = cp_conn_new(pc->l->svc, lp->t->opts.pool, &o, post_job, lp);
    if (pc->conn == NULL)
        return false;
    cp_conn_set_user(pc->conn, pc);
    return true;
}

/* The first n bytes are in rbuf: check the caller before they go on. */
static void start_check(pipe_conn *pc, DWORD n)
{
    cp_transport *t = pc->lp->t;
    if (t->opts.authorize == NULL || t->opts.pool == NULL) { /* allow all: no check */
        ULONG pid = 0;
        if (!GetNamedPipeClientProcessId(pc->h, &pid))
            pid = 0;
        if (!make_conn(pc, NULL, pid, "")) {
            cp_pc_close(pc);
            return;
        }
        cp_pc_on_read(pc, true, n, cp_now_ms());
        return;
    }
    if (pc->chk == NULL)
        pc->chk = calloc(1, sizeof(*pc->chk));
    if (pc->chk == NULL) {
        cp_pc_close(pc);
        return;
    }
    pipe_check *ck = pc->chk;
    memset(ck, 0, sizeof(*ck));
    ck->task.run = check_run;
    ck->task.group = "caller-check"; /* capped: calls of the groups keep their workers */
    ck->pc = pc;
    ck->n = n;
    pc->checking = true;
    cp_pool_submit(t->opts.pool, &ck->task);
}

void cp_pc_on_check(pipe_conn *pc, int64_t now)
{
    pipe_check *ck = pc->chk;
    pc->checking = false;
    pc->check_done = false;
    pc->opener = ck->process;
    ck->process = NULL;
    if (pc->h == INVALID_HANDLE_VALUE) { /* closed meanwhile (loop_free) */
        cp_pc_maybe_free(pc);
        return;
    }
    if (pc->closing || pc->lp->phase != RUNNING || !make_conn(pc, ck->deny, ck->pid, ck->peer_id)) {
        pc->closing = false;
        cp_pc_close(pc);
        return;
    }
    cp_pc_on_read(pc, true, ck->n, now);
}

/* A call refused by before_call: the revoke hook audits it. */
static void revoked_call(void *ctx, const char *path)
{
    pipe_conn *pc = ctx;
    pipe_loop *lp = pc->lp;
    if (lp->t->opts.revoke != NULL)
        lp->t->opts.revoke(lp->t->opts.authorize_ctx, pc->l->svc, pc->pid,
                           cp_conn_peer_id(pc->conn), path);
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
    cp_pc_opener_exited(pc);
}

void cp_pc_opener_exited(pipe_conn *pc)
{
    if (pc->opener == NULL || pc->conn == NULL)
        return;
    CloseHandle(pc->opener);
    pc->opener = NULL;
    static const char msg[] = "csi-proxy: the process that opened this connection has exited; "
                              "calls on a connection handed to another process are refused (see "
                              "the service's audit log)";
    cp_conn_deny(pc->conn, msg, revoked_call, pc);
}

/* The hand-off check (before_call) of several reads at once. Under load
 * one wait of the loop takes the reads of several connections; each read would
 * ask for its opener with its own zero-timeout wait (a system call, a
 * wineserver request under Wine). One WaitForMultipleObjects on all their
 * openers, made after every one of those reads completed, answers for the
 * bytes of each: with bWaitAll FALSE and a zero timeout it returns at
 * once, WAIT_TIMEOUT when none of the objects is signaled (a process
 * object is signaled once it has exited) and WAIT_OBJECT_0 + i for the
 * lowest index i that is ("WaitForMultipleObjects function (synchapi.h)",
 * Microsoft Learn). So only WAIT_TIMEOUT spares a read its own look
 * (opener_fresh, for its first round in cp_pc_on_read); an exited opener
 * among them, or a failed wait, leaves each read to ask for itself, so
 * the one that was handed on is refused exactly as before.
 * test/wine/precheck.c checks it against this object. */
void cp_pc_precheck(pipe_conn *const *done, size_t got)
{
    HANDLE hs[MAXIMUM_WAIT_OBJECTS];
    pipe_conn *pcs[MAXIMUM_WAIT_OBJECTS];
    DWORD n = 0;
    for (size_t i = 0; i < got && n < MAXIMUM_WAIT_OBJECTS; i++) {
        pipe_conn *pc = done[i];
        if (!pc->connected || pc->h == INVALID_HANDLE_VALUE || pc->opener == NULL ||
            pc->conn == NULL || (LONG)pc->rd.ov.Internal < 0)
            continue;
        hs[n] = pc->opener;
        pcs[n++] = pc;
    }
    if (n < 2)
        return; /* one read: its own look costs the same */
    if (WaitForMultipleObjects(n, hs, FALSE, 0) != WAIT_TIMEOUT)
        return; /* one has exited (or no answer): each read asks for itself */
    for (DWORD k = 0; k < n; k++)
        pcs[k]->opener_fresh = true;
}

/* n bytes arrived in rbuf; reads on while more are there at once (up to
 * SYNC_READS), then answers. */
void cp_pc_on_read(pipe_conn *pc, bool ok, DWORD n, int64_t now)
{
    bool hold = false; /* a call was handed to the pool, or a PING came alone */
    for (int round = 1;; round++) {
        pc->active_at = now;
        if (!ok) { /* ERROR_BROKEN_PIPE and friends: the client is gone */
            cp_pc_close(pc);
            return;
        }
        if (n > 0 && pc->conn == NULL) {
            if (pc->lp->phase != RUNNING)
                cp_pc_close(pc);
            else
                start_check(pc, n); /* comes back through cp_pc_on_check */
            return;
        }
        /* new bytes: before_call asks the system again, unless the
         * batch's look after this read completed answered already */
        pc->opener_checked = round == 1 && pc->opener_fresh;
        pc->opener_fresh = false;
        cp_recv_info got_info = {0, false};
        if (n > 0 && cp_conn_recv_info(pc->conn, pc->rbuf, n, &got_info) != CP_OK)
            pc->closing = true; /* protocol error: send the GOAWAY, then close */
        if (got_info.calls_started > 0)
            hold = true;
        else if (got_info.ping_only)
            hold = true; /* the next call is likely on its way: see below */
        else if (n > 0)
            hold = false; /* something else: no reason to wait */
        if (pc->closing)
            break;
        DWORD got = 0;
        int r = start_read(pc, &got);
        if (r == IO_FAILED) {
            cp_pc_close(pc);
            return;
        }
        if (r == IO_PENDING)
            break;
        if (round >= SYNC_READS) {
            /* Enough for one turn: the finished read goes to the loop's
             * port, as if it had completed later, and other connections
             * get their turn. */
            pc->rd.out = true;
            if (!cp_loop_post(pc->lp, pc, &pc->rd, got)) {
                pc->rd.out = false;
                cp_pc_close(pc);
                return;
            }
            break;
        }
        n = got;
    }
    /* A read that started a call usually leaves only control frames to
     * send (grpc-go sends its BDP PING and WINDOW_UPDATE with the request:
     * the PING ACK), and the call's answer follows: the output is held
     * while that call runs, so that both leave in one WriteFile; the
     * answer's flush (post_job) sends it all, PING ACK first as nghttp2
     * queues it ("PING responses SHOULD be given higher priority than any
     * other frame", RFC 9113 section 6.7: it still leads the write). A
     * read of a PING alone (ping_only), which grpc-go sends as soon as it
     * has read an answer (cp_recv_info.ping_only), is held the same way for
     * the call a client calling in a loop sends next. Held output leaves at the latest
     * HOLD_BOUND_MS later (tick): a bound many timer ticks long, never a
     * latency in the common case. Not on a connection that is closing. */
    if (hold && !pc->closing && !pc->writing && pc->conn != NULL) {
        if (pc->hold_until == 0)
            pc->hold_until = now + HOLD_BOUND_MS;
        pc->deadline = cp_conn_next_deadline(pc->conn);
        return;
    }
    cp_pc_flush(pc);
}

void cp_pc_on_write(pipe_conn *pc, bool ok, DWORD n)
{
    pc->writing = false;
    if (!ok || n > pc->wlen) {
        cp_pc_close(pc);
        return;
    }
    pc->wlen -= n;
    if (pc->wlen > 0)
        memmove(pc->wbuf, pc->wbuf + n, pc->wlen);
    cp_pc_flush(pc);
}
