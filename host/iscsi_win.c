/* iscsi_win.c - iscsi.h on Windows: the iSCSI initiator's own API
 * (iscsidsc.dll, loaded at run time by iscsidsc_win.c), in process, no
 * child process and no command string.
 *
 * What each call does (Microsoft's iscsidsc.h reference, learn.microsoft.
 * com/windows/win32/api/iscsidsc/, cited at each call):
 *   add_portal     ReportIScsiSendTargetPortalsExW (registered already:
 *                  CP_E_ALREADY_EXISTS), else AddIScsiSendTargetPortalW;
 *   remove_portal  RemoveIScsiSendTargetPortalW for each registration of
 *                  the portal (none: CP_E_NOT_FOUND);
 *   list_portals   ReportIScsiSendTargetPortalsExW, one entry per address
 *                  and port;
 *   discover       RefreshIScsiSendTargetPortalW (a SendTargets request to
 *                  that portal now), ReportIScsiTargetsW, and for each
 *                  target GetIScsiTargetInformationW(DiscoveryMechanisms):
 *                  the targets found through this portal;
 *   connect        a session to the target already: CP_E_ALREADY_EXISTS;
 *                  else one LoginIScsiTargetW with IsPersistent FALSE: a
 *                  session now, which does not come back after a reboot.
 *                  Upstream makes no persistent login either (v1's
 *                  Connect-IscsiTarget without -IsPersistent, its WMI
 *                  version MSFT_iSCSITarget.Connect without IsPersistent):
 *                  a node that reboots after a crash or a forced drain must
 *                  not log back in to a LUN that may be attached elsewhere
 *                  by then; the CSI driver logs in again when it stages;
 *   disconnect     RemoveIScsiPersistentTargetW for any persistent login of
 *                  the target (an older csi-proxy made them), then
 *                  LogoutIScsiTarget for each of its sessions (neither:
 *                  CP_E_NOT_FOUND, the group's no-op);
 *   disks          GetIScsiSessionListW, GetDevicesForIScsiSessionW: the
 *                  StorageDeviceNumber.DeviceNumber of each disk;
 *   set_mutual     SetIScsiInitiatorCHAPSharedSecret.
 * CHAP secrets go to Windows only in ISCSI_LOGIN_OPTIONS.Password and
 * SetIScsiInitiatorCHAPSharedSecret's argument, from the caller's buffer:
 * no copy is made and no message names them. */
#include "host/iscsi_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/iscsi_isdsc.h"
#include "host/iscsidsc_win.h"

#define GROW_TRIES 8 /* a list that grows between two calls is asked again */

typedef struct win_ctx {
    SRWLOCK lock; /* the first load */
    cp_isdsc api; /* read-only once loaded */
} win_ctx;

static const cp_isdsc *api_of(void *ctx, cp_error *e)
{
    win_ctx *c = ctx;
    AcquireSRWLockExclusive(&c->lock);
    int rc = cp_isdsc_load(&c->api, e);
    ReleaseSRWLockExclusive(&c->lock);
    return rc == CP_OK ? &c->api : NULL;
}

#define NEED(fn, e) cp_isdsc_need((const void *)(fn), #fn + 3 /* "d->" */, e)

static void portal_name(const cp_iscsi_portal *p, char *out, size_t len)
{
    snprintf(out, len, "target portal %s:%u", p->address, (unsigned)p->port);
}

static void target_name(const cp_iscsi_portal *p, const char *iqn, char *out, size_t len)
{
    snprintf(out, len, "target %s through target portal %s:%u", iqn, p->address, (unsigned)p->port);
}

/* ISCSI_TARGET_PORTALW for p: no symbolic name, Address, Socket. The
 * group allows ASCII addresses of at most 255 bytes only. */
static void to_portal(const cp_iscsi_portal *p, cp_iscsi_target_portal *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i + 1 < CP_ISCSI_MAX_PORTAL_ADDR && p->address[i] != '\0'; i++)
        out->Address[i] = (WCHAR)(unsigned char)p->address[i];
    out->Socket = (USHORT)p->port;
}

