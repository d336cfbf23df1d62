/* account_win.c - see account_win.h. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>

#include "base/winutil_win.h"
#include "security/account_win.h"
#include "security/token_win.h"

bool cp_win_resolve_account(void *ctx, const char *account, cp_sid *out, char *why, size_t cap)
{
    (void)ctx;
    wchar_t *w = cp_win_utf8_to_wide(account);
    if (w == NULL) {
        snprintf(why, cap, "not valid UTF-8, or out of memory");
        return false;
    }
    BYTE sid[SECURITY_MAX_SID_SIZE];
    DWORD sid_len = sizeof(sid);
    wchar_t domain[256];
    DWORD domain_len = sizeof(domain) / sizeof(domain[0]);
    SID_NAME_USE use;
    BOOL ok = LookupAccountNameW(NULL, w, sid, &sid_len, domain, &domain_len, &use);
    DWORD err = ok ? 0 : GetLastError();
    free(w);
    if (!ok) {
        char text[200];
        snprintf(why, cap, "LookupAccountName: %s (error %lu)",
                 cp_win_errtext(err, text, sizeof(text)), (unsigned long)err);
        return false;
    }
    if (!cp_win_sid_from(sid, out)) {
        snprintf(why, cap, "LookupAccountName returned a malformed SID");
        return false;
    }
    return true;
}
