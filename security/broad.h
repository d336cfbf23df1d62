/* broad.h - callers too broad to be given a csi-proxy group. csi-proxy acts as SYSTEM on a caller's behalf (mounts, formats,
 * removes directories), so admitting a group that every user, every
 * service or every network logon belongs to hands that power out:
 *
 *   Everyone (WD), ANONYMOUS LOGON (AN), Authenticated Users (AU),
 *   BUILTIN\Users (BU), BUILTIN\Guests (BG), Power Users (PU), Remote
 *   Desktop Users (RD), INTERACTIVE (IU), NETWORK (NU), BATCH, SERVICE
 *   (SU), DIALUP, LOCAL, CONSOLE LOGON, RESTRICTED (RC), WRITE RESTRICTED
 *   (WR), TERMINAL SERVER USER, REMOTE INTERACTIVE LOGON, This
 *   Organization, Local account, ALL APPLICATION PACKAGES (AC), ALL
 *   RESTRICTED APPLICATION PACKAGES, and a domain's Users, Guests and
 *   Computers (RIDs 513, 514, 515; SDDL DU, DG, DC) and Guest (501).
 *
 * The config loader refuses such a SID in allowedCallers and in the allow
 * entries of pipeSecurity unless security.allowBroadCallers is true (then
 * the service warns at every start). Portable C.
 */
#ifndef CP_BROAD_H
#define CP_BROAD_H

#include <stdbool.h>
#include <stddef.h>

#include "security/sid.h"

/* "Everyone", "BUILTIN\Users", ... when sid is a broad group, else NULL. */
const char *cp_broad_sid(const cp_sid *sid);

/* Looks at the allow entries (A) of the DACL of sddl (already accepted by
 * cp_sddl_check). Returns true when one grants a broad group, with which
 * naming it ("WD (Everyone)"). */
bool cp_broad_sddl(const char *sddl, char *which, size_t cap);

/* The first broad SID among sids (n of them), described in which
 * ("S-1-5-32-545 (BUILTIN\Users)"), or false. */
bool cp_broad_list(const cp_sid *sids, size_t n, char *which, size_t cap);

#endif
