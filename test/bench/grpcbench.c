/* grpcbench.c - PathExists over gRPC against csi-proxy.exe, as grpc-go
 * sends it (gbc.h). One JSON result line per run (bench_util.h).
 *
 *   bench-grpc MODE [-pipe NAME] [-capture FILE] [-secs S] [-warm S] [-n K]
 *                   [-nobdp] [-label NAME]
 *   MODE
 *     probe    50 sequential calls on one connection; prints the frame bytes
 *              of one steady-state call (request, response) and the control
 *              bytes per call (WINDOW_UPDATE, PING, PING ACK, ...)
 *     seq      sequential calls on one connection
 *     conc     K calls in flight on one connection (-n K)
 *     clients  K threads, each sequential on its own connection (-n K)
 *     churn    connect, one call, GOAWAY and close; sequential
 *     load     -calls N -n THREADS -inflight P -percon M: N calls in all,
 *              each thread reconnecting every M calls, P in flight
 *   Timed modes warm up for -warm seconds (default 0.5), then measure for
 *   -secs (default 5): a call counts when it started and ended inside the
 *   window. The pipe defaults to csi-proxy-filesystem-v1 and the capture to
 *   test/captures/01-filesystem-v1-PathExists.bin (its request asks
 *   PathExists of C:\csiproxy-test\dir, which must exist: a call passes only
 *   when the answer is {exists: true}).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/bench/bench_util.h"
#include "test/bench/gbc.h"

#define MAX_THREADS 256
#define SAMPLE_CAP (4u * 1000 * 1000)

/* v1.PathExistsResponse{exists: true} with its gRPC prefix. */
static const uint8_t want_exists[] = {0, 0, 0, 0, 2, 0x08, 0x01};

typedef struct opts {
    const char *pipe;
    gbc_tmpl t;
    bool bdp;
    int n, inflight;
    uint64_t calls, percon;
    double secs, warm;
} opts;

typedef struct worker {
    const opts *o;
    bool timed;
    int64_t warm_end, end;
    uint64_t budget; /* untimed: calls to make */
    bu_samples s;
    uint64_t errors, conns;
} worker;

static void record(worker *w, const gbc_done *d)
{
    if (!d->ok) {
        w->errors++;
        return;
    }
    if (!w->timed || (d->start_ns >= w->warm_end && d->end_ns <= w->end))
        bu_samples_add(&w->s, d->end_ns - d->start_ns);
}

/* One connection: keeps up to inflight calls going until the window ends
 * (timed) or budget calls are done. Returns the calls completed. */
static uint64_t session(worker *w, int inflight, uint64_t budget)
{
    gbc *c = gbc_open(w->o->pipe, &w->o->t, w->o->bdp);
    if (c == NULL) {
        w->errors++;
        Sleep(10);
        return 0;
    }
    w->conns++;
    uint64_t started = 0, finished = 0;
    gbc_done d[64];
    for (;;) {
        bool stop = w->timed ? bu_now_ns() >= w->end : started >= budget;
        while (!stop && gbc_outstanding(c) < inflight && gbc_start(c, NULL)) {
            started++;
            stop = !w->timed && started >= budget;
        }
        if (!gbc_flush(c)) {
            w->errors += (uint64_t)gbc_outstanding(c) + 1;
            break;
        }
        if (gbc_outstanding(c) == 0) {
            if (!stop) {
                fprintf(stderr, "bench-grpc: stalled (no call could start)\n");
                w->errors++;
            }
            break;
        }
        int k = gbc_poll(c, d, 64);
        if (k < 0) {
            fprintf(stderr, "bench-grpc: connection failed with %d calls in flight\n",
                    gbc_outstanding(c));
            w->errors += (uint64_t)gbc_outstanding(c) + 1;
            break;
        }
        for (int i = 0; i < k; i++)
            record(w, &d[i]);
        finished += (uint64_t)k;
    }
    gbc_close(c);
    return finished;
}

static DWORD WINAPI timed_worker(void *arg)
{
    worker *w = arg;
    session(w, w->o->inflight, 0);
    return 0;
}

