/* arena.h - per-call memory: everything a call allocates is freed at once.
 *
 * An arena hands out 16-byte aligned blocks from chunks; cp_arena_free()
 * releases all of them. It also provides a ProtobufCAllocator so that
 * decoded requests live in the arena too. Not thread-safe: one call, one
 * thread at a time.
 */
#ifndef CP_ARENA_H
#define CP_ARENA_H

#include <stddef.h>
#include <protobuf-c/protobuf-c.h>

#include "base/status.h"

typedef struct cp_arena cp_arena;

/* Returns NULL when out of memory. Caller frees with cp_arena_free(). */
cp_arena *cp_arena_new(void);
void cp_arena_free(cp_arena *a);

/* Zeroed memory owned by the arena; NULL when out of memory. */
void *cp_arena_alloc(cp_arena *a, size_t n);
char *cp_arena_strdup(cp_arena *a, const char *s);
char *cp_arena_strndup(cp_arena *a, const char *s, size_t n);
char *cp_arena_printf(cp_arena *a, const char *fmt, ...) CP_PRINTF(2, 3);

/* A protobuf-c allocator backed by the arena (its free is a no-op). The
 * returned struct lives inside the arena. */
ProtobufCAllocator *cp_arena_allocator(cp_arena *a);

#endif
