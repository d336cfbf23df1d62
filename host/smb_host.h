/* smb.h - what the smb group asks of the host: SMB global mappings of a
 * share root (\\server\share, lower-cased, checked by the group).
 *
 * Implementations:
 *   smb_win.c - the product: MSFT_SmbGlobalMapping (ROOT\Microsoft\Windows\SMB).
 *   smb_sim.c   - in memory, for the native build's tests and
 *                 csi-proxy-sim.exe; never linked into csi-proxy.exe.
 *
 * The password is passed only to map(), which hands it to Windows in the
 * API's credential argument; no implementation copies it into e, a log
 * line or anything that outlives the call. Every function returns CP_OK or
 * a negative cp_status with e naming the share and the cause: a mapping
 * that Windows refuses because the server is already mapped with other
 * credentials is CP_E_FAILED_PRECONDITION; no mapping to remove is
 * CP_E_NOT_FOUND; a host without the SMB client's management interface is
 * CP_E_FAILED_PRECONDITION naming what is missing. */
#ifndef CP_WINAPI_SMB_H
#define CP_WINAPI_SMB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define CP_SMB_NAME_MAX 256

typedef enum cp_smb_state {
    CP_SMB_UNMAPPED = 0,
    CP_SMB_MAPPED,      /* mapped and the share answers */
    CP_SMB_UNREACHABLE, /* mapped, but the share no longer answers */
} cp_smb_state;

/* An address of this machine: family 4 (b[0..3]) or 6 (b[0..15]), network
 * byte order. */
typedef struct cp_smb_addr {
    int family;
    unsigned char b[16];
} cp_smb_addr;

/* The most addresses local_addresses() reports; a machine with more is
 * CP_E_RESOURCE_EXHAUSTED (the group then cannot judge an address). */
#define CP_SMB_ADDRS_MAX 256

typedef struct cp_smb_ops {
    int (*state)(void *ctx, const char *root, cp_smb_state *out, cp_error *e);
    int (*map)(void *ctx, const char *root, const char *username, const char *password,
               bool require_privacy, cp_error *e);
    int (*unmap)(void *ctx, const char *root, cp_error *e);
    /* This machine's NetBIOS and DNS host names ("" when unknown). */
    int (*computer_name)(void *ctx, char *netbios, char *dns, size_t len, cp_error *e);
    /* This machine's unicast addresses, every adapter, up or down, IPv4
     * and IPv6: at most max into out, the count in *n. */
    int (*local_addresses)(void *ctx, cp_smb_addr *out, size_t max, size_t *n, cp_error *e);
    void (*destroy)(void *ctx);
    /* The size of the share root and its free bytes, as GetDiskFreeSpaceExW
     * reports them for "\\server\share\" (TotalNumberOfBytes,
     * TotalNumberOfFreeBytes): what the volume group's GetVolumeStats
     * answers for a mapped share. A share that does not answer is
     * CP_E_UNAVAILABLE. NULL in a host that cannot tell. */
    int (*space)(void *ctx, const char *root, uint64_t *total, uint64_t *free_bytes, cp_error *e);
} cp_smb_ops;

typedef struct cp_smb_host {
    const cp_smb_ops *ops;
    void *ctx;
} cp_smb_host;

/* This build's host (Win32 in csi-proxy.exe, the simulator elsewhere).
 * Release with ops->destroy(ctx). */
int cp_smb_host_open_default(cp_smb_host *out, cp_error *e);

#endif
