/* pipesec_win.c - see pipesec_win.h. */
#include "security/pipesec_win.h"

#include <sddl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/winutil_win.h"
#include "base/log.h"

struct cp_pipesec {
    const char *group[CP_POLICY_MAX_GROUPS];
    PSECURITY_DESCRIPTOR sd[CP_POLICY_MAX_GROUPS]; /* LocalAlloc'd by the conversion */
    SECURITY_ATTRIBUTES sa[CP_POLICY_MAX_GROUPS];
};

/* Where a group's SDDL came from, for messages. */
static void origin(const cp_group_policy *g, char *buf, size_t cap)
{
    if (g->sddl_line > 0)
        snprintf(buf, cap, "%s:%d: %s pipe security",
                 g->sddl_file != NULL ? g->sddl_file : "config", g->sddl_line, g->name);
    else
        snprintf(buf, cap, "%s pipe security (derived from allowedCallers)", g->name);
}

/* Whether the DACL lets this process create further instances of the
 * pipe. "Named Pipe Security and Access Rights": for every instance after
 * the first, CreateNamedPipe is access-checked against the existing pipe's
 * DACL for the requested rights (PIPE_ACCESS_DUPLEX: FILE_GENERIC_READ and
 * FILE_GENERIC_WRITE) and FILE_CREATE_PIPE_INSTANCE, which has the value
 * of FILE_APPEND_DATA and so is part of FILE_GENERIC_WRITE. Needed: those
 * rights granted by allow entries for SIDs the process token holds
 * (CheckTokenMembership with me: an identification-level copy of the
 * process's own token, made once for every group; generic rights mapped as
 * for files, "MapGenericMask function"), and none of them denied to such a
 * SID. Without it the group serves one connection at a time. */
typedef struct me_token {
    HANDLE tok; /* the copy described above, or NULL */
    /* Answers of CheckTokenMembership already asked: the groups' DACLs
     * mostly name the same few SIDs, and the token does not change while
     * the descriptors are built. */
    struct {
        PSID sid;
        BOOL member;
    } seen[16];
    int n;
} me_token;

/* CheckTokenMembership(me->tok, sid), each SID asked of the system once. */
static bool is_member(me_token *me, PSID sid, BOOL *member)
{
    for (int i = 0; i < me->n; i++)
        if (EqualSid(me->seen[i].sid, sid)) {
            *member = me->seen[i].member;
            return true;
        }
    if (!CheckTokenMembership(me->tok, sid, member))
        return false;
    if (me->n < (int)(sizeof(me->seen) / sizeof(me->seen[0]))) {
        DWORD len = GetLengthSid(sid);
        PSID copy = malloc(len);
        if (copy != NULL && CopySid(len, copy, sid)) {
            me->seen[me->n].sid = copy;
            me->seen[me->n++].member = *member;
        } else {
            free(copy);
        }
    }
    return true;
}

static bool lets_me_create_instances(PACL dacl, me_token *me)
{
    const DWORD need = FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_CREATE_PIPE_INSTANCE;
    GENERIC_MAPPING map = {FILE_GENERIC_READ, FILE_GENERIC_WRITE, FILE_GENERIC_EXECUTE,
                           FILE_ALL_ACCESS};
    ACL_SIZE_INFORMATION info;
    if (!GetAclInformation(dacl, &info, sizeof(info), AclSizeInformation))
        return false;
    DWORD granted = 0;
    for (DWORD i = 0; i < info.AceCount; i++) {
        void *ace;
        if (!GetAce(dacl, i, &ace))
            return false;
        ACE_HEADER *h = ace;
        if (h->AceFlags & INHERIT_ONLY_ACE)
            continue;
        if (h->AceType != ACCESS_DENIED_ACE_TYPE && h->AceType != ACCESS_ALLOWED_ACE_TYPE)
            continue;
        /* ACCESS_ALLOWED_ACE and ACCESS_DENIED_ACE share one layout */
        ACCESS_ALLOWED_ACE *a = ace;
        DWORD mask = a->Mask;
        MapGenericMask(&mask, &map);
        BOOL member = FALSE;
        if (!is_member(me, (PSID)&a->SidStart, &member) || !member)
            continue;
        if (h->AceType == ACCESS_DENIED_ACE_TYPE && (mask & need) != 0)
            return false;
        if (h->AceType == ACCESS_ALLOWED_ACE_TYPE)
            granted |= mask;
    }
    return (granted & need) == need;
}

/* "S-1-..." of the process token's user ("GetTokenInformation function",
 * TokenUser; "ConvertSidToStringSidW function"), or "" when it cannot be
 * read. */
static void my_sid(char *out, size_t cap)
{
    out[0] = '\0';
    HANDLE tok;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
        return;
    union {
        TOKEN_USER u;
        BYTE b[sizeof(TOKEN_USER) + SECURITY_MAX_SID_SIZE];
    } tu;
    DWORD n;
    wchar_t *ws = NULL;
    if (GetTokenInformation(tok, TokenUser, &tu, sizeof(tu), &n) &&
        ConvertSidToStringSidW(tu.u.User.Sid, &ws)) {
        char *u8 = cp_win_wide_to_utf8(ws);
        if (u8 != NULL && strlen(u8) < cap)
            strcpy(out, u8);
        free(u8);
        LocalFree(ws);
    }
    CloseHandle(tok);
}

