/* pool.c - worker threads draining per-group FIFOs of tasks. No worker
 * starts with the pool: the first starts with the first task, more only
 * when a task that may run arrives while every worker is busy, up to the
 * maximum, so a service that was never called holds no worker thread and
 * starts without the cost of one (each costs about 1 MB and some ms of
 * CPU under Wine), an idle one holds the workers it once
 * needed. Workers, once started, stay until the pool is freed. Should a
 * worker fail to start while none runs, the tasks wait in the queue and
 * the next submit (or cp_pool_free) tries again.
 *
 * Each group has its own FIFO and a count of the workers it holds; a worker
 * takes the oldest task (lowest sequence number) among the groups under
 * their cap. Groups are few (one per gRPC group), so the table is a small
 * array searched linearly; slot 0 is the uncapped "no group" slot, also
 * used when there is no memory to record a new group. */
#include "rpc/pool.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"

enum { T_QUEUED = 1, T_RUNNING, T_RUNNING_WOKEN, T_PARKED };

typedef struct grp {
    const char *name; /* NULL for slot 0 */
    unsigned running;
    size_t queued;
    cp_task *head, *tail;
} grp;

struct cp_pool {
    cp_mutex *mu;
    cp_cond *cv;
    grp *groups;
    size_t n_groups, cap_groups;
    uint64_t seq;
    size_t busy;      /* queued + running + parked */
    unsigned running; /* tasks on a worker now */
    bool stopping;
    unsigned n, max;   /* started, the most we may start */
    unsigned starting; /* slots claimed by submitters starting a worker */
    unsigned group_cap;
    cp_thread **threads;
};

static unsigned slot_of(cp_pool *p, const char *name)
{
    if (name == NULL)
        return 0;
    for (size_t i = 1; i < p->n_groups; i++)
        if (strcmp(p->groups[i].name, name) == 0)
            return (unsigned)i;
    if (p->n_groups == p->cap_groups) {
        size_t cap = p->cap_groups * 2;
        grp *g = realloc(p->groups, cap * sizeof(*g));
        if (g == NULL)
            return 0; /* no memory: run it uncapped rather than not at all */
        p->groups = g;
        p->cap_groups = cap;
    }
    p->groups[p->n_groups] = (grp){.name = name};
    return (unsigned)p->n_groups++;
}

static bool may_run(const cp_pool *p, size_t slot)
{
    return slot == 0 || p->groups[slot].running < p->group_cap;
}

/* Queued tasks a worker could take now (each group limited by its cap). */
static size_t runnable(const cp_pool *p)
{
    size_t n = p->groups[0].queued;
    for (size_t i = 1; i < p->n_groups; i++) {
        const grp *g = &p->groups[i];
        size_t room = g->running < p->group_cap ? p->group_cap - g->running : 0;
        n += g->queued < room ? g->queued : room;
    }
    return n;
}

/* Appends t to its group's FIFO, or puts it first (a woken task: it was
 * queued before every task behind it, and may hold a lock handed to it). */
static void enqueue(cp_pool *p, cp_task *t, bool front)
{
    grp *g = &p->groups[t->slot];
    t->state = T_QUEUED;
    if (front) {
        t->seq = 0;
        t->next = g->head;
        g->head = t;
        if (g->tail == NULL)
            g->tail = t;
    } else {
        t->seq = ++p->seq;
        t->next = NULL;
        if (g->tail != NULL)
            g->tail->next = t;
        else
            g->head = t;
        g->tail = t;
    }
    g->queued++;
}

/* The oldest task of the groups under their cap, taken off its FIFO. */
static cp_task *pick(cp_pool *p)
{
    grp *best = NULL;
    for (size_t i = 0; i < p->n_groups; i++) {
        grp *g = &p->groups[i];
        if (g->head != NULL && may_run(p, i) && (best == NULL || g->head->seq < best->head->seq))
            best = g;
    }
    if (best == NULL)
        return NULL;
    cp_task *t = best->head;
    best->head = t->next;
    if (best->head == NULL)
        best->tail = NULL;
    best->queued--;
    return t;
}

