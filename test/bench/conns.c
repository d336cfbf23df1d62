/* conns.c - the connection-count tools of the transport's scale checks
 * (test/wine/transport.sh, test/windows/bench.ps1). A test program: never
 * linked into csi-proxy.exe.
 *
 *   bench-conns idle [-n N] [-stop FILE] [-hold MS] [-timeout MS] PIPE...
 *       Opens N connections, round robin over the PIPEs (a name such as
 *       csi-proxy-filesystem-v1), one after the other, each the way
 *       go-winio's DialPipe opens one (below), and sends nothing on any: the
 *       handles csi-proxy's own client library leaves behind, one per
 *       NewClient (its "verify that the pipe exists" probe dial is never
 *       closed). Prints {"kind":"idle-progress","opened":K,"secs":S} after
 *       every 100, and one line when all are open:
 *         {"kind":"idle","opened":N,"secs":S,"busy_retries":R,
 *          "dial_timeouts":T,"slowest_open_ms":M}
 *       then holds them until FILE exists (looked for every 100 ms, and
 *       between dials: it also ends the opening) or MS have passed (default
 *       1 hour), closes them and exits 0. Exit 1 when a connection cannot
 *       be opened at all (another error than a busy pipe, or busy for 60 s)
 *       or FILE ended the opening early (the line then says how many).
 *   bench-conns refuse [-n N] [-threads T] [-capture FILE] [-pipe NAME]
 *       N connections to NAME (default csi-proxy-filesystem-v1) from T
 *       threads (default 1), each as a refused plugin's: grpc-go's preface
 *       and SETTINGS, one PathExists (the capture's request, as gbc.h sends
 *       it), its answer read, GOAWAY, close. Meant to be run by a caller the
 *       service refuses. Prints
 *         {"kind":"refuse","connects":N,"refused":R,"other":O,
 *          "failed":F,"secs":S,"p50_us":...,"p99_us":...}
 *       where refused counts answers with grpc-status 7 (PERMISSION_DENIED),
 *       other the calls answered otherwise, failed the connections that
 *       broke; exit 0 only when all N were refused.
 *
 * How go-winio's DialPipe opens a pipe (pipe.go, tryDialPipe and
 * DialPipeAccessImpLevel; file.go, makeWin32File): CreateFile with
 * GENERIC_READ | GENERIC_WRITE, no sharing, OPEN_EXISTING,
 * FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS;
 * ERROR_PIPE_BUSY is retried after sleeping 10 ms until the dial's deadline
 * (2 s when DialPipe is given no timeout, as the probe is); then
 * GetNamedPipeInfo, the handle bound to the process's one I/O completion
 * port, and SetFileCompletionNotificationModes(SKIP_COMPLETION_PORT_ON_SUCCESS
 * | SKIP_SET_EVENT_ON_HANDLE). No read is started until the caller reads;
 * the probe never does, so the server sees a client that never speaks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/bench/bench_util.h"
#include "test/bench/gbc.h"

#define MAX_THREADS 64
#define BUSY_SLEEP_MS 10
#define GIVE_UP_MS 60000

/* v1.PathExistsResponse{exists: true} with its gRPC prefix (the answer an
 * allowed caller would get; a refused one gets none). */
static const uint8_t want_exists[] = {0, 0, 0, 0, 2, 0x08, 0x01};

static void usage(void)
{
    fprintf(stderr, "usage: bench-conns idle [-n N] [-stop FILE] [-hold MS] [-timeout MS] PIPE...\n"
                    "       bench-conns refuse [-n N] [-threads T] [-capture FILE] [-pipe NAME]\n");
    exit(2);
}

/* ---- idle ------------------------------------------------------------ */

typedef struct dial_stats {
    uint64_t busy_retries, dial_timeouts;
    int64_t slowest_ns;
} dial_stats;

/* Opens \\.\pipe\<name> as go-winio's DialPipe does and binds it to port.
 * A dial that stays busy past timeout_ms counts as a timed-out dial (the
 * plugin's NewClient would fail) and is dialled again, up to GIVE_UP_MS.
 * INVALID_HANDLE_VALUE on failure, with the Win32 error in *err. */
