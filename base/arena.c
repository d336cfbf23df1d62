/* arena.c - chunked bump allocator for per-call memory. */
#include "base/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN 4096u
#define ALIGN 16u

typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} chunk;

struct cp_arena {
    chunk *head;
    ProtobufCAllocator pbc;
};

static void *pbc_alloc(void *data, size_t size)
{
    return cp_arena_alloc(data, size);
}

static void pbc_free(void *data, void *ptr)
{
    (void)data;
    (void)ptr;
}

cp_arena *cp_arena_new(void)
{
    cp_arena *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->pbc.alloc = pbc_alloc;
    a->pbc.free = pbc_free;
    a->pbc.allocator_data = a;
    return a;
}

void cp_arena_free(cp_arena *a)
{
    if (a == NULL)
        return;
    chunk *c = a->head;
    while (c != NULL) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}

void *cp_arena_alloc(cp_arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX - ALIGN - sizeof(chunk))
        return NULL;
    n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    chunk *c = a->head;
    if (c == NULL || c->size - c->used < n) {
        size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;
        chunk *nc = malloc(sizeof(chunk) + size);
        if (nc == NULL)
            return NULL;
        nc->size = size;
        nc->used = 0;
        /* A big one-off block goes behind the current chunk so the
         * current chunk's free space stays in use. */
        if (c != NULL && size == n && c->size - c->used > CHUNK_MIN / 4) {
            nc->next = c->next;
            c->next = nc;
            nc->used = n;
            memset(nc->data, 0, n);
            return nc->data;
        }
        nc->next = c;
        a->head = c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *cp_arena_strndup(cp_arena *a, const char *s, size_t n)
{
    char *p = cp_arena_alloc(a, n + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *cp_arena_strdup(cp_arena *a, const char *s)
{
    return cp_arena_strndup(a, s, strlen(s));
}

char *cp_arena_printf(cp_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = cp_arena_alloc(a, (size_t)n + 1);
    if (p == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

ProtobufCAllocator *cp_arena_allocator(cp_arena *a)
{
    return &a->pbc;
}
