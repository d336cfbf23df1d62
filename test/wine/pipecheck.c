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
 *             ms (no retry on "not found"): exit 1 if it was ever missing
 *             or opened fewer than 200 times (a server that stops
 *             re-listening after such a client leaves it busy or absent)
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
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
            busy++;
        } else {
            missing++;
        }
    }
    printf("%s: churn %s: %ld opened, %ld busy, %ld missing\n",
           missing == 0 && opened >= 200 ? "PASS" : "FAIL", path, opened, busy, missing);
    return missing == 0 && opened >= 200 ? 0 : 1;
}

int main(int argc, char **argv)
{
    bool absent = false, h2 = false;
    long hold_ms = 0, churn_ms = 0;
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
        else {
            fprintf(stderr, "usage: pipecheck [-absent] [-h2] [-hold MS] [-churn MS] [NAME...]\n");
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
