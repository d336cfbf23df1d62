/* svctest.c - Wine test tool for the service and security suites (a test
 * tool: it may create processes; csi-proxy.exe never does).
 *
 *   svctest restricted EXE [ARGS...]
 *       runs EXE with this process's token restricted by
 *       CreateRestrictedToken: BUILTIN\Administrators made deny-only (what
 *       a non-elevated or deliberately restricted admin has). Prints
 *       nothing itself; exits with EXE's exit code (100 when it cannot).
 *   svctest sddl PIPE
 *       opens \\.\pipe\PIPE for READ_CONTROL and prints the DACL of its
 *       security descriptor as SDDL (exit 1 when it cannot).
 *   svctest norm SDDL
 *       prints SDDL's DACL as Windows writes it back, for comparisons.
 *   svctest mkpipe NAME SDDL
 *       creates \\.\pipe\NAME with SDDL's security, no privilege
 *       enabled; prints "created" or "error N".
 *   svctest touch PIPE
 *       connects and disconnects at once, sending nothing (a client gone
 *       before it could be identified).
 *   svctest handoff PIPE
 *       opens the pipe with an inheritable handle, starts "svctest send H"
 *       with it and exits at once: the connection lives on in a process
 *       that did not open it, after its opener is gone.
 *   svctest send HANDLE
 *       (the child) waits 500 ms, sends the HTTP/2 client preface and an
 *       empty SETTINGS frame on the inherited handle, reads the answer.
 *   svctest handoff-call PIPE DIR
 *       the hand-off attack: this process (allowed: an admin)
 *       opens \\.\pipe\PIPE, sends the first byte of the HTTP/2 preface,
 *       starts "svctest handed ..." with Administrators deny-only (as
 *       `restricted`) and the pipe handle inherited, lets the service see
 *       the byte, prints the child's pid and exits. The child waits for
 *       this process to end, then sends the rest of the preface and a
 *       filesystem Mkdir of DIR on the inherited connection, and prints
 *       "status: N MESSAGE" (exit code N; 100 when it could not call).
 *   svctest tokcache PIPE PATH SID
 *       the attack on the service's cache of allowed tokens (gate_win.c,
 *       gate_seen): this process makes filesystem PathExists(PATH) calls
 *       on \\.\pipe\PIPE, each on a new connection, and between them
 *       changes its own token: unchanged (twice), after
 *       AdjustTokenPrivileges (ModifiedId moves), after AdjustTokenGroups
 *       disabling SID (when the system lets it: Wine 8 has no
 *       AdjustTokenGroups, Windows refuses for a mandatory group; SID's
 *       attributes in the token are printed first); then
 *       runs "svctest tokcall PIPE PATH" with Administrators deny-only (as
 *       `restricted`) and calls once more itself. Prints, one a line,
 *       "token ID modified MID" for every state (as the service logs
 *       them: HighPart:LowPart in hex) and "call NAME: status N MESSAGE";
 *       exit 0, or 100 when it could not call.
 *   svctest tokcall PIPE PATH
 *       prints "child token ID modified MID" and makes one PathExists call
 *       ("call restricted-child: status N MESSAGE"); exits with N.
 *   svctest member
 *       prints "admin" or "not admin" for this process's token.
 *   svctest osjudge
 *       the gate's second judge (security/osjudge_win.h: any of a list of
 *       SIDs enabled, in one AccessCheck) against CheckTokenMembership SID
 *       by SID, on this process's token and on one with Administrators
 *       deny-only, and on two with restricting SIDs (which Wine ignores),
 *       for lists of 0, 1, 2 and 18 SIDs (the last across two
 *       AccessChecks). One "ok - ..." / "not ok - ..." line each; exit 0
 *       when all agree and the answers known beforehand hold.
 *   svctest msg EXE TEXT
 *       formats event 1 of EXE's message table (the Event Log's view of
 *       a csi-proxy record) with TEXT as insertion string %1 and prints it.
 *   svctest qc SERVICE
 *       prints the service's configuration, one "key: value" a line:
 *       start, binpath, display, description, reset, actions (exit 3 when
 *       the service does not exist).
 *   svctest service NAME
 *       runs as the Windows service NAME (its binPath is "svctest.exe
 *       service NAME"): reports RUNNING, and STOPPED on a stop control. A
 *       stand-in the system group's Start/StopService can work on.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <aclapi.h>
#include <stdbool.h>
#include <stdint.h>
#include <sddl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "client/h2client.h"
#include "security/osjudge_win.h"

static int fail(const char *what)
{
    fprintf(stderr, "svctest: %s failed: error %lu\n", what, (unsigned long)GetLastError());
    return 1;
}

/* Appends arg to cmd, quoted as CommandLineToArgvW reads it back. */
static void append_arg(wchar_t *cmd, size_t cap, const wchar_t *arg)
{
    size_t n = wcslen(cmd);
    if (n > 0 && n + 1 < cap)
        cmd[n++] = L' ';
    int quote = arg[0] == L'\0' || wcspbrk(arg, L" \t\"") != NULL;
    if (quote && n + 1 < cap)
        cmd[n++] = L'"';
    for (const wchar_t *p = arg;; p++) {
        size_t bs = 0;
        while (*p == L'\\') {
            bs++;
            p++;
        }
        size_t reps = *p == L'\0' ? (quote ? 2 * bs : bs) : *p == L'"' ? 2 * bs + 1 : bs;
        for (size_t i = 0; i < reps && n + 1 < cap; i++)
            cmd[n++] = L'\\';
        if (*p == L'\0')
            break;
        if (n + 1 < cap)
            cmd[n++] = *p;
    }
    if (quote && n + 1 < cap)
        cmd[n++] = L'"';
    cmd[n] = L'\0';
}

