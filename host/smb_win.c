/* smb_win.c - smb.h on Windows: SMB global mappings through WMI,
 * MSFT_SmbGlobalMapping in ROOT\Microsoft\Windows\SMB, the class behind
 * New-/Get-/Remove-SmbGlobalMapping ("New-SmbGlobalMapping": "Global
 * mappings allow all users to use the same mapping. Its primary use is
 * for Windows Containers"). Windows documents no Win32 call with
 * global-mapping semantics (WNetAddConnection2 maps for the calling logon
 * session only), so this is the documented interface; upstream csi-proxy
 * reaches the same class through PowerShell. In-process COM through the
 * shared client of wmi_win.h (COM loaded on first use, packet privacy +
 * impersonate on every proxy, enumerators included); no child process, no
 * command string.
 *
 * The password is handed to Windows only inside Create's Credential
 * argument, a string "user:password" (see make_credential); the wide
 * copies and the BSTR this file makes of it are zeroed (SecureZeroMemory)
 * before they are freed. It never reaches e: errors
 * carry the share, the operation and numeric codes only, never the
 * provider's message text. */
#include "host/wmi_win.h" /* first: COBJMACROS */

#include "host/smb_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "host/localaddr_win.h"
#include "base/winutil_win.h"

#define SMB_NS L"ROOT\\Microsoft\\Windows\\SMB"
#define SMB_CLASS L"MSFT_SmbGlobalMapping"
#define WHERE "MSFT_SmbGlobalMapping (ROOT\\Microsoft\\Windows\\SMB)"

/* Windows' "Multiple connections to a server or shared resource by the
 * same user, using more than one user name, are not allowed" (winerror.h,
 * "System Error Codes (1000-1299)"). */
#ifndef ERROR_SESSION_CREDENTIAL_CONFLICT
#define ERROR_SESSION_CREDENTIAL_CONFLICT 1219L
#endif

typedef struct smbw {
    cp_wmi_conn wmi;
} smbw;

/* --- errors --------------------------------------------------------------- */

/* The status of a failed WMI step (hr) or of a method's non-zero
 * ReturnValue / Windows error (code), with a text naming the share, the
 * step and the numbers. */
static int smb_error(cp_error *e, const char *root, const char *what, HRESULT hr, ULONG code)
{
    if (code == ERROR_SESSION_CREDENTIAL_CONFLICT ||
        hr == HRESULT_FROM_WIN32(ERROR_SESSION_CREDENTIAL_CONFLICT))
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "SMB global mapping %s: %s: the server is already connected by this "
                            "node with other credentials (ERROR_SESSION_CREDENTIAL_CONFLICT, "
                            "multiple connections to a server by the same user); remove the "
                            "other mapping of that server first",
                            root, what);
    if (hr == (HRESULT)WBEM_E_INVALID_NAMESPACE || hr == (HRESULT)WBEM_E_INVALID_CLASS ||
        hr == (HRESULT)WBEM_E_INVALID_METHOD)
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "SMB global mapping %s: %s: " WHERE
                            " is not available on this host (HRESULT 0x%08lx); SMB global "
                            "mappings need Windows Server 2016 / Windows 10 1709 or later",
                            root, what, (unsigned long)hr);
    if (hr == (HRESULT)WBEM_E_ACCESS_DENIED || hr == (HRESULT)E_ACCESSDENIED ||
        code == ERROR_ACCESS_DENIED || code == ERROR_LOGON_FAILURE ||
        hr == HRESULT_FROM_WIN32(ERROR_ACCESS_DENIED) ||
        hr == HRESULT_FROM_WIN32(ERROR_LOGON_FAILURE))
        return cp_error_set(e, CP_E_PERMISSION_DENIED,
                            "SMB global mapping %s: %s: access denied (HRESULT 0x%08lx, Windows "
                            "error %lu)",
                            root, what, (unsigned long)hr, code);
    if (hr == (HRESULT)WBEM_E_NOT_FOUND || code == ERROR_BAD_NETPATH ||
        code == ERROR_BAD_NET_NAME || code == ERROR_NOT_CONNECTED)
        return cp_error_set(e, CP_E_NOT_FOUND,
                            "SMB global mapping %s: %s: not found (HRESULT 0x%08lx, Windows "
                            "error %lu)",
                            root, what, (unsigned long)hr, code);
    if (cp_wmi_classify((uint32_t)hr) != CP_WMI_HR_OTHER)
        return cp_error_set(e, CP_E_UNAVAILABLE,
                            "SMB global mapping %s: %s: the connection to WMI was lost (%s, "
                            "HRESULT 0x%08lx); it is made again at the next call",
                            root, what, cp_wmi_hr_name((uint32_t)hr), (unsigned long)hr);
    return cp_error_set(e, CP_E_UNKNOWN,
                        "SMB global mapping %s: %s failed (HRESULT 0x%08lx, Windows error %lu)",
                        root, what, (unsigned long)hr, code);
}

