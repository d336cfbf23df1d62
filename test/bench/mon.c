/* mon.c - the Wine-side monitor of the bench (a test tool).
 *
 *   bench-mon start [-log FILE] [-timeout MS] EXE [ARGS...]
 *       Starts EXE with CreateProcessW (stdout and stderr to FILE, default
 *       NUL), then polls the 23 csi-proxy pipes with WaitNamedPipeW (which
 *       connects nothing) until every one has an instance to open. Prints {"winpid":P,"pipes_ms":T,"pipes":N} where T is
 *       the time from just before CreateProcessW to the last pipe found.
 *       The child keeps running. Exit 1 if not all pipes came up in time.
 *   bench-mon spawn [-log FILE] EXE [ARGS...]
 *       Starts EXE and prints {"winpid":P} at once (e.g. the empty process).
 *   bench-mon spawn-exit EXE [ARGS...]
 *       Starts EXE, waits for it to exit; prints {"exit_ms":T}: what Wine
 *       itself needs to start (and end) a process.
 *   bench-mon handles WINPID
 *       Prints {"gphc":N,"handles":H,"threads":T}: N from GetProcessHandleCount
 *       on OpenProcess(WINPID) (Wine 8 answers TRUE and 0 for every process:
 *       a stub), H the process's live handles in the system handle table
 *       (NtQuerySystemInformation(SystemExtendedHandleInformation), which
 *       Wine answers from wineserver's handle tables), T its threads
 *       (SystemProcessInformation).
 *   bench-mon gone [-timeout MS]
 *       Waits until none of the 23 pipes exists; prints {"gone_ms":T}.
 *   bench-mon mark LABEL
 *       Opens \\.\pipe\bench-mark-LABEL (which does not exist): a request
 *       naming LABEL in a WINEDEBUG=+server trace, which cuts the trace into
 *       windows in wineserver's own order of requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <winternl.h>

#include "test/bench/bench_util.h"

static const char *const pipes[] = {
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
#define NPIPES ((int)(sizeof(pipes) / sizeof(pipes[0])))

/* true when \\.\pipe\name has a listening (or busy) instance. Opens it,
 * so only for the "gone" check: during start-up a connection that closes
 * at once can race the server's ConnectNamedPipe (see pipe_listening). */
static bool pipe_exists(const char *name)
{
    wchar_t path[300];
    _snwprintf(path, 300, L"\\\\.\\pipe\\%hs", name);
    HANDLE h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                           FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS, NULL);
    if (h != INVALID_HANDLE_VALUE) {
        CloseHandle(h);
        return true;
    }
    return GetLastError() == ERROR_PIPE_BUSY;
}

/* SystemExtendedHandleInformation (64): not in mingw-w64's headers. */
typedef struct xhandle {
    PVOID object;
    ULONG_PTR pid;
    ULONG_PTR handle;
    ULONG access;
    USHORT creator_back_trace_index;
    USHORT object_type_index;
    ULONG attributes;
    ULONG reserved;
} xhandle;
typedef struct xhandles {
    ULONG_PTR count;
    ULONG_PTR reserved;
    xhandle h[1];
} xhandles;

