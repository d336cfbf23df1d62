/* install_win.h - `csi-proxy.exe install [flags]` and `csi-proxy.exe
 * uninstall`: the service "csiproxy" (upstream's name), created or updated
 * with automatic start, restart on failure (reset 0, restart after 10 s,
 * also on a non-crash failure exit), a description, a preshutdown timeout
 * covering the drain, and the Event Log source "csi-proxy". Both are
 * idempotent and refuse clearly when the process is not an elevated
 * administrator. Windows build only. */
#ifndef CP_INSTALL_WIN_H
#define CP_INSTALL_WIN_H

#include <stddef.h>

#define CP_SERVICE_NAME L"csiproxy"
#define CP_SERVICE_DISPLAY L"CSI Proxy"

/* argv[0..argc) are the flags after "install"; they are validated with
 * the service's own flag parser (and -config, if given, is loaded), then
 * written into the binPath after -windows-service. Prints what it did on
 * stdout, errors on stderr. Returns the process exit code: 0 done, 1
 * refused or failed, 2 bad flags. */
int cp_install(int argc, char **argv);

/* Stops the service if it runs (waiting up to wait_ms), deletes it and the
 * event source. Returns 0 (also when it was not installed) or 1. */
int cp_uninstall(int argc, char **argv);

#endif
