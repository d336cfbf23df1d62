/* sddl.h - a portable syntax check of the SDDL strings the config file
 * gives for pipe security, and the default pipe SDDL built from a list of
 * allowed SIDs.
 *
 * The check accepts what a pipe needs, in Windows' grammar:
 *   [O:sid][G:sid]D:<flags>(ace)...[S:<flags>(ace)...]
 *   ace = type;flags;rights;;;sid      (no object GUIDs, no conditions)
 * and refuses, on purpose, what would fail open or silently widen access:
 * a missing DACL ("no DACL" means everyone), D:NO_ACCESS_CONTROL, a DACL
 * that is not protected ("D:P", so nothing is inherited), and a DACL with
 * no allow entry (nobody could ever connect; certainly a mistake). The
 * Windows build converts the string with
 * ConvertStringSecurityDescriptorToSecurityDescriptorW afterwards, which
 * stays the authority on what Windows accepts. Portable C.
 */
#ifndef CP_SDDL_H
#define CP_SDDL_H

#include <stdbool.h>
#include <stddef.h>

#include "sid.h"

/* Returns true when s is acceptable pipe security. Otherwise false, with
 * why (cap bytes) saying what is wrong and where ("at offset 12: unknown
 * access right \"GZ\""). */
bool cp_sddl_check(const char *s, char *why, size_t cap);

/* Writes "D:P(A;;GA;;;SY)(A;;GA;;;<sid>)..." granting full access to each
 * SID (aliases where Windows has one, so the string reads back
 * identically). Returns the length, or 0 when it does not fit in cap. */
size_t cp_sddl_for_sids(const cp_sid *sids, size_t n, char *out, size_t cap);

#endif
