/* iscsidsc_win.h - the iSCSI initiator API (iscsidsc.dll) as
 * iscsi_win.c uses it, loaded at run time. Windows build only.
 *
 * The structures and prototypes are declared here from Microsoft's
 * iscsidsc.h reference (learn.microsoft.com/windows/win32/api/iscsidsc/),
 * not taken from mingw-w64's iscsidsc.h, which differs from it where it
 * matters: ISCSI_SESSION_INFOW's names are WCHAR there (PWSTR in the
 * reference), PERSISTENT_ISCSI_LOGIN_INFOW's TargetName is CHAR,
 * ISCSI_DEVICE_ON_SESSION follows TCHAR and GetDevicesForIScsiSessionW is
 * missing. Every function returns an ISDSC_STATUS: ERROR_SUCCESS, a Win32
 * error code or an ISDSC_* code (iscsi_isdsc.h).
 *
 * The DLL is not a static import of csi-proxy.exe (test/exe/
 * check_imports.sh checks that): cp_isdsc_load() loads it from system32
 * only, so the service starts, and its other groups serve, where the
 * initiator is not installed. */
#ifndef CP_WINAPI_ISCSIDSC_WIN32_H
#define CP_WINAPI_ISCSIDSC_WIN32_H

#include "base/winutil_win.h"

#include <ntddscsi.h> /* SCSI_ADDRESS */
#include <winioctl.h> /* STORAGE_DEVICE_NUMBER, FILE_DEVICE_DISK */

#define CP_ISCSI_MAX_NAME_LEN 223                /* MAX_ISCSI_NAME_LEN */
#define CP_ISCSI_MAX_HBANAME_LEN 256             /* MAX_ISCSI_HBANAME_LEN */
#define CP_ISCSI_MAX_PORTAL_NAME 256             /* MAX_ISCSI_PORTAL_NAME_LEN */
#define CP_ISCSI_MAX_PORTAL_ADDR 256             /* MAX_ISCSI_PORTAL_ADDRESS_LEN */
#define CP_ISCSI_ALL_INITIATOR_PORTS ((ULONG)-1) /* ISCSI_ALL_INITIATOR_PORTS */
#define CP_ISCSI_ANY_INITIATOR_PORT ((ULONG)-1)  /* ISCSI_ANY_INITIATOR_PORT */

/* ISCSI_LOGIN_OPTIONS.InformationSpecified bits and AuthType values. */
#define CP_ISCSI_LOGIN_OPTIONS_USERNAME 0x20u
#define CP_ISCSI_LOGIN_OPTIONS_PASSWORD 0x40u
#define CP_ISCSI_LOGIN_OPTIONS_AUTH_TYPE 0x80u
#define CP_ISCSI_NO_AUTH_TYPE 0
#define CP_ISCSI_CHAP_AUTH_TYPE 1
#define CP_ISCSI_MUTUAL_CHAP_AUTH_TYPE 2

/* TARGET_INFORMATION_CLASS.DiscoveryMechanisms */
#define CP_ISCSI_INFO_DISCOVERY_MECHANISMS 2

typedef struct cp_iscsi_session_id { /* ISCSI_UNIQUE_SESSION_ID */
    ULONGLONG AdapterUnique;
    ULONGLONG AdapterSpecific;
} cp_iscsi_session_id;

typedef struct cp_iscsi_login_options { /* ISCSI_LOGIN_OPTIONS */
    ULONG Version;                      /* ISCSI_LOGIN_OPTIONS_VERSION, 0 */
    ULONG InformationSpecified;
    ULONG LoginFlags;
    ULONG AuthType; /* ISCSI_AUTH_TYPES */
    ULONG HeaderDigest;
    ULONG DataDigest;
    ULONG MaximumConnections;
    ULONG DefaultTime2Wait;
    ULONG DefaultTime2Retain;
    ULONG UsernameLength;
    ULONG PasswordLength;
    PUCHAR Username;
    PUCHAR Password;
} cp_iscsi_login_options;

