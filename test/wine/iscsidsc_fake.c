/* iscsidsc_fake.c - a stand-in iscsidsc.dll for test/wine/iscsi.sh, copied
 * into the private Wine prefix's system32 only (Wine 8 ships no
 * iscsidsc.dll). It lets the real csi-proxy.exe run its iSCSI back-end
 * (winapi/iscsi_win32.c) under Wine: loading, the buffer-size loops, the
 * structures and the error map. TEST BUILD ONLY; never shipped.
 *
 * It is built from the same declarations as the back-end
 * (winapi/iscsidsc_win32.h), so it cannot show that those match
 * Microsoft's DLL: test/windows/iscsi.ps1 is for that.
 *
 * The initiator it fakes, in memory of the one process that loads it:
 *   - a portal 192.0.2.10:3260 (TEST-NET-1) is reachable; "unreachable.example" is not
 *     (ISDSC_CONNECTION_FAILED); other addresses are reachable and empty;
 *   - through 192.0.2.10:3260: iqn.2024-01.test:t1 (disks 3 and 4, and a
 *     CD-ROM 9 that is no disk), iqn.2024-01.test:chap (disk 5; one-way
 *     CHAP user "chapuser", secret "fake-secret-1234");
 *   - the mutual CHAP secret must be 12 to 16 bytes
 *     (ISDSC_INVALID_CHAP_SECRET otherwise);
 *   - LoginIScsiTargetW with IsPersistent only records the login, with
 *     the initiator instance it was given ("" for NULL, which is what an
 *     older csi-proxy passed; what Windows reports then is printed by
 *     test/windows/iscsi.ps1);
 *   - RemoveIScsiPersistentTargetW refuses a NULL InitiatorInstance
 *     (ERROR_INVALID_PARAMETER: the SDK marks it _In_) and one that is not
 *     the login's (ISDSC_INITIATOR_INSTANCE_NOT_FOUND).
 * Environment of the loading process: CP_FAKE_ISCSI=stopped makes every
 * call answer ISDSC_SERVICE_NOT_RUNNING; =rpc, RPC_S_SERVER_UNAVAILABLE.
 * CP_FAKE_ISCSI_LEFT=<iqn>: that target has a persistent login when the
 * DLL loads, as an older csi-proxy left it (initiator instance "").
 * CP_FAKE_ISCSI_STATE=<file>: after every change the persistent logins
 * are written there, one "persistent <iqn> instance=<name>" line each, then
 * "persistent-login-calls <n>" (logins asked with IsPersistent TRUE).
 * Built with -DFAKE_NO_LOGIN, it lacks LoginIScsiTargetW. Session and
 * target lists need more room than the back-end first offers, so its
 * ERROR_INSUFFICIENT_BUFFER loops run. */
#include "winapi/iscsi_isdsc.h"
#include "winapi/iscsidsc_win32.h"

#include <stdio.h>
#include <string.h>
#include <wchar.h>

#define API __declspec(dllexport) ULONG WINAPI
#define MAXN 16
#define PAD 6000 /* bytes/characters the lists claim beyond their content */

typedef struct {
    const WCHAR *iqn;
    const WCHAR *user, *secret; /* NULL: no CHAP */
    ULONG disks[3];
} target;

static const target targets[] = {
    {L"iqn.2024-01.test:t1", NULL, NULL, {3, 4, 0}},
    {L"iqn.2024-01.test:chap", L"chapuser", L"fake-secret-1234", {5, 0, 0}},
};
#define NT (sizeof(targets) / sizeof(targets[0]))

static cp_iscsi_target_portal portals[MAXN];
static int nportals;
static int session_of[NT];    /* session id, 0: none */
static int persistent_of[NT]; /* recorded persistent logins */
static WCHAR persistent_ini[NT][CP_ISCSI_MAX_HBANAME_LEN];
static int persistent_calls; /* LoginIScsiTargetW with IsPersistent TRUE */
static int seeded;
#ifndef FAKE_NO_LOGIN
static int next_session = 1;
#endif

static int find_target(const WCHAR *iqn);