/* UTF-16 to UTF-8 into a fixed buffer; false when it does not fit. */
static bool narrow(const WCHAR *w, char *out, size_t len)
{
    return WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)len, NULL, NULL) > 0;
}

static bool wide_eq(const WCHAR *w, const char *s)
{
    char buf[CP_ISCSI_NAME_MAX * 3];
    return w != NULL && narrow(w, buf, sizeof(buf)) && cp_isdsc_name_eq(buf, s);
}

/* --- the lists the API reports ----------------------------------------- */

/* "ReportIScsiSendTargetPortalsExW function": PortalCount in entries and
 * PortalInfoSize in bytes on input; ERROR_INSUFFICIENT_BUFFER when the
 * buffer is too small, with the size needed in PortalInfoSize. */
static int report_portals(const cp_isdsc *d, cp_iscsi_portal_info_ex **out, ULONG *count,
                          cp_error *e)
{
    ULONG size = 8 * sizeof(cp_iscsi_portal_info_ex);
    for (int i = 0; i < GROW_TRIES; i++) {
        cp_iscsi_portal_info_ex *buf = calloc(1, size);
        if (buf == NULL)
            return cp_error_set(e, CP_E_NOMEM, "out of memory");
        ULONG n = size / sizeof(*buf), got = size;
        ULONG rc = d->ReportIScsiSendTargetPortalsExW(&n, &got, buf);
        if (rc == ERROR_SUCCESS) {
            *out = buf;
            *count = n;
            return CP_OK;
        }
        free(buf);
        if (rc != ERROR_INSUFFICIENT_BUFFER)
            return cp_isdsc_error(e, rc, "ReportIScsiSendTargetPortalsExW", "");
        ULONG need = n * (ULONG)sizeof(*buf) > got ? n * (ULONG)sizeof(*buf) : got;
        size = need > size ? need : size * 2;
    }
    return cp_error_set(e, CP_E_UNAVAILABLE,
                        "ReportIScsiSendTargetPortalsExW: the list kept growing; try again");
}

static bool portal_is(const cp_iscsi_portal_info_ex *x, const cp_iscsi_portal *p)
{
    return x->Socket == p->port && wide_eq(x->Address, p->address);
}

/* Whether p is registered (CP_OK) or not (CP_E_NOT_FOUND, e says so). */
static int registered(const cp_isdsc *d, const cp_iscsi_portal *p, cp_error *e)
{
    cp_iscsi_portal_info_ex *v;
    ULONG n;
    int rc = report_portals(d, &v, &n, e);
    if (rc != CP_OK)
        return rc;
    bool found = false;
    for (ULONG i = 0; i < n && !found; i++)
        found = portal_is(&v[i], p);
    free(v);
    char obj[CP_ISCSI_NAME_MAX + 32];
    portal_name(p, obj, sizeof(obj));
    return found ? CP_OK : cp_error_set(e, CP_E_NOT_FOUND, "%s is not registered", obj);
}

/* "GetIScsiSessionListW function": BufferSize in bytes; the
 * ISCSI_SESSION_INFOW array comes first and the strings its members point
 * to follow it in the same buffer; ERROR_INSUFFICIENT_BUFFER with the
 * size needed in BufferSize. *buf is the caller's to free. */
static int sessions(const cp_isdsc *d, cp_iscsi_session_info **buf, ULONG *count, cp_error *e)
{
    ULONG size = 4096;
    for (int i = 0; i < GROW_TRIES; i++) {
        *buf = calloc(1, size);
        if (*buf == NULL)
            return cp_error_set(e, CP_E_NOMEM, "out of memory");
        ULONG got = size;
        *count = 0;
        ULONG rc = d->GetIScsiSessionListW(&got, count, *buf);
        if (rc == ERROR_SUCCESS)
            return CP_OK;
        free(*buf);
        *buf = NULL;
        if (rc != ERROR_INSUFFICIENT_BUFFER)
            return cp_isdsc_error(e, rc, "GetIScsiSessionListW", "");
        size = got > size ? got : size * 2;
    }
    return cp_error_set(e, CP_E_UNAVAILABLE,
                        "GetIScsiSessionListW: the list kept growing; try again");
}

