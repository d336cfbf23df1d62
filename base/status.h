/* status.h - the project's one status type.
 *
 * 0 is OK; errors are negative. Each error names the gRPC status code a
 * client will see; cp_status_to_grpc() is the only place that mapping is
 * made. A cp_error carries a status plus a message that names the
 * operation, the object and the cause.
 */
#ifndef CP_STATUS_H
#define CP_STATUS_H

#include <stddef.h>

/* printf-style checking with C99 formats (%zu) on every target; the
 * Windows build also selects mingw's C99 printf at run time
 * (__USE_MINGW_ANSI_STDIO in the Makefile). */
#if defined(__GNUC__)
#define CP_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#else
#define CP_PRINTF(fmt, args)
#endif

typedef enum cp_status {
    CP_OK = 0,
    CP_E_CANCELLED = -1,
    CP_E_UNKNOWN = -2,
    CP_E_INVALID_ARGUMENT = -3,
    CP_E_DEADLINE_EXCEEDED = -4,
    CP_E_NOT_FOUND = -5,
    CP_E_ALREADY_EXISTS = -6,
    CP_E_PERMISSION_DENIED = -7,
    CP_E_RESOURCE_EXHAUSTED = -8,
    CP_E_FAILED_PRECONDITION = -9,
    CP_E_ABORTED = -10,
    CP_E_OUT_OF_RANGE = -11,
    CP_E_UNIMPLEMENTED = -12,
    CP_E_INTERNAL = -13,
    CP_E_UNAVAILABLE = -14,
    CP_E_DATA_LOSS = -15,
    CP_E_UNAUTHENTICATED = -16,
    /* Project-internal errors: never on the wire as such. */
    CP_E_NOMEM = -100, /* -> RESOURCE_EXHAUSTED */
    CP_E_IO = -101,    /* transport failure -> UNAVAILABLE */
} cp_status;

#define CP_ERROR_MSG_MAX 1024

typedef struct cp_error {
    int status;
    char msg[CP_ERROR_MSG_MAX];
} cp_error;

/* The gRPC status code (0..16) for a project status. */
int cp_status_to_grpc(int status);

/* Upper-case gRPC name of a status ("INVALID_ARGUMENT"). */
const char *cp_status_name(int status);

/* Sets e (if not NULL) to status and a printf-formatted message; returns
 * status so callers can write `return cp_error_set(e, ...)`. */
int cp_error_set(cp_error *e, int status, const char *fmt, ...) CP_PRINTF(3, 4);

void cp_error_clear(cp_error *e);

#endif
