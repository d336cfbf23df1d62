/* sid.h - Windows security identifiers as portable values: parsing and
 * printing "S-1-5-32-544", the well-known account names the config file
 * may use instead, and the SDDL two-letter aliases. No Windows headers:
 * the authorization decision (authz.h) and the config loader use these on
 * both builds. Portable C.
 */
#ifndef CP_SID_H
#define CP_SID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CP_SID_MAX_SUB 15  /* SID_MAX_SUB_AUTHORITIES */
#define CP_SID_STR_MAX 192 /* "S-1-" + 48-bit authority + 15 x "-4294967295" + NUL */

typedef struct cp_sid {
    uint8_t revision;   /* always 1 */
    uint8_t n_sub;      /* 1..15 */
    uint64_t authority; /* 48 bits */
    uint32_t sub[CP_SID_MAX_SUB];
} cp_sid;

/* Parses the string form "S-1-<authority>-<sub>..." (case-insensitive
 * "S", decimal or 0x-hex authority as Windows accepts; 1 to 15 decimal
 * sub-authorities, each < 2^32). Returns true and fills out, or false for
 * anything else (including leading/trailing junk and empty parts). */
bool cp_sid_parse(const char *s, cp_sid *out);

/* Writes the canonical string form (decimal authority below 2^32, hex
 * above, as ConvertSidToStringSid) into buf; returns buf. */
const char *cp_sid_format(const cp_sid *sid, char *buf, size_t cap);

/* Equal revision, authority and every sub-authority. */
bool cp_sid_equal(const cp_sid *a, const cp_sid *b);

/* A well-known account or group name ("SYSTEM", "NT AUTHORITY\SYSTEM",
 * "BUILTIN\Administrators", "ContainerAdministrator", ...; case-
 * insensitive) to its SID. Returns false for a name not in the table; the
 * Windows build then asks LookupAccountName. */
bool cp_sid_well_known_name(const char *name, cp_sid *out);

/* An SDDL SID alias ("SY", "BA", ...; upper case as in SDDL) to its SID.
 * Returns false for an unknown alias and for the domain-relative aliases
 * (DA, DU, ...) that need a domain to resolve: those are valid SDDL, and
 * cp_sid_alias_known() says so. */
bool cp_sid_alias(const char *alias2, cp_sid *out);
bool cp_sid_alias_known(const char *alias2);

/* The SDDL alias for a SID Windows prints with one (SY, BA, BU, WD, ...),
 * or NULL. */
const char *cp_sid_alias_of(const cp_sid *sid);

#endif
