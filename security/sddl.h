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
 * no allow entry (nobody could ever connect; certainly a mistake), and a
 * SACL other than mandatory labels (ML): audit entries (AU), or an empty
 * SACL, need SeSecurityPrivilege enabled when the pipe is created ("SACL
 * for a New Object", Microsoft Learn), which LocalSystem holds disabled,
 * so the service could not create its pipes. The
 * Windows build converts the string with
 * ConvertStringSecurityDescriptorToSecurityDescriptorW afterwards, which
 * stays the authority on what Windows accepts. Portable C.
 */
#ifndef CP_SDDL_H
#define CP_SDDL_H

#include <stdbool.h>
#include <stddef.h>

#include "security/sid.h"

/* Returns true when s is acceptable pipe security. Otherwise false, with
 * why (cap bytes) saying what is wrong and where ("at offset 12: unknown
 * access right \"GZ\""). */
bool cp_sddl_check(const char *s, char *why, size_t cap);

/* Whether the DACL of s (a string cp_sddl_check accepted) lets the
 * service's own account create every instance of the pipe. Windows checks
 * FILE_CREATE_PIPE_INSTANCE (with the instance's read and write access)
 * against the DACL of the existing pipe for each instance after the first
 * ("CreateNamedPipeW function", "Named Pipe Security and Access Rights"):
 * a DACL that does not grant it leaves one instance, i.e. one connection
 * at a time. Required, so that what the operator reads is what is
 * enforced: an allow entry naming `account` (an alias or S-1-...) with full
 * access (GA, FA, 0x10000000 GENERIC_ALL or all of 0x1F01FF
 * FILE_ALL_ACCESS), and no deny entry naming the account or one of the
 * `n_held` groups its token holds that takes away a right the server end
 * needs (read, write, FILE_CREATE_PIPE_INSTANCE: a deny of WRITE_DAC is
 * fine). Inherit-only entries (IO) do not count.
 * False with why saying what is missing. */
bool cp_sddl_grants(const char *s, const cp_sid *account, const cp_sid *held, size_t n_held,
                    char *why, size_t cap);

/* cp_sddl_grants for LocalSystem, the account csi-proxy runs as: SY, and
 * the groups its token holds (Everyone, Authenticated Users, BUILTIN\
 * Administrators). */
bool cp_sddl_grants_system(const char *s, char *why, size_t cap);

/* What a derived DACL gives each allowed caller: what a client needs and
 * nothing more. FR and FW are FILE_GENERIC_READ and FILE_GENERIC_WRITE
 * (read and write data, attributes and extended attributes, READ_CONTROL,
 * SYNCHRONIZE: "File Security and Access Rights", "ACE Strings",
 * Microsoft Learn), which is what a client opening with GENERIC_READ |
 * GENERIC_WRITE (go-winio's DialPipe) is granted; never WRITE_DAC,
 * WRITE_OWNER or DELETE, so a caller cannot rewrite the pipe's DACL.
 * FILE_GENERIC_WRITE holds FILE_APPEND_DATA, which on a pipe is
 * FILE_CREATE_PIPE_INSTANCE ("Named Pipe Security and Access Rights"): a
 * DACL cannot let a client write without letting it create a server
 * instance of the pipe, so the transport watches each pipe's instance
 * count for instances it did not make (transport.h: foreign_instance). */
#define CP_SDDL_CALLER_RIGHTS "FRFW"

/* Writes "D:P(A;;GA;;;SY)(A;;FRFW;;;<sid>)...": full access for SYSTEM
 * (SY), always first and once, added when the list lacks it (csi-proxy
 * runs as SYSTEM and must be able to create each pipe instance:
 * cp_sddl_grants), and CP_SDDL_CALLER_RIGHTS for every other SID (aliases
 * where Windows has one, so the string reads back identically). Who may
 * call is decided per connection from the list itself. Returns the
 * length, or 0 when it does not fit in cap. */
size_t cp_sddl_for_sids(const cp_sid *sids, size_t n, char *out, size_t cap);

/* Whether the DACL of s (a string cp_sddl_check accepted) gives a SID
 * other than SYSTEM a right no client needs: GENERIC_ALL, FILE_ALL_ACCESS,
 * WRITE_DAC, WRITE_OWNER, DELETE (with them a caller can rewrite the
 * pipe's DACL or owner). which (cap bytes) lists them: "BA (GA),
 * S-1-5-21-... (0x1f01ff)". Inherit-only entries do not count. For a
 * warning: such a DACL still works. */
bool cp_sddl_caller_excess(const char *s, char *which, size_t cap);

#endif
