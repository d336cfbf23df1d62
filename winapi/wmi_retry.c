/* wmi_retry.c - see wmi_retry.h. Portable: no Windows header. */
#include "wmi_retry.h"

#include <stddef.h>

/* The HRESULTs a call on a WMI proxy (or a new ConnectServer) answers when
 * the connection to winmgmt is gone or going. Sources, Microsoft Learn:
 * "COM Error Codes (RPC, ...)" for RPC_E_*, "COM Error Codes (COM, ...)"
 * for CO_E_*, "RPC Return Values" and "System Error Codes (1700-3999)" for
 * the RPC_S_* and EPT_S_* codes, which COM returns as HRESULT_FROM_WIN32
 * (0x8007xxxx), and "WMI Error Constants" for WBEM_E_*. A code whose text
 * says the call "did not execute", or that no connection was made, is
 * NOT_RUN; any other is MAYBE_RUN. */
static const struct {
    uint32_t hr;
    const char *name;
    cp_wmi_hr_class cls;
} lost[] = {
    /* "The object invoked has disconnected from its clients." */
    {0x80010108u, "RPC_E_DISCONNECTED", CP_WMI_HR_LOST_MAYBE_RUN},
    /* "The callee ... is not available and disappeared; all connections
     * are invalid. The call may have executed." */
    {0x80010007u, "RPC_E_SERVER_DIED", CP_WMI_HR_LOST_MAYBE_RUN},
    /* The same, "The call did not execute." */
    {0x80010012u, "RPC_E_SERVER_DIED_DNE", CP_WMI_HR_LOST_NOT_RUN},
    /* "The connection terminated or is in a bogus state and can no longer
     * be used." */
    {0x80010006u, "RPC_E_CONNECTION_TERMINATED", CP_WMI_HR_LOST_MAYBE_RUN},
    /* "Object is not connected to server": the proxy sent nothing. */
    {0x800401FDu, "CO_E_OBJNOTCONNECTED", CP_WMI_HR_LOST_NOT_RUN},
    /* "Server execution failed": winmgmt did not start for a new
     * connection. */
    {0x80080005u, "CO_E_SERVER_EXEC_FAILURE", CP_WMI_HR_LOST_NOT_RUN},
    /* RPC_S_SERVER_UNAVAILABLE (1722) "The RPC server is unavailable." */
    {0x800706BAu, "RPC_S_SERVER_UNAVAILABLE", CP_WMI_HR_LOST_NOT_RUN},
    /* RPC_S_CALL_FAILED (1726) "The remote procedure call failed." */
    {0x800706BEu, "RPC_S_CALL_FAILED", CP_WMI_HR_LOST_MAYBE_RUN},
    /* RPC_S_CALL_FAILED_DNE (1727) "The remote procedure call failed and
     * did not execute." */
    {0x800706BFu, "RPC_S_CALL_FAILED_DNE", CP_WMI_HR_LOST_NOT_RUN},
    /* EPT_S_NOT_REGISTERED (1753) "There are no more endpoints available
     * from the endpoint mapper.": the server is not listening. */
    {0x800706D9u, "EPT_S_NOT_REGISTERED", CP_WMI_HR_LOST_NOT_RUN},
    /* RPC_S_COMM_FAILURE (1820) "Unable to communicate with the server." */
    {0x8007071Cu, "RPC_S_COMM_FAILURE", CP_WMI_HR_LOST_MAYBE_RUN},
    /* "A networking error that prevents normal operation has occurred." */
    {0x80041015u, "WBEM_E_TRANSPORT_FAILURE", CP_WMI_HR_LOST_MAYBE_RUN},
    /* The WMI service is shutting down: this connection ends with it. */
    {0x80041033u, "WBEM_E_SHUTTING_DOWN", CP_WMI_HR_LOST_MAYBE_RUN},
};

cp_wmi_hr_class cp_wmi_classify(uint32_t hr)
{
    for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
        if (lost[i].hr == hr)
            return lost[i].cls;
    return CP_WMI_HR_OTHER;
}

const char *cp_wmi_hr_name(uint32_t hr)
{
    for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
        if (lost[i].hr == hr)
            return lost[i].name;
    return NULL;
}

int cp_wmi_call(cp_wmi_attempt_fn attempt, void *arg, cp_wmi_drop_fn drop, void *conn,
                cp_wmi_retry mode, cp_error *e)
{
    cp_wmi_failure f = {0, false};
    int rc = attempt(arg, &f, e);
    if (rc == CP_OK)
        return CP_OK;
    cp_wmi_hr_class cls = cp_wmi_classify(f.hr);
    if (cls == CP_WMI_HR_OTHER)
        return rc;
    drop(conn);
    if (mode == CP_WMI_RETRY_IF_NOT_RUN && f.effect && cls != CP_WMI_HR_LOST_NOT_RUN)
        return rc;
    f = (cp_wmi_failure){0, false};
    rc = attempt(arg, &f, e);
    if (rc != CP_OK && cp_wmi_classify(f.hr) != CP_WMI_HR_OTHER)
        drop(conn);
    return rc;
}
