/* authz.h - the per-group caller authorization decision, as a pure
 * function of the caller's token (user and groups, with their attribute
 * bits) and the group's policy (the SIDs allowed to call it). No Windows
 * headers: the Windows build reads the token into a cp_token_info
 * (security_win.c) and also asks CheckTokenMembership; both must allow.
 * Tested natively over many token shapes (test/unit/test_authz.c).
 *
 * Semantics are CheckTokenMembership's: a SID counts when it is the
 * token's user or one of its groups AND is enabled AND is not deny-only;
 * integrity labels never count; in a restricted token (one with
 * restricting SIDs) the SID must also be among the restricting SIDs.
 * Fails closed: an unidentified caller, an empty policy, a malformed token
 * all deny.
 */
#ifndef CP_AUTHZ_H
#define CP_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "security/sid.h"

/* SE_GROUP_* attribute bits, as winnt.h defines them. */
#define CP_SE_GROUP_MANDATORY 0x00000001u
#define CP_SE_GROUP_ENABLED_BY_DEFAULT 0x00000002u
#define CP_SE_GROUP_ENABLED 0x00000004u
#define CP_SE_GROUP_OWNER 0x00000008u
#define CP_SE_GROUP_USE_FOR_DENY_ONLY 0x00000010u
#define CP_SE_GROUP_INTEGRITY 0x00000020u
#define CP_SE_GROUP_INTEGRITY_ENABLED 0x00000040u
#define CP_SE_GROUP_RESOURCE 0x20000000u
#define CP_SE_GROUP_LOGON_ID 0xC0000000u

typedef struct cp_token_sid {
    cp_sid sid;
    uint32_t attributes; /* CP_SE_GROUP_*; for the user: 0 or USE_FOR_DENY_ONLY */
} cp_token_sid;

typedef struct cp_token_info {
    bool identified; /* false: no token could be read */
    cp_token_sid user;
    const cp_token_sid *groups;
    size_t n_groups;
    bool restricted; /* the token has restricting SIDs */
    const cp_token_sid *restricting;
    size_t n_restricting;
} cp_token_info;

typedef struct cp_authz_policy {
    const char *group; /* "smb", for messages */
    const cp_sid *allowed;
    size_t n_allowed;
} cp_authz_policy;

/* CheckTokenMembership(token, sid). */
bool cp_authz_member(const cp_token_info *t, const cp_sid *sid);

/* The decision. Returns true to allow. Either way writes a one-line
 * explanation into why (cap bytes; may be NULL): the SID that matched, or
 * why none did (naming allowed SIDs the token has only for deny). */
bool cp_authz_decide(const cp_token_info *t, const cp_authz_policy *p, char *why, size_t cap);

#endif
