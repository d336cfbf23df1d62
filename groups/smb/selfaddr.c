/* selfaddr.c - is a UNC server name an address of this machine (see
 * selfaddr.h). */
#include "groups/smb/selfaddr.h"

#include <string.h>

static bool v4_is_self(const unsigned char *b, const cp_smb_addr *local, size_t n)
{
    if (b[0] == 127 || b[0] == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (local[i].family == 4 && memcmp(local[i].b, b, 4) == 0)
            return true;
    return false;
}

bool cp_smb_addr_is_self(const cp_hostaddr *a, const cp_smb_addr *local, size_t n)
{
    if (a->family == 4)
        return v4_is_self(a->b, local, n);
    /* ::, ::1 and ::a.b.c.d (IPv4-compatible), ::ffff:a.b.c.d (mapped):
     * judged by their IPv4 address (:: and ::1 carry 0.0.0.0/8). */
    const unsigned char *v4 = cp_hostaddr_embedded_v4(a);
    if (v4 != NULL && v4_is_self(v4, local, n))
        return true;
    for (size_t i = 0; i < n; i++)
        if (local[i].family == 6 && memcmp(local[i].b, a->b, 16) == 0)
            return true;
    return false;
}
