/* broad.c - see broad.h. */
#include "security/broad.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct broad {
    const char *sid;
    const char *name;
} broad;

static const broad table[] = {
    {"S-1-1-0", "Everyone"},
    {"S-1-2-0", "LOCAL"},
    {"S-1-2-1", "CONSOLE LOGON"},
    {"S-1-5-1", "DIALUP"},
    {"S-1-5-2", "NETWORK"},
    {"S-1-5-3", "BATCH"},
    {"S-1-5-4", "INTERACTIVE"},
    {"S-1-5-6", "SERVICE"},
    {"S-1-5-7", "ANONYMOUS LOGON"},
    {"S-1-5-11", "Authenticated Users"},
    {"S-1-5-12", "RESTRICTED"},
    {"S-1-5-13", "TERMINAL SERVER USER"},
    {"S-1-5-14", "REMOTE INTERACTIVE LOGON"},
    {"S-1-5-15", "This Organization"},
    {"S-1-5-33", "WRITE RESTRICTED"},
    {"S-1-5-113", "Local account"},
    {"S-1-5-32-545", "BUILTIN\\Users"},
    {"S-1-5-32-546", "BUILTIN\\Guests"},
    {"S-1-5-32-547", "BUILTIN\\Power Users"},
    {"S-1-5-32-555", "BUILTIN\\Remote Desktop Users"},
    {"S-1-15-2-1", "ALL APPLICATION PACKAGES"},
    {"S-1-15-2-2", "ALL RESTRICTED APPLICATION PACKAGES"},
};

const char *cp_broad_sid(const cp_sid *sid)
{
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        cp_sid s;
        if (cp_sid_parse(table[i].sid, &s) && cp_sid_equal(&s, sid))
            return table[i].name;
    }
    /* A domain's (or machine's) S-1-5-21-a-b-c-<rid>. */
    if (sid->authority == 5 && sid->n_sub == 5 && sid->sub[0] == 21) {
        switch (sid->sub[4]) {
        case 501:
            return "a domain's Guest account";
        case 513:
            return "Domain Users";
        case 514:
            return "Domain Guests";
        case 515:
            return "Domain Computers";
        }
    }
    return NULL;
}

bool cp_broad_list(const cp_sid *sids, size_t n, char *which, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = cp_broad_sid(&sids[i]);
        if (name != NULL) {
            char buf[CP_SID_STR_MAX];
            snprintf(which, cap, "%s (%s)", cp_sid_format(&sids[i], buf, sizeof(buf)), name);
            return true;
        }
    }
    return false;
}

/* The trustee of one ACE "(A;flags;rights;;;SID)" starting at p. */
static bool ace_trustee(const char *p, char *out, size_t cap)
{
    const char *end = strchr(p, ')');
    int semis = 0;
    const char *q = p;
    for (; q < end && semis < 5; q++)
        if (*q == ';')
            semis++;
    if (end == NULL || semis < 5 || (size_t)(end - q) >= cap)
        return false;
    memcpy(out, q, (size_t)(end - q));
    out[end - q] = '\0';
    return true;
}

bool cp_broad_sddl(const char *sddl, char *which, size_t cap)
{
    static const struct {
        const char *alias, *name;
    } domain[] = {{"DU", "Domain Users"}, {"DG", "Domain Guests"}, {"DC", "Domain Computers"}};
    const char *dacl = strstr(sddl, "D:");
    if (dacl == NULL)
        return false;
    const char *sacl = strstr(dacl, "S:");
    for (const char *p = strchr(dacl, '('); p != NULL && (sacl == NULL || p < sacl);
         p = strchr(p + 1, '(')) {
        char t[CP_SID_STR_MAX];
        if (strncmp(p, "(A;", 3) != 0 || !ace_trustee(p, t, sizeof(t)))
            continue;
        cp_sid s;
        const char *name = NULL;
        if ((t[0] == 'S' && t[1] == '-' && cp_sid_parse(t, &s)) || cp_sid_alias(t, &s))
            name = cp_broad_sid(&s);
        for (size_t i = 0; name == NULL && i < sizeof(domain) / sizeof(domain[0]); i++)
            if (strcmp(t, domain[i].alias) == 0)
                name = domain[i].name;
        if (name != NULL) {
            snprintf(which, cap, "%s (%s)", t, name);
            return true;
        }
    }
    return false;
}
