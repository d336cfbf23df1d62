/* winutil_win.h - the Win32 helpers every Windows file shares: UTF-8 <-> UTF-16
 * at the Win32 boundary, the system's text for an error code, the time in
 * FILETIME units, and THE one map from a Win32 error code to a cp_status
 * (host/, service/ and cli/ all use this one; no file keeps a private
 * copy). Windows build only.
 *
 * The map follows gRPC's meaning of each code (what a caller should do):
 *   NOT_FOUND            the file, path, drive, share or service is not there
 *   ALREADY_EXISTS       the name is taken
 *   FAILED_PRECONDITION  the object is in the wrong state for the call (a
 *                        directory that is not empty, not a reparse point, a
 *                        service that is disabled or being deleted): retrying
 *                        unchanged does not help
 *   UNAVAILABLE          transient: another handle holds a sharing mode or a
 *                        lock, the device is not ready (ERROR_NOT_READY: media
 *                        coming online), the service database is locked:
 *                        retry later
 *   RESOURCE_EXHAUSTED   the disk is full, memory or a buffer ran out
 *   PERMISSION_DENIED    access denied, privilege not held, write-protected
 *   INVALID_ARGUMENT     a name or parameter Windows refuses
 *   DEADLINE_EXCEEDED    the service did not answer in time
 *   UNIMPLEMENTED        the function or request is not supported here
 *   UNKNOWN              anything else (the message keeps the number)
 * Codes of a component's own (the iSCSI initiator's ISDSC_* codes) are
 * mapped by that component, which then words the message through
 * cp_win_error_as.
 */
#ifndef CP_WINAPI_WINUTIL_H
#define CP_WINAPI_WINUTIL_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* Longest object (path, volume, service name) shown whole in a message;
 * longer ones keep their first CP_WIN_OBJECT_HEAD and last
 * CP_WIN_OBJECT_TAIL bytes around "...", cut on character boundaries, so
 * the cause always fits. */
#define CP_WIN_OBJECT_MAX 400
#define CP_WIN_OBJECT_HEAD 200
#define CP_WIN_OBJECT_TAIL 150

/* The current time in FILETIME units (100 ns since 1601), to the
 * microsecond (the precise clock, not the clock tick). */
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

/* cp_win_errtext, returning true when the system has a text for err (false:
 * buf holds "error N"). */
bool cp_win_systext(DWORD err, char *buf, size_t len);

/* The cp_status for a Win32 error code (the table above). */
int cp_win_status(DWORD err);

/* Sets e to cp_win_status(err) and "<api> <object>: <system text> (error
 * <n>)" (object cut as said above; "" leaves it out). Returns the status.
 * Leaves the thread's last error set to err. */
int cp_win_error(cp_error *e, DWORD err, const char *api, const char *object);

/* cp_win_error's message with a given status and text, for codes the map
 * above does not know. Returns status. */
int cp_win_error_as(cp_error *e, int status, DWORD err, const char *text, const char *api,
                    const char *object);

#endif
