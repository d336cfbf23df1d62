/* storage_wmi_win.c - the storage operations Windows documents only
 * through WMI (Windows Storage Management API): MSFT_Volume.Format,
 * MSFT_StorageSetting.UpdateHostStorageCache, and MSFT_Disk.Online for a
 * disk that clearing DISK_ATTRIBUTE_OFFLINE left offline. One IWbemServices on
 * ROOT\\Microsoft\\Windows\\Storage, connected on first use and kept for the
 * life of the process; in-process COM, no child process, through the
 * shared client of wmi_win.h (COM loaded on first use, the security
 * blanket on every proxy). These are the WMI members of the real call table
 * (storage_calls_win.h); the host calls them through it. */
#include "host/storage_win_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* The connection (wmi_win.h) on ROOT\\Microsoft\\Windows\\Storage; a
 * failure names the namespace. */
static int wmi(cp_wmi_conn *c, IWbemServices **out, cp_wmi_failure *f, cp_error *e)
{
    HRESULT hr;
    int rc = cp_wmi_connect(c, out, &hr, e);
    f->hr = (uint32_t)hr;
    if (rc != CP_OK && FAILED(hr))
        return w32s_hr_error(e, hr, "WMI: connecting to", "ROOT\\Microsoft\\Windows\\Storage");
    return rc;
}

/* MSFT_StorageSetting.UpdateHostStorageCache on svc, a static method
 * ("Update-HostStorageCache"; "MSFT_StorageSetting class"): Windows
 * documents no IOCTL that refreshes the storage management cache. The
 * method's ReturnValue in *rv. */
static HRESULT update_cache(IWbemServices *svc, ULONG *rv)
{
    BSTR cls = cp_com.SysAllocString(L"MSFT_StorageSetting");
    BSTR method = cp_com.SysAllocString(L"UpdateHostStorageCache");
    IWbemClassObject *def = NULL;
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
    *rv = 0;
    if (SUCCEEDED(hr))
        hr = cp_wmi_exec(svc, cls, method, NULL, rv, NULL);
    if (def != NULL)
        IWbemClassObject_Release(def);
    cp_com.SysFreeString(cls);
    cp_com.SysFreeString(method);
    return hr;
}

static int update_attempt(void *arg, cp_wmi_failure *f, cp_error *e)
{
    IWbemServices *svc;
    int rc = wmi(arg, &svc, f, e);
    if (rc != CP_OK)
        return rc;
    ULONG rv = 0;
    HRESULT hr = update_cache(svc, &rv);
    if (FAILED(hr)) {
        f->hr = (uint32_t)hr;
        rc = w32s_hr_error(e, hr, "WMI: MSFT_StorageSetting.UpdateHostStorageCache", "");
    } else if (rv != 0) {
        rc = cp_error_set(e, CP_E_UNKNOWN,
                          "WMI: MSFT_StorageSetting.UpdateHostStorageCache returned %lu",
                          (unsigned long)rv);
    }
    IWbemServices_Release(svc);
    return rc;
}

/* A cache refresh: made again on a new connection after a lost one
 * (CP_WMI_RETRY_IDEMPOTENT). */
int w32w_update_host_storage_cache(cp_wmi_conn *c, cp_error *e)
{
    return cp_wmi_call(update_attempt, c, cp_wmi_drop, c, CP_WMI_RETRY_IDEMPOTENT, e);
}

/* The __PATH of the first object `query` (WQL) returns, into *path (a
 * VT_BSTR the caller clears). S_FALSE when there is none. */
static HRESULT first_path(IWbemServices *svc, const wchar_t *query, VARIANT *path)
{
    IWbemClassObject *obj = NULL;
    HRESULT hr = cp_wmi_first(svc, query, &obj);
    if (hr == S_OK)
        hr = IWbemClassObject_Get(obj, L"__PATH", 0, path, NULL, NULL);
    if (hr == S_OK && V_VT(path) != VT_BSTR)
        hr = E_UNEXPECTED;
    if (obj != NULL)
        IWbemClassObject_Release(obj);
    return hr;
}

