/* inflight.c - a list of the identical-call groups in flight, under one
 * mutex. Each entry has its key (method path and fields), the waiter of
 * the call doing the work (the leader: the same on every run of a pooled
 * call), and the waiters of the identical calls queued behind it. When the
 * leader is done its result stays in the entry until every follower has
 * run again and taken it (or ended without it). A leader that ends without
 * a result (its client gave up while it was queued behind the disk's lock)
 * hands the work to the first follower. Few calls are in flight at once:
 * a linear list costs nothing next to a format. */
#include "groups/common/inflight.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "dispatch/call.h"

typedef struct follower {
    cp_waiter *w;
    struct follower *next;
} follower;

typedef struct entry {
    char *key;
    size_t key_len;
    cp_waiter *leader; /* NULL once done */
    bool done;
    int status;
    char msg[CP_ERROR_MSG_MAX];
    follower *followers; /* oldest first */
    struct entry *next;
} entry;

struct cp_inflight {
    cp_mutex *mu;
    entry *list;
};

cp_inflight *cp_inflight_new(void)
{
    cp_inflight *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    if ((t->mu = cp_mutex_new()) == NULL) {
        free(t);
        return NULL;
    }
    return t;
}

static void entry_free(entry *e)
{
    for (follower *f = e->followers, *next; f != NULL; f = next) {
        next = f->next;
        free(f);
    }
    free(e->key);
    free(e);
}

void cp_inflight_free(cp_inflight *t)
{
    if (t == NULL)
        return;
    for (entry *e = t->list, *next; e != NULL; e = next) {
        next = e->next;
        entry_free(e);
    }
    cp_mutex_free(t->mu);
    free(t);
}

/* The method path, then each part, each ended by a NUL byte. */
static char *make_key(cp_call *call, const char *const *parts, size_t n, size_t *len)
{
    const char *part[8];
    if (n > sizeof(part) / sizeof(part[0]))
        return NULL;
    for (size_t i = 0; i < n; i++)
        part[i] = parts[i] != NULL ? parts[i] : "";
    parts = part;
    const char *path = cp_call_path(call);
    size_t total = strlen(path) + 1;
    for (size_t i = 0; i < n; i++)
        total += strlen(parts[i]) + 1;
    char *k = malloc(total), *p = k;
    if (k == NULL)
        return NULL;
    memcpy(p, path, strlen(path) + 1);
    p += strlen(path) + 1;
    for (size_t i = 0; i < n; i++) {
        memcpy(p, parts[i], strlen(parts[i]) + 1);
        p += strlen(parts[i]) + 1;
    }
    *len = total;
    return k;
}

static void unlink_entry(cp_inflight *t, entry *e)
{
    for (entry **pe = &t->list; *pe != NULL; pe = &(*pe)->next)
        if (*pe == e) {
            *pe = e->next;
            return;
        }
}

/* Takes w out of e's followers; true when it was there. */
static bool drop_follower(entry *e, cp_waiter *w)
{
    for (follower **pf = &e->followers; *pf != NULL; pf = &(*pf)->next)
        if ((*pf)->w == w) {
            follower *f = *pf;
            *pf = f->next;
            free(f);
            return true;
        }
    return false;
}

static bool is_follower(const entry *e, const cp_waiter *w)
{
    for (const follower *f = e->followers; f != NULL; f = f->next)
        if (f->w == w)
            return true;
    return false;
}

/* A pooled call that took part is finished: it no longer waits, and work
 * it led without finishing goes to the first follower. */
static void at_end(void *ctx, cp_waiter *w)
{
    cp_inflight *t = ctx;
    cp_mutex_lock(t->mu);
    for (entry *e = t->list, *next; e != NULL; e = next) {
        next = e->next;
        drop_follower(e, w);
        if (!e->done && e->leader == w) {
            follower *f = e->followers;
            if (f != NULL) {
                e->leader = f->w;
                e->followers = f->next;
                cp_waiter_wake(f->w); /* only queues it: safe under our mutex */
                free(f);
            } else {
                e->leader = NULL;
                e->done = true; /* nobody left: freed below */
            }
        }
        if (e->done && e->followers == NULL) {
            unlink_entry(t, e);
            entry_free(e);
        }
    }
    cp_mutex_unlock(t->mu);
}