static HANDLE dial_like_winio(const char *name, HANDLE port, DWORD timeout_ms, dial_stats *st,
                              DWORD *err)
{
    wchar_t path[300];
    if (_snwprintf(path, 300, L"\\\\.\\pipe\\%hs", name) < 0) {
        *err = ERROR_INVALID_NAME;
        return INVALID_HANDLE_VALUE;
    }
    int64_t t0 = bu_now_ns();
    ULONGLONG start = GetTickCount64(), deadline = start + timeout_ms;
    HANDLE h;
    for (;;) {
        /* CreateFileW (Microsoft Learn: "CreateFileW function (fileapi.h)";
         * SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS: the server may not
         * identify or impersonate this client, as go-winio asks). */
        h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                        FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS, NULL);
        if (h != INVALID_HANDLE_VALUE)
            break;
        *err = GetLastError();
        if (*err != ERROR_PIPE_BUSY)
            return INVALID_HANDLE_VALUE;
        ULONGLONG now = GetTickCount64();
        if (now - start >= GIVE_UP_MS)
            return INVALID_HANDLE_VALUE;
        if (now >= deadline) {
            st->dial_timeouts++;
            deadline = now + timeout_ms;
        }
        st->busy_retries++;
        Sleep(BUSY_SLEEP_MS);
    }
    DWORD flags = 0;
    /* GetNamedPipeInfo (Microsoft Learn: "GetNamedPipeInfo function
     * (namedpipeapi.h)"): go-winio asks whether the pipe is message mode. */
    if (!GetNamedPipeInfo(h, &flags, NULL, NULL, NULL) ||
        /* CreateIoCompletionPort (Microsoft Learn: "CreateIoCompletionPort
         * function (ioapiset.h)"): associates the handle with an existing
         * port. */
        CreateIoCompletionPort(h, port, 0, 0xffffffff) == NULL ||
        /* SetFileCompletionNotificationModes (Microsoft Learn:
         * "SetFileCompletionNotificationModes function (winbase.h)"). */
        !SetFileCompletionNotificationModes(h, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS |
                                                   FILE_SKIP_SET_EVENT_ON_HANDLE)) {
        *err = GetLastError();
        CloseHandle(h);
        return INVALID_HANDLE_VALUE;
    }
    int64_t took = bu_now_ns() - t0;
    if (took > st->slowest_ns)
        st->slowest_ns = took;
    return h;
}

static bool file_exists(const char *path)
{
    /* GetFileAttributesA (Microsoft Learn: "GetFileAttributesA function
     * (fileapi.h)"). */
    return path != NULL && GetFileAttributesA(path) != INVALID_FILE_ATTRIBUTES;
}

static int idle_main(int argc, char **argv)
{
    long n = 2000, hold_ms = 3600L * 1000, timeout_ms = 2000;
    const char *stop = NULL;
    const char *pipes[64];
    int npipes = 0;
    for (int i = 0; i < argc; i++) {
        const char *k = argv[i];
        if (k[0] != '-') {
            if (npipes == 64)
                usage();
            pipes[npipes++] = k;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (strcmp(k, "-n") == 0)
            n = bu_arg_long(v, k);
        else if (strcmp(k, "-stop") == 0)
            stop = v;
        else if (strcmp(k, "-hold") == 0)
            hold_ms = bu_arg_long(v, k);
        else if (strcmp(k, "-timeout") == 0)
            timeout_ms = bu_arg_long(v, k);
        else
            usage();
    }
    if (npipes == 0)
        usage();
    HANDLE *h = calloc((size_t)(n > 0 ? n : 1), sizeof(HANDLE));
    /* One completion port for the process, as go-winio's initIO makes
     * (CreateIoCompletionPort with INVALID_HANDLE_VALUE: a new port). */
    HANDLE port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 0xffffffff);
    if (h == NULL || port == NULL) {
        fprintf(stderr, "bench-conns: out of resources\n");
        return 1;
    }
    dial_stats st = {0, 0, 0};
    int64_t t0 = bu_now_ns();
    long opened = 0;
    for (; opened < n && !file_exists(stop); opened++) {
        DWORD err = 0;
        if (opened > 0 && opened % 100 == 0) {
            printf("{\"kind\":\"idle-progress\",\"opened\":%ld,\"secs\":%.3f}\n", opened,
                   (double)(bu_now_ns() - t0) / 1e9);
            fflush(stdout);
        }
        const char *name = pipes[opened % npipes];
        h[opened] = dial_like_winio(name, port, (DWORD)timeout_ms, &st, &err);
        if (h[opened] == INVALID_HANDLE_VALUE) {
            fprintf(stderr, "bench-conns: connection %ld to %s: error %lu\n", opened + 1, name,
                    (unsigned long)err);
            break;
        }
    }
    double secs = (double)(bu_now_ns() - t0) / 1e9;
    printf("{\"kind\":\"idle\",\"opened\":%ld,\"secs\":%.3f,\"busy_retries\":%llu,"
           "\"dial_timeouts\":%llu,\"slowest_open_ms\":%.1f}\n",
           opened, secs, (unsigned long long)st.busy_retries, (unsigned long long)st.dial_timeouts,
           (double)st.slowest_ns / 1e6);
    fflush(stdout);
    if (opened == n) {
        ULONGLONG end = GetTickCount64() + (ULONGLONG)hold_ms;
        while (!file_exists(stop) && GetTickCount64() < end)
            Sleep(100);
    }
    for (long i = 0; i < opened; i++)
        CloseHandle(h[i]);
    CloseHandle(port);
    free(h);
    return opened == n ? 0 : 1;
}