static int handles(DWORD pid)
{
    DWORD gphc = 0;
    HANDLE h = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, pid);
    if (h == NULL || !GetProcessHandleCount(h, &gphc)) {
        fprintf(stderr, "bench-mon: GetProcessHandleCount of %lu: error %lu\n", pid,
                GetLastError());
        return 1;
    }
    CloseHandle(h);
    ULONG cap = 1u << 22, got = 0;
    void *buf = NULL;
    NTSTATUS st;
    for (;;) {
        free(buf);
        if ((buf = malloc(cap)) == NULL)
            return 1;
        st = NtQuerySystemInformation((SYSTEM_INFORMATION_CLASS)64, buf, cap, &got);
        if (st != (NTSTATUS)0xC0000004L || cap >= (1u << 28)) /* INFO_LENGTH_MISMATCH */
            break;
        cap *= 4;
    }
    long live = -1;
    if (st >= 0) {
        xhandles *x = buf;
        live = 0;
        for (ULONG_PTR k = 0; k < x->count; k++)
            live += x->h[k].pid == pid;
    }
    long threads = -1;
    if (NtQuerySystemInformation(SystemProcessInformation, buf, cap, &got) >= 0) {
        SYSTEM_PROCESS_INFORMATION *p = buf;
        for (;;) {
            if ((ULONG_PTR)p->UniqueProcessId == pid)
                threads = (long)p->NumberOfThreads;
            if (p->NextEntryOffset == 0)
                break;
            p = (SYSTEM_PROCESS_INFORMATION *)((char *)p + p->NextEntryOffset);
        }
    }
    free(buf);
    printf("{\"gphc\":%lu,\"handles\":%ld,\"threads\":%ld}\n", gphc, live, threads);
    return live >= 0 ? 0 : 1;
}

/* true when \\.\pipe\name has an instance a client could open now.
 * WaitNamedPipeW connects nothing, so polling does not disturb the server
 * while it is creating its pipes. */
static bool pipe_listening(const char *name)
{
    wchar_t path[300];
    _snwprintf(path, 300, L"\\\\.\\pipe\\%hs", name);
    return WaitNamedPipeW(path, 1) != 0;
}

/* Appends s to the command line, quoted the way CommandLineToArgvW
 * undoes. */
static bool append_arg(wchar_t *cmd, size_t cap, const char *s)
{
    size_t n = wcslen(cmd);
    wchar_t w[2048];
    if (MultiByteToWideChar(CP_UTF8, 0, s, -1, w, 2048) == 0)
        return false;
    if (n > 0 && n + 1 < cap)
        cmd[n++] = L' ';
    if (n + 1 >= cap)
        return false;
    cmd[n++] = L'"';
    size_t bs = 0;
    for (const wchar_t *p = w; *p; p++) {
        if (n + 2 * bs + 4 >= cap)
            return false;
        if (*p == L'\\') {
            bs++;
            continue;
        }
        if (*p == L'"') {
            for (size_t i = 0; i < 2 * bs + 1; i++)
                cmd[n++] = L'\\';
        } else {
            for (size_t i = 0; i < bs; i++)
                cmd[n++] = L'\\';
        }
        bs = 0;
        cmd[n++] = *p;
    }
    if (n + 2 * bs + 2 >= cap)
        return false;
    for (size_t i = 0; i < 2 * bs; i++)
        cmd[n++] = L'\\';
    cmd[n++] = L'"';
    cmd[n] = 0;
    return true;
}

static bool spawn(int argc, char **argv, const char *log, PROCESS_INFORMATION *pi)
{
    static wchar_t cmd[32768];
    cmd[0] = 0;
    for (int i = 0; i < argc; i++)
        if (!append_arg(cmd, 32768, argv[i]))
            return false;
    wchar_t wlog[1024];
    MultiByteToWideChar(CP_UTF8, 0, log, -1, wlog, 1024);
    /* Only the two handles made here go to the child: were our own
     * stdout inherited, wineserver would keep the pipe of whoever reads
     * our output open for as long as the child lives. */
    static const DWORD std_ids[] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
    for (int i = 0; i < 3; i++) {
        HANDLE h = GetStdHandle(std_ids[i]);
        if (h != NULL && h != INVALID_HANDLE_VALUE)
            SetHandleInformation(h, HANDLE_FLAG_INHERIT, 0);
    }
    SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
    HANDLE out = CreateFileW(wlog, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
                             OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    HANDLE in = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
                            OPEN_EXISTING, 0, NULL);
    STARTUPINFOW si = {.cb = sizeof(si),
                       .dwFlags = STARTF_USESTDHANDLES,
                       .hStdInput = in,
                       .hStdOutput = out,
                       .hStdError = out};
    BOOL ok = CreateProcessW(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, pi);
    DWORD err = GetLastError();
    if (out != INVALID_HANDLE_VALUE)
        CloseHandle(out);
    if (in != INVALID_HANDLE_VALUE)
        CloseHandle(in);
    if (!ok)
        fprintf(stderr, "bench-mon: CreateProcessW %s: error %lu\n", argv[0], err);
    return ok;
}

