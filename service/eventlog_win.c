/* eventlog_win.c - see eventlog_win.h. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "service/eventlog_win.h"
#include "base/log.h"
#include "base/logesc.h"

#define CP_MSG_TEXT 1              /* service/messages.mc: "%1" */
#define CP_EVENTLOG_LINE_MAX 16384 /* an audit record, escaped */

struct cp_eventlog {
    INIT_ONCE once; /* RegisterEventSourceW, with the first record */
    HANDLE h;       /* NULL: not registered (yet, or refused: records are dropped) */
};

cp_eventlog *cp_eventlog_open(void)
{
    cp_eventlog *ev = calloc(1, sizeof(*ev));
    if (ev != NULL)
        InitOnceInitialize(&ev->once);
    return ev;
}

/* The InitOnceExecuteOnce callback ("InitOnceExecuteOnce function",
 * learn.microsoft.com/windows/win32/api/synchapi/nf-synchapi-initonceexecuteonce:
 * one thread runs it, the others block until it returned). Returns TRUE
 * either way: a refusal is final, as it was when this ran at start. */
static BOOL CALLBACK register_source(PINIT_ONCE once, PVOID param, PVOID *ctx)
{
    (void)once;
    (void)ctx;
    cp_eventlog *ev = param;
    ev->h = RegisterEventSourceW(NULL, CP_EVENTLOG_SOURCE);
    if (ev->h == NULL) {
        DWORD err = GetLastError();
        char why[256];
        CP_LOG_WARN("RegisterEventSource(csi-proxy): %s (error %lu); audit records go to the log "
                    "only",
                    cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    return TRUE;
}

static void report(cp_eventlog *ev, WORD type, const char *line);

void cp_eventlog_report(void *ctx, bool failure, const char *line)
{
    report(ctx, failure ? EVENTLOG_WARNING_TYPE : EVENTLOG_INFORMATION_TYPE, line);
}

void cp_eventlog_error(cp_eventlog *ev, const char *line)
{
    report(ev, EVENTLOG_ERROR_TYPE, line);
}

/* "ReportEventW function (winbase.h)", Microsoft Learn: wType
 * EVENTLOG_ERROR_TYPE, EVENTLOG_WARNING_TYPE or
 * EVENTLOG_INFORMATION_TYPE. */
static void report(cp_eventlog *ev, WORD type, const char *line)
{
    if (ev == NULL)
        return;
    InitOnceExecuteOnce(&ev->once, register_source, ev, NULL);
    if (ev->h == NULL)
        return;
    /* Never drop a record silently: the audit made it valid UTF-8; should
     * the strict conversion still fail, write it with U+FFFD for what
     * cannot be converted, and say so in the log (which has the record). */
    /* Escaped here too, so that no writer can forget it (logesc.h);
     * what the audit escaped already passes unchanged. */
    char esc[CP_EVENTLOG_LINE_MAX];
    cp_logesc(line, strlen(line), esc, sizeof(esc));
    line = esc;
    wchar_t *w = cp_win_utf8_to_wide(line);
    if (w == NULL) {
        int n = MultiByteToWideChar(CP_UTF8, 0, line, -1, NULL, 0);
        w = n > 0 ? malloc((size_t)n * sizeof(*w)) : NULL;
        if (w == NULL || MultiByteToWideChar(CP_UTF8, 0, line, -1, w, n) != n) {
            CP_LOG_ERROR("audit record not written to the Event Log: cannot convert it to "
                         "UTF-16 (error %lu); the record is in this log",
                         (unsigned long)GetLastError());
            free(w);
            return;
        }
        CP_LOG_WARN("audit record is not valid UTF-8: written to the Event Log with "
                    "replacement characters");
    }
    LPCWSTR strings[1] = {w};
    if (!ReportEventW(ev->h, type, 0, CP_MSG_TEXT, NULL, 1, 0, strings, NULL)) {
        DWORD err = GetLastError();
        char why[256];
        CP_LOG_ERROR("audit record not written to the Event Log: ReportEventW: %s (error %lu); "
                     "the record is in this log",
                     cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    free(w);
}

void cp_eventlog_close(cp_eventlog *ev)
{
    if (ev == NULL)
        return;
    if (ev->h != NULL)
        DeregisterEventSource(ev->h);
    free(ev);
}