/* Starts cmd with token tok, sharing this process's standard handles (and
 * its inheritable handles). */
static BOOL spawn_as(HANDLE tok, wchar_t *cmd, PROCESS_INFORMATION *pi)
{
    STARTUPINFOW si = {sizeof(si)};
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
    si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    return CreateProcessAsUserW(tok, NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, pi);
}

static int restricted(int argc, wchar_t **argv)
{
    HANDLE self, rtok;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ALL_ACCESS, &self))
        return fail("OpenProcessToken"), 100;
    BYTE admins[SECURITY_MAX_SID_SIZE];
    DWORD len = sizeof(admins);
    if (!CreateWellKnownSid(WinBuiltinAdministratorsSid, NULL, admins, &len))
        return fail("CreateWellKnownSid"), 100;
    SID_AND_ATTRIBUTES disable = {admins, 0};
    if (!CreateRestrictedToken(self, 0, 1, &disable, 0, NULL, 0, NULL, &rtok))
        return fail("CreateRestrictedToken"), 100;
    static wchar_t cmd[32768];
    cmd[0] = L'\0';
    for (int i = 0; i < argc; i++)
        append_arg(cmd, sizeof(cmd) / sizeof(cmd[0]), argv[i]);
    PROCESS_INFORMATION pi;
    if (!spawn_as(rtok, cmd, &pi))
        return fail("CreateProcessAsUserW"), 100;
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 100;
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return (int)code;
}

static int print_dacl(PSECURITY_DESCRIPTOR sd)
{
    LPWSTR s = NULL;
    if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, SDDL_REVISION_1,
                                                              DACL_SECURITY_INFORMATION, &s, NULL))
        return fail("ConvertSecurityDescriptorToStringSecurityDescriptorW");
    wprintf(L"%ls\n", s);
    LocalFree(s);
    return 0;
}

static HANDLE open_pipe(const wchar_t *name, DWORD access)
{
    wchar_t path[512];
    swprintf(path, 512, L"\\\\.\\pipe\\%ls", name);
    for (int i = 0; i < 50; i++) {
        HANDLE h = CreateFileW(path, access, 0, NULL, OPEN_EXISTING,
                               SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS, NULL);
        if (h != INVALID_HANDLE_VALUE || GetLastError() != ERROR_PIPE_BUSY)
            return h;
        WaitNamedPipeW(path, 100);
    }
    return INVALID_HANDLE_VALUE;
}

static int sddl_of_pipe(const wchar_t *name)
{
    HANDLE h = open_pipe(name, READ_CONTROL | GENERIC_READ);
    if (h == INVALID_HANDLE_VALUE)
        return fail("CreateFileW(pipe)");
    PSECURITY_DESCRIPTOR sd = NULL;
    DWORD err = GetSecurityInfo(h, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, NULL,
                                NULL, &sd);
    CloseHandle(h);
    if (err != ERROR_SUCCESS) {
        SetLastError(err);
        return fail("GetSecurityInfo");
    }
    int rc = print_dacl(sd);
    LocalFree(sd);
    return rc;
}

static int norm(const wchar_t *sddl)
{
    PSECURITY_DESCRIPTOR sd = NULL;
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, NULL))
        return fail("ConvertStringSecurityDescriptorToSecurityDescriptorW");
    int rc = print_dacl(sd);
    LocalFree(sd);
    return rc;
}

/* Creates the first instance of \\.\pipe\NAME with SDDL's security and
 * prints "created" or "error N" (CreateNamedPipeW's GetLastError), with
 * no privilege enabled: what the service meets at start. Windows needs
 * SeSecurityPrivilege enabled for a security descriptor whose SACL holds
 * audit entries ("SACL for a New Object", Microsoft Learn:
 * ERROR_PRIVILEGE_NOT_HELD, 1314); Wine does not check. */
