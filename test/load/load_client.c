/* load_client.c - N concurrent clients x M calls against the native
 * server's Unix sockets, mixed across the groups (the `load` suite).
 *
 *   load-client -socket-dir DIR [-clients 64] [-calls 10000]
 *
 * Each client is a thread with its own connections (one per pipe it
 * calls, kept open, calls one after another as a grpc-go client object
 * does) and its own directory C:\var\lib\kubelet\pods\load-<n>. It runs
 * cycles of ten calls, each cycle on the next filesystem version
 * (v1alpha1 .. v2alpha1):
 *   Mkdir d, PathExists d (true), CreateSymlink|LinkPath l -> d,
 *   IsSymlink|IsMountPoint l (true), IsSymlink|IsMountPoint d (false),
 *   Rmdir l, Rmdir d, PathExists d (false),
 *   and two calls to the other groups (disk, volume, smb, system, iscsi in
 *   turn): iscsi's ListTargetPortals must answer OK (the simulated
 *   initiator); smb's empty
 *   NewSmbGlobalMapping INVALID_ARGUMENT "remote path is empty";
 *   disk, volume and system (implemented since) OK or UNIMPLEMENTED.
 * Every answer is checked (status, and the boolean where there is one).
 * Prints calls, failures, wall time, calls/s, p50/p99/max latency; exits 0
 * only when every call got the expected answer.
 *
 * Requests are built by reflection from the catalog's descriptors, so the
 * same code speaks every version.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <protobuf-c/protobuf-c.h>

#include "client/dial.h"
#include "client/h2client.h"
#include "groups/catalog.h"
#include "base/arena.h"

#define N_TARGETS 10
#define MAX_REPORTED 10

typedef struct target {
    const char *group, *version;
} target;

/* 0..4 filesystem versions, 5..9 the other groups */
static const target targets[N_TARGETS] = {
    {"filesystem", "v1alpha1"}, {"filesystem", "v1beta1"},  {"filesystem", "v1beta2"},
    {"filesystem", "v1"},       {"filesystem", "v2alpha1"}, {"disk", "v1"},
    {"volume", "v2alpha1"},     {"smb", "v1beta2"},         {"system", "v1alpha1"},
    {"iscsi", "v1alpha2"},
};
/* disk, volume and system are implemented: their calls here may answer OK
 * instead of UNIMPLEMENTED; both count as right. */
static const bool may_be_implemented[N_TARGETS] = {[5] = true, [6] = true, [8] = true};
static const char *const unimpl_method[N_TARGETS] = {
    [5] = "ListDiskIDs",         [6] = "ListVolumesOnDisk", [7] = "NewSmbGlobalMapping",
    [8] = "GetBIOSSerialNumber", [9] = "ListTargetPortals",
};

static const char *socket_dir;
static long n_calls = 10000;
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;
static int reported;

typedef struct client {
    pthread_t th;
    int id;
    cp_dial *dial[N_TARGETS];
    cp_h2c *h2[N_TARGETS];
    long ok, failed;
    uint32_t *lat_us; /* one per call */
    long n_lat;
} client;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void report(client *cl, const char *fmt, const char *a, const char *b, int st,
                   const char *msg)
{
    pthread_mutex_lock(&report_mu);
    if (reported++ < MAX_REPORTED) {
        fprintf(stderr, "client %d: ", cl->id);
        fprintf(stderr, fmt, a, b, st, msg);
        fputc('\n', stderr);
    }
    pthread_mutex_unlock(&report_mu);
}

static cp_h2c *conn_for(client *cl, int t, cp_error *e)
{
    if (cl->h2[t] != NULL)
        return cl->h2[t];
    char path[512];
    snprintf(path, sizeof(path), "%s/csi-proxy-%s-%s.sock", socket_dir, targets[t].group,
             targets[t].version);
    if (cp_dial_open(path, &cl->dial[t], e) != CP_OK)
        return NULL;
    cp_h2c_io io = cp_dial_io(cl->dial[t]);
    if (cp_h2c_new(&io, "csi-proxy-load", &cl->h2[t], e) != CP_OK) {
        cp_dial_close(cl->dial[t]);
        cl->dial[t] = NULL;
        return NULL;
    }
    return cl->h2[t];
}