/* The connection, and the class definition: a namespace or class that does
 * not exist (Wine, Windows before global mappings) is FAILED_PRECONDITION
 * naming both, and the service keeps serving its other calls. */
static int open_class(smbw *s, const char *root, IWbemServices **svc, IWbemClassObject **def,
                      cp_wmi_failure *f, cp_error *e)
{
    *def = NULL;
    HRESULT hr;
    int rc = cp_wmi_connect(&s->wmi, svc, &hr, e);
    f->hr = (uint32_t)hr;
    if (rc != CP_OK && cp_wmi_classify((uint32_t)hr) != CP_WMI_HR_OTHER)
        return smb_error(e, root, "connecting to " WHERE, hr, 0); /* winmgmt restarting */
    if (rc != CP_OK && FAILED(hr)) {
        /* ConnectServer answers WBEM_E_INVALID_NAMESPACE for a namespace
         * that is not there ("IWbemLocator::ConnectServer"); any failure to
         * connect to it is reported as the missing interface. */
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "SMB global mapping %s: " WHERE
                            " is not available on this host: connecting to the namespace "
                            "failed (HRESULT 0x%08lx%s); SMB global mappings need the SMB "
                            "client's management interface (Windows Server 2016 or later)",
                            root, (unsigned long)hr,
                            hr == (HRESULT)WBEM_E_INVALID_NAMESPACE ? ", WBEM_E_INVALID_NAMESPACE"
                                                                    : "");
    }
    if (rc != CP_OK)
        return rc;
    BSTR cls = cp_com.SysAllocString(SMB_CLASS);
    hr = cls != NULL ? IWbemServices_GetObject(*svc, cls, 0, NULL, def, NULL) : E_OUTOFMEMORY;
    cp_com.SysFreeString(cls);
    if (SUCCEEDED(hr) && *def == NULL)
        hr = WBEM_E_NOT_FOUND;
    if (FAILED(hr)) {
        f->hr = (uint32_t)hr;
        IWbemServices_Release(*svc);
        *svc = NULL;
        if (hr == (HRESULT)WBEM_E_NOT_FOUND)
            hr = WBEM_E_INVALID_CLASS; /* the class itself is missing */
        return smb_error(e, root, "looking up the class", hr, 0);
    }
    return CP_OK;
}

/* WQL string literal of s: '\' and '\'' escaped with a backslash
 * ("WQL-Supported Data Types": strings). NULL when out of memory. */
static wchar_t *wql_quote(const char *s)
{
    wchar_t *w = cp_win_utf8_to_wide(s);
    if (w == NULL)
        return NULL;
    size_t n = wcslen(w);
    wchar_t *q = malloc((2 * n + 1) * sizeof(wchar_t));
    if (q != NULL) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (w[i] == L'\\' || w[i] == L'\'')
                q[k++] = L'\\';
            q[k++] = w[i];
        }
        q[k] = L'\0';
    }
    free(w);
    return q;
}

/* The first MSFT_SmbGlobalMapping whose RemotePath is root ("Get-
 * SmbGlobalMapping -RemotePath"; WQL string comparison ignores case), or
 * S_FALSE and *obj NULL when there is none. */
static HRESULT find_mapping(IWbemServices *svc, const char *root, IWbemClassObject **obj)
{
    *obj = NULL;
    wchar_t *q = wql_quote(root);
    if (q == NULL)
        return E_OUTOFMEMORY;
    size_t len = wcslen(q) + 64;
    wchar_t *query = malloc(len * sizeof(wchar_t));
    if (query != NULL)
        swprintf(query, len, L"SELECT * FROM MSFT_SmbGlobalMapping WHERE RemotePath = '%ls'", q);
    free(q);
    HRESULT hr = query != NULL ? cp_wmi_first(svc, query, obj) : E_OUTOFMEMORY;
    free(query);
    return hr;
}

