/* disklocks.c - a set of held disk numbers under one mutex; waiters sleep
 * on one condition variable. Few disks are busy at once, so a linear set
 * and broadcast wake-ups cost nothing measurable next to a disk IOCTL. */
#include "disklocks.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "../../server/thread.h"

struct cp_disklocks {
    cp_mutex *mu;
    cp_cond *cv;
    uint32_t *held;
    size_t n, cap;
};

cp_disklocks *cp_disklocks_new(void)
{
    cp_disklocks *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->mu = cp_mutex_new();
    l->cv = cp_cond_new();
    if (l->mu == NULL || l->cv == NULL) {
        cp_disklocks_free(l);
        return NULL;
    }
    return l;
}

void cp_disklocks_free(cp_disklocks *l)
{
    if (l == NULL)
        return;
    cp_mutex_free(l->mu);
    cp_cond_free(l->cv);
    free(l->held);
    free(l);
}

static bool held(const cp_disklocks *l, uint32_t disk, size_t *at)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->held[i] == disk) {
            *at = i;
            return true;
        }
    return false;
}

void cp_disklocks_lock(cp_disklocks *l, uint32_t disk)
{
    size_t at;
    cp_mutex_lock(l->mu);
    for (;;) {
        if (!held(l, disk, &at)) {
            if (l->n < l->cap)
                break;
            size_t cap = l->cap > 0 ? l->cap * 2 : 16;
            uint32_t *p = realloc(l->held, cap * sizeof(*p));
            if (p != NULL) {
                l->held = p;
                l->cap = cap;
                break;
            }
        }
        /* Held by another call, or no memory to record ours yet: wait for
         * an unlock (which frees a slot too). */
        cp_cond_timedwait(l->cv, l->mu, 100);
    }
    l->held[l->n++] = disk;
    cp_mutex_unlock(l->mu);
}

void cp_disklocks_unlock(cp_disklocks *l, uint32_t disk)
{
    size_t at;
    cp_mutex_lock(l->mu);
    if (held(l, disk, &at))
        l->held[at] = l->held[--l->n];
    cp_cond_broadcast(l->cv);
    cp_mutex_unlock(l->mu);
}
