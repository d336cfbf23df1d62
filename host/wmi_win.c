/* wmi_win.c - see wmi_win.h. In-process COM, no child process. */
#include "host/wmi_win.h"

/* WMI class and interface IDs (wbemcli.h; defined here so the link needs
 * no wbemuuid library). */
static const CLSID wbem_locator_clsid = {
    0x4590f811, 0x1d3a, 0x11d0, {0x89, 0x1f, 0x00, 0xaa, 0x00, 0x4b, 0x2e, 0x24}};
static const IID wbem_locator_iid = {
    0xdc12a687, 0x737f, 0x11cf, {0x88, 0x4d, 0x00, 0xaa, 0x00, 0x4b, 0x2e, 0x24}};
/* IID_IWbemClassObject, for a provider's extended error object. */
static const IID wbem_object_iid = {
    0xdc12a681, 0x737f, 0x11cf, {0x88, 0x4d, 0x00, 0xaa, 0x00, 0x4b, 0x2e, 0x24}};

/* --- COM entry points, loaded on first use -------------------------------- */

cp_wmi_com cp_com;
static SRWLOCK com_lock = SRWLOCK_INIT;
static bool com_loaded; /* under com_lock */

static bool com_sym(HMODULE m, const char *name, void (**fn)(void))
{
    *fn = m != NULL ? (void (*)(void))GetProcAddress(m, name) : NULL;
    return *fn != NULL;
}

/* The nine functions, from LoadLibraryExW with LOAD_LIBRARY_SEARCH_SYSTEM32
 * (libloaderapi.h: only System32, so a DLL planted beside the executable is
 * never loaded) and GetProcAddress. The modules stay loaded for the life of
 * the process. They are loaded on the first WMI call, not at start: most
 * nodes never format or map a share through this service, and under Wine
 * the two pull in user32, gdi32 and freetype, about 3 MB of resident
 * memory. */
int cp_wmi_com_load(cp_error *e)
{
    AcquireSRWLockExclusive(&com_lock);
    if (com_loaded) {
        ReleaseSRWLockExclusive(&com_lock);
        return CP_OK;
    }
    HMODULE ole = LoadLibraryExW(L"ole32.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
    HMODULE aut = LoadLibraryExW(L"oleaut32.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
    const struct {
        HMODULE m;
        const char *name;
        void (**fn)(void);
    } syms[] = {
        {ole, "CoIncrementMTAUsage", (void (**)(void)) & cp_com.CoIncrementMTAUsage},
        {ole, "CoDecrementMTAUsage", (void (**)(void)) & cp_com.CoDecrementMTAUsage},
        {ole, "CoCreateInstance", (void (**)(void)) & cp_com.CoCreateInstance},
        {ole, "CoSetProxyBlanket", (void (**)(void)) & cp_com.CoSetProxyBlanket},
        {aut, "SysAllocString", (void (**)(void)) & cp_com.SysAllocString},
        {aut, "SysFreeString", (void (**)(void)) & cp_com.SysFreeString},
        {aut, "VariantInit", (void (**)(void)) & cp_com.VariantInit},
        {aut, "VariantClear", (void (**)(void)) & cp_com.VariantClear},
        {aut, "GetErrorInfo", (void (**)(void)) & cp_com.GetErrorInfo},
    };
    int rc = CP_OK;
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]) && rc == CP_OK; i++) {
        if (!com_sym(syms[i].m, syms[i].name, syms[i].fn))
            rc = cp_error_set(e, CP_E_INTERNAL, "WMI: %s from %s: %s", syms[i].name,
                              syms[i].m == aut ? "oleaut32.dll" : "ole32.dll",
                              syms[i].m == NULL ? "the DLL did not load" : "no such entry point");
    }
    com_loaded = rc == CP_OK;
    ReleaseSRWLockExclusive(&com_lock);
    return rc;
}

/* The security blanket of every WMI proxy. "Setting the
 * Security on IWbemServices and Other Proxies": a client sets security
 * either process-wide with CoInitializeSecurity before connecting, or per
 * proxy with CoSetProxyBlanket; the blanket is not inherited by the proxies
 * a call returns, such as the IEnumWbemClassObject of ExecQuery, so each
 * gets its own. Per proxy is chosen here: CoInitializeSecurity may be
 * called once per process, before any marshalling ("CoInitializeSecurity
 * function": RPC_E_TOO_LATE otherwise), and this service loads COM only on
 * its first WMI call, on a pool thread. Packet privacy
 * (RPC_C_AUTHN_LEVEL_PKT_PRIVACY: every packet authenticated and
 * encrypted) and impersonation level RPC_C_IMP_LEVEL_IMPERSONATE, which
 * the Storage Management and SMB providers need to act as the caller
 * ("Setting the Default Process Security Level Using C++"). */
