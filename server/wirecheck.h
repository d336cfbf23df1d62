/* wirecheck.h - string checks protobuf-c does not make. protobuf-c hands a
 * string field over as a C string, so an embedded NUL would silently cut
 * it short, and it accepts bytes that are not UTF-8 (proto3 requires
 * UTF-8; grpc-go rejects them). This walks the encoded request once and
 * refuses both, before any handler sees the request. */
#ifndef CP_WIRECHECK_H
#define CP_WIRECHECK_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

enum {
    CP_WIRE_OK = 0,
    CP_WIRE_NUL = -1,      /* a string holds a NUL byte */
    CP_WIRE_UTF8 = -2,     /* a string is not valid UTF-8 */
    CP_WIRE_MALFORMED = -3 /* not a valid encoding (field number 0 or above
                              2^29-1, a bad wire type or length): refused
                              even when protobuf-c decodes it */
};

/* Checks every string field of message desc encoded in b[0..len), nested
 * messages and map entries included. On a bad string, writes the field's
 * name ("Message.field") to field (size cap). */
int cp_wire_check_strings(const ProtobufCMessageDescriptor *desc, const uint8_t *b, size_t len,
                          char *field, size_t cap);

/* True when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
int cp_utf8_valid(const uint8_t *s, size_t n);

#endif
