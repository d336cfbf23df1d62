/* pipealarm.c - see pipealarm.h. */
#include "service/pipealarm.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

#define NAME_MAX_LEN 96

struct cp_pipealarm {
    size_t n;
    char (*name)[NAME_MAX_LEN];
    atomic_ulong *count;
    cp_pipealarm_sink_fn sink;
    void *sink_ctx;
};

/* "csi-proxy-smb-v1" of "\\.\pipe\csi-proxy-smb-v1". */
static const char *bare(const char *pipe)
{
    static const char prefix[] = "\\\\.\\pipe\\";
    return strncmp(pipe, prefix, sizeof(prefix) - 1) == 0 ? pipe + sizeof(prefix) - 1 : pipe;
}

cp_pipealarm *cp_pipealarm_new(const char *const *pipes, size_t n, cp_pipealarm_sink_fn sink,
                               void *sink_ctx)
{
    cp_pipealarm *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->name = calloc(n > 0 ? n : 1, sizeof(*a->name));
    a->count = calloc(n > 0 ? n : 1, sizeof(*a->count));
    if (a->name == NULL || a->count == NULL) {
        cp_pipealarm_free(a);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(a->name[i], sizeof(a->name[i]), "%s", bare(pipes[i]));
        atomic_init(&a->count[i], 0);
    }
    a->n = n;
    a->sink = sink;
    a->sink_ctx = sink_ctx;
    return a;
}

void cp_pipealarm_message(const char *pipe, unsigned long reported, unsigned long ours, char *buf,
                          size_t cap)
{
    snprintf(buf, cap,
             "pipe \\\\.\\pipe\\%s: a foreign server instance: the system counts %lu instances "
             "of it, csi-proxy made %lu; another process created its own and may receive the "
             "calls of clients that connect to it (requests, passwords, CHAP secrets) and answer "
             "them. Only a caller the pipe's DACL lets write can do this: find the process that "
             "holds the pipe's other server end, and let no principal of another trust call the "
             "pipe",
             bare(pipe), reported, ours);
}

void cp_pipealarm_report(void *ctx, const char *pipe, unsigned long reported, unsigned long ours)
{
    cp_pipealarm *a = ctx;
    const char *name = bare(pipe);
    for (size_t i = 0; a != NULL && i < a->n; i++)
        if (strcmp(a->name[i], name) == 0)
            atomic_fetch_add(&a->count[i], 1);
    char line[768];
    cp_pipealarm_message(name, reported, ours, line, sizeof(line));
    CP_LOG_ERROR("%s", line);
    if (a != NULL && a->sink != NULL)
        a->sink(a->sink_ctx, name, line);
}

void cp_pipealarm_collect(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx)
{
    cp_pipealarm *a = ctx;
    for (size_t i = 0; i < a->n; i++)
        emit(emit_ctx, a->name[i], (double)atomic_load(&a->count[i]));
}

void cp_pipealarm_free(cp_pipealarm *a)
{
    if (a == NULL)
        return;
    free(a->name);
    free(a->count);
    free(a);
}