/* first_path; on a miss, once, MSFT_StorageSetting.UpdateHostStorageCache
 * on the same connection and the query again. The Storage Management
 * provider answers from its cache of disks, partitions and volumes
 * ("UpdateHostStorageCache method of the MSFT_StorageSetting class":
 * "Updates the internal cache of software objects (that is, Disks,
 * Partitions, Volumes)"), which does not yet hold a volume or disk changed
 * through IOCTLs a moment ago. A lost connection is the
 * caller's to handle (its attempt fails with that HRESULT). */
static HRESULT find_path(IWbemServices *svc, const wchar_t *query, VARIANT *path)
{
    HRESULT hr = first_path(svc, query, path);
    if (hr == S_FALSE) {
        ULONG rv = 0;
        HRESULT uh = update_cache(svc, &rv);
        if (FAILED(uh) && cp_wmi_classify((uint32_t)uh) != CP_WMI_HR_OTHER)
            return uh;
        if (SUCCEEDED(uh) && rv == 0)
            hr = first_path(svc, query, path);
    }
    return hr;
}

typedef struct format_op {
    cp_wmi_conn *c;
    const char *id;
    const wchar_t *query;
} format_op;

static int format_attempt(void *arg, cp_wmi_failure *f, cp_error *e)
{
    format_op *op = arg;
    const char *id = op->id;
    IWbemServices *svc;
    int rc = wmi(op->c, &svc, f, e);
    if (rc != CP_OK)
        return rc;
    BSTR cls = cp_com.SysAllocString(L"MSFT_Volume"), method = cp_com.SysAllocString(L"Format");
    IWbemClassObject *def = NULL, *in = NULL, *in_def = NULL;
    VARIANT path;
    cp_com.VariantInit(&path);
    ULONG rv = 0;
    HRESULT hr = cls && method ? S_OK : E_OUTOFMEMORY;
    if (SUCCEEDED(hr))
        hr = find_path(svc, op->query, &path);
    if (hr == S_FALSE) {
        rc = cp_error_set(e, CP_E_NOT_FOUND,
                          "volume %s not found (MSFT_Volume, after updating the host storage "
                          "cache)",
                          id);
        goto out;
    }
    if (SUCCEEDED(hr))
        hr = IWbemServices_GetObject(svc, cls, 0, NULL, &def, NULL);
    if (SUCCEEDED(hr) && def == NULL)
        hr = WBEM_E_NOT_FOUND;
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_GetMethod(def, L"Format", 0, &in_def, NULL);
    /* GetMethod answers no in-parameter signature for a method that takes
     * none ("IWbemClassObject::GetMethod", Microsoft Learn): a provider
     * whose Format takes none is not the one documented. */
    if (SUCCEEDED(hr) && in_def == NULL)
        hr = WBEM_E_INVALID_METHOD;
    if (SUCCEEDED(hr))
        hr = IWbemClassObject_SpawnInstance(in_def, 0, &in);
    VARIANT v;
    if (SUCCEEDED(hr)) {
        cp_com.VariantInit(&v);
        V_VT(&v) = VT_BSTR;
        V_BSTR(&v) = cp_com.SysAllocString(L"NTFS");
        hr = cp_wmi_put(in, L"FileSystem", &v);
    }
    if (SUCCEEDED(hr)) {
        cp_com.VariantInit(&v);
        V_VT(&v) = VT_BSTR;
        V_BSTR(&v) = cp_com.SysAllocString(L"");
        hr = cp_wmi_put(in, L"FileSystemLabel", &v);
    }
    if (SUCCEEDED(hr)) {
        cp_com.VariantInit(&v);
        V_VT(&v) = VT_BOOL;
        V_BOOL(&v) = VARIANT_FALSE;
        hr = cp_wmi_put(in, L"Full", &v);
    }
    if (SUCCEEDED(hr)) {
        cp_com.VariantInit(&v);
        V_VT(&v) = VT_BOOL;
        V_BOOL(&v) = VARIANT_TRUE;
        hr = cp_wmi_put(in, L"Force", &v);
    }
    if (SUCCEEDED(hr)) {
        hr = cp_wmi_exec(svc, V_BSTR(&path), method, in, &rv, NULL);
        f->effect = true; /* from here on the volume may have been formatted */
    }
    if (FAILED(hr)) {
        f->hr = (uint32_t)hr;
        rc = w32s_hr_error(e, hr, "WMI: MSFT_Volume.Format", id);
    } else if (rv != 0) {
        rc = cp_error_set(e, CP_E_UNKNOWN, "WMI: MSFT_Volume.Format %s returned %lu", id,
                          (unsigned long)rv);
    }
out:
    cp_com.VariantClear(&path);
    if (in != NULL)
        IWbemClassObject_Release(in);
    if (in_def != NULL)
        IWbemClassObject_Release(in_def);
    if (def != NULL)
        IWbemClassObject_Release(def);
    cp_com.SysFreeString(cls);
    cp_com.SysFreeString(method);
    IWbemServices_Release(svc);
    return rc;
}