static bool session_of(const cp_iscsi_session_info *s, const char *iqn)
{
    return wide_eq(s->TargetNodeName, iqn) || wide_eq(s->TargetName, iqn);
}

/* "ReportIScsiPersistentLoginsW function": Count in entries and
 * BufferSizeInBytes in bytes; ERROR_INSUFFICIENT_BUFFER with the size
 * needed. */
static int persistent_logins(const cp_isdsc *d, cp_iscsi_persistent_login **buf, ULONG *count,
                             cp_error *e)
{
    ULONG size = 4 * sizeof(cp_iscsi_persistent_login);
    for (int i = 0; i < GROW_TRIES; i++) {
        *buf = calloc(1, size);
        if (*buf == NULL)
            return cp_error_set(e, CP_E_NOMEM, "out of memory");
        ULONG got = size;
        *count = size / sizeof(**buf);
        ULONG rc = d->ReportIScsiPersistentLoginsW(count, *buf, &got);
        if (rc == ERROR_SUCCESS)
            return CP_OK;
        free(*buf);
        *buf = NULL;
        if (rc != ERROR_INSUFFICIENT_BUFFER)
            return cp_isdsc_error(e, rc, "ReportIScsiPersistentLoginsW", "");
        size = got > size ? got : size * 2;
    }
    return cp_error_set(e, CP_E_UNAVAILABLE,
                        "ReportIScsiPersistentLoginsW: the list kept growing; try again");
}

/* Removes every persistent login of iqn; *removed counts them. */
static int remove_persistent(const cp_isdsc *d, const char *iqn, const char *obj, int *removed,
                             cp_error *e)
{
    cp_iscsi_persistent_login *v;
    ULONG n;
    int rc = persistent_logins(d, &v, &n, e);
    for (ULONG i = 0; rc == CP_OK && i < n; i++) {
        if (!wide_eq(v[i].TargetName, iqn))
            continue;
        /* "RemoveIScsiPersistentTargetW function": the initiator instance,
         * port, target name and portal of the persistent login, as
         * ReportIScsiPersistentLoginsW gave them. InitiatorInstance is
         * "[in]", not optional (the SDK's iscsidsc.h marks it _In_;
         * mingw-w64's header carries no annotation): the reported name is
         * passed as it is, even empty, never NULL. */
        ULONG r = d->RemoveIScsiPersistentTargetW(v[i].InitiatorInstance, v[i].InitiatorPortNumber,
                                                  v[i].TargetName, &v[i].TargetPortal);
        if (r == ERROR_SUCCESS)
            (*removed)++;
        else if (cp_isdsc_status(r) != CP_E_NOT_FOUND) /* gone already: fine */
            rc = cp_isdsc_error(e, r, "RemoveIScsiPersistentTargetW", obj);
    }
    free(v);
    return rc;
}

/* --- the operations ------------------------------------------------------ */

