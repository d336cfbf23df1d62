/* dial.h - how the CLI reaches a csi-proxy service, per platform.
 *
 * Two implementations, picked by the build:
 *   dial_win.c   - named pipes \\.\pipe\csi-proxy-<group>-<version>
 *                  (WaitNamedPipeW while busy, overlapped ReadFile/WriteFile
 *                  so reads can time out);
 *   dial_posix.c - Unix sockets <dir>/csi-proxy-<group>-<version>.sock (the
 *                  native test build of the server).
 * Plus the clock the CLI needs (the UTF-8 command line is entry_*.c's).
 */
#ifndef CP_CLI_DIAL_H
#define CP_CLI_DIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/h2client.h"
#include "base/arena.h"
#include "base/status.h"

/* How long cp_dial_open() waits for a busy pipe to free up. */
#define CP_DIAL_BUSY_WAIT_MS 5000

typedef struct cp_dial cp_dial;

/* Where group/version is served, into *target (arena string):
 *   pipe        --pipe value or NULL. Windows: a full path (starting with
 *               two backslashes) or a bare pipe name. Native: a socket path
 *               (containing '/') or a name looked up in the socket dir; a
 *               Windows pipe path's last component also works as a name.
 *   socket_dir  --socket-dir value or NULL. Native only (default
 *               $CSI_PROXY_SOCKET_DIR); an error on Windows.
 * Returns CP_OK, or CP_E_INVALID_ARGUMENT with e saying what is missing. */
int cp_dial_resolve(cp_arena *a, const char *pipe, const char *socket_dir, const char *group,
                    const char *version, char **target, cp_error *e)
    __attribute__((warn_unused_result));

/* Connects to target. Returns CP_OK, or CP_E_UNAVAILABLE with e naming
 * the target and the system's reason (no such pipe, refused, busy for
 * longer than CP_DIAL_BUSY_WAIT_MS, access denied, ...). Caller closes
 * with cp_dial_close(). */
int cp_dial_open(const char *target, cp_dial **out, cp_error *e)
    __attribute__((warn_unused_result));

/* Whether the service has marked target's pipe as having a server
 * instance it did not make (service/pipealarm.h): true with why (cap
 * bytes) holding the service's message. Windows: the pipe's value under
 * HKLM\SOFTWARE\csi-proxy\PipeAlarms; native: never. */
bool cp_dial_alarm(const char *target, char *why, size_t cap);

/* Closes the connection; NULL is fine. */
void cp_dial_close(cp_dial *d);

/* The read/write/clock functions over d, for cp_h2c_new(). */
cp_h2c_io cp_dial_io(cp_dial *d);

/* A monotonic clock in milliseconds. */
int64_t cp_dial_now_ms(void);

/* Waits ms milliseconds (health.c's retry pause). */
void cp_dial_sleep_ms(int64_t ms);

#endif
