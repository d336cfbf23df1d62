/* upgrade_win.c - `csi-proxy.exe install` where the csiproxy service
 * exists already: ours (same or older build) or upstream's, created with
 * its `sc.exe create csiproxy binPath= "C:\etc\kubernetes\node\bin\
 * csi-proxy.exe -windows-service -log_file=... -logtostderr=false"`.
 *
 * The service is taken over in place, one printed line per step:
 *   1. its ImagePath is read and split (cmdline.h); its flags are kept
 *      unless flags were given, and checked as a new install's are;
 *   2. if it runs, it is stopped (ours drains calls in flight) and its
 *      process waited for;
 *   3. when its binary is not this exe, the binary is swapped: the old one
 *      renamed to <exe>.old beside it (we start no process, so its version
 *      is not asked), this exe copied in its place;
 *   4. ImagePath, description, failure actions and the event source are
 *      written;
 *   5. if it ran before, it is started and must, within START_DEADLINE_MS,
 *      reach RUNNING and answer on every pipe its configuration serves
 *      (client/health.h, the same check as `csi-proxy-cli health`).
 * When step 5 fails, everything is put back: the new one stopped and its
 * process waited for (the one the service ran, whether or not it still
 * reports running), the old binary renamed back, the old ImagePath
 * written, the old service started and checked; exit EXIT_ROLLED_BACK.
 * When that process does not exit, nothing is put back (its exe cannot be
 * replaced under it, and the old service could not start beside it): the
 * new binary and ImagePath stay, the old binary stays at <exe>.old, and
 * the exit is EXIT_STUCK with what to do. A stopped service stays stopped (and
 * is not checked): install never changes whether the service runs.
 * Configuration files are not written by install, so there is none to
 * restore; a -config flag is part of the ImagePath and restored with it. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "client/health.h"
#include "groups/catalog.h"
#include "base/winutil_win.h"
#include "security/account_win.h"
#include "service/cmdline.h"
#include "service/config.h"
#include "service/flags.h"
#include "service/install_internal_win.h"
#include "service/install_win.h"

#define START_DEADLINE_MS 30000
#define EXIT_ROLLED_BACK 3
#define EXIT_STUCK 4
#define PROCESS_EXIT_WAIT_MS 15000

typedef struct upgrade {
    SC_HANDLE svc;
    wchar_t *old_path; /* the ImagePath found */
    char **old_argv;   /* it, split: [0] the exe, then the flags */
    int old_argc;
    wchar_t target[MAX_PATH + 8]; /* the exe the ImagePath names (kept) */
    wchar_t kept[MAX_PATH + 8];   /* target + ".old" */
    bool swapped;
    HANDLE proc; /* the new service's process (SYNCHRONIZE), once started; or NULL */
    DWORD pid;
} upgrade;

static void say(const char *fmt, const char *arg)
{
    printf("csi-proxy: ");
    printf(fmt, arg);
    printf("\n");
    fflush(stdout);
}

static void say_w(const char *fmt, const wchar_t *arg)
{
    char *a = cp_win_wide_to_utf8(arg);
    say(fmt, a != NULL ? a : "?");
    free(a);
}

static wchar_t *query_image_path(SC_HANDLE svc)
{
    DWORD need = 0;
    QueryServiceConfigW(svc, NULL, 0, &need);
    QUERY_SERVICE_CONFIGW *qc = need > 0 ? malloc(need) : NULL;
    wchar_t *path = NULL;
    if (qc != NULL && QueryServiceConfigW(svc, qc, need, &need) && qc->lpBinaryPathName != NULL)
        path = _wcsdup(qc->lpBinaryPathName);
    else
        cp_install_report("QueryServiceConfig(csiproxy)", GetLastError());
    free(qc);
    return path;
}

static DWORD query_state(SC_HANDLE svc, DWORD *pid, DWORD *exit_code)
{
    SERVICE_STATUS_PROCESS st;
    DWORD len;
    if (!QueryServiceStatusEx(svc, SC_STATUS_PROCESS_INFO, (BYTE *)&st, sizeof(st), &len))
        return 0;
    if (pid != NULL)
        *pid = st.dwProcessId;
    if (exit_code != NULL)
        *exit_code = st.dwWin32ExitCode == ERROR_SERVICE_SPECIFIC_ERROR
                         ? st.dwServiceSpecificExitCode
                         : st.dwWin32ExitCode;
    return st.dwCurrentState;
}

