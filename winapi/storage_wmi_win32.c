/* storage_wmi_win32.c - the storage operations Windows documents only
 * through WMI (Windows Storage Management API): MSFT_Volume.Format,
 * MSFT_StorageSetting.UpdateHostStorageCache, and MSFT_Disk.Online for a
 * disk that clearing DISK_ATTRIBUTE_OFFLINE left offline. One IWbemServices on
 * ROOT\\Microsoft\\Windows\\Storage, connected on first use and kept for the
 * life of the process; in-process COM, no child process. ole32 and oleaut32
 * are loaded on the first WMI call, not at start: most nodes never format
 * through this service, and under Wine the two pull in user32, gdi32 and
 * freetype, about 3 MB of resident memory. */
#include "storage_win32_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* WMI class and interface IDs (wbemcli.h; defined here so the link needs
 * no wbemuuid library). */
static const CLSID wbem_locator_clsid = {
    0x4590f811, 0x1d3a, 0x11d0, {0x89, 0x1f, 0x00, 0xaa, 0x00, 0x4b, 0x2e, 0x24}};
static const IID wbem_locator_iid = {
    0xdc12a687, 0x737f, 0x11cf, {0x88, 0x4d, 0x00, 0xaa, 0x00, 0x4b, 0x2e, 0x24}};

/* --- COM entry points, loaded on first use -------------------------------- */

/* The eight functions this file calls, from LoadLibraryExW with
 * LOAD_LIBRARY_SEARCH_SYSTEM32 (libloaderapi.h: only System32, so a DLL
 * planted beside the executable is never loaded) and GetProcAddress. */
static struct {
    HRESULT(WINAPI *CoIncrementMTAUsage)(CO_MTA_USAGE_COOKIE *);
    HRESULT(WINAPI *CoDecrementMTAUsage)(CO_MTA_USAGE_COOKIE);
    HRESULT(WINAPI *CoCreateInstance)(REFCLSID, LPUNKNOWN, DWORD, REFIID, void **);
    HRESULT(WINAPI *CoSetProxyBlanket)
    (IUnknown *, DWORD, DWORD, OLECHAR *, DWORD, DWORD, RPC_AUTH_IDENTITY_HANDLE, DWORD);
    BSTR(WINAPI *SysAllocString)(const OLECHAR *);
    void(WINAPI *SysFreeString)(BSTR);
    void(WINAPI *VariantInit)(VARIANTARG *);
    HRESULT(WINAPI *VariantClear)(VARIANTARG *);
} com;
static bool com_loaded; /* under the wmi_lock of the (one) host */

static bool com_sym(HMODULE m, const char *name, void (**fn)(void))
{
    *fn = m != NULL ? (void (*)(void))GetProcAddress(m, name) : NULL;
    return *fn != NULL;
}

/* Called with w->wmi_lock held. A missing DLL or entry point is an error
 * naming it; the modules stay loaded for the life of the process. */
