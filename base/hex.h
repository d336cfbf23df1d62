/* hex.h - one hexadecimal digit's value. Portable C. */
#ifndef CP_HEX_H
#define CP_HEX_H

/* 0-15 for '0'-'9', 'a'-'f', 'A'-'F'; -1 for anything else (c is a char
 * or an unsigned char's value). */
static inline int cp_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
