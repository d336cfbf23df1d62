/* selfaddr.h - is a UNC server name an address of this machine? The pure
 * judgement behind the smb group's "this machine" rule (smb.h), natively
 * unit-tested; the machine's own addresses come from the host
 * (winapi/smb.h local_addresses).
 *
 * A server name is read as an address the way Windows reads one before it
 * asks DNS, and the reading is generous: a name read as an address it is
 * not is at worst refused as this machine (never let through), so every
 * form Windows may take is taken here too:
 *   - IPv4 in the non-strict forms of inet_addr / RtlIpv4StringToAddress
 *     with Strict FALSE: 1 to 4 parts, each decimal, octal (leading 0) or
 *     hexadecimal (0x), the last part filling the bytes that are left
 *     ("127.1", "0x7f000001", "2130706433", "0177.0.0.1", "0");
 *   - IPv6 text ("::1");
 *   - the UNC spelling of IPv6, "<address>.ipv6-literal.net" with each ':'
 *     written '-' and the scope '%' written 's' ("0--1.ipv6-literal.net",
 *     "fe80--1s4.ipv6-literal.net"), zero padding and an IPv4 tail
 *     included. */
#ifndef CP_GROUPS_SMB_SELFADDR_H
#define CP_GROUPS_SMB_SELFADDR_H

#include <stdbool.h>
#include <stddef.h>

#include "../../winapi/smb.h"

/* True, with *out filled, when server is an IPv4 or IPv6 address in any of
 * the forms above. */
bool cp_smb_parse_addr(const char *server, cp_smb_addr *out);

/* True when a reaches this machine: loopback (127.0.0.0/8, ::1), the
 * unspecified "this host" addresses (0.0.0.0/8, ::), the same as an IPv4
 * address mapped into IPv6 (::ffff:a.b.c.d, ::a.b.c.d), or one of the n
 * addresses in local (an IPv6 scope is not compared). */
bool cp_smb_addr_is_self(const cp_smb_addr *a, const cp_smb_addr *local, size_t n);

/* "a.b.c.d" or IPv6 text of a, for messages. */
void cp_smb_addr_text(const cp_smb_addr *a, char *out, size_t len);

#endif
