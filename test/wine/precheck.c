/* precheck.c - the batched hand-off check of the pipe transport
 * (cp_pc_precheck, server/pipe_conn_win.c) under Wine, against
 * libcore.a's own object; test/wine/service_security.sh runs it.
 *
 * One port wait may return the reads of several connections; one
 * WaitForMultipleObjects on their openers stands for each read's own
 * zero-timeout wait. A read may skip its own look only if that one wait
 * said that no opener among them has exited. Real process handles: this
 * process (alive) and a child of it that has exited.
 *
 *   precheck.exe        the checks; "ok -" / "not ok -" lines and
 *                       "N passed, N failed"; exit 0 only when all passed
 *   precheck.exe -exit  exits at once (the child) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/pipe_win.h"

static int passed, failed;

static void check(int cond, const char *what)
{
    printf("%s - %s\n", cond ? "ok" : "not ok", what);
    if (cond)
        passed++;
    else
        failed++;
}

/* A connected pipe_conn with an allowed opener; conn and h are never used
 * by cp_pc_precheck beyond being set. */
static pipe_conn *conn_with(HANDLE opener)
{
    static int dummy;
    pipe_conn *pc = calloc(1, sizeof(*pc));
    if (pc == NULL)
        exit(2);
    pc->h = (HANDLE)(UINT_PTR)4;
    pc->conn = (cp_conn *)&dummy;
    pc->connected = true;
    pc->opener = opener;
    pc->rd.pc = pc;
    pc->wr.pc = pc;
    return pc;
}

static OVERLAPPED_ENTRY read_of(pipe_conn *pc)
{
    OVERLAPPED_ENTRY e = {KEY_IO, &pc->rd.ov, 0, 52};
    return e;
}

static HANDLE exited_child(void)
{
    wchar_t exe[MAX_PATH], cmd[MAX_PATH + 16];
    GetModuleFileNameW(NULL, exe, MAX_PATH);
    swprintf(cmd, MAX_PATH + 16, L"\"%ls\" -exit", exe);
    STARTUPINFOW si = {sizeof(si)};
    PROCESS_INFORMATION pi;
    if (!CreateProcessW(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
        return NULL;
    CloseHandle(pi.hThread);
    if (WaitForSingleObject(pi.hProcess, 10000) != WAIT_OBJECT_0)
        return NULL;
    return pi.hProcess;
}

static void reset(pipe_conn **pcs, int n)
{
    for (int i = 0; i < n; i++)
        pcs[i]->opener_fresh = false;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "-exit") == 0)
        return 0;
    HANDLE self = GetCurrentProcess();
    HANDLE gone = exited_child();
    check(gone != NULL, "a child process started and exited");
    if (gone == NULL)
        return 1;
    pipe_conn *a = conn_with(self), *b = conn_with(self), *c = conn_with(self);
    pipe_conn *x = conn_with(gone);
    pipe_conn *all[] = {a, b, c, x};

    OVERLAPPED_ENTRY ev[4] = {read_of(a), read_of(b), read_of(c)};
    cp_pc_precheck(ev, 3);
    check(a->opener_fresh && b->opener_fresh && c->opener_fresh,
          "three reads whose openers live: one look answers for all three");
    reset(all, 4);

    ev[0] = read_of(a), ev[1] = read_of(x), ev[2] = read_of(b);
    cp_pc_precheck(ev, 3);
    check(!a->opener_fresh && !x->opener_fresh && !b->opener_fresh,
          "an exited opener among them: no read is spared its own look");
    reset(all, 4);

    ev[0] = read_of(a), ev[1] = read_of(b), ev[2] = read_of(c), ev[3] = read_of(x);
    cp_pc_precheck(ev, 4);
    check(!a->opener_fresh && !b->opener_fresh && !c->opener_fresh && !x->opener_fresh,
          "... the exited one last in the batch as well");
    reset(all, 4);

    ev[0] = read_of(a);
    cp_pc_precheck(ev, 1);
    check(!a->opener_fresh, "a read alone keeps its own look (it costs the same)");
    reset(all, 4);

    /* Only reads count: the exited opener's write completion, a failed
     * read, a closed connection and a wake-up packet are not asked about. */
    OVERLAPPED_ENTRY w = {KEY_IO, &x->wr.ov, 0, 37};
    OVERLAPPED_ENTRY wake = {KEY_WAKE, NULL, 0, 0};
    ev[0] = read_of(a), ev[1] = w, ev[2] = wake, ev[3] = read_of(b);
    cp_pc_precheck(ev, 4);
    check(a->opener_fresh && b->opener_fresh && !x->opener_fresh,
          "a write completion and a wake-up are not reads: the two reads share one look");
    reset(all, 4);

    c->rd.ov.Internal = (ULONG_PTR)0xC000014BL; /* STATUS_PIPE_BROKEN */
    ev[0] = read_of(a), ev[1] = read_of(c), ev[2] = read_of(b);
    cp_pc_precheck(ev, 3);
    check(a->opener_fresh && b->opener_fresh && !c->opener_fresh,
          "a failed read is not asked about");
    reset(all, 4);

    x->h = INVALID_HANDLE_VALUE; /* closed: its cancelled read returns */
    ev[0] = read_of(a), ev[1] = read_of(x), ev[2] = read_of(b);
    cp_pc_precheck(ev, 3);
    check(a->opener_fresh && b->opener_fresh && !x->opener_fresh,
          "a closed connection's read is not asked about");

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
