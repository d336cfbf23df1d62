/* floor.c - the transport floor: a raw named-pipe echo with the byte counts
 * of one PathExists round trip, no HTTP/2, no gRPC, no worker hop.
 *
 *   bench-floor server -req N -resp M [-pipe NAME] [-hop]
 *       Serves \\.\pipe\NAME (default csi-bench-floor) the way csi-proxy's
 *       transport does: one completion port, one I/O thread, one instance
 *       always listening (overlapped ConnectNamedPipe), per connection one
 *       overlapped ReadFile always pending and at most one WriteFile in
 *       flight. For every N bytes read it writes M bytes back, in one write.
 *       -hop: each answer first takes the trip a csi-proxy call takes
 *       through the worker pool: queued to 4 worker threads (SRW lock +
 *       condition variable, as rpc/pool.c), and posted back to the I/O
 *       thread's completion port by the worker (as rpc/job.c). A
 *       reference point for where the time goes, not the floor.
 *   bench-floor client -req N -resp M [-secs S] [-warm S] [-pipe NAME] [-label L]
 *       One connection; sequential round trips (write N bytes in one write,
 *       read until M bytes came back) for S seconds after a warm-up; prints
 *       one JSON result line (bench_util.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/bench/bench_util.h"

#define READ_BUF (16 * 1024)
#define MAX_RESP (16 * 1024)

enum { KEY_IO = 1, KEY_JOB };
#define HOP_WORKERS 4

typedef struct inst inst;
typedef struct op {
    OVERLAPPED ov;
    inst *in;
} op;

/* One pipe instance. ops counts the overlapped operations the system owns;
 * the memory goes only when the handle is closed and ops is back to 0. */
struct inst {
    HANDLE h; /* INVALID_HANDLE_VALUE once closed */
    bool connected;
    op rd, wr;
    unsigned ops;
    bool writing;
    size_t got;  /* request bytes not yet answered */
    size_t owed; /* response bytes not yet written */
    uint8_t rbuf[READ_BUF];
};

/* -hop: the worker queue (a ring of instances owed one answer each). */
static bool hop;
static SRWLOCK hop_lock = SRWLOCK_INIT;
static CONDITION_VARIABLE hop_cv = CONDITION_VARIABLE_INIT;
static inst *hop_q[4096];
static unsigned hop_head, hop_tail;

static HANDLE port;
static wchar_t pipe_path[300];
static size_t req_len, resp_len;
static uint8_t resp_bytes[MAX_RESP];

static void inst_close(inst *in)
{
    if (in->h != INVALID_HANDLE_VALUE) {
        if (in->ops > 0)
            CancelIoEx(in->h, NULL);
        CloseHandle(in->h);
        in->h = INVALID_HANDLE_VALUE;
    }
    if (in->ops == 0)
        free(in);
}

static bool listen_next(void)
{
    inst *in = calloc(1, sizeof(*in));
    if (in == NULL)
        return false;
    in->rd.in = in;
    in->wr.in = in;
    /* The same creation parameters as transport/pipe/loop_win.c. */
    in->h = CreateNamedPipeW(pipe_path, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED,
                             PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
                                 PIPE_REJECT_REMOTE_CLIENTS,
                             PIPE_UNLIMITED_INSTANCES, 64 * 1024, 64 * 1024, 50, NULL);
    if (in->h == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "floor: CreateNamedPipeW: error %lu\n", GetLastError());
        free(in);
        return false;
    }
    if (CreateIoCompletionPort(in->h, port, KEY_IO, 0) == NULL) {
        inst_close(in);
        return false;
    }
    in->ops++;
    if (!ConnectNamedPipe(in->h, &in->rd.ov)) {
        DWORD err = GetLastError();
        if (err == ERROR_PIPE_CONNECTED)
            return PostQueuedCompletionStatus(port, 0, KEY_IO, &in->rd.ov);
        if (err != ERROR_IO_PENDING) {
            in->ops--;
            inst_close(in);
            return false;
        }
    }
    return true;
}

static bool start_read(inst *in)
{
    memset(&in->rd.ov, 0, sizeof(in->rd.ov));
    in->ops++;
    if (ReadFile(in->h, in->rbuf, READ_BUF, NULL, &in->rd.ov) || GetLastError() == ERROR_IO_PENDING)
        return true;
    in->ops--;
    return false;
}

static bool flush(inst *in)
{
    if (in->writing || in->owed == 0)
        return true;
    size_t n = in->owed < MAX_RESP ? in->owed : MAX_RESP;
    memset(&in->wr.ov, 0, sizeof(in->wr.ov));
    in->ops++;
    in->writing = true;
    if (WriteFile(in->h, resp_bytes, (DWORD)n, NULL, &in->wr.ov) ||
        GetLastError() == ERROR_IO_PENDING)
        return true;
    in->ops--;
    in->writing = false;
    return false;
}

static DWORD WINAPI hop_worker(void *arg)
{
    (void)arg;
    AcquireSRWLockExclusive(&hop_lock);
    for (;;) {
        while (hop_head == hop_tail)
            SleepConditionVariableSRW(&hop_cv, &hop_lock, INFINITE, 0);
        inst *in = hop_q[hop_head++ % 4096];
        ReleaseSRWLockExclusive(&hop_lock);
        PostQueuedCompletionStatus(port, 0, KEY_JOB, (OVERLAPPED *)in);
        AcquireSRWLockExclusive(&hop_lock);
    }
    return 0;
}