typedef struct cp_iscsi_target_portal { /* ISCSI_TARGET_PORTALW */
    WCHAR SymbolicName[CP_ISCSI_MAX_PORTAL_NAME];
    WCHAR Address[CP_ISCSI_MAX_PORTAL_ADDR];
    USHORT Socket;
} cp_iscsi_target_portal;

typedef struct cp_iscsi_portal_info_ex { /* ISCSI_TARGET_PORTAL_INFO_EXW */
    WCHAR InitiatorName[CP_ISCSI_MAX_HBANAME_LEN];
    ULONG InitiatorPortNumber;
    WCHAR SymbolicName[CP_ISCSI_MAX_PORTAL_NAME];
    WCHAR Address[CP_ISCSI_MAX_PORTAL_ADDR];
    USHORT Socket;
    ULONGLONG SecurityFlags;
    cp_iscsi_login_options LoginOptions;
} cp_iscsi_portal_info_ex;

typedef struct cp_iscsi_connection_info { /* ISCSI_CONNECTION_INFOW */
    cp_iscsi_session_id ConnectionId;
    PWSTR InitiatorAddress;
    PWSTR TargetAddress;
    USHORT InitiatorSocket;
    USHORT TargetSocket;
    UCHAR CID[2];
} cp_iscsi_connection_info;

typedef struct cp_iscsi_session_info { /* ISCSI_SESSION_INFOW */
    cp_iscsi_session_id SessionId;
    PWSTR InitiatorName;
    PWSTR TargetNodeName;
    PWSTR TargetName;
    UCHAR ISID[6];
    UCHAR TSID[2];
    ULONG ConnectionCount;
    cp_iscsi_connection_info *Connections;
} cp_iscsi_session_info;

typedef struct cp_iscsi_device_on_session { /* ISCSI_DEVICE_ON_SESSIONW */
    WCHAR InitiatorName[CP_ISCSI_MAX_HBANAME_LEN];
    WCHAR TargetName[CP_ISCSI_MAX_NAME_LEN + 1];
    SCSI_ADDRESS ScsiAddress;
    GUID DeviceInterfaceType;
    WCHAR DeviceInterfaceName[MAX_PATH];
    WCHAR LegacyName[MAX_PATH];
    STORAGE_DEVICE_NUMBER StorageDeviceNumber;
    DWORD DeviceInstance;
} cp_iscsi_device_on_session;

typedef struct cp_iscsi_persistent_login { /* PERSISTENT_ISCSI_LOGIN_INFOW */
    WCHAR TargetName[CP_ISCSI_MAX_NAME_LEN + 1];
    BOOLEAN IsInformationalSession;
    WCHAR InitiatorInstance[CP_ISCSI_MAX_HBANAME_LEN];
    ULONG InitiatorPortNumber;
    cp_iscsi_target_portal TargetPortal;
    ULONGLONG SecurityFlags;
    void *Mappings; /* PISCSI_TARGET_MAPPINGW, not read */
    cp_iscsi_login_options LoginOptions;
} cp_iscsi_persistent_login;

/* The functions, as the reference declares them (ISDSC_API is WINAPI). */
typedef ULONG(WINAPI *cp_fn_add_portal)(PWSTR initiator, ULONG port, cp_iscsi_login_options *opts,
                                        ULONGLONG security, cp_iscsi_target_portal *portal);
typedef ULONG(WINAPI *cp_fn_remove_portal)(PWSTR initiator, ULONG port,
                                           cp_iscsi_target_portal *portal);
typedef ULONG(WINAPI *cp_fn_report_portals_ex)(PULONG count, PULONG size,
                                               cp_iscsi_portal_info_ex *info);
typedef ULONG(WINAPI *cp_fn_refresh_portal)(PWSTR initiator, ULONG port,
                                            cp_iscsi_target_portal *portal);
