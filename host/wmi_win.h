/* wmi_win.h - the in-process WMI client shared by the Win32 hosts that
 * manage Windows through WMI (storage_wmi_win.c: ROOT\Microsoft\Windows\
 * Storage; smb_win.c: ROOT\Microsoft\Windows\SMB). ole32 and oleaut32 are
 * loaded from System32 on the first WMI call, not at start; each connection
 * is opened on first use, kept for the life of its host, and every proxy
 * (services and enumerators) gets the same security blanket. Windows build
 * only. */
#ifndef CP_WINAPI_WMI_WIN32_H
#define CP_WINAPI_WMI_WIN32_H

/* Include this header before any other Windows header: the C macros of
 * the COM interfaces (IWbemServices_ExecMethod, ...) need COBJMACROS. */
#ifndef COBJMACROS
#define COBJMACROS
#endif
#include <windows.h>

#include <objbase.h>
#include <oleauto.h>
#include <wbemcli.h>

#include <stdbool.h>

#include "base/status.h"
#include "host/wmi_retry.h"

/* The COM and OLE Automation functions the WMI callers use, valid after
 * cp_wmi_com_load() (or a successful cp_wmi_connect()). */
typedef struct cp_wmi_com {
    HRESULT(WINAPI *CoIncrementMTAUsage)(CO_MTA_USAGE_COOKIE *);
    HRESULT(WINAPI *CoDecrementMTAUsage)(CO_MTA_USAGE_COOKIE);
    HRESULT(WINAPI *CoCreateInstance)(REFCLSID, LPUNKNOWN, DWORD, REFIID, void **);
    HRESULT(WINAPI *CoSetProxyBlanket)
    (IUnknown *, DWORD, DWORD, OLECHAR *, DWORD, DWORD, RPC_AUTH_IDENTITY_HANDLE, DWORD);
    BSTR(WINAPI *SysAllocString)(const OLECHAR *);
    void(WINAPI *SysFreeString)(BSTR);
    void(WINAPI *VariantInit)(VARIANTARG *);
    HRESULT(WINAPI *VariantClear)(VARIANTARG *);
    HRESULT(WINAPI *GetErrorInfo)(ULONG, IErrorInfo **);
} cp_wmi_com;
extern cp_wmi_com cp_com;

/* Loads ole32/oleaut32 once (thread-safe); an error names the missing DLL
 * or entry point (CP_E_INTERNAL). */
int cp_wmi_com_load(cp_error *e);

/* Packet privacy + impersonate on one proxy (see wmi_win.c). */
HRESULT cp_wmi_blanket(IUnknown *proxy);

/* One namespace's connection, opened on first use. */
typedef struct cp_wmi_conn {
    SRWLOCK lock;
    const wchar_t *ns; /* e.g. L"ROOT\\Microsoft\\Windows\\SMB" (static) */
    IWbemServices *svc;
    CO_MTA_USAGE_COOKIE mta;
    bool have_mta;
} cp_wmi_conn;

void cp_wmi_conn_init(cp_wmi_conn *c, const wchar_t *ns);

/* An AddRef'd IWbemServices on c->ns in *out (release it). On failure
 * *out is NULL and either *hr is a failed HRESULT from connecting (e is
 * left for the caller, who knows what to call it) or *hr is S_OK and e
 * says why COM could not be loaded. */
int cp_wmi_connect(cp_wmi_conn *c, IWbemServices **out, HRESULT *hr, cp_error *e);

/* Drops the cached connection (a cp_wmi_drop_fn; conn is a cp_wmi_conn),
 * so the next cp_wmi_connect connects again. Every WMI operation runs
 * through cp_wmi_call (wmi_retry.h), which calls this when an attempt
 * failed with a connection-lost HRESULT (the WMI service restarted) and
 * retries the operation once where that is safe. */
void cp_wmi_drop(void *conn);

/* Releases the connection and the MTA reference (host destroy). */
void cp_wmi_conn_release(cp_wmi_conn *c);

/* The uint32 "ReturnValue" of a method's out-parameters. */
HRESULT cp_wmi_return_value(IWbemClassObject *out, ULONG *rv);

/* The first object the WQL query returns, in *obj (release it); S_FALSE
 * and *obj NULL when there is none. The enumerator gets its own blanket. */
HRESULT cp_wmi_first(IWbemServices *svc, const wchar_t *query, IWbemClassObject **obj);

/* The Windows error code in the extended error object (MSFT_WmiError
 * error_Code) the last failed WMI call on this thread left; 0 when there
 * is none. Read it before any other COM call. */
ULONG cp_wmi_error_code(void);

/* Runs `method` on `path` (an instance's __PATH, or the class name for a
 * static method) with the in-parameters `in` (NULL: none) and puts its
 * ReturnValue in *rv (0 unless read). When ExecMethod itself fails and
 * code is not NULL, *code gets cp_wmi_error_code(). */
HRESULT cp_wmi_exec(IWbemServices *svc, BSTR path, BSTR method, IWbemClassObject *in, ULONG *rv,
                    ULONG *code);

/* Puts v into in[name] and clears v (whatever the outcome). */
HRESULT cp_wmi_put(IWbemClassObject *in, const wchar_t *name, VARIANT *v);
HRESULT cp_wmi_put_str(IWbemClassObject *in, const wchar_t *name, const wchar_t *s);
HRESULT cp_wmi_put_bool(IWbemClassObject *in, const wchar_t *name, bool b);

#endif
