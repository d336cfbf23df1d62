/* pipealarm.h - what the service does when a served pipe has a server
 * instance it did not make (the transport's foreign_instance): another
 * process created its own instance of the pipe, and clients that land on
 * it hand it their calls (SMB passwords, CHAP secrets) and take its
 * answers. csi-proxy cannot prevent that (any caller a pipe's DACL lets
 * write may create an instance: sddl.h, CP_SDDL_CALLER_RIGHTS), so it is
 * an attack to be seen: an error in the log naming the pipe and the
 * counts, the sink (Windows: an Event Log error, and the pipe marked for
 * `csi-proxy-cli health` under CP_PIPEALARM_REG_KEY), and a counter per
 * pipe, CP_PIPEALARM_METRIC{pipe="csi-proxy-smb-v1"}. Portable C; the
 * Windows sink is pipealarm_win.c. */
#ifndef CP_PIPEALARM_H
#define CP_PIPEALARM_H

#include <stddef.h>

#include "client/alarmkey.h" /* CP_PIPEALARM_REG_KEY */
#include "metrics/metrics.h"

#define CP_PIPEALARM_METRIC "csi_proxy_pipe_foreign_instances_total"
#define CP_PIPEALARM_HELP                                                                          \
    "Server instances of a served pipe that csi-proxy did not make, seen and reported (another "   \
    "process may be receiving the pipe's calls), by pipe."

/* Where a report goes besides the log: pipe is the bare name
 * ("csi-proxy-smb-v1"), line the message. */
typedef void (*cp_pipealarm_sink_fn)(void *ctx, const char *pipe, const char *line);

typedef struct cp_pipealarm cp_pipealarm;

/* For the n pipes served (bare names or \\.\pipe\ paths; copied), each
 * counted from 0. sink may be NULL. NULL when out of memory. */
cp_pipealarm *cp_pipealarm_new(const char *const *pipes, size_t n, cp_pipealarm_sink_fn sink,
                               void *sink_ctx);

/* The transport's foreign_instance (ctx: the cp_pipealarm): counts it,
 * logs the error, hands the message to the sink. Thread-safe. */
void cp_pipealarm_report(void *ctx, const char *pipe, unsigned long reported, unsigned long ours);

/* Formats the message for pipe into buf (cap bytes). */
void cp_pipealarm_message(const char *pipe, unsigned long reported, unsigned long ours, char *buf,
                          size_t cap);

/* A cp_metrics_collect_fn: one sample per pipe, label pipe. */
void cp_pipealarm_collect(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx);

void cp_pipealarm_free(cp_pipealarm *a);

#endif
