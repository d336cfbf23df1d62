/* eventlog_win.h - audit records to the Windows Event Log (Application
 * log, source "csi-proxy", event 1, the record as its only string; the
 * message table is linked into csi-proxy.exe from service/messages.mc and
 * registered by `csi-proxy.exe install`). Under Wine, ReportEventW
 * succeeds and does nothing. Windows build only. */
#ifndef CP_EVENTLOG_WIN_H
#define CP_EVENTLOG_WIN_H

#include <stdbool.h>

#define CP_EVENTLOG_SOURCE L"csi-proxy"
#define CP_EVENTLOG_KEY L"SYSTEM\\CurrentControlSet\\Services\\EventLog\\Application\\csi-proxy"

typedef struct cp_eventlog cp_eventlog;

/* The sink; NULL when out of memory. The event source is registered with
 * the first record, not here: registering is a call into the Event Log
 * service, which no pipe needs to start. When Windows
 * refuses it then, records are dropped from the Event Log (logged once;
 * each record is in the service's log anyway). */
cp_eventlog *cp_eventlog_open(void);

/* A cp_audit_sink_fn: ctx is the cp_eventlog. Thread-safe; the first call
 * registers the source (once, whichever thread comes first; the others
 * wait for it), so no record is dropped for being early. */
void cp_eventlog_report(void *ctx, bool failure, const char *line);

/* The same as an error record (EVENTLOG_ERROR_TYPE): an attack seen
 * (pipealarm.h). */
void cp_eventlog_error(cp_eventlog *ev, const char *line);

void cp_eventlog_close(cp_eventlog *ev);

#endif