static int w_add(void *ctx, const cp_iscsi_portal *p, cp_error *e)
{
    const cp_isdsc *d = api_of(ctx, e);
    if (d == NULL || NEED(d->AddIScsiSendTargetPortalW, e) != CP_OK ||
        NEED(d->ReportIScsiSendTargetPortalsExW, e) != CP_OK)
        return e->status;
    char obj[CP_ISCSI_NAME_MAX + 32];
    portal_name(p, obj, sizeof(obj));
    int rc = registered(d, p, e);
    if (rc == CP_OK)
        return cp_error_set(e, CP_E_ALREADY_EXISTS, "%s is registered already", obj);
    if (rc != CP_E_NOT_FOUND)
        return rc;
    cp_iscsi_target_portal portal;
    to_portal(p, &portal);
    cp_iscsi_login_options opts = {0}; /* Version ISCSI_LOGIN_OPTIONS_VERSION, nothing specified */
    /* "AddIScsiSendTargetPortalW function": InitiatorInstance NULL and
     * ISCSI_ALL_INITIATOR_PORTS let the service choose; it sends a
     * SendTargets request to the portal before it returns. */
    ULONG r = d->AddIScsiSendTargetPortalW(NULL, CP_ISCSI_ALL_INITIATOR_PORTS, &opts, 0, &portal);
    if (r != ERROR_SUCCESS)
        return cp_isdsc_error(e, r, "AddIScsiSendTargetPortalW", obj);
    return CP_OK;
}

static int w_remove(void *ctx, const cp_iscsi_portal *p, cp_error *e)
{
    const cp_isdsc *d = api_of(ctx, e);
    if (d == NULL || NEED(d->RemoveIScsiSendTargetPortalW, e) != CP_OK ||
        NEED(d->ReportIScsiSendTargetPortalsExW, e) != CP_OK)
        return e->status;
    char obj[CP_ISCSI_NAME_MAX + 32];
    portal_name(p, obj, sizeof(obj));
    cp_iscsi_portal_info_ex *v;
    ULONG n;
    int rc = report_portals(d, &v, &n, e);
    if (rc != CP_OK)
        return rc;
    int removed = 0;
    for (ULONG i = 0; rc == CP_OK && i < n; i++) {
        if (!portal_is(&v[i], p))
            continue;
        cp_iscsi_target_portal portal;
        to_portal(p, &portal);
        /* "RemoveIScsiSendTargetPortalW function": the initiator instance
         * and port the registration was reported with. */
        ULONG r =
            d->RemoveIScsiSendTargetPortalW(v[i].InitiatorName[0] != 0 ? v[i].InitiatorName : NULL,
                                            v[i].InitiatorPortNumber, &portal);
        if (r == ERROR_SUCCESS)
            removed++;
        else if (cp_isdsc_status(r) != CP_E_NOT_FOUND)
            rc = cp_isdsc_error(e, r, "RemoveIScsiSendTargetPortalW", obj);
    }
    free(v);
    if (rc == CP_OK && removed == 0)
        rc = cp_error_set(e, CP_E_NOT_FOUND, "%s is not registered", obj);
    return rc;
}

static int w_list(void *ctx, cp_iscsi_portal *out, size_t max, size_t *n, cp_error *e)
{
    *n = 0;
    const cp_isdsc *d = api_of(ctx, e);
    if (d == NULL || NEED(d->ReportIScsiSendTargetPortalsExW, e) != CP_OK)
        return e->status;
    cp_iscsi_portal_info_ex *v;
    ULONG count;
    int rc = report_portals(d, &v, &count, e);
    for (ULONG i = 0; rc == CP_OK && i < count; i++) {
        cp_iscsi_portal p = {.port = v[i].Socket};
        if (!narrow(v[i].Address, p.address, sizeof(p.address)))
            continue;     /* not an address the API takes from us either */
        bool dup = false; /* one entry per initiator port: one per portal here */
        for (size_t j = 0; j < *n && !dup; j++)
            dup = out[j].port == p.port && cp_isdsc_name_eq(out[j].address, p.address);
        if (dup)
            continue;
        if (*n == max)
            rc = cp_error_set(e, CP_E_RESOURCE_EXHAUSTED,
                              "more than %lu target portals are registered", (unsigned long)max);
        else
            out[(*n)++] = p;
    }
    free(v);
    return rc;
}

/* "GetIScsiTargetInformationW function": BufferSize in bytes; the
 * DiscoveryMechanisms class is a list of NUL-terminated strings ending in
 * an empty one; ERROR_INSUFFICIENT_BUFFER with the size needed. */