/* The result the leader left, as this call's. */
static int take_result(cp_call *call, const entry *e)
{
    if (e->status == CP_OK)
        return CP_OK;
    return cp_call_fail(call, e->status, "%s", e->msg);
}

int cp_inflight_join(cp_inflight *t, cp_call *call, const char *const *parts, size_t n)
{
    cp_waiter *w = cp_call_waiter(call);
    if (w == NULL)
        return CP_INFLIGHT_LEAD;
    size_t len = 0;
    char *key = make_key(call, parts, n, &len);
    if (key == NULL)
        return CP_INFLIGHT_LEAD; /* no memory to compare: run it as before */
    cp_mutex_lock(t->mu);
    if (cp_waiter_at_end(w, at_end, t) != 0) {
        cp_mutex_unlock(t->mu);
        free(key);
        return CP_INFLIGHT_LEAD;
    }
    int rc = CP_INFLIGHT_LEAD;
    entry *same = NULL;
    for (entry *e = t->list; e != NULL; e = e->next) {
        if (is_follower(e, w)) { /* run again: the leader is done, or not yet */
            if (!e->done) {
                rc = CP_PARKED;
                goto out;
            }
            rc = take_result(call, e);
            drop_follower(e, w);
            if (e->followers == NULL && e->leader == NULL) {
                unlink_entry(t, e);
                entry_free(e);
            }
            goto out;
        }
        if (!e->done && e->leader == w) /* run again after the disk's lock */
            goto out;
        if (!e->done && same == NULL && e->key_len == len && memcmp(e->key, key, len) == 0)
            same = e;
    }
    if (same != NULL) {
        follower *f = malloc(sizeof(*f));
        if (f != NULL) {
            *f = (follower){.w = w};
            follower **tail = &same->followers;
            while (*tail != NULL)
                tail = &(*tail)->next;
            *tail = f;
            rc = CP_PARKED;
        }
        goto out; /* no memory to wait: run it as before */
    }
    entry *e = calloc(1, sizeof(*e));
    if (e != NULL) {
        e->key = key;
        e->key_len = len;
        e->leader = w;
        e->next = t->list;
        t->list = e;
        key = NULL;
    }
out:
    cp_mutex_unlock(t->mu);
    free(key);
    return rc;
}

void cp_inflight_done(cp_inflight *t, cp_call *call, int rc)
{
    cp_waiter *w = cp_call_waiter(call);
    if (w == NULL)
        return;
    cp_mutex_lock(t->mu);
    for (entry *e = t->list; e != NULL; e = e->next) {
        if (e->done || e->leader != w)
            continue;
        e->done = true;
        e->leader = NULL;
        e->status = rc;
        if (rc != CP_OK) {
            const cp_error *err = cp_call_error(call);
            memcpy(e->msg, err->msg, sizeof(e->msg));
            if (err->status == CP_OK) /* defensive: a status without a message */
                e->msg[0] = '\0';
        }
        if (e->followers == NULL) {
            unlink_entry(t, e);
            entry_free(e);
        } else {
            for (follower *f = e->followers; f != NULL; f = f->next)
                cp_waiter_wake(f->w); /* only queues them: safe under our mutex */
        }
        break;
    }
    cp_mutex_unlock(t->mu);
}

size_t cp_inflight_waiting(cp_inflight *t)
{
    size_t n = 0;
    cp_mutex_lock(t->mu);
    for (const entry *e = t->list; e != NULL; e = e->next)
        if (!e->done)
            for (const follower *f = e->followers; f != NULL; f = f->next)
                n++;
    cp_mutex_unlock(t->mu);
    return n;
}