static DWORD WINAPI load_worker(void *arg)
{
    worker *w = arg;
    uint64_t left = w->budget;
    int fails = 0;
    while (left > 0 && fails < 100) {
        uint64_t want = w->o->percon > 0 && w->o->percon < left ? w->o->percon : left;
        uint64_t got = session(w, w->o->inflight, want);
        left -= got < left ? got : left;
        fails = got == 0 ? fails + 1 : 0;
    }
    return 0;
}

static DWORD WINAPI churn_worker(void *arg)
{
    worker *w = arg;
    gbc_done d[4];
    while (bu_now_ns() < w->end) {
        int64_t a = bu_now_ns();
        gbc *c = gbc_open(w->o->pipe, &w->o->t, w->o->bdp);
        if (c == NULL) {
            w->errors++;
            Sleep(10);
            continue;
        }
        w->conns++;
        bool ok = gbc_start(c, NULL) && gbc_flush(c);
        int k = 0;
        while (ok && k == 0)
            k = gbc_poll(c, d, 4);
        gbc_close(c);
        int64_t b = bu_now_ns();
        if (!ok || k != 1 || !d[0].ok)
            w->errors++;
        else if (a >= w->warm_end && b <= w->end)
            bu_samples_add(&w->s, b - a);
    }
    return 0;
}

/* Runs nthreads workers of fn; prints the merged result. */
static int run(const opts *o, const char *label, int nthreads, DWORD(WINAPI *fn)(void *),
               bool timed, const char *extra)
{
    static worker ws[MAX_THREADS];
    int64_t t0 = bu_now_ns();
    for (int i = 0; i < nthreads; i++) {
        worker *w = &ws[i];
        memset(w, 0, sizeof(*w));
        w->o = o;
        w->timed = timed;
        w->warm_end = t0 + (int64_t)(o->warm * 1e9);
        w->end = w->warm_end + (int64_t)(o->secs * 1e9);
        w->budget = o->calls / (uint64_t)nthreads + (i < (int)(o->calls % (uint64_t)nthreads));
        if (!bu_samples_init(&w->s, timed ? SAMPLE_CAP / (size_t)nthreads : w->budget + 1)) {
            fprintf(stderr, "bench-grpc: out of memory\n");
            return 1;
        }
    }
    if (!bu_run_threads(nthreads, fn, ws, sizeof(worker))) {
        fprintf(stderr, "bench-grpc: cannot start threads\n");
        return 1;
    }
    double secs = timed ? o->secs : (double)(bu_now_ns() - t0) / 1e9;
    bu_samples all;
    uint64_t errors = 0, conns = 0;
    if (!bu_samples_init(&all, 1))
        return 1;
    for (int i = 0; i < nthreads; i++) {
        if (!bu_samples_merge(&all, &ws[i].s))
            return 1;
        errors += ws[i].errors;
        conns += ws[i].conns;
        bu_samples_free(&ws[i].s);
    }
    char ex[256];
    snprintf(ex, sizeof(ex), "\"conns\":%llu,\"bdp_ping\":%s%s%s", (unsigned long long)conns,
             o->bdp ? "true" : "false", extra != NULL ? "," : "", extra != NULL ? extra : "");
    bu_print_result(label, &all, errors, secs, ex);
    bu_samples_free(&all);
    return errors == 0 ? 0 : 1;
}

