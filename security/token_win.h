/* token_win.h - a Windows access token read into the portable form the
 * authorization decision takes (authz.h): user, groups and restricting
 * SIDs with their attribute bits. Windows build only. */
#ifndef CP_TOKEN_WIN_H
#define CP_TOKEN_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include "base/status.h"
#include "security/authz.h"

typedef struct cp_win_token {
    cp_token_info info; /* info.groups / info.restricting point into the arrays below */
    cp_token_sid *groups;
    cp_token_sid *restricting;
    bool restricting_unknown; /* the system could not say (Wine): CheckTokenMembership decides */
} cp_win_token;

/* Reads token (opened with TOKEN_QUERY). Returns CP_OK, or a status with e
 * naming the API and the system's error. On failure t->info.identified is
 * false. Release with cp_win_token_free in every case. */
int cp_win_token_read(HANDLE token, cp_win_token *t, cp_error *e);

void cp_win_token_free(cp_win_token *t);

/* The SID a Windows PSID holds, as a cp_sid. False for a malformed SID. */
bool cp_win_sid_from(PSID sid, cp_sid *out);

/* A binary SID for s, allocated with LocalAlloc (caller frees with
 * LocalFree), or NULL. */
PSID cp_win_sid_to(const cp_sid *s);

#endif
