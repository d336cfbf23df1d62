/* precheck.c - the batched hand-off check of the pipe transport
 * (cp_pc_precheck, transport/pipe/conn_win.c) under Wine, against
 * libcore.a's own object; test/wine/service_security.sh runs it.
 *
 * One look of a loop may find the reads of several connections done; one
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

#include "transport/pipe/pipe_win.h"

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
    return pc;
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

    pipe_conn *ev[4] = {a, b, c};
    cp_pc_precheck(ev, 3);
    check(a->opener_fresh && b->opener_fresh && c->opener_fresh,
          "three reads whose openers live: one look answers for all three");
    reset(all, 4);

    ev[0] = a, ev[1] = x, ev[2] = b;
    cp_pc_precheck(ev, 3);
    check(!a->opener_fresh && !x->opener_fresh && !b->opener_fresh,
          "an exited opener among them: no read is spared its own look");
    reset(all, 4);

    ev[0] = a, ev[1] = b, ev[2] = c, ev[3] = x;
    cp_pc_precheck(ev, 4);
    check(!a->opener_fresh && !b->opener_fresh && !c->opener_fresh && !x->opener_fresh,
          "... the exited one last in the batch as well");
    reset(all, 4);

    ev[0] = a;
    cp_pc_precheck(ev, 1);
    check(!a->opener_fresh, "a read alone keeps its own look (it costs the same)");
    reset(all, 4);

    /* Only reads of connections count: the exited opener's connect (its
     * instance not yet connected), a failed read and a closed connection
     * are not asked about. */
    x->connected = false;
    ev[0] = a, ev[1] = x, ev[2] = b;
    cp_pc_precheck(ev, 3);
    check(a->opener_fresh && b->opener_fresh && !x->opener_fresh,
          "a connect is not a read: the two reads share one look");
    x->connected = true;
    reset(all, 4);

    c->rd.ov.Internal = (ULONG_PTR)0xC000014BL; /* STATUS_PIPE_BROKEN */
    ev[0] = a, ev[1] = c, ev[2] = b;
    cp_pc_precheck(ev, 3);
    check(a->opener_fresh && b->opener_fresh && !c->opener_fresh,
          "a failed read is not asked about");
    reset(all, 4);

    x->h = INVALID_HANDLE_VALUE; /* closed: its cancelled read returns */
    ev[0] = a, ev[1] = x, ev[2] = b;
    cp_pc_precheck(ev, 3);
    check(a->opener_fresh && b->opener_fresh && !x->opener_fresh,
          "a closed connection's read is not asked about");

    x->h = (HANDLE)(UINT_PTR)4;
    reset(all, 4);

    /* A read already answered (opener_fresh set) stays answered whatever
     * the batch's look finds. */
    a->opener_fresh = true;
    ev[0] = a, ev[1] = x;
    cp_pc_precheck(ev, 2);
    check(a->opener_fresh && !x->opener_fresh,
          "a read the wait answered stays answered; the exited opener's read asks for itself");
    reset(all, 4);

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
