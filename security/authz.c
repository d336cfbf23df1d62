/* authz.c - see authz.h. */
#include "security/authz.h"

#include <stdio.h>
#include <string.h>

static bool counts(uint32_t attributes, bool is_user)
{
    if (attributes & (CP_SE_GROUP_USE_FOR_DENY_ONLY | CP_SE_GROUP_INTEGRITY))
        return false;
    /* The user SID carries no ENABLED bit: it is enabled unless deny-only. */
    return is_user || (attributes & CP_SE_GROUP_ENABLED) != 0;
}

static bool in_restricting(const cp_token_info *t, const cp_sid *sid)
{
    for (size_t i = 0; i < t->n_restricting; i++)
        if (cp_sid_equal(&t->restricting[i].sid, sid) &&
            !(t->restricting[i].attributes & CP_SE_GROUP_USE_FOR_DENY_ONLY))
            return true;
    return false;
}

bool cp_authz_member(const cp_token_info *t, const cp_sid *sid)
{
    if (t == NULL || !t->identified || sid == NULL || sid->n_sub == 0)
        return false;
    bool found = false;
    if (cp_sid_equal(&t->user.sid, sid) && counts(t->user.attributes, true))
        found = true;
    for (size_t i = 0; !found && i < t->n_groups; i++)
        if (cp_sid_equal(&t->groups[i].sid, sid) && counts(t->groups[i].attributes, false))
            found = true;
    /* A SID present twice, once enabled and once deny-only, is denied:
     * deny-only wins, as in an access check. */
    for (size_t i = 0; found && i < t->n_groups; i++)
        if (cp_sid_equal(&t->groups[i].sid, sid) &&
            (t->groups[i].attributes & CP_SE_GROUP_USE_FOR_DENY_ONLY))
            found = false;
    if (found && cp_sid_equal(&t->user.sid, sid) &&
        (t->user.attributes & CP_SE_GROUP_USE_FOR_DENY_ONLY))
        found = false;
    if (found && t->restricted && !in_restricting(t, sid))
        found = false;
    return found;
}

/* Whether the token has sid at all (deny-only, disabled, ...). */
static bool present(const cp_token_info *t, const cp_sid *sid)
{
    if (cp_sid_equal(&t->user.sid, sid))
        return true;
    for (size_t i = 0; i < t->n_groups; i++)
        if (cp_sid_equal(&t->groups[i].sid, sid))
            return true;
    return false;
}

bool cp_authz_decide(const cp_token_info *t, const cp_authz_policy *p, char *why, size_t cap)
{
    char buf[CP_SID_STR_MAX], user[CP_SID_STR_MAX];
    const char *group = p != NULL && p->group != NULL ? p->group : "this";
    if (why != NULL && cap > 0)
        why[0] = '\0';
    if (t == NULL || !t->identified) {
        if (why != NULL)
            snprintf(why, cap, "the caller could not be identified");
        return false;
    }
    cp_sid_format(&t->user.sid, user, sizeof(user));
    if (p == NULL || p->n_allowed == 0) {
        if (why != NULL)
            snprintf(why, cap, "%s: no caller is allowed to use the %s group", user, group);
        return false;
    }
    for (size_t i = 0; i < p->n_allowed; i++) {
        if (cp_authz_member(t, &p->allowed[i])) {
            if (why != NULL)
                snprintf(why, cap, "%s: member of %s", user,
                         cp_sid_format(&p->allowed[i], buf, sizeof(buf)));
            return true;
        }
    }
    if (why != NULL) {
        size_t n = (size_t)snprintf(why, cap,
                                    "%s: not an enabled member of any SID allowed to "
                                    "use the %s group [",
                                    user, group);
        for (size_t i = 0; i < p->n_allowed && n < cap; i++)
            n += (size_t)snprintf(why + n, cap - n, "%s%s", i > 0 ? " " : "",
                                  cp_sid_format(&p->allowed[i], buf, sizeof(buf)));
        if (n < cap)
            n += (size_t)snprintf(why + n, cap - n, "]");
        for (size_t i = 0; i < p->n_allowed && n < cap; i++)
            if (present(t, &p->allowed[i]))
                n += (size_t)snprintf(why + n, cap - n,
                                      "; has %s only for deny, disabled or outside its "
                                      "restricting SIDs (a restricted or non-elevated token)",
                                      cp_sid_format(&p->allowed[i], buf, sizeof(buf)));
    }
    return false;
}