/* A handle to wait on the service's process: its id from
 * QueryServiceStatusEx (SERVICE_STATUS_PROCESS.dwProcessId, "0 if the
 * service is not running"), opened with SYNCHRONIZE ("OpenProcess
 * function" and "Process Security and Access Rights", Microsoft Learn:
 * the right WaitForSingleObject needs). The handle keeps the id from
 * being reused while it is held. NULL when not running or not opened. */
static HANDLE open_service_process(SC_HANDLE svc, DWORD *pid_out)
{
    DWORD pid = 0;
    DWORD state = query_state(svc, &pid, NULL);
    HANDLE h = state != 0 && state != SERVICE_STOPPED && pid != 0
                   ? OpenProcess(SYNCHRONIZE, FALSE, pid)
                   : NULL;
    if (pid_out != NULL)
        *pid_out = h != NULL ? pid : 0;
    return h;
}

/* Stops the service and waits for its process to end (its pipes and its
 * exe go with it): the process running now, and proc (a process the
 * service ran before, e.g. one started by start_healthy that may already
 * report STOPPED while it still exits). The SCM reports STOPPED before
 * the process ends, so the process is what is waited for, bounded:
 * "WaitForSingleObject function", Microsoft Learn (WAIT_OBJECT_0: the
 * process has exited). */
static bool stop(SC_HANDLE svc, int64_t drain_ms, HANDLE proc)
{
    HANDLE now = open_service_process(svc, NULL);
    bool ok = true;
    if (query_state(svc, NULL, NULL) != SERVICE_STOPPED) {
        SERVICE_STATUS st;
        if (!ControlService(svc, SERVICE_CONTROL_STOP, &st) &&
            GetLastError() != ERROR_SERVICE_NOT_ACTIVE) {
            cp_install_report("ControlService(stop)", GetLastError());
            ok = false;
        } else {
            ok = cp_install_wait_stopped(svc, (DWORD)(drain_ms + 20000));
        }
    }
    if (now != NULL) {
        if (WaitForSingleObject(now, PROCESS_EXIT_WAIT_MS) != WAIT_OBJECT_0)
            ok = false;
        CloseHandle(now);
    }
    if (proc != NULL && WaitForSingleObject(proc, PROCESS_EXIT_WAIT_MS) != WAIT_OBJECT_0)
        ok = false;
    return ok;
}

/* The flags after the exe, without -windows-service (install adds it). */
static int service_flags(const upgrade *u, char **out)
{
    int n = 0;
    for (int i = 1; i < u->old_argc; i++)
        if (strcmp(u->old_argv[i], "-windows-service") != 0 &&
            strcmp(u->old_argv[i], "--windows-service") != 0 &&
            strcmp(u->old_argv[i], "-windows-service=true") != 0)
            out[n++] = u->old_argv[i];
    return n;
}

/* Starts the service; true when it reaches RUNNING and every pipe its
 * flags' configuration serves answers, by the deadline. When u is not
 * NULL, the started process is kept in u->proc (for roll_back to wait
 * for it), from the first status that names it. */
