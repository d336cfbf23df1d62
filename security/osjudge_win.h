/* osjudge_win.h - the system's own answer to "is any of these SIDs enabled
 * in this token?", CheckTokenMembership's question for a list of SIDs,
 * asked in one AccessCheck per 16 SIDs instead of one CheckTokenMembership
 * per SID (the second judge of gate_win.c). Windows build only.
 *
 * Each SID k of a chunk gets its own access bit (1 << k) in an
 * access-allowed ACE of a DACL built once; AccessCheck(MAXIMUM_ALLOWED)
 * returns the bits the token is granted. A bit is granted only for an
 * enabled SID (not deny-only), and for a restricted token only when the
 * SID is also among its restricting SIDs ("the system performs two access
 * checks: one using the token's enabled SIDs, and another using the list
 * of restricting SIDs. Access is granted only if both access checks allow
 * the requested access rights", Microsoft Learn, "Restricted Tokens"):
 * per SID, what CheckTokenMembership answers ("If the SID is present and
 * has the SE_GROUP_ENABLED attribute, IsMember returns TRUE ... If
 * TokenHandle is a restricted token ... CheckTokenMembership also checks
 * whether the SID is present in the list of restricting SIDs", Microsoft
 * Learn, "CheckTokenMembership function"). The bits count as read, write
 * and execute rights alike (the GENERIC_MAPPING), so that a
 * write-restricted token's restricting SIDs apply to them as well, and a
 * token below medium integrity gets none (the mandatory no-write-up of an
 * object without a label): never more than CheckTokenMembership allows.
 * Under Wine 8 one AccessCheck is one wineserver request, where
 * CheckTokenMembership makes three per SID (the token's type, its groups
 * twice); on Windows one system call instead of one per SID.
 * test/wine/svctest.c "osjudge" compares the two on several tokens. Wine 8
 * keeps no restricting SIDs and no integrity levels, so those two rules are
 * taken from Microsoft's pages and not verified here
 * (test/windows/osjudge.ps1, not run, is where they can be seen). */
#ifndef CP_OSJUDGE_WIN_H
#define CP_OSJUDGE_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct cp_osjudge cp_osjudge;

/* For the n SIDs (kept by reference: they must outlive the judge). NULL
 * when out of memory or a SID is invalid. n may be 0 (nothing is ever
 * enabled). */
cp_osjudge *cp_osjudge_new(PSID const *sids, size_t n);
void cp_osjudge_free(cp_osjudge *j);

/* *member: one of the SIDs is enabled in token (an impersonation token of
 * at least identification level, with TOKEN_QUERY). false with *err set
 * when the system could not say. */
bool cp_osjudge_member(const cp_osjudge *j, HANDLE token, bool *member, DWORD *err);

#endif