static int mkpipe(const wchar_t *name, const wchar_t *sddl)
{
    PSECURITY_DESCRIPTOR sd = NULL;
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, NULL))
        return fail("ConvertStringSecurityDescriptorToSecurityDescriptorW");
    SECURITY_ATTRIBUTES sa = {sizeof(sa), sd, FALSE};
    wchar_t path[256];
    swprintf(path, sizeof(path) / sizeof(path[0]), L"\\\\.\\pipe\\%ls", name);
    HANDLE h = CreateNamedPipeW(path, PIPE_ACCESS_DUPLEX | FILE_FLAG_FIRST_PIPE_INSTANCE,
                                PIPE_TYPE_BYTE | PIPE_REJECT_REMOTE_CLIENTS, 1, 4096, 4096, 0, &sa);
    DWORD err = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
    LocalFree(sd);
    if (h == INVALID_HANDLE_VALUE) {
        printf("error %lu\n", (unsigned long)err);
        return 1;
    }
    printf("created\n");
    CloseHandle(h);
    return 0;
}

static int member(void)
{
    BYTE admins[SECURITY_MAX_SID_SIZE];
    DWORD len = sizeof(admins);
    BOOL m = FALSE;
    if (!CreateWellKnownSid(WinBuiltinAdministratorsSid, NULL, admins, &len) ||
        !CheckTokenMembership(NULL, admins, &m))
        return fail("CheckTokenMembership");
    printf("%s\n", m ? "admin" : "not admin");
    return 0;
}

/* One token against one SID list: the judge must answer as
 * CheckTokenMembership on each SID does together; want (-1: not known
 * beforehand) is checked as well. */
static int osjudge_case(const char *what, HANDLE tok, PSID *sids, size_t n, int want)
{
    bool any = false;
    for (size_t k = 0; k < n; k++) {
        BOOL m = FALSE;
        if (!CheckTokenMembership(tok, sids[k], &m))
            return fail("CheckTokenMembership");
        any = any || m;
    }
    cp_osjudge *j = cp_osjudge_new(sids, n);
    bool got = false;
    DWORD err = 0;
    bool asked = j != NULL && cp_osjudge_member(j, tok, &got, &err);
    cp_osjudge_free(j);
    int ok = asked && got == any && (want < 0 || got == (want != 0));
    printf("%s - %s: %s (CheckTokenMembership: %s)%s\n", ok ? "ok" : "not ok", what,
           !asked ? "failed"
           : got  ? "member"
                  : "not member",
           any ? "member" : "not member", asked ? "" : " error");
    if (!asked)
        printf("# error %lu\n", (unsigned long)err);
    return ok ? 0 : 1;
}

static HANDLE restricted_token(void);

static int osjudge(void)
{
    HANDLE self = NULL, mine = NULL, rtok = restricted_token(), theirs = NULL;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY | TOKEN_DUPLICATE, &self) ||
        !DuplicateToken(self, SecurityIdentification, &mine) || rtok == NULL ||
        !DuplicateToken(rtok, SecurityIdentification, &theirs))
        return fail("token set-up"), 100;
    static const wchar_t *const names[] = {L"S-1-5-32-544", L"S-1-5-18"};
    PSID admins = NULL, system = NULL, many[18] = {0};
    if (!ConvertStringSidToSidW(names[0], &admins) || !ConvertStringSidToSidW(names[1], &system))
        return fail("ConvertStringSidToSidW"), 100;
    for (int i = 0; i < 17; i++) { /* SIDs of no one, then Administrators */
        wchar_t text[64];
        swprintf(text, 64, L"S-1-5-21-1-2-3-%d", 4000 + i);
        if (!ConvertStringSidToSidW(text, &many[i]))
            return fail("ConvertStringSidToSidW"), 100;
    }
    many[17] = admins;
    PSID one[] = {admins}, sys[] = {system}, both[] = {system, admins};
    int bad = 0;
    bad += osjudge_case("no SIDs at all", mine, NULL, 0, 0);
    bad += osjudge_case("an admin's token, Administrators", mine, one, 1, 1);
    bad += osjudge_case("an admin's token, SYSTEM", mine, sys, 1, -1);
    bad += osjudge_case("an admin's token, SYSTEM or Administrators", mine, both, 2, 1);
    bad += osjudge_case("an admin's token, 17 unknown SIDs then Administrators (two checks)", mine,
                        many, 18, 1);
    bad += osjudge_case("the first 16 of those alone", mine, many, 16, 0);
    bad += osjudge_case("Administrators deny-only, Administrators", theirs, one, 1, 0);
    bad += osjudge_case("Administrators deny-only, SYSTEM or Administrators", theirs, both, 2, -1);
    bad += osjudge_case("Administrators deny-only, the 18 SIDs", theirs, many, 18, 0);
    /* Restricting SIDs: Wine 8 ignores them (CreateRestrictedToken keeps
     * none), Windows checks them in a second pass; either way the judge must
     * answer as CheckTokenMembership (test/windows/osjudge.ps1 runs this
     * on Windows). */
    PSID everyone = NULL;
    HANDLE r1 = NULL, r2 = NULL, i1 = NULL, i2 = NULL;
    if (!ConvertStringSidToSidW(L"S-1-1-0", &everyone))
        return fail("ConvertStringSidToSidW"), 100;
    SID_AND_ATTRIBUTES only_everyone[] = {{everyone, 0}},
                       with_admins[] = {{everyone, 0}, {admins, 0}};
    if (!CreateRestrictedToken(self, 0, 0, NULL, 0, NULL, 1, only_everyone, &r1) ||
        !CreateRestrictedToken(self, 0, 0, NULL, 0, NULL, 2, with_admins, &r2) ||
        !DuplicateToken(r1, SecurityIdentification, &i1) ||
        !DuplicateToken(r2, SecurityIdentification, &i2))
        return fail("restricting-SID tokens"), 100;
    bad += osjudge_case("restricting SIDs {Everyone}, Administrators", i1, one, 1, -1);
    bad += osjudge_case("restricting SIDs {Everyone}, SYSTEM or Administrators", i1, both, 2, -1);
    bad +=
        osjudge_case("restricting SIDs {Everyone, Administrators}, Administrators", i2, one, 1, 1);
    bad +=
        osjudge_case("restricting SIDs {Everyone, Administrators}, the 18 SIDs", i2, many, 18, 1);
    CloseHandle(i1);
    CloseHandle(i2);
    CloseHandle(r1);
    CloseHandle(r2);
    LocalFree(everyone);
    for (int i = 0; i < 17; i++)
        LocalFree(many[i]);
    LocalFree(admins);
    LocalFree(system);
    CloseHandle(theirs);
    CloseHandle(rtok);
    CloseHandle(mine);
    CloseHandle(self);
    return bad == 0 ? 0 : 1;
}

