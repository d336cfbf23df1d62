/* dial_win.c - connect to csi-proxy's named pipes.
 *
 * The pipe is opened the way go-winio's DialPipe (what CSI node plugins
 * use) opens it: GENERIC_READ|GENERIC_WRITE, overlapped, anonymous
 * impersonation level, so the server sees what it sees from real clients.
 * Overlapped I/O is used only so a read can give up at a deadline.
 */
#include "client/dial.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "base/winutil_win.h"
#include "client/alarmkey.h"

struct cp_dial {
    HANDLE h;
    HANDLE ev; /* manual-reset event for overlapped I/O */
    char *target;
};

/* Sets e from a Win32 error code captured by the caller. */
static int win_error(cp_error *e, int status, DWORD err, const char *what, const char *target)
{
    char msg[512];
    return cp_error_set(e, status, "%s %s: %s (error %lu)", what, target,
                        cp_win_errtext(err, msg, sizeof(msg)), (unsigned long)err);
}

int cp_dial_resolve(cp_arena *a, const char *pipe, const char *socket_dir, const char *group,
                    const char *version, char **target, cp_error *e)
{
    if (socket_dir != NULL)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "--socket-dir is for the native test build; on Windows use --pipe");
    char *p;
    if (pipe == NULL)
        p = cp_arena_printf(a, "\\\\.\\pipe\\csi-proxy-%s-%s", group, version);
    else if ((pipe[0] == '\\' && pipe[1] == '\\') || (pipe[0] == '/' && pipe[1] == '/'))
        p = cp_arena_strdup(a, pipe);
    else
        p = cp_arena_printf(a, "\\\\.\\pipe\\%s", pipe);
    if (p == NULL)
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    *target = p;
    return CP_OK;
}

int cp_dial_open(const char *target, cp_dial **out, cp_error *e)
{
    cp_dial *d = calloc(1, sizeof(*d));
    WCHAR *name = NULL;
    int rc;
    if (d == NULL || (d->target = _strdup(target)) == NULL) {
        rc = cp_error_set(e, CP_E_NOMEM, "out of memory");
        goto fail;
    }
    d->h = INVALID_HANDLE_VALUE;
    if ((name = cp_win_utf8_to_wide(target)) == NULL) {
        rc = cp_error_set(e, CP_E_UNAVAILABLE, "cannot connect to %s: not valid UTF-8", target);
        goto fail;
    }
    d->ev = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (d->ev == NULL) {
        DWORD err = GetLastError();
        rc = win_error(e, CP_E_UNAVAILABLE, err, "cannot connect to", target);
        goto fail;
    }
    ULONGLONG deadline = GetTickCount64() + CP_DIAL_BUSY_WAIT_MS;
    bool waited = false;
    for (;;) {
        d->h = CreateFileW(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                           FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS, NULL);
        if (d->h != INVALID_HANDLE_VALUE)
            break;
        DWORD err = GetLastError();
        /* Busy: every instance is taken. Once we have waited, "not found"
         * can be the gap while the server posts the next instance. */
        if (err != ERROR_PIPE_BUSY && !(waited && err == ERROR_FILE_NOT_FOUND)) {
            rc = win_error(e, CP_E_UNAVAILABLE, err, "cannot connect to", target);
            goto fail;
        }
        ULONGLONG now = GetTickCount64();
        if (now >= deadline) {
            if (err == ERROR_PIPE_BUSY)
                rc = cp_error_set(e, CP_E_UNAVAILABLE,
                                  "cannot connect to %s: all pipe instances stayed busy for %d ms",
                                  target, CP_DIAL_BUSY_WAIT_MS);
            else
                rc = win_error(e, CP_E_UNAVAILABLE, err, "cannot connect to", target);
            goto fail;
        }
        /* WaitNamedPipeW's own result is not trusted (it fails in that gap
         * too, with varying codes): CreateFileW decides; a short sleep
         * keeps a failing wait from spinning. */
        if (!WaitNamedPipeW(name, (DWORD)(deadline - now)))
            Sleep(10);
        waited = true;
    }
    free(name);
    *out = d;
    return CP_OK;
fail:
    free(name);
    cp_dial_close(d);
    return rc;
}