static int found_through(const cp_isdsc *d, WCHAR *target, const cp_iscsi_portal *p, bool *yes,
                         cp_error *e)
{
    *yes = false;
    ULONG size = 1024;
    for (int i = 0; i < GROW_TRIES; i++) {
        WCHAR *buf = calloc(1, size + 2 * sizeof(WCHAR));
        if (buf == NULL)
            return cp_error_set(e, CP_E_NOMEM, "out of memory");
        ULONG got = size;
        ULONG rc = d->GetIScsiTargetInformationW(target, NULL, CP_ISCSI_INFO_DISCOVERY_MECHANISMS,
                                                 &got, buf);
        if (rc == ERROR_SUCCESS) {
            for (WCHAR *m = buf; *m != 0 && !*yes; m += wcslen(m) + 1) {
                char s[CP_ISCSI_NAME_MAX * 4];
                *yes = narrow(m, s, sizeof(s)) &&
                       cp_isdsc_mechanism_is_portal(s, p->address, p->port);
            }
            free(buf);
            return CP_OK;
        }
        free(buf);
        if (cp_isdsc_status(rc) == CP_E_NOT_FOUND)
            return CP_OK; /* the target went away meanwhile */
        if (rc != ERROR_INSUFFICIENT_BUFFER)
            return cp_isdsc_error(e, rc, "GetIScsiTargetInformationW", "");
        size = got > size ? got : size * 2;
    }
    return cp_error_set(e, CP_E_UNAVAILABLE, "GetIScsiTargetInformationW: the answer kept growing");
}

static int w_discover(void *ctx, const cp_iscsi_portal *p, char (*iqns)[CP_ISCSI_NAME_MAX],
                      size_t max, size_t *n, cp_error *e)
{
    *n = 0;
    const cp_isdsc *d = api_of(ctx, e);
    if (d == NULL || NEED(d->ReportIScsiSendTargetPortalsExW, e) != CP_OK ||
        NEED(d->RefreshIScsiSendTargetPortalW, e) != CP_OK ||
        NEED(d->ReportIScsiTargetsW, e) != CP_OK || NEED(d->GetIScsiTargetInformationW, e) != CP_OK)
        return e->status;
    char obj[CP_ISCSI_NAME_MAX + 32];
    portal_name(p, obj, sizeof(obj));
    int rc = registered(d, p, e);
    if (rc != CP_OK)
        return rc;
    cp_iscsi_target_portal portal;
    to_portal(p, &portal);
    /* "RefreshIScsiSendTargetPortalW function": a SendTargets request to
     * this portal now, so the targets below are the portal's current ones. */
    ULONG r = d->RefreshIScsiSendTargetPortalW(NULL, CP_ISCSI_ALL_INITIATOR_PORTS, &portal);
    if (r != ERROR_SUCCESS)
        return cp_isdsc_error(e, r, "RefreshIScsiSendTargetPortalW", obj);
    /* "ReportIScsiTargetsW function": every discovered target as a list of
     * NUL-terminated names ending in an empty one; BufferSize is counted in
     * characters (room for as many bytes is allocated too, whichever unit
     * a system uses); ERROR_INSUFFICIENT_BUFFER with the size needed. */
    ULONG size = 4096;
    WCHAR *buf = NULL;
    for (int i = 0;; i++) {
        buf = calloc(size + 2, sizeof(WCHAR));
        if (buf == NULL)
            return cp_error_set(e, CP_E_NOMEM, "out of memory");
        ULONG got = size;
        r = d->ReportIScsiTargetsW(FALSE, &got, buf);
        if (r == ERROR_SUCCESS)
            break;
        free(buf);
        if (r != ERROR_INSUFFICIENT_BUFFER)
            return cp_isdsc_error(e, r, "ReportIScsiTargetsW", obj);
        if (i + 1 == GROW_TRIES)
            return cp_error_set(e, CP_E_UNAVAILABLE, "ReportIScsiTargetsW: the list kept growing");
        size = got > size ? got : size * 2;
    }
    for (WCHAR *t = buf; rc == CP_OK && *t != 0; t += wcslen(t) + 1) {
        bool yes;
        char name[CP_ISCSI_NAME_MAX];
        if (!narrow(t, name, sizeof(name)))
            continue; /* longer than any iSCSI name (223 bytes) */
        rc = found_through(d, t, p, &yes, e);
        if (rc != CP_OK || !yes)
            continue;
        if (*n == max)
            rc = cp_error_set(e, CP_E_RESOURCE_EXHAUSTED, "%s has more than %lu targets", obj,
                              (unsigned long)max);
        else
            memcpy(iqns[(*n)++], name, sizeof(name));
    }
    free(buf);
    return rc;
}

