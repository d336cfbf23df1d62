/* selfaddr.h - is a UNC server name, read as an address, an address of
 * this machine? The pure judgement behind the smb group's "this machine"
 * rule (smb.h), natively unit-tested. The name is read as Windows reads an
 * address (groups/common/hostaddr.h: the non-strict IPv4 forms, IPv6, the
 * ipv6-literal.net spellings); the machine's own addresses come from the
 * host (host/smb_host.h local_addresses). */
#ifndef CP_GROUPS_SMB_SELFADDR_H
#define CP_GROUPS_SMB_SELFADDR_H

#include <stdbool.h>
#include <stddef.h>

#include "host/smb_host.h"
#include "groups/common/hostaddr.h"

/* True when a reaches this machine: loopback (127.0.0.0/8, ::1), the
 * unspecified "this host" addresses (0.0.0.0/8, ::), the same as an IPv4
 * address mapped into IPv6 (::ffff:a.b.c.d, ::a.b.c.d), or one of the n
 * addresses in local (an IPv6 scope is not compared). */
bool cp_smb_addr_is_self(const cp_hostaddr *a, const cp_smb_addr *local, size_t n);

#endif
