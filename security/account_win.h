/* account_win.h - account names in the config file (allowedCallers) to
 * SIDs with LookupAccountNameW, for names that are neither SID strings
 * nor in sid.h's well-known table. Windows build only. */
#ifndef CP_ACCOUNT_WIN_H
#define CP_ACCOUNT_WIN_H

#include <stdbool.h>
#include <stddef.h>

#include "security/sid.h"

/* A cp_config_resolve_fn: ctx is unused. */
bool cp_win_resolve_account(void *ctx, const char *account, cp_sid *out, char *why, size_t cap);

#endif
