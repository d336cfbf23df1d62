/* health.c - see health.h. */
#include "client/health.h"

#include <stdlib.h>
#include <string.h>

#include "client/dial.h"
#include "client/h2client.h"
#include "groups/catalog.h"
#include "base/arena.h"
#include "base/status.h"

#define RETRY_PAUSE_MS 100
#define NOT_SERVING_TEXT                                                                           \
    "NOT_SERVING: the pipe answers, its group's back end does not work (the service's log "        \
    "says why at -v 2)"
#define DEFAULT_KUBELET "C:\\var\\lib\\kubelet"

static const struct {
    const char *group, *method;
} probes[] = {{"filesystem", "PathExists"},      {"disk", "ListDiskLocations"},
              {"volume", "ListVolumesOnDisk"},   {"smb", "RemoveSmbGlobalMapping"},
              {"system", "GetBIOSSerialNumber"}, {"iscsi", "ListTargetPortals"}};

/* True when served names some version of group. */
static bool group_served(const bool *served, const char *group)
{
    for (size_t i = 0; i < cp_catalog_len; i++)
        if (served[i] && strcmp(cp_catalog[i].group, group) == 0)
            return true;
    return false;
}

int cp_health_targets(const bool *served, char **groups, int n_groups, cp_health_target *out,
                      const char **bad)
{
    int n = 0;
    for (int g = 0; g < n_groups; g++) { /* every name must mean something */
        const char *slash = strchr(groups[g], '/');
        size_t glen = slash != NULL ? (size_t)(slash - groups[g]) : strlen(groups[g]);
        bool known = false;
        for (size_t i = 0; i < cp_catalog_len && !known; i++)
            known = strlen(cp_catalog[i].group) == glen &&
                    strncmp(cp_catalog[i].group, groups[g], glen) == 0 &&
                    (slash == NULL || strcmp(cp_catalog[i].version, slash + 1) == 0);
        if (!known) {
            *bad = groups[g];
            return -1;
        }
    }
    for (size_t i = 0; i < cp_catalog_len; i++) {
        const cp_catalog_entry *s = &cp_catalog[i];
        bool want = n_groups == 0 && (served == NULL || served[i]);
        for (int g = 0; g < n_groups && !want; g++) {
            const char *slash = strchr(groups[g], '/');
            size_t glen = slash != NULL ? (size_t)(slash - groups[g]) : strlen(groups[g]);
            if (strlen(s->group) != glen || strncmp(s->group, groups[g], glen) != 0)
                continue;
            if (slash != NULL)
                want = strcmp(s->version, slash + 1) == 0;
            else /* the versions served, or all when the group is not served */
                want = served == NULL || served[i] || !group_served(served, s->group);
        }
        if (want)
            out[n++] = (cp_health_target){s->group, s->version};
    }
    return n;
}

typedef struct result {
    bool up;
    int serving;                /* the health service's status; -1: not asked */
    int64_t ms;                 /* the answering call's round trip */
    int grpc_status;            /* of the answer */
    bool denied_at_open;        /* up: the pipe refused this caller at open */
    bool attacked;              /* down for good: the service saw a foreign instance */
    char why[CP_ERROR_MSG_MAX]; /* when down: the last reason */
} result;

/* The probe's request: PathExists{path = 1: kubelet} or an empty message. */
static uint8_t *probe_body(cp_arena *a, const char *group, const char *kubelet, size_t *len)
{
    *len = 0;
    if (strcmp(group, "filesystem") != 0)
        return NULL;
    size_t n = strlen(kubelet);
    if (n > 127)
        n = 127; /* one-byte varint length; kubelet paths are short */
    uint8_t *b = cp_arena_alloc(a, n + 2);
    if (b == NULL)
        return NULL;
    b[0] = 0x0a; /* field 1, length-delimited */
    b[1] = (uint8_t)n;
    memcpy(b + 2, kubelet, n);
    *len = n + 2;
    return b;
}

static const char *probe_method(const cp_catalog_entry *s)
{
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
        if (strcmp(probes[i].group, s->group) == 0 &&
            protobuf_c_service_descriptor_get_method_by_name(s->desc, probes[i].method) != NULL)
            return probes[i].method;
    return NULL;
}

