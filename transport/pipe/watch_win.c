/* watch_win.c - server instances of a served pipe that this process
 * did not make (pipe_win.h: pipe_watch).
 *
 * Why: a client needs FILE_WRITE_DATA and FILE_APPEND_DATA on a pipe, and
 * on a pipe FILE_APPEND_DATA is FILE_CREATE_PIPE_INSTANCE ("Named Pipe
 * Security and Access Rights", Microsoft Learn: "FILE_APPEND_DATA and
 * FILE_CREATE_PIPE_INSTANCE have the same definition, so
 * FILE_GENERIC_WRITE permits the creation of the pipe"). So every caller
 * a pipe's DACL admits can also create a server instance of that pipe in
 * its own process, and a client that connects to that instance hands its
 * calls (and their secrets) to it. A DACL cannot split the two; what the
 * service can do is see it and say so.
 *
 * How: GetNamedPipeHandleStateW gives, for a handle of any instance, "the
 * number of current pipe instances" ("GetNamedPipeHandleStateW function
 * (namedpipeapi.h)", Microsoft Learn), over every process. This process
 * knows how many it has (pipe_watch.open). More in the system's count
 * than that, minus instances closed here while their client may still
 * have its end open (the system keeps such an instance until the client
 * closes too: pipe_watch.lingering, WATCH_LINGER_MS), is an instance
 * another process made. Reported once it stays WATCH_CONFIRM_MS, and
 * again only after it was gone.
 *
 * When: from the owning loop's tick every WATCH_MS, through the pipe's
 * listening instance, not when an instance is made or a client connects:
 * another process can create its instance at any time, and which
 * listening instance a client gets is not documented, so a look at
 * connect would see nothing more than a timer does (and a client that
 * always landed on the other instance would never make this process look).
 * One call per pipe per WATCH_MS, none on the reads, writes or connects;
 * the counting is an interlocked add where an instance is created or
 * closed. Windows build only. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdint.h>

#include "transport/pipe/pipe_win.h"

void cp_pipe_watch_count(pipe_watch *w, bool made, bool lingering)
{
    if (w == NULL)
        return;
    if (made) {
        InterlockedIncrement(&w->open);
        return;
    }
    InterlockedDecrement(&w->open);
    if (lingering)
        InterlockedIncrement(&w->lingering);
}

void cp_pipe_watch(pipe_loop *lp, listener *l, int64_t now)
{
    pipe_watch *w = l->w;
    l->check_at = now + WATCH_MS;
    if (w == NULL || l->inst == NULL || l->inst->h == INVALID_HANDLE_VALUE)
        return;
    AcquireSRWLockExclusive(&w->lock);
    /* ours first: an instance made meanwhile is in it before the system
     * counts it; one closed meanwhile leaves ours after the system's count
     * dropped. Either way the excess is never too high. */
    LONG ours = InterlockedCompareExchange(&w->open, 0, 0);
    DWORD reported = 0;
    BOOL ok = GetNamedPipeHandleStateW(l->inst->h, NULL, &reported, NULL, NULL, NULL, 0);
    if (now >= w->rotate_at) {
        w->lingering_before = InterlockedExchange(&w->lingering, 0);
        w->rotate_at = now + WATCH_LINGER_MS;
    }
    LONG maybe = InterlockedCompareExchange(&w->lingering, 0, 0) + w->lingering_before;
    bool report = false;
    if (!ok || (LONG)reported <= ours + maybe) {
        w->suspect_at = 0;
        w->reported = false;
    } else if (w->suspect_at == 0) {
        w->suspect_at = now;
    } else if (!w->reported && now - w->suspect_at >= WATCH_CONFIRM_MS) {
        w->reported = true;
        report = true;
    }
    ReleaseSRWLockExclusive(&w->lock);
    cp_transport *t = lp->t;
    if (report && t->opts.foreign_instance != NULL)
        t->opts.foreign_instance(t->opts.foreign_instance_ctx, l->name, (unsigned long)reported,
                                 (unsigned long)(ours > 0 ? ours : 0));
}