static void worker(void *arg)
{
    cp_pool *p = arg;
    cp_mutex_lock(p->mu);
    for (;;) {
        cp_task *t = pick(p);
        if (t == NULL) {
            if (p->stopping && p->busy == 0)
                break;
            cp_cond_wait(p->cv, p->mu);
            continue;
        }
        unsigned slot = t->slot;
        t->state = T_RUNNING;
        p->groups[slot].running++;
        p->running++;
        cp_mutex_unlock(p->mu);
        cp_task_result r = t->run(t); /* DONE: t may be freed */
        cp_mutex_lock(p->mu);
        p->groups[slot].running--;
        p->running--;
        if (r == CP_TASK_PARKED) {
            if (t->state == T_RUNNING_WOKEN)
                enqueue(p, t, true); /* woken while returning: this worker takes it */
            else
                t->state = T_PARKED;
        } else if (--p->busy == 0 && p->stopping) {
            cp_cond_broadcast(p->cv); /* the others may go */
        }
        /* A slot of this group is free again: this worker takes its next
         * task itself (the loop), no other worker needs waking. */
    }
    cp_mutex_unlock(p->mu);
}

unsigned cp_pool_group_cap(const cp_pool *p)
{
    return p->group_cap;
}

cp_pool *cp_pool_new(unsigned n)
{
    if (n == 0)
        n = 1;
    cp_pool *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->mu = cp_mutex_new();
    p->cv = cp_cond_new();
    p->threads = calloc(n, sizeof(*p->threads));
    p->groups = calloc(8, sizeof(*p->groups));
    p->cap_groups = 8;
    p->n_groups = 1; /* slot 0: no group */
    p->max = n;
    p->group_cap = n >= 2 ? n - (n / 4 > 0 ? n / 4 : 1) : 1;
    if (p->mu == NULL || p->cv == NULL || p->threads == NULL || p->groups == NULL) {
        cp_pool_free(p);
        return NULL;
    }
    return p; /* no worker yet: kick() starts the first with the first task */
}

unsigned cp_pool_threads(cp_pool *p)
{
    cp_mutex_lock(p->mu);
    unsigned n = p->n;
    cp_mutex_unlock(p->mu);
    return n;
}

/* Called with p->mu held, after queueing: wakes a worker, and starts one
 * more when the tasks that may run outnumber the workers (started or
 * starting). Returns with p->mu released. */
static void kick(cp_pool *p)
{
    bool grow = p->running + runnable(p) > p->n + p->starting && p->n + p->starting < p->max;
    if (grow)
        p->starting++;
    cp_mutex_unlock(p->mu);
    /* After the unlock: a worker woken while this thread still held the
     * mutex would at once wait again, for the mutex (under Wine two more
     * futex calls and a context switch per call). The task is queued
     * already: a worker about to wait looks under the mutex first. */
    cp_cond_signal(p->cv);
    if (!grow)
        return;
    cp_thread *th = cp_thread_start(worker, p); /* NULL: the running workers carry on */
    cp_mutex_lock(p->mu);
    p->starting--;
    if (th != NULL)
        p->threads[p->n++] = th;
    cp_mutex_unlock(p->mu);
}

void cp_pool_submit(cp_pool *p, cp_task *t)
{
    cp_mutex_lock(p->mu);
    t->slot = slot_of(p, t->group);
    p->busy++;
    enqueue(p, t, false);
    kick(p);
}

void cp_pool_wake(cp_pool *p, cp_task *t)
{
    cp_mutex_lock(p->mu);
    if (t->state == T_RUNNING) {
        t->state = T_RUNNING_WOKEN; /* its worker queues it once run returns */
        cp_mutex_unlock(p->mu);
        return;
    }
    if (t->state != T_PARKED) { /* queued or woken already: nothing to do */
        cp_mutex_unlock(p->mu);
        return;
    }
    enqueue(p, t, true);
    kick(p);
}

size_t cp_pool_busy(cp_pool *p)
{
    cp_mutex_lock(p->mu);
    size_t n = p->busy;
    cp_mutex_unlock(p->mu);
    return n;
}

void cp_pool_free(cp_pool *p)
{
    if (p == NULL)
        return;
    if (p->mu != NULL && p->cv != NULL) {
        cp_mutex_lock(p->mu);
        /* Tasks queued while no worker could be started: one more try, so
         * that they run before the pool goes (nothing submits once the
         * pool is being freed, so no other thread starts one now). */
        if (p->n == 0 && p->busy > 0 && p->starting == 0 &&
            (p->threads[0] = cp_thread_start(worker, p)) != NULL)
            p->n = 1;
        p->stopping = true;
        cp_cond_broadcast(p->cv);
        cp_mutex_unlock(p->mu);
        for (unsigned i = 0; i < p->n; i++)
            cp_thread_join(p->threads[i]);
    }
    free(p->groups);
    free(p->threads);
    cp_cond_free(p->cv);
    cp_mutex_free(p->mu);
    free(p);
}
