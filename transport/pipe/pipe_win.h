/* pipe_win.h - the pieces of the named-pipe transport (transport.h on
 * Windows) shared by its files, in the order data flows:
 *   listen_win.c    - pipe_conn life cycle, pipe instances listening;
 *   conn_win.c      - one connection's reads, writes and caller checks;
 *   loop_win.c      - the loops' completion ports, timers, stop, failure,
 *                     transport.h.
 * Everything here about one connection runs under its loop's lock: on the
 * loop's thread, or on a worker answering its call (see loop_win.c for
 * the contract). Windows build only. */
#ifndef CP_PIPE_WIN_H
#define CP_PIPE_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdint.h>

#include "base/thread.h"
#include "rpc/handover.h"
#include "rpc/pool.h"
#include "transport/transport.h"

#define PIPE_PREFIX "\\\\.\\pipe\\"
#define PIPE_QUOTA (64 * 1024) /* in/out buffer sizes of each instance */
#define PIPE_TIMEOUT_MS 50     /* default WaitNamedPipe timeout, as go-winio */
#define READ_BUF (16 * 1024)
#define WRITE_BUF (32 * 1024)
#define RELISTEN_RETRY_MS 250 /* after a failed CreateNamedPipeW at run time */
#define CLOSE_GRACE_MS 2000   /* final flush before writes are cancelled */
#define FREE_WAIT_MS 5000     /* cp_transport_free: wait for cancelled I/O */
#define SYNC_READS 16         /* reads done at once before the other connections take a turn */
/* Longest a PING ACK waits for the answer it is held for (conn_win.c:
 * cp_pc_on_read); many timer ticks, so never a sub-tick timer. */
#define HOLD_BOUND_MS 100
#define BATCH 64      /* completions one GetQueuedCompletionStatusEx takes */
#define WATCH_MS 1000 /* how often a pipe's instance count is read (watch_win.c) */
#define WATCH_CONFIRM_MS                                                                           \
    2000 /* how long instances not made here must stay before they are reported */
#define WATCH_LINGER_MS                                                                            \
    10000 /* how long an instance closed before its client counts as maybe open */

enum { RUNNING, DRAINING, CLOSING };

typedef struct pipe_conn pipe_conn;
typedef struct listener listener;
typedef struct pipe_loop pipe_loop;

/* One pipe's server instances, as this process knows them, against the
 * count the system gives (watch_win.c): shared by the pipe's
 * listeners on every loop. */
typedef struct pipe_watch {
    /* Instances this process has: one more before each CreateNamedPipeW,
     * one less after it fails or after each CloseHandle, so never fewer
     * than the system counts for this process. */
    volatile LONG open;
    /* Connected instances closed while their client may still have its
     * end open: the system counts such an instance until the client
     * closes too. Counted in the current and the previous
     * WATCH_LINGER_MS. */
    volatile LONG lingering;
    SRWLOCK lock; /* the rest: taken by the check only */
    LONG lingering_before;
    int64_t rotate_at;  /* when lingering moves to lingering_before */
    int64_t suspect_at; /* first check that saw instances not made here (0: none) */
    bool reported;      /* those were reported (once while they stay) */
} pipe_watch;

typedef struct pipe_op {
    OVERLAPPED ov; /* hEvent NULL: the completion goes to the loop's port only */
    bool out;      /* the system has it: started and its completion not yet taken */
} pipe_op;

/* The caller check of a connection's first bytes, on the worker pool
 * (conn_win.c): the worker then goes on with the connection under the
 * loop's lock (ov: a packet only when that cannot be). */
typedef struct pipe_check {
    cp_task task; /* first: the pool hands this pointer back */
    OVERLAPPED ov;
    pipe_conn *pc;
    DWORD n;          /* bytes of the first read, kept in pc->rbuf */
    uint32_t pid;     /* out */
    const char *deny; /* out: NULL allowed */
    HANDLE process;   /* out: the opener, when allowed */
    char peer_id[CP_PEER_ID_MAX];
} pipe_check;