/* --- operations ----------------------------------------------------------- */

/* Status of the mapping: "MSFT_SmbMapping class" documents the values the
 * global mapping shares (OK (0), Paused (1), Disconnected (2), Network
 * Error (3), Connecting (4), Reconnecting (5), Unavailable (6)); anything
 * but OK is a share that no longer answers, which upstream remaps. */
/* The arguments and results of one SMB operation, for its attempts. */
typedef struct smb_op {
    smbw *s;
    const char *root;
    const char *username, *password;
    bool require_privacy;
    cp_smb_state *state;
    int attempts;
} smb_op;

static int state_attempt(void *arg, cp_wmi_failure *f, cp_error *e)
{
    smb_op *op = arg;
    const char *root = op->root;
    *op->state = CP_SMB_UNMAPPED;
    IWbemServices *svc;
    IWbemClassObject *def, *obj = NULL;
    int rc = open_class(op->s, root, &svc, &def, f, e);
    if (rc != CP_OK)
        return rc;
    HRESULT hr = find_mapping(svc, root, &obj);
    if (hr == S_OK) {
        VARIANT v;
        cp_com.VariantInit(&v);
        hr = IWbemClassObject_Get(obj, L"Status", 0, &v, NULL, NULL);
        if (SUCCEEDED(hr))
            *op->state = (V_VT(&v) == VT_I4 || V_VT(&v) == VT_UI4) && V_I4(&v) == 0
                             ? CP_SMB_MAPPED
                             : CP_SMB_UNREACHABLE;
        cp_com.VariantClear(&v);
    }
    if (FAILED(hr)) {
        f->hr = (uint32_t)hr;
        rc = smb_error(e, root, "querying " WHERE, hr, cp_wmi_error_code());
        if (rc == CP_E_NOT_FOUND) /* a query that finds nothing is no error */
            rc = CP_OK;
    }
    if (obj != NULL)
        IWbemClassObject_Release(obj);
    IWbemClassObject_Release(def);
    IWbemServices_Release(svc);
    return rc;
}

/* A query: made again on a new connection after a lost one
 * (CP_WMI_RETRY_IDEMPOTENT). */
static int w_state(void *ctx, const char *root, cp_smb_state *out, cp_error *e)
{
    smbw *s = ctx;
    smb_op op = {.s = s, .root = root, .state = out};
    return cp_wmi_call(state_attempt, &op, cp_wmi_drop, &s->wmi, CP_WMI_RETRY_IDEMPOTENT, e);
}

/* Password into in[name] as a BSTR that is zeroed before it is freed. */
static HRESULT put_secret(IWbemClassObject *in, const wchar_t *name, const wchar_t *pw)
{
    VARIANT v;
    cp_com.VariantInit(&v);
    V_VT(&v) = VT_BSTR;
    V_BSTR(&v) = cp_com.SysAllocString(pw);
    if (V_BSTR(&v) == NULL)
        return E_OUTOFMEMORY;
    HRESULT hr = IWbemClassObject_Put(in, name, 0, &v, 0);
    SecureZeroMemory(V_BSTR(&v), wcslen(V_BSTR(&v)) * sizeof(wchar_t));
    cp_com.SysFreeString(V_BSTR(&v));
    return hr;
}

/* The Credential argument of Create. Microsoft documents no
 * MSFT_SmbGlobalMapping class page (only the cmdlets); the class as
 * Windows Server 2019 defines it (microsoft/wmi, wmigen output of
 * root.Microsoft.Windows.SMB: Create(LocalPath string, RemotePath string,
 * Credential string, Persistent bool, RequireIntegrity bool,
 * RequirePrivacy bool, FullAccess string[], DenyAccess string[],
 * UseWriteThrough bool, out CreatedMapping, ReturnValue uint32);
 * Remove(Force bool)) declares Credential a plain string. New-
 * SmbGlobalMapping is a CDXML cmdlet; PowerShell's cmdletization adapter
 * (PowerShell/PowerShell cimSupport/cmdletization/cim/cimConverter.cs,
 * ConvertFromDotNetToCim) turns its PSCredential into that string: the user
 * name with each '\' doubled and each ':' escaped as "\:", then ':', then
 * the password. Upstream csi-proxy (pkg/cim/smb.go, 2025) builds the same
 * string. Returns the string (caller zeroes and frees) or NULL when out of
 * memory. */