HRESULT cp_wmi_blanket(IUnknown *proxy)
{
    return cp_com.CoSetProxyBlanket(proxy, RPC_C_AUTHN_WINNT, RPC_C_AUTHZ_NONE, NULL,
                                    RPC_C_AUTHN_LEVEL_PKT_PRIVACY, RPC_C_IMP_LEVEL_IMPERSONATE,
                                    NULL, EOAC_NONE);
}

void cp_wmi_conn_init(cp_wmi_conn *c, const wchar_t *ns)
{
    InitializeSRWLock(&c->lock);
    c->ns = ns;
    c->svc = NULL;
    c->have_mta = false;
}

/* IWbemLocator::ConnectServer to c->ns ("Creating a WMI Application Using
 * C++", steps 3-5), once; then the blanket. CoIncrementMTAUsage
 * ("CoIncrementMTAUsage function") keeps the multithreaded apartment
 * alive, so any pool thread may call the proxy (it is in the implicit
 * MTA). */
int cp_wmi_connect(cp_wmi_conn *c, IWbemServices **out, HRESULT *hr_out, cp_error *e)
{
    *out = NULL;
    *hr_out = S_OK;
    int rc = cp_wmi_com_load(e);
    if (rc != CP_OK)
        return rc;
    AcquireSRWLockExclusive(&c->lock);
    HRESULT hr = S_OK;
    if (c->svc == NULL) {
        if (!c->have_mta && SUCCEEDED(hr = cp_com.CoIncrementMTAUsage(&c->mta)))
            c->have_mta = true;
        IWbemLocator *loc = NULL;
        if (SUCCEEDED(hr))
            hr = cp_com.CoCreateInstance(&wbem_locator_clsid, NULL, CLSCTX_INPROC_SERVER,
                                         &wbem_locator_iid, (void **)&loc);
        BSTR ns = SUCCEEDED(hr) ? cp_com.SysAllocString(c->ns) : NULL;
        if (SUCCEEDED(hr) && ns == NULL)
            hr = E_OUTOFMEMORY;
        if (SUCCEEDED(hr))
            hr = IWbemLocator_ConnectServer(loc, ns, NULL, NULL, NULL, 0, NULL, NULL, &c->svc);
        if (SUCCEEDED(hr))
            hr = cp_wmi_blanket((IUnknown *)c->svc);
        if (FAILED(hr) && c->svc != NULL) {
            IWbemServices_Release(c->svc);
            c->svc = NULL;
        }
        cp_com.SysFreeString(ns);
        if (loc != NULL)
            IWbemLocator_Release(loc);
    }
    if (c->svc != NULL)
        IWbemServices_AddRef(c->svc);
    *out = c->svc;
    ReleaseSRWLockExclusive(&c->lock);
    if (*out == NULL) {
        *hr_out = FAILED(hr) ? hr : E_UNEXPECTED;
        return CP_E_UNKNOWN;
    }
    return CP_OK;
}

void cp_wmi_drop(void *conn)
{
    cp_wmi_conn *c = conn;
    AcquireSRWLockExclusive(&c->lock);
    if (c->svc != NULL) {
        /* The proxy of a connection that is gone: Release only frees the
         * local proxy ("IUnknown::Release": the count of this proxy). */
        IWbemServices_Release(c->svc);
        c->svc = NULL;
    }
    ReleaseSRWLockExclusive(&c->lock);
}

void cp_wmi_conn_release(cp_wmi_conn *c)
{
    if (c->svc != NULL)
        IWbemServices_Release(c->svc);
    c->svc = NULL;
    if (c->have_mta)
        cp_com.CoDecrementMTAUsage(c->mta);
    c->have_mta = false;
}

HRESULT cp_wmi_return_value(IWbemClassObject *out, ULONG *rv)
{
    VARIANT v;
    cp_com.VariantInit(&v);
    HRESULT hr = out != NULL ? IWbemClassObject_Get(out, L"ReturnValue", 0, &v, NULL, NULL)
                             : E_UNEXPECTED;
    if (SUCCEEDED(hr)) {
        if (V_VT(&v) == VT_I4 || V_VT(&v) == VT_UI4)
            *rv = (ULONG)V_I4(&v);
        else
            hr = E_UNEXPECTED;
    }
    cp_com.VariantClear(&v);
    return hr;
}