/* The persistent logins into CP_FAKE_ISCSI_STATE, for the test to read. */
static void save_state(void)
{
    WCHAR path[MAX_PATH];
    DWORD n = GetEnvironmentVariableW(L"CP_FAKE_ISCSI_STATE", path, MAX_PATH);
    if (n == 0 || n >= MAX_PATH)
        return;
    char buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < NT; i++)
        if (persistent_of[i] > 0)
            k += (size_t)snprintf(buf + k, sizeof(buf) - k, "persistent %ls instance=%ls\n",
                                  targets[i].iqn, persistent_ini[i]);
    k +=
        (size_t)snprintf(buf + k, sizeof(buf) - k, "persistent-login-calls %d\n", persistent_calls);
    HANDLE h = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return;
    DWORD w;
    WriteFile(h, buf, (DWORD)k, &w, NULL);
    CloseHandle(h);
}

/* CP_FAKE_ISCSI_LEFT: a persistent login an older csi-proxy left. */
static void seed(void)
{
    if (seeded)
        return;
    seeded = 1;
    WCHAR v[CP_ISCSI_MAX_NAME_LEN + 1];
    DWORD n = GetEnvironmentVariableW(L"CP_FAKE_ISCSI_LEFT", v, CP_ISCSI_MAX_NAME_LEN + 1);
    int i = n > 0 && n <= CP_ISCSI_MAX_NAME_LEN ? find_target(v) : -1;
    if (i >= 0) {
        persistent_of[i] = 1;
        persistent_ini[i][0] = 0;
    }
    save_state();
}

static ULONG down(void)
{
    seed();
    WCHAR v[32];
    DWORD n = GetEnvironmentVariableW(L"CP_FAKE_ISCSI", v, 32);
    if (n > 0 && n < 32 && wcscmp(v, L"stopped") == 0)
        return CP_ISDSC_SERVICE_NOT_RUNNING;
    if (n > 0 && n < 32 && wcscmp(v, L"rpc") == 0)
        return RPC_S_SERVER_UNAVAILABLE;
    return 0;
}

static int find_portal(const cp_iscsi_target_portal *p)
{
    for (int i = 0; i < nportals; i++)
        if (_wcsicmp(portals[i].Address, p->Address) == 0 && portals[i].Socket == p->Socket)
            return i;
    return -1;
}

static int home_registered(void) /* the targets' own portal */
{
    cp_iscsi_target_portal h = {.Socket = 3260};
    wcscpy(h.Address, L"192.0.2.10");
    return find_portal(&h) >= 0;
}

static int find_target(const WCHAR *iqn)
{
    for (size_t i = 0; i < NT; i++)
        if (_wcsicmp(targets[i].iqn, iqn) == 0)
            return (int)i;
    return -1;
}

API AddIScsiSendTargetPortalW(PWSTR ini, ULONG port, cp_iscsi_login_options *o, ULONGLONG sec,
                              cp_iscsi_target_portal *p)
{
    (void)ini, (void)port, (void)o, (void)sec;
    if (down())
        return down();
    if (_wcsicmp(p->Address, L"unreachable.example") == 0)
        return CP_ISDSC_CONNECTION_FAILED;
    if (find_portal(p) >= 0)
        return CP_ISDSC_TARGET_PORTAL_ALREADY_EXISTS;
    if (nportals == MAXN)
        return ERROR_NOT_ENOUGH_MEMORY;
    portals[nportals++] = *p;
    return 0;
}

API RemoveIScsiSendTargetPortalW(PWSTR ini, ULONG port, cp_iscsi_target_portal *p)
{
    (void)ini, (void)port;
    if (down())
        return down();
    int i = find_portal(p);
    if (i < 0)
        return CP_ISDSC_PORTAL_NOT_FOUND;
    portals[i] = portals[--nportals];
    return 0;
}

API ReportIScsiSendTargetPortalsExW(PULONG count, PULONG size, cp_iscsi_portal_info_ex *info)
{
    if (down())
        return down();
    ULONG need = (ULONG)nportals * sizeof(*info);
    if (*size < need || *count < (ULONG)nportals) {
        *size = need;
        *count = (ULONG)nportals;
        return ERROR_INSUFFICIENT_BUFFER;
    }
    for (int i = 0; i < nportals; i++) {
        memset(&info[i], 0, sizeof(info[i]));
        wcscpy(info[i].InitiatorName, L"ROOT\\ISCSIPRT\\0000_0");
        info[i].InitiatorPortNumber = CP_ISCSI_ALL_INITIATOR_PORTS;
        wcscpy(info[i].Address, portals[i].Address);
        info[i].Socket = portals[i].Socket;
    }
    *count = (ULONG)nportals;
    *size = need;
    return 0;
}

