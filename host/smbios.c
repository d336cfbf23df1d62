/* smbios.c - see smbios.h. */
#include "host/smbios.h"

#include <string.h>

/* End of the structure starting at p (after its string set), or NULL when
 * the set is not terminated within the table. */
static const uint8_t *structure_end(const uint8_t *p, const uint8_t *end)
{
    const uint8_t *s = p + p[1];
    if (s + 2 > end)
        return NULL;
    if (s[0] == 0 && s[1] == 0) /* no strings: two NULs right after */
        return s + 2;
    for (; s + 1 < end; s++)
        if (s[0] == 0 && s[1] == 0)
            return s + 2;
    return NULL;
}

int cp_smbios_string(const uint8_t *table, size_t len, uint8_t type, uint8_t offset, char *out,
                     size_t outlen)
{
    if (outlen == 0)
        return -1;
    out[0] = '\0';
    const uint8_t *p = table, *end = table + len;
    while (p + 4 <= end) {
        uint8_t t = p[0], flen = p[1];
        if (flen < 4 || p + flen > end)
            return -1;
        const uint8_t *next = structure_end(p, end);
        if (next == NULL)
            return -1;
        if (t == type) {
            if (offset >= flen || p[offset] == 0)
                return 0;
            unsigned want = p[offset];
            const uint8_t *s = p + flen;
            for (unsigned n = 1; s < next - 1 && *s != 0; n++) {
                size_t slen = strnlen((const char *)s, (size_t)(next - s));
                if (n == want) {
                    size_t k = 0;
                    for (; k < slen && k + 1 < outlen; k++)
                        out[k] = s[k] >= 0x20 && s[k] < 0x7f ? (char)s[k] : '.';
                    out[k] = '\0';
                    return 1;
                }
                s += slen + 1;
            }
            return -1; /* names a string the set does not have */
        }
        if (t == 127) /* end-of-table */
            break;
        p = next;
    }
    return 0;
}
