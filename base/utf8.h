/* utf8.h - cutting UTF-8 text for messages without splitting a character.
 * Error texts and audit records show at most a few hundred bytes of what a
 * caller sent; a cut in the middle of a multi-byte sequence makes the text
 * invalid UTF-8, which gRPC clients reject and which the UTF-16 conversion
 * of the Event Log refuses. Portable. */
#ifndef CP_UTF8_H
#define CP_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length, at most max, of the longest prefix of s (len bytes) that does
 * not end inside a UTF-8 sequence: a cut moves back over continuation bytes
 * (10xxxxxx) to the lead byte of the character that does not fit. Bytes that
 * are not valid UTF-8 are counted as they are (the cut never makes them
 * worse). */
size_t cp_utf8_cut(const char *s, size_t len, size_t max);

/* The length of the valid UTF-8 sequence at s (at most n bytes) and its
 * code point in *cp, or 0: no overlong forms, no surrogates, nothing above
 * U+10FFFF (what MultiByteToWideChar with MB_ERR_INVALID_CHARS refuses). */
size_t cp_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

#endif
