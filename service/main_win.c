/* main_win.c - csi-proxy.exe: the command line, the configuration file,
 * logging, then serve every configured pipe until Ctrl+C / console close
 * (console mode) or the SCM says stop (-windows-service). Also
 * `csi-proxy.exe install [flags]` and `csi-proxy.exe uninstall`.
 *
 * Exit codes: 0 after a clean stop (and for -version, -help); 2 for a bad
 * command line (as Go's flag package); 1 for any other start-up failure:
 * a bad configuration file (file:line and why), a pipe already owned by
 * another instance, ...
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "security/account_win.h"
#include "service/app_win.h"
#include "service/config.h"
#include "service/flags.h"
#include "service/install_win.h"
#include "base/log.h"
#include "service/scm_win.h"
#include "service/version.h"
#include "transport/transport.h"
#include "base/logesc.h"

#define CLOSE_WAIT_MS 4500 /* Windows ends a process ~5 s after CTRL_CLOSE_EVENT */

/* The one service state. */
static struct {
    cp_flags flags;
    cp_config config;
    cp_app *app;
    HANDLE done;           /* set once the app is torn down; never closed */
    cp_error config_error; /* status CP_OK unless the file was refused */
} svc;

/* The console control handler runs on a thread of its own, which Windows
 * starts at any time while the handler is registered: after a first
 * Ctrl+C, a second one (or a console close) may arrive while serve() tears
 * the app down ("A new thread is started inside the command-line client
 * process to run the handler routines", learn.microsoft.com/windows/
 * console/console-control-handlers), and removing the handler does not
 * wait for a handler thread that already runs. So the handler reaches the
 * app only through console_app, under console_lock; serve() clears it
 * under the lock (which waits for a handler inside cp_app_stop) before the
 * app is freed. The lock and the pointer are static: they outlive the app.
 * The handler is never removed: with it gone, the default handler (the
 * same page: it "calls the ExitProcess function") would end a process
 * that is still tearing down, with STATUS_CONTROL_C_EXIT instead of its
 * own exit code. */
static SRWLOCK console_lock = SRWLOCK_INIT;
static cp_app *console_app;
/* Reports a start-up failure in the log and, if the log does not reach
 * it, on stderr too. */
static void startup_error(const char *msg)
{
    CP_LOG_ERROR("%s", msg);
    if (!cp_log_reaches_stderr('E')) {
        char esc[CP_ERROR_MSG_MAX * 4]; /* as the log has it (logesc.h) */
        cp_logesc(msg, strlen(msg), esc, sizeof(esc));
        fprintf(stderr, "csi-proxy: %s\n", esc);
    }
}

/* A refused configuration fails the start the same way in both modes, so
 * that the SCM sees STOPPED with an error (not a service that never
 * answered) and the log says file:line and why. */
static void test_fail_wait(void);

static int start(void *ctx, cp_error *e)
{
    test_fail_wait();
    if (svc.config_error.status != CP_OK) {
        *e = svc.config_error;
        return e->status;
    }
    return cp_app_start(ctx, e);
}

/* Asks the app, if it is still there, to stop within its drain deadline
 * capped at cap_ms (< 0: no cap). False once the app is gone. */
static bool console_stop(const char *why, int64_t cap_ms)
{
    bool found = false;
    AcquireSRWLockShared(&console_lock);
    if (console_app != NULL) {
        int64_t drain = cp_app_drain_ms(console_app);
        if (cap_ms >= 0 && drain > cap_ms)
            drain = cap_ms;
        CP_LOG_INFO("%s: stopping (drain up to %lld ms)", why, (long long)drain);
        cp_app_stop(console_app, drain);
        found = true;
    }
    ReleaseSRWLockShared(&console_lock);
    return found;
}

static BOOL WINAPI on_console_ctrl(DWORD type)
{
    switch (type) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
        if (!console_stop("interrupted", -1))
            CP_LOG_INFO("interrupted while exiting: nothing left to stop");
        return TRUE;
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
        /* Windows ends the process when this returns: wait for the drain
         * (outside the lock: serve() takes it before it sets done). */
        console_stop("console closing", CLOSE_WAIT_MS - 1000);
        if (svc.done != NULL)
            WaitForSingleObject(svc.done, CLOSE_WAIT_MS);
        return TRUE;
    default:
        return FALSE;
    }
}