/* Whether iqn has a session now. */
static int connected(const cp_isdsc *d, const char *iqn, bool *yes, cp_error *e)
{
    cp_iscsi_session_info *v;
    ULONG n;
    *yes = false;
    int rc = sessions(d, &v, &n, e);
    for (ULONG i = 0; rc == CP_OK && i < n && !*yes; i++)
        *yes = session_of(&v[i], iqn);
    free(v);
    return rc;
}

static int w_connect(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_iscsi_auth auth,
                     const char *user, const char *secret, cp_error *e)
{
    const cp_isdsc *d = api_of(ctx, e);
    if (d == NULL || NEED(d->LoginIScsiTargetW, e) != CP_OK ||
        NEED(d->GetIScsiSessionListW, e) != CP_OK)
        return e->status;
    char obj[2 * CP_ISCSI_NAME_MAX + 64];
    target_name(p, iqn, obj, sizeof(obj));
    bool yes;
    int rc = connected(d, iqn, &yes, e);
    if (rc != CP_OK)
        return rc;
    if (yes)
        return cp_error_set(e, CP_E_ALREADY_EXISTS, "target %s is connected already", iqn);
    WCHAR target[CP_ISCSI_MAX_NAME_LEN + 1] = {0};
    for (size_t i = 0; i < CP_ISCSI_MAX_NAME_LEN && iqn[i] != '\0'; i++)
        target[i] = (WCHAR)(unsigned char)iqn[i]; /* the group allows ASCII names only */
    cp_iscsi_target_portal portal;
    to_portal(p, &portal);
    /* "ISCSI_LOGIN_OPTIONS structure": AuthType, and for CHAP the user
     * name (CHAP_N) and the target's secret as counted bytes; Windows
     * takes the initiator's own name when no user name is specified. */
    cp_iscsi_login_options opts = {.InformationSpecified = CP_ISCSI_LOGIN_OPTIONS_AUTH_TYPE};
    opts.AuthType = auth == CP_ISCSI_AUTH_MUTUAL_CHAP    ? CP_ISCSI_MUTUAL_CHAP_AUTH_TYPE
                    : auth == CP_ISCSI_AUTH_ONE_WAY_CHAP ? CP_ISCSI_CHAP_AUTH_TYPE
                                                         : CP_ISCSI_NO_AUTH_TYPE;
    if (auth != CP_ISCSI_AUTH_NONE && user[0] != '\0') {
        opts.InformationSpecified |= CP_ISCSI_LOGIN_OPTIONS_USERNAME;
        opts.Username = (PUCHAR)user;
        opts.UsernameLength = (ULONG)strlen(user);
    }
    if (auth != CP_ISCSI_AUTH_NONE && secret[0] != '\0') {
        opts.InformationSpecified |= CP_ISCSI_LOGIN_OPTIONS_PASSWORD;
        opts.Password = (PUCHAR)secret;
        opts.PasswordLength = (ULONG)strlen(secret);
    }
    cp_iscsi_session_id sid, cid;
    /* "LoginIScsiTargetW function": the target must be among the
     * discovered ones; InitiatorInstance NULL needs ISCSI_ANY_INITIATOR_PORT.
     * IsPersistent FALSE: a session now, its LUNs appear, and nothing is
     * stored for the service to repeat at boot (TRUE would store the login
     * only, iscsicli's PersistentLoginTarget). A failed login leaves no
     * session and stores nothing. */
    ULONG r = d->LoginIScsiTargetW(target, FALSE, NULL, CP_ISCSI_ANY_INITIATOR_PORT, &portal, 0,
                                   NULL, &opts, 0, NULL, FALSE, &sid, &cid);
    if (r == ERROR_SUCCESS || cp_isdsc_status(r) == CP_E_ALREADY_EXISTS)
        return CP_OK; /* logged in meanwhile by another caller: the same session */
    return cp_isdsc_error(e, r, "LoginIScsiTargetW", obj);
}

