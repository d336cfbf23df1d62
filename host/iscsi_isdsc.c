/* iscsi_isdsc.c - see iscsi_isdsc.h. Portable: no Windows header. */
#include "host/iscsi_isdsc.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "base/status.h"

/* The statuses follow winutil_win.h's rule (what the caller can do):
 * the initiator service not running, or the initiator restricted by policy
 * or expired, is FAILED_PRECONDITION; a target or portal the initiator
 * does not know is NOT_FOUND; one it has already is ALREADY_EXISTS; a
 * connection, login or transport failure is UNAVAILABLE (retry later);
 * refused credentials are PERMISSION_DENIED; a secret, user name, name or
 * parameter the initiator refuses is INVALID_ARGUMENT; exhausted resources
 * are RESOURCE_EXHAUSTED. Codes not listed stay UNKNOWN with their number. */
static const cp_isdsc_code codes[] = {
    {0xEFFF0001u, "ISDSC_NON_SPECIFIC_ERROR", "A non specific error occurred", CP_E_UNKNOWN},
    {0xEFFF0002u, "ISDSC_LOGIN_FAILED", "Login failed", CP_E_UNAVAILABLE},
    {0xEFFF0003u, "ISDSC_CONNECTION_FAILED", "Connection failed", CP_E_UNAVAILABLE},
    {0xEFFF0004u, "ISDSC_INITIATOR_NODE_ALREADY_EXISTS", "Initiator node already exists",
     CP_E_ALREADY_EXISTS},
    {0xEFFF0005u, "ISDSC_INITIATOR_NODE_NOT_FOUND", "Initiator node does not exist",
     CP_E_NOT_FOUND},
    {0xEFFF0006u, "ISDSC_TARGET_MOVED_TEMPORARILY", "Target moved temporarily", CP_E_UNAVAILABLE},
    {0xEFFF0007u, "ISDSC_TARGET_MOVED_PERMANENTLY", "Target moved permanently", CP_E_NOT_FOUND},
    {0xEFFF0008u, "ISDSC_INITIATOR_ERROR", "Initiator error", CP_E_UNKNOWN},
    {CP_ISDSC_AUTHENTICATION_FAILURE, "ISDSC_AUTHENTICATION_FAILURE", "Authentication failure",
     CP_E_PERMISSION_DENIED},
    {0xEFFF000Au, "ISDSC_AUTHORIZATION_FAILURE", "Authorization failure", CP_E_PERMISSION_DENIED},
    {CP_ISDSC_NOT_FOUND, "ISDSC_NOT_FOUND", "Target not found", CP_E_NOT_FOUND},
    {0xEFFF000Cu, "ISDSC_TARGET_REMOVED", "The target is removed", CP_E_NOT_FOUND},
    {0xEFFF000Du, "ISDSC_UNSUPPORTED_VERSION", "Unsupported version", CP_E_FAILED_PRECONDITION},
    {0xEFFF000Eu, "ISDSC_TOO_MANY_CONNECTIONS", "Too many connections", CP_E_RESOURCE_EXHAUSTED},
    {0xEFFF000Fu, "ISDSC_MISSING_PARAMETER", "Missing parameter", CP_E_INVALID_ARGUMENT},
    {0xEFFF0012u, "ISDSC_TARGET_ERROR", "Target error", CP_E_UNAVAILABLE},
    {0xEFFF0013u, "ISDSC_SERVICE_UNAVAILABLE", "Service unavailable", CP_E_UNAVAILABLE},
    {0xEFFF0014u, "ISDSC_OUT_OF_RESOURCES", "Out of resources", CP_E_RESOURCE_EXHAUSTED},
    {0xEFFF0015u, "ISDSC_CONNECTION_ALREADY_EXISTS", "Connections already exist on initiator node",
     CP_E_ALREADY_EXISTS},
    {CP_ISDSC_SESSION_ALREADY_EXISTS, "ISDSC_SESSION_ALREADY_EXISTS", "Session already exists",
     CP_E_ALREADY_EXISTS},
    {0xEFFF0017u, "ISDSC_INITIATOR_INSTANCE_NOT_FOUND", "Initiator instance does not exist",
     CP_E_NOT_FOUND},
    {0xEFFF0018u, "ISDSC_TARGET_ALREADY_EXISTS", "Target already exists", CP_E_ALREADY_EXISTS},
    {CP_ISDSC_INVALID_SESSION_ID, "ISDSC_INVALID_SESSION_ID", "The session ID is invalid",
     CP_E_NOT_FOUND},
    {0xEFFF001Eu, "ISDSC_TOO_MANY_SESSIONS", "Too many sessions", CP_E_RESOURCE_EXHAUSTED},
    {0xEFFF001Fu, "ISDSC_SESSION_BUSY", "Session is busy since a request is already in progress",
     CP_E_UNAVAILABLE},
    {0xEFFF0022u, "ISDSC_LOGON_FAILED", "Logon failed", CP_E_UNAVAILABLE},
    {0xEFFF0023u, "ISDSC_SEND_FAILED", "TCP send failed", CP_E_UNAVAILABLE},
    {0xEFFF0024u, "ISDSC_TRANSPORT_ERROR", "TCP transport error", CP_E_UNAVAILABLE},
    {CP_ISDSC_TARGET_NOT_FOUND, "ISDSC_TARGET_NOT_FOUND",
     "The target name is not found or is marked as hidden from login", CP_E_NOT_FOUND},
    {0xEFFF002Au, "ISDSC_LOGIN_USER_INFO_BAD", "One or more login parameters are invalid",
     CP_E_INVALID_ARGUMENT},
    {0xEFFF002Bu, "ISDSC_TARGET_MAPPING_EXISTS", "Given target mapping already exists",
     CP_E_ALREADY_EXISTS},
    {0xEFFF002Du, "ISDSC_INVALID_PORT_NUMBER", "The port number passed is not valid",
     CP_E_INVALID_ARGUMENT},
    {CP_ISDSC_TARGET_PORTAL_ALREADY_EXISTS, "ISDSC_TARGET_PORTAL_ALREADY_EXISTS",
     "The target portal already exists", CP_E_ALREADY_EXISTS},
    {0xEFFF0033u, "ISDSC_TARGET_ADDRESS_ALREADY_EXISTS", "The target address already exists",
     CP_E_ALREADY_EXISTS},
    {0xEFFF0037u, "ISDSC_REQUEST_NOT_SUPPORTED", "The iSCSI request is not supported",
     CP_E_UNIMPLEMENTED},
    {0xEFFF0038u, "ISDSC_TARGET_OUT_OF_RESORCES", "The target is out of resources",
     CP_E_RESOURCE_EXHAUSTED},
    {0xEFFF0039u, "ISDSC_SERVICE_DID_NOT_RESPOND", "The iSCSI initiator service did not respond",
     CP_E_UNAVAILABLE},
    {CP_ISDSC_SERVICE_NOT_RUNNING, "ISDSC_SERVICE_NOT_RUNNING",
     "The iSCSI initiator service is not running", CP_E_FAILED_PRECONDITION},
    {CP_ISDSC_TARGET_ALREADY_LOGGED_IN, "ISDSC_TARGET_ALREADY_LOGGED_IN",
     "The target has already been logged in via an iSCSI session", CP_E_ALREADY_EXISTS},
    {0xEFFF0040u, "ISDSC_DEVICE_BUSY_ON_SESSION", "A device on the session is in use",
     CP_E_UNAVAILABLE},
    {0xEFFF0041u, "ISDSC_COULD_NOT_SAVE_PERSISTENT_LOGIN_DATA",
     "Could not save persistent login information", CP_E_UNKNOWN},
    {0xEFFF0042u, "ISDSC_COULD_NOT_REMOVE_PERSISTENT_LOGIN_DATA",
     "Could not remove persistent login information", CP_E_UNKNOWN},
    {CP_ISDSC_PORTAL_NOT_FOUND, "ISDSC_PORTAL_NOT_FOUND", "The portal was not found",
     CP_E_NOT_FOUND},
    {0xEFFF0044u, "ISDSC_INITIATOR_NOT_FOUND", "The initiator was not found", CP_E_NOT_FOUND},
    {0xEFFF0045u, "ISDSC_DISCOVERY_MECHANISM_NOT_FOUND", "The discovery mechanism was not found",
     CP_E_NOT_FOUND},
    {0xEFFF0047u, "ISDSC_PERSISTENT_LOGIN_TIMEOUT", "The persistent login timed out",
     CP_E_DEADLINE_EXCEEDED},
    {CP_ISDSC_SHORT_CHAP_SECRET, "ISDSC_SHORT_CHAP_SECRET",
     "The CHAP secret is shorter than the initiator accepts (12 to 16 bytes)",
     CP_E_INVALID_ARGUMENT},
    {0xEFFF0049u, "ISDSC_EVALUATION_PEROID_EXPIRED", "The evaluation period has expired",
     CP_E_FAILED_PRECONDITION},
    {0xEFFF004Au, "ISDSC_INVALID_CHAP_SECRET",
     "The CHAP secret is not valid (it must be 12 to 16 bytes)", CP_E_INVALID_ARGUMENT},
    {0xEFFF004Bu, "ISDSC_INVALID_TARGET_CHAP_SECRET",
     "The target CHAP secret is not valid (it must be 12 to 16 bytes)", CP_E_INVALID_ARGUMENT},
    {0xEFFF004Cu, "ISDSC_INVALID_INITIATOR_CHAP_SECRET",
     "The initiator CHAP secret is not valid (it must be 12 to 16 bytes)", CP_E_INVALID_ARGUMENT},
    {0xEFFF004Du, "ISDSC_INVALID_CHAP_USER_NAME", "The CHAP user name is not valid",
     CP_E_INVALID_ARGUMENT},
    {0xEFFF004Eu, "ISDSC_INVALID_LOGON_AUTH_TYPE", "The logon authentication type is not valid",
     CP_E_INVALID_ARGUMENT},
    {0xEFFF0051u, "ISDSC_INVALID_ISCSI_NAME", "The iSCSI name is not valid", CP_E_INVALID_ARGUMENT},
    {0xEFFF0054u, "ISDSC_BUFFER_TOO_SMALL",
     "The buffer given for processing the request is too small", CP_E_RESOURCE_EXHAUSTED},
    {0xEFFF0056u, "ISDSC_INVALID_PARAMETER", "A parameter is not valid", CP_E_INVALID_ARGUMENT},
    {0xEFFF005Fu, "ISDSC_DNS_NAME_UNRESOLVED", "The DNS name could not be resolved",
     CP_E_UNAVAILABLE},
    {0xEFFF0060u, "ISDSC_NO_CONNECTION_AVAILABLE", "No connection is available to send the command",
     CP_E_UNAVAILABLE},
    {0xEFFF0065u, "ISDSC_RESTRICTED_BY_GROUP_POLICY", "The operation is restricted by group policy",
     CP_E_FAILED_PRECONDITION},
};

const cp_isdsc_code *cp_isdsc_lookup(uint32_t code)
{
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (codes[i].code == code)
            return &codes[i];
    return NULL;
}

bool cp_isdsc_name_eq(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

bool cp_isdsc_mechanism_is_portal(const char *mech, const char *address, uint32_t port)
{
    static const char prefix[] = "SendTargets:";
    size_t n = sizeof(prefix) - 1;
    if (mech == NULL || address == NULL || address[0] == '\0')
        return false;
    for (size_t i = 0; i < n; i++) /* the initiator's own spelling, any case */
        if (tolower((unsigned char)mech[i]) != tolower((unsigned char)prefix[i]))
            return false;
    const char *p = mech + n;
    if (*p == '*')
        p++;
    size_t alen = strlen(address);
    for (size_t i = 0; i < alen; i++)
        if (p[i] == '\0' || tolower((unsigned char)p[i]) != tolower((unsigned char)address[i]))
            return false;
    p += alen;
    if (*p != ' ')
        return false;
    p++;
    if (!isdigit((unsigned char)*p))
        return false;
    uint32_t v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10u + (uint32_t)(*p - '0');
        if (v > 65535u)
            return false;
    }
    return v == port && (*p == '\0' || *p == ' ');
}