/* HealthCheckResponse.status (field 1, varint) of an encoded message. */
static int serving_status(const uint8_t *b, size_t len)
{
    int status = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        if (b[i] == 0x08 && b[i + 1] < 0x80)
            status = b[i + 1];
    return status;
}

/* One call to t, giving up after timeout_ms: the standard health service's
 * Check of the pipe (service ""), or, where it is not served (an older
 * csi-proxy, upstream's: UNIMPLEMENTED), the group's probe method. */
static void probe(const cp_health_target *t, const cp_health_opts *o, int64_t timeout_ms, result *r)
{
    cp_arena *a = cp_arena_new();
    const cp_catalog_entry *s = cp_catalog_find(t->group, t->version);
    const char *method = s != NULL ? probe_method(s) : NULL;
    cp_dial *d = NULL;
    cp_h2c *c = NULL;
    char *target = NULL;
    cp_error e;
    cp_error_clear(&e);
    r->up = false;
    r->serving = -1;
    r->why[0] = '\0';
    if (a == NULL || method == NULL) {
        snprintf(r->why, sizeof(r->why), "%s", a == NULL ? "out of memory" : "no probe method");
        goto out;
    }
    if (cp_dial_resolve(a, NULL, o->socket_dir, t->group, t->version, &target, &e) != CP_OK) {
        snprintf(r->why, sizeof(r->why), "%s", e.msg);
        goto out;
    }
    /* Another process made its own server instance of this pipe
     * (service/pipealarm.h): whatever answers, clients may be talking to
     * it. Down, and no retry changes that. */
    if (cp_dial_alarm(target, r->why, sizeof(r->why))) {
        r->attacked = true;
        goto out;
    }
    int64_t t0 = cp_dial_now_ms();
    if (cp_dial_open(target, &d, &e) != CP_OK) {
        /* The system's text varies; "no pipe" is what an operator needs. */
        if (strstr(e.msg, "(error 2)") != NULL || strstr(e.msg, "No such file") != NULL) {
            snprintf(r->why, sizeof(r->why), "no pipe (%s)", target);
        } else if (strstr(e.msg, "(error 5)") != NULL || strstr(e.msg, "Permission denied")) {
            /* ERROR_ACCESS_DENIED at open: the pipe exists and its DACL does
             * not admit this caller (CreateFile on a pipe checks the
             * instance's security descriptor: "Named Pipe Security and
             * Access Rights", Microsoft Learn). csi-proxy is serving it; a
             * least-privilege config admits no Administrators, so the node
             * scripts' own check must count this as up. */
            r->up = true;
            r->denied_at_open = true;
            r->ms = cp_dial_now_ms() - t0;
        } else
            snprintf(r->why, sizeof(r->why), "%s", e.msg);
        goto out;
    }
    cp_h2c_io io = cp_dial_io(d);
    if (cp_h2c_new(&io, "csi-proxy-health", &c, &e) != CP_OK) {
        snprintf(r->why, sizeof(r->why), "%s", e.msg);
        goto out;
    }
    cp_h2c_request req = {.path = "/grpc.health.v1.Health/Check",
                          .body = NULL,
                          .len = 0,
                          .timeout_ns = (timeout_ms > 0 ? timeout_ms : 1) * 1000000};
    cp_h2c_response resp = {0};
    if (cp_h2c_call(c, &req, a, &resp, &e) != CP_OK) {
        snprintf(r->why, sizeof(r->why), "%s", e.msg);
        goto out;
    }
    if (resp.grpc_status == 0) {
        r->serving = serving_status(resp.body, resp.len);
        method = "Check";
    } else if (resp.grpc_status == 12) { /* no health service: the group's probe */
        int64_t left = timeout_ms - (cp_dial_now_ms() - t0);
        size_t len;
        req.body = probe_body(a, t->group,
                              o->kubelet_path != NULL ? o->kubelet_path : DEFAULT_KUBELET, &len);
        req.len = len;
        req.path = cp_arena_printf(a, "/%s/%s", s->desc->name, method);
        req.timeout_ns = (left > 0 ? left : 1) * 1000000;
        memset(&resp, 0, sizeof(resp));
        if (req.path == NULL || cp_h2c_call(c, &req, a, &resp, &e) != CP_OK) {
            snprintf(r->why, sizeof(r->why), "%s", req.path == NULL ? "out of memory" : e.msg);
            goto out;
        }
    } else {
        method = "Check";
    }
    int st = resp.grpc_status;
    if (st == 4 || st == 12 || st == 14) { /* DEADLINE_EXCEEDED, UNIMPLEMENTED, UNAVAILABLE */
        snprintf(r->why, sizeof(r->why), "%s %s%s%s", method, cp_status_name(-st),
                 resp.grpc_message[0] != '\0' ? ": " : "", resp.grpc_message);
        goto out;
    }
    r->up = true;
    r->grpc_status = st;
    r->ms = cp_dial_now_ms() - t0;
out:
    cp_h2c_free(c);
    cp_dial_close(d);
    cp_arena_free(a);
}

