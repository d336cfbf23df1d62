/* filesec.h - whether a file (the configuration file) or the folder that
 * holds it can be changed by someone the service must not trust. The
 * service runs as SYSTEM and does what the configuration says (who may
 * call, which roots, where the log goes), so the file and its folder must
 * be owned by SYSTEM, BUILTIN\Administrators, TrustedInstaller or the
 * service's own account, and no allow entry of the DACL may give anyone
 * else more than reading: a folder a user can write lets the user replace
 * or plant the file. This is the check OpenSSH's sshd makes on Windows
 * before it trusts administrators_authorized_keys.
 *
 * The decision is pure (a parsed security descriptor in, a verdict out);
 * the Windows build reads the descriptor of the opened file's handle and
 * of its folder (cfgfile_win.c). Portable C.
 *
 * What counts as "more than reading", for anyone not trusted: every right
 * except FILE_READ_DATA (list a folder), FILE_READ_EA, FILE_EXECUTE
 * (traverse), FILE_READ_ATTRIBUTES, READ_CONTROL, SYNCHRONIZE,
 * GENERIC_READ and GENERIC_EXECUTE. So FILE_WRITE_DATA (add a file),
 * FILE_APPEND_DATA (add a subfolder), FILE_WRITE_EA, FILE_WRITE_ATTRIBUTES,
 * FILE_DELETE_CHILD, DELETE, WRITE_DAC, WRITE_OWNER, GENERIC_WRITE,
 * GENERIC_ALL, ACCESS_SYSTEM_SECURITY, MAXIMUM_ALLOWED and any bit without
 * a name are refused. Allow entries of every kind count (plain, object,
 * callback/conditional); deny entries only take rights away and are
 * ignored; inherit-only entries do not apply to the object itself and are
 * ignored; an entry of a type the check does not know is refused. No DACL
 * at all (everyone has full access) is refused.
 */
#ifndef CP_FILESEC_H
#define CP_FILESEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "security/sid.h"

/* ACE types and flags as Windows numbers them (winnt.h). */
#define CP_ACE_ALLOWED 0x00
#define CP_ACE_DENIED 0x01
#define CP_ACE_ALLOWED_COMPOUND 0x04
#define CP_ACE_ALLOWED_OBJECT 0x05
#define CP_ACE_DENIED_OBJECT 0x06
#define CP_ACE_ALLOWED_CALLBACK 0x09
#define CP_ACE_DENIED_CALLBACK 0x0A
#define CP_ACE_ALLOWED_CALLBACK_OBJECT 0x0B
#define CP_ACE_DENIED_CALLBACK_OBJECT 0x0C
#define CP_ACE_INHERIT_ONLY 0x08 /* flag */

/* The rights anyone may hold: reading, listing, traversing. */
#define CP_FILESEC_READ_RIGHTS 0xA01200A9u

typedef struct cp_filesec_ace {
    uint8_t type;
    uint8_t flags;
    uint32_t mask;
    cp_sid sid;
} cp_filesec_ace;

typedef struct cp_filesec_sd {
    bool has_owner;
    cp_sid owner;
    bool has_dacl; /* false: a NULL DACL (full access for everyone) */
    const cp_filesec_ace *aces;
    size_t n_aces;
} cp_filesec_sd;

enum {
    CP_FILESEC_OK,
    CP_FILESEC_NO_OWNER,
    CP_FILESEC_BAD_OWNER,   /* who: the owner */
    CP_FILESEC_NULL_DACL,   /* no DACL */
    CP_FILESEC_GRANTS,      /* who: the trustee; mask: the rights beyond reading */
    CP_FILESEC_UNKNOWN_ACE, /* who: the trustee; ace_type */
};

typedef struct cp_filesec_verdict {
    int what; /* CP_FILESEC_* */
    cp_sid who;
    uint32_t mask;
    uint8_t ace_type;
} cp_filesec_verdict;

/* Whether sid is trusted to own or write the file: SYSTEM, BUILTIN\
 * Administrators, TrustedInstaller, or self (the service's own account;
 * may be NULL). */
bool cp_filesec_trusted(const cp_sid *sid, const cp_sid *self);

/* The decision. True when nobody but a trusted principal can change the
 * object; otherwise false with v saying the first reason found (the owner
 * before the entries, entries in DACL order). */
bool cp_filesec_judge(const cp_filesec_sd *sd, const cp_sid *self, cp_filesec_verdict *v);

/* Names the rights in mask ("FILE_WRITE_DATA|DELETE|0x00000200"), in the
 * words for a folder when dir ("FILE_ADD_FILE"). Returns out. */
const char *cp_filesec_rights(uint32_t mask, bool dir, char *out, size_t cap);

/* The verdict in words, for "<path>: refused: the file <this>":
 *   "is owned by S-1-5-21-...-1001 (alice), not by SYSTEM or Administrators"
 *   "grants S-1-1-0 (Everyone) FILE_WRITE_DATA|DELETE, more than reading"
 * who_name (may be NULL or "") is the account name of v->who. */
const char *cp_filesec_describe(const cp_filesec_verdict *v, bool dir, const char *who_name,
                                char *out, size_t cap);

#endif