static bool start_healthy(SC_HANDLE svc, int argc, char **argv, upgrade *u)
{
    ULONGLONG until = GetTickCount64() + START_DEADLINE_MS;
    if (!StartServiceW(svc, 0, NULL) && GetLastError() != ERROR_SERVICE_ALREADY_RUNNING) {
        DWORD err = GetLastError();
        char why[256];
        printf("csi-proxy: csiproxy did not start: %s (error %lu)\n",
               cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
        return false;
    }
    DWORD state, code = 0;
    for (;;) {
        if (u != NULL && u->proc == NULL)
            u->proc = open_service_process(svc, &u->pid);
        if ((state = query_state(svc, NULL, &code)) == SERVICE_RUNNING)
            break;
        if (state == SERVICE_STOPPED || state == 0 || GetTickCount64() >= until) {
            printf("csi-proxy: csiproxy did not reach RUNNING (%s, exit code %lu)\n",
                   state == SERVICE_STOPPED ? "it stopped" : "timed out", (unsigned long)code);
            return false;
        }
        Sleep(100);
    }
    /* Which pipes: the flags' -config, else the default file, else all. */
    char **args = calloc((size_t)argc + 2, sizeof(*args));
    cp_flags f;
    cp_config c;
    cp_error e;
    bool have_config = false, healthy = false;
    cp_flags_init(&f);
    if (args == NULL)
        return false;
    args[0] = "csi-proxy";
    for (int i = 0; i < argc; i++)
        args[i + 1] = argv[i];
    if (cp_flags_parse(&f, argc + 1, args, &e) == CP_OK) {
        char def[MAX_PATH + 64];
        const char *path = f.config;
        if (path == NULL) {
            const char *pd = getenv("ProgramData");
            snprintf(def, sizeof(def), "%s\\csi-proxy\\config.yaml",
                     pd != NULL ? pd : "C:\\ProgramData");
            path = def;
        }
        have_config = cp_config_load_file(&c, path, cp_win_resolve_account, NULL, &e) == CP_OK;
        if (!have_config)
            cp_config_free(&c);
        cp_health_target t[64];
        const char *bad = NULL;
        bool served[64]; /* as t: the catalog has fewer entries */
        if (have_config)
            cp_config_served_set(&c, served);
        int n = cp_health_targets(have_config ? served : NULL, NULL, 0, t, &bad);
        cp_health_opts o = {.deadline_ms = (int64_t)(until - GetTickCount64()),
                            .failures_only = true};
        if (cp_flags_given(&f, "kubelet-path"))
            o.kubelet_path = f.kubelet_path;
        else if (have_config && c.kubelet_path != NULL)
            o.kubelet_path = c.kubelet_path;
        if (o.deadline_ms < 1000)
            o.deadline_ms = 1000;
        ULONGLONG t0 = GetTickCount64();
        healthy = n >= 0 && cp_health_check(t, n, &o, stdout, "csi-proxy: health: ") == 0;
        if (healthy)
            printf("csi-proxy: csiproxy is up: all %d pipes answer (%llu ms)\n", n,
                   (unsigned long long)(GetTickCount64() - t0));
    }
    if (have_config)
        cp_config_free(&c);
    cp_flags_free(&f);
    free(args);
    return healthy;
}

/* Puts the old binary and ImagePath back and starts the old service,
 * once the new one's process has exited. */
static int roll_back(upgrade *u, int64_t drain_ms)
{
    printf("csi-proxy: rolling back to the previous binary and configuration\n");
    if (!stop(u->svc, drain_ms, u->proc)) {
        char pid[16] = "?";
        if (u->pid != 0)
            snprintf(pid, sizeof(pid), "%lu", (unsigned long)u->pid);
        printf("csi-proxy: the new csiproxy did not stop (process %s still runs): nothing is "
               "rolled back; the new binary and configuration stay in place\n",
               pid);
        if (u->swapped)
            say_w("the previous binary is kept as %s", u->kept);
        printf("csi-proxy: end that process, then run install again from the previous "
               "release (or rename the .old binary back and start csiproxy)\n");
        return EXIT_STUCK;
    }
    if (u->swapped) {
        if (!MoveFileExW(u->kept, u->target, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
            cp_install_report("restoring the old binary (MoveFileEx)", GetLastError());
        else
            say_w("old binary restored: %s", u->target);
    }
    if (!ChangeServiceConfigW(u->svc, SERVICE_NO_CHANGE, SERVICE_NO_CHANGE, SERVICE_NO_CHANGE,
                              u->old_path, NULL, NULL, NULL, NULL, NULL, NULL))
        cp_install_report("restoring the old ImagePath (ChangeServiceConfig)", GetLastError());
    else
        say_w("old service configuration restored: %s", u->old_path);
    char *flags[256];
    int n = u->old_argc - 1 < 256 ? service_flags(u, flags) : 0;
    if (start_healthy(u->svc, n, flags, NULL))
        printf("csi-proxy: rolled back: the previous csiproxy serves again\n");
    else
        printf("csi-proxy: rolled back, but the previous csiproxy does not answer either: "
               "see its log\n");
    return EXIT_ROLLED_BACK;
}

static bool same_file(const wchar_t *a, const wchar_t *b)
{
    wchar_t fa[MAX_PATH + 1], fb[MAX_PATH + 1];
    DWORD na = GetFullPathNameW(a, MAX_PATH + 1, fa, NULL);
    DWORD nb = GetFullPathNameW(b, MAX_PATH + 1, fb, NULL);
    return na > 0 && na <= MAX_PATH && nb > 0 && nb <= MAX_PATH && _wcsicmp(fa, fb) == 0;
}

int cp_upgrade(SC_HANDLE svc, const wchar_t *self, int argc, char **argv)
{
    upgrade u = {.svc = svc};
    wchar_t *path = NULL;
    int rc = 1;
    char *img8 = NULL;
    char *kept_flags[256];
    if ((u.old_path = query_image_path(svc)) == NULL)
        goto out;
    img8 = cp_win_wide_to_utf8(u.old_path);
    if (img8 == NULL || (u.old_argv = cp_cmdline_split(img8, &u.old_argc)) == NULL ||
        u.old_argc > 256) {
        say("cannot read the service's ImagePath: %s", img8 != NULL ? img8 : "?");
        goto out;
    }
    DWORD state = query_state(svc, NULL, NULL);
    bool running = state != SERVICE_STOPPED;
    printf("csi-proxy: found service csiproxy (%s): %s\n", running ? "running" : "stopped", img8);
    /* The flags: the ones given, else the service's own. */
    if (argc == 0) {
        argc = service_flags(&u, kept_flags);
        argv = kept_flags;
        char line[4096] = "";
        for (int i = 0; i < argc; i++)
            cp_cmdline_append(line, sizeof(line), argv[i]);
        say("keeping its flags: %s", argc > 0 ? line : "(none)");
    }
    int64_t drain_ms = CP_CONFIG_DEFAULT_DRAIN_MS;
    if ((rc = cp_install_validate(argc, argv, &drain_ms)) != 0) {
        say("%s", "nothing changed: give the flags explicitly (csi-proxy.exe install FLAGS...)");
        goto out;
    }
    rc = 1;
    /* The binary: where the service has it, unless that file is gone. */
    wchar_t *exe_w = cp_win_utf8_to_wide(u.old_argv[0]);
    bool exists = exe_w != NULL && wcslen(exe_w) <= MAX_PATH &&
                  GetFileAttributesW(exe_w) != INVALID_FILE_ATTRIBUTES;
    wcscpy(u.target, exists ? exe_w : self);
    free(exe_w);
    bool swap = !same_file(u.target, self);
    if (cp_install_bin_path(u.target, argc, argv, &path) != 0)
        goto out;
    if (running) {
        printf("csi-proxy: stopping csiproxy (calls in flight are drained)...\n");
        fflush(stdout);
        if (!stop(svc, drain_ms, NULL)) {
            printf("csi-proxy: csiproxy did not stop; nothing changed\n");
            goto out;
        }
        printf("csi-proxy: stopped\n");
    }
    if (swap) {
        swprintf(u.kept, sizeof(u.kept) / sizeof(u.kept[0]), L"%ls.old", u.target);
        /* "MoveFileExW function (winbase.h)", Microsoft Learn:
         * MOVEFILE_WRITE_THROUGH "does not return until the file is
         * actually moved on the disk", so a crash or power loss right
         * after leaves the binaries as reported. */
        if (!MoveFileExW(u.target, u.kept, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
            rc = cp_install_report("keeping the old binary (MoveFileEx)", GetLastError());
            goto restart_old;
        }
        if (!CopyFileW(self, u.target, TRUE)) {
            rc = cp_install_report("copying the new binary (CopyFile)", GetLastError());
            MoveFileExW(u.kept, u.target, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
            goto restart_old;
        }
        u.swapped = true;
        say_w("old binary kept as %s", u.kept);
        say_w("new binary copied to %s", u.target);
    }
    if (!ChangeServiceConfigW(svc, SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START,
                              SERVICE_ERROR_NORMAL, path, NULL, NULL, NULL, NULL, NULL,
                              CP_SERVICE_DISPLAY)) {
        cp_install_report("ChangeServiceConfig(csiproxy)", GetLastError());
        rc = roll_back(&u, drain_ms);
        goto out;
    }
    if (cp_install_configure(svc, drain_ms) != 0 || cp_install_event_source(u.target) != 0) {
        rc = roll_back(&u, drain_ms);
        goto out;
    }
    if (!running) {
        say_w(swap ? "service csiproxy taken over (left stopped: it was): %s"
                   : "service csiproxy already installed: configuration updated: %s",
              path);
        printf("csi-proxy: start it with: sc.exe start csiproxy\n");
        rc = 0;
        goto out;
    }
    say_w("service configuration updated: %s", path);
    printf("csi-proxy: starting csiproxy...\n");
    fflush(stdout);
    if (!start_healthy(svc, argc, argv, &u)) {
        printf("csi-proxy: the new csiproxy did not come up within %d s\n",
               START_DEADLINE_MS / 1000);
        rc = roll_back(&u, drain_ms);
        goto out;
    }
    printf("csi-proxy: %s\n", swap ? "upgraded" : "restarted with the new configuration");
    rc = 0;
    goto out;
restart_old:
    if (running && !StartServiceW(svc, 0, NULL))
        cp_install_report("StartService(csiproxy) after the failed swap", GetLastError());
out:
    if (u.proc != NULL)
        CloseHandle(u.proc);
    cp_cmdline_free(u.old_argv);
    free(u.old_path);
    free(img8);
    free(path);
    return rc;
}
