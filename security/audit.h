/* audit.h - the audit trail: one record per state-changing call and per
 * refused caller, to the log (klog format, always, at any -v) and to a
 * sink (the Windows Event Log in the product). Records never hold a secret:
 * arguments are rendered by redact.h, and the whole line is scrubbed of the
 * request's secret values (a handler's error text might repeat one).
 *
 *   audit: call /v1.Filesystem/Mkdir caller=S-1-5-18 pid=4242
 *          args={"path":"C:\\var\\lib\\kubelet\\x"} result=OK duration=3ms
 *   audit: denied caller=S-1-5-21-...-1000 pid=77 group=smb pipe=csi-proxy-smb-v1: <why>
 *
 * Portable C. One cp_audit per process, made by main; thread-safe (calls
 * come from worker threads).
 */
#ifndef CP_AUDIT_H
#define CP_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/conn.h"
#include "metrics/metrics.h"

#define CP_AUDIT_LINE_MAX 4096

/* Where records go besides the log. failure: the call failed or a caller
 * was refused (a warning in the Event Log). line has no newline. */
typedef void (*cp_audit_sink_fn)(void *ctx, bool failure, const char *line);

typedef struct cp_audit cp_audit;

/* sink may be NULL (log only). NULL on out-of-memory. */
cp_audit *cp_audit_new(cp_audit_sink_fn sink, void *sink_ctx);
void cp_audit_free(cp_audit *a);

/* Formats the record for r into line (cap bytes); returns line. Exposed
 * for tests. */
const char *cp_audit_format_call(const cp_call_record *r, char *line, size_t cap);

/* Makes line valid UTF-8 in place: each byte that does not belong to a
 * well-formed sequence (a request's raw bytes, a character cut at the end)
 * becomes '?'. Returns how many were replaced. Every record passes
 * through it, so the Event Log's conversion never refuses one. */
size_t cp_audit_make_utf8(char *line);

/* cp_audit_fn for cp_conn_opts.audit: ctx is the cp_audit. */
void cp_audit_call(void *ctx, const cp_call_record *r);

/* A refused connection. */
void cp_audit_denied(cp_audit *a, const char *pipe, const char *group, uint32_t pid,
                     const char *caller, const char *why);

/* cp_metrics_collect_fn (ctx: the cp_audit): records written so far, by
 * kind: "call" (a state-changing call) and "denied" (a refused caller). */
#define CP_AUDIT_METRIC "csi_proxy_audit_records_total"
void cp_audit_collect(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx);

#endif
