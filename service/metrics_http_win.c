/* metrics_http_win.c - see metrics_http_win.h. HTTP Server API version 2:
 * a server session, a URL group bound to a request queue, one UrlPrefix
 * (the port's strong wildcard, cp_metrics_addr_prefix), and a thread
 * receiving requests with overlapped I/O until stop cancels the pending
 * receive.
 * Every HTTP Server API function returns a Win32 error code (NO_ERROR on
 * success); none sets the thread's last error.
 *
 * httpapi.dll is loaded at run time, when -metrics-bind-address asks for
 * metrics, not imported: metrics are off by default, and a DLL in the
 * import table is loaded (and, under Wine, initialised) by every start.
 * test/exe/check_imports.sh keeps it out of the table. */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <http.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "base/log.h"
#include "service/metrics_http_win.h"

struct cp_metrics_http {
    cp_metrics *metrics;
    cp_metrics_addr addr;
    char url[96];    /* the URL as the flag names it, for messages */
    char prefix[32]; /* the UrlPrefix registered */
    bool initialized;
    HTTP_SERVER_SESSION_ID session;
    HTTP_URL_GROUP_ID group;
    HANDLE queue;
    HANDLE stop; /* manual-reset: set by cp_metrics_http_stop */
    cp_thread *thread;
};

static const HTTPAPI_VERSION version = HTTPAPI_VERSION_2;

/* The functions used, from httpapi.dll (load_api). */
static struct {
    HMODULE dll;
#define API_FN(name) __typeof__(&name) name
    API_FN(HttpInitialize);
    API_FN(HttpTerminate);
    API_FN(HttpCreateServerSession);
    API_FN(HttpCloseServerSession);
    API_FN(HttpCreateUrlGroup);
    API_FN(HttpCloseUrlGroup);
    API_FN(HttpCreateRequestQueue);
    API_FN(HttpCloseRequestQueue);
    API_FN(HttpSetUrlGroupProperty);
    API_FN(HttpAddUrlToUrlGroup);
    API_FN(HttpReceiveHttpRequest);
    API_FN(HttpSendHttpResponse);
#undef API_FN
} api;

#define REQ_BUF 16384 /* headers of a scrape fit easily; more is refused (431) */

static void win_error(ULONG rc, char *buf, size_t cap)
{
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, rc,
                             0, buf, (DWORD)cap, NULL);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    if (n == 0)
        snprintf(buf, cap, "error %lu", (unsigned long)rc);
}

static int fail(cp_error *e, const cp_metrics_http *h, const char *api, ULONG rc)
{
    char msg[256];
    win_error(rc, msg, sizeof(msg));
    return cp_error_set(e, CP_E_UNAVAILABLE,
                        "-metrics-bind-address: cannot serve %s: %s failed: %s (%lu)", h->url, api,
                        msg, (unsigned long)rc);
}

/* HttpSendHttpResponse with one body chunk (none when body is NULL):
 * https://learn.microsoft.com/windows/win32/api/http/nf-http-httpsendhttpresponse */
static void respond(cp_metrics_http *h, HTTP_REQUEST_ID id, USHORT status, const char *reason,
                    const char *content_type, const char *allow, const char *body, size_t len)
{
    HTTP_RESPONSE r;
    memset(&r, 0, sizeof(r));
    r.StatusCode = status;
    r.pReason = reason;
    r.ReasonLength = (USHORT)strlen(reason);
    r.Headers.KnownHeaders[HttpHeaderContentType].pRawValue = content_type;
    r.Headers.KnownHeaders[HttpHeaderContentType].RawValueLength = (USHORT)strlen(content_type);
    if (allow != NULL) {
        r.Headers.KnownHeaders[HttpHeaderAllow].pRawValue = allow;
        r.Headers.KnownHeaders[HttpHeaderAllow].RawValueLength = (USHORT)strlen(allow);
    }
    HTTP_DATA_CHUNK chunk;
    memset(&chunk, 0, sizeof(chunk));
    if (body != NULL && len > 0) {
        chunk.DataChunkType = HttpDataChunkFromMemory;
        chunk.FromMemory.pBuffer = (PVOID)body;
        chunk.FromMemory.BufferLength = (ULONG)len;
        r.EntityChunkCount = 1;
        r.pEntityChunks = &chunk;
    }
    ULONG sent = 0;
    ULONG rc = api.HttpSendHttpResponse(h->queue, id, 0, &r, NULL, &sent, NULL, 0, NULL, NULL);
    if (rc != NO_ERROR && rc != ERROR_CONNECTION_INVALID)
        CP_LOG_WARN("metrics: HttpSendHttpResponse failed: error %lu", (unsigned long)rc);
}

