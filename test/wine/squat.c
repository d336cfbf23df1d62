/* squat.c - Wine test tool: a second process that makes its own server
 * instance of a pipe csi-proxy serves, as a caller allowed to write to it
 * can (on a pipe FILE_APPEND_DATA is FILE_CREATE_PIPE_INSTANCE: "Named
 * Pipe Security and Access Rights", Microsoft Learn), and waits for a
 * client to land on it.
 *
 *   squat NAME MS
 *       creates an instance of \\.\pipe\NAME (not the first: the pipe must
 *       exist), prints "instances N" (GetNamedPipeHandleStateW's count right
 *       after), listens up to MS ms and prints "caught a client" when one
 *       connects to this instance (then keeps listening with a new
 *       instance until MS is over), then "done"; exit 0, 1 on failure.
 *   squat -linger
 *       what the instance count does when a server closes a connected
 *       instance before its client does: prints the counts seen (a fact of
 *       the platform the service's check is built on).
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

static DWORD count(HANDLE h)
{
    DWORD n = 0;
    if (!GetNamedPipeHandleStateW(h, NULL, &n, NULL, NULL, NULL, 0))
        return 0;
    return n;
}

static HANDLE instance(const wchar_t *path, DWORD flags)
{
    return CreateNamedPipeW(path, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | flags,
                            PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT,
                            PIPE_UNLIMITED_INSTANCES, 4096, 4096, 50, NULL);
}

static int squat(const wchar_t *name, DWORD ms)
{
    wchar_t path[300];
    swprintf(path, sizeof(path) / sizeof(path[0]), L"\\\\.\\pipe\\%ls", name);
    ULONGLONG until = GetTickCount64() + ms;
    HANDLE ev = CreateEventW(NULL, TRUE, FALSE, NULL);
again:;
    HANDLE h = instance(path, 0);
    if (h == INVALID_HANDLE_VALUE) {
        printf("CreateNamedPipeW: error %lu\n", (unsigned long)GetLastError());
        return 1;
    }
    printf("instances %lu\n", (unsigned long)count(h));
    fflush(stdout);
    OVERLAPPED ov = {0};
    ov.hEvent = ev;
    ResetEvent(ev);
    BOOL got = ConnectNamedPipe(h, &ov);
    DWORD err = got ? 0 : GetLastError();
    if (!got && err == ERROR_IO_PENDING) {
        ULONGLONG now = GetTickCount64();
        DWORD w = WaitForSingleObject(ev, now < until ? (DWORD)(until - now) : 0);
        got = w == WAIT_OBJECT_0;
        if (!got)
            CancelIoEx(h, &ov);
        DWORD n;
        GetOverlappedResult(h, &ov, &n, TRUE);
    } else if (err == ERROR_PIPE_CONNECTED) {
        got = TRUE;
    }
    if (got) {
        printf("caught a client\n");
        fflush(stdout);
        CloseHandle(h);
        if (GetTickCount64() < until)
            goto again;
    } else {
        CloseHandle(h);
    }
    printf("done\n");
    return 0;
}

static int linger(void)
{
    const wchar_t *path = L"\\\\.\\pipe\\csi-proxy-squat-linger";
    HANDLE a = instance(path, FILE_FLAG_FIRST_PIPE_INSTANCE);
    if (a == INVALID_HANDLE_VALUE)
        return 1;
    HANDLE c = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    HANDLE b = instance(path, 0);
    printf("server a + client + server b: %lu\n", (unsigned long)count(b));
    CloseHandle(a);
    printf("server a closed, its client open: %lu\n", (unsigned long)count(b));
    CloseHandle(c);
    printf("and its client closed: %lu\n", (unsigned long)count(b));
    CloseHandle(b);
    return 0;
}

int wmain(int argc, wchar_t **argv)
{
    if (argc == 2 && wcscmp(argv[1], L"-linger") == 0)
        return linger();
    if (argc == 3)
        return squat(argv[1], (DWORD)wcstoul(argv[2], NULL, 10));
    fprintf(stderr, "usage: squat NAME MS | squat -linger\n");
    return 2;
}
