/* main_win.c - csi-proxy.exe: flags, logging, then serve every pipe until
 * Ctrl+C / console close (console mode) or the SCM says stop
 * (-windows-service).
 *
 * Exit codes: 0 after a clean stop (and for -version, -help); 2 for a bad
 * command line (as Go's flag package); 1 for any other start-up failure,
 * e.g. a pipe already owned by another instance.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../groups/groups.h"
#include "../server/pipe_util_win.h"
#include "../server/pool.h"
#include "../server/transport.h"
#include "../winapi/fs.h"
#include "flags.h"
#include "log.h"
#include "scm_win.h"
#include "version.h"

#define SERVICE_NAME L"csiproxy" /* upstream's name for sc.exe */
#define DRAIN_MS 10000
#define CLOSE_WAIT_MS 4500 /* Windows ends a process ~5 s after CTRL_CLOSE_EVENT */

/* The one service state struct: the console handler and the SCM reach the
 * transport through it. */
static struct app {
    cp_flags flags;
    cp_groups *groups;
    cp_pool *pool;
    cp_transport *transport;
    SRWLOCK lock; /* transport vs. stop_requested, across threads */
    bool stop_requested;
    int64_t stop_drain_ms;
    HANDLE done; /* set once run() returned and the app is torn down */
} app = {.lock = SRWLOCK_INIT};

static unsigned pool_threads(void)
{
    DWORD cpus = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    unsigned n = cpus > 0 && cpus < 512 ? 2u * (unsigned)cpus : 4u;
    return n < 4 ? 4 : n;
}

/* Reports a start-up failure in the log and, if the log does not reach
 * it, on stderr too. */
static void startup_error(const char *msg)
{
    CP_LOG_ERROR("%s", msg);
    if (!cp_log_reaches_stderr('E'))
        fprintf(stderr, "csi-proxy: %s\n", msg);
}

static int app_start(void *ctx, cp_error *e)
{
    struct app *a = ctx;
    const cp_flags *f = &a->flags;
    if (f->config != NULL)
        /* The configuration holds the pipe security: never serve without it. */
        return cp_error_set(e, CP_E_UNIMPLEMENTED,
                            "-config %s: configuration files are not supported by this build yet",
                            f->config);
    if (f->socket_dir != NULL || f->root != NULL)
        CP_LOG_WARN("-socket-dir and -root are for the native build; ignored on Windows");

    cp_groups_config gc = {
        .kubelet_path = f->kubelet_path,
        .working_dirs = (const char *const *)f->working_dirs,
        .n_working_dirs = f->n_working_dirs,
        .fs = cp_fs_host_win32(),
    };
    a->groups = cp_groups_new(&gc, e);
    if (a->groups == NULL)
        return e->status != CP_OK ? e->status : CP_E_INTERNAL;
    unsigned threads = pool_threads();
    a->pool = cp_pool_new(threads);
    if (a->pool == NULL)
        return cp_error_set(e, CP_E_NOMEM, "cannot start %u worker threads", threads);

    size_t n = cp_groups_count(a->groups);
    cp_listen_spec *specs = calloc(n > 0 ? n : 1, sizeof(*specs));
    char(*names)[96] = calloc(n > 0 ? n : 1, sizeof(*names));
    int rc = CP_OK;
    if (specs == NULL || names == NULL) {
        rc = cp_error_set(e, CP_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        specs[i].svc = cp_groups_service(a->groups, i);
        cp_groups_pipe_name(specs[i].svc->def, names[i], sizeof(names[i]));
        specs[i].name = names[i];
    }
    cp_transport_opts to = {.pool = a->pool};
    cp_transport *t = cp_transport_new(&to, specs, n, e);
    if (t == NULL) {
        rc = e->status != CP_OK ? e->status : CP_E_INTERNAL;
        goto out;
    }
    CP_LOG_INFO("serving %zu pipes", n);
    for (size_t i = 0; i < n; i++)
        CP_LOG_INFO("  \\\\.\\pipe\\%s", names[i]);

    AcquireSRWLockExclusive(&a->lock);
    a->transport = t;
    if (a->stop_requested) /* a stop came while we were starting */
        cp_transport_stop(t, a->stop_drain_ms);
    ReleaseSRWLockExclusive(&a->lock);
out:
    free(names);
    free(specs);
    return rc;
}

static int app_run(void *ctx)
{
    struct app *a = ctx;
    int rc = cp_transport_run(a->transport);
    CP_LOG_INFO("stopped serving");
    return rc;
}

static void app_stop(void *ctx, int64_t drain_ms)
{
    struct app *a = ctx;
    AcquireSRWLockExclusive(&a->lock);
    if (!a->stop_requested) {
        a->stop_requested = true;
        a->stop_drain_ms = drain_ms;
        if (a->transport != NULL)
            cp_transport_stop(a->transport, drain_ms);
    }
    ReleaseSRWLockExclusive(&a->lock);
}

/* Frees what start built. Workers still inside a handler (a drain that
 * timed out) keep the pool, the transport and the groups alive: the
 * process is about to exit and they may still post to the transport. */
static void app_free(struct app *a)
{
    if (a->pool != NULL && cp_pool_busy(a->pool) > 0) {
        CP_LOG_WARN("%zu calls still running at exit", cp_pool_busy(a->pool));
        return;
    }
    cp_pool_free(a->pool); /* before the transport: workers post to it */
    a->pool = NULL;
    AcquireSRWLockExclusive(&a->lock);
    cp_transport *t = a->transport;
    a->transport = NULL;
    ReleaseSRWLockExclusive(&a->lock);
    cp_transport_free(t);
    if (a->groups != NULL)
        cp_groups_free(a->groups);
    a->groups = NULL;
}

static BOOL WINAPI on_console_ctrl(DWORD type)
{
    switch (type) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
        CP_LOG_INFO("interrupted: stopping (drain up to %d ms)", DRAIN_MS);
        app_stop(&app, DRAIN_MS);
        return TRUE;
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
        /* Windows ends the process when this returns: wait for the drain. */
        CP_LOG_INFO("console closing: stopping");
        app_stop(&app, CLOSE_WAIT_MS - 1000);
        if (app.done != NULL)
            WaitForSingleObject(app.done, CLOSE_WAIT_MS);
        return TRUE;
    default:
        return FALSE;
    }
}