HRESULT cp_wmi_put(IWbemClassObject *in, const wchar_t *name, VARIANT *v)
{
    HRESULT hr = IWbemClassObject_Put(in, name, 0, v, 0);
    cp_com.VariantClear(v);
    return hr;
}

HRESULT cp_wmi_put_str(IWbemClassObject *in, const wchar_t *name, const wchar_t *s)
{
    VARIANT v;
    cp_com.VariantInit(&v);
    V_VT(&v) = VT_BSTR;
    V_BSTR(&v) = cp_com.SysAllocString(s);
    if (V_BSTR(&v) == NULL)
        return E_OUTOFMEMORY;
    return cp_wmi_put(in, name, &v);
}

HRESULT cp_wmi_put_bool(IWbemClassObject *in, const wchar_t *name, bool b)
{
    VARIANT v;
    cp_com.VariantInit(&v);
    V_VT(&v) = VT_BOOL;
    V_BOOL(&v) = b ? VARIANT_TRUE : VARIANT_FALSE;
    return cp_wmi_put(in, name, &v);
}

/* A WMI provider reports a failure as an error object retrievable with
 * GetErrorInfo and queried for IWbemClassObject ("IWbemServices::
 * ExecMethod": "COM-specific error codes also may be returned ... further
 * information ... through the GetErrorInfo function"); the Windows
 * providers' object is an MSFT_WmiError whose error_Code is the Windows
 * error ("MSFT_WmiError class": error_Code, error_Type). The object's
 * Message text is not read: it is not needed for a status and is kept out
 * of error texts on principle. */
ULONG cp_wmi_error_code(void)
{
    IErrorInfo *ei = NULL;
    ULONG code = 0;
    if (cp_com.GetErrorInfo(0, &ei) != S_OK || ei == NULL)
        return 0;
    IWbemClassObject *obj = NULL;
    if (SUCCEEDED(IErrorInfo_QueryInterface(ei, &wbem_object_iid, (void **)&obj))) {
        VARIANT v;
        cp_com.VariantInit(&v);
        if (SUCCEEDED(IWbemClassObject_Get(obj, L"error_Code", 0, &v, NULL, NULL)) &&
            (V_VT(&v) == VT_I4 || V_VT(&v) == VT_UI4))
            code = (ULONG)V_I4(&v);
        cp_com.VariantClear(&v);
        IWbemClassObject_Release(obj);
    }
    IErrorInfo_Release(ei);
    return code;
}

/* "IWbemServices::ExecMethod" (synchronous: no flags, no call result),
 * then the out-parameters' ReturnValue; the out-parameters object is
 * released here. */
HRESULT cp_wmi_exec(IWbemServices *svc, BSTR path, BSTR method, IWbemClassObject *in, ULONG *rv,
                    ULONG *code)
{
    IWbemClassObject *out = NULL;
    *rv = 0;
    HRESULT hr = IWbemServices_ExecMethod(svc, path, method, 0, NULL, in, &out, NULL);
    if (FAILED(hr) && code != NULL)
        *code = cp_wmi_error_code();
    if (SUCCEEDED(hr))
        hr = cp_wmi_return_value(out, rv);
    if (out != NULL)
        IWbemClassObject_Release(out);
    return hr;
}

HRESULT cp_wmi_first(IWbemServices *svc, const wchar_t *query, IWbemClassObject **obj)
{
    *obj = NULL;
    BSTR lang = cp_com.SysAllocString(L"WQL"), q = cp_com.SysAllocString(query);
    IEnumWbemClassObject *en = NULL;
    ULONG got = 0;
    HRESULT hr = lang != NULL && q != NULL ? S_OK : E_OUTOFMEMORY;
    /* "IWbemServices::ExecQuery method"; "IEnumWbemClassObject::Next". */
    if (SUCCEEDED(hr))
        hr = IWbemServices_ExecQuery(
            svc, lang, q, WBEM_FLAG_FORWARD_ONLY | WBEM_FLAG_RETURN_IMMEDIATELY, NULL, &en);
    if (SUCCEEDED(hr))
        hr = cp_wmi_blanket((IUnknown *)en);
    if (SUCCEEDED(hr))
        hr = IEnumWbemClassObject_Next(en, WBEM_INFINITE, 1, obj, &got);
    if (SUCCEEDED(hr) && got == 0) {
        *obj = NULL;
        hr = S_FALSE;
    }
    if (en != NULL)
        IEnumWbemClassObject_Release(en);
    cp_com.SysFreeString(lang);
    cp_com.SysFreeString(q);
    return hr;
}
