/* install_win.c - see install_win.h. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "security/account_win.h"
#include "service/cmdline.h"
#include "service/config.h"
#include "service/eventlog_win.h"
#include "service/flags.h"
#include "service/install_internal_win.h"
#include "service/install_win.h"
#include "service/cfgdir_win.h"
#include "security/roots.h"
#include "service/pipealarm_win.h"

#define STOP_WAIT_MS 30000
#define DESCRIPTION                                                                                \
    L"Kubernetes CSI proxy: serves the csi-proxy named pipes that CSI node plugins call to "       \
    L"manage disks, volumes, SMB mappings, iSCSI targets and directories on this node."

int cp_install_report(const char *what, DWORD err)
{
    char why[256];
    fprintf(stderr, "csi-proxy: %s: %s (error %lu)\n", what, cp_win_errtext(err, why, sizeof(why)),
            (unsigned long)err);
    return 1;
}

/* An elevated member of Administrators? (Both: an admin filtered by UAC,
 * or one whose token was restricted, is not.) */
static bool elevated_admin(void)
{
    BOOL member = FALSE;
    BYTE admins[SECURITY_MAX_SID_SIZE];
    DWORD len = sizeof(admins);
    if (!CreateWellKnownSid(WinBuiltinAdministratorsSid, NULL, admins, &len) ||
        !CheckTokenMembership(NULL, admins, &member) || !member)
        return false;
    HANDLE tok;
    TOKEN_ELEVATION el = {0};
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
        return false;
    BOOL ok = GetTokenInformation(tok, TokenElevation, &el, sizeof(el), &len);
    CloseHandle(tok);
    return ok && el.TokenIsElevated;
}

static int refuse_not_elevated(const char *what)
{
    fprintf(stderr,
            "csi-proxy: %s needs an elevated administrator: run it from an elevated prompt "
            "(\"Run as administrator\") or as SYSTEM\n",
            what);
    return 1;
}

int cp_install_bin_path(const wchar_t *exe, int argc, char **argv, wchar_t **out)
{
    char *exe8 = cp_win_wide_to_utf8(exe);
    size_t cap = 32768; /* the SCM's limit on a command line */
    char *line = calloc(1, cap);
    int rc = 1;
    if (exe8 == NULL || line == NULL) {
        fprintf(stderr, "csi-proxy: out of memory\n");
        goto out;
    }
    /* Always quoted: "C:\Program Files\..." must not be split. */
    snprintf(line, cap, "\"%s\"", exe8);
    bool ok = cp_cmdline_append(line, cap, "-windows-service");
    for (int i = 0; ok && i < argc; i++)
        if (strcmp(argv[i], "-windows-service") != 0 && strcmp(argv[i], "--windows-service") != 0)
            ok = cp_cmdline_append(line, cap, argv[i]);
    if (!ok) {
        fprintf(stderr, "csi-proxy: install: the command line is too long\n");
        goto out;
    }
    *out = cp_win_utf8_to_wide(line);
    rc = *out != NULL ? 0 : 1;
out:
    free(exe8);
    free(line);
    return rc;
}

int cp_install_event_source(const wchar_t *exe)
{
    HKEY key;
    LSTATUS st = RegCreateKeyExW(HKEY_LOCAL_MACHINE, CP_EVENTLOG_KEY, 0, NULL, 0, KEY_SET_VALUE,
                                 NULL, &key, NULL);
    if (st != ERROR_SUCCESS)
        return cp_install_report("event log source: RegCreateKeyEx", (DWORD)st);
    DWORD types = EVENTLOG_ERROR_TYPE | EVENTLOG_WARNING_TYPE | EVENTLOG_INFORMATION_TYPE;
    st = RegSetValueExW(key, L"EventMessageFile", 0, REG_EXPAND_SZ, (const BYTE *)exe,
                        (DWORD)((wcslen(exe) + 1) * sizeof(wchar_t)));
    if (st == ERROR_SUCCESS)
        st = RegSetValueExW(key, L"TypesSupported", 0, REG_DWORD, (const BYTE *)&types,
                            sizeof(types));
    RegCloseKey(key);
    return st == ERROR_SUCCESS ? 0
                               : cp_install_report("event log source: RegSetValueEx", (DWORD)st);
}

