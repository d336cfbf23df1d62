/* gate_win.c - see gate_win.h. */
#include "security/gate_win.h"

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/pipe/pipe_client_win.h"
#include "base/winutil_win.h"
#include "security/authz.h"
#include "base/log.h"
#include "security/osjudge_win.h"
#include "security/token_win.h"

typedef struct gate_group {
    const char *name;
    cp_sid *allowed;
    PSID *psids; /* the same, as the system's SIDs */
    size_t n;
    cp_osjudge *os; /* the second judge, on psids */
    char deny[160]; /* what a refused client is told */
} gate_group;

/* A process token already judged allowed for a group. TokenId is a
 * locally unique identifier given to the token object when it was made
 * (never reused while the system runs), and ModifiedId is "an LUID that
 * changes each time the token is modified. An application can use this
 * value as a test of whether a security context has changed since it was
 * last used" (Microsoft Learn, "TOKEN_STATISTICS structure (winnt.h)"):
 * the pair names one state of one token, so the judgement of that state
 * (user, groups and their attributes, restricting SIDs, all the judges
 * read) holds while both are unchanged. (Wine 8 moves ModifiedId on
 * AdjustTokenPrivileges, but has no AdjustTokenGroups at all: it fails
 * with ERROR_INVALID_FUNCTION, so a token's groups never change in place
 * there; test/wine/service_security.sh shows a modified token judged
 * again, test/windows/tokcache.ps1 the refusal after AdjustTokenGroups.) Only allowances are kept: a refusal is
 * judged again (and audited with its reason) every time. Everything else
 * a connection is checked for (the process alive and created before the
 * connect, still the pipe's client, its impersonation token, the hand-off
 * handle) is checked every time, hit or not. */
typedef struct gate_seen {
    LUID token_id, modified_id;
    int group; /* index into cp_gate.g; -1: unused slot */
    char caller[CP_SID_STR_MAX];
} gate_seen;

#define GATE_SEEN 32 /* distinct (token, group) pairs remembered */

struct cp_gate {
    gate_group g[CP_POLICY_MAX_GROUPS]; /* unused slots: name NULL */
    cp_audit *audit;
    /* Used by cp_gate_authorize only, under lock: the transport's loops
     * (conn_win.c, open_conn) call it from their threads. */
    SRWLOCK lock;
    gate_seen seen[GATE_SEEN];
    unsigned seen_next; /* the slot replaced next (round robin) */
};

cp_gate *cp_gate_new(const cp_policy *p, cp_audit *audit, cp_error *e)
{
    cp_gate *gt = calloc(1, sizeof(*gt));
    if (gt == NULL)
        goto nomem;
    gt->audit = audit;
    InitializeSRWLock(&gt->lock);
    for (int i = 0; i < GATE_SEEN; i++)
        gt->seen[i].group = -1;
    for (size_t i = 0; i < p->n_groups && i < CP_POLICY_MAX_GROUPS; i++) {
        const cp_group_policy *cg = &p->groups[i];
        gate_group *g = &gt->g[i];
        g->name = cg->name;
        snprintf(g->deny, sizeof(g->deny),
                 "csi-proxy: this caller is not allowed to use the %s group (see the "
                 "service's audit log)",
                 cg->name);
        g->allowed = calloc(cg->n_allowed > 0 ? cg->n_allowed : 1, sizeof(*g->allowed));
        g->psids = calloc(cg->n_allowed > 0 ? cg->n_allowed : 1, sizeof(*g->psids));
        if (g->allowed == NULL || g->psids == NULL)
            goto nomem;
        for (size_t k = 0; k < cg->n_allowed; k++) {
            g->allowed[k] = cg->allowed[k];
            if ((g->psids[k] = cp_win_sid_to(&cg->allowed[k])) == NULL)
                goto nomem;
            g->n = k + 1;
        }
        if ((g->os = cp_osjudge_new(g->psids, g->n)) == NULL)
            goto nomem;
    }
    return gt;
nomem:
    cp_error_set(e, CP_E_NOMEM, "authorization: out of memory");
    cp_gate_free(gt);
    return NULL;
}