static void drop_conn(client *cl, int t)
{
    cp_h2c_free(cl->h2[t]);
    cp_dial_close(cl->dial[t]);
    cl->h2[t] = NULL;
    cl->dial[t] = NULL;
}

static void set_str(ProtobufCMessage *m, const char *field, const char *v)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(m->descriptor, field);
    if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING)
        *(const char **)((char *)m + f->offset) = v;
}

/* One call. want_status is the gRPC code expected; want_bool is -1 when the
 * response has no boolean to check, else 0/1. Returns true when as
 * expected. */
static bool call(client *cl, int t, const char *method, const char *path, const char *source,
                 const char *target_path, int want_status, int want_bool)
{
    const cp_catalog_entry *ce = cp_catalog_find(targets[t].group, targets[t].version);
    const ProtobufCMethodDescriptor *md =
        ce ? protobuf_c_service_descriptor_get_method_by_name(ce->desc, method) : NULL;
    if (md == NULL) {
        report(cl, "%s %s: no such method in the catalog (%d) %s", targets[t].version, method, 0,
               "");
        return false;
    }
    cp_arena *a = cp_arena_new();
    ProtobufCMessage *req = cp_arena_alloc(a, md->input->sizeof_message);
    md->input->message_init(req);
    if (path != NULL)
        set_str(req, "path", path);
    if (source != NULL)
        set_str(req, "source_path", source);
    if (target_path != NULL)
        set_str(req, "target_path", target_path);
    size_t len = protobuf_c_message_get_packed_size(req);
    uint8_t *body = cp_arena_alloc(a, len + 1);
    protobuf_c_message_pack(req, body);

    char rpc_path[128];
    snprintf(rpc_path, sizeof(rpc_path), "/%s/%s", ce->desc->name, method);
    cp_error e = {0};
    bool good = false;
    int64_t t0 = now_us();
    cp_h2c *h = conn_for(cl, t, &e);
    if (h == NULL) {
        report(cl, "%s %s: cannot connect (%d): %s", rpc_path, "", 0, e.msg);
        goto out;
    }
    cp_h2c_request rq = {.path = rpc_path, .body = body, .len = len, .timeout_ns = 60000000000LL};
    cp_h2c_response rs = {0};
    int rc = cp_h2c_call(h, &rq, a, &rs, &e);
    cl->lat_us[cl->n_lat++] = (uint32_t)(now_us() - t0);
    if (rc != CP_OK) {
        report(cl, "%s %s: transport error (%d): %s", rpc_path, path ? path : "", rc, e.msg);
        drop_conn(cl, t);
        goto out;
    }
    if (rs.grpc_status != want_status && !(may_be_implemented[t] && rs.grpc_status == 0)) {
        report(cl, "%s %s: status %d: %s", rpc_path, path ? path : "", rs.grpc_status,
               rs.grpc_message);
        if (rs.grpc_status == 4 || rs.grpc_status == 14)
            drop_conn(cl, t);
        goto out;
    }
    good = true;
    if (want_bool >= 0) {
        ProtobufCMessage *resp =
            protobuf_c_message_unpack(md->output, cp_arena_allocator(a), rs.len, rs.body);
        good = false;
        for (unsigned i = 0; resp != NULL && i < md->output->n_fields; i++) {
            const ProtobufCFieldDescriptor *f = &md->output->fields[i];
            if (f->type == PROTOBUF_C_TYPE_BOOL)
                good = (*(protobuf_c_boolean *)((char *)resp + f->offset) != 0) == (want_bool != 0);
        }
        if (!good)
            report(cl, "%s %s: wrong answer (want %d)", rpc_path, path, want_bool, "");
    }
out:
    cp_arena_free(a);
    if (good)
        cl->ok++;
    else
        cl->failed++;
    return good;
}

