/* pipecheck.c - Wine test probe: opens named pipes the way csi-proxy's Go
 * clients do (WaitNamedPipeW, then CreateFileW read/write, overlapped,
 * SECURITY_ANONYMOUS).
 *
 *   pipecheck [-absent] [-h2] [-hold MS] [NAME...]
 *
 * NAME is "csi-proxy-disk-v1" or "\\.\pipe\csi-proxy-disk-v1"; without
 * names, the 23 pipes upstream serves. Exit 0 when every pipe opens (or,
 * with -absent, when none does); 1 otherwise; 2 on bad usage.
 *   -h2       also send the HTTP/2 client preface and an empty SETTINGS and
 *             expect the server's SETTINGS frame back
 *   -hold MS  keep every connection open (idle) for MS ms before closing
 *   -churn MS open and at once close the first pipe in a tight loop for MS
 *             ms, 1 ms apart while it is busy (no retry on "not found"):
 *             exit 1 if it was ever missing
 *             or opened fewer than 200 times (a server that stops
 *             re-listening after such a client leaves it busy or absent)
 *   -silent-rmdir DIR SECS  on the first pipe (a filesystem v1 one): one
 *             Rmdir(DIR, force) after the preface, the answer read, and
 *             then not one byte more is written (no SETTINGS ACK, no
 *             WINDOW_UPDATE) while the connection stays open SECS seconds:
 *             a server that stops must not wait for such a client
 *   -flood N  on the first pipe (a filesystem one): N PathExists
 *             calls in waves of 90, answers not read until a second after
 *             the last wave, so that the server's answers (~330 bytes each)
 *             outgrow the pipe (64 KiB); then read: exit 1 unless
 *             all N calls are answered
 *   -stall CONNS CALLS SECS PATH  CONNS connections to the first pipe (a
 *             filesystem v1 one), each a client that takes no answer: its
 *             SETTINGS say INITIAL_WINDOW_SIZE 0, it sends CALLS
 *             PathExists(PATH) calls at once, acknowledging nothing (PATH
 *             inside a root: each answer is a message the zero window holds
 *             back), then reads nothing; prints "stalled: ..." once all are
 *             written, holds them SECS seconds, exits 0 (1 when a
 *             connection could not be opened or written)
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const upstream[] = {
    "csi-proxy-filesystem-v1alpha1", "csi-proxy-filesystem-v1beta1",
    "csi-proxy-filesystem-v1beta2",  "csi-proxy-filesystem-v1",
    "csi-proxy-filesystem-v2alpha1", "csi-proxy-disk-v1alpha1",
    "csi-proxy-disk-v1beta1",        "csi-proxy-disk-v1beta2",
    "csi-proxy-disk-v1beta3",        "csi-proxy-disk-v1",
    "csi-proxy-volume-v1alpha1",     "csi-proxy-volume-v1beta1",
    "csi-proxy-volume-v1beta2",      "csi-proxy-volume-v1beta3",
    "csi-proxy-volume-v1",           "csi-proxy-volume-v2alpha1",
    "csi-proxy-smb-v1alpha1",        "csi-proxy-smb-v1beta1",
    "csi-proxy-smb-v1beta2",         "csi-proxy-smb-v1",
    "csi-proxy-system-v1alpha1",     "csi-proxy-iscsi-v1alpha1",
    "csi-proxy-iscsi-v1alpha2",
};

/* Overlapped read or write on h with a timeout; returns bytes or -1. */
static long io(HANDLE h, bool write, void *buf, DWORD len, DWORD timeout_ms)
{
    OVERLAPPED ov = {0};
    ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (ov.hEvent == NULL)
        return -1;
    DWORD n = 0;
    BOOL ok = write ? WriteFile(h, buf, len, NULL, &ov) : ReadFile(h, buf, len, NULL, &ov);
    if (!ok && GetLastError() == ERROR_IO_PENDING) {
        if (WaitForSingleObject(ov.hEvent, timeout_ms) != WAIT_OBJECT_0) {
            CancelIoEx(h, &ov);
            GetOverlappedResult(h, &ov, &n, TRUE);
            CloseHandle(ov.hEvent);
            return -1;
        }
        ok = TRUE;
    }
    if (ok)
        ok = GetOverlappedResult(h, &ov, &n, TRUE);
    CloseHandle(ov.hEvent);
    return ok ? (long)n : -1;
}

