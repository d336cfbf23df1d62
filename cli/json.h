/* json.h - a small JSON parser and protobuf-c reflection for the CLI.
 *
 * Two halves:
 *   cp_json_parse()        JSON text -> cp_json tree (RFC 8259, strict:
 *                          UTF-8 input, no trailing commas, depth limit);
 *   cp_json_to_message()   cp_json tree -> ProtobufCMessage, driven by the
 *                          generated message descriptors;
 *   cp_json_from_message() ProtobufCMessage -> one line of JSON text.
 *
 * The message mapping follows proto3 JSON (as Go's protojson does):
 * keys are proto field names on output; on input both proto names and
 * lowerCamelCase JSON names are accepted. 64-bit integers are JSON strings
 * on output (numbers or strings on input); enums are names on output
 * (names or numbers on input); map<K,V> is a JSON object whose keys are
 * strings; bytes are base64. Defaults are omitted on output unless
 * CP_JSON_EMIT_DEFAULTS is given.
 *
 * Memory: everything (tree, messages, strings, text) is allocated from the
 * caller's arena and freed with it; nothing here calls free().
 *
 * Errors: every function returns CP_OK or a negative cp_status and fills
 * the cp_error (may be NULL). Bad input is CP_E_INVALID_ARGUMENT with a
 * message naming the position (syntax) or the field path (mapping);
 * CP_E_NOMEM when the arena runs dry.
 */
#ifndef CP_CLI_JSON_H
#define CP_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <protobuf-c/protobuf-c.h>

#include "base/arena.h"
#include "base/status.h"

/* Nesting limit for arrays and objects (the messages nest 4 deep). */
#define CP_JSON_MAX_DEPTH 64

typedef enum cp_json_kind {
    CP_JSON_NULL,
    CP_JSON_BOOL,
    CP_JSON_NUMBER,
    CP_JSON_STRING,
    CP_JSON_ARRAY,
    CP_JSON_OBJECT,
} cp_json_kind;

typedef struct cp_json cp_json;

struct cp_json {
    cp_json_kind kind;
    size_t pos;        /* byte offset of the value in the input */
    bool boolean;      /* BOOL */
    const char *str;   /* STRING: decoded UTF-8, NUL-terminated (no NULs
                          inside); NUMBER: the literal as written */
    size_t len;        /* length of str */
    size_t n;          /* ARRAY / OBJECT: number of items */
    cp_json **items;   /* ARRAY / OBJECT: the values, in input order */
    const char **keys; /* OBJECT: decoded keys, parallel to items */
};

/* Parses text[0..len) (a leading UTF-8 BOM is skipped). On success *out is
 * the root value, owned by the arena. Syntax errors are
 * CP_E_INVALID_ARGUMENT with "line L, column C: ..." in the message. */
int cp_json_parse(cp_arena *a, const char *text, size_t len, cp_json **out, cp_error *e)
    __attribute__((warn_unused_result));

/* Builds a message of type d from v (an object, or null for an empty
 * message). Unknown fields, duplicates, wrong JSON types and out-of-range
 * numbers are CP_E_INVALID_ARGUMENT naming the field path ("target_portal
 * .target_port"). *out lives in the arena: do not free it with
 * protobuf_c_message_free_unpacked(). */
int cp_json_to_message(cp_arena *a, const cp_json *v, const ProtobufCMessageDescriptor *d,
                       ProtobufCMessage **out, cp_error *e) __attribute__((warn_unused_result));

/* Convenience: cp_json_parse() then cp_json_to_message(). Empty or
 * all-blank text means an empty message. */
int cp_json_text_to_message(cp_arena *a, const char *text, size_t len,
                            const ProtobufCMessageDescriptor *d, ProtobufCMessage **out,
                            cp_error *e) __attribute__((warn_unused_result));

enum {
    /* Also write fields holding their default value (zero scalars as 0,
     * "" and false; empty repeated fields as [], empty maps as {}, unset
     * messages as null). */
    CP_JSON_EMIT_DEFAULTS = 1u << 0,
};

/* Writes m as one line of JSON (no newline) into the arena; *out is
 * NUL-terminated. Invalid UTF-8 in strings is replaced by U+FFFD so the
 * output is always valid JSON. CP_E_NOMEM is the only error. */
int cp_json_from_message(cp_arena *a, const ProtobufCMessage *m, unsigned flags, char **out,
                         cp_error *e) __attribute__((warn_unused_result));

/* The lowerCamelCase JSON name protoc derives from a field name
 * ("disk_locations" -> "diskLocations"), written into the arena; NULL on
 * out of memory. */
char *cp_json_name(cp_arena *a, const char *field_name);

/* True if field f of message type parent is a map<K,V>: a repeated field
 * of the entry type protoc generates, "<parent>.<FieldInCamel>Entry" with
 * fields key = 1 and value = 2. */
bool cp_json_is_map_field(const ProtobufCMessageDescriptor *parent,
                          const ProtobufCFieldDescriptor *f);

#endif
