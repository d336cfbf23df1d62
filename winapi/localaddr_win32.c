/* localaddr_win32.c - this machine's IP addresses (see localaddr_win32.h). */
#include <winsock2.h> /* first: before windows.h */
#include <ws2tcpip.h>

#include <iphlpapi.h>

#include "localaddr_win32.h"

#include <stdlib.h>
#include <string.h>

#include "winutil_win32.h"

typedef ULONG(WINAPI *gaa_fn)(ULONG, ULONG, PVOID, PIP_ADAPTER_ADDRESSES, PULONG);

static INIT_ONCE once = INIT_ONCE_STATIC_INIT;
static gaa_fn gaa;
static DWORD load_error;

/* The InitOnceExecuteOnce callback ("InitOnceExecuteOnce function"): the
 * DLL is loaded once and stays loaded. "LoadLibraryExW function":
 * LOAD_LIBRARY_SEARCH_SYSTEM32 looks in system32 only, so no other file of
 * that name is loaded. It is not in the import table: a start that never
 * maps a share by address never loads it. */
static BOOL CALLBACK load(PINIT_ONCE o, PVOID param, PVOID *ctx)
{
    (void)o;
    (void)param;
    (void)ctx;
    HMODULE m = LoadLibraryExW(L"iphlpapi.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (m == NULL) {
        load_error = GetLastError();
        return TRUE;
    }
    gaa = (gaa_fn)(void (*)(void))GetProcAddress(m, "GetAdaptersAddresses");
    if (gaa == NULL)
        load_error = GetLastError();
    return TRUE;
}

static void add(const SOCKET_ADDRESS *sa, cp_smb_addr *out, size_t max, size_t *n)
{
    const struct sockaddr *s = sa->lpSockaddr;
    if (s == NULL)
        return;
    cp_smb_addr a = {0};
    if (s->sa_family == AF_INET && sa->iSockaddrLength >= (INT)sizeof(struct sockaddr_in)) {
        a.family = 4;
        memcpy(a.b, &((const struct sockaddr_in *)(const void *)s)->sin_addr, 4);
    } else if (s->sa_family == AF_INET6 &&
               sa->iSockaddrLength >= (INT)sizeof(struct sockaddr_in6)) {
        a.family = 6;
        memcpy(a.b, &((const struct sockaddr_in6 *)(const void *)s)->sin6_addr, 16);
    } else {
        return;
    }
    if (*n < max)
        out[*n] = a;
    (*n)++;
}

int cp_win_local_addresses(cp_smb_addr *out, size_t max, size_t *n, cp_error *e)
{
    *n = 0;
    InitOnceExecuteOnce(&once, load, NULL, NULL);
    if (gaa == NULL) {
        char text[256];
        return cp_error_set(e, CP_E_FAILED_PRECONDITION,
                            "the IP Helper API (iphlpapi.dll GetAdaptersAddresses) cannot be "
                            "loaded: %s (error %lu)",
                            cp_win_errtext(load_error, text, sizeof(text)),
                            (unsigned long)load_error);
    }
    /* "GetAdaptersAddresses function": AF_UNSPEC returns IPv4 and IPv6;
     * GAA_FLAG_INCLUDE_ALL_INTERFACES "return addresses for all NDIS
     * interfaces"; multicast and DNS server addresses are not this
     * machine's. The recommended call pre-allocates a 15 KB buffer and
     * calls again with the size ERROR_BUFFER_OVERFLOW reports (adapters
     * can appear between the two calls, hence a few tries). */
    ULONG flags = GAA_FLAG_SKIP_MULTICAST | GAA_FLAG_SKIP_DNS_SERVER | GAA_FLAG_SKIP_FRIENDLY_NAME |
                  GAA_FLAG_INCLUDE_ALL_INTERFACES;
    ULONG size = 15 * 1024, rc = ERROR_BUFFER_OVERFLOW;
    IP_ADAPTER_ADDRESSES *list = NULL;
    for (int tries = 0; tries < 4 && rc == ERROR_BUFFER_OVERFLOW; tries++) {
        free(list);
        if ((list = malloc(size)) == NULL)
            return cp_error_set(e, CP_E_NOMEM, "listing this machine's addresses: out of memory");
        rc = gaa(AF_UNSPEC, flags, NULL, list, &size);
    }
    if (rc == ERROR_NO_DATA) { /* no address at all */
        free(list);
        return CP_OK;
    }
    if (rc != ERROR_SUCCESS) {
        free(list);
        char text[256];
        return cp_error_set(e, cp_win_status(rc),
                            "listing this machine's addresses (GetAdaptersAddresses) failed: %s "
                            "(error %lu)",
                            cp_win_errtext(rc, text, sizeof(text)), (unsigned long)rc);
    }
    for (IP_ADAPTER_ADDRESSES *ad = list; ad != NULL; ad = ad->Next) {
        for (IP_ADAPTER_UNICAST_ADDRESS *u = ad->FirstUnicastAddress; u != NULL; u = u->Next)
            add(&u->Address, out, max, n);
        for (IP_ADAPTER_ANYCAST_ADDRESS *a = ad->FirstAnycastAddress; a != NULL; a = a->Next)
            add(&a->Address, out, max, n);
    }
    free(list);
    if (*n > max)
        return cp_error_set(e, CP_E_RESOURCE_EXHAUSTED,
                            "this machine has %lu addresses, more than the %lu compared",
                            (unsigned long)*n, (unsigned long)max);
    return CP_OK;
}