/* Description, failure actions, preshutdown timeout (drain_ms + 5 s). */
int cp_install_configure(SC_HANDLE svc, int64_t drain_ms)
{
    SERVICE_DESCRIPTIONW desc = {(LPWSTR)DESCRIPTION};
    if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_DESCRIPTION, &desc))
        return cp_install_report("ChangeServiceConfig2(description)", GetLastError());
    /* upstream: sc.exe failure csiproxy reset= 0 actions= restart/10000 */
    SC_ACTION actions[1] = {{SC_ACTION_RESTART, 10000}};
    SERVICE_FAILURE_ACTIONSW fa = {0, NULL, NULL, 1, actions};
    if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_FAILURE_ACTIONS, &fa))
        return cp_install_report("ChangeServiceConfig2(failure actions)", GetLastError());
    /* A start-up failure exits with a service-specific code, not a crash:
     * restart on that too. Wine does not know this level; not fatal. */
    SERVICE_FAILURE_ACTIONS_FLAG flag = {TRUE};
    if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &flag))
        fprintf(stderr, "csi-proxy: note: failure actions on non-crash exits not set (error %lu)\n",
                (unsigned long)GetLastError());
    SERVICE_PRESHUTDOWN_INFO pre = {(DWORD)(drain_ms + 5000)};
    if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_PRESHUTDOWN_INFO, &pre))
        fprintf(stderr, "csi-proxy: note: preshutdown timeout not set (error %lu)\n",
                (unsigned long)GetLastError());
    return 0;
}

/* X:\... or \\server\...: the service starts in C:\Windows\system32, where
 * a relative path would point somewhere else. */
static bool absolute(const char *p)
{
    return p == NULL || p[0] == '\0' ||
           (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
            (p[2] == '\\' || p[2] == '/')) ||
           (p[0] == '\\' && p[1] == '\\');
}

/* The default configuration file, %ProgramData%\csi-proxy\config.yaml,
 * as the service finds it. */
static void default_config(char *out, size_t cap)
{
    wchar_t pd[MAX_PATH];
    DWORD n = GetEnvironmentVariableW(L"ProgramData", pd, MAX_PATH);
    char *pd8 = n > 0 && n < MAX_PATH ? cp_win_wide_to_utf8(pd) : NULL;
    snprintf(out, cap, "%s\\csi-proxy\\config.yaml", pd8 != NULL ? pd8 : "C:\\ProgramData");
    free(pd8);
}

/* The roots the service will serve (flags over the file), checked as the
 * service checks them at start (roots.h). 0, or 1 having said why. */
static int check_roots(const cp_flags *f)
{
    cp_error e;
    int rc = cp_roots_check("-kubelet-path", f->kubelet_path, &e);
    for (size_t i = 0; rc == CP_OK && i < f->n_working_dirs; i++)
        rc = cp_roots_check("-working-dir", f->working_dirs[i], &e);
    if (rc != CP_OK) {
        fprintf(stderr, "csi-proxy: install: %s (the service would refuse to start)\n", e.msg);
        return 1;
    }
    return 0;
}

/* The flags must be ones the service accepts, paths must be absolute, the
 * configuration file it will read (-config, else the default one when it
 * exists) must load, and the roots must pass the service's own check:
 * better refused now than at every start of an automatic service.
 * Sets *drain_ms from the config (or the default). */
