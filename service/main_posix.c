/* main_posix.c - the native build of the service, for tests, fuzzing and
 * conformance: the same groups and server core, served on Unix sockets
 * <socket-dir>/csi-proxy-<group>-<version>.sock, with Windows paths mapped
 * under -root by the POSIX file-system host, and disks and volumes served
 * by the storage simulator (-sim-fixture FILE; without it, the fixture named
 * by CSI_PROXY_SIM_FIXTURE, or no disks). SIGINT/SIGTERM drain and stop.
 * Not shipped. */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "groups/groups.h"
#include "rpc/pool.h"
#include "transport/transport.h"
#include "service/flags.h"
#include "base/regfile.h"
#include "security/roots.h"
#include "service/version.h"
#include "sim/iscsi_sim.h"
#include "sim/smb_sim.h"
#include "sim/storage_sim.h"

#define DRAIN_MS 10000

/* Signals are blocked in every thread and taken here, so stopping runs in
 * a normal thread context (cp_transport_stop takes a mutex). SIGUSR1 only
 * ends this thread. */
static void *signal_thread(void *arg)
{
    cp_transport *t = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    for (;;) {
        int sig;
        if (sigwait(&set, &sig) != 0 || sig == SIGUSR1)
            return NULL;
        fprintf(stderr, "csi-proxy (native): signal %d, draining calls for up to %d ms\n", sig,
                DRAIN_MS);
        cp_transport_stop(t, DRAIN_MS);
    }
}

int main(int argc, char **argv)
{
    cp_flags f;
    cp_error e = {0};
    int rc = cp_flags_parse(&f, argc, argv, &e);
    if (rc != CP_OK) {
        fprintf(stderr, "%s\n", e.msg);
        cp_flags_usage(stderr);
        cp_flags_free(&f);
        return 2;
    }
    if (f.help) {
        cp_flags_usage(stdout);
        cp_flags_free(&f);
        return 0;
    }
    if (f.version) {
        printf("csi-proxy version %s\n", CP_VERSION);
        cp_flags_free(&f);
        return 0;
    }
    if (f.socket_dir == NULL || f.root == NULL) {
        fprintf(stderr, "the native build needs -socket-dir DIR and -root DIR\n");
        cp_flags_free(&f);
        return 2;
    }

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by every thread */
    signal(SIGPIPE, SIG_IGN);

    int exit_code = 1;
    pthread_t sig_thread;
    bool have_sig_thread = false;
    cp_groups *groups = NULL;
    cp_pool *pool = NULL;
    cp_transport *t = NULL;
    cp_listen_spec *specs = NULL;
    char(*names)[64] = NULL;
    cp_fs_host fs = {0};
    cp_storage_host storage = {0}; /* -sim-fixture, else this build's default */
    cp_iscsi_host iscsi = {0};     /* the same fixture's iscsi: and smb: */
    cp_smb_host smb = {0};

    /* Roots that would put the whole host in callers' reach (roots.h). */
    if (cp_roots_check("-kubelet-path", f.kubelet_path, &e) != CP_OK)
        goto out;
    for (size_t i = 0; i < f.n_working_dirs; i++)
        if (cp_roots_check("-working-dir", f.working_dirs[i], &e) != CP_OK)
            goto out;
    if (cp_fs_host_posix_new(f.root, &fs, &e) != CP_OK)
        goto out;
    if (f.sim_fixture != NULL) { /* a regular file, not a FIFO or a device (regfile.h) */
        FILE *fx = cp_regfile_open(f.sim_fixture, "rb", &e);
        if (fx == NULL)
            goto out;
        fclose(fx);
    }
    if (f.sim_fixture != NULL ? cp_storage_sim_new(f.sim_fixture, &storage, &e) != CP_OK
                              : cp_storage_host_open_default(&storage, &e) != CP_OK)
        goto out;
    if (f.sim_fixture != NULL && (cp_iscsi_sim_new(f.sim_fixture, &iscsi, &e) != CP_OK ||
                                  cp_smb_sim_new(f.sim_fixture, &smb, &e) != CP_OK))
        goto out;
    /* The fs host sees the simulator's mount points as Windows would
     * (host/mountpoints.h). */
    cp_mount_points mp;
    if (cp_storage_sim_mount_points(&storage, &mp) == CP_OK)
        cp_fs_host_posix_set_mount_points(&fs, &mp);
    cp_groups_config gc = {
        .kubelet_path = f.kubelet_path,
        .working_dirs = (const char *const *)f.working_dirs,
        .n_working_dirs = f.n_working_dirs,
        .fs = fs,
        .storage = storage,
        .iscsi_host = iscsi,
        .smb_host = smb,
        .smb = {.privacy_off = !f.require_privacy},
    };
    groups = cp_groups_new(&gc, &e);
    if (groups == NULL)
        goto out;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pool = cp_pool_new(ncpu > 2 ? (unsigned)ncpu * 2 : 4);
    size_t n = cp_groups_count(groups);
    specs = calloc(n, sizeof(*specs));
    names = calloc(n, sizeof(*names));
    if (pool == NULL || specs == NULL || names == NULL) {
        cp_error_set(&e, CP_E_NOMEM, "out of memory at start");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        specs[i].svc = cp_groups_service(groups, i);
        cp_groups_pipe_name(specs[i].svc->def, names[i], sizeof(names[i]));
        specs[i].name = names[i];
    }
    cp_transport_opts to = {.dir = f.socket_dir, .pool = pool};
    t = cp_transport_new(&to, specs, n, &e);
    if (t == NULL)
        goto out;

    have_sig_thread = pthread_create(&sig_thread, NULL, signal_thread, t) == 0;
    fprintf(stderr, "csi-proxy (native) serving %zu sockets in %s\n", n, f.socket_dir);
    if (f.metrics_bind_address != NULL && f.metrics_bind_address[0] != '\0')
        fprintf(stderr,
                "csi-proxy (native): -metrics-bind-address %s is checked but not served: "
                "the Windows build serves metrics (HTTP Server API)\n",
                f.metrics_bind_address);
    rc = cp_transport_run(t);
    exit_code = rc == CP_OK ? 0 : 1;
    fprintf(stderr, "csi-proxy (native) stopped\n");

out:
    if (exit_code != 0 && e.msg[0] != '\0')
        fprintf(stderr, "csi-proxy: %s\n", e.msg);
    if (have_sig_thread) {
        pthread_kill(sig_thread, SIGUSR1);
        pthread_join(sig_thread, NULL);
    }
    cp_pool_free(pool); /* workers finish; their results queue in t */
    cp_transport_free(t);
    free(specs);
    free(names);
    cp_groups_free(groups);
    if (iscsi.ops != NULL)
        iscsi.ops->destroy(iscsi.ctx);
    if (smb.ops != NULL)
        smb.ops->destroy(smb.ctx);
    if (storage.ops != NULL)
        storage.ops->destroy(storage.ctx);
    if (fs.ops != NULL)
        cp_fs_host_posix_free(&fs);
    cp_flags_free(&f);
    return exit_code;
}