static int convert(const char *sddl, PSECURITY_DESCRIPTOR *sd, const char *where, cp_error *e)
{
    char why[256];
    wchar_t *w = cp_win_utf8_to_wide(sddl);
    if (w == NULL)
        return cp_error_set(e, CP_E_NOMEM, "%s: out of memory", where);
    BOOL ok = ConvertStringSecurityDescriptorToSecurityDescriptorW(w, SDDL_REVISION_1, sd, NULL);
    DWORD err = ok ? 0 : GetLastError();
    free(w);
    if (!ok)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: Windows refuses \"%s\": %s (error %lu)",
                            where, sddl, cp_win_errtext(err, why, sizeof(why)), (unsigned long)err);
    return CP_OK;
}

static int build(const cp_group_policy *g, me_token *me, PSECURITY_DESCRIPTOR *out, cp_error *e)
{
    char where[300];
    origin(g, where, sizeof(where));
    PSECURITY_DESCRIPTOR sd = NULL;
    int rc = convert(g->pipe_sddl, &sd, where, e);
    if (rc != CP_OK)
        return rc;
    /* Fail closed on what the syntax check may have missed: the descriptor
     * itself must carry a real, protected DACL. */
    SECURITY_DESCRIPTOR_CONTROL ctl = 0;
    DWORD rev = 0;
    BOOL present = FALSE, defaulted = FALSE;
    PACL dacl = NULL;
    if (!GetSecurityDescriptorControl(sd, &ctl, &rev) ||
        !GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted) || !present || dacl == NULL ||
        !(ctl & SE_DACL_PROTECTED) || !IsValidSecurityDescriptor(sd)) {
        LocalFree(sd);
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s: \"%s\" does not give a protected DACL",
                            where, g->pipe_sddl);
    }
    /* The service's own account must be able to create every instance.
     * The configuration already requires SYSTEM (cp_sddl_grants_system);
     * this checks the account the process really runs as. A DACL derived
     * from allowedCallers gets an entry for it (who may call is decided per
     * connection, from allowedCallers: gate_win.h); a DACL the operator
     * wrote is refused, not widened. */
    if (!lets_me_create_instances(dacl, me)) {
        char sid[CP_SID_STR_MAX];
        my_sid(sid, sizeof(sid));
        LocalFree(sd);
        if (g->sddl_line > 0 || sid[0] == '\0')
            return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                                "%s: \"%s\" does not give this process's account (%s) read, "
                                "write and FILE_CREATE_PIPE_INSTANCE access: it could create "
                                "only the first instance of each pipe, and the group would "
                                "serve one connection at a time",
                                where, g->pipe_sddl, sid[0] != '\0' ? sid : "unknown");
        size_t len = strlen(g->pipe_sddl) + strlen(sid) + 16;
        char *wider = malloc(len);
        if (wider == NULL)
            return cp_error_set(e, CP_E_NOMEM, "%s: out of memory", where);
        snprintf(wider, len, "%s(A;;GA;;;%s)", g->pipe_sddl, sid);
        sd = NULL;
        rc = convert(wider, &sd, where, e);
        free(wider);
        if (rc != CP_OK)
            return rc;
        CP_LOG_INFO("%s: added full access for this process's account %s (it creates each pipe "
                    "instance)",
                    where, sid);
    }
    *out = sd;
    return CP_OK;
}

cp_pipesec *cp_pipesec_new(const cp_policy *p, cp_error *e)
{
    cp_pipesec *ps = calloc(1, sizeof(*ps));
    if (ps == NULL) {
        cp_error_set(e, CP_E_NOMEM, "pipe security: out of memory");
        return NULL;
    }
    /* What CheckTokenMembership(NULL, ...) would copy on every call: the
     * process token at identification level (no thread impersonates at
     * start). Should the copy fail, me stays NULL and each check makes its
     * own copy, as CheckTokenMembership does for a NULL token. */
    HANDLE tok = NULL;
    me_token me = {0};
    if (OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY | TOKEN_DUPLICATE, &tok)) {
        if (!DuplicateToken(tok, SecurityIdentification, &me.tok))
            me.tok = NULL;
        CloseHandle(tok);
    }
    int rc = CP_OK;
    for (size_t i = 0; i < p->n_groups && i < CP_POLICY_MAX_GROUPS && rc == CP_OK; i++) {
        const cp_group_policy *g = &p->groups[i];
        ps->group[i] = g->name;
        rc = build(g, &me, &ps->sd[i], e);
        ps->sa[i].nLength = sizeof(ps->sa[i]);
        ps->sa[i].lpSecurityDescriptor = ps->sd[i];
        ps->sa[i].bInheritHandle = FALSE;
    }
    if (me.tok != NULL)
        CloseHandle(me.tok);
    for (int i = 0; i < me.n; i++)
        free(me.seen[i].sid);
    if (rc != CP_OK) {
        cp_pipesec_free(ps);
        return NULL;
    }
    return ps;
}

const SECURITY_ATTRIBUTES *cp_pipesec_attrs(const cp_pipesec *ps, const char *group)
{
    for (int i = 0; i < CP_POLICY_MAX_GROUPS; i++)
        if (ps->group[i] != NULL && strcmp(ps->group[i], group) == 0)
            return &ps->sa[i];
    return NULL;
}

void cp_pipesec_free(cp_pipesec *ps)
{
    if (ps == NULL)
        return;
    for (int i = 0; i < CP_POLICY_MAX_GROUPS; i++)
        if (ps->sd[i] != NULL)
            LocalFree(ps->sd[i]);
    free(ps);
}