API RefreshIScsiSendTargetPortalW(PWSTR ini, ULONG port, cp_iscsi_target_portal *p)
{
    (void)ini, (void)port;
    if (down())
        return down();
    return find_portal(p) >= 0 ? 0 : CP_ISDSC_PORTAL_NOT_FOUND;
}

API ReportIScsiTargetsW(BOOLEAN force, PULONG size, PWCHAR buf)
{
    (void)force;
    if (down())
        return down();
    ULONG need = PAD + 1;
    if (*size < need) {
        *size = need;
        return ERROR_INSUFFICIENT_BUFFER;
    }
    PWCHAR w = buf;
    for (size_t i = 0; i < NT && home_registered(); i++) {
        wcscpy(w, targets[i].iqn);
        w += wcslen(w) + 1;
    }
    *w = 0;
    return 0;
}

API GetIScsiTargetInformationW(PWSTR t, PWSTR mech, int cls, PULONG size, PVOID buf)
{
    (void)mech;
    if (down())
        return down();
    if (find_target(t) < 0 || !home_registered())
        return CP_ISDSC_TARGET_NOT_FOUND;
    if (cls != CP_ISCSI_INFO_DISCOVERY_MECHANISMS)
        return ERROR_INVALID_PARAMETER;
    static const WCHAR m[] = L"SendTargets:*192.0.2.10 0003260 ROOT\\ISCSIPRT\\0000_0 \0";
    if (*size < sizeof(m)) {
        *size = sizeof(m);
        return ERROR_INSUFFICIENT_BUFFER;
    }
    memcpy(buf, m, sizeof(m));
    *size = sizeof(m);
    return 0;
}

#ifndef FAKE_NO_LOGIN
static int same(const UCHAR *p, ULONG n, const WCHAR *w)
{
    size_t k = wcslen(w);
    if (p == NULL || n != k)
        return 0;
    for (size_t i = 0; i < k; i++)
        if (p[i] != (UCHAR)w[i])
            return 0;
    return 1;
}

API LoginIScsiTargetW(PWSTR t, BOOLEAN info, PWSTR ini, ULONG port, cp_iscsi_target_portal *p,
                      ULONGLONG sec, void *map, cp_iscsi_login_options *o, ULONG ks, PCHAR key,
                      BOOLEAN persistent, cp_iscsi_session_id *sid, cp_iscsi_session_id *cid)
{
    (void)info, (void)ini, (void)port, (void)p, (void)sec, (void)map, (void)ks, (void)key;
    if (down())
        return down();
    int i = find_target(t);
    if (i < 0 || !home_registered())
        return CP_ISDSC_TARGET_NOT_FOUND;
    if (persistent) {
        persistent_calls++;
        persistent_of[i]++;
        wcsncpy(persistent_ini[i], ini != NULL ? ini : L"", CP_ISCSI_MAX_HBANAME_LEN - 1);
        save_state();
        return 0;
    }
    if (session_of[i] != 0)
        return CP_ISDSC_TARGET_ALREADY_LOGGED_IN;
    if (targets[i].user != NULL && (o == NULL || o->AuthType != CP_ISCSI_CHAP_AUTH_TYPE ||
                                    !(o->InformationSpecified & CP_ISCSI_LOGIN_OPTIONS_PASSWORD) ||
                                    !same(o->Username, o->UsernameLength, targets[i].user) ||
                                    !same(o->Password, o->PasswordLength, targets[i].secret)))
        return CP_ISDSC_AUTHENTICATION_FAILURE;
    session_of[i] = next_session++;
    sid->AdapterUnique = 0x1000;
    sid->AdapterSpecific = (ULONGLONG)session_of[i];
    *cid = *sid;
    return 0;
}
#endif

API LogoutIScsiTarget(cp_iscsi_session_id *sid)
{
    if (down())
        return down();
    for (size_t i = 0; i < NT; i++)
        if (session_of[i] != 0 && (ULONGLONG)session_of[i] == sid->AdapterSpecific) {
            session_of[i] = 0;
            return 0;
        }
    return CP_ISDSC_INVALID_SESSION_ID;
}

