/* listen_win.c - pipe_conn life cycle and the listening instances of
 * the named-pipe transport (pipe_win.h). */
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

/* ---- pipe_conn life cycle ------------------------------------------- */

pipe_conn *cp_pc_new(pipe_loop *lp, listener *l, HANDLE h)
{
    pipe_conn *pc = calloc(1, sizeof(*pc));
    if (pc == NULL)
        return NULL;
    pc->lp = lp;
    pc->l = l;
    pc->h = h;
    pc->deadline = INT64_MAX;
    pc->next = lp->all;
    if (lp->all != NULL)
        lp->all->prev = pc;
    lp->all = pc;
    return pc;
}

void cp_pc_maybe_free(pipe_conn *pc)
{
    if (pc->h != INVALID_HANDLE_VALUE || pc->rd.out || pc->wr.out || pc->dirty || pc->checking)
        return;
    pipe_loop *lp = pc->lp;
    if (pc->prev != NULL)
        pc->prev->next = pc->next;
    else
        lp->all = pc->next;
    if (pc->next != NULL)
        pc->next->prev = pc->prev;
    if (pc->opener != NULL)
        CloseHandle(pc->opener);
    free(pc->chk);
    free(pc->rbuf);
    free(pc);
}

/* Releases the connection and the handle; the memory goes once the
 * system has finished every operation it had. pc may be freed on return. */
void cp_pc_close(pipe_conn *pc)
{
    if (pc->checking && !pc->check_done) { /* the check uses the handle: closed when it answers */
        pc->closing = true;
        return;
    }
    if (pc->conn != NULL) {
        cp_conn_close(pc->conn);
        pc->conn = NULL;
    }
    if (pc->connected && pc->h != INVALID_HANDLE_VALUE) {
        InterlockedDecrement(&pc->lp->t->nconns);
        InterlockedDecrement(&pc->lp->nconn);
    }
    if (pc->l != NULL && pc->l->inst == pc)
        pc->l->inst = NULL;
    if (pc->h != INVALID_HANDLE_VALUE) {
        if (pc->rd.out || pc->wr.out)
            CancelIoEx(pc->h, NULL);
        CloseHandle(pc->h);
        pc->h = INVALID_HANDLE_VALUE;
        cp_pipe_watch_count(pc->l != NULL ? pc->l->w : NULL, false,
                            pc->connected && !pc->peer_gone);
    }
    cp_pc_maybe_free(pc);
}

/* ---- listening ------------------------------------------------------ */