static void text(cp_metrics_http *h, HTTP_REQUEST_ID id, USHORT status, const char *reason,
                 const char *allow)
{
    char body[64];
    int n = snprintf(body, sizeof(body), "%u %s\n", (unsigned)status, reason);
    respond(h, id, status, reason, "text/plain; charset=utf-8", allow, body, (size_t)n);
}

/* The interface the request arrived on, as metrics_addr.h compares it. */
static bool arrived_on_allowed(const cp_metrics_http *h, const HTTP_REQUEST *req)
{
    const SOCKADDR *local = req->Address.pLocalAddress;
    if (local == NULL)
        return h->addr.all;
    if (local->sa_family == AF_INET)
        return cp_metrics_addr_accepts(&h->addr, 4,
                                       (const uint8_t *)&((const SOCKADDR_IN *)local)->sin_addr);
    if (local->sa_family == AF_INET6)
        return cp_metrics_addr_accepts(&h->addr, 6,
                                       (const uint8_t *)&((const SOCKADDR_IN6 *)local)->sin6_addr);
    return h->addr.all;
}

/* The Host the request names: CookedUrl's host part, "name" or
 * "name:port", from the Host header (or, without one, the address the
 * request arrived on): "HTTP_COOKED_URL structure", Microsoft Learn.
 * Anything not plain ASCII is no loopback spelling. */
static bool host_allowed(const cp_metrics_http *h, const HTTP_REQUEST *req)
{
    const HTTP_COOKED_URL *u = &req->CookedUrl;
    size_t n = u->pHost != NULL ? u->HostLength / sizeof(WCHAR) : 0;
    for (size_t i = 0; i < n; i++)
        if (u->pHost[i] == L'/' || u->pHost[i] == L'?') { /* the host part ends there */
            n = i;
            break;
        }
    char host[300];
    if (n >= sizeof(host)) /* longer than any loopback spelling */
        return cp_metrics_addr_host_ok(&h->addr, "?", 1);
    for (size_t i = 0; i < n; i++)
        host[i] = u->pHost[i] < 0x80 ? (char)u->pHost[i] : '?';
    return cp_metrics_addr_host_ok(&h->addr, host, n);
}

static bool is_metrics_path(const HTTP_REQUEST *req)
{
    static const WCHAR want[] = L"/metrics";
    const HTTP_COOKED_URL *u = &req->CookedUrl;
    return u->pAbsPath != NULL && u->AbsPathLength == sizeof(want) - sizeof(WCHAR) &&
           memcmp(u->pAbsPath, want, u->AbsPathLength) == 0;
}

static void serve_one(cp_metrics_http *h, const HTTP_REQUEST *req)
{
    if (!arrived_on_allowed(h, req)) {
        text(h, req->RequestId, 403, "Forbidden", NULL);
        return;
    }
    if (!host_allowed(h, req)) { /* http.sys's own words for an unknown Host */
        text(h, req->RequestId, 400, "Bad Request - Invalid Hostname", NULL);
        return;
    }
    if (!is_metrics_path(req)) {
        text(h, req->RequestId, 404, "Not Found", NULL);
        return;
    }
    if (req->Verb != HttpVerbGET && req->Verb != HttpVerbHEAD) {
        text(h, req->RequestId, 405, "Method Not Allowed", "GET, HEAD");
        return;
    }
    size_t len = 0;
    char *body = cp_metrics_render(h->metrics, &len);
    if (body == NULL) {
        text(h, req->RequestId, 503, "Service Unavailable", NULL);
        return;
    }
    respond(h, req->RequestId, 200, "OK", CP_METRICS_CONTENT_TYPE, NULL,
            req->Verb == HttpVerbHEAD ? NULL : body, len);
    free(body);
}

