/* wirecheck.h - checks on encoded requests that protobuf-c does not make.
 *
 * 1. Strings: protobuf-c hands a string field over as a C string, so an
 *    embedded NUL would silently cut it short, and it accepts bytes that
 *    are not UTF-8 (proto3 requires UTF-8; grpc-go rejects them).
 *    cp_wire_check_strings walks the encoded request once and refuses
 *    both, before any handler sees the request.
 * 2. Memory: protobuf-c keeps every unknown field (a record and a copy of
 *    its bytes, in ProtobufCMessage.unknown_fields) and decodes every
 *    repeat of a known field, so a 4 MiB request of 3-byte fields used to
 *    cost ~80 MB to decode. cp_wire_filter reads the request as it
 *    arrives, drops the top-level unknown fields (nothing reads them) and
 *    counts the fields it keeps, so what is buffered and decoded stays a
 *    small multiple of the bytes kept. */
#ifndef CP_WIRECHECK_H
#define CP_WIRECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

enum {
    CP_WIRE_OK = 0,
    CP_WIRE_NUL = -1,       /* a string holds a NUL byte */
    CP_WIRE_UTF8 = -2,      /* a string is not valid UTF-8 */
    CP_WIRE_MALFORMED = -3, /* not a valid encoding (field number 0 or above
                              2^29-1, a bad wire type or length): refused
                              even when protobuf-c decodes it */
    CP_WIRE_TOO_MANY = -4,  /* more fields than the filter's limit */
    CP_WIRE_NOMEM = -5      /* the emit function failed */
};

/* Checks every string field of message desc encoded in b[0..len), nested
 * messages and map entries included. On a bad string, writes the field's
 * name ("Message.field") to field (size cap). */
int cp_wire_check_strings(const ProtobufCMessageDescriptor *desc, const uint8_t *b, size_t len,
                          char *field, size_t cap);

/* True when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
int cp_utf8_valid(const uint8_t *s, size_t n);

/* ---- the streaming filter ------------------------------------------- */

/* Fields one request may keep (every level, repeats counted; top-level
 * unknown fields are dropped and not counted). The largest request of the
 * csi-proxy API has 7 fields. Decoding one costs at most a few hundred
 * bytes besides its own bytes. */
#define CP_WIRE_MAX_FIELDS 1000u
#define CP_WIRE_MAX_DEPTH 32

/* Receives kept bytes, in order; returns 0, or -1 when out of memory. */
typedef int (*cp_wire_emit_fn)(void *ctx, const uint8_t *p, size_t n);

typedef struct cp_wire_filter {
    const ProtobufCMessageDescriptor *desc[CP_WIRE_MAX_DEPTH + 1];
    uint64_t end[CP_WIRE_MAX_DEPTH + 1]; /* where each open message ends */
    int depth;
    uint64_t pos, total; /* bytes read; the message's length */
    int state;
    uint64_t acc; /* the varint being read */
    unsigned shift;
    uint8_t tag[10]; /* the tag being read, emitted once known */
    size_t tag_len;
    uint64_t left;                         /* bytes left of a fixed value or a payload */
    bool keep;                             /* the current field is kept */
    const ProtobufCFieldDescriptor *field; /* its descriptor (NULL: unknown) */
    size_t kept, dropped, max_fields;
    int err;
} cp_wire_filter;

/* Starts filtering one encoded message of type desc, total bytes long. */
void cp_wire_filter_init(cp_wire_filter *f, const ProtobufCMessageDescriptor *desc, uint64_t total,
                         size_t max_fields);

/* Reads the next n bytes (never past total); passes what is kept to emit.
 * Returns CP_WIRE_OK or the first error (CP_WIRE_MALFORMED,
 * CP_WIRE_TOO_MANY, CP_WIRE_NOMEM), which sticks. */
int cp_wire_filter_feed(cp_wire_filter *f, const uint8_t *in, size_t n, cp_wire_emit_fn emit,
                        void *ctx);

/* After all total bytes: CP_WIRE_OK, or CP_WIRE_MALFORMED when the message
 * ended inside a field or a nested message. */
int cp_wire_filter_finish(cp_wire_filter *f);

#endif
