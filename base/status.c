/* status.c - project status codes, their gRPC mapping, error messages. */
#include "base/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cp_status_to_grpc(int status)
{
    if (status == CP_OK)
        return 0;
    if (status == CP_E_NOMEM)
        return 8; /* RESOURCE_EXHAUSTED */
    if (status == CP_E_IO)
        return 14; /* UNAVAILABLE */
    if (status <= -1 && status >= -16)
        return -status;
    return 2; /* UNKNOWN */
}

const char *cp_status_name(int status)
{
    static const char *const names[] = {
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    };
    return names[cp_status_to_grpc(status)];
}

int cp_error_set(cp_error *e, int status, const char *fmt, ...)
{
    if (e == NULL)
        return status;
    e->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return status;
}

void cp_error_clear(cp_error *e)
{
    e->status = CP_OK;
    e->msg[0] = '\0';
}