static int query_config(const wchar_t *name)
{
    SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
    if (scm == NULL)
        return fail("OpenSCManagerW");
    SC_HANDLE svc = OpenServiceW(scm, name, SERVICE_QUERY_CONFIG);
    if (svc == NULL) {
        int rc = GetLastError() == ERROR_SERVICE_DOES_NOT_EXIST ? 3 : fail("OpenServiceW");
        if (rc == 3)
            printf("not installed\n");
        CloseServiceHandle(scm);
        return rc;
    }
    static BYTE buf[8192];
    DWORD need;
    QUERY_SERVICE_CONFIGW *qc = (QUERY_SERVICE_CONFIGW *)buf;
    if (QueryServiceConfigW(svc, qc, sizeof(buf), &need)) {
        printf("start: %lu\n", (unsigned long)qc->dwStartType);
        printf("type: %lu\n", (unsigned long)qc->dwServiceType);
        wprintf(L"binpath: %ls\n", qc->lpBinaryPathName);
        wprintf(L"display: %ls\n", qc->lpDisplayName != NULL ? qc->lpDisplayName : L"");
    }
    SERVICE_DESCRIPTIONW *d = (SERVICE_DESCRIPTIONW *)buf;
    if (QueryServiceConfig2W(svc, SERVICE_CONFIG_DESCRIPTION, buf, sizeof(buf), &need))
        wprintf(L"description: %ls\n", d->lpDescription != NULL ? d->lpDescription : L"");
    SERVICE_FAILURE_ACTIONSW *fa = (SERVICE_FAILURE_ACTIONSW *)buf;
    if (QueryServiceConfig2W(svc, SERVICE_CONFIG_FAILURE_ACTIONS, buf, sizeof(buf), &need)) {
        printf("reset: %lu\nactions:", (unsigned long)fa->dwResetPeriod);
        for (DWORD i = 0; i < fa->cActions; i++)
            printf(" %s/%lu", fa->lpsaActions[i].Type == SC_ACTION_RESTART ? "restart" : "other",
                   (unsigned long)fa->lpsaActions[i].Delay);
        printf("\n");
    } else {
        printf("actions: (query failed: error %lu)\n", (unsigned long)GetLastError());
    }
    CloseServiceHandle(svc);
    CloseServiceHandle(scm);
    return 0;
}

static int message(const wchar_t *exe, const wchar_t *text)
{
    HMODULE h = LoadLibraryExW(exe, NULL, LOAD_LIBRARY_AS_DATAFILE);
    if (h == NULL)
        return fail("LoadLibraryExW");
    LPWSTR out = NULL;
    DWORD_PTR args[1] = {(DWORD_PTR)text};
    DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_HMODULE | FORMAT_MESSAGE_ARGUMENT_ARRAY |
                                 FORMAT_MESSAGE_ALLOCATE_BUFFER,
                             h, 1, 0, (LPWSTR)&out, 0, (va_list *)args);
    int rc = n > 0 ? (wprintf(L"%ls\n", out), 0) : fail("FormatMessageW(event 1)");
    LocalFree(out);
    FreeLibrary(h);
    return rc;
}