#ifdef CP_TEST_HOOKS
/* Test builds only (build/win/csi-proxy-hooks.exe, mk/hooks.mk):
 * CSI_PROXY_TEST_TEARDOWN_PAUSE_MS=N holds the process N ms after the app
 * is freed, so that test/wine/console_late.sh can send a Ctrl+C into the
 * window a late one used to hit. */
static void test_teardown_pause(void)
{
    wchar_t v[16];
    DWORD n = GetEnvironmentVariableW(L"CSI_PROXY_TEST_TEARDOWN_PAUSE_MS", v, 16);
    if (n == 0 || n >= 16)
        return;
    DWORD ms = (DWORD)wcstoul(v, NULL, 10);
    CP_LOG_INFO("test hook: app freed, pausing %lu ms", (unsigned long)ms);
    Sleep(ms);
    CP_LOG_INFO("test hook: pause over");
}

/* CSI_PROXY_TEST_FAIL_WAIT=LOOP:N makes the wait of the pipe transport's
 * loop LOOP (0-based) fail once it has taken N connects
 * (cp_transport_test_fail_wait), for test/wine/service.sh. */
static void test_fail_wait(void)
{
    wchar_t v[32];
    DWORD n = GetEnvironmentVariableW(L"CSI_PROXY_TEST_FAIL_WAIT", v, 32);
    if (n == 0 || n >= 32)
        return;
    wchar_t *end = NULL;
    unsigned long loop = wcstoul(v, &end, 10);
    unsigned long after = end != NULL && *end == L':' ? wcstoul(end + 1, NULL, 10) : 0;
    CP_LOG_INFO("test hook: loop %lu's wait fails after %lu connects", loop, after);
    cp_transport_test_fail_wait((unsigned)loop, (unsigned)after);
}
#else
static void test_teardown_pause(void)
{
}
static void test_fail_wait(void)
{
}
#endif