/* Client preface + empty SETTINGS; the server must answer with a frame of
 * type SETTINGS (4) first. */
static bool check_h2(HANDLE h, const char *name)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                  "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
    char hdr[9];
    if (io(h, true, (void *)preface, sizeof(preface) - 1, 10000) != (long)sizeof(preface) - 1) {
        printf("FAIL %s: writing the HTTP/2 preface (error %lu)\n", name, GetLastError());
        return false;
    }
    long got = 0;
    while (got < 9) {
        long n = io(h, false, hdr + got, (DWORD)(9 - got), 10000);
        if (n <= 0) {
            printf("FAIL %s: no HTTP/2 frame from the server\n", name);
            return false;
        }
        got += n;
    }
    if (hdr[3] != 4) {
        printf("FAIL %s: first server frame has type %d, not SETTINGS\n", name, hdr[3]);
        return false;
    }
    return true;
}

/* Opens and closes name as fast as possible for ms; counts the times the
 * pipe did not exist (busy is fine: clients retry on busy). */
static int churn(const char *name, long ms)
{
    wchar_t wpath[512];
    char path[512];
    snprintf(path, sizeof(path), "\\\\.\\pipe\\%s", name);
    MultiByteToWideChar(CP_UTF8, 0, path, -1, wpath, 512);
    ULONGLONG end = GetTickCount64() + (ULONGLONG)ms;
    long opened = 0, busy = 0, missing = 0;
    while (GetTickCount64() < end) {
        HANDLE h = CreateFileW(wpath, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                               FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS,
                               NULL);
        if (h != INVALID_HANDLE_VALUE) {
            opened++;
            CloseHandle(h);
        } else if (GetLastError() == ERROR_PIPE_BUSY) {
            /* go-winio's dial sleeps 10 ms on busy; 1 ms here keeps the
             * churn faster than any real client without starving the
             * callers beside it of the CPU. */
            busy++;
            Sleep(1);
        } else {
            missing++;
        }
    }
    printf("%s: churn %s: %ld opened, %ld busy, %ld missing\n",
           missing == 0 && opened >= 200 ? "PASS" : "FAIL", path, opened, busy, missing);
    return missing == 0 && opened >= 200 ? 0 : 1;
}

/* Appends an HTTP/2 frame header (RFC 9113 section 4.1). */
static size_t frame(uint8_t *p, size_t len, uint8_t type, uint8_t flags, uint32_t stream)
{
    p[0] = (uint8_t)(len >> 16);
    p[1] = (uint8_t)(len >> 8);
    p[2] = (uint8_t)len;
    p[3] = type;
    p[4] = flags;
    p[5] = (uint8_t)(stream >> 24);
    p[6] = (uint8_t)(stream >> 16);
    p[7] = (uint8_t)(stream >> 8);
    p[8] = (uint8_t)stream;
    return 9;
}

/* One PathExists call on stream id: HEADERS (HPACK, literals without
 * indexing, RFC 7541) and DATA with END_STREAM. Its path (600 characters)
 * lies outside every allowed root and names the stream, so each answer is
 * an error whose message names it: about 330 bytes the server cannot
 * compress away. Returns its length (at most 800). */
