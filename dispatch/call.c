/* call.c - per-call context and the accessors handlers use. */
#include "dispatch/call.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cp_call *cp_call_new(void *ctx, const char *path, uint32_t peer_pid)
{
    cp_arena *a = cp_arena_new();
    if (a == NULL)
        return NULL;
    cp_call *call = cp_arena_alloc(a, sizeof(*call));
    if (call == NULL) {
        cp_arena_free(a);
        return NULL;
    }
    call->arena = a;
    call->ctx = ctx;
    call->path = cp_arena_strdup(a, path != NULL ? path : "");
    call->peer_pid = peer_pid;
    call->waiter = NULL;
    call->req_msg = NULL;
    call->note = NULL;
    cp_error_clear(&call->err);
    return call;
}

void cp_call_free(cp_call *call)
{
    if (call != NULL)
        cp_arena_free(call->arena); /* the call itself lives in the arena */
}

const cp_error *cp_call_error(const cp_call *call)
{
    return &call->err;
}

void *cp_call_ctx(cp_call *call)
{
    return call->ctx;
}

void *cp_call_alloc(cp_call *call, size_t n)
{
    return cp_arena_alloc(call->arena, n);
}

char *cp_call_strdup(cp_call *call, const char *s)
{
    return cp_arena_strdup(call->arena, s);
}

int cp_call_fail(cp_call *call, int status, const char *fmt, ...)
{
    call->err.status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->err.msg, sizeof(call->err.msg), fmt, ap);
    va_end(ap);
    return status;
}

void cp_call_note(cp_call *call, const char *fmt, ...)
{
    char add[256], all[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(add, sizeof(add), fmt, ap);
    va_end(ap);
    if (call->note != NULL)
        snprintf(all, sizeof(all), "%s; %s", call->note, add);
    else
        snprintf(all, sizeof(all), "%s", add);
    char *n = cp_arena_strdup(call->arena, all);
    if (n != NULL)
        call->note = n;
}

const char *cp_call_noted(const cp_call *call)
{
    return call->note != NULL ? call->note : "";
}

int cp_call_fail_error(cp_call *call, const cp_error *e)
{
    call->err = *e;
    return e->status;
}

cp_waiter *cp_call_waiter(const cp_call *call)
{
    return call->waiter;
}

uint32_t cp_call_peer_pid(const cp_call *call)
{
    return call->peer_pid;
}

const char *cp_call_path(const cp_call *call)
{
    return call->path;
}

const cp_method *cp_service_find(const cp_service_def *def, const char *name, size_t name_len)
{
    for (size_t i = 0; i < def->n_methods; i++) {
        const char *m = def->methods[i].name;
        if (strlen(m) == name_len && memcmp(m, name, name_len) == 0)
            return &def->methods[i];
    }
    return NULL;
}

bool cp_service_knows(const cp_service_def *def, const char *name, size_t name_len)
{
    if (def->svc_desc == NULL)
        return cp_service_find(def, name, name_len) != NULL;
    for (unsigned i = 0; i < def->svc_desc->n_methods; i++) {
        const char *m = def->svc_desc->methods[i].name;
        if (strlen(m) == name_len && memcmp(m, name, name_len) == 0)
            return true;
    }
    return false;
}
