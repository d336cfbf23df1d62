/* utf8.c - see utf8.h. */
#include "base/utf8.h"

/* The number of bytes of the sequence a lead byte starts (1 for ASCII and
 * for bytes that cannot start a sequence). */
static size_t seq_len(unsigned char c)
{
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    if (c >= 0xE0)
        return c <= 0xEF ? 3 : 1;
    if (c >= 0xC2)
        return 2;
    return 1;
}

size_t cp_utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    /* Walk back from the cut to the start of the character it falls in:
     * at most 3 continuation bytes. */
    size_t i = max;
    size_t back = 0;
    while (i > 0 && back < 3 && ((unsigned char)s[i] & 0xC0) == 0x80) {
        i--;
        back++;
    }
    /* s[i] starts the character that straddles position max (or is max
     * itself when s[max] is not a continuation byte). Keep it only if it
     * ends at or before max. */
    if (i < max && i + seq_len((unsigned char)s[i]) > max)
        return i;
    return max;
}

size_t cp_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t len = s[0] >= 0xC2 && s[0] <= 0xDF   ? 2
                 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
                 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
                                                : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F) ||
        (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))
        return 0;
    uint32_t c = s[0] & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t i = 1; i < len; i++)
        c = (c << 6) | (s[i] & 0x3F);
    *cp = c;
    return len;
}