/* Creates the listener's next instance and starts an overlapped connect. */
int cp_pipe_listen_next(pipe_loop *lp, listener *l, cp_error *e)
{
    char why[256];
    DWORD open_mode = PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED;
    if (!l->created)
        open_mode |= FILE_FLAG_FIRST_PIPE_INSTANCE;
    cp_pipe_watch_count(l->w, true, false);
    HANDLE h = CreateNamedPipeW(
        l->wpath, open_mode,
        PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
        PIPE_UNLIMITED_INSTANCES, PIPE_QUOTA, PIPE_QUOTA, PIPE_TIMEOUT_MS, l->sa);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        cp_pipe_watch_count(l->w, false, false);
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
        cp_pipe_watch_count(l->w, false, false);
        return cp_error_set(e, CP_E_ALREADY_EXISTS,
                            "pipe %s already exists: is another csi-proxy running?", l->name);
    }
    l->created = true;
    pipe_conn *pc = cp_pc_new(lp, l, h);
    if (pc == NULL) {
        CloseHandle(h);
        cp_pipe_watch_count(l->w, false, false);
        return cp_error_set(e, CP_E_NOMEM, "pipe %s: out of memory", l->name);
    }
    if (!cp_loop_bind(lp, h, pc)) {
        DWORD err = GetLastError();
        cp_pc_close(pc);
        return cp_error_set(e, CP_E_IO, "CreateIoCompletionPort %s: %s (error %lu)", l->name,
                            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    l->inst = pc;
    pc->rd.out = true;
    if (!ConnectNamedPipe(h, &pc->rd.ov)) {
        DWORD err = GetLastError();
        if (err == ERROR_PIPE_CONNECTED || err == ERROR_NO_DATA) {
            /* A client came between create and connect (ERROR_NO_DATA: and
             * already closed its end): "there is a good connection between
             * client and server, even though the function returns zero"
             * ("ConnectNamedPipe function (namedpipeapi.h)", Microsoft
             * Learn); nothing completes later, so the loop's port gets
             * the completion from here (cp_loop_post). The connection then
             * gets the next instance listening and, for a client already
             * gone, ends on its first read. Failing here instead would
             * stop the service at start, or leave the pipe without a
             * listener. */
            if (!cp_loop_post(lp, pc, &pc->rd, 0)) {
                err = GetLastError();
                pc->rd.out = false;
                cp_pc_close(pc);
                return cp_error_set(e, CP_E_IO, "PostQueuedCompletionStatus %s: %s (error %lu)",
                                    l->name, cp_win_errtext(err, why, sizeof(why)),
                                    (unsigned long)err);
            }
            return CP_OK;
        }
        if (err != ERROR_IO_PENDING) {
            pc->rd.out = false;
            cp_pc_close(pc);
            return cp_error_set(e, CP_E_IO, "ConnectNamedPipe %s: %s (error %lu)", l->name,
                                cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
        }
    } else if (!cp_loop_post(lp, pc, &pc->rd, 0)) { /* connected at once: as above */
        DWORD err = GetLastError();
        pc->rd.out = false;
        cp_pc_close(pc);
        return cp_error_set(e, CP_E_IO, "PostQueuedCompletionStatus %s: %s (error %lu)", l->name,
                            cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
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
 * it is named as such (the configuration refuses such a
 * DACL, this is the last line). */
void cp_pipe_relisten(pipe_loop *lp, listener *l, int64_t now)
{
    cp_error e;
    e.msg[0] = '\0';
    if (cp_pipe_listen_next(lp, l, &e) == CP_OK) {
        if (l->failures > 0 && lp->t->opts.listen_error != NULL) {
            char msg[CP_ERROR_MSG_MAX];
            snprintf(msg, sizeof(msg), "pipe %s: listening again after %u failed attempts", l->name,
                     l->failures);
            lp->t->opts.listen_error(lp->t->opts.listen_error_ctx, msg);
        }
        l->failures = 0;
        return;
    }
    l->retry_at = now + RELISTEN_RETRY_MS;
    if (l->failures++ % RELISTEN_REPORT_EVERY != 0 || lp->t->opts.listen_error == NULL)
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
    lp->t->opts.listen_error(lp->t->opts.listen_error_ctx, msg);
}

/* ---- which loop takes the next client --------------------------------- */

/* Each pipe has one listening instance at a time, on one loop, and the
 * loop whose instance a client gets serves it to the end. The first loop
 * keeps the instances while it serves fewer than SPREAD connections: one
 * client at a time (a driver that connects for each lookup, EBS) stays on
 * one loop, so its connect, call and close wake one thread. Past that the
 * instance goes to the loop serving the fewest (the first on a tie), so
 * that 8 clients are served 4 and 4. Placing by count, rather than by
 * which of several listening instances the system hands a client, does
 * not depend on a choice Windows does not document. A loop whose wait
 * failed takes no instance. */
static pipe_loop *place(pipe_loop *lp, bool connected)
{
    cp_transport *t = lp->t;
    pipe_loop *best = NULL;
    LONG least = 0;
    for (size_t k = 0; k < LOOPS; k++) {
        pipe_loop *o = &t->loops[k];
        if (InterlockedCompareExchange(&o->failed, 0, 0))
            continue;
        LONG n = InterlockedCompareExchange(&o->nconn, 0, 0) + (o == lp && connected ? 1 : 0);
        if (k == 0 && n < SPREAD)
            return o;
        if (best == NULL || n < least)
            least = n, best = o;
    }
    return best != NULL ? best : lp;
}

/* Makes the instance on another loop, under that loop's lock: waited for
 * when its index is higher, only tried when lower (so that two loops
 * placing on each other cannot wait for each other; TryAcquireSRWLockExclusive
 * "If the lock is successfully acquired, the return value is nonzero",
 * without waiting: "TryAcquireSRWLockExclusive function (synchapi.h)",
 * Microsoft Learn). The instance is bound to that loop's port, so its
 * connect completes there. force: wait for the lock whatever the order
 * (the caller holds no loop's lock). False: lp makes it. */
static bool place_on(pipe_loop *lp, pipe_loop *to, size_t i, bool force)
{
    if (to > lp || force)
        AcquireSRWLockExclusive(&to->lock);
    else if (!TryAcquireSRWLockExclusive(&to->lock))
        return false;
    listener *tl = &to->ls[i];
    bool ok = false;
    if (to->phase == RUNNING && !InterlockedCompareExchange(&to->failed, 0, 0)) {
        cp_error e;
        ok = tl->inst != NULL || cp_pipe_listen_next(to, tl, &e) == CP_OK;
        tl->owned = true; /* on failure: retried and reported there */
        if (ok)
            tl->failures = 0;
        else
            tl->retry_at = 0;
        ok = true;
    }
    ReleaseSRWLockExclusive(&to->lock);
    if (force) /* its wait may need a new timer (a retry) */
        cp_loop_wake(to);
    return ok;
}

void cp_pipe_place(pipe_loop *lp, listener *l, bool connected, int64_t now)
{
    pipe_loop *to = place(lp, connected);
    if (to != lp && place_on(lp, to, (size_t)(l - lp->ls), false)) {
        l->owned = false;
        return;
    }
    l->owned = true; /* here: as before, retried and reported on failure */
    cp_pipe_relisten(lp, l, now);
}

bool cp_pipe_hand_over(pipe_loop *lp)
{
    bool any = true;
    for (size_t i = 0; i < lp->nls; i++) {
        listener *l = &lp->ls[i];
        if (!l->owned)
            continue;
        l->owned = false;
        pipe_loop *to = place(lp, false);
        if (to == lp || !place_on(lp, to, i, true))
            any = false;
    }
    return any;
}