static int w_disconnect(void *ctx, const cp_iscsi_portal *p, const char *iqn, cp_error *e)
{
    const cp_isdsc *d = api_of(ctx, e);
    if (d == NULL || NEED(d->GetIScsiSessionListW, e) != CP_OK ||
        NEED(d->LogoutIScsiTarget, e) != CP_OK ||
        NEED(d->ReportIScsiPersistentLoginsW, e) != CP_OK ||
        NEED(d->RemoveIScsiPersistentTargetW, e) != CP_OK)
        return e->status;
    char obj[2 * CP_ISCSI_NAME_MAX + 64];
    target_name(p, iqn, obj, sizeof(obj));
    int done = 0;
    int rc = remove_persistent(d, iqn, obj, &done, e);
    if (rc != CP_OK)
        return rc;
    cp_iscsi_session_info *v;
    ULONG n;
    if ((rc = sessions(d, &v, &n, e)) != CP_OK)
        return rc;
    for (ULONG i = 0; rc == CP_OK && i < n; i++) {
        if (!session_of(&v[i], iqn))
            continue;
        /* "LogoutIScsiTarget function": ends the session; it fails with
         * ISDSC_DEVICE_BUSY_ON_SESSION while a disk of it is in use. */
        ULONG r = d->LogoutIScsiTarget(&v[i].SessionId);
        if (r == ERROR_SUCCESS)
            done++;
        else if (cp_isdsc_status(r) != CP_E_NOT_FOUND) /* ended meanwhile: fine */
            rc = cp_isdsc_error(e, r, "LogoutIScsiTarget", obj);
    }
    free(v);
    if (rc == CP_OK && done == 0)
        rc = cp_error_set(e, CP_E_NOT_FOUND, "target %s is not connected", iqn);
    return rc;
}

/* "GetDevicesForIScsiSessionW function": DeviceCount in entries;
 * ERROR_INSUFFICIENT_BUFFER with the count needed. Disks are the devices
 * whose StorageDeviceNumber.DeviceType is FILE_DEVICE_DISK; DeviceNumber
 * is the N of \\.\PhysicalDriveN, the disk group's number. */