static int probe(const opts *o)
{
    gbc *c = gbc_open(o->pipe, &o->t, o->bdp);
    if (c == NULL)
        return 1;
    gbc_done d[8];
    uint64_t out0 = 0, in0 = 0, out1, in1;
    uint32_t req = 0, resp = 0;
    const int calls = 50, from = 10;
    for (int i = 0; i < calls; i++) {
        if (i == from)
            gbc_bytes(c, &out0, &in0);
        int k = 0;
        if (!gbc_start(c, NULL) || !gbc_flush(c))
            goto fail;
        while (k == 0)
            if ((k = gbc_poll(c, d, 8)) < 0)
                goto fail;
        if (!d[0].ok) {
            fprintf(stderr, "bench-grpc probe: call %d did not answer {exists: true}\n", i);
            goto fail;
        }
        req = d[0].req_bytes;
        resp = d[0].resp_bytes;
    }
    /* The BDP ping of the last call may still be on its way: give it time. */
    Sleep(50);
    gbc_bytes(c, &out1, &in1);
    gbc_close(c);
    int n = calls - from;
    printf("{\"name\":\"probe\",\"req_bytes\":%u,\"resp_bytes\":%u,"
           "\"first_req_bytes\":%zu,\"ctl_out_per_call\":%.1f,\"ctl_in_per_call\":%.1f}\n",
           req, resp, 18 + o->t.first_hdr_len + o->t.msg_len, (double)(out1 - out0) / n - req,
           (double)(in1 - in0) / n - resp);
    return 0;
fail:
    gbc_close(c);
    fprintf(stderr, "bench-grpc probe failed\n");
    return 1;
}

int main(int argc, char **argv)
{
    static opts o = {.pipe = "csi-proxy-filesystem-v1",
                     .bdp = true,
                     .n = 1,
                     .inflight = 1,
                     .secs = 5,
                     .warm = 0.5};
    const char *capture = "test/captures/01-filesystem-v1-PathExists.bin", *label = NULL;
    if (argc < 2)
        goto usage;
    const char *mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(k, "-nobdp") == 0) {
            o.bdp = false;
            continue;
        }
        if (v == NULL)
            goto usage;
        i++;
        if (strcmp(k, "-pipe") == 0)
            o.pipe = v;
        else if (strcmp(k, "-capture") == 0)
            capture = v;
        else if (strcmp(k, "-secs") == 0)
            o.secs = atof(v);
        else if (strcmp(k, "-warm") == 0)
            o.warm = atof(v);
        else if (strcmp(k, "-n") == 0)
            o.n = (int)bu_arg_long(v, k);
        else if (strcmp(k, "-inflight") == 0)
            o.inflight = (int)bu_arg_long(v, k);
        else if (strcmp(k, "-calls") == 0)
            o.calls = (uint64_t)bu_arg_long(v, k);
        else if (strcmp(k, "-percon") == 0)
            o.percon = (uint64_t)bu_arg_long(v, k);
        else if (strcmp(k, "-label") == 0)
            label = v;
        else
            goto usage;
    }
    if (o.n < 1 || o.n > MAX_THREADS || o.inflight < 1)
        goto usage;
    if (!gbc_tmpl_load(&o.t, capture, want_exists, sizeof(want_exists)))
        return 1;
    char ex[64];
    if (strcmp(mode, "probe") == 0)
        return probe(&o);
    if (strcmp(mode, "seq") == 0)
        return run(&o, label ? label : "seq", 1, timed_worker, true, "\"inflight\":1");
    if (strcmp(mode, "conc") == 0) {
        o.inflight = o.n;
        snprintf(ex, sizeof(ex), "\"inflight\":%d", o.n);
        return run(&o, label ? label : "conc", 1, timed_worker, true, ex);
    }
    if (strcmp(mode, "clients") == 0) {
        snprintf(ex, sizeof(ex), "\"clients\":%d", o.n);
        return run(&o, label ? label : "clients", o.n, timed_worker, true, ex);
    }
    if (strcmp(mode, "churn") == 0)
        return run(&o, label ? label : "churn", 1, churn_worker, true, NULL);
    if (strcmp(mode, "load") == 0 && o.calls > 0) {
        snprintf(ex, sizeof(ex), "\"threads\":%d,\"inflight\":%d,\"percon\":%llu", o.n, o.inflight,
                 (unsigned long long)o.percon);
        return run(&o, label ? label : "load", o.n, load_worker, false, ex);
    }
usage:
    fprintf(stderr, "usage: bench-grpc probe|seq|conc|clients|churn|load [-pipe NAME] "
                    "[-capture FILE] [-secs S] [-warm S] [-n K] [-inflight P] [-calls N] "
                    "[-percon M] [-nobdp] [-label NAME]\n");
    return 2;
}