int cp_install_validate(int argc, char **argv, int64_t *drain_ms)
{
    char **args = calloc((size_t)argc + 2, sizeof(*args));
    if (args == NULL)
        return 1;
    args[0] = "csi-proxy";
    for (int i = 0; i < argc; i++)
        args[i + 1] = argv[i];
    cp_flags f;
    cp_error e;
    int rc = 0;
    cp_config c;
    memset(&c, 0, sizeof(c));
    if (cp_flags_parse(&f, argc + 1, args, &e) != CP_OK) {
        fprintf(stderr, "csi-proxy: install: %s\n", e.msg);
        rc = 2;
    } else if (f.n_args > 0) {
        fprintf(stderr, "csi-proxy: install: unexpected argument \"%s\"\n", f.args[0]);
        rc = 2;
    } else if (!absolute(f.config) || !absolute(f.log_file) || !absolute(f.log_dir)) {
        fprintf(stderr, "csi-proxy: install: -config, -log_file and -log_dir need absolute paths "
                        "(the service starts in C:\\Windows\\system32)\n");
        rc = 2;
    } else {
        char def[MAX_PATH * 3 + 32];
        const char *path = f.config;
        if (path == NULL) {
            default_config(def, sizeof(def));
            path = def;
        }
        int lrc = cp_config_load_file(&c, path, cp_win_resolve_account, NULL, &e);
        if (lrc == CP_E_NOT_FOUND && f.config == NULL) {
            rc = check_roots(&f); /* no file: the flags alone */
        } else if (lrc != CP_OK) {
            fprintf(stderr, "csi-proxy: install: %s %s\n",
                    f.config != NULL ? "-config" : "configuration file", e.msg);
            rc = 1;
        } else {
            *drain_ms = c.limits.drain_timeout_ms;
            if (cp_config_fill_flags(&c, &f) != CP_OK) {
                fprintf(stderr, "csi-proxy: install: out of memory\n");
                rc = 1;
            } else {
                rc = check_roots(&f);
            }
        }
    }
    cp_flags_free(&f);
    cp_config_free(&c);
    free(args);
    return rc;
}

int cp_install(int argc, char **argv)
{
    int64_t drain_ms = CP_CONFIG_DEFAULT_DRAIN_MS;
    /* The configuration folder first: a configuration file in it is
     * refused while the folder is open to others. */
    bool admin = elevated_admin();
    if (admin && cp_install_config_dir() != 0)
        return 1;
    int rc = cp_install_validate(argc, argv, &drain_ms);
    if (rc != 0)
        return rc;
    if (!admin)
        return refuse_not_elevated("install");
    wchar_t exe[MAX_PATH + 1];
    DWORD n = GetModuleFileNameW(NULL, exe, MAX_PATH + 1);
    if (n == 0 || n > MAX_PATH)
        return cp_install_report("GetModuleFileName",
                                 n == 0 ? GetLastError() : ERROR_INSUFFICIENT_BUFFER);
    rc = 1;
    wchar_t *path = NULL;
    SC_HANDLE svc = NULL;
    SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT | SC_MANAGER_CREATE_SERVICE);
    if (scm == NULL) {
        rc = cp_install_report("OpenSCManager", GetLastError());
        goto out;
    }
    /* One there already (ours, upstream's, an older one): take it over. */
    svc = OpenServiceW(scm, CP_SERVICE_NAME, SERVICE_ALL_ACCESS);
    if (svc != NULL) {
        rc = cp_upgrade(svc, exe, argc, argv);
        goto out;
    }
    if (GetLastError() != ERROR_SERVICE_DOES_NOT_EXIST) {
        rc = cp_install_report("OpenService(csiproxy)", GetLastError());
        goto out;
    }
    if (cp_install_bin_path(exe, argc, argv, &path) != 0)
        goto out;
    svc = CreateServiceW(scm, CP_SERVICE_NAME, CP_SERVICE_DISPLAY, SERVICE_ALL_ACCESS,
                         SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START, SERVICE_ERROR_NORMAL, path,
                         NULL, NULL, NULL, NULL, NULL);
    if (svc == NULL) {
        rc = cp_install_report("CreateService(csiproxy)", GetLastError());
        goto out;
    }
    if (cp_install_configure(svc, drain_ms) != 0 || cp_install_event_source(exe) != 0)
        goto out;
    char *p8 = cp_win_wide_to_utf8(path);
    printf("csi-proxy: service csiproxy installed (automatic start, restart on failure): %s\n",
           p8 != NULL ? p8 : "");
    printf("csi-proxy: start it with: sc.exe start csiproxy\n");
    free(p8);
    rc = 0;
