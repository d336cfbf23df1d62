/* portal.c - the iscsi group's destination rule for target portals (see
 * iscsi.h, cp_iscsi_check_portal). Portable: no resolver is asked; an
 * address is read the way Windows' own parsers read it (hostaddr.h), names
 * are not resolved. */
#include "groups/iscsi/iscsi.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "groups/common/hostaddr.h"

static bool ends_with_ci(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    return n >= m && strncasecmp(s + n - m, suffix, m) == 0;
}

/* The rule an IPv4 address breaks, or NULL. */
static const char *v4_rule(const uint8_t b[4])
{
    if (b[0] == 127)
        return "a loopback address (127.0.0.0/8): the initiator would log in to this node";
    if (b[0] == 0)
        return "an unspecified address (0.0.0.0/8: this host)";
    if (b[0] == 169 && b[1] == 254)
        return "a link-local address (169.254.0.0/16, where instance metadata and other "
               "on-link services answer)";
    return NULL;
}

const char *cp_iscsi_refused_destination(const char *address)
{
    cp_hostaddr a;
    int fam = cp_hostaddr_read(address, &a);
    const uint8_t *b = a.b;
    if (fam == 4)
        return v4_rule(b);
    if (fam == 6) {
        static const uint8_t zero[16] = {0};
        static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
        if (memcmp(b, zero, 16) == 0)
            return "an unspecified address (::)";
        if (memcmp(b, zero, 15) == 0 && b[15] == 1)
            return "a loopback address (::1): the initiator would log in to this node";
        if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
            return "a link-local address (fe80::/10)";
        /* IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96) and NAT64
         * (64:ff9b::/96) forms reach the IPv4 address they carry. */
        const uint8_t *v4 = cp_hostaddr_embedded_v4(&a);
        if (v4 == NULL && memcmp(b, nat64, 12) == 0)
            v4 = b + 12;
        return v4 != NULL ? v4_rule(v4) : NULL;
    }
    /* A name: "localhost" and every name under it resolve to loopback
     * (RFC 6761 §6.3); other names are not resolved here. */
    size_t n = strlen(address);
    if (n > 0 && address[n - 1] == '.')
        n--;
    if ((n == 9 && strncasecmp(address, "localhost", 9) == 0) ||
        ends_with_ci(address, n, ".localhost") ||
        (n == 21 && strncasecmp(address, "localhost.localdomain", 21) == 0))
        return "a loopback name (localhost and the names under it resolve to this node)";
    return NULL;
}

/* Whether entry names address: both addresses (compared as addresses), or
 * the same name, or "*.suffix" and a name under it; ASCII case ignored. */
static bool portal_matches(const char *entry, const char *address, bool exact_only)
{
    cp_hostaddr a, b;
    int fa = cp_hostaddr_read(entry, &a), fb = cp_hostaddr_read(address, &b);
    if (fa != 0 || fb != 0)
        return fa == fb && memcmp(a.b, b.b, 16) == 0;
    if (strncmp(entry, "*.", 2) == 0) {
        if (exact_only)
            return false;
        size_t el = strlen(entry + 1), al = strlen(address);
        return al > el && strcasecmp(address + al - el, entry + 1) == 0;
    }
    return strcasecmp(entry, address) == 0;
}

int cp_iscsi_check_portal(const cp_iscsi_policy *p, const cp_iscsi_portal *portal, cp_error *e)
{
    const char *a = portal->address;
    cp_hostaddr addr;
    int fam = cp_hostaddr_read(a, &addr);
    if ((strchr(a, ':') != NULL || strchr(a, '[') != NULL || strchr(a, ']') != NULL) && fam != 6)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "target portal %s:%u: %s is not a host name or address", a,
                            (unsigned)portal->port, a);
    if (addr.ambiguous)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT, "target portal %s:%u: %s is %s", a,
                            (unsigned)portal->port, a, CP_HOSTADDR_AMBIGUOUS_WHY);
    bool named = false, listed = false;
    for (size_t i = 0; p != NULL && p->restricted && i < p->n_allowed; i++) {
        named = named || portal_matches(p->allowed[i], a, true);
        listed = listed || portal_matches(p->allowed[i], a, false);
    }
    const char *rule = cp_iscsi_refused_destination(a);
    if (rule != NULL && !named)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "target portal %s:%u: %s is %s (name it in groups.iscsi.allowedPortals "
                            "to allow it)",
                            a, (unsigned)portal->port, a, rule);
    if (p != NULL && p->restricted && !listed)
        return cp_error_set(e, CP_E_INVALID_ARGUMENT,
                            "target portal %s:%u: %s is not in groups.iscsi.allowedPortals", a,
                            (unsigned)portal->port, a);
    return CP_OK;
}
