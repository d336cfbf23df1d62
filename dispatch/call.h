/* call.h - one RPC's context: its arena, its error, its caller.
 * Created by the dispatcher for each request; handlers see it through the
 * accessors in method.h. */
#ifndef CP_CALL_H
#define CP_CALL_H

#include <stdint.h>

#include "base/arena.h"
#include "dispatch/method.h"
#include "base/status.h"

struct cp_call {
    cp_arena *arena;
    void *ctx;
    const char *path;
    uint32_t peer_pid;
    cp_waiter *waiter; /* set by the worker pool's job; NULL otherwise */
    /* The request as dispatch decoded it (a ProtobufCMessage in arena),
     * for the audit record; NULL before. */
    const void *req_msg;
    cp_error err;
    char *note; /* cp_call_note: what else the call changed; NULL none */
};

/* Returns NULL when out of memory. path is copied. Free with cp_call_free. */
cp_call *cp_call_new(void *ctx, const char *path, uint32_t peer_pid);
void cp_call_free(cp_call *call);

/* The error recorded by cp_call_fail (status CP_OK when none). */
const cp_error *cp_call_error(const cp_call *call);

/* What cp_call_note recorded ("" when nothing). */
const char *cp_call_noted(const cp_call *call);

#endif
