/* pool.c - worker threads draining a FIFO of tasks. */
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
    unsigned n;
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
    if (p->mu == NULL || p->cv == NULL || p->threads == NULL)
        goto fail;
    for (; p->n < n; p->n++) {
        p->threads[p->n] = cp_thread_start(worker, p);
        if (p->threads[p->n] == NULL)
            goto fail;
    }
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
    cp_cond_signal(p->cv);
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