int cp_health_check(const cp_health_target *t, int n, const cp_health_opts *o, FILE *out,
                    const char *prefix)
{
    result *r = calloc((size_t)(n > 0 ? n : 1), sizeof(*r));
    if (r == NULL) {
        if (out != NULL)
            fprintf(out, "%sout of memory\n", prefix);
        return n > 0 ? n : 1;
    }
    int64_t deadline = o->deadline_ms > 0 ? o->deadline_ms : CP_HEALTH_DEFAULT_DEADLINE_MS;
    int64_t until = cp_dial_now_ms() + deadline;
    int down;
    for (;;) {
        down = 0;
        for (int i = 0; i < n; i++) {
            int64_t left = until - cp_dial_now_ms();
            bool again = !r[i].up || (o->require_serving && r[i].serving == 2);
            if (again && !r[i].attacked && left > 0) {
                /* A pipe that answered keeps that answer when a retry
                 * gets none (the deadline ran out mid-call, a busy
                 * pipe): NOT_SERVING says more than "no answer". */
                result next = {0};
                probe(&t[i], o, left, &next);
                if (next.up || next.attacked || !r[i].up)
                    r[i] = next;
            }
            if (r[i].up && o->require_serving && r[i].serving == 2)
                snprintf(r[i].why, sizeof(r[i].why), "%s", NOT_SERVING_TEXT);
            if (!r[i].up || (o->require_serving && r[i].serving == 2)) {
                if (r[i].why[0] == '\0')
                    snprintf(r[i].why, sizeof(r[i].why), "no answer within %lld ms",
                             (long long)deadline);
                down++;
            }
        }
        int retry = 0;
        for (int i = 0; i < n; i++) /* a back end that does not work yet may start */
            retry += (!r[i].up && !r[i].attacked) || (o->require_serving && r[i].serving == 2);
        if (retry == 0 || cp_dial_now_ms() + RETRY_PAUSE_MS >= until)
            break;
        cp_dial_sleep_ms(RETRY_PAUSE_MS);
    }
    for (int i = 0; out != NULL && i < n; i++) {
        if (o->failures_only && r[i].up)
            continue;
        fprintf(out, "%s%s %s ", prefix, t[i].group, t[i].version);
        if (!r[i].up || (o->require_serving && r[i].serving == 2))
            fprintf(out, "FAIL: %s\n", r[i].why);
        else if (r[i].serving == 2)
            fprintf(out, "ok %lld ms (%s)\n", (long long)r[i].ms, NOT_SERVING_TEXT);
        else if (r[i].denied_at_open)
            fprintf(out, "ok (the pipe exists; its DACL does not admit this caller)\n");
        else if (r[i].grpc_status == 0)
            fprintf(out, "ok %lld ms\n", (long long)r[i].ms);
        else if (r[i].grpc_status == 7)
            fprintf(out, "ok %lld ms (answers; this caller is not allowed: PERMISSION_DENIED)\n",
                    (long long)r[i].ms);
        else
            fprintf(out, "ok %lld ms (answered %s)\n", (long long)r[i].ms,
                    cp_status_name(-r[i].grpc_status));
    }
    free(r);
    return down;
}