static size_t path_exists_call(uint8_t *out, uint32_t id)
{
    static const uint8_t hpack[] = {
        0x83, 0x86, /* :method POST, :scheme http */
        0x04, 25,   '/', 'v', '1', '.', 'F', 'i', 'l', 'e', 's', 'y', 's', 't',
        'e',  'm',  '/', 'P', 'a', 't', 'h', 'E', 'x', 'i', 's', 't', 's', /* :path */
        0x01, 9,    'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't',           /* :authority */
        0x0f, 0x10, 16,  'a', 'p', 'p', 'l', 'i', 'c', 'a', 't', 'i', 'o', 'n',
        '/',  'g',  'r', 'p', 'c', /* content-type */
        0x00, 2,    't', 'e', 8,   't', 'r', 'a', 'i', 'l', 'e', 'r', 's'};
    char path[601];
    int plen =
        snprintf(path, sizeof(path), "C:\\outside-every-root\\call-%010lu\\", (unsigned long)id);
    memset(path + plen, 'x', sizeof(path) - 1 - (size_t)plen);
    plen = (int)sizeof(path) - 1;
    size_t body = 1 + 2 + (size_t)plen; /* tag, 2-byte varint length, path */
    uint8_t msg[5 + 3 + 600] = {0,
                                0,
                                (uint8_t)(body >> 16),
                                (uint8_t)(body >> 8),
                                (uint8_t)body,
                                0x0a,
                                (uint8_t)(0x80 | (plen & 0x7f)),
                                (uint8_t)(plen >> 7)};
    memcpy(msg + 8, path, (size_t)plen);
    size_t mlen = 8 + (size_t)plen;
    size_t n = frame(out, sizeof(hpack), 1, 0x4, id); /* END_HEADERS */
    memcpy(out + n, hpack, sizeof(hpack));
    n += sizeof(hpack);
    n += frame(out + n, mlen, 0, 0x1, id); /* END_STREAM */
    memcpy(out + n, msg, mlen);
    return n + mlen;
}

/* Counts the frames that end a response stream (HEADERS with END_STREAM)
 * in the server's bytes; keeps a partial frame for the next read. */
typedef struct h2scan {
    uint8_t buf[1 << 16];
    size_t len;
    long ended, refused; /* HEADERS with END_STREAM; RST_STREAM */
    long types[10];      /* frames by type */
    long long total;     /* bytes read */
} h2scan;

static void scan(h2scan *sc)
{
    size_t at = 0;
    while (sc->len - at >= 9) {
        size_t flen = (size_t)sc->buf[at] << 16 | (size_t)sc->buf[at + 1] << 8 | sc->buf[at + 2];
        if (sc->len - at < 9 + flen)
            break;
        if (sc->buf[at + 3] < 10)
            sc->types[sc->buf[at + 3]]++;
        if (sc->buf[at + 3] == 1 && (sc->buf[at + 4] & 1))
            sc->ended++;
        else if (sc->buf[at + 3] == 3)
            sc->refused++;
        if (sc->buf[at + 3] == 7 && flen >= 8) /* GOAWAY: why */
            printf("  GOAWAY error %u: %.*s\n",
                   (unsigned)sc->buf[at + 9 + 7] | (unsigned)sc->buf[at + 9 + 6] << 8,
                   (int)(flen - 8), (const char *)sc->buf + at + 9 + 8);
        at += 9 + flen;
    }
    memmove(sc->buf, sc->buf + at, sc->len - at);
    sc->len -= at;
}

/* Rmdir(dir, force) on stream 1; prints its grpc-status when the answer
 * ends, then holds the connection secs seconds without writing. */