static int handoff(const wchar_t *name)
{
    wchar_t path[512];
    swprintf(path, 512, L"\\\\.\\pipe\\%ls", name);
    SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
    HANDLE h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, &sa, OPEN_EXISTING,
                           SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return fail("CreateFileW(pipe)");
    wchar_t self[MAX_PATH], cmd[MAX_PATH + 64];
    GetModuleFileNameW(NULL, self, MAX_PATH);
    swprintf(cmd, MAX_PATH + 64, L"\"%ls\" send %llu", self, (unsigned long long)(UINT_PTR)h);
    STARTUPINFOW si = {sizeof(si)};
    PROCESS_INFORMATION pi;
    if (!CreateProcessW(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi))
        return fail("CreateProcessW");
    printf("%lu\n", (unsigned long)pi.dwProcessId);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return 0; /* and exit: the child holds the connection */
}

static int send_preface(const wchar_t *hs)
{
    HANDLE h = (HANDLE)(UINT_PTR)wcstoull(hs, NULL, 10);
    Sleep(500);
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
    DWORD n = 0;
    if (!WriteFile(h, preface, sizeof(preface) - 1, &n, NULL))
        return fail("WriteFile");
    char buf[256];
    ReadFile(h, buf, sizeof(buf), &n, NULL);
    Sleep(300);
    CloseHandle(h);
    return 0;
}

/* --- a connection handed on ---------------------------- */

/* CreateRestrictedToken of this process's token with BUILTIN\Administrators
 * deny-only; NULL on failure. */
static HANDLE restricted_token(void)
{
    HANDLE self, rtok;
    BYTE admins[SECURITY_MAX_SID_SIZE];
    DWORD len = sizeof(admins);
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ALL_ACCESS, &self) ||
        !CreateWellKnownSid(WinBuiltinAdministratorsSid, NULL, admins, &len))
        return NULL;
    SID_AND_ATTRIBUTES disable = {admins, 0};
    BOOL ok = CreateRestrictedToken(self, 0, 1, &disable, 0, NULL, 0, NULL, &rtok);
    CloseHandle(self);
    return ok ? rtok : NULL;
}

static int handoff_call(const wchar_t *name, const wchar_t *dir)
{
    wchar_t path[512];
    swprintf(path, 512, L"\\\\.\\pipe\\%ls", name);
    SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
    HANDLE h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, &sa, OPEN_EXISTING,
                           SECURITY_SQOS_PRESENT | SECURITY_ANONYMOUS, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return fail("CreateFileW(pipe)");
    DWORD n = 0;
    if (!WriteFile(h, "P", 1, &n, NULL)) /* the service identifies us on this byte */
        return fail("WriteFile(first byte)");
    HANDLE self = NULL; /* for the child to wait on */
    if (!DuplicateHandle(GetCurrentProcess(), GetCurrentProcess(), GetCurrentProcess(), &self,
                         SYNCHRONIZE, TRUE, 0))
        return fail("DuplicateHandle(self)");
    HANDLE rtok = restricted_token();
    if (rtok == NULL)
        return fail("CreateRestrictedToken");
    wchar_t exe[MAX_PATH];
    static wchar_t cmd[4096];
    GetModuleFileNameW(NULL, exe, MAX_PATH);
    swprintf(cmd, 4096, L"\"%ls\" handed %llu %llu", exe, (unsigned long long)(UINT_PTR)h,
             (unsigned long long)(UINT_PTR)self);
    append_arg(cmd, 4096, dir);
    PROCESS_INFORMATION pi;
    if (!spawn_as(rtok, cmd, &pi))
        return fail("CreateProcessAsUserW");
    printf("handed to pid %lu\n", (unsigned long)pi.dwProcessId);
    fflush(stdout);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    Sleep(1000); /* the service reads the byte and lets us in meanwhile */
    return 0;    /* and exit: the child holds the connection */
}

typedef struct handed_io {
    HANDLE h;
    bool skipped; /* the opener sent the preface's first byte */
} handed_io;

static int handed_write(void *ctx, const uint8_t *buf, size_t len, cp_error *e)
{
    handed_io *io = ctx;
    if (!io->skipped && len > 0) {
        io->skipped = true;
        buf++, len--;
    }
    while (len > 0) {
        DWORD n = 0;
        if (!WriteFile(io->h, buf, (DWORD)len, &n, NULL))
            return cp_error_set(e, CP_E_IO, "WriteFile: error %lu", (unsigned long)GetLastError());
        buf += n, len -= n;
    }
    return CP_OK;
}

static long handed_read(void *ctx, uint8_t *buf, size_t cap, int64_t timeout_ms, cp_error *e)
{
    (void)timeout_ms;
    handed_io *io = ctx;
    DWORD n = 0;
    if (!ReadFile(io->h, buf, (DWORD)cap, &n, NULL)) {
        DWORD err = GetLastError();
        if (err == ERROR_BROKEN_PIPE || err == ERROR_PIPE_NOT_CONNECTED)
            return 0;
        return cp_error_set(e, CP_E_IO, "ReadFile: error %lu", (unsigned long)err);
    }
    return (long)n;
}

static int64_t handed_now(void *ctx)
{
    (void)ctx;
    return (int64_t)GetTickCount64();
}