/* HttpReceiveHttpRequest, one request at a time, each answered before the
 * next is taken, until cp_metrics_http_stop sets the stop event. Each
 * receive is asynchronous (an OVERLAPPED, pBytesReturned NULL, as
 * "HttpReceiveHttpRequest function" on Microsoft Learn says for that
 * case) and waited for together with the stop event; on stop it is
 * cancelled with CancelIoEx and waited for until it has completed
 * ("CancelIoEx function": the OVERLAPPED may not be reused before; a
 * cancelled receive ends with ERROR_OPERATION_ABORTED). No
 * HttpShutdownRequestQueue: the pending receive is this thread's own to
 * cancel, and Wine's httpapi.dll has that entry only as a stub that
 * aborts the process. */
static void serve(void *arg)
{
    cp_metrics_http *h = arg;
    HTTP_REQUEST *req = malloc(REQ_BUF);
    /* "CreateEventW function": manual-reset, for GetOverlappedResult */
    HANDLE done = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (req == NULL || done == NULL) {
        CP_LOG_ERROR("metrics: out of memory or handles; not serving %s", h->url);
        free(req);
        if (done != NULL)
            CloseHandle(done);
        return;
    }
    while (WaitForSingleObject(h->stop, 0) != WAIT_OBJECT_0) {
        OVERLAPPED ov;
        memset(&ov, 0, sizeof(ov));
        ov.hEvent = done;
        ResetEvent(done);
        memset(req, 0, REQ_BUF);
        ULONG rc = api.HttpReceiveHttpRequest(h->queue, HTTP_NULL_ID, 0, req, REQ_BUF, NULL, &ov);
        if (rc == ERROR_IO_PENDING) { /* NO_ERROR: it completed at once */
            /* "WaitForMultipleObjects function": index 0 is the receive */
            HANDLE both[2] = {done, h->stop};
            if (WaitForMultipleObjects(2, both, FALSE, INFINITE) != WAIT_OBJECT_0)
                CancelIoEx(h->queue, &ov);
            /* "GetOverlappedResult function": bWait TRUE waits for the end
             * of the receive, cancelled or not */
            DWORD got = 0;
            rc = GetOverlappedResult(h->queue, &ov, &got, TRUE) ? NO_ERROR : GetLastError();
        }
        if (rc == NO_ERROR) {
            serve_one(h, req);
        } else if (rc == ERROR_MORE_DATA) {
            /* RequestId is set: answer it without reading the rest */
            text(h, req->RequestId, 431, "Request Header Fields Too Large", NULL);
        } else if (rc == ERROR_CONNECTION_INVALID) {
            continue; /* the client went away */
        } else {
            if (rc != ERROR_OPERATION_ABORTED)
                CP_LOG_ERROR("metrics: HttpReceiveHttpRequest failed: error %lu; no longer "
                             "serving %s",
                             (unsigned long)rc, h->url);
            break;
        }
    }
    CloseHandle(done);
    free(req);
}

/* GetProcAddress's FARPROC through void (*)(void), the cast GCC's
 * -Wcast-function-type accepts, to the entry's own type. */
#define RESOLVE(name) (api.name = (__typeof__(api.name))(void (*)(void))GetProcAddress(m, #name))

