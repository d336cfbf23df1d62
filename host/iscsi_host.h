/* iscsi.h - what the iscsi group asks of the host: the iSCSI initiator's
 * send-target portals, the targets found through them, sessions (logins)
 * and the disks a session exposes, and the initiator-wide mutual-CHAP
 * secret.
 *
 * Implementations:
 *   iscsi_win.c - the product: the initiator API (iscsidsc.dll).
 *   iscsi_sim.c   - in memory, seeded from the simulators' YAML fixture
 *                   (iscsi_sim.h), for the native build's tests and
 *                   csi-proxy-sim.exe; never linked into csi-proxy.exe.
 *
 * The group has checked every argument (address, port 1..65535, IQN,
 * authentication type) before any of these is called. CHAP secrets are
 * handed only to connect() and set_mutual_chap_secret(), which give them
 * to Windows in the API's own arguments; no implementation copies one into
 * e, a log line or anything that outlives the call. Every function returns
 * CP_OK or a negative cp_status with e naming the portal or target and the
 * cause: a portal that is not registered is CP_E_NOT_FOUND; a portal
 * already registered is CP_E_ALREADY_EXISTS; a target already connected is
 * CP_E_ALREADY_EXISTS; a target not connected is CP_E_NOT_FOUND; a host
 * without the initiator (or its service stopped) is
 * CP_E_FAILED_PRECONDITION naming what is missing. */
#ifndef CP_WINAPI_ISCSI_H
#define CP_WINAPI_ISCSI_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

struct cp_storage_host; /* storage.h */

#define CP_ISCSI_NAME_MAX 256 /* an address or an IQN (IQNs are at most 223 bytes) */
#define CP_ISCSI_LIST_MAX 64  /* portals, targets of a portal, disks of a target */

/* Upstream's AuthenticationType numbers (the proto enum). */
typedef enum cp_iscsi_auth {
    CP_ISCSI_AUTH_NONE = 0,
    CP_ISCSI_AUTH_ONE_WAY_CHAP = 1,
    CP_ISCSI_AUTH_MUTUAL_CHAP = 2,
} cp_iscsi_auth;

typedef struct cp_iscsi_portal {
    char address[CP_ISCSI_NAME_MAX];
    uint32_t port;
} cp_iscsi_portal;

typedef struct cp_iscsi_ops {
    int (*add_portal)(void *ctx, const cp_iscsi_portal *p, cp_error *e);
    int (*remove_portal)(void *ctx, const cp_iscsi_portal *p, cp_error *e);
    /* Every registered portal, at most max, in *n. */
    int (*list_portals)(void *ctx, cp_iscsi_portal *out, size_t max, size_t *n, cp_error *e);
    /* The IQNs of the targets found through a registered portal. */
    int (*discover)(void *ctx, const cp_iscsi_portal *p, char (*iqns)[CP_ISCSI_NAME_MAX],
                    size_t max, size_t *n, cp_error *e);
    int (*connect)(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_iscsi_auth auth,
                   const char *chap_username, const char *chap_secret, cp_error *e);
    /* Removes the target's persistent login, if any, and logs it out. */
    int (*disconnect)(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_error *e);
    /* The disk numbers of a connected target's LUNs. */
    int (*disks)(void *ctx, const cp_iscsi_portal *p, const char *iqn, uint32_t *out, size_t max,
                 size_t *n, cp_error *e);
    int (*set_mutual_chap_secret)(void *ctx, const char *secret, cp_error *e);
    /* Simulators only (NULL elsewhere: Windows' disks appear by
     * themselves): the storage host where the LUNs of a login appear as
     * disks, and leave at the logout. Called once, before any call. */
    int (*attach_storage)(void *ctx, const struct cp_storage_host *storage, cp_error *e);
    void (*destroy)(void *ctx);
} cp_iscsi_ops;

typedef struct cp_iscsi_host {
    const cp_iscsi_ops *ops;
    void *ctx;
} cp_iscsi_host;

/* This build's host (Win32 in csi-proxy.exe, the simulator elsewhere).
 * Release with ops->destroy(ctx). */
int cp_iscsi_host_open_default(cp_iscsi_host *out, cp_error *e);

#endif