API GetIScsiSessionListW(PULONG size, PULONG count, cp_iscsi_session_info *info)
{
    if (down())
        return down();
    ULONG n = 0;
    for (size_t i = 0; i < NT; i++)
        n += session_of[i] != 0;
    ULONG need = n * sizeof(*info) + PAD;
    if (*size < need) {
        *size = need;
        return ERROR_INSUFFICIENT_BUFFER;
    }
    /* the strings after the array, in the same buffer, as the real one */
    WCHAR *s = (WCHAR *)(info + n);
    ULONG k = 0;
    for (size_t i = 0; i < NT; i++) {
        if (session_of[i] == 0)
            continue;
        memset(&info[k], 0, sizeof(info[k]));
        info[k].SessionId.AdapterUnique = 0x1000;
        info[k].SessionId.AdapterSpecific = (ULONGLONG)session_of[i];
        wcscpy(s, targets[i].iqn);
        info[k].TargetNodeName = s;
        s += wcslen(s) + 1;
        k++;
    }
    *count = k;
    return 0;
}

API GetDevicesForIScsiSessionW(cp_iscsi_session_id *sid, PULONG count,
                               cp_iscsi_device_on_session *dev)
{
    if (down())
        return down();
    for (size_t i = 0; i < NT; i++) {
        if (session_of[i] == 0 || (ULONGLONG)session_of[i] != sid->AdapterSpecific)
            continue;
        ULONG n = 0, want = 1; /* the CD-ROM */
        while (n < 3 && targets[i].disks[n] != 0)
            n++;
        want += n;
        if (*count < want) {
            *count = want;
            return ERROR_INSUFFICIENT_BUFFER;
        }
        for (ULONG k = 0; k < want; k++) {
            memset(&dev[k], 0, sizeof(dev[k]));
            wcscpy(dev[k].TargetName, targets[i].iqn);
            dev[k].StorageDeviceNumber.DeviceType = k < n ? FILE_DEVICE_DISK : FILE_DEVICE_CD_ROM;
            dev[k].StorageDeviceNumber.DeviceNumber = k < n ? targets[i].disks[k] : 9;
        }
        *count = want;
        return 0;
    }
    return CP_ISDSC_INVALID_SESSION_ID;
}

API SetIScsiInitiatorCHAPSharedSecret(ULONG len, PUCHAR secret)
{
    (void)secret;
    if (down())
        return down();
    return len < 12 || len > 16 ? 0xEFFF004Au /* ISDSC_INVALID_CHAP_SECRET */ : 0;
}

API ReportIScsiPersistentLoginsW(PULONG count, cp_iscsi_persistent_login *info, PULONG size)
{
    if (down())
        return down();
    ULONG n = 0;
    for (size_t i = 0; i < NT; i++)
        n += persistent_of[i] > 0;
    if (*size < n * sizeof(*info)) {
        *size = n * sizeof(*info);
        *count = n;
        return ERROR_INSUFFICIENT_BUFFER;
    }
    ULONG k = 0;
    for (size_t i = 0; i < NT; i++) {
        if (persistent_of[i] == 0)
            continue;
        memset(&info[k], 0, sizeof(info[k]));
        wcscpy(info[k].TargetName, targets[i].iqn);
        wcscpy(info[k].InitiatorInstance, persistent_ini[i]);
        info[k].InitiatorPortNumber = CP_ISCSI_ANY_INITIATOR_PORT;
        wcscpy(info[k].TargetPortal.Address, L"192.0.2.10");
        info[k].TargetPortal.Socket = 3260;
        k++;
    }
    *count = k;
    *size = k * sizeof(*info);
    return 0;
}

API RemoveIScsiPersistentTargetW(PWSTR ini, ULONG port, PWSTR t, cp_iscsi_target_portal *p)
{
    (void)port, (void)p;
    if (down())
        return down();
    if (ini == NULL)
        return ERROR_INVALID_PARAMETER;
    int i = find_target(t);
    if (i < 0 || persistent_of[i] == 0)
        return CP_ISDSC_TARGET_NOT_FOUND;
    if (_wcsicmp(ini, persistent_ini[i]) != 0)
        return 0xEFFF0017u; /* ISDSC_INITIATOR_INSTANCE_NOT_FOUND */
    persistent_of[i] = 0;
    save_state();
    return 0;
}
