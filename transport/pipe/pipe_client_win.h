/* pipe_client_win.h - what the pipe transport hands its authorize hook as
 * os_handle (transport.h). Windows build only. */
#ifndef CP_PIPE_CLIENT_WIN_H
#define CP_PIPE_CLIENT_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdint.h>

/* The connected instance and when the connect completed (FILETIME units,
 * cp_win_filetime_now, for telling the client process from a later one
 * that reuses its pid). When it allows the caller, the hook may leave in
 * process a handle on the client process (SYNCHRONIZE access): the
 * transport owns it from then on, and refuses the connection's later
 * calls once that process has exited (the connection was handed to
 * another process). */
typedef struct cp_pipe_client {
    HANDLE pipe;
    int64_t connected_at;
    HANDLE process; /* out; NULL when the hook leaves none */
} cp_pipe_client;

#endif