void cp_gate_free(cp_gate *gt)
{
    if (gt == NULL)
        return;
    for (int i = 0; i < CP_POLICY_MAX_GROUPS; i++) {
        cp_osjudge_free(gt->g[i].os);
        for (size_t k = 0; k < gt->g[i].n; k++)
            LocalFree(gt->g[i].psids[k]);
        free(gt->g[i].psids);
        free(gt->g[i].allowed);
    }
    free(gt);
}

static bool luid_eq(LUID a, LUID b)
{
    return a.LowPart == b.LowPart && a.HighPart == b.HighPart;
}

/* The process token's identity (TokenId, ModifiedId); false if the system
 * does not say (then nothing is remembered or looked up). */
static bool token_state(HANDLE tok, LUID *id, LUID *modified)
{
    TOKEN_STATISTICS st;
    DWORD len = 0;
    if (!GetTokenInformation(tok, TokenStatistics, &st, sizeof(st), &len))
        return false;
    *id = st.TokenId;
    *modified = st.ModifiedId;
    return true;
}

static const gate_seen *seen_find(const cp_gate *gt, int group, LUID id, LUID modified)
{
    for (int i = 0; i < GATE_SEEN; i++) {
        const gate_seen *s = &gt->seen[i];
        if (s->group == group && luid_eq(s->token_id, id) && luid_eq(s->modified_id, modified))
            return s;
    }
    return NULL;
}

static void seen_add(cp_gate *gt, int group, LUID id, LUID modified, const char *caller)
{
    gate_seen *s = &gt->seen[gt->seen_next++ % GATE_SEEN];
    s->group = group;
    s->token_id = id;
    s->modified_id = modified;
    snprintf(s->caller, sizeof(s->caller), "%s", caller);
}

static const gate_group *group_of(const cp_gate *gt, const char *name)
{
    for (int i = 0; i < CP_POLICY_MAX_GROUPS; i++)
        if (gt->g[i].name != NULL && strcmp(gt->g[i].name, name) == 0)
            return &gt->g[i];
    return NULL;
}

static bool deny_why(char *why, size_t cap, const char *what, DWORD err)
{
    char text[200];
    snprintf(why, cap, "%s: %s (error %lu)", what, cp_win_errtext(err, text, sizeof(text)),
             (unsigned long)err);
    return false;
}

/* Decides for one token (an impersonation token, at least identification
 * level, for the system's judge). Both judges must say yes: the pure
 * decision on what the token says of itself (authz.h), and the system's
 * own, CheckTokenMembership's semantics on any allowed SID in one
 * AccessCheck (osjudge_win.h). */
static bool judge(const gate_group *g, HANDLE token, const char *which, char *caller,
                  size_t caller_cap, char *why, size_t cap)
{
    cp_win_token t;
    cp_error e;
    char reason[512];
    if (cp_win_token_read(token, &t, &e) != CP_OK) {
        snprintf(why, cap, "%s token: %s", which, e.msg);
        cp_win_token_free(&t);
        return false;
    }
    cp_sid_format(&t.info.user.sid, caller, caller_cap);
    cp_authz_policy p = {g->name, g->allowed, g->n};
    bool pure = cp_authz_decide(&t.info, &p, reason, sizeof(reason));
    bool os = false;
    DWORD err = 0;
    if (!cp_osjudge_member(g->os, token, &os, &err)) {
        cp_win_token_free(&t);
        return deny_why(why, cap, "AccessCheck(allowed SIDs)", err);
    }
    cp_win_token_free(&t);
    if (pure && os)
        return true;
    if (!pure)
        snprintf(why, cap, "%s token: %s", which, reason);
    else /* e.g. restricting SIDs the token query could not show (Wine) */
        snprintf(why, cap,
                 "%s token: %s; but AccessCheck finds none of the allowed SIDs "
                 "enabled",
                 which, reason);
    return false;
}

/* The process token's state, and what was remembered of it. */
typedef struct gate_state {
    const cp_gate *gate;
    int group;
    bool known;
    LUID id, modified;
    const gate_seen *hit; /* judged allowed before in this state */
} gate_state;

/* The client process's token, duplicated at identification level (left
 * NULL when ts finds it judged allowed before, see gate_seen), and a
 * handle on the process (*proc_out; the transport watches it for the
 * connection's life). A process created after the connection cannot be
 * its client: its pid was recycled from one that exited (the connection
 * living on in a handle it passed on). */