static int session_disks(const cp_isdsc *d, cp_iscsi_session_id *sid, const char *obj,
                         uint32_t *out, size_t max, size_t *n, cp_error *e)
{
    ULONG want = 16;
    for (int i = 0; i < GROW_TRIES; i++) {
        cp_iscsi_device_on_session *v = calloc(want, sizeof(*v));
        if (v == NULL)
            return cp_error_set(e, CP_E_NOMEM, "out of memory");
        ULONG count = want;
        ULONG r = d->GetDevicesForIScsiSessionW(sid, &count, v);
        if (r == ERROR_SUCCESS) {
            int rc = CP_OK;
            for (ULONG k = 0; k < count && k < want && rc == CP_OK; k++) {
                if (v[k].StorageDeviceNumber.DeviceType != FILE_DEVICE_DISK)
                    continue;
                uint32_t num = v[k].StorageDeviceNumber.DeviceNumber;
                bool dup = false;
                for (size_t j = 0; j < *n && !dup; j++)
                    dup = out[j] == num;
                if (dup)
                    continue;
                if (*n == max)
                    rc = cp_error_set(e, CP_E_RESOURCE_EXHAUSTED, "%s has more than %lu disks", obj,
                                      (unsigned long)max);
                else
                    out[(*n)++] = num;
            }
            free(v);
            return rc;
        }
        free(v);
        if (cp_isdsc_status(r) == CP_E_NOT_FOUND)
            return CP_OK; /* the session ended meanwhile */
        if (r != ERROR_INSUFFICIENT_BUFFER)
            return cp_isdsc_error(e, r, "GetDevicesForIScsiSessionW", obj);
        want = count > want ? count : want * 2;
    }
    return cp_error_set(e, CP_E_UNAVAILABLE, "GetDevicesForIScsiSessionW: the list kept growing");
}

static int w_disks(void *ctx, const cp_iscsi_portal *p, const char *iqn, uint32_t *out, size_t max,
                   size_t *n, cp_error *e)
{
    *n = 0;
    const cp_isdsc *d = api_of(ctx, e);
    if (d == NULL || NEED(d->GetIScsiSessionListW, e) != CP_OK ||
        NEED(d->GetDevicesForIScsiSessionW, e) != CP_OK)
        return e->status;
    char obj[2 * CP_ISCSI_NAME_MAX + 64];
    target_name(p, iqn, obj, sizeof(obj));
    cp_iscsi_session_info *v;
    ULONG count;
    int rc = sessions(d, &v, &count, e);
    if (rc != CP_OK)
        return rc;
    bool any = false;
    for (ULONG i = 0; rc == CP_OK && i < count; i++) {
        if (!session_of(&v[i], iqn))
            continue;
        any = true;
        rc = session_disks(d, &v[i].SessionId, obj, out, max, n, e);
    }
    free(v);
    if (rc == CP_OK && !any)
        rc = cp_error_set(e, CP_E_NOT_FOUND, "target %s is not connected", iqn);
    return rc;
}

static int w_set_mutual(void *ctx, const char *secret, cp_error *e)
{
    const cp_isdsc *d = api_of(ctx, e);
    if (d == NULL || NEED(d->SetIScsiInitiatorCHAPSharedSecret, e) != CP_OK)
        return e->status;
    /* "SetIScsiInitiatorCHAPSharedSecret function": the initiator's secret
     * for mutual CHAP, as counted bytes (Windows takes 12 to 16). */
    ULONG r = d->SetIScsiInitiatorCHAPSharedSecret((ULONG)strlen(secret), (PUCHAR)secret);
    if (r != ERROR_SUCCESS)
        return cp_isdsc_error(e, r, "SetIScsiInitiatorCHAPSharedSecret",
                              "(the initiator's mutual CHAP secret)");
    return CP_OK;
}

static void w_destroy(void *ctx)
{
    win_ctx *c = ctx;
    if (c == NULL)
        return;
    cp_isdsc_unload(&c->api);
    free(c);
}

static const cp_iscsi_ops win_ops = {
    .add_portal = w_add,
    .remove_portal = w_remove,
    .list_portals = w_list,
    .discover = w_discover,
    .connect = w_connect,
    .disconnect = w_disconnect,
    .disks = w_disks,
    .set_mutual_chap_secret = w_set_mutual,
    .destroy = w_destroy,
};

/* Nothing is loaded here: the service starts whether or not the initiator
 * is installed, and each call loads iscsidsc.dll (once) when it needs it. */
int cp_iscsi_host_open_default(cp_iscsi_host *out, cp_error *e)
{
    win_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return cp_error_set(e, CP_E_NOMEM, "out of memory");
    InitializeSRWLock(&c->lock);
    out->ops = &win_ops;
    out->ctx = c;
    return CP_OK;
}
