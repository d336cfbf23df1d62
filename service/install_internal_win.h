/* install_internal_win.h - what install_win.c (a new service) and
 * upgrade_win.c (taking over an existing one) share. Windows build only. */
#ifndef CP_INSTALL_INTERNAL_WIN_H
#define CP_INSTALL_INTERNAL_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdint.h>

/* Prints "csi-proxy: WHAT: <system text> (error N)" on stderr; returns 1. */
int cp_install_report(const char *what, DWORD err);

/* Checks flags as the service would read them (Go flag syntax, absolute
 * paths, a -config that loads); sets *drain_ms from that config. Returns
 * 0, 1 (the config file is refused) or 2 (bad flags), having said why. */
int cp_install_validate(int argc, char **argv, int64_t *drain_ms);

/* *out = "<exe>" -windows-service <flags...> (malloc'd). 0 or 1. */
int cp_install_bin_path(const wchar_t *exe, int argc, char **argv, wchar_t **out);

/* Description, failure actions, preshutdown timeout. 0 or 1. */
int cp_install_configure(SC_HANDLE svc, int64_t drain_ms);

/* The Event Log source "csi-proxy", its message file exe. 0 or 1. */
int cp_install_event_source(const wchar_t *exe);

/* Polls until the service reports STOPPED (true) or wait_ms pass. */
bool cp_install_wait_stopped(SC_HANDLE svc, DWORD wait_ms);

/* `install` where the service exists already (upgrade_win.c): svc is open
 * with SERVICE_ALL_ACCESS, self is this exe's path, argv the flags given
 * (argc 0: keep the service's own). Returns the exit code. */
int cp_upgrade(SC_HANDLE svc, const wchar_t *self, int argc, char **argv);

#endif
