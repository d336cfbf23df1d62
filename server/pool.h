/* pool.h - worker threads running queued tasks, so that handlers never run
 * on a connection's I/O thread. Workers start on demand, up to a maximum. */
#ifndef CP_POOL_H
#define CP_POOL_H

#include <stddef.h>

typedef struct cp_task cp_task;
struct cp_task {
    void (*run)(cp_task *t); /* runs on a worker thread */
    cp_task *next;           /* owned by the pool while queued */
};

typedef struct cp_pool cp_pool;

/* Starts one worker thread; up to n (>= 1) run once tasks wait for one.
 * NULL on failure. */
cp_pool *cp_pool_new(unsigned n);

/* Queues t; never blocks on a running task. */
void cp_pool_submit(cp_pool *p, cp_task *t);

/* Tasks queued or running. */
size_t cp_pool_busy(cp_pool *p);

/* Runs what is queued, then stops and joins the workers and frees p. */
void cp_pool_free(cp_pool *p);

#endif
