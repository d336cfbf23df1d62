/* metrics_http_win.h - /metrics over HTTP with Windows' own HTTP Server API
 * (http.sys, httpapi.dll), on a thread of its own. Windows build only.
 *
 * GET (or HEAD) /metrics answers cp_metrics_render()'s text. Every
 * request for the port reaches this process (the strong wildcard
 * http://+:PORT/, see metrics_addr.h) and is answered here: one that
 * arrived on an interface other than the configured one 403; on a loopback
 * address, a Host that names no loopback spelling 400; another path 404;
 * another method 405. The native build serves no HTTP: it only checks the
 * flag (main_posix.c).
 */
#ifndef CP_METRICS_HTTP_WIN_H
#define CP_METRICS_HTTP_WIN_H

#include "metrics/metrics.h"
#include "metrics/metrics_addr.h"
#include "base/status.h"

typedef struct cp_metrics_http cp_metrics_http;

/* Registers http://+:PORT/ with http.sys and starts serving. NULL with
 * e naming the flag, the address and the cause when the address cannot be
 * served (taken by another process, not an address of this machine, ...).
 * m must outlive the server. */
cp_metrics_http *cp_metrics_http_start(cp_metrics *m, const cp_metrics_addr *a, cp_error *e);

/* Stops serving (a scrape in progress finishes; the pending receive is
 * cancelled), joins the thread, unregisters, frees. NULL is fine. */
void cp_metrics_http_stop(cp_metrics_http *h);

#endif
