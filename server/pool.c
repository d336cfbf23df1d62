/* pool.c - worker threads draining a FIFO of tasks. One worker starts with
 * the pool; more start only when a task arrives while every worker is busy,
 * up to the maximum, so an idle service holds one thread (each costs about
 * 1 MB under Wine) and a busy one as many as it needs. Workers, once
 * started, stay until the pool is freed. */
#include "pool.h"

#include <stdbool.h>
#include <stdlib.h>

#include "thread.h"

struct cp_pool {
    cp_mutex *mu;
    cp_cond *cv;
    cp_task *head, *tail;
    size_t busy; /* queued + running */
    bool stopping;
    unsigned n, max;   /* started, the most we may start */
    unsigned starting; /* slots claimed by submitters starting a worker */
    cp_thread **threads;
};

static void worker(void *arg)
{
    cp_pool *p = arg;
    cp_mutex_lock(p->mu);
    for (;;) {
        while (p->head == NULL && !p->stopping)
            cp_cond_wait(p->cv, p->mu);
        cp_task *t = p->head;
        if (t == NULL)
            break; /* stopping and nothing queued */
        p->head = t->next;
        if (p->head == NULL)
            p->tail = NULL;
        cp_mutex_unlock(p->mu);
        t->run(t); /* may free t */
        cp_mutex_lock(p->mu);
        p->busy--;
    }
    cp_mutex_unlock(p->mu);
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
    p->max = n;
    if (p->mu == NULL || p->cv == NULL || p->threads == NULL)
        goto fail;
    p->threads[0] = cp_thread_start(worker, p);
    if (p->threads[0] == NULL)
        goto fail;
    p->n = 1;
    return p;
fail:
    cp_pool_free(p);
    return NULL;
}

void cp_pool_submit(cp_pool *p, cp_task *t)
{
    t->next = NULL;
    cp_mutex_lock(p->mu);
    if (p->tail != NULL)
        p->tail->next = t;
    else
        p->head = t;
    p->tail = t;
    p->busy++;
    /* More tasks than workers (started or starting): one more worker. */
    bool grow = p->busy > p->n + p->starting && p->n + p->starting < p->max;
    cp_cond_signal(p->cv);
    if (!grow) {
        cp_mutex_unlock(p->mu);
        return;
    }
    p->starting++;
    cp_mutex_unlock(p->mu);
    cp_thread *th = cp_thread_start(worker, p); /* NULL: the running workers carry on */
    cp_mutex_lock(p->mu);
    p->starting--;
    if (th != NULL)
        p->threads[p->n++] = th;
    cp_mutex_unlock(p->mu);
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
        p->stopping = true;
        cp_cond_broadcast(p->cv);
        cp_mutex_unlock(p->mu);
        for (unsigned i = 0; i < p->n; i++)
            cp_thread_join(p->threads[i]);
    }
    free(p->threads);
    cp_cond_free(p->cv);
    cp_mutex_free(p->mu);
    free(p);
}