/* ---- refuse ---------------------------------------------------------- */

typedef struct refuse_ctx {
    const char *pipe;
    const gbc_tmpl *t;
    long n;
    volatile LONG next;
    volatile LONG refused, other, failed;
} refuse_ctx;

typedef struct refuse_worker {
    refuse_ctx *rc;
    bu_samples s;
} refuse_worker;

/* One connection: dial, one call, its answer, close. Returns the answer's
 * grpc-status, or -1 when the connection broke first. */
static int refuse_one(refuse_ctx *rc)
{
    gbc *c = gbc_open(rc->pipe, rc->t, true);
    if (c == NULL)
        return -1;
    int status = -1;
    if (gbc_start(c, NULL) && gbc_flush(c)) {
        gbc_done d;
        for (;;) {
            int k = gbc_poll(c, &d, 1);
            if (k < 0)
                break;
            if (k == 1) {
                status = d.grpc_status;
                break;
            }
        }
    }
    gbc_close(c);
    return status;
}

static DWORD WINAPI refuse_thread(void *arg)
{
    refuse_worker *w = arg;
    refuse_ctx *rc = w->rc;
    while (InterlockedIncrement(&rc->next) <= rc->n) {
        int64_t t0 = bu_now_ns();
        int status = refuse_one(rc);
        bu_samples_add(&w->s, bu_now_ns() - t0);
        if (status == 7)
            InterlockedIncrement(&rc->refused);
        else if (status >= 0)
            InterlockedIncrement(&rc->other);
        else
            InterlockedIncrement(&rc->failed);
    }
    return 0;
}

static int refuse_main(int argc, char **argv)
{
    static gbc_tmpl t;
    static refuse_ctx rc;
    static refuse_worker w[MAX_THREADS];
    const char *capture = "test/captures/01-filesystem-v1-PathExists.bin";
    long threads = 1;
    rc.pipe = "csi-proxy-filesystem-v1";
    rc.n = 1000;
    for (int i = 0; i < argc; i++) {
        const char *k = argv[i];
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (strcmp(k, "-n") == 0)
            rc.n = bu_arg_long(v, k);
        else if (strcmp(k, "-threads") == 0)
            threads = bu_arg_long(v, k);
        else if (strcmp(k, "-capture") == 0)
            capture = v;
        else if (strcmp(k, "-pipe") == 0)
            rc.pipe = v;
        else
            usage();
    }
    if (threads < 1 || threads > MAX_THREADS)
        usage();
    if (!gbc_tmpl_load(&t, capture, want_exists, sizeof(want_exists)))
        return 1;
    rc.t = &t;
    for (long i = 0; i < threads; i++) {
        w[i].rc = &rc;
        if (!bu_samples_init(&w[i].s, (size_t)rc.n))
            return 1;
    }
    int64_t t0 = bu_now_ns();
    if (!bu_run_threads((int)threads, refuse_thread, w, sizeof(w[0]))) {
        fprintf(stderr, "bench-conns: cannot start the threads\n");
        return 1;
    }
    double secs = (double)(bu_now_ns() - t0) / 1e9;
    bu_samples all;
    if (!bu_samples_init(&all, (size_t)rc.n))
        return 1;
    for (long i = 0; i < threads; i++)
        bu_samples_merge(&all, &w[i].s);
    printf("{\"kind\":\"refuse\",\"connects\":%ld,\"refused\":%ld,\"other\":%ld,\"failed\":%ld,"
           "\"threads\":%ld,\"secs\":%.3f,\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
           rc.n, (long)rc.refused, (long)rc.other, (long)rc.failed, threads, secs,
           (double)bu_quantile(&all, 0.50) / 1000.0, (double)bu_quantile(&all, 0.99) / 1000.0);
    fflush(stdout);
    return rc.refused == rc.n ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    if (strcmp(argv[1], "idle") == 0)
        return idle_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "refuse") == 0)
        return refuse_main(argc - 2, argv + 2);
    usage();
    return 2;
}
