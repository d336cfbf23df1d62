/* json_internal.h - what the cli/json_*.c files share; not part of the
 * CLI's API (that is json.h).
 *
 *   json_parse.c  JSON text -> cp_json tree (tokenizer, escapes, UTF-8);
 *   json_pb.c     cp_json tree -> ProtobufCMessage, field names, map fields;
 *   json_out.c    ProtobufCMessage -> JSON text.
 */
#ifndef CP_CLI_JSON_INTERNAL_H
#define CP_CLI_JSON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "cli/json.h"

/* Decodes one UTF-8 sequence at s[0..len); returns its length and sets
 * *cp, or 0 if it is not well-formed (overlong, surrogate, > U+10FFFF).
 * (json_parse.c) */
size_t cp_json_utf8_next(const unsigned char *s, size_t len, uint32_t *cp);

/* Sets CP_E_NOMEM "out of memory" in e and returns it. (json_parse.c) */
int cp_json_nomem(cp_error *e);

/* The size of one element of a field of type t as protobuf-c stores it
 * (a repeated field's array stride). (json_pb.c) */
size_t cp_json_elem_size(ProtobufCType t);

static inline bool cp_json_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

#endif