static bool process_token(const cp_pipe_client *client, uint32_t pid, HANDLE *out, HANDLE *proc_out,
                          gate_state *ts, char *why, size_t cap)
{
    *out = NULL;
    *proc_out = NULL;
    ts->known = false;
    ts->hit = NULL;
    HANDLE pipe = client->pipe;
    if (pid == 0)
        return snprintf(why, cap, "the client process id is unknown"), false;
    int64_t began = client->connected_at;
    HANDLE proc = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, pid);
    if (proc == NULL)
        return deny_why(why, cap, "OpenProcess(client)", GetLastError());
    bool ok = false;
    HANDLE tok = NULL;
    FILETIME created, exited, kernel, user;
    ULONG pid_after = 0;
    if (!GetProcessTimes(proc, &created, &exited, &kernel, &user)) {
        deny_why(why, cap, "GetProcessTimes(client)", GetLastError());
        goto out;
    }
    if ((int64_t)(((uint64_t)created.dwHighDateTime << 32) | created.dwLowDateTime) > began) {
        snprintf(why, cap, "process %lu was created after the connection: not its client",
                 (unsigned long)pid);
        goto out;
    }
    /* (Not GetExitCodeProcess: a process may exit with code 259,
     * STILL_ACTIVE.) */
    if (WaitForSingleObject(proc, 0) != WAIT_TIMEOUT) {
        snprintf(why, cap,
                 "the client process %lu has exited: the connection was handed to another "
                 "process, which cannot be identified",
                 (unsigned long)pid);
        goto out;
    }
    if (!OpenProcessToken(proc, TOKEN_QUERY | TOKEN_DUPLICATE, &tok)) {
        deny_why(why, cap, "OpenProcessToken(client)", GetLastError());
        goto out;
    }
    /* Still this process's connection? (The process handle we hold keeps
     * the pid from being reused from here on.) */
    if (!GetNamedPipeClientProcessId(pipe, &pid_after) || pid_after != pid) {
        snprintf(why, cap, "the pipe's client changed while it was being identified");
        goto out;
    }
    ts->known = token_state(tok, &ts->id, &ts->modified);
    if (ts->known && (ts->hit = seen_find(ts->gate, ts->group, ts->id, ts->modified)) != NULL) {
        ok = true; /* judged before in this very state: no copy needed */
        goto out;
    }
    if (!DuplicateToken(tok, SecurityIdentification, out)) {
        deny_why(why, cap, "DuplicateToken(client)", GetLastError());
        *out = NULL;
        goto out;
    }
    ok = true;
out:
    if (tok != NULL)
        CloseHandle(tok);
    if (ok)
        *proc_out = proc;
    else
        CloseHandle(proc);
    return ok;
}

/* The token the client let us have by impersonation, if any. Returns
 * false only on a failure that must deny; *out stays NULL when the client
 * allowed no identification. */
static bool impersonation_token(HANDLE pipe, HANDLE *out, char *why, size_t cap)
{
    *out = NULL;
    if (!ImpersonateNamedPipeClient(pipe))
        return true; /* nothing read yet, or anonymous: no identity offered */
    HANDLE tok = NULL;
    BOOL got = OpenThreadToken(GetCurrentThread(), TOKEN_QUERY, TRUE, &tok);
    DWORD err = got ? 0 : GetLastError();
    if (!RevertToSelf()) {
        /* This thread would keep serving with the client's identity.
         * There is no safe way on: stop the process. */
        CP_LOG_ERROR("RevertToSelf failed (error %lu): exiting rather than running as a client",
                     (unsigned long)GetLastError());
        ExitProcess(3);
    }
    if (!got) {
        if (err == ERROR_CANT_OPEN_ANONYMOUS || err == ERROR_NO_TOKEN)
            return true;
        return deny_why(why, cap, "OpenThreadToken(impersonation)", err);
    }
    SECURITY_IMPERSONATION_LEVEL level = SecurityAnonymous;
    DWORD len = 0;
    if (!GetTokenInformation(tok, TokenImpersonationLevel, &level, sizeof(level), &len) ||
        level < SecurityIdentification) {
        CloseHandle(tok);
        return true;
    }
    *out = tok;
    return true;
}

static const char *authorize(cp_gate *gt, const cp_service *svc, uint32_t pid,
                             cp_pipe_client *client, char *peer_id, size_t peer_id_cap);

/* One connection at a time: the cache of judged tokens (seen) and the
 * judges are shared by the transport's loops. */
