/* audit.c - see audit.h. */
#include "security/audit.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <protobuf-c/protobuf-c.h>

#include "dispatch/method.h"
#include "base/log.h"
#include "base/utf8.h"
#include "security/redact.h"
#include "base/logesc.h"

struct cp_audit {
    cp_audit_sink_fn sink;
    void *sink_ctx;
    atomic_uint_fast64_t calls, denied; /* records written, for the metrics */
};

cp_audit *cp_audit_new(cp_audit_sink_fn sink, void *sink_ctx)
{
    cp_audit *a = calloc(1, sizeof(*a));
    if (a != NULL) {
        a->sink = sink;
        a->sink_ctx = sink_ctx;
    }
    return a;
}

void cp_audit_free(cp_audit *a)
{
    free(a);
}

size_t cp_audit_make_utf8(char *line)
{
    unsigned char *s = (unsigned char *)line;
    size_t n = strlen(line), bad = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = cp_utf8_decode(s + i, n - i, &cp);
        if (k == 0) {
            s[i++] = '?';
            bad++;
        } else {
            i += k;
        }
    }
    return bad;
}

const char *cp_audit_format_call(const cp_call_record *r, char *line, size_t cap)
{
    char args[2048];
    /* The call's own decoding when it has one (not decoded twice), else
     * decoded here. */
    const ProtobufCMessage *req = r->req_msg;
    ProtobufCMessage *own = NULL;
    if (req == NULL && r->method != NULL && r->method->req_desc != NULL)
        req = own = protobuf_c_message_unpack(r->method->req_desc, NULL, r->req_len, r->req);
    if (req != NULL)
        cp_redact_render(req, args, sizeof(args));
    else
        snprintf(args, sizeof(args), "<%zu bytes, not decodable>", r->req_len);
    const char *caller = r->peer_id != NULL && r->peer_id[0] != '\0' ? r->peer_id : "unknown";
    /* What the call changed that its arguments do not say. */
    char changed[600] = "";
    if (r->note != NULL && r->note[0] != '\0')
        snprintf(changed, sizeof(changed), " changed=[%s]", r->note);
    if (r->status == 0)
        snprintf(line, cap, "audit: call %s caller=%s pid=%lu args=%s result=OK%s duration=%lldms",
                 r->path, caller, (unsigned long)r->peer_pid, args, changed,
                 (long long)r->duration_ms);
    else
        snprintf(line, cap,
                 "audit: call %s caller=%s pid=%lu args=%s result=%s (%s)%s duration=%lldms",
                 r->path, caller, (unsigned long)r->peer_pid, args, cp_status_name(r->status),
                 r->message != NULL ? r->message : "", changed, (long long)r->duration_ms);
    /* The rendering hid the secret fields; this hides their values anywhere
     * else (an error message, a secret pasted into a non-secret field). */
    if (req != NULL)
        cp_redact_scrub(req, line, cap);
    if (own != NULL)
        protobuf_c_message_free_unpacked(own, NULL);
    /* A request's strings are not checked for UTF-8, and a cut at cap may
     * fall inside a character: the Event Log's UTF-16 conversion must not
     * fail on the record. */
    cp_audit_make_utf8(line);
    /* The result text and the path quote what the caller sent: escaped,
     * after the scrub (which looks for the raw secret), so that a CR LF
     * or an escape code in a request cannot forge a record (logesc.h). */
    cp_logesc_inplace(line, cap);
    return line;
}

void cp_audit_call(void *ctx, const cp_call_record *r)
{
    cp_audit *a = ctx;
    char line[CP_AUDIT_LINE_MAX];
    cp_audit_format_call(r, line, sizeof(line));
    if (r->status == 0)
        CP_LOG_INFO("%s", line);
    else
        CP_LOG_WARN("%s", line);
    if (a != NULL)
        atomic_fetch_add_explicit(&a->calls, 1, memory_order_relaxed);
    if (a != NULL && a->sink != NULL)
        a->sink(a->sink_ctx, r->status != 0, line);
}

void cp_audit_denied(cp_audit *a, const char *pipe, const char *group, uint32_t pid,
                     const char *caller, const char *why)
{
    char line[CP_AUDIT_LINE_MAX];
    snprintf(line, sizeof(line), "audit: denied caller=%s pid=%lu group=%s pipe=%s: %s",
             caller != NULL && caller[0] != '\0' ? caller : "unknown", (unsigned long)pid, group,
             pipe, why);
    cp_audit_make_utf8(line);
    cp_logesc_inplace(line, sizeof(line));
    CP_LOG_WARN("%s", line);
    if (a != NULL)
        atomic_fetch_add_explicit(&a->denied, 1, memory_order_relaxed);
    if (a != NULL && a->sink != NULL)
        a->sink(a->sink_ctx, true, line);
}

void cp_audit_collect(void *ctx, cp_metrics_emit_fn emit, void *emit_ctx)
{
    cp_audit *a = ctx;
    emit(emit_ctx, "call", (double)atomic_load_explicit(&a->calls, memory_order_relaxed));
    emit(emit_ctx, "denied", (double)atomic_load_explicit(&a->denied, memory_order_relaxed));
}