/* Owes one answer to in, through a worker. */
static void hop_submit(inst *in)
{
    in->ops++; /* the job keeps the instance alive */
    AcquireSRWLockExclusive(&hop_lock);
    hop_q[hop_tail++ % 4096] = in;
    WakeConditionVariable(&hop_cv);
    ReleaseSRWLockExclusive(&hop_lock);
}

static void on_packet(const OVERLAPPED_ENTRY *ev)
{
    if (ev->lpCompletionKey == KEY_JOB) {
        inst *in = (inst *)ev->lpOverlapped;
        in->ops--;
        if (in->h == INVALID_HANDLE_VALUE) {
            inst_close(in);
            return;
        }
        in->owed += resp_len;
        if (!flush(in))
            inst_close(in);
        return;
    }
    op *o = CONTAINING_RECORD(ev->lpOverlapped, op, ov);
    inst *in = o->in;
    bool ok = (LONG)o->ov.Internal >= 0;
    DWORD n = ev->dwNumberOfBytesTransferred;
    in->ops--;
    if (o == &in->wr)
        in->writing = false;
    if (in->h == INVALID_HANDLE_VALUE) { /* closed: a cancelled operation returns */
        inst_close(in);
        return;
    }
    if (!in->connected) {
        in->connected = true;
        listen_next(); /* the next instance first, as the product does */
        if (!ok || !start_read(in))
            inst_close(in);
        return;
    }
    if (o == &in->rd) {
        if (!ok || n == 0) {
            inst_close(in);
            return;
        }
        in->got += n;
        while (in->got >= req_len) {
            in->got -= req_len;
            if (hop)
                hop_submit(in);
            else
                in->owed += resp_len;
        }
        if (!start_read(in) || !flush(in))
            inst_close(in);
        return;
    }
    if (!ok || n > in->owed) {
        inst_close(in);
        return;
    }
    in->owed -= n;
    if (!flush(in))
        inst_close(in);
}

static int serve(void)
{
    port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (port == NULL || !listen_next())
        return 1;
    for (int i = 0; hop && i < HOP_WORKERS; i++)
        if (CreateThread(NULL, 0, hop_worker, NULL, 0, NULL) == NULL)
            return 1;
    printf("listening\n");
    fflush(stdout);
    OVERLAPPED_ENTRY ev[64];
    for (;;) {
        ULONG got = 0;
        if (!GetQueuedCompletionStatusEx(port, ev, 64, &got, INFINITE, FALSE))
            return 1;
        for (ULONG i = 0; i < got; i++)
            on_packet(&ev[i]);
    }
}

static const char *label;

static int client(const char *name, double secs, double warm)
{
    bu_pipe p;
    DWORD err;
    if (!bu_pipe_open(&p, name, &err)) {
        fprintf(stderr, "floor client: cannot open %s: error %lu\n", name, err);
        return 1;
    }
    uint8_t *req = calloc(1, req_len), buf[READ_BUF];
    bu_samples s;
    if (req == NULL || !bu_samples_init(&s, 4 * 1000 * 1000))
        return 1;
    uint64_t errors = 0;
    int64_t t0 = bu_now_ns(), end_warm = t0 + (int64_t)(warm * 1e9), start = 0, end = 0;
    bool measuring = false;
    for (;;) {
        int64_t a = bu_now_ns();
        if (!measuring && a >= end_warm) {
            measuring = true;
            start = a;
            end = a + (int64_t)(secs * 1e9);
        }
        if (measuring && a >= end)
            break;
        if (!bu_pipe_write(&p, req, req_len)) {
            errors++;
            break;
        }
        size_t have = 0;
        while (have < resp_len) {
            long n = bu_pipe_read(&p, buf, sizeof(buf));
            if (n <= 0) {
                errors++;
                goto out;
            }
            have += (size_t)n;
        }
        if (measuring)
            bu_samples_add(&s, bu_now_ns() - a);
    }
out:;
    double el = (double)(bu_now_ns() - start) / 1e9;
    char extra[128];
    snprintf(extra, sizeof(extra), "\"req_bytes\":%zu,\"resp_bytes\":%zu", req_len, resp_len);
    bu_print_result(label, &s, errors, el, extra);
    bu_pipe_close(&p);
    return errors == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *name = "csi-bench-floor";
    label = "floor";
    double secs = 5, warm = 0.5;
    if (argc < 2)
        goto usage;
    for (int i = 2; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(k, "-hop") == 0) {
            hop = true;
            i--;
            continue;
        }
        if (v == NULL)
            goto usage;
        if (strcmp(k, "-req") == 0)
            req_len = (size_t)bu_arg_long(v, k);
        else if (strcmp(k, "-resp") == 0)
            resp_len = (size_t)bu_arg_long(v, k);
        else if (strcmp(k, "-secs") == 0)
            secs = atof(v);
        else if (strcmp(k, "-warm") == 0)
            warm = atof(v);
        else if (strcmp(k, "-pipe") == 0)
            name = v;
        else if (strcmp(k, "-label") == 0)
            label = v;
        else
            goto usage;
    }
    if (req_len == 0 || resp_len == 0 || resp_len > MAX_RESP)
        goto usage;
    memset(resp_bytes, 0x5a, sizeof(resp_bytes));
    if (strcmp(argv[1], "server") == 0) {
        _snwprintf(pipe_path, 300, L"\\\\.\\pipe\\%hs", name);
        return serve();
    }
    if (strcmp(argv[1], "client") == 0)
        return client(name, secs, warm);
usage:
    fprintf(stderr, "usage: bench-floor server|client -req N -resp M [-secs S] [-warm S] "
                    "[-pipe NAME] [-hop] [-label NAME]\n");
    return 2;
}