struct pipe_conn {
    pipe_loop *lp;
    listener *l;
    HANDLE h;        /* INVALID_HANDLE_VALUE once closed */
    cp_conn *conn;   /* NULL while listening and once closed */
    pipe_op rd;      /* ConnectNamedPipe while listening, then ReadFile */
    pipe_op wr;      /* WriteFile */
    pipe_check *chk; /* the caller check while it is out (checking) */
    bool checking;   /* chk is on the pool or its packet not yet taken */
    bool check_done; /* the check is done with the handle: its packet is queued */
    bool writing;    /* a WriteFile started and not finished (wr.out once pending) */
    bool dirty;      /* on lp->dirty: answers a later worker writes (post_job) */
    pipe_conn *dirty_next;
    bool closing;         /* close as soon as the output is written */
    bool peer_gone;       /* a read failed: the client closed its end (pipe_watch) */
    bool connected;       /* the connect completed (counted in t->nconns) */
    int64_t deadline;     /* cached cp_conn_next_deadline() */
    int64_t hold_until;   /* output held for an answer at most until then (0: not held) */
    int64_t active_at;    /* last read or finished call, for opts.idle_ms */
    int64_t connected_at; /* FILETIME when the loop saw the connect done, for opts.authorize */
    HANDLE opener;        /* the allowed client process (authorize hook), or NULL */
    uint32_t pid;         /* its id, for the revoke hook */
    bool opener_checked;  /* before_call asked the system for the bytes of this read */
    bool opener_fresh;    /* asked after this read completed (cp_pc_precheck) */
    uint8_t *rbuf;        /* READ_BUF, then WRITE_BUF for wbuf */
    uint8_t *wbuf;
    size_t wlen;
    pipe_conn *prev, *next; /* lp->all */
};

/* One pipe as one loop listens on it: svc, name, wpath and sa are the
 * first loop's (it frees them), the rest is the loop's own; only the loop
 * that owns the pipe's listening instance (owned) makes it again. */
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
    bool owned;              /* this loop keeps the pipe's listening instance (cp_pipe_place) */
    pipe_watch *w;           /* the pipe's (the transport's watch[i]) */
    int64_t check_at;        /* next look at the instance count, while owned */
};

/* One loop: the thread that takes the completions of its pipe
 * instances from its own I/O completion port and the connections they
 * became. Loops share nothing but the transport's options and counters:
 * each has its own port, lock, lists and timers, and the listening
 * instances placed on it (cp_pipe_place: one per pipe over all loops). */
struct pipe_loop {
    cp_transport *t;
    size_t index;
    HANDLE port;  /* its completion port; every handle of the loop is bound to it */
    listener *ls; /* one per pipe; the strings are the transport's */
    size_t nls;
    /* Held by the loop's thread except while it waits, and by
     * a worker answering a call of one of its connections (post_job):
     * every pipe_conn and cp_conn of the loop is used under it. */
    SRWLOCK lock;
    cp_handover answered; /* finished calls not yet handed to their connections (post_job) */
    pipe_conn *dirty;     /* connections with answers not yet written (post_job) */
    pipe_conn *all;       /* every pipe_conn of the loop not yet freed */
    int phase;
    int64_t drain_until, close_until;
    volatile LONG failed; /* its wait failed: it serves nobody any more */
    cp_thread *thread;    /* loops after the first: their thread */
    volatile LONG nconn;  /* its connected pipe_conns not yet closed (cp_pipe_place) */
};

/* Loops: the first runs on the caller of cp_transport_run, the others on
 * threads it starts. A loop takes any number of connections. */
#define LOOPS 2
/* Connections the first loop takes before the pipes' next instances go
 * to the least loaded loop (cp_pipe_place). */
#define SPREAD 3

/* Completion keys of the packets a loop's port gets besides its pipes'
 * (whose key is their pipe_conn): a wake-up (stop, a listen request), and
 * the end of a caller check (the pipe_conn's key, chk's OVERLAPPED). */