static void *client_main(void *arg)
{
    client *cl = arg;
    char dir[128], d[160], l[160];
    snprintf(dir, sizeof(dir), "C:\\var\\lib\\kubelet\\pods\\load-%d", cl->id);
    for (long i = 0; i < n_calls; i++) {
        long cycle = i / 10;
        int step = (int)(i % 10);
        int v = (int)(cycle % 5); /* filesystem target 0..4 */
        bool legacy = v < 2;
        snprintf(d, sizeof(d), "%s\\c%ld", dir, cycle);
        snprintf(l, sizeof(l), "%s\\c%ld-link", dir, cycle);
        const char *link_m = legacy ? "LinkPath" : "CreateSymlink";
        const char *is_m = legacy ? "IsMountPoint" : "IsSymlink";
        switch (step) {
        case 0:
            call(cl, v, "Mkdir", d, NULL, NULL, 0, -1);
            break;
        case 1:
            call(cl, v, "PathExists", d, NULL, NULL, 0, 1);
            break;
        case 2:
            call(cl, v, link_m, NULL, d, l, 0, -1);
            break;
        case 3:
            call(cl, v, is_m, l, NULL, NULL, 0, 1);
            break;
        case 4:
            call(cl, v, is_m, d, NULL, NULL, 0, 0);
            break;
        case 5:
            call(cl, v, "Rmdir", l, NULL, NULL, 0, -1);
            break;
        case 6:
            call(cl, v, "Rmdir", d, NULL, NULL, 0, -1);
            break;
        case 7:
            call(cl, v, "PathExists", d, NULL, NULL, 0, 0);
            break;
        default: {
            int t = 5 + (int)((cycle * 2 + step - 8 + cl->id) % 5);
            call(cl, t, unimpl_method[t], NULL, NULL, NULL, t == 7 ? 3 : t == 9 ? 0 : 12, -1);
            break;
        }
        }
    }
    for (int t = 0; t < N_TARGETS; t++)
        if (cl->h2[t] != NULL)
            drop_conn(cl, t);
    return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n_clients = 64;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-socket-dir") == 0)
            socket_dir = argv[i + 1];
        else if (strcmp(argv[i], "-clients") == 0)
            n_clients = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-calls") == 0)
            n_calls = atol(argv[i + 1]);
        else
            socket_dir = NULL, i = argc;
    }
    if (socket_dir == NULL || n_clients < 1 || n_calls < 1) {
        fprintf(stderr, "usage: load-client -socket-dir DIR [-clients N] [-calls M]\n");
        return 2;
    }
    client *cls = calloc((size_t)n_clients, sizeof(*cls));
    if (cls == NULL)
        return 1;
    int64_t t0 = now_us();
    for (int i = 0; i < n_clients; i++) {
        cls[i].id = i;
        cls[i].lat_us = malloc((size_t)n_calls * sizeof(uint32_t));
        if (cls[i].lat_us == NULL || pthread_create(&cls[i].th, NULL, client_main, &cls[i]) != 0) {
            fprintf(stderr, "cannot start client %d\n", i);
            return 1;
        }
    }
    long ok = 0, failed = 0, n_lat = 0;
    for (int i = 0; i < n_clients; i++) {
        pthread_join(cls[i].th, NULL);
        ok += cls[i].ok;
        failed += cls[i].failed;
        n_lat += cls[i].n_lat;
    }
    double secs = (double)(now_us() - t0) / 1e6;
    uint32_t *all = malloc((size_t)(n_lat ? n_lat : 1) * sizeof(uint32_t));
    long k = 0;
    for (int i = 0; i < n_clients; i++) {
        memcpy(all + k, cls[i].lat_us, (size_t)cls[i].n_lat * sizeof(uint32_t));
        k += cls[i].n_lat;
        free(cls[i].lat_us);
    }
    qsort(all, (size_t)n_lat, sizeof(uint32_t), cmp_u32);
    double p50 = n_lat ? all[n_lat / 2] / 1000.0 : 0,
           p99 = n_lat ? all[n_lat * 99 / 100] / 1000.0 : 0;
    double mx = n_lat ? all[n_lat - 1] / 1000.0 : 0;
    printf("load: %d clients x %ld calls: %ld ok, %ld failed in %.1f s (%.0f calls/s); "
           "latency p50 %.2f ms, p99 %.2f ms, max %.1f ms\n",
           n_clients, n_calls, ok, failed, secs, (ok + failed) / secs, p50, p99, mx);
    free(all);
    free(cls);
    return failed == 0 && ok == (long)n_clients * n_calls ? 0 : 1;
}
