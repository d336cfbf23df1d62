/* pipe_win.h - the pieces of the named-pipe transport (transport.h on
 * Windows) shared by its three files, in the order data flows:
 *   pipe_listen_win.c    - pipe_conn life cycle, pipe instances listening;
 *   pipe_conn_win.c      - one connection's reads, writes and caller checks;
 *   transport_pipe_win.c - the completion loop, timers, stop, transport.h.
 * Everything here about one connection runs under its loop's lock: on the
 * loop's thread, or on a worker answering its call (see
 * transport_pipe_win.c for the design). Windows build only. */
#ifndef CP_PIPE_WIN_H
#define CP_PIPE_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdint.h>

#include "thread.h"
#include "transport.h"

#define PIPE_PREFIX "\\\\.\\pipe\\"
#define PIPE_QUOTA (64 * 1024) /* in/out buffer sizes of each instance */
#define PIPE_TIMEOUT_MS 50     /* default WaitNamedPipe timeout, as go-winio */
#define READ_BUF (16 * 1024)
#define WRITE_BUF (32 * 1024)
#define RELISTEN_RETRY_MS 250 /* after a failed CreateNamedPipeW at run time */
#define CLOSE_GRACE_MS 2000   /* final flush before writes are cancelled */
#define FREE_WAIT_MS 5000     /* cp_transport_free: wait for cancelled I/O */
#define BATCH 64
#define SYNC_READS 16 /* reads done at once before the port takes a turn */
#define HOLD_MS 10    /* output held back for the answer of a call just started */

enum { KEY_IO = 1, KEY_WAKE, KEY_STOP };
enum { RUNNING, DRAINING, CLOSING };

typedef struct pipe_conn pipe_conn;
typedef struct listener listener;
typedef struct pipe_loop pipe_loop;

typedef struct pipe_op {
    OVERLAPPED ov;
    pipe_conn *pc;
} pipe_op;

struct pipe_conn {
    pipe_loop *lp;
    listener *l;
    HANDLE h;      /* INVALID_HANDLE_VALUE once closed */
    cp_conn *conn; /* NULL while listening and once closed */
    pipe_op rd;    /* ConnectNamedPipe while listening, then ReadFile */
    pipe_op wr;    /* WriteFile */
    unsigned ops;  /* overlapped operations owned by the kernel */
    bool reading, writing;
    bool skip;  /* FILE_SKIP_COMPLETION_PORT_ON_SUCCESS is set */
    bool dirty; /* on lp->dirty: answers a later worker writes (post_job) */
    pipe_conn *dirty_next;
    bool calls_out;       /* has calls on the pool (counted in lp->busy) */
    bool closing;         /* close as soon as the output is written */
    bool connected;       /* the connect completed (counted in t->nconns) */
    int64_t deadline;     /* cached cp_conn_next_deadline() */
    int64_t hold_until;   /* output held until then (0: not held), see on_read */
    int64_t active_at;    /* last read or finished call, for opts.idle_ms */
    int64_t connected_at; /* FILETIME of the connect, for opts.authorize */
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
};

/* One completion loop: a port, the thread that waits on it, the pipe
 * instances associated with it and the connections they became. Loops
 * share nothing but the transport's options and counters: each has its
 * own lock, lists and timers, and the listening instances placed on it
 * (cp_pipe_place: one per pipe over all loops). */
struct pipe_loop {
    cp_transport *t;
    HANDLE iocp;
    listener *ls; /* one per pipe; the strings are the transport's */
    size_t nls;
    /* Held by the loop's thread except while it waits on the port, and by
     * a worker answering a call of one of its connections (post_job):
     * every pipe_conn and cp_conn of the loop is used under it. */
    SRWLOCK lock;
    volatile LONG answering; /* workers in post_job, waiting for the lock or holding it */
    pipe_conn *dirty;        /* connections with answers not yet written (post_job) */
    pipe_conn *all;          /* every pipe_conn of the loop not yet freed */
    size_t jobs;             /* calls handed to the pool and not yet answered */
    size_t busy;             /* connections with calls among them (calls_out) */
    int phase;
    int64_t drain_until, close_until;
    cp_thread *thread;     /* loops after the first: their thread, once started */
    volatile LONG serving; /* its thread waits on the port: instances may be placed here */
    volatile LONG nconn;   /* its connected pipe_conns not yet closed (cp_pipe_place) */
};

#define LOOPS 2
/* Connections the first loop takes before the pipes' next instances go
 * to the least loaded loop (cp_pipe_place). */
#define SPREAD 3

struct cp_transport {
    cp_transport_opts opts;
    pipe_loop loops[LOOPS];
    volatile LONG nconns; /* connected pipe_conns not yet closed, all loops */
    volatile LONG stop_requested;
    volatile LONG64 stop_drain_ms;
};

/* pipe_listen_win.c */
pipe_conn *cp_pc_new(pipe_loop *lp, listener *l, HANDLE h);
/* Frees pc once it is closed, owns no operation and is off the dirty list. */
void cp_pc_maybe_free(pipe_conn *pc);
/* Releases the connection and the handle; the memory goes once the port
 * has returned every pending operation. pc may be freed on return. */
void cp_pc_close(pipe_conn *pc);
/* Creates the listener's next instance and starts an overlapped connect. */
int cp_pipe_listen_next(pipe_loop *lp, listener *l, cp_error *e);
/* The same at run time: on failure retries later and reports it. */
void cp_pipe_relisten(pipe_loop *lp, listener *l, int64_t now);
/* Marks whether pc has calls out on the pool, keeping lp->busy (the
 * connections that have) in step. */
void cp_pc_calls_out(pipe_conn *pc, bool out);
/* After a connect on lp's instance of l (connected: a client came; else
 * the connect failed): makes the pipe's next listening instance on the
 * loop that is to take the next client, lp or another (pipe_listen_win.c). */
void cp_pipe_place(pipe_loop *lp, listener *l, bool connected, int64_t now);

/* pipe_conn_win.c: what happens when a packet of the port is about pc.
 * Each may close (and free) pc. */
void cp_pc_on_connect(pipe_conn *pc, bool ok, int64_t now);
void cp_pc_on_read(pipe_conn *pc, bool ok, DWORD n, int64_t now);
void cp_pc_on_write(pipe_conn *pc, bool ok, DWORD n);
/* Before the packets of one port wait are handled: asks once for the
 * openers of all the reads among them (pipe_conn_win.c). */
void cp_pc_precheck(const OVERLAPPED_ENTRY *ev, ULONG got);
/* Writes the connection's output, refreshes its deadline, closes it when
 * it is finished. Last thing a caller does with pc: it may be freed. */
void cp_pc_flush(pipe_conn *pc);

#endif