static int handed(const wchar_t *hs, const wchar_t *ps, const wchar_t *dir)
{
    handed_io io = {(HANDLE)(UINT_PTR)wcstoull(hs, NULL, 10), false};
    HANDLE opener = (HANDLE)(UINT_PTR)wcstoull(ps, NULL, 10);
    if (WaitForSingleObject(opener, 10000) != WAIT_OBJECT_0)
        return fail("waiting for the opener to exit"), 100;
    char path[1024];
    int plen = WideCharToMultiByte(CP_UTF8, 0, dir, -1, path, sizeof(path), NULL, NULL) - 1;
    if (plen <= 0 || plen > 120)
        return fail("DIR"), 100;
    uint8_t body[128] = {0x0a, (uint8_t)plen}; /* MkdirRequest{path = DIR} */
    memcpy(body + 2, path, (size_t)plen);
    cp_h2c_io hio = {handed_write, handed_read, handed_now, &io};
    cp_error e = {0};
    cp_h2c *c = NULL;
    cp_arena *a = cp_arena_new();
    if (a == NULL || cp_h2c_new(&hio, "svctest-handed", &c, &e) != CP_OK)
        return fprintf(stderr, "svctest: %s\n", e.msg), 100;
    cp_h2c_request req = {.path = "/v1.Filesystem/Mkdir", .body = body, .len = (size_t)plen + 2};
    cp_h2c_response resp = {0};
    if (cp_h2c_call(c, &req, a, &resp, &e) != CP_OK)
        return fprintf(stderr, "svctest: call: %s\n", e.msg), 100;
    printf("status: %d %s\n", resp.grpc_status, resp.grpc_message);
    fflush(stdout);
    cp_h2c_free(c);
    cp_arena_free(a);
    return resp.grpc_status;
}

/* --- the cache of allowed tokens (gate_win.c) ---------------------------- */

/* This process's token state, as the service logs it; false if unknown. */
static bool token_state(char *out, size_t cap)
{
    HANDLE t = NULL;
    TOKEN_STATISTICS st;
    DWORD len = 0;
    bool ok = OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &t) &&
              GetTokenInformation(t, TokenStatistics, &st, sizeof(st), &len);
    if (t != NULL)
        CloseHandle(t);
    if (ok)
        snprintf(out, cap, "token %lx:%08lx modified %lx:%08lx", (unsigned long)st.TokenId.HighPart,
                 (unsigned long)st.TokenId.LowPart, (unsigned long)st.ModifiedId.HighPart,
                 (unsigned long)st.ModifiedId.LowPart);
    else
        snprintf(out, cap, "token unknown (error %lu)", (unsigned long)GetLastError());
    return ok;
}

/* One filesystem PathExists(path) on a new connection to \\.\pipe\name;
 * prints "call what: status N MESSAGE". Returns N, or -1 when no call
 * could be made. */
/* One call on a new connection: prints its status and returns it (-1: no
 * answer). */
static int call_on_new_conn(const wchar_t *name, const char *method, const uint8_t *body,
                            size_t len, const char *what)
{
    HANDLE h = open_pipe(name, GENERIC_READ | GENERIC_WRITE);
    if (h == INVALID_HANDLE_VALUE)
        return fail("CreateFileW(pipe)"), -1;
    handed_io io = {h, true};
    cp_h2c_io hio = {handed_write, handed_read, handed_now, &io};
    cp_error e = {0};
    cp_h2c *c = NULL;
    cp_arena *a = cp_arena_new();
    int rc = -1;
    if (a != NULL && cp_h2c_new(&hio, "svctest", &c, &e) == CP_OK) {
        cp_h2c_request req = {.path = method, .body = body, .len = len};
        cp_h2c_response resp = {0};
        if (cp_h2c_call(c, &req, a, &resp, &e) == CP_OK) {
            printf("call %s: status %d %s\n", what, resp.grpc_status, resp.grpc_message);
            rc = resp.grpc_status;
        } else {
            fprintf(stderr, "svctest: call %s: %s\n", what, e.msg);
        }
    } else {
        fprintf(stderr, "svctest: %s\n", e.msg[0] != '\0' ? e.msg : "out of memory");
    }
    fflush(stdout);
    cp_h2c_free(c);
    cp_arena_free(a);
    CloseHandle(h);
    return rc;
}

/* PathExists(path) on a new connection; its status, -1 when none. */
static int fresh_call(const wchar_t *name, const wchar_t *path, const char *what)
{
    char p[512];
    int plen = WideCharToMultiByte(CP_UTF8, 0, path, -1, p, sizeof(p), NULL, NULL) - 1;
    if (plen <= 0 || plen > 120)
        return fprintf(stderr, "svctest: PATH too long\n"), -1;
    uint8_t body[128] = {0x0a, (uint8_t)plen}; /* PathExistsRequest{path} */
    memcpy(body + 2, p, (size_t)plen);
    return call_on_new_conn(name, "/v1.Filesystem/PathExists", body, (size_t)plen + 2, what);
}

/* Flips one privilege the token holds (Wine's admin token and an elevated
 * Windows admin both hold SeDebugPrivilege; every token holds
 * SeChangeNotifyPrivilege). Prints what it did. */
