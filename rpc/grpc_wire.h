/* grpc_wire.h - the small gRPC-over-HTTP/2 formats: message prefix,
 * grpc-timeout, content-type, percent-encoded grpc-message. Pure
 * functions; no I/O. */
#ifndef CP_GRPC_WIRE_H
#define CP_GRPC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CP_GRPC_PREFIX 5
#define CP_GRPC_DEFAULT_MAX_MSG (4u * 1024 * 1024)

/* Writes the 5-byte prefix: compressed flag, big-endian length. */
void cp_grpc_put_prefix(uint8_t out[CP_GRPC_PREFIX], bool compressed, uint32_t len);

/* Reads a prefix: returns the flag byte and sets *len. */
uint8_t cp_grpc_get_prefix(const uint8_t in[CP_GRPC_PREFIX], uint32_t *len);

/* Parses a grpc-timeout value ("<1-8 digits><H|M|S|m|u|n>") into
 * milliseconds, rounding up sub-millisecond values. 0 or -1 if malformed. */
int cp_grpc_parse_timeout(const char *v, size_t len, int64_t *ms);

/* True for "application/grpc", "application/grpc+<subtype>" and
 * "application/grpc;<params>". */
bool cp_grpc_content_type_ok(const char *v, size_t len);

/* Percent-encodes a grpc-message (bytes outside 0x20..0x7e and '%').
 * Always NUL-terminates out (cap >= 1); truncates at a whole escape.
 * Returns the length written. */
size_t cp_grpc_percent_encode(const char *in, char *out, size_t cap);

/* Decodes %XX escapes in place; returns the new length. */
size_t cp_grpc_percent_decode(char *s, size_t len);

#endif