out:
    if (svc != NULL)
        CloseServiceHandle(svc);
    if (scm != NULL)
        CloseServiceHandle(scm);
    free(path);
    return rc;
}

bool cp_install_wait_stopped(SC_HANDLE svc, DWORD wait_ms)
{
    ULONGLONG until = GetTickCount64() + wait_ms;
    for (;;) {
        SERVICE_STATUS_PROCESS st;
        DWORD len;
        if (!QueryServiceStatusEx(svc, SC_STATUS_PROCESS_INFO, (BYTE *)&st, sizeof(st), &len))
            return false;
        if (st.dwCurrentState == SERVICE_STOPPED)
            return true;
        if (GetTickCount64() >= until)
            return false;
        Sleep(100);
    }
}

int cp_uninstall(int argc, char **argv)
{
    (void)argv;
    if (argc > 0) {
        fprintf(stderr, "csi-proxy: uninstall takes no arguments\n");
        return 2;
    }
    if (!elevated_admin())
        return refuse_not_elevated("uninstall");
    int rc = 1;
    SC_HANDLE svc = NULL, scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
    if (scm == NULL) {
        rc = cp_install_report("OpenSCManager", GetLastError());
        goto out;
    }
    svc = OpenServiceW(scm, CP_SERVICE_NAME, SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE);
    if (svc == NULL && GetLastError() == ERROR_SERVICE_DOES_NOT_EXIST) {
        printf("csi-proxy: service csiproxy is not installed\n");
        rc = 0;
    } else if (svc == NULL) {
        rc = cp_install_report("OpenService(csiproxy)", GetLastError());
        goto out;
    } else {
        SERVICE_STATUS st;
        if (ControlService(svc, SERVICE_CONTROL_STOP, &st)) {
            printf("csi-proxy: stopping csiproxy (calls in flight are drained)...\n");
            if (!cp_install_wait_stopped(svc, STOP_WAIT_MS))
                fprintf(stderr,
                        "csi-proxy: csiproxy did not report STOPPED within %d s; "
                        "deleting it anyway (it goes once it stops)\n",
                        STOP_WAIT_MS / 1000);
        } else if (GetLastError() != ERROR_SERVICE_NOT_ACTIVE) {
            cp_install_report("ControlService(stop)", GetLastError());
        }
        if (!DeleteService(svc) && GetLastError() != ERROR_SERVICE_MARKED_FOR_DELETE) {
            rc = cp_install_report("DeleteService(csiproxy)", GetLastError());
            goto out;
        }
        printf("csi-proxy: service csiproxy removed\n");
        rc = 0;
    }
    LSTATUS st = RegDeleteKeyW(HKEY_LOCAL_MACHINE, CP_EVENTLOG_KEY);
    if (st != ERROR_SUCCESS && st != ERROR_FILE_NOT_FOUND)
        cp_install_report("event log source: RegDeleteKey", (DWORD)st);
    /* The pipe alarms health reads (pipealarm.h), then their parent key:
     * "RegDeleteKeyW function (winreg.h)", Microsoft Learn: a key with
     * subkeys is not deleted, so anything else kept there stays. */
    cp_pipealarm_win_clear();
    RegDeleteKeyW(HKEY_LOCAL_MACHINE, L"SOFTWARE\\csi-proxy");
out:
    if (svc != NULL)
        CloseServiceHandle(svc);
    if (scm != NULL)
        CloseServiceHandle(scm);
    return rc;
}
