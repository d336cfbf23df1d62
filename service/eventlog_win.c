/* eventlog_win.c - see eventlog_win.h. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdlib.h>

#include "../winapi/winutil_win32.h"
#include "eventlog_win.h"
#include "log.h"

#define CP_MSG_TEXT 1 /* service/messages.mc: "%1" */

struct cp_eventlog {
    HANDLE h; /* NULL: records are dropped */
};

cp_eventlog *cp_eventlog_open(void)
{
    cp_eventlog *ev = calloc(1, sizeof(*ev));
    if (ev == NULL)
        return NULL;
    ev->h = RegisterEventSourceW(NULL, CP_EVENTLOG_SOURCE);
    if (ev->h == NULL) {
        DWORD err = GetLastError();
        char why[256];
        CP_LOG_WARN("RegisterEventSource(csi-proxy): %s (error %lu); audit records go to the log "
                    "only",
                    cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    }
    return ev;
}

void cp_eventlog_report(void *ctx, bool failure, const char *line)
{
    cp_eventlog *ev = ctx;
    if (ev == NULL || ev->h == NULL)
        return;
    wchar_t *w = cp_win_utf8_to_wide(line);
    if (w == NULL)
        return;
    LPCWSTR strings[1] = {w};
    WORD type = failure ? EVENTLOG_WARNING_TYPE : EVENTLOG_INFORMATION_TYPE;
    ReportEventW(ev->h, type, 0, CP_MSG_TEXT, NULL, 1, 0, strings, NULL);
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
