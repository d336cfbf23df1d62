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

/* Registers the event source. NULL when out of memory; when Windows
 * refuses, a cp_eventlog that drops records (logged once). */
cp_eventlog *cp_eventlog_open(void);

/* A cp_audit_sink_fn: ctx is the cp_eventlog. Thread-safe. */
void cp_eventlog_report(void *ctx, bool failure, const char *line);

void cp_eventlog_close(cp_eventlog *ev);

#endif
