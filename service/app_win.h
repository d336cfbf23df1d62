/* app_win.h - the running service: groups, worker pool, pipe security,
 * caller authorization, audit trail and the named-pipe transport, built
 * from the effective settings (flags over the config file). main_win.c
 * drives it from the console or from the SCM (scm_win.h). Windows build
 * only. */
#ifndef CP_APP_WIN_H
#define CP_APP_WIN_H

#include <stdint.h>

#include "base/status.h"
#include "service/config.h"
#include "service/flags.h"

typedef struct cp_app cp_app;

/* f and c must outlive the app. NULL on out-of-memory. */
cp_app *cp_app_new(const cp_flags *f, const cp_config *c);

/* Builds everything and creates every pipe. CP_OK, or a status with e
 * saying what is wrong (a config line, a pipe another instance owns, ...).
 * ctx is the cp_app (the signature is cp_scm_app's). */
int cp_app_start(void *ctx, cp_error *e);

/* Serves until stopped; CP_OK or a status. */
int cp_app_run(void *ctx);

/* Thread-safe; may come before start. Stops accepting and drains calls in
 * flight for up to drain_ms. */
void cp_app_stop(void *ctx, int64_t drain_ms);

/* The configured drain deadline (limits.drainTimeout). */
int64_t cp_app_drain_ms(const cp_app *a);

/* Tears down what start built; safe after a failed start. */
void cp_app_free(cp_app *a);

#endif
