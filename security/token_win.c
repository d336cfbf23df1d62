/* token_win.c - see token_win.h. */
#include "security/token_win.h"

#include <sddl.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"

bool cp_win_sid_from(PSID sid, cp_sid *out)
{
    if (sid == NULL || !IsValidSid(sid))
        return false;
    PSID_IDENTIFIER_AUTHORITY ia = GetSidIdentifierAuthority(sid);
    UCHAR n = *GetSidSubAuthorityCount(sid);
    if (n == 0 || n > CP_SID_MAX_SUB)
        return false;
    cp_sid s = {.revision = 1, .n_sub = n};
    for (int i = 0; i < 6; i++)
        s.authority = (s.authority << 8) | ia->Value[i];
    for (UCHAR i = 0; i < n; i++)
        s.sub[i] = *GetSidSubAuthority(sid, i);
    *out = s;
    return true;
}

PSID cp_win_sid_to(const cp_sid *s)
{
    if (s->n_sub == 0 || s->n_sub > CP_SID_MAX_SUB)
        return NULL;
    PSID sid = LocalAlloc(LMEM_FIXED, GetSidLengthRequired(s->n_sub));
    if (sid == NULL)
        return NULL;
    SID_IDENTIFIER_AUTHORITY ia;
    for (int i = 0; i < 6; i++)
        ia.Value[i] = (BYTE)(s->authority >> (8 * (5 - i)));
    if (!InitializeSid(sid, &ia, s->n_sub)) {
        LocalFree(sid);
        return NULL;
    }
    for (UCHAR i = 0; i < s->n_sub; i++)
        *GetSidSubAuthority(sid, i) = s->sub[i];
    return sid;
}

/* GetTokenInformation into a malloc'd buffer; NULL with *err set. A first
 * try with TOKEN_QUERY_GUESS bytes is usually enough: one system call
 * rather than two (the size, then the data); a longer answer is asked
 * for again at the size the system gives. */
#define TOKEN_QUERY_GUESS 1024
static void *token_query(HANDLE token, TOKEN_INFORMATION_CLASS cls, DWORD *err)
{
    DWORD need = 0;
    *err = 0;
    void *buf = malloc(TOKEN_QUERY_GUESS);
    if (buf == NULL) {
        *err = ERROR_NOT_ENOUGH_MEMORY;
        return NULL;
    }
    if (GetTokenInformation(token, cls, buf, TOKEN_QUERY_GUESS, &need))
        return buf;
    DWORD first = GetLastError();
    free(buf);
    if (first != ERROR_INSUFFICIENT_BUFFER || need == 0) {
        *err = first;
        if (*err == 0)
            *err = ERROR_INVALID_DATA;
        return NULL;
    }
    buf = malloc(need);
    if (buf == NULL) {
        *err = ERROR_NOT_ENOUGH_MEMORY;
        return NULL;
    }
    if (!GetTokenInformation(token, cls, buf, need, &need)) {
        *err = GetLastError();
        free(buf);
        return NULL;
    }
    return buf;
}

static int fail(cp_error *e, const char *api, DWORD err)
{
    char why[256];
    return cp_error_set(e, CP_E_PERMISSION_DENIED, "%s: %s (error %lu)", api,
                        cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
}

/* Copies a TOKEN_GROUPS list; false on a malformed SID or no memory. */
static bool copy_groups(const TOKEN_GROUPS *g, cp_token_sid **out)
{
    *out = calloc(g->GroupCount > 0 ? g->GroupCount : 1, sizeof(**out));
    if (*out == NULL)
        return false;
    for (DWORD i = 0; i < g->GroupCount; i++) {
        if (!cp_win_sid_from(g->Groups[i].Sid, &(*out)[i].sid))
            return false;
        (*out)[i].attributes = g->Groups[i].Attributes;
    }
    return true;
}

int cp_win_token_read(HANDLE token, cp_win_token *t, cp_error *e)
{
    memset(t, 0, sizeof(*t));
    DWORD err;
    int rc = CP_OK;
    TOKEN_USER *user = token_query(token, TokenUser, &err);
    TOKEN_GROUPS *groups = NULL, *restricting = NULL;
    if (user == NULL) {
        rc = fail(e, "GetTokenInformation(TokenUser)", err);
        goto out;
    }
    if (!cp_win_sid_from(user->User.Sid, &t->info.user.sid)) {
        rc = cp_error_set(e, CP_E_PERMISSION_DENIED, "token: malformed user SID");
        goto out;
    }
    t->info.user.attributes = user->User.Attributes;
    groups = token_query(token, TokenGroups, &err);
    if (groups == NULL) {
        rc = fail(e, "GetTokenInformation(TokenGroups)", err);
        goto out;
    }
    if (!copy_groups(groups, &t->groups)) {
        rc = cp_error_set(e, CP_E_PERMISSION_DENIED, "token: malformed group SID");
        goto out;
    }
    t->info.groups = t->groups;
    t->info.n_groups = groups->GroupCount;
    restricting = token_query(token, TokenRestrictedSids, &err);
    if (restricting == NULL) {
        /* Windows answers with an empty list for an unrestricted token;
         * Wine 8 does not implement the class (ERROR_INVALID_FUNCTION).
         * Then CheckTokenMembership, which every decision also needs, is
         * the one that knows. Any other failure: not identified. */
        if (err != ERROR_INVALID_FUNCTION && err != ERROR_INVALID_PARAMETER &&
            err != ERROR_NOT_SUPPORTED && err != ERROR_CALL_NOT_IMPLEMENTED) {
            rc = fail(e, "GetTokenInformation(TokenRestrictedSids)", err);
            goto out;
        }
        t->restricting_unknown = true;
    } else if (restricting->GroupCount > 0) {
        if (!copy_groups(restricting, &t->restricting)) {
            rc = cp_error_set(e, CP_E_PERMISSION_DENIED, "token: malformed restricting SID");
            goto out;
        }
        t->info.restricted = true;
        t->info.restricting = t->restricting;
        t->info.n_restricting = restricting->GroupCount;
    }
    t->info.identified = true;
out:
    free(user);
    free(groups);
    free(restricting);
    if (rc != CP_OK)
        t->info.identified = false;
    return rc;
}

void cp_win_token_free(cp_win_token *t)
{
    free(t->groups);
    free(t->restricting);
    memset(t, 0, sizeof(*t));
}