/* MSFT_Volume.Format(FileSystem "NTFS", FileSystemLabel "", Full false,
 * Force true) on the volume whose UniqueId is id ("Format method of the
 * MSFT_Volume class"): Windows documents no other way to format. The ID
 * was validated as "\\?\Volume{hex-guid}\", so it can be quoted into WQL
 * safely (backslashes doubled: "WQL-Supported Data Types", strings).
 * Destructive, so never run twice by this service: after a lost connection
 * it is made again only when it cannot have run
 * (CP_WMI_RETRY_IF_NOT_RUN); otherwise the caller gets UNAVAILABLE, and a
 * CSI driver's retry asks first whether the volume is formatted. */
int w32w_format_volume(cp_wmi_conn *c, const char *id, cp_error *e)
{
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
    format_op op = {c, id, query};
    return cp_wmi_call(format_attempt, &op, cp_wmi_drop, c, CP_WMI_RETRY_IF_NOT_RUN, e);
}

typedef struct online_op {
    cp_wmi_conn *c;
    uint32_t number;
} online_op;

static int online_attempt(void *arg, cp_wmi_failure *f, cp_error *e)
{
    online_op *op = arg;
    wchar_t query[96];
    swprintf(query, sizeof(query) / sizeof(query[0]),
             L"SELECT __PATH FROM MSFT_Disk WHERE Number = %u", (unsigned)op->number);
    char obj[32];
    snprintf(obj, sizeof(obj), "disk %u", (unsigned)op->number);
    IWbemServices *svc;
    int rc = wmi(op->c, &svc, f, e);
    if (rc != CP_OK)
        return rc;
    BSTR method = cp_com.SysAllocString(L"Online");
    VARIANT path;
    cp_com.VariantInit(&path);
    ULONG rv = 0;
    HRESULT hr = method != NULL ? S_OK : E_OUTOFMEMORY;
    if (SUCCEEDED(hr))
        hr = find_path(svc, query, &path);
    if (hr == S_FALSE) {
        rc = cp_error_set(e, CP_E_NOT_FOUND, "disk %u not found (MSFT_Disk)", (unsigned)op->number);
    } else if (SUCCEEDED(hr)) {
        hr = cp_wmi_exec(svc, V_BSTR(&path), method, NULL, &rv, NULL);
        f->effect = true;
    }
    if (FAILED(hr)) {
        f->hr = (uint32_t)hr;
        rc = w32s_hr_error(e, hr, "WMI: MSFT_Disk.Online", obj);
    } else if (rc == CP_OK && rv != 0) {
        rc = cp_error_set(e, CP_E_FAILED_PRECONDITION, "WMI: MSFT_Disk.Online %s returned %lu", obj,
                          (unsigned long)rv);
    }
    cp_com.VariantClear(&path);
    cp_com.SysFreeString(method);
    IWbemServices_Release(svc);
    return rc;
}

/* MSFT_Disk.Online() on the disk whose Number is `number` ("Online method
 * of the MSFT_Disk class": "Brings the disk online"; returns 0 on
 * success, and documents no failure for a disk online already). Used when
 * clearing DISK_ATTRIBUTE_OFFLINE left a disk offline: a disk offline for
 * a signature or GUID collision gets new identifiers when brought online
 * this way (see w32_set_disk_online). Bringing it online again leaves the
 * same state: made again on a new connection after a lost one
 * (CP_WMI_RETRY_IDEMPOTENT). */
int w32w_disk_online(cp_wmi_conn *c, uint32_t number, cp_error *e)
{
    online_op op = {c, number};
    return cp_wmi_call(online_attempt, &op, cp_wmi_drop, c, CP_WMI_RETRY_IDEMPOTENT, e);
}

void w32s_wmi_release(w32 *w)
{
    cp_wmi_conn_release(&w->wmi);
}
