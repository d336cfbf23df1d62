/* bench_util.c - see bench_util.h. */
#include "test/bench/bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t bu_now_ns(void)
{
    static LARGE_INTEGER freq;
    LARGE_INTEGER c;
    if (freq.QuadPart == 0)
        QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&c);
    return (int64_t)((double)c.QuadPart * 1e9 / (double)freq.QuadPart);
}

/* ---- samples -------------------------------------------------------- */

bool bu_samples_init(bu_samples *s, size_t cap)
{
    memset(s, 0, sizeof(*s));
    s->ns = malloc((cap > 0 ? cap : 1) * sizeof(int64_t));
    s->cap = cap;
    return s->ns != NULL;
}

void bu_samples_add(bu_samples *s, int64_t ns)
{
    s->count++;
    if (s->n < s->cap)
        s->ns[s->n++] = ns;
}

bool bu_samples_merge(bu_samples *dst, const bu_samples *src)
{
    if (dst->n + src->n > dst->cap) {
        size_t cap = dst->n + src->n;
        int64_t *nb = realloc(dst->ns, cap * sizeof(int64_t));
        if (nb == NULL)
            return false;
        dst->ns = nb;
        dst->cap = cap;
    }
    memcpy(dst->ns + dst->n, src->ns, src->n * sizeof(int64_t));
    dst->n += src->n;
    dst->count += src->count;
    return true;
}

void bu_samples_free(bu_samples *s)
{
    free(s->ns);
    memset(s, 0, sizeof(*s));
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int64_t bu_quantile(bu_samples *s, double q)
{
    if (s->n == 0)
        return 0;
    qsort(s->ns, s->n, sizeof(int64_t), cmp_i64);
    size_t i = (size_t)(q * (double)(s->n - 1) + 0.5);
    return s->ns[i < s->n ? i : s->n - 1];
}

/* ---- pipe client ---------------------------------------------------- */

bool bu_pipe_open(bu_pipe *p, const char *name, DWORD *err)
{
    wchar_t path[300];
    memset(p, 0, sizeof(*p));
    p->h = INVALID_HANDLE_VALUE;
    if (_snwprintf(path, 300, L"\\\\.\\pipe\\%hs", name) < 0) {
        *err = ERROR_INVALID_NAME;
        return false;
    }
    p->ev = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (p->ev == NULL) {
        *err = GetLastError();
        return false;
    }
    ULONGLONG deadline = GetTickCount64() + 5000;
    for (;;) {
        p->h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                           FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS, NULL);
        if (p->h != INVALID_HANDLE_VALUE)
            return true;
        *err = GetLastError();
        if (*err != ERROR_PIPE_BUSY || GetTickCount64() >= deadline)
            break;
        if (!WaitNamedPipeW(path, 50))
            Sleep(1);
    }
    CloseHandle(p->ev);
    p->ev = NULL;
    return false;
}

void bu_pipe_close(bu_pipe *p)
{
    if (p->h != INVALID_HANDLE_VALUE && p->h != NULL)
        CloseHandle(p->h);
    if (p->ev != NULL)
        CloseHandle(p->ev);
    p->h = INVALID_HANDLE_VALUE;
    p->ev = NULL;
}

bool bu_pipe_write(bu_pipe *p, const void *buf, size_t len)
{
    const uint8_t *b = buf;
    while (len > 0) {
        OVERLAPPED ov = {.hEvent = p->ev};
        DWORD n = 0;
        ResetEvent(p->ev);
        if (!WriteFile(p->h, b, (DWORD)len, NULL, &ov) && GetLastError() != ERROR_IO_PENDING)
            return false;
        if (!GetOverlappedResult(p->h, &ov, &n, TRUE))
            return false;
        b += n;
        len -= n;
        p->bytes_out += n;
    }
    return true;
}

long bu_pipe_read(bu_pipe *p, void *buf, size_t cap)
{
    OVERLAPPED ov = {.hEvent = p->ev};
    DWORD n = 0;
    ResetEvent(p->ev);
    if (!ReadFile(p->h, buf, (DWORD)cap, NULL, &ov)) {
        DWORD err = GetLastError();
        if (err == ERROR_BROKEN_PIPE || err == ERROR_PIPE_NOT_CONNECTED)
            return 0;
        if (err != ERROR_IO_PENDING)
            return -1;
    }
    if (!GetOverlappedResult(p->h, &ov, &n, TRUE)) {
        DWORD err = GetLastError();
        return err == ERROR_BROKEN_PIPE || err == ERROR_PIPE_NOT_CONNECTED ? 0 : -1;
    }
    p->bytes_in += n;
    return (long)n;
}

/* ---- results -------------------------------------------------------- */

void bu_print_result(const char *name, bu_samples *s, uint64_t errors, double secs,
                     const char *extra)
{
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += (double)s->ns[i];
    double mean = s->n > 0 ? sum / (double)s->n / 1000.0 : 0;
    double p50 = (double)bu_quantile(s, 0.50) / 1000.0;
    double p99 = (double)bu_quantile(s, 0.99) / 1000.0;
    double p999 = (double)bu_quantile(s, 0.999) / 1000.0;
    printf("{\"name\":\"%s\",\"calls\":%llu,\"errors\":%llu,\"secs\":%.3f,\"calls_per_s\":%.1f,"
           "\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"mean_us\":%.1f%s%s}\n",
           name, (unsigned long long)s->count, (unsigned long long)errors, secs,
           secs > 0 ? (double)s->count / secs : 0.0, p50, p99, p999, mean,
           extra != NULL && extra[0] != '\0' ? "," : "", extra != NULL ? extra : "");
    fflush(stdout);
}

long bu_arg_long(const char *v, const char *what)
{
    char *end;
    long x = v != NULL ? strtol(v, &end, 10) : 0;
    if (v == NULL || *end != '\0' || x < 0) {
        fprintf(stderr, "bad value for %s: %s\n", what, v != NULL ? v : "(missing)");
        exit(2);
    }
    return x;
}

bool bu_run_threads(int n, DWORD(WINAPI *fn)(void *), void *base, size_t stride)
{
    HANDLE *th = calloc((size_t)n, sizeof(HANDLE));
    bool ok = th != NULL;
    int started = 0;
    for (; ok && started < n; started++) {
        th[started] = CreateThread(NULL, 0, fn, (char *)base + (size_t)started * stride, 0, NULL);
        if (th[started] == NULL)
            ok = false;
    }
    for (int i = 0; i < started; i++) {
        if (th[i] != NULL) {
            WaitForSingleObject(th[i], INFINITE);
            CloseHandle(th[i]);
        }
    }
    free(th);
    return ok;
}