static int run_console(void)
{
    cp_error e;
    cp_error_clear(&e);
    app.done = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!SetConsoleCtrlHandler(on_console_ctrl, TRUE)) {
        DWORD err = GetLastError();
        char why[256];
        CP_LOG_WARN("SetConsoleCtrlHandler: %s (error %lu); Ctrl+C will not drain",
                    cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    int code = 0;
    if (app_start(&app, &e) != CP_OK) {
        startup_error(e.msg);
        code = 1;
    } else if (app_run(&app) != CP_OK) {
        code = 1;
    }
    app_free(&app);
    if (app.done != NULL)
        SetEvent(app.done);
    return code;
}

static char **utf8_args(int argc, wchar_t **wargv)
{
    char **argv = calloc((size_t)argc + 1, sizeof(*argv));
    if (argv == NULL)
        return NULL;
    for (int i = 0; i < argc; i++) {
        argv[i] = cp_win_wide_to_utf8(wargv[i]);
        if (argv[i] == NULL) {
            for (int j = 0; j < i; j++)
                free(argv[j]);
            free(argv);
            return NULL;
        }
    }
    return argv;
}

int wmain(int argc, wchar_t **wargv)
{
    char **argv = utf8_args(argc, wargv);
    if (argv == NULL) {
        fprintf(stderr, "csi-proxy: out of memory reading the command line\n");
        return 1;
    }
    cp_error e;
    cp_error_clear(&e);
    int code = 0;
    int rc = cp_flags_parse(&app.flags, argc, argv, &e);
    if (rc != CP_OK) {
        fprintf(stderr, "%s\n", e.msg);
        if (rc == CP_E_INVALID_ARGUMENT)
            cp_flags_usage(stderr);
        code = rc == CP_E_INVALID_ARGUMENT ? 2 : 1;
        goto out;
    }
    if (app.flags.help) {
        cp_flags_usage(stderr);
        goto out;
    }
    if (app.flags.version) {
        printf("csi-proxy version %s\n", CP_VERSION);
        goto out;
    }
    if (cp_log_init(&app.flags, GetCurrentProcessId(), &e) != CP_OK) {
        fprintf(stderr, "csi-proxy: %s\n", e.msg);
        code = 1;
        goto out;
    }
    CP_LOG_INFO("Starting CSI-Proxy Server ...");
    CP_LOG_INFO("Version: %s", CP_VERSION);
    if (app.flags.n_args > 0)
        CP_LOG_WARN("ignoring %d argument(s) after the flags, starting with \"%s\"",
                    app.flags.n_args, app.flags.args[0]);

    if (app.flags.windows_service) {
        cp_scm_app sa = {.ctx = &app, .start = app_start, .run = app_run, .stop = app_stop,
                         .drain_ms = DRAIN_MS};
        code = cp_scm_run(SERVICE_NAME, &sa, &e);
        if (code != 0 && e.msg[0] != '\0')
            startup_error(e.msg);
        app_free(&app);
    } else {
        code = run_console();
    }
    CP_LOG_INFO("exiting with code %d", code);
    cp_log_close();
out:
    cp_flags_free(&app.flags);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
    return code;
}
