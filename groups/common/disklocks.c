/* disklocks.c - a table of the disks held or awaited, under one mutex.
 * Each entry has its owner and a FIFO of the calls waiting for it. An
 * owner is a call's waiter (the same on every run of a pooled call) or,
 * for a call without one, the cp_call itself. Unlocking hands the lock to
 * the first in line: a parked call is woken (and finds the lock its own
 * when it runs again), a blocked thread is signalled. Few disks are busy
 * at once, so a linear table costs nothing next to a disk IOCTL. */
#include "groups/common/disklocks.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "base/thread.h"

typedef struct entry {
    const void *who;
    cp_waiter *w; /* parked call to wake; NULL for a blocked thread */
    bool granted; /* blocked thread: the lock is handed to it */
    struct entry *next;
} entry;

typedef struct rec {
    uint32_t disk;
    const void *owner;
    entry *head, *tail;
} rec;

struct cp_disklocks {
    cp_mutex *mu;
    cp_cond *cv;
    rec *recs;
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
    for (size_t i = 0; i < l->n; i++)
        for (entry *e = l->recs[i].head, *next; e != NULL; e = next) {
            next = e->next;
            if (e->w != NULL)
                free(e);
        }
    cp_mutex_free(l->mu);
    cp_cond_free(l->cv);
    free(l->recs);
    free(l);
}

static const void *who(const cp_call *call)
{
    cp_waiter *w = cp_call_waiter(call);
    return w != NULL ? (const void *)w : (const void *)call;
}

static rec *find(cp_disklocks *l, uint32_t disk)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->recs[i].disk == disk)
            return &l->recs[i];
    return NULL;
}

/* A new entry owned by owner; NULL when out of memory. */
static rec *add(cp_disklocks *l, uint32_t disk, const void *owner)
{
    if (l->n == l->cap) {
        size_t cap = l->cap > 0 ? l->cap * 2 : 16;
        rec *p = realloc(l->recs, cap * sizeof(*p));
        if (p == NULL)
            return NULL;
        l->recs = p;
        l->cap = cap;
    }
    rec *r = &l->recs[l->n++];
    *r = (rec){.disk = disk, .owner = owner};
    return r;
}

static void append(rec *r, entry *e)
{
    e->next = NULL;
    if (r->tail != NULL)
        r->tail->next = e;
    else
        r->head = e;
    r->tail = e;
}

/* Gives r to the first in line, or drops it when nobody waits. Returns the
 * parked call to wake (outside the mutex), if any. */
static cp_waiter *hand_over(cp_disklocks *l, rec *r)
{
    entry *e = r->head;
    if (e == NULL) {
        *r = l->recs[--l->n];
        return NULL;
    }
    r->head = e->next;
    if (r->head == NULL)
        r->tail = NULL;
    r->owner = e->who;
    if (e->w == NULL) {
        e->granted = true;
        cp_cond_broadcast(l->cv);
        return NULL;
    }
    cp_waiter *w = e->w;
    free(e);
    return w;
}

/* Runs when a pooled call is finished: what it still owns (a lock handed
 * to it that it no longer wanted, or one it kept) goes to the next. */
static void at_end(void *ctx, cp_waiter *w)
{
    cp_disklocks *l = ctx;
    cp_mutex_lock(l->mu);
    for (size_t i = 0; i < l->n;) {
        rec *r = &l->recs[i];
        for (entry **pe = &r->head; *pe != NULL;) { /* not queued normally: defensive */
            entry *e = *pe;
            if (e->w == w) {
                *pe = e->next;
                free(e);
            } else {
                pe = &e->next;
            }
        }
        r->tail = NULL;
        for (entry *e = r->head; e != NULL; e = e->next)
            r->tail = e;
        if (r->owner != w) {
            i++;
            continue;
        }
        cp_waiter *next = hand_over(l, r);
        if (next != NULL) {
            cp_mutex_unlock(l->mu);
            cp_waiter_wake(next);
            cp_mutex_lock(l->mu);
        }
        i = 0; /* the table may have changed: look again */
    }
    cp_mutex_unlock(l->mu);
}

int cp_disklocks_lock(cp_disklocks *l, cp_call *call, uint32_t disk)
{
    const void *me = who(call);
    cp_waiter *w = cp_call_waiter(call);
    cp_mutex_lock(l->mu);
    /* A pooled call gives up at its end whatever it still owns. */
    bool tracked = w != NULL && cp_waiter_at_end(w, at_end, l) == 0;
    rec *r;
    while ((r = find(l, disk)) == NULL) {
        if (add(l, disk, me) != NULL) {
            cp_mutex_unlock(l->mu);
            return CP_OK;
        }
        /* no memory to record ours yet: wait for an unlock (which frees a
         * slot too) */
        cp_cond_timedwait(l->cv, l->mu, 100);
    }
    if (r->owner == me) { /* handed to us while we were parked */
        cp_mutex_unlock(l->mu);
        return CP_OK;
    }
    if (tracked) {
        entry *e = malloc(sizeof(*e));
        if (e != NULL) {
            *e = (entry){.who = me, .w = w};
            append(r, e);
            cp_mutex_unlock(l->mu);
            return CP_PARKED;
        }
    }
    /* No waiter (or no room to park): wait here, in line all the same. */
    entry e = {.who = me};
    append(r, &e);
    while (!e.granted)
        cp_cond_wait(l->cv, l->mu);
    cp_mutex_unlock(l->mu);
    return CP_OK;
}

void cp_disklocks_unlock(cp_disklocks *l, cp_call *call, uint32_t disk)
{
    cp_waiter *next = NULL;
    cp_mutex_lock(l->mu);
    rec *r = find(l, disk);
    if (r != NULL && r->owner == who(call))
        next = hand_over(l, r);
    cp_mutex_unlock(l->mu);
    if (next != NULL)
        cp_waiter_wake(next);
}

void cp_disklocks_each(cp_disklocks *l, void (*fn)(void *ctx, uint32_t disk, size_t waiting),
                       void *ctx)
{
    cp_mutex_lock(l->mu);
    for (size_t i = 0; i < l->n; i++) {
        size_t waiting = 0;
        for (const entry *e = l->recs[i].head; e != NULL; e = e->next)
            waiting++;
        fn(ctx, l->recs[i].disk, waiting);
    }
    cp_mutex_unlock(l->mu);
}