typedef ULONG(WINAPI *cp_fn_report_targets)(BOOLEAN force, PULONG size, PWCHAR buffer);
typedef ULONG(WINAPI *cp_fn_target_info)(PWSTR target, PWSTR mechanism, int info_class, PULONG size,
                                         PVOID buffer);
typedef ULONG(WINAPI *cp_fn_login)(PWSTR target, BOOLEAN informational, PWSTR initiator, ULONG port,
                                   cp_iscsi_target_portal *portal, ULONGLONG security,
                                   void *mappings, cp_iscsi_login_options *opts, ULONG key_size,
                                   PCHAR key, BOOLEAN persistent, cp_iscsi_session_id *session,
                                   cp_iscsi_session_id *connection);
typedef ULONG(WINAPI *cp_fn_logout)(cp_iscsi_session_id *session);
typedef ULONG(WINAPI *cp_fn_session_list)(PULONG size, PULONG count, cp_iscsi_session_info *info);
typedef ULONG(WINAPI *cp_fn_devices)(cp_iscsi_session_id *session, PULONG count,
                                     cp_iscsi_device_on_session *devices);
typedef ULONG(WINAPI *cp_fn_set_chap)(ULONG length, PUCHAR secret);
typedef ULONG(WINAPI *cp_fn_report_persistent)(PULONG count, cp_iscsi_persistent_login *info,
                                               PULONG size);
typedef ULONG(WINAPI *cp_fn_remove_persistent)(PWSTR initiator, ULONG port, PWSTR target,
                                               cp_iscsi_target_portal *portal);

/* The entry points; NULL where this system's DLL lacks one. */
typedef struct cp_isdsc {
    HMODULE dll;
    cp_fn_add_portal AddIScsiSendTargetPortalW;
    cp_fn_remove_portal RemoveIScsiSendTargetPortalW;
    cp_fn_report_portals_ex ReportIScsiSendTargetPortalsExW;
    cp_fn_refresh_portal RefreshIScsiSendTargetPortalW;
    cp_fn_report_targets ReportIScsiTargetsW;
    cp_fn_target_info GetIScsiTargetInformationW;
    cp_fn_login LoginIScsiTargetW;
    cp_fn_logout LogoutIScsiTarget;
    cp_fn_session_list GetIScsiSessionListW;
    cp_fn_devices GetDevicesForIScsiSessionW;
    cp_fn_set_chap SetIScsiInitiatorCHAPSharedSecret;
    cp_fn_report_persistent ReportIScsiPersistentLoginsW;
    cp_fn_remove_persistent RemoveIScsiPersistentTargetW;
} cp_isdsc;

/* Loads iscsidsc.dll from system32 (once; later calls return the same
 * table) into *out. CP_E_FAILED_PRECONDITION naming the DLL when it is not
 * there; the thread-safe first load is the caller's (iscsi_win.c holds a
 * lock). */
int cp_isdsc_load(cp_isdsc *out, cp_error *e);

/* CP_OK when fn is there, else CP_E_FAILED_PRECONDITION naming what: "the
 * iSCSI initiator API (iscsidsc.dll in system32) has no <name>". */
int cp_isdsc_need(const void *fn, const char *name, cp_error *e);

/* e for an ISDSC_STATUS rc of api about object: cp_win_error's form, and
 * for the codes that mean the initiator service (MSiSCSI) is not there to
 * answer (ISDSC_SERVICE_NOT_RUNNING; RPC_S_SERVER_UNAVAILABLE and
 * EPT_S_NOT_REGISTERED from the DLL's call into the service),
 * FAILED_PRECONDITION saying so. */
int cp_isdsc_error(cp_error *e, ULONG rc, const char *api, const char *object);

/* The cp_status of an ISDSC_STATUS: the ISDSC_* table (iscsi_isdsc.h),
 * else the Win32 map (cp_win_status). */
int cp_isdsc_status(ULONG rc);

/* Frees what cp_isdsc_load loaded. */
void cp_isdsc_unload(cp_isdsc *d);

#endif