static wchar_t *make_credential(const char *username, const char *password)
{
    wchar_t *wu = cp_win_utf8_to_wide(username);
    wchar_t *wp = cp_win_utf8_to_wide(password);
    wchar_t *c = NULL;
    if (wu != NULL && wp != NULL) {
        size_t nu = wcslen(wu), np = wcslen(wp);
        c = malloc((2 * nu + 1 + np + 1) * sizeof(wchar_t));
        if (c != NULL) {
            size_t k = 0;
            for (size_t i = 0; i < nu; i++) {
                if (wu[i] == L'\\' || wu[i] == L':')
                    c[k++] = L'\\';
                c[k++] = wu[i];
            }
            c[k++] = L':';
            wmemcpy(c + k, wp, np);
            c[k + np] = L'\0';
        }
    }
    if (wp != NULL)
        SecureZeroMemory(wp, wcslen(wp) * sizeof(wchar_t));
    free(wp);
    free(wu);
    return c;
}

/* MSFT_SmbGlobalMapping.Create, a static method (RemotePath, Credential,
 * RequirePrivacy set; LocalPath, Persistent and the rest left unset, as
 * upstream's New-SmbGlobalMapping call and its WMI version leave them;
 * Credential only with a user name, as upstream), through
 * "Calling a Provider Method": GetObject on the class, GetMethod for the
 * in-parameters, SpawnInstance, Put, ExecMethod on the class path. A
 * failure is mapped from the HRESULT, the ReturnValue or the extended
 * error's Windows code. */
static int map_attempt(void *arg, cp_wmi_failure *f, cp_error *e)
{
    smb_op *op = arg;
    const char *root = op->root, *username = op->username, *password = op->password;
    IWbemServices *svc;
    IWbemClassObject *def, *in_def = NULL, *in = NULL;
    wchar_t *cred = NULL;
    int rc = open_class(op->s, root, &svc, &def, f, e);
    if (rc != CP_OK)
        return rc;
    BSTR cls = cp_com.SysAllocString(SMB_CLASS), method = cp_com.SysAllocString(L"Create");
    wchar_t *wroot = cp_win_utf8_to_wide(root);
    HRESULT hr = cls != NULL && method != NULL && wroot != NULL ? S_OK : E_OUTOFMEMORY;
    const char *step = "MSFT_SmbGlobalMapping.Create";
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_GetMethod(def, L"Create", 0, &in_def, NULL);
    if (SUCCEEDED(hr) && in_def == NULL)
        hr = WBEM_E_INVALID_METHOD;
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_SpawnInstance(in_def, 0, &in);
    if (SUCCEEDED(hr))
        hr = cp_wmi_put_str(in, L"RemotePath", wroot);
    if (SUCCEEDED(hr))
        hr = cp_wmi_put_bool(in, L"RequirePrivacy", op->require_privacy);
    if (SUCCEEDED(hr) && username != NULL && username[0] != '\0') {
        cred = make_credential(username, password != NULL ? password : "");
        hr = cred != NULL ? put_secret(in, L"Credential", cred) : E_OUTOFMEMORY;
        if (FAILED(hr))
            step = "MSFT_SmbGlobalMapping.Create: setting its Credential argument";
    }
    ULONG rv = 0, code = FAILED(hr) ? cp_wmi_error_code() : 0;
    if (SUCCEEDED(hr)) {
        hr = cp_wmi_exec(svc, cls, method, in, &rv, &code);
        f->effect = true; /* from here on the mapping may have been made */
    }
    if (FAILED(hr)) {
        f->hr = (uint32_t)hr;
        rc = smb_error(e, root, step, hr, code);
        if (rc == CP_E_NOT_FOUND) /* the share or server is not there */
            rc = cp_error_set(e, CP_E_NOT_FOUND,
                              "SMB global mapping %s: %s: the share was not found (HRESULT "
                              "0x%08lx, Windows error %lu)",
                              root, step, (unsigned long)hr, code);
    } else if (rv != 0) {
        rc = smb_error(e, root, step, S_OK, rv);
    }
    if (cred != NULL) {
        SecureZeroMemory(cred, wcslen(cred) * sizeof(wchar_t));
        free(cred);
    }
    if (in != NULL)
        IWbemClassObject_Release(in);
    if (in_def != NULL)
        IWbemClassObject_Release(in_def);
    free(wroot);
    cp_com.SysFreeString(cls);
    cp_com.SysFreeString(method);
    IWbemClassObject_Release(def);
    IWbemServices_Release(svc);
    return rc;
}

