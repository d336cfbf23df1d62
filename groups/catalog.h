/* catalog.h - the 23 (group, version) services upstream serves, in
 * upstream's start order, with their generated protobuf-c service
 * descriptors (every RPC the proto declares). Shared by the server's
 * registry and the CLI. */
#ifndef CP_CATALOG_H
#define CP_CATALOG_H

#include <stddef.h>
#include <protobuf-c/protobuf-c.h>

typedef struct cp_catalog_entry {
    const char *group;                      /* "filesystem" */
    const char *version;                    /* "v1" */
    const ProtobufCServiceDescriptor *desc; /* desc->name is "v1.Filesystem" */
} cp_catalog_entry;

extern const cp_catalog_entry cp_catalog[];
extern const size_t cp_catalog_len;

/* The entry for group/version, NULL if none. */
const cp_catalog_entry *cp_catalog_find(const char *group, const char *version);

#endif