static void adjust_privileges(HANDLE tok)
{
    static const wchar_t *const names[] = {L"SeDebugPrivilege", L"SeTimeZonePrivilege",
                                           L"SeChangeNotifyPrivilege"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        TOKEN_PRIVILEGES tp = {1, {{{0, 0}, 0}}};
        if (!LookupPrivilegeValueW(NULL, names[i], &tp.Privileges[0].Luid))
            continue;
        PRIVILEGE_SET ps = {1, PRIVILEGE_SET_ALL_NECESSARY, {{tp.Privileges[0].Luid, 0}}};
        BOOL on = FALSE;
        if (!PrivilegeCheck(tok, &ps, &on))
            continue;
        tp.Privileges[0].Attributes = on ? 0 : SE_PRIVILEGE_ENABLED;
        SetLastError(0);
        BOOL ok = AdjustTokenPrivileges(tok, FALSE, &tp, 0, NULL, NULL);
        DWORD err = GetLastError(); /* ERROR_NOT_ALL_ASSIGNED: not held */
        if (ok && err == ERROR_SUCCESS) {
            printf("privileges: AdjustTokenPrivileges %ls %s\n", names[i],
                   on ? "disabled" : "enabled");
            return;
        }
    }
    printf("privileges: no privilege could be adjusted (error %lu)\n",
           (unsigned long)GetLastError());
}

/* Disables sid in the token if the system lets it: prints the outcome;
 * true when the token changed. */
static bool adjust_groups(HANDLE tok, const wchar_t *sid_text)
{
    PSID sid = NULL;
    if (!ConvertStringSidToSidW(sid_text, &sid))
        return fail("ConvertStringSidToSidW"), false;
    static BYTE buf[16384];
    DWORD len = 0;
    if (GetTokenInformation(tok, TokenGroups, buf, sizeof(buf), &len)) {
        const TOKEN_GROUPS *have = (const TOKEN_GROUPS *)buf;
        for (DWORD i = 0; i < have->GroupCount; i++)
            if (EqualSid(have->Groups[i].Sid, sid))
                printf("groups: %ls has attributes 0x%08lx%s\n", sid_text,
                       (unsigned long)have->Groups[i].Attributes,
                       have->Groups[i].Attributes & SE_GROUP_MANDATORY ? " (mandatory)" : "");
    }
    TOKEN_GROUPS tg = {1, {{sid, 0}}}; /* Attributes 0: disable */
    SetLastError(0);
    BOOL ok = AdjustTokenGroups(tok, FALSE, &tg, 0, NULL, NULL);
    DWORD err = GetLastError();
    LocalFree(sid);
    if (ok && err == ERROR_SUCCESS) {
        printf("groups: AdjustTokenGroups disabled %ls\n", sid_text);
        return true;
    }
    printf("groups: AdjustTokenGroups cannot disable %ls: error %lu%s\n", sid_text,
           (unsigned long)err,
           err == ERROR_INVALID_FUNCTION         ? " (not implemented: Wine)"
           : err == ERROR_CANT_DISABLE_MANDATORY ? " (a mandatory group)"
                                                 : "");
    return false;
}

static int tokcache(const wchar_t *pipe, const wchar_t *path, const wchar_t *sid)
{
    char st[128];
    HANDLE tok = NULL;
    if (!OpenProcessToken(GetCurrentProcess(),
                          TOKEN_QUERY | TOKEN_ADJUST_PRIVILEGES | TOKEN_ADJUST_GROUPS, &tok))
        return fail("OpenProcessToken"), 100;
    token_state(st, sizeof(st));
    printf("%s\n", st);
    if (fresh_call(pipe, path, "unchanged-1") < 0 || fresh_call(pipe, path, "unchanged-2") < 0)
        return 100;
    adjust_privileges(tok);
    token_state(st, sizeof(st));
    printf("%s\n", st);
    if (fresh_call(pipe, path, "privileges-adjusted") < 0)
        return 100;
    if (adjust_groups(tok, sid)) {
        token_state(st, sizeof(st));
        printf("%s\n", st);
        if (fresh_call(pipe, path, "groups-adjusted") < 0)
            return 100;
        AdjustTokenGroups(tok, TRUE, NULL, 0, NULL, NULL); /* back to the defaults */
        token_state(st, sizeof(st));
        printf("%s\n", st);
    }
    fflush(stdout);
    /* A second token: this one's groups with Administrators deny-only. */
    HANDLE rtok = restricted_token();
    if (rtok == NULL)
        return fail("CreateRestrictedToken"), 100;
    wchar_t exe[MAX_PATH];
    static wchar_t cmd[4096];
    GetModuleFileNameW(NULL, exe, MAX_PATH);
    cmd[0] = L'\0';
    append_arg(cmd, 4096, exe);
    append_arg(cmd, 4096, L"tokcall");
    append_arg(cmd, 4096, pipe);
    append_arg(cmd, 4096, path);
    PROCESS_INFORMATION pi;
    if (!spawn_as(rtok, cmd, &pi))
        return fail("CreateProcessAsUserW"), 100;
    printf("child pid %lu\n", (unsigned long)pi.dwProcessId);
    fflush(stdout);
    WaitForSingleObject(pi.hProcess, 60000);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    CloseHandle(rtok);
    token_state(st, sizeof(st));
    printf("%s\n", st);
    if (fresh_call(pipe, path, "after-child") < 0)
        return 100;
    CloseHandle(tok);
    return 0;
}