static int silent_rmdir(HANDLE h, const char *path, const char *dir, long secs)
{
    static const uint8_t hpack[] = {
        0x83, 0x86, /* :method POST, :scheme http */
        0x04, 20,   '/', 'v', '1', '.', 'F', 'i', 'l', 'e', 's', 'y', 's',
        't',  'e',  'm', '/', 'R', 'm', 'd', 'i', 'r',           /* :path */
        0x01, 9,    'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't', /* :authority */
        0x0f, 0x10, 16,  'a', 'p', 'p', 'l', 'i', 'c', 'a', 't', 'i', 'o',
        'n',  '/',  'g', 'r', 'p', 'c', /* content-type */
        0x00, 2,    't', 'e', 8,   't', 'r', 'a', 'i', 'l', 'e', 'r', 's'};
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                  "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
    size_t dlen = strlen(dir);
    if (dlen > 120)
        return printf("FAIL: DIR too long\n"), 1;
    static uint8_t out[512];
    memcpy(out, preface, sizeof(preface) - 1);
    size_t n = sizeof(preface) - 1;
    n += frame(out + n, sizeof(hpack), 1, 0x4, 1); /* END_HEADERS */
    memcpy(out + n, hpack, sizeof(hpack));
    n += sizeof(hpack);
    size_t body = 2 + dlen + 2;               /* RmdirRequest{path = 1, force = 2} */
    n += frame(out + n, 5 + body, 0, 0x1, 1); /* END_STREAM */
    uint8_t *m = out + n;
    m[0] = 0, m[1] = 0, m[2] = 0, m[3] = 0, m[4] = (uint8_t)body;
    m[5] = 0x0a, m[6] = (uint8_t)dlen;
    memcpy(m + 7, dir, dlen);
    m[7 + dlen] = 0x10, m[8 + dlen] = 0x01;
    n += 5 + body;
    if (io(h, true, out, (DWORD)n, 10000) != (long)n)
        return printf("FAIL %s: writing the call\n", path), 1;
    static h2scan sc;
    while (sc.ended == 0) {
        long got = io(h, false, sc.buf + sc.len, (DWORD)(sizeof(sc.buf) - sc.len), 60000);
        if (got <= 0)
            return printf("FAIL %s: no answer\n", path), 1;
        sc.len += (size_t)got;
        scan(&sc);
    }
    printf("answered: Rmdir %s ended its stream; now silent for %ld s\n", dir, secs);
    fflush(stdout);
    Sleep((DWORD)secs * 1000);
    return 0;
}

static int flood(HANDLE h, const char *path, long calls)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                  "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
    if (io(h, true, (void *)preface, sizeof(preface) - 1, 10000) != (long)sizeof(preface) - 1)
        return printf("FAIL %s: writing the preface\n", path), 1;
    /* In waves of 90 (55 KB of DATA): within the 64 KiB flow-control
     * window, which the server reopens (WINDOW_UPDATE) as it reads a wave,
     * while its output can still be written. */
    static uint8_t wave[90 * 800];
    long sent = 0;
    while (sent < calls) {
        size_t n = 0;
        for (int k = 0; k < 90 && sent < calls; k++, sent++)
            n += path_exists_call(wave + n, (uint32_t)(2 * sent + 1));
        if (io(h, true, wave, (DWORD)n, 10000) != (long)n)
            return printf("FAIL %s: writing calls (%ld sent)\n", path, sent), 1;
        Sleep(300); /* the server reads and answers the wave */
    }
    Sleep(1000); /* nothing read yet: the answers wait in the pipe and the server */
    static h2scan sc;
    ULONGLONG quiet_until = GetTickCount64() + 10000;
    while (sc.ended + sc.refused < calls && GetTickCount64() < quiet_until) {
        long n = io(h, false, sc.buf + sc.len, (DWORD)(sizeof(sc.buf) - sc.len), 10000);
        if (n <= 0)
            break;
        sc.len += (size_t)n;
        sc.total += n;
        scan(&sc);
        quiet_until = GetTickCount64() + 10000;
    }
    bool ok = sc.ended + sc.refused == calls && sc.ended > 0;
    printf("%s: flood %s: %ld calls sent before reading: %ld answered, %ld refused (RST_STREAM: "
           "beyond the server's MAX_CONCURRENT_STREAMS while it could not write), %lld bytes\n",
           ok ? "PASS" : "FAIL", path, calls, sc.ended, sc.refused, sc.total);
    if (!ok)
        for (int k = 0; k < 10; k++)
            printf("  frames of type %d: %ld\n", k, sc.types[k]);
    return ok ? 0 : 1;
}

