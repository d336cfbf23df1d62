/* pbreflect.h - setting and reading fields of versioned protobuf-c messages
 * by name, for the converters whose fields a plain field map
 * (dispatch/convert.h) cannot express: maps whose key is a decimal string in
 * old versions and a uint32 in new ones, maps of messages, repeated
 * strings. One converter then serves every version: the key's type, the
 * value's fields and their names are read from each version's descriptor.
 *
 * Everything allocated comes from the call's arena and lives until the
 * response is encoded. Functions that allocate return CP_OK or record
 * CP_E_NOMEM on the call (cp_call_fail) and return it.
 */
#ifndef CP_GROUPS_PBREFLECT_H
#define CP_GROUPS_PBREFLECT_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch/method.h"

/* The string field `name` of msg: "" when empty, NULL when msg's type has
 * no string field of that name. Borrowed from msg. */
const char *cp_pb_get_string(const ProtobufCMessage *msg, const char *name);

/* Sets the repeated string field `name` to v[0..n-1] (borrowed). */
int cp_pb_set_strings(cp_call *call, ProtobufCMessage *msg, const char *name, const char *const *v,
                      size_t n);

/* Sets string field `name` of msg (borrowed); no-op when there is none. */
void cp_pb_set_string(ProtobufCMessage *msg, const char *name, const char *v);

/* Makes the map field `name` of msg hold n fresh, initialized entries and
 * returns them in *entries. */
int cp_pb_map_new(cp_call *call, ProtobufCMessage *msg, const char *name, size_t n,
                  ProtobufCMessage ***entries);

/* Sets an entry's key from a disk number: the number itself for a uint32
 * key, its decimal text for a string key (upstream's strconv.FormatUint). */
int cp_pb_entry_key_number(cp_call *call, ProtobufCMessage *entry, uint32_t key);

/* Sets a string key / string value of a map entry (borrowed). */
void cp_pb_entry_key_string(ProtobufCMessage *entry, const char *key);
void cp_pb_entry_value_string(ProtobufCMessage *entry, const char *value);

/* Allocates and initializes the message value of an entry; *value is it. */
int cp_pb_entry_value_message(cp_call *call, ProtobufCMessage *entry, ProtobufCMessage **value);

/* The field descriptor `name` of msg's type; NULL when none. */
const ProtobufCFieldDescriptor *cp_pb_field(const ProtobufCMessage *msg, const char *name);

#endif
