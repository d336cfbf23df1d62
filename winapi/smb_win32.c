/* smb_win32.c - smb.h on Windows. Not implemented yet: every mapping call
 * answers FAILED_PRECONDITION naming what is missing, so csi-proxy.exe
 * keeps serving its other groups. The intended back-end is
 * MSFT_SmbGlobalMapping (ROOT\Microsoft\Windows\SMB) through the storage
 * WMI connection's pattern (storage_wmi_win32.c). */
#include "smb.h"

#include <stdio.h>
#include <stdlib.h>

#include <windows.h>

#define MISSING                                                                                    \
    "MSFT_SmbGlobalMapping (ROOT\\Microsoft\\Windows\\SMB) is not used by this build yet"

static int w_state(void *ctx, const char *root, cp_smb_state *out, cp_error *e)
{
    (void)ctx;
    *out = CP_SMB_UNMAPPED;
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "SMB global mapping %s: %s", root, MISSING);
}

static int w_map(void *ctx, const char *root, const char *username, const char *password,
                 bool require_privacy, cp_error *e)
{
    (void)ctx;
    (void)username;
    (void)password;
    (void)require_privacy;
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "SMB global mapping %s: %s", root, MISSING);
}

static int w_unmap(void *ctx, const char *root, cp_error *e)
{
    (void)ctx;
    return cp_error_set(e, CP_E_FAILED_PRECONDITION, "SMB global mapping %s: %s", root, MISSING);
}

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

static void w_destroy(void *ctx)
{
    (void)ctx;
}

static const cp_smb_ops win_ops = {
    .state = w_state,
    .map = w_map,
    .unmap = w_unmap,
    .computer_name = w_computer_name,
    .destroy = w_destroy,
};

int cp_smb_host_open_default(cp_smb_host *out, cp_error *e)
{
    (void)e;
    out->ops = &win_ops;
    out->ctx = NULL;
    return CP_OK;
}
