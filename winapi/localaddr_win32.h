/* localaddr_win32.h - this machine's IP addresses, from the IP Helper API
 * (iphlpapi.dll, loaded from system32 on first use). Windows build only;
 * behind smb.h's local_addresses for the smb group's "this machine" rule. */
#ifndef CP_WINAPI_LOCALADDR_WIN32_H
#define CP_WINAPI_LOCALADDR_WIN32_H

#include <stddef.h>

#include "../server/status.h"
#include "smb.h"

/* Every unicast and anycast address of every adapter (up or down, IPv4 and
 * IPv6): at most max into out, the count in *n (more than max:
 * CP_E_RESOURCE_EXHAUSTED). CP_E_FAILED_PRECONDITION when iphlpapi.dll or
 * its GetAdaptersAddresses cannot be loaded; the Win32 error otherwise. */
int cp_win_local_addresses(cp_smb_addr *out, size_t max, size_t *n, cp_error *e);

#endif