/* PathExists(path) on stream id, as path_exists_call (at most 700 bytes). */
static size_t short_call(uint8_t *out, uint32_t id, const char *path)
{
    static const uint8_t hpack[] = {
        0x83, 0x86, /* :method POST, :scheme http */
        0x04, 25,   '/', 'v', '1', '.', 'F', 'i', 'l', 'e', 's', 'y', 's', 't',
        'e',  'm',  '/', 'P', 'a', 't', 'h', 'E', 'x', 'i', 's', 't', 's', /* :path */
        0x01, 9,    'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't',           /* :authority */
        0x0f, 0x10, 16,  'a', 'p', 'p', 'l', 'i', 'c', 'a', 't', 'i', 'o', 'n',
        '/',  'g',  'r', 'p', 'c', /* content-type */
        0x00, 2,    't', 'e', 8,   't', 'r', 'a', 'i', 'l', 'e', 'r', 's'};
    size_t plen = strlen(path);
    size_t n = frame(out, sizeof(hpack), 1, 0x4, id); /* END_HEADERS */
    memcpy(out + n, hpack, sizeof(hpack));
    n += sizeof(hpack);
    n += frame(out + n, 5 + 2 + plen, 0, 0x1, id); /* END_STREAM */
    uint8_t *m = out + n;
    m[0] = 0, m[1] = 0, m[2] = 0, m[3] = 0, m[4] = (uint8_t)(2 + plen);
    m[5] = 0x0a, m[6] = (uint8_t)plen;
    memcpy(m + 7, path, plen);
    return n + 7 + plen;
}