static int run_console(void)
{
    cp_error e;
    cp_error_clear(&e);
    svc.done = CreateEventW(NULL, TRUE, FALSE, NULL);
    AcquireSRWLockExclusive(&console_lock);
    console_app = svc.app;
    ReleaseSRWLockExclusive(&console_lock);
    if (!SetConsoleCtrlHandler(on_console_ctrl, TRUE)) {
        DWORD err = GetLastError();
        char why[256];
        CP_LOG_WARN("SetConsoleCtrlHandler: %s (error %lu); Ctrl+C will not drain",
                    cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    int code = 0;
    if (start(svc.app, &e) != CP_OK) {
        startup_error(e.msg);
        code = 1;
    } else if (cp_app_run(svc.app) != CP_OK) {
        code = 1;
    }
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

/* -config PATH, else the default file when it exists, else defaults.
 * Returns CP_OK or a status with e set; fails closed on any problem with
 * a file that exists. */
static int load_config(cp_config *c, const cp_flags *f, cp_error *e)
{
    char def[MAX_PATH + 64];
    const char *path = f->config;
    if (path == NULL) {
        wchar_t pd[MAX_PATH];
        DWORD n = GetEnvironmentVariableW(L"ProgramData", pd, MAX_PATH);
        char *pd8 = n > 0 && n < MAX_PATH ? cp_win_wide_to_utf8(pd) : NULL;
        snprintf(def, sizeof(def), "%s\\csi-proxy\\config.yaml",
                 pd8 != NULL ? pd8 : "C:\\ProgramData");
        free(pd8);
        path = def;
    }
    int rc = cp_config_load_file(c, path, cp_win_resolve_account, NULL, e);
    if (rc == CP_E_NOT_FOUND && f->config == NULL) {
        cp_config_free(c);
        cp_error_clear(e);
        return cp_config_defaults(c) == CP_OK ? CP_OK
                                              : cp_error_set(e, CP_E_NOMEM, "out of memory");
    }
    if (rc != CP_OK && rc != CP_E_INVALID_ARGUMENT) { /* the message lacks the flag's name */
        char msg[CP_ERROR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", e->msg);
        cp_error_set(e, rc, "%s: %s", f->config != NULL ? "-config" : "configuration file", msg);
    }
    return rc;
}

static int serve(void)
{
    cp_error e;
    cp_error_clear(&e);
    svc.app = cp_app_new(&svc.flags, &svc.config);
    if (svc.app == NULL) {
        startup_error("out of memory");
        return 1;
    }
    int code;
    if (svc.flags.windows_service) {
        cp_scm_app sa = {.ctx = svc.app,
                         .start = start,
                         .run = cp_app_run,
                         .stop = cp_app_stop,
                         .drain_ms = cp_app_drain_ms(svc.app)};
        code = cp_scm_run(L"csiproxy", &sa, &e); /* upstream's name for sc.exe */
        if (code != 0 && e.msg[0] != '\0')
            startup_error(e.msg);
    } else {
        code = run_console();
    }
    /* A handler that starts from here on finds no app (see console_lock)
     * and returns TRUE: a late Ctrl+C is ignored, the exit code stays. */
    AcquireSRWLockExclusive(&console_lock);
    console_app = NULL;
    ReleaseSRWLockExclusive(&console_lock);
    cp_app_free(svc.app);
    svc.app = NULL;
    test_teardown_pause();
    if (svc.done != NULL)
        SetEvent(svc.done);
    return code;
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
    cp_error_clear(&svc.config_error);
    int code = 0;
    if (argc > 1 && strcmp(argv[1], "install") == 0) {
        code = cp_install(argc - 2, argv + 2);
        goto out_args;
    }
    if (argc > 1 && strcmp(argv[1], "uninstall") == 0) {
        code = cp_uninstall(argc - 2, argv + 2);
        goto out_args;
    }
    int rc = cp_flags_parse(&svc.flags, argc, argv, &e);
    if (rc != CP_OK) {
        fprintf(stderr, "%s\n", e.msg);
        if (rc == CP_E_INVALID_ARGUMENT)
            cp_flags_usage(stderr);
        code = rc == CP_E_INVALID_ARGUMENT ? 2 : 1;
        goto out;
    }
    if (svc.flags.help) {
        cp_flags_usage(stderr);
        fprintf(stderr, "\n  csi-proxy install [flags]   create or update the csiproxy service\n"
                        "  csi-proxy uninstall         stop and remove it\n");
        goto out;
    }
    if (svc.flags.version) {
        printf("csi-proxy version %s\n", CP_VERSION);
        goto out;
    }
    /* The file first: its log settings apply unless a flag overrides them.
     * A bad file is refused before anything is served. */
    if (load_config(&svc.config, &svc.flags, &svc.config_error) != CP_OK) {
        cp_config_free(&svc.config);
        if (cp_config_defaults(&svc.config) != CP_OK) { /* for the drain deadline only */
            fprintf(stderr, "csi-proxy: out of memory\n");
            code = 1;
            goto out;
        }
    } else if (cp_config_fill_flags(&svc.config, &svc.flags) != CP_OK) {
        fprintf(stderr, "csi-proxy: out of memory\n");
        code = 1;
        goto out;
    }
    cp_log_options lo;
    cp_flags_log_options(&svc.flags, &lo);
    if (cp_log_init(&lo, GetCurrentProcessId(), &e) != CP_OK) {
        fprintf(stderr, "csi-proxy: %s\n", e.msg);
        code = 1;
        goto out;
    }
    CP_LOG_INFO("Starting CSI-Proxy Server ...");
    CP_LOG_INFO("Version: %s", CP_VERSION);
    if (svc.flags.n_args > 0)
        CP_LOG_WARN("ignoring %d argument(s) after the flags, starting with \"%s\"",
                    svc.flags.n_args, svc.flags.args[0]);
    code = serve();
    CP_LOG_INFO("exiting with code %d", code);
    cp_log_close();
out:
    cp_flags_free(&svc.flags);
    cp_config_free(&svc.config);
out_args:
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
    return code;
}