bool cp_dial_alarm(const char *target, char *why, size_t cap)
{
    static const char prefix[] = "\\\\.\\pipe\\";
    if (cap > 0)
        why[0] = '\0';
    const char *name =
        strncmp(target, prefix, sizeof(prefix) - 1) == 0 ? target + sizeof(prefix) - 1 : target;
    wchar_t *wname = cp_win_utf8_to_wide(name);
    wchar_t text[1024];
    DWORD size = sizeof(text);
    /* "RegGetValueW function (winreg.h)", Microsoft Learn: RRF_RT_REG_SZ,
     * the string NUL-terminated; ERROR_FILE_NOT_FOUND when the key or the
     * value is missing (no alarm). */
    LSTATUS st = wname == NULL ? ERROR_NOT_ENOUGH_MEMORY
                               : RegGetValueW(HKEY_LOCAL_MACHINE, CP_PIPEALARM_REG_KEY, wname,
                                              RRF_RT_REG_SZ, NULL, text, &size);
    free(wname);
    if (st != ERROR_SUCCESS && st != ERROR_MORE_DATA)
        return false;
    if (st == ERROR_MORE_DATA)
        wcscpy(text, L"a server instance csi-proxy did not make");
    char *u8 = cp_win_wide_to_utf8(text);
    snprintf(why, cap, "%s", u8 != NULL ? u8 : "a server instance csi-proxy did not make");
    free(u8);
    return true;
}

void cp_dial_close(cp_dial *d)
{
    if (d == NULL)
        return;
    if (d->h != NULL && d->h != INVALID_HANDLE_VALUE)
        CloseHandle(d->h);
    if (d->ev != NULL)
        CloseHandle(d->ev);
    free(d->target);
    free(d);
}

static int dial_write(void *ctx, const uint8_t *buf, size_t len, cp_error *e)
{
    cp_dial *d = ctx;
    while (len > 0) {
        DWORD chunk = len > 0x10000000 ? 0x10000000 : (DWORD)len, n = 0;
        OVERLAPPED ov = {.hEvent = d->ev};
        ResetEvent(d->ev);
        if (!WriteFile(d->h, buf, chunk, NULL, &ov)) {
            DWORD err = GetLastError();
            if (err != ERROR_IO_PENDING)
                return win_error(e, CP_E_IO, err, "write to", d->target);
        }
        if (!GetOverlappedResult(d->h, &ov, &n, TRUE)) {
            DWORD err = GetLastError();
            return win_error(e, CP_E_IO, err, "write to", d->target);
        }
        buf += n;
        len -= n;
    }
    return CP_OK;
}

static bool is_eof(DWORD err)
{
    return err == ERROR_BROKEN_PIPE || err == ERROR_PIPE_NOT_CONNECTED || err == ERROR_NO_DATA;
}

static long dial_read(void *ctx, uint8_t *buf, size_t cap, int64_t timeout_ms, cp_error *e)
{
    cp_dial *d = ctx;
    DWORD want = cap > 0x10000000 ? 0x10000000 : (DWORD)cap, n = 0;
    OVERLAPPED ov = {.hEvent = d->ev};
    ResetEvent(d->ev);
    if (!ReadFile(d->h, buf, want, NULL, &ov)) {
        DWORD err = GetLastError();
        if (is_eof(err))
            return 0;
        if (err != ERROR_IO_PENDING && err != ERROR_MORE_DATA)
            return win_error(e, CP_E_IO, err, "read from", d->target);
        if (err == ERROR_IO_PENDING) {
            DWORD wait = timeout_ms < 0             ? INFINITE
                         : timeout_ms >= 0x7fffffff ? 0x7ffffffe
                                                    : (DWORD)timeout_ms;
            if (WaitForSingleObject(d->ev, wait) == WAIT_TIMEOUT) {
                CancelIoEx(d->h, &ov);
                /* The read may have completed just before the cancel. */
                if (GetOverlappedResult(d->h, &ov, &n, TRUE) && n > 0)
                    return (long)n;
                return CP_E_DEADLINE_EXCEEDED;
            }
        }
    }
    if (!GetOverlappedResult(d->h, &ov, &n, TRUE)) {
        DWORD err = GetLastError();
        if (is_eof(err))
            return 0;
        if (err != ERROR_MORE_DATA) /* message-mode pipe: the rest comes next read */
            return win_error(e, CP_E_IO, err, "read from", d->target);
    }
    return (long)n;
}

int64_t cp_dial_now_ms(void)
{
    return (int64_t)GetTickCount64();
}

void cp_dial_sleep_ms(int64_t ms)
{
    Sleep((DWORD)ms);
}

static int64_t dial_now(void *ctx)
{
    (void)ctx;
    return cp_dial_now_ms();
}

cp_h2c_io cp_dial_io(cp_dial *d)
{
    return (cp_h2c_io){.write = dial_write, .read = dial_read, .now_ms = dial_now, .ctx = d};
}