static int tokcall(const wchar_t *pipe, const wchar_t *path)
{
    char st[128];
    token_state(st, sizeof(st));
    printf("child %s\n", st);
    fflush(stdout);
    int rc = fresh_call(pipe, path, "restricted-child");
    return rc < 0 ? 100 : rc;
}

/* --- a minimal service ("Writing a ServiceMain Function") --------------- */

static SERVICE_STATUS_HANDLE dummy_status;
static HANDLE dummy_stop;

static void dummy_report(DWORD state)
{
    SERVICE_STATUS st = {0};
    st.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
    st.dwCurrentState = state;
    st.dwControlsAccepted = state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP : 0;
    SetServiceStatus(dummy_status, &st);
}

static DWORD WINAPI dummy_control(DWORD ctl, DWORD type, void *data, void *ctx)
{
    (void)type, (void)data, (void)ctx;
    if (ctl == SERVICE_CONTROL_STOP) {
        dummy_report(SERVICE_STOP_PENDING);
        SetEvent(dummy_stop);
    }
    return NO_ERROR;
}

static void WINAPI dummy_main(DWORD argc, wchar_t **argv)
{
    dummy_status = RegisterServiceCtrlHandlerExW(argc > 0 ? argv[0] : L"", dummy_control, NULL);
    if (dummy_status == NULL)
        return;
    dummy_stop = CreateEventW(NULL, TRUE, FALSE, NULL);
    dummy_report(SERVICE_RUNNING);
    WaitForSingleObject(dummy_stop, INFINITE);
    dummy_report(SERVICE_STOPPED);
}

static int run_service(wchar_t *name)
{
    SERVICE_TABLE_ENTRYW table[] = {{name, dummy_main}, {NULL, NULL}};
    return StartServiceCtrlDispatcherW(table) ? 0 : fail("StartServiceCtrlDispatcherW");
}

int wmain(int argc, wchar_t **argv)
{
    if (argc >= 3 && wcscmp(argv[1], L"restricted") == 0)
        return restricted(argc - 2, argv + 2);
    if (argc == 3 && wcscmp(argv[1], L"sddl") == 0)
        return sddl_of_pipe(argv[2]);
    if (argc == 3 && wcscmp(argv[1], L"norm") == 0)
        return norm(argv[2]);
    if (argc == 3 && wcscmp(argv[1], L"touch") == 0) {
        HANDLE h = open_pipe(argv[2], GENERIC_READ | GENERIC_WRITE);
        if (h == INVALID_HANDLE_VALUE)
            return fail("CreateFileW(pipe)");
        CloseHandle(h);
        return 0;
    }
    if (argc == 5 && wcscmp(argv[1], L"tokcache") == 0)
        return tokcache(argv[2], argv[3], argv[4]);
    if (argc == 4 && wcscmp(argv[1], L"tokcall") == 0)
        return tokcall(argv[2], argv[3]);
    if (argc == 2 && wcscmp(argv[1], L"osjudge") == 0)
        return osjudge();
    if (argc == 2 && wcscmp(argv[1], L"member") == 0)
        return member();
    if (argc == 4 && wcscmp(argv[1], L"mkpipe") == 0)
        return mkpipe(argv[2], argv[3]);
    if (argc == 3 && wcscmp(argv[1], L"handoff") == 0)
        return handoff(argv[2]);
    if (argc == 4 && wcscmp(argv[1], L"handoff-call") == 0)
        return handoff_call(argv[2], argv[3]);
    if (argc == 5 && wcscmp(argv[1], L"handed") == 0)
        return handed(argv[2], argv[3], argv[4]);
    if (argc == 3 && wcscmp(argv[1], L"send") == 0)
        return send_preface(argv[2]);
    if (argc == 4 && wcscmp(argv[1], L"msg") == 0)
        return message(argv[2], argv[3]);
    if (argc == 3 && wcscmp(argv[1], L"qc") == 0)
        return query_config(argv[2]);
    if (argc == 3 && wcscmp(argv[1], L"service") == 0)
        return run_service(argv[2]);
    fprintf(stderr,
            "usage: svctest restricted EXE [ARGS...] | sddl PIPE | norm SDDL | touch PIPE | "
            "handoff PIPE | handoff-call PIPE DIR | tokcache PIPE PATH SID | tokcall PIPE PATH | "
            "member | mkpipe NAME SDDL | osjudge | msg EXE TEXT | qc SERVICE | service NAME\n");
    return 2;
}
