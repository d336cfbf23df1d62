/* bench_util.h - shared bits of the Wine-side bench tools (test tools, not
 * product: never linked into csi-proxy.exe).
 *
 * Clock, latency statistics, the pipe client I/O every bench client uses
 * (opened the way go-winio's DialPipe opens a pipe: overlapped, anonymous
 * impersonation; each read/write is one overlapped operation waited on an
 * event, as client/dial_win.c does), and a tiny JSON writer for results.
 */
#ifndef CP_BENCH_UTIL_H
#define CP_BENCH_UTIL_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Monotonic time in nanoseconds (QueryPerformanceCounter). */
int64_t bu_now_ns(void);

/* ---- latency samples ------------------------------------------------ */

typedef struct bu_samples {
    int64_t *ns;   /* one latency per call, nanoseconds */
    size_t n, cap; /* cap fixed at creation; samples beyond it are counted only */
    uint64_t count;
} bu_samples;

/* Returns false when out of memory. */
bool bu_samples_init(bu_samples *s, size_t cap);
void bu_samples_add(bu_samples *s, int64_t ns);
/* Appends every sample of src to dst (growing dst). */
bool bu_samples_merge(bu_samples *dst, const bu_samples *src);
void bu_samples_free(bu_samples *s);
/* Sorts the samples and returns the q-quantile (0..1) in nanoseconds; 0
 * when empty. */
int64_t bu_quantile(bu_samples *s, double q);

/* ---- pipe client ---------------------------------------------------- */

typedef struct bu_pipe {
    HANDLE h;
    HANDLE ev;
    uint64_t bytes_in, bytes_out;
} bu_pipe;

/* Opens \\.\pipe\<name> (retrying while every instance is busy, as go-winio
 * does, for up to 5 s). Returns false with the Win32 error in *err. */
bool bu_pipe_open(bu_pipe *p, const char *name, DWORD *err);
void bu_pipe_close(bu_pipe *p);
/* Writes all len bytes; false on failure. */
bool bu_pipe_write(bu_pipe *p, const void *buf, size_t len);
/* Reads up to cap bytes (at least 1); returns the count, 0 at end of
 * stream, -1 on error. */
long bu_pipe_read(bu_pipe *p, void *buf, size_t cap);

/* ---- results -------------------------------------------------------- */

/* Prints one JSON object line to stdout:
 * {"name":..., "calls":N, "errors":E, "secs":S, "calls_per_s":R,
 *  "p50_us":..., "p99_us":..., "mean_us":..., <extra>}
 * extra is either NULL or a string of further "key":value pairs. */
void bu_print_result(const char *name, bu_samples *s, uint64_t errors, double secs,
                     const char *extra);

/* Parses "-key value" style integer options; exits with usage on a bad
 * value. */
long bu_arg_long(const char *v, const char *what);

/* Starts n threads running fn(arg_i) where arg_i = base + i*stride, and
 * waits for all. Returns false if a thread could not be started. */
bool bu_run_threads(int n, DWORD(WINAPI *fn)(void *), void *base, size_t stride);

#endif