int main(int argc, char **argv)
{
    const char *log = "NUL";
    long timeout_ms = 10000;
    if (argc < 2)
        goto usage;
    const char *mode = argv[1];
    int i = 2;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "-log") == 0)
            log = argv[i + 1];
        else if (strcmp(argv[i], "-timeout") == 0)
            timeout_ms = bu_arg_long(argv[i + 1], "-timeout");
        else
            goto usage;
    }
    PROCESS_INFORMATION pi;
    if (strcmp(mode, "start") == 0 && i < argc) {
        bool seen[NPIPES] = {0};
        int found = 0;
        int64_t t0 = bu_now_ns();
        if (!spawn(argc - i, argv + i, log, &pi))
            return 1;
        int64_t last = t0, limit = t0 + (int64_t)timeout_ms * 1000000;
        while (found < NPIPES && bu_now_ns() < limit) {
            for (int k = 0; k < NPIPES; k++) {
                if (!seen[k] && pipe_listening(pipes[k])) {
                    seen[k] = true;
                    found++;
                    last = bu_now_ns();
                }
            }
            if (found < NPIPES) {
                if (WaitForSingleObject(pi.hProcess, 0) == WAIT_OBJECT_0)
                    break; /* it exited: no point waiting */
                Sleep(1);
            }
        }
        printf("{\"winpid\":%lu,\"pipes_ms\":%.1f,\"pipes\":%d}\n", pi.dwProcessId,
               (double)(last - t0) / 1e6, found);
        return found == NPIPES ? 0 : 1;
    }
    if (strcmp(mode, "spawn") == 0 && i < argc) {
        if (!spawn(argc - i, argv + i, log, &pi))
            return 1;
        printf("{\"winpid\":%lu}\n", pi.dwProcessId);
        return 0;
    }
    if (strcmp(mode, "spawn-exit") == 0 && i < argc) {
        int64_t t0 = bu_now_ns();
        if (!spawn(argc - i, argv + i, log, &pi))
            return 1;
        WaitForSingleObject(pi.hProcess, INFINITE);
        printf("{\"exit_ms\":%.1f}\n", (double)(bu_now_ns() - t0) / 1e6);
        return 0;
    }
    if (strcmp(mode, "handles") == 0 && i < argc)
        return handles((DWORD)bu_arg_long(argv[i], "WINPID"));
    if (strcmp(mode, "gone") == 0) {
        int64_t t0 = bu_now_ns(), limit = t0 + (int64_t)timeout_ms * 1000000;
        for (;;) {
            int left = 0;
            for (int k = 0; k < NPIPES; k++)
                left += pipe_exists(pipes[k]);
            if (left == 0) {
                printf("{\"gone_ms\":%.1f}\n", (double)(bu_now_ns() - t0) / 1e6);
                return 0;
            }
            if (bu_now_ns() >= limit) {
                fprintf(stderr, "bench-mon: %d pipes still there\n", left);
                return 1;
            }
            Sleep(20);
        }
    }
    if (strcmp(mode, "mark") == 0 && i < argc) {
        wchar_t path[300];
        _snwprintf(path, 300, L"\\\\.\\pipe\\bench-mark-%hs", argv[i]);
        HANDLE h = CreateFileW(path, GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
        if (h != INVALID_HANDLE_VALUE)
            CloseHandle(h);
        return 0;
    }
usage:
    fprintf(stderr,
            "usage: bench-mon start|spawn [-log FILE] [-timeout MS] EXE [ARGS...] | "
            "spawn-exit EXE [ARGS...] | handles WINPID | gone [-timeout MS] | mark LABEL\n");
    return 2;
}