static int com_load(cp_error *e)
{
    if (com_loaded)
        return CP_OK;
    HMODULE ole = LoadLibraryExW(L"ole32.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
    HMODULE aut = LoadLibraryExW(L"oleaut32.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
    const struct {
        HMODULE m;
        const char *name;
        void (**fn)(void);
    } syms[] = {
        {ole, "CoIncrementMTAUsage", (void (**)(void)) & com.CoIncrementMTAUsage},
        {ole, "CoDecrementMTAUsage", (void (**)(void)) & com.CoDecrementMTAUsage},
        {ole, "CoCreateInstance", (void (**)(void)) & com.CoCreateInstance},
        {ole, "CoSetProxyBlanket", (void (**)(void)) & com.CoSetProxyBlanket},
        {aut, "SysAllocString", (void (**)(void)) & com.SysAllocString},
        {aut, "SysFreeString", (void (**)(void)) & com.SysFreeString},
        {aut, "VariantInit", (void (**)(void)) & com.VariantInit},
        {aut, "VariantClear", (void (**)(void)) & com.VariantClear},
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        if (!com_sym(syms[i].m, syms[i].name, syms[i].fn))
            return cp_error_set(e, CP_E_INTERNAL, "WMI: %s from %s: %s", syms[i].name,
                                syms[i].m == aut ? "oleaut32.dll" : "ole32.dll",
                                syms[i].m == NULL ? "the DLL did not load" : "no such entry point");
    }
    com_loaded = true;
    return CP_OK;
}

/* --- WMI (Format and rescan only) ---------------------------------------- */

/* The security blanket of every WMI proxy this file holds (issue 9 item
 * 10). "Setting the Security on IWbemServices and Other Proxies": a client
 * sets security either process-wide with CoInitializeSecurity before
 * connecting, or per proxy with CoSetProxyBlanket; the blanket is not
 * inherited by the proxies a call returns, such as the
 * IEnumWbemClassObject of ExecQuery, so each gets its own. Per proxy is
 * chosen here: CoInitializeSecurity may be called once per process, before
 * any marshalling ("CoInitializeSecurity function": RPC_E_TOO_LATE
 * otherwise), and this service loads COM only on its first WMI call, on a
 * pool thread. Packet privacy (RPC_C_AUTHN_LEVEL_PKT_PRIVACY: every packet
 * authenticated and encrypted) and impersonation level
 * RPC_C_IMP_LEVEL_IMPERSONATE, which the Storage Management provider needs
 * to act as the caller ("Setting the Default Process Security Level Using
 * C++"). */
static HRESULT blanket(IUnknown *proxy)
{
    return com.CoSetProxyBlanket(proxy, RPC_C_AUTHN_WINNT, RPC_C_AUTHZ_NONE, NULL,
                                 RPC_C_AUTHN_LEVEL_PKT_PRIVACY, RPC_C_IMP_LEVEL_IMPERSONATE, NULL,
                                 EOAC_NONE);
}

/* IWbemLocator::ConnectServer to ROOT\Microsoft\Windows\Storage ("Creating a
 * WMI Application Using C++", steps 3-5), once; then blanket(). CoIncrementMTAUsage
 * ("CoIncrementMTAUsage function") keeps the multithreaded apartment alive,
 * so any pool thread may call the proxy (it is in the implicit MTA). */
static int wmi(w32 *w, IWbemServices **out, cp_error *e)
{
    AcquireSRWLockExclusive(&w->wmi_lock);
    int rc = com_load(e);
    if (rc != CP_OK) {
        ReleaseSRWLockExclusive(&w->wmi_lock);
        *out = NULL;
        return rc;
    }
    HRESULT hr = S_OK;
    if (w->svc == NULL) {
        if (!w->have_mta && SUCCEEDED(hr = com.CoIncrementMTAUsage(&w->mta)))
            w->have_mta = true;
        IWbemLocator *loc = NULL;
        if (SUCCEEDED(hr))
            hr = com.CoCreateInstance(&wbem_locator_clsid, NULL, CLSCTX_INPROC_SERVER,
                                      &wbem_locator_iid, (void **)&loc);
        BSTR ns = SUCCEEDED(hr) ? com.SysAllocString(L"ROOT\\Microsoft\\Windows\\Storage") : NULL;
        if (SUCCEEDED(hr) && ns == NULL)
            hr = E_OUTOFMEMORY;
        if (SUCCEEDED(hr))
            hr = IWbemLocator_ConnectServer(loc, ns, NULL, NULL, NULL, 0, NULL, NULL, &w->svc);
        if (SUCCEEDED(hr))
            hr = blanket((IUnknown *)w->svc);
        if (FAILED(hr) && w->svc != NULL) {
            IWbemServices_Release(w->svc);
            w->svc = NULL;
        }
        com.SysFreeString(ns);
        if (loc != NULL)
            IWbemLocator_Release(loc);
    }
    if (w->svc != NULL)
        IWbemServices_AddRef(w->svc);
    *out = w->svc;
    ReleaseSRWLockExclusive(&w->wmi_lock);
    if (*out == NULL)
        return w32s_hr_error(e, hr, "WMI: connecting to", "ROOT\\Microsoft\\Windows\\Storage");
    return CP_OK;
}

/* Drops the cached connection after a transport failure, so the next call
 * connects again (winmgmt restarted). */
static void wmi_reset(w32 *w, HRESULT hr)
{
    if (hr != (HRESULT)RPC_E_DISCONNECTED && hr != (HRESULT)WBEM_E_TRANSPORT_FAILURE &&
        hr != (HRESULT)RPC_S_SERVER_UNAVAILABLE &&
        hr != HRESULT_FROM_WIN32(RPC_S_SERVER_UNAVAILABLE))
        return;
    AcquireSRWLockExclusive(&w->wmi_lock);
    if (w->svc != NULL) {
        IWbemServices_Release(w->svc);
        w->svc = NULL;
    }
    ReleaseSRWLockExclusive(&w->wmi_lock);
}

/* The "ReturnValue" of a method's out-parameters (uint32). */
static HRESULT return_value(IWbemClassObject *out, ULONG *rv)
{
    VARIANT v;
    com.VariantInit(&v);
    HRESULT hr = IWbemClassObject_Get(out, L"ReturnValue", 0, &v, NULL, NULL);
    if (SUCCEEDED(hr)) {
        if (V_VT(&v) == VT_I4 || V_VT(&v) == VT_UI4)
            *rv = (ULONG)V_I4(&v);
        else
            hr = E_UNEXPECTED;
    }
    com.VariantClear(&v);
    return hr;
}

/* MSFT_StorageSetting.UpdateHostStorageCache, a static method ("Update-
 * HostStorageCache"; "MSFT_StorageSetting class"): Windows documents no
 * IOCTL that refreshes the storage management cache. */
int w32_rescan(void *ctx, cp_error *e)
{
    w32 *w = ctx;
    IWbemServices *svc;
    int rc = wmi(w, &svc, e);
    if (rc != CP_OK)
        return rc;
    BSTR cls = com.SysAllocString(L"MSFT_StorageSetting");
    BSTR method = com.SysAllocString(L"UpdateHostStorageCache");
    IWbemClassObject *def = NULL, *out = NULL;
    HRESULT hr = cls == NULL || method == NULL ? E_OUTOFMEMORY : S_OK;
    /* The class and its method must exist before ExecMethod is asked to
     * run it ("Calling a Provider Method": IWbemServices::GetObject, then
     * IWbemClassObject::GetMethod); a namespace without them (a stripped
     * Windows, Wine) is an error here, not a fault in the provider. */
    if (SUCCEEDED(hr))
        hr = IWbemServices_GetObject(svc, cls, 0, NULL, &def, NULL);
    if (SUCCEEDED(hr) && def == NULL)
        hr = WBEM_E_NOT_FOUND;
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_GetMethod(def, method, 0, NULL, NULL);
    if (SUCCEEDED(hr))
        hr = IWbemServices_ExecMethod(svc, cls, method, 0, NULL, NULL, &out, NULL);
    ULONG rv = 0;
    if (SUCCEEDED(hr))
        hr = return_value(out, &rv);
    if (FAILED(hr)) {
        wmi_reset(w, hr);
        rc = w32s_hr_error(e, hr, "WMI: MSFT_StorageSetting.UpdateHostStorageCache", "");
    } else if (rv != 0) {
        rc = cp_error_set(e, CP_E_UNKNOWN,
                          "WMI: MSFT_StorageSetting.UpdateHostStorageCache returned %lu",
                          (unsigned long)rv);
    }
    if (out != NULL)
        IWbemClassObject_Release(out);
    if (def != NULL)
        IWbemClassObject_Release(def);
    com.SysFreeString(cls);
    com.SysFreeString(method);
    IWbemServices_Release(svc);
    return rc;
}

/* Sets one input parameter of a WMI method. */
static HRESULT put_param(IWbemClassObject *in, const wchar_t *name, VARIANT *v)
{
    HRESULT hr = IWbemClassObject_Put(in, name, 0, v, 0);
    com.VariantClear(v);
    return hr;
}

/* The __PATH of the first object `query` (WQL) returns, into *path (a
 * VT_BSTR the caller clears). S_FALSE when there is none. The enumerator
 * gets its own blanket (issue 9 item 10). */
static HRESULT first_path(IWbemServices *svc, const wchar_t *query, VARIANT *path)
{
    BSTR lang = com.SysAllocString(L"WQL"), q = com.SysAllocString(query);
    IEnumWbemClassObject *en = NULL;
    IWbemClassObject *obj = NULL;
    ULONG got = 0;
    HRESULT hr = lang != NULL && q != NULL ? S_OK : E_OUTOFMEMORY;
    if (SUCCEEDED(hr))
        hr = IWbemServices_ExecQuery(
            svc, lang, q, WBEM_FLAG_FORWARD_ONLY | WBEM_FLAG_RETURN_IMMEDIATELY, NULL, &en);
    if (SUCCEEDED(hr))
        hr = blanket((IUnknown *)en);
    if (SUCCEEDED(hr))
        hr = IEnumWbemClassObject_Next(en, WBEM_INFINITE, 1, &obj, &got);
    if (SUCCEEDED(hr) && got == 0)
        hr = S_FALSE;
    else if (SUCCEEDED(hr))
        hr = IWbemClassObject_Get(obj, L"__PATH", 0, path, NULL, NULL);
    if (hr == S_OK && V_VT(path) != VT_BSTR)
        hr = E_UNEXPECTED;
    if (obj != NULL)
        IWbemClassObject_Release(obj);
    if (en != NULL)
        IEnumWbemClassObject_Release(en);
    com.SysFreeString(lang);
    com.SysFreeString(q);
    return hr;
}

/* first_path; on a miss, once, MSFT_StorageSetting.UpdateHostStorageCache
 * and the query again. The Storage Management provider answers from its
 * cache of disks, partitions and volumes ("UpdateHostStorageCache method
 * of the MSFT_StorageSetting class": "Updates the internal cache of
 * software objects (that is, Disks, Partitions, Volumes)"), which does not
 * yet hold a volume or disk changed through IOCTLs a moment ago (issue 9
 * item 11). */
static HRESULT find_path(w32 *w, IWbemServices *svc, const wchar_t *query, VARIANT *path)
{
    HRESULT hr = first_path(svc, query, path);
    if (hr == S_FALSE) {
        cp_error ignored;
        if (w32_rescan(w, &ignored) == CP_OK)
            hr = first_path(svc, query, path);
    }
    return hr;
}

/* MSFT_Volume.Format(FileSystem "NTFS", FileSystemLabel "", Full false,
 * Force true) on the volume whose UniqueId is id ("Format method of the
 * MSFT_Volume class"): Windows documents no other way to format. The ID
 * was validated as "\\?\Volume{hex-guid}\", so it can be quoted into WQL
 * safely (backslashes doubled: "WQL-Supported Data Types", strings). */
int w32_format_volume(void *ctx, const char *id, cp_error *e)
{
    w32 *w = ctx;
    wchar_t query[160];
    wchar_t wid[CP_VOLUME_ID_LEN * 2 + 1];
    size_t k = 0;
    for (const char *p = id; *p != '\0' && k + 2 < sizeof(wid) / sizeof(wid[0]); p++) {
        if (*p == '\\')
            wid[k++] = L'\\';
        wid[k++] = (wchar_t)(unsigned char)*p;
    }
    wid[k] = L'\0';
    swprintf(query, sizeof(query) / sizeof(query[0]),
             L"SELECT __PATH FROM MSFT_Volume WHERE UniqueId = '%ls'", wid);

    IWbemServices *svc;
    int rc = wmi(w, &svc, e);
    if (rc != CP_OK)
        return rc;
    BSTR cls = com.SysAllocString(L"MSFT_Volume"), method = com.SysAllocString(L"Format");
    IWbemClassObject *def = NULL, *in = NULL, *in_def = NULL, *out = NULL;
    VARIANT path;
    com.VariantInit(&path);
    ULONG rv = 0;
    HRESULT hr = cls && method ? S_OK : E_OUTOFMEMORY;
    if (SUCCEEDED(hr))
        hr = find_path(w, svc, query, &path);
    if (hr == S_FALSE) {
        rc = cp_error_set(e, CP_E_NOT_FOUND,
                          "volume %s not found (MSFT_Volume, after updating the host storage "
                          "cache)",
                          id);
        goto out;
    }
    if (SUCCEEDED(hr))
        hr = IWbemServices_GetObject(svc, cls, 0, NULL, &def, NULL);
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_GetMethod(def, L"Format", 0, &in_def, NULL);
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_SpawnInstance(in_def, 0, &in);
    VARIANT v;
    if (SUCCEEDED(hr)) {
        com.VariantInit(&v);
        V_VT(&v) = VT_BSTR;
        V_BSTR(&v) = com.SysAllocString(L"NTFS");
        hr = put_param(in, L"FileSystem", &v);
    }
    if (SUCCEEDED(hr)) {
        com.VariantInit(&v);
        V_VT(&v) = VT_BSTR;
        V_BSTR(&v) = com.SysAllocString(L"");
        hr = put_param(in, L"FileSystemLabel", &v);
    }
    if (SUCCEEDED(hr)) {
        com.VariantInit(&v);
        V_VT(&v) = VT_BOOL;
        V_BOOL(&v) = VARIANT_FALSE;
        hr = put_param(in, L"Full", &v);
    }
    if (SUCCEEDED(hr)) {
        com.VariantInit(&v);
        V_VT(&v) = VT_BOOL;
        V_BOOL(&v) = VARIANT_TRUE;
        hr = put_param(in, L"Force", &v);
    }
    if (SUCCEEDED(hr))
        hr = IWbemServices_ExecMethod(svc, V_BSTR(&path), method, 0, NULL, in, &out, NULL);
    if (SUCCEEDED(hr))
        hr = return_value(out, &rv);
    if (FAILED(hr)) {
        wmi_reset(w, hr);
        rc = w32s_hr_error(e, hr, "WMI: MSFT_Volume.Format", id);
    } else if (rv != 0) {
        rc = cp_error_set(e, CP_E_UNKNOWN, "WMI: MSFT_Volume.Format %s returned %lu", id,
                          (unsigned long)rv);
    }
out:
    com.VariantClear(&path);
    if (out != NULL)
        IWbemClassObject_Release(out);
    if (in != NULL)
        IWbemClassObject_Release(in);
    if (in_def != NULL)
        IWbemClassObject_Release(in_def);
    if (def != NULL)
        IWbemClassObject_Release(def);
    com.SysFreeString(cls);
    com.SysFreeString(method);
    IWbemServices_Release(svc);
    return rc;
}

/* MSFT_Disk.Online() on the disk whose Number is `number` ("Online method
 * of the MSFT_Disk class": "Brings the disk online"; returns 0 on
 * success). Used when clearing DISK_ATTRIBUTE_OFFLINE left a disk offline:
 * a disk offline for a signature or GUID collision gets new identifiers
 * when brought online this way (see w32_set_disk_online). */
int w32s_disk_online_wmi(w32 *w, uint32_t number, cp_error *e)
{
    wchar_t query[96];
    swprintf(query, sizeof(query) / sizeof(query[0]),
             L"SELECT __PATH FROM MSFT_Disk WHERE Number = %u", (unsigned)number);
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)number);
    IWbemServices *svc;
    int rc = wmi(w, &svc, e);
    if (rc != CP_OK)
        return rc;
    BSTR method = com.SysAllocString(L"Online");
    IWbemClassObject *out = NULL;
    VARIANT path;
    com.VariantInit(&path);
    ULONG rv = 0;
    HRESULT hr = method != NULL ? S_OK : E_OUTOFMEMORY;
    if (SUCCEEDED(hr))
        hr = find_path(w, svc, query, &path);
    if (hr == S_FALSE)
        rc = cp_error_set(e, CP_E_NOT_FOUND, "disk %u not found (MSFT_Disk)", (unsigned)number);
    else if (SUCCEEDED(hr))
        hr = IWbemServices_ExecMethod(svc, V_BSTR(&path), method, 0, NULL, NULL, &out, NULL);
    if (hr == S_OK)
        hr = return_value(out, &rv);
    if (FAILED(hr)) {
        wmi_reset(w, hr);
        rc = w32s_hr_error(e, hr, "WMI: MSFT_Disk.Online", obj);
    } else if (rc == CP_OK && rv != 0) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "WMI: MSFT_Disk.Online %s returned %lu", obj,
                          (unsigned long)rv);
    }
    com.VariantClear(&path);
    if (out != NULL)
        IWbemClassObject_Release(out);
    com.SysFreeString(method);
    IWbemServices_Release(svc);
    return rc;
}

void w32s_wmi_release(w32 *w)
{
    if (w->svc != NULL)
        IWbemServices_Release(w->svc);
    w->svc = NULL;
    if (w->have_mta)
        com.CoDecrementMTAUsage(w->mta);
    w->have_mta = false;
}
