/* pipealarm_win.h - the Windows sink of pipealarm.h: an Event Log error,
 * and the pipe marked under HKLM\CP_PIPEALARM_REG_KEY for `csi-proxy-cli
 * health`. Windows build only. */
#ifndef CP_PIPEALARM_WIN_H
#define CP_PIPEALARM_WIN_H

#include "service/pipealarm.h"

/* A cp_pipealarm_sink_fn; ctx is the service's cp_eventlog. */
void cp_pipealarm_win_sink(void *ctx, const char *pipe, const char *line);

/* Removes the marks of an earlier run (at start, before the pipes). */
void cp_pipealarm_win_clear(void);

#endif