/* Loads httpapi.dll once (only cp_metrics_http_start calls this, on the
 * thread that starts the service, before any serving thread exists).
 * "LoadLibraryExW function": LOAD_LIBRARY_SEARCH_SYSTEM32 looks in
 * %windows%\system32 only, never in the application's directory or on the
 * search path, so no other file of that name is ever loaded. httpapi.dll is
 * part of every Windows since Vista / Server 2008 ("HTTP Server API
 * Version 2.0", learn.microsoft.com/windows/win32/http/http-api-start-page). */
static int load_api(cp_metrics_http *h, cp_error *e)
{
    if (api.dll != NULL)
        return CP_OK;
    HMODULE m = LoadLibraryExW(L"httpapi.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (m == NULL)
        return fail(e, h, "loading httpapi.dll", GetLastError());
    const char *missing = NULL;
#define NEED(name)                                                                                 \
    do {                                                                                           \
        if (RESOLVE(name) == NULL && missing == NULL)                                              \
            missing = #name;                                                                       \
    } while (0)
    NEED(HttpInitialize);
    NEED(HttpTerminate);
    NEED(HttpCreateServerSession);
    NEED(HttpCloseServerSession);
    NEED(HttpCreateUrlGroup);
    NEED(HttpCloseUrlGroup);
    NEED(HttpCreateRequestQueue);
    NEED(HttpCloseRequestQueue);
    NEED(HttpSetUrlGroupProperty);
    NEED(HttpAddUrlToUrlGroup);
    NEED(HttpReceiveHttpRequest);
    NEED(HttpSendHttpResponse);
#undef NEED
    if (missing != NULL) {
        FreeLibrary(m);
        return cp_error_set(e, CP_E_UNAVAILABLE,
                            "-metrics-bind-address: cannot serve %s: httpapi.dll has no %s", h->url,
                            missing);
    }
    api.dll = m;
    return CP_OK;
}

static int setup(cp_metrics_http *h, cp_error *e)
{
    if (load_api(h, e) != CP_OK)
        return e->status;
    /* https://learn.microsoft.com/windows/win32/api/http/nf-http-httpinitialize */
    ULONG rc = api.HttpInitialize(version, HTTP_INITIALIZE_SERVER, NULL);
    if (rc != NO_ERROR)
        return fail(e, h, "HttpInitialize", rc);
    h->initialized = true;
    /* https://learn.microsoft.com/windows/win32/api/http/nf-http-httpcreateserversession */
    rc = api.HttpCreateServerSession(version, &h->session, 0);
    if (rc != NO_ERROR)
        return fail(e, h, "HttpCreateServerSession", rc);
    /* https://learn.microsoft.com/windows/win32/api/http/nf-http-httpcreateurlgroup */
    rc = api.HttpCreateUrlGroup(h->session, &h->group, 0);
    if (rc != NO_ERROR)
        return fail(e, h, "HttpCreateUrlGroup", rc);
    /* An unnamed queue, default security (this process only):
     * https://learn.microsoft.com/windows/win32/api/http/nf-http-httpcreaterequestqueue */
    rc = api.HttpCreateRequestQueue(version, NULL, NULL, 0, &h->queue);
    if (rc != NO_ERROR)
        return fail(e, h, "HttpCreateRequestQueue", rc);
    /* The group's requests go to the queue:
     * https://learn.microsoft.com/windows/win32/api/http/nf-http-httpseturlgroupproperty */
    HTTP_BINDING_INFO bind;
    memset(&bind, 0, sizeof(bind));
    bind.Flags.Present = 1;
    bind.RequestQueueHandle = h->queue;
    rc = api.HttpSetUrlGroupProperty(h->group, HttpServerBindingProperty, &bind, sizeof(bind));
    if (rc != NO_ERROR)
        return fail(e, h, "HttpSetUrlGroupProperty", rc);
    /* "UrlPrefix Strings" (Microsoft Learn): a host name is an "explicit"
     * prefix, matched against the request's Host header; an IP literal an
     * "IP-bound weak wildcard", any Host on that interface; "+" the strong
     * wildcard, every Host on every interface, ahead of the other kinds.
     * So http://127.0.0.1:PORT/ alone would not take a request that
     * arrives on [::1] (where "localhost" often resolves first), and Wine's
     * http.sys matches the Host text only and never answers a request no
     * prefix matches. The strong wildcard brings every request for the
     * port here, and serve_one answers each: the interface and (for
     * loopback) the Host checked, every other request 400/403/404/405.
     * The port is then this process's alone among HTTP Server API users.
     * "IP Listen List": http.sys listens on the port on every address of
     * the machine whatever the prefix, unless an administrator scopes it.
     * https://learn.microsoft.com/windows/win32/api/http/nf-http-httpaddurltourlgroup */
    WCHAR wurl[32];
    MultiByteToWideChar(CP_UTF8, 0, h->prefix, -1, wurl, (int)(sizeof(wurl) / sizeof(wurl[0])));
    rc = api.HttpAddUrlToUrlGroup(h->group, wurl, 0, 0);
    if (rc != NO_ERROR) {
        char msg[256];
        win_error(rc, msg, sizeof(msg));
        return cp_error_set(e, CP_E_UNAVAILABLE,
                            "-metrics-bind-address: cannot serve %s: HttpAddUrlToUrlGroup failed: "
                            "%s (%lu) for the prefix %s (every host name on port %u: is another "
                            "csi-proxy or HTTP Server API application using that port? netsh "
                            "http show servicestate lists them)",
                            h->url, msg, (unsigned long)rc, h->prefix, (unsigned)h->addr.port);
    }
    return CP_OK;
}

/* Each close function is documented beside its create function above;
 * HttpTerminate: https://learn.microsoft.com/windows/win32/api/http/nf-http-httpterminate */
static void teardown(cp_metrics_http *h)
{
    if (h->group != 0) /* its URL goes with it */
        api.HttpCloseUrlGroup(h->group);
    if (h->queue != NULL)
        api.HttpCloseRequestQueue(h->queue);
    if (h->session != 0)
        api.HttpCloseServerSession(h->session);
    if (h->initialized)
        api.HttpTerminate(HTTP_INITIALIZE_SERVER, NULL);
    if (h->stop != NULL)
        CloseHandle(h->stop);
    free(h);
}

cp_metrics_http *cp_metrics_http_start(cp_metrics *m, const cp_metrics_addr *a, cp_error *e)
{
    cp_metrics_http *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        cp_error_set(e, CP_E_NOMEM, "-metrics-bind-address: out of memory");
        return NULL;
    }
    h->metrics = m;
    h->addr = *a;
    cp_metrics_addr_name(a, h->url, sizeof(h->url));
    cp_metrics_addr_prefix(a, h->prefix, sizeof(h->prefix));
    /* "CreateEventW function": manual-reset, unnamed, not signalled */
    h->stop = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (h->stop == NULL) {
        cp_error_set(e, CP_E_NOMEM, "-metrics-bind-address: CreateEventW failed: error %lu",
                     (unsigned long)GetLastError());
        teardown(h);
        return NULL;
    }
    if (setup(h, e) != CP_OK) {
        teardown(h);
        return NULL;
    }
    h->thread = cp_thread_start(serve, h);
    if (h->thread == NULL) {
        cp_error_set(e, CP_E_NOMEM, "-metrics-bind-address: cannot start the serving thread");
        teardown(h);
        return NULL;
    }
    CP_LOG_INFO("metrics: serving %smetrics (HTTP Server API prefix %s%s)", h->url, h->prefix,
                h->addr.loopback ? "; loopback Host names only" : "");
    return h;
}

void cp_metrics_http_stop(cp_metrics_http *h)
{
    if (h == NULL)
        return;
    /* "SetEvent function": serve() cancels its pending receive and returns;
     * an answer being sent is finished first. Then the group, the queue
     * (its handle closed with HttpCloseRequestQueue, as that page asks, not
     * CloseHandle) and the session go. */
    SetEvent(h->stop);
    cp_thread_join(h->thread);
    teardown(h);
}