static int stall(const wchar_t *wpath, const char *path, long conns, long calls, long secs,
                 const char *target)
{
    if (strlen(target) > 120 || calls < 1 || calls > 100000 || conns < 1 || conns > 4000)
        return printf("FAIL: -stall arguments out of range\n"), 2;
    static const char hello[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                "\x00\x00\x06\x04\x00\x00\x00\x00\x00" /* SETTINGS */
                                "\x00\x04\x00\x00\x00\x00";            /* INITIAL_WINDOW_SIZE 0 */
    size_t cap = sizeof(hello) + (size_t)calls * 256;
    uint8_t *buf = malloc(cap);
    HANDLE *hs = calloc((size_t)conns, sizeof(*hs));
    if (buf == NULL || hs == NULL)
        return printf("FAIL: out of memory\n"), 1;
    memcpy(buf, hello, sizeof(hello) - 1);
    size_t n = sizeof(hello) - 1;
    for (long k = 0; k < calls; k++)
        n += short_call(buf + n, (uint32_t)(2 * k + 1), target);
    int rc = 0;
    long opened = 0;
    for (; opened < conns; opened++) {
        HANDLE h = INVALID_HANDLE_VALUE;
        for (int tries = 0; tries < 200 && h == INVALID_HANDLE_VALUE; tries++) {
            WaitNamedPipeW(wpath, 2000);
            h = CreateFileW(wpath, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                            FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS,
                            NULL);
            if (h == INVALID_HANDLE_VALUE && GetLastError() != ERROR_PIPE_BUSY)
                break;
        }
        if (h == INVALID_HANDLE_VALUE) {
            printf("FAIL %s: connection %ld: error %lu\n", path, opened + 1, GetLastError());
            rc = 1;
            break;
        }
        hs[opened] = h;
        /* The server may refuse calls and end a connection that reads
         * nothing: a short or failed write is not an error here. */
        io(h, true, buf, (DWORD)n, 10000);
    }
    printf("stalled: %ld connections, %ld calls each (%zu bytes), held %ld s\n", opened, calls, n,
           secs);
    fflush(stdout);
    Sleep((DWORD)secs * 1000);
    for (long k = 0; k < opened; k++)
        CloseHandle(hs[k]);
    free(hs);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    bool absent = false, h2 = false;
    long hold_ms = 0, churn_ms = 0, flood_calls = 0, silent_secs = 0;
    long stall_conns = 0, stall_calls = 0, stall_secs = 0;
    const char *silent_dir = NULL, *stall_path = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-absent") == 0)
            absent = true;
        else if (strcmp(argv[i], "-h2") == 0)
            h2 = true;
        else if (strcmp(argv[i], "-hold") == 0 && i + 1 < argc)
            hold_ms = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-churn") == 0 && i + 1 < argc)
            churn_ms = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-flood") == 0 && i + 1 < argc)
            flood_calls = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-stall") == 0 && i + 4 < argc) {
            stall_conns = strtol(argv[++i], NULL, 10);
            stall_calls = strtol(argv[++i], NULL, 10);
            stall_secs = strtol(argv[++i], NULL, 10);
            stall_path = argv[++i];
        } else if (strcmp(argv[i], "-silent-rmdir") == 0 && i + 2 < argc) {
            silent_dir = argv[++i];
            silent_secs = strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: pipecheck [-absent] [-h2] [-hold MS] [-churn MS] [-flood N] "
                            "[-silent-rmdir DIR SECS] [-stall CONNS CALLS SECS PATH] "
                            "[NAME...]\n");
            return 2;
        }
    }
    const char *const *names = (const char *const *)argv + i;
    int n = argc - i;
    if (n == 0) {
        names = upstream;
        n = (int)(sizeof(upstream) / sizeof(upstream[0]));
    }
    if (n < 1)
        return 2;
    if (churn_ms > 0)
        return churn(names[0], churn_ms);
    HANDLE *open = calloc((size_t)n, sizeof(*open));
    if (open == NULL)
        return 1;
    int failures = 0;
    for (int k = 0; k < n; k++) {
        char path[512];
        const char *name = names[k];
        if (strncmp(name, "\\\\.\\pipe\\", 9) == 0)
            snprintf(path, sizeof(path), "%s", name);
        else
            snprintf(path, sizeof(path), "\\\\.\\pipe\\%s", name);
        wchar_t wpath[512];
        if (MultiByteToWideChar(CP_UTF8, 0, path, -1, wpath, 512) == 0) {
            printf("FAIL %s: bad name\n", name);
            failures++;
            continue;
        }
        if (stall_path != NULL) {
            free(open);
            return stall(wpath, path, stall_conns, stall_calls, stall_secs, stall_path);
        }
        HANDLE h = INVALID_HANDLE_VALUE;
        DWORD err = 0;
        for (int tries = 0; tries < 200; tries++) { /* as go-winio: retry while busy */
            WaitNamedPipeW(wpath, 2000);
            h = CreateFileW(wpath, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                            FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS,
                            NULL);
            err = GetLastError();
            if (h != INVALID_HANDLE_VALUE || err != ERROR_PIPE_BUSY)
                break;
            Sleep(10);
        }
        if (h == INVALID_HANDLE_VALUE) {
            if (absent) {
                printf("ok   %s absent (error %lu)\n", path, err);
            } else {
                printf("FAIL %s: error %lu\n", path, err);
                failures++;
            }
            continue;
        }
        if (absent) {
            printf("FAIL %s: exists\n", path);
            failures++;
            CloseHandle(h);
            continue;
        }
        if (flood_calls > 0 || silent_dir != NULL) {
            int rc = silent_dir != NULL ? silent_rmdir(h, path, silent_dir, silent_secs)
                                        : flood(h, path, flood_calls);
            CloseHandle(h);
            free(open);
            return rc;
        }
        if (h2 && !check_h2(h, path)) {
            failures++;
            CloseHandle(h);
            continue;
        }
        printf("ok   %s\n", path);
        fflush(stdout); /* a caller may wait for these lines while we hold */
        open[k] = h;
    }
    if (hold_ms > 0)
        Sleep((DWORD)hold_ms);
    for (int k = 0; k < n; k++)
        if (open[k] != NULL)
            CloseHandle(open[k]);
    free(open);
    printf("%s: %d of %d failed\n", failures == 0 ? "PASS" : "FAIL", failures, n);
    return failures == 0 ? 0 : 1;
}