const char *cp_gate_authorize(void *ctx, const cp_service *svc, uint32_t pid, void *os_handle,
                              char *peer_id, size_t peer_id_cap)
{
    cp_gate *gt = ctx;
    AcquireSRWLockExclusive(&gt->lock);
    const char *deny = authorize(gt, svc, pid, os_handle, peer_id, peer_id_cap);
    ReleaseSRWLockExclusive(&gt->lock);
    return deny;
}

static const char *authorize(cp_gate *gt, const cp_service *svc, uint32_t pid,
                             cp_pipe_client *client, char *peer_id, size_t peer_id_cap)
{
    HANDLE pipe = client->pipe;
    const char *group = svc->def->group;
    char pipe_name[96], why[768] = "", caller[CP_SID_STR_MAX] = "";
    snprintf(pipe_name, sizeof(pipe_name), "csi-proxy-%s-%s", group, svc->def->version);
    const gate_group *g = group_of(gt, group);
    static const char unknown_group[] = "csi-proxy: this group has no authorization policy";
    if (g == NULL) {
        cp_audit_denied(gt->audit, pipe_name, group, pid, "", "no policy for this group");
        return unknown_group;
    }
    HANDLE ptok = NULL, itok = NULL, proc = NULL;
    int gi = (int)(g - gt->g);
    gate_state ts = {gt, gi, false, {0, 0}, {0, 0}, NULL};
    bool allowed = process_token(client, pid, &ptok, &proc, &ts, why, sizeof(why));
    if (allowed && ts.hit != NULL) {
        snprintf(caller, sizeof(caller), "%s", ts.hit->caller);
    } else if (allowed) {
        allowed = judge(g, ptok, "process", caller, sizeof(caller), why, sizeof(why));
        if (allowed && ts.known)
            seen_add(gt, gi, ts.id, ts.modified, caller);
    }
    allowed = allowed && impersonation_token(pipe, &itok, why, sizeof(why));
    if (allowed && itok != NULL) {
        char icaller[CP_SID_STR_MAX];
        allowed = judge(g, itok, "impersonation", icaller, sizeof(icaller), why, sizeof(why));
        snprintf(caller, sizeof(caller), "%s", icaller); /* the more specific identity */
    }
    if (ptok != NULL)
        CloseHandle(ptok);
    if (itok != NULL)
        CloseHandle(itok);
    snprintf(peer_id, peer_id_cap, "%s", caller);
    if (!allowed) {
        if (proc != NULL)
            CloseHandle(proc);
        cp_audit_denied(gt->audit, pipe_name, group, pid, caller, why);
        return g->deny;
    }
    client->process = proc; /* the transport's now: see cp_gate_revoke */
    /* Says whether the process token was judged now or found judged
     * before in this state, and the state (test/wine/service_security.sh
     * reads it). */
    if (ts.known)
        CP_LOG_V(2,
                 "caller %s (pid %lu) allowed on %s: process token %lx:%08lx modified %lx:%08lx %s",
                 caller, (unsigned long)pid, pipe_name, (unsigned long)ts.id.HighPart,
                 (unsigned long)ts.id.LowPart, (unsigned long)ts.modified.HighPart,
                 (unsigned long)ts.modified.LowPart,
                 ts.hit != NULL ? "judged allowed before in this state" : "judged");
    else
        CP_LOG_V(2, "caller %s (pid %lu) allowed on %s: process token judged (its state unknown)",
                 caller, (unsigned long)pid, pipe_name);
    return NULL;
}

void cp_gate_revoke(void *ctx, const cp_service *svc, uint32_t pid, const char *peer_id,
                    const char *path)
{
    cp_gate *gt = ctx;
    const char *group = svc->def->group;
    char pipe_name[96], why[640];
    snprintf(pipe_name, sizeof(pipe_name), "csi-proxy-%s-%s", group, svc->def->version);
    snprintf(why, sizeof(why),
             "call %.200s refused: it was read after the process that opened this connection "
             "(pid %lu, allowed as %s) had exited, so it comes from a process the connection "
             "was handed to, which cannot be identified",
             path, (unsigned long)pid, peer_id != NULL && peer_id[0] != '\0' ? peer_id : "unknown");
    cp_audit_denied(gt->audit, pipe_name, group, pid, "unknown", why);
}
