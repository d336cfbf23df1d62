/* osjudge_win.c - see osjudge_win.h. */
#include "security/osjudge_win.h"

#include <stdlib.h>

#define CHUNK 16 /* the specific-rights bits 0..15 of an access mask */

typedef struct chunk {
    SECURITY_DESCRIPTOR sd; /* absolute: points at dacl and the caller's SIDs */
    PACL dacl;
    DWORD mask; /* the bits of this chunk's SIDs */
} chunk;

struct cp_osjudge {
    chunk *c;
    size_t n;
};

static bool chunk_build(chunk *c, PSID const *sids, size_t n)
{
    /* "To calculate the initial size of an ACL, add the following together,
     * and then align the result to the nearest DWORD": the ACL structure,
     * each ACE structure less its SidStart member (a DWORD), each ACE's
     * SID (Microsoft Learn, "InitializeAcl function (securitybaseapi.h)"). */
    DWORD size = sizeof(ACL);
    for (size_t k = 0; k < n; k++) {
        if (!IsValidSid(sids[k]))
            return false;
        size += (DWORD)(sizeof(ACCESS_ALLOWED_ACE) - sizeof(DWORD) + GetLengthSid(sids[k]));
    }
    size = (size + sizeof(DWORD) - 1) & ~(DWORD)(sizeof(DWORD) - 1);
    c->dacl = malloc(size);
    if (c->dacl == NULL || !InitializeAcl(c->dacl, size, ACL_REVISION))
        return false;
    for (size_t k = 0; k < n; k++) {
        if (!AddAccessAllowedAce(c->dacl, ACL_REVISION, 1u << k, sids[k]))
            return false;
        c->mask |= 1u << k;
    }
    /* AccessCheck wants an owner and a group; what they imply (READ_CONTROL,
     * WRITE_DAC for the owner) is outside mask. */
    return InitializeSecurityDescriptor(&c->sd, SECURITY_DESCRIPTOR_REVISION) &&
           SetSecurityDescriptorOwner(&c->sd, sids[0], FALSE) &&
           SetSecurityDescriptorGroup(&c->sd, sids[0], FALSE) &&
           SetSecurityDescriptorDacl(&c->sd, TRUE, c->dacl, FALSE);
}

cp_osjudge *cp_osjudge_new(PSID const *sids, size_t n)
{
    cp_osjudge *j = calloc(1, sizeof(*j));
    if (j == NULL)
        return NULL;
    size_t chunks = (n + CHUNK - 1) / CHUNK;
    j->c = calloc(chunks > 0 ? chunks : 1, sizeof(*j->c));
    if (j->c == NULL) {
        free(j);
        return NULL;
    }
    for (; j->n < chunks; j->n++) {
        size_t first = j->n * CHUNK, len = n - first < CHUNK ? n - first : CHUNK;
        if (!chunk_build(&j->c[j->n], sids + first, len)) {
            j->n++; /* so that free releases its dacl */
            cp_osjudge_free(j);
            return NULL;
        }
    }
    return j;
}

void cp_osjudge_free(cp_osjudge *j)
{
    if (j == NULL)
        return;
    for (size_t i = 0; i < j->n; i++)
        free(j->c[i].dacl);
    free(j->c);
    free(j);
}

bool cp_osjudge_member(const cp_osjudge *j, HANDLE token, bool *member, DWORD *err)
{
    *member = false;
    for (size_t i = 0; i < j->n && !*member; i++) {
        const chunk *c = &j->c[i];
        GENERIC_MAPPING map = {c->mask, c->mask, c->mask, c->mask};
        union {
            PRIVILEGE_SET set;
            char room[sizeof(PRIVILEGE_SET) + 8 * sizeof(LUID_AND_ATTRIBUTES)];
        } privs;
        DWORD privs_len = sizeof(privs), granted = 0;
        BOOL status = FALSE;
        /* "AccessCheck function (securitybaseapi.h)": ClientToken "A handle
         * to an impersonation token"; with MAXIMUM_ALLOWED, GrantedAccess
         * receives the rights the descriptor grants; AccessStatus FALSE
         * (the function still succeeding) when it grants none. */
        if (!AccessCheck((PSECURITY_DESCRIPTOR)&c->sd, token, MAXIMUM_ALLOWED, &map, &privs.set,
                         &privs_len, &granted, &status)) {
            *err = GetLastError();
            return false;
        }
        *member = status && (granted & c->mask) != 0;
    }
    return true;
}
