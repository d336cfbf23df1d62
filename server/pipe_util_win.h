/* pipe_util_win.h - small Win32 helpers for the pipe transport and the
 * Windows main: UTF-8 <-> UTF-16 at the Win32 boundary, and the system's
 * text for an error code. Windows build only. */
#ifndef CP_PIPE_UTIL_WIN_H
#define CP_PIPE_UTIL_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stddef.h>
#include <stdint.h>

/* What the pipe transport hands its authorize hook as os_handle: the
 * connected instance and when the connect completed (FILETIME units, for
 * telling the client process from a later one that reuses its pid). When
 * it allows the caller, the hook may leave in process a handle on the
 * client process (SYNCHRONIZE access): the transport owns it from then on,
 * and refuses the connection's later calls once that process has exited
 * (the connection was handed to another process). */
typedef struct cp_pipe_client {
    HANDLE pipe;
    int64_t connected_at;
    HANDLE process; /* out; NULL when the hook leaves none */
} cp_pipe_client;

/* The current time in FILETIME units (100 ns since 1601). */
int64_t cp_win_filetime_now(void);

/* Converts NUL-terminated UTF-8 to UTF-16. Returns a malloc'd string the
 * caller frees with free(), or NULL (invalid UTF-8 or out of memory). */
wchar_t *cp_win_utf8_to_wide(const char *s);

/* Converts NUL-terminated UTF-16 to UTF-8. Returns a malloc'd string the
 * caller frees with free(), or NULL (out of memory). */
char *cp_win_wide_to_utf8(const wchar_t *w);

/* Writes the system's message for err ("All pipe instances are busy",
 * without the trailing period and line break) as UTF-8 into buf and
 * returns buf. Falls back to "error N". Leaves GetLastError() unchanged. */
const char *cp_win_errtext(DWORD err, char *buf, size_t len);

#endif