/* Create must not run twice (a second mapping of the same root with
 * other credentials is refused): it is made again on a new connection only
 * when the lost connection shows it did not run (CP_WMI_RETRY_IF_NOT_RUN).
 * Otherwise the caller gets UNAVAILABLE; its retry of NewSmbGlobalMapping
 * first asks the state, so a mapping that was made is found and kept. */
static int w_map(void *ctx, const char *root, const char *username, const char *password,
                 bool require_privacy, cp_error *e)
{
    smbw *s = ctx;
    smb_op op = {.s = s,
                 .root = root,
                 .username = username,
                 .password = password,
                 .require_privacy = require_privacy};
    return cp_wmi_call(map_attempt, &op, cp_wmi_drop, &s->wmi, CP_WMI_RETRY_IF_NOT_RUN, e);
}

/* MSFT_SmbGlobalMapping.Remove(Force true) on the mapping of root ("Remove-
 * SmbGlobalMapping -Force"); no mapping is NOT_FOUND. */
static int unmap_attempt(void *arg, cp_wmi_failure *f, cp_error *e)
{
    smb_op *op = arg;
    const char *root = op->root;
    IWbemServices *svc;
    IWbemClassObject *def, *obj = NULL, *in_def = NULL, *in = NULL;
    op->attempts++;
    int rc = open_class(op->s, root, &svc, &def, f, e);
    if (rc != CP_OK)
        return rc;
    BSTR method = cp_com.SysAllocString(L"Remove");
    VARIANT path;
    cp_com.VariantInit(&path);
    HRESULT hr = method != NULL ? find_mapping(svc, root, &obj) : E_OUTOFMEMORY;
    if (hr == S_FALSE) {
        /* gone: after a first attempt whose connection was lost, that
         * attempt removed it */
        if (op->attempts == 1)
            rc = cp_error_set(e, CP_E_NOT_FOUND, "SMB global mapping %s not found", root);
        goto out;
    }
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_Get(obj, L"__PATH", 0, &path, NULL, NULL);
    if (SUCCEEDED(hr) && V_VT(&path) != VT_BSTR)
        hr = E_UNEXPECTED;
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_GetMethod(def, L"Remove", 0, &in_def, NULL);
    if (SUCCEEDED(hr) && in_def != NULL) {
        hr = IWbemClassObject_SpawnInstance(in_def, 0, &in);
        if (SUCCEEDED(hr))
            hr = cp_wmi_put_bool(in, L"Force", true);
    }
    ULONG rv = 0, code = FAILED(hr) ? cp_wmi_error_code() : 0;
    if (SUCCEEDED(hr)) {
        hr = cp_wmi_exec(svc, V_BSTR(&path), method, in, &rv, &code);
        f->effect = true;
    }
    if (FAILED(hr)) {
        f->hr = (uint32_t)hr;
        rc = smb_error(e, root, "MSFT_SmbGlobalMapping.Remove", hr, code);
    } else if (rv != 0) {
        rc = smb_error(e, root, "MSFT_SmbGlobalMapping.Remove", S_OK, rv);
    }
out:
    cp_com.VariantClear(&path);
    if (in != NULL)
        IWbemClassObject_Release(in);
    if (in_def != NULL)
        IWbemClassObject_Release(in_def);
    if (obj != NULL)
        IWbemClassObject_Release(obj);
    cp_com.SysFreeString(method);
    IWbemClassObject_Release(def);
    IWbemServices_Release(svc);
    return rc;
}

