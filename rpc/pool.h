/* pool.h - worker threads running queued tasks, so that handlers never run
 * on a connection's I/O thread. Workers start on demand, up to a maximum.
 *
 * Scheduling: tasks carry a group (the gRPC group of the call: "disk",
 * "filesystem", ...). Tasks of one group hold at most cp_pool_group_cap()
 * workers at once; beyond that they wait in the queue, so one group whose
 * calls are slow always leaves workers to the others. Among the tasks that
 * may run, the oldest runs first.
 *
 * Parking: a task that must wait for something held by another task (a
 * disk's lock) does not wait on its worker. Its run returns CP_TASK_PARKED
 * and the worker moves on; whoever frees the resource calls cp_pool_wake()
 * and the task is queued to run again (ahead of the tasks of its group that
 * never ran). A parked task holds no worker but still counts as busy. */
#ifndef CP_POOL_H
#define CP_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef enum cp_task_result {
    CP_TASK_DONE,   /* finished; the pool no longer touches the task (it may be freed) */
    CP_TASK_PARKED, /* waits for cp_pool_wake() to run again */
} cp_task_result;

typedef struct cp_task cp_task;
struct cp_task {
    cp_task_result (*run)(cp_task *t); /* runs on a worker thread */
    const char *group;                 /* NULL: no group, no cap; else must outlive the task */
    /* owned by the pool while queued, running or parked */
    cp_task *next;
    uint64_t seq;
    unsigned slot;
    int state;
};

typedef struct cp_pool cp_pool;

/* Starts no thread: the first worker starts with the first task, up to n
 * (>= 1) run once tasks wait for one. NULL on failure. */
cp_pool *cp_pool_new(unsigned n);

/* Worker threads started so far (0 until the first task). */
unsigned cp_pool_threads(cp_pool *p);

/* Workers one group may hold at once: n minus a quarter of n (at least
 * one left to the other groups) when n >= 2; 1 when n == 1. */
unsigned cp_pool_group_cap(const cp_pool *p);

/* Queues t; never blocks on a running task. */
void cp_pool_submit(cp_pool *p, cp_task *t);

/* Queues a parked task to run again. Safe from any thread, also while the
 * task's run is still returning CP_TASK_PARKED (it then runs again at once
 * after). Only for a task that parked or is parking. */
void cp_pool_wake(cp_pool *p, cp_task *t);

/* Tasks queued, running or parked. */
size_t cp_pool_busy(cp_pool *p);

/* Runs what is queued (and what parked tasks still need, as they are
 * woken), then stops and joins the workers and frees p. */
void cp_pool_free(cp_pool *p);

#endif
