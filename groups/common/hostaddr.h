/* hostaddr.h - reading a host name the way Windows' resolver reads an
 * address before it asks DNS, shared by the rules that judge where a name
 * leads (the smb group's "this machine" rule, the iscsi group's portal
 * destination rule). Portable: nothing is resolved.
 *
 * The reading is generous: a name read as an address it is not can at
 * worst be refused by a rule (never let through), so every form Windows
 * may take is taken:
 *   - IPv4 in the non-strict forms of inet_addr / RtlIpv4StringToAddress
 *     with Strict FALSE: 1 to 4 parts, each decimal, octal (leading 0,
 *     any number of them) or hexadecimal (0x), the last part filling the
 *     bytes that are left ("127.1", "0x7f000001", "2130706433",
 *     "0177.0.0.1", "0");
 *   - IPv6 text ("::1", an IPv4 tail "::ffff:127.0.0.1"), optionally in
 *     brackets ("[::1]");
 *   - the UNC spelling of IPv6, "<address>.ipv6-literal.net" with ':'
 *     written '-' (or ':') and everything from an 's' on (the scope)
 *     dropped ("0--1.ipv6-literal.net", "fe80--1s4.ipv6-literal.net");
 *   - one final dot of an absolute name ("127.0.0.1.").
 * A "%scope" after IPv6 text is not read: the text is no address.
 *
 * Some spellings Windows' parsers may read as different addresses, or one
 * as an address and another not: an IPv6 group of more than 4 hex digits,
 * "::" standing for no group (8 groups besides it), an IPv4 tail part
 * written in octal or hexadecimal ("::ffff:0177.0.0.1": 127 or 177?).
 * They are read (the value is one reading) and marked ambiguous; a rule
 * refuses them, since any of the readings may be the one that reaches
 * what the rule keeps out. */
#ifndef CP_GROUPS_COMMON_HOSTADDR_H
#define CP_GROUPS_COMMON_HOSTADDR_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cp_hostaddr {
    int family;          /* 4 (b[0..3]) or 6 (b[0..15]), network byte order */
    unsigned char b[16]; /* zero beyond the family's bytes */
    bool ambiguous;      /* a spelling Windows' parsers may read otherwise */
} cp_hostaddr;

/* The text a rule gives for an ambiguous spelling: "<name> is <this>". */
#define CP_HOSTADDR_AMBIGUOUS_WHY                                                                  \
    "an address spelling Windows' parsers may read differently (write the address in its usual "   \
    "form)"

/* 4 or 6 with *out filled when name is an address in any of the forms
 * above, else 0 (a host name; *out zeroed). */
int cp_hostaddr_read(const char *name, cp_hostaddr *out);

/* The IPv4 address an IPv6 address carries in its last 32 bits when it is
 * IPv4-mapped (::ffff:0:0/96) or IPv4-compatible (::/96, "::" and "::1"
 * included), else NULL. */
const unsigned char *cp_hostaddr_embedded_v4(const cp_hostaddr *a);

/* "a.b.c.d" or full IPv6 text of a, for messages. */
void cp_hostaddr_text(const cp_hostaddr *a, char *out, size_t len);

#endif