#define KEY_WAKE 0

struct cp_transport {
    cp_transport_opts opts;
    pipe_loop loops[LOOPS];
    volatile LONG nconns; /* connected pipe_conns not yet closed, all loops */
    volatile LONG stop_requested;
    volatile LONG64 stop_drain_ms;
    HANDLE stopped;    /* manual-reset, set by cp_transport_stop: failed loops wait for it */
    pipe_watch *watch; /* one per pipe */
};

/* listen_win.c */
pipe_conn *cp_pc_new(pipe_loop *lp, listener *l, HANDLE h);
/* Frees pc once it is closed, owns no operation and is off the dirty list. */
void cp_pc_maybe_free(pipe_conn *pc);
/* Releases the connection and the handle; the memory goes once the
 * system has finished every operation it had. pc may be freed on return. */
void cp_pc_close(pipe_conn *pc);
/* Creates the listener's next instance and starts an overlapped connect. */
int cp_pipe_listen_next(pipe_loop *lp, listener *l, cp_error *e);
/* The same at run time: on failure retries later and reports it. */
void cp_pipe_relisten(pipe_loop *lp, listener *l, int64_t now);
/* After a connect on lp's instance of l (connected: a client came; else
 * the connect failed): makes the pipe's next listening instance on the
 * loop that is to take the next client, lp or another (listen_win.c). */
void cp_pipe_place(pipe_loop *lp, listener *l, bool connected, int64_t now);
/* lp's wait failed: the listening instances it owned are made again on
 * the least loaded loop still serving. False: none is left. Called on
 * lp's thread without lp's lock. */
bool cp_pipe_hand_over(pipe_loop *lp);

/* watch_win.c: reads the pipe's instance count through l's
 * listening instance and reports instances this process did not make
 * (opts.foreign_instance). On the loop that owns l's listening instance,
 * every WATCH_MS (tick). */
void cp_pipe_watch(pipe_loop *lp, listener *l, int64_t now);
/* An instance of w's pipe is about to be created (made: true), or one was
 * not made or was closed (made: false; lingering: it was connected and its
 * client may still have its end open). */
void cp_pipe_watch_count(pipe_watch *w, bool made, bool lingering);

/* loop_win.c: wakes the loop (its port gets a KEY_WAKE packet). */
void cp_loop_wake(pipe_loop *lp);
/* Binds h to lp's port with pc as its key, and asks the system not to
 * queue a packet for an operation that completes at once. False: h
 * cannot be used. */
bool cp_loop_bind(pipe_loop *lp, HANDLE h, pipe_conn *pc);
/* Queues op's completion (n bytes, success) on the loop's port, for an
 * operation done at once that the loop is to take at its next look. */
bool cp_loop_post(pipe_loop *lp, pipe_conn *pc, pipe_op *op, DWORD n);

/* conn_win.c: what happens when an operation of pc is done. Each may
 * close (and free) pc. */
void cp_pc_on_connect(pipe_conn *pc, bool ok, int64_t now);
void cp_pc_on_read(pipe_conn *pc, bool ok, DWORD n, int64_t now);
void cp_pc_on_write(pipe_conn *pc, bool ok, DWORD n);
/* The caller check of pc's first bytes has answered (its packet). */
void cp_pc_on_check(pipe_conn *pc, int64_t now);
/* Before the completions one wait took are handled (the reads in
 * done[0..n-1]): asks once for the openers of all of them (conn_win.c). */
void cp_pc_precheck(pipe_conn *const *done, size_t n);
/* pc's opener has exited: every call from here on is refused (what
 * before_call decides when it finds it so). */
void cp_pc_opener_exited(pipe_conn *pc);
/* Writes the connection's output, refreshes its deadline, closes it when
 * it is finished. Last thing a caller does with pc: it may be freed. */
void cp_pc_flush(pipe_conn *pc);

#endif