/* Remove(Force) again leaves the same state (no mapping): made again on a
 * new connection after a lost one (CP_WMI_RETRY_IDEMPOTENT); a second
 * attempt that finds no mapping means the first removed it. */
static int w_unmap(void *ctx, const char *root, cp_error *e)
{
    smbw *s = ctx;
    smb_op op = {.s = s, .root = root};
    return cp_wmi_call(unmap_attempt, &op, cp_wmi_drop, &s->wmi, CP_WMI_RETRY_IDEMPOTENT, e);
}

/* --- host --------------------------------------------------------------- */

/* GetComputerNameExW (sysinfoapi.h). */
static int w_computer_name(void *ctx, char *netbios, char *dns, size_t len, cp_error *e)
{
    (void)ctx;
    wchar_t w[MAX_COMPUTERNAME_LENGTH + 1];
    DWORD n = MAX_COMPUTERNAME_LENGTH + 1;
    netbios[0] = dns[0] = '\0';
    if (GetComputerNameExW(ComputerNameNetBIOS, w, &n))
        WideCharToMultiByte(CP_UTF8, 0, w, -1, netbios, (int)len, NULL, NULL);
    wchar_t d[256];
    n = 256;
    if (GetComputerNameExW(ComputerNameDnsFullyQualified, d, &n))
        WideCharToMultiByte(CP_UTF8, 0, d, -1, dns, (int)len, NULL, NULL);
    (void)e;
    return CP_OK;
}

/* GetAdaptersAddresses (localaddr_win.h). */
static int w_local_addresses(void *ctx, cp_smb_addr *out, size_t max, size_t *n, cp_error *e)
{
    (void)ctx;
    return cp_win_local_addresses(out, max, n, e);
}

/* GetDiskFreeSpaceExW on the share root with its trailing backslash
 * ("GetDiskFreeSpaceExW function (fileapi.h)", Microsoft Learn: a UNC
 * directory name must end in a backslash): TotalNumberOfBytes and
 * TotalNumberOfFreeBytes, as kubelet's own Windows statter reads them. */
static int w_space(void *ctx, const char *root, uint64_t *total, uint64_t *free_bytes, cp_error *e)
{
    (void)ctx;
    size_t n = strlen(root);
    char *dir = malloc(n + 2);
    if (dir == NULL)
        return cp_error_set(e, CP_E_NOMEM, "free space of %s: out of memory", root);
    memcpy(dir, root, n);
    dir[n] = '\\';
    dir[n + 1] = '\0';
    wchar_t *w = cp_win_utf8_to_wide(dir);
    free(dir);
    if (w == NULL)
        return cp_error_set(e, CP_E_NOMEM, "free space of %s: out of memory", root);
    ULARGE_INTEGER avail, size, free_all;
    BOOL ok = GetDiskFreeSpaceExW(w, &avail, &size, &free_all);
    DWORD err = GetLastError();
    free(w);
    if (!ok) {
        cp_win_error(e, err, "GetDiskFreeSpaceExW", root);
        /* the share no longer answers: the caller may retry later */
        if (err == ERROR_BAD_NETPATH || err == ERROR_NETNAME_DELETED ||
            err == ERROR_UNEXP_NET_ERR || err == ERROR_SEM_TIMEOUT)
            e->status = CP_E_UNAVAILABLE;
        return e->status;
    }
    *total = size.QuadPart;
    *free_bytes = free_all.QuadPart;
    return CP_OK;
}

static void w_destroy(void *ctx)
{
    smbw *s = ctx;
    if (s == NULL)
        return;
    cp_wmi_conn_release(&s->wmi);
    free(s);
}

static const cp_smb_ops win_ops = {
    .state = w_state,
    .map = w_map,
    .unmap = w_unmap,
    .computer_name = w_computer_name,
    .local_addresses = w_local_addresses,
    .space = w_space,
    .destroy = w_destroy,
};

/* Nothing is opened here: WMI connects on the first mapping call. */
int cp_smb_host_open_default(cp_smb_host *out, cp_error *e)
{
    smbw *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return cp_error_set(e, CP_E_NOMEM, "smb: out of memory");
    cp_wmi_conn_init(&s->wmi, SMB_NS);
    out->ops = &win_ops;
    out->ctx = s;
    return CP_OK;
}
