/* iscsi_isdsc.h - what iscsi_win.c needs to know about the iSCSI
 * initiator API's answers that does not need Windows, so the native unit
 * tests check it:
 *
 *   - the ISDSC_* status codes (iscsierr.h) the API returns besides Win32
 *     error codes: their names, Microsoft's text for each, and the
 *     cp_status each maps to. iscsidsc_win.c's cp_isdsc_error() and
 *     cp_isdsc_status() consult this table before the Win32 error map;
 *   - the DiscoveryMechanisms strings GetIScsiTargetInformationW reports
 *     for a target ("SendTargets:*10.0.0.5 0003260 ROOT\ISCSIPRT\0000_0 "),
 *     and whether one names a given send-target portal.
 *
 * Sources: "iSCSI Error Codes and descriptions from iSCSIErr.h" and
 * "ISCSI_STATUS_QUALIFIERS" (learn.microsoft.com, windows-hardware/drivers/
 * storage/iscsi-status-qualifiers) for the codes; the DiscoveryMechanism
 * property of MSiSCSIInitiator_TargetClass as Get-IscsiTarget and iscsicli
 * show it for the string form. */
#ifndef CP_WINAPI_ISCSI_ISDSC_H
#define CP_WINAPI_ISCSI_ISDSC_H

#include <stdbool.h>
#include <stdint.h>

/* The codes iscsi_win.c tests for by name. */
#define CP_ISDSC_NOT_FOUND 0xEFFF000Bu
#define CP_ISDSC_SESSION_ALREADY_EXISTS 0xEFFF0016u
#define CP_ISDSC_INVALID_SESSION_ID 0xEFFF001Cu
#define CP_ISDSC_TARGET_NOT_FOUND 0xEFFF0029u
#define CP_ISDSC_TARGET_PORTAL_ALREADY_EXISTS 0xEFFF0032u
#define CP_ISDSC_SERVICE_NOT_RUNNING 0xEFFF003Eu
#define CP_ISDSC_TARGET_ALREADY_LOGGED_IN 0xEFFF003Fu
#define CP_ISDSC_PORTAL_NOT_FOUND 0xEFFF0043u
#define CP_ISDSC_AUTHENTICATION_FAILURE 0xEFFF0009u
#define CP_ISDSC_CONNECTION_FAILED 0xEFFF0003u
#define CP_ISDSC_SHORT_CHAP_SECRET 0xAFFF0048u

typedef struct cp_isdsc_code {
    uint32_t code;
    const char *name; /* "ISDSC_TARGET_NOT_FOUND" */
    const char *text; /* Microsoft's text, no final period */
    int status;       /* a negative cp_status */
} cp_isdsc_code;

/* The table entry of an ISDSC_* code, or NULL when code is not one. */
const cp_isdsc_code *cp_isdsc_lookup(uint32_t code);

/* True when mech, one DiscoveryMechanisms string (UTF-8), says the target
 * was found through the SendTargets portal address:port: "SendTargets:"
 * then an optional '*', the address (compared without regard to ASCII
 * case), one space and the port in decimal (leading zeros allowed), then
 * the end or a space. */
bool cp_isdsc_mechanism_is_portal(const char *mech, const char *address, uint32_t port);

/* ASCII case-insensitive equality: IQNs, EUI and host names. */
bool cp_isdsc_name_eq(const char *a, const char *b);

#endif
