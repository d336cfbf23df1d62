/* test_pool.c - the worker pool: a blocked task holds up no other task
 * while the limit allows, workers start only when needed, one group never
 * holds every worker, a parked task holds no worker and runs again when
 * woken, and freeing the pool runs what is queued (and parked). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include "rpc/pool.h"
#include "base/thread.h"

typedef struct gate {
    cp_mutex *mu;
    cp_cond *cv;
    int running, done;
    bool open;
} gate;

typedef struct gtask {
    cp_task task;
    gate *g;
} gtask;

/* Runs until the gate opens (or 5 s pass: then the test fails). */
static cp_task_result blocking(cp_task *t)
{
    gate *g = ((gtask *)t)->g;
    cp_mutex_lock(g->mu);
    g->running++;
    cp_cond_broadcast(g->cv);
    int64_t until = cp_now_ms() + 5000;
    while (!g->open && cp_now_ms() < until)
        cp_cond_timedwait(g->cv, g->mu, 100);
    g->done++;
    cp_cond_broadcast(g->cv);
    cp_mutex_unlock(g->mu);
    return CP_TASK_DONE;
}

/* Waits up to 5 s for at least n tasks running; returns how many are. */
static int wait_running(gate *g, int n)
{
    cp_mutex_lock(g->mu);
    int64_t until = cp_now_ms() + 5000;
    while (g->running < n && cp_now_ms() < until)
        cp_cond_timedwait(g->cv, g->mu, 100);
    int r = g->running;
    cp_mutex_unlock(g->mu);
    return r;
}

static void gate_init(gate *g)
{
    g->mu = cp_mutex_new();
    g->cv = cp_cond_new();
    g->running = g->done = 0;
    g->open = false;
    assert_non_null(g->mu);
    assert_non_null(g->cv);
}

static void gate_open(gate *g)
{
    cp_mutex_lock(g->mu);
    g->open = true;
    cp_cond_broadcast(g->cv);
    cp_mutex_unlock(g->mu);
}

static void gate_free(gate *g)
{
    cp_cond_free(g->cv);
    cp_mutex_free(g->mu);
}

/* Four blocked tasks and a limit of four: all four run at once, so the
 * pool grew from no worker to four. */
static void test_grows_to_the_limit(void **state)
{
    (void)state;
    gate g;
    gate_init(&g);
    cp_pool *p = cp_pool_new(4);
    assert_non_null(p);
    gtask t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (gtask){.task.run = blocking, .g = &g}; /* no group: no cap */
        cp_pool_submit(p, &t[i].task);
    }
    assert_int_equal(wait_running(&g, 4), 4);
    assert_int_equal(cp_pool_busy(p), 4);
    gate_open(&g);
    cp_pool_free(p);
    assert_int_equal(g.done, 4);
    gate_free(&g);
}

/* A new pool holds no thread (start-up does not pay for one); the first
 * task starts the first worker and runs on it. */
static void test_no_thread_until_the_first_task(void **state)
{
    (void)state;
    cp_pool *p = cp_pool_new(8);
    assert_non_null(p);
    assert_int_equal(cp_pool_threads(p), 0);
    gate g;
    gate_init(&g);
    gtask t = {.task.run = blocking, .task.group = "disk", .g = &g};
    cp_pool_submit(p, &t.task);
    assert_int_equal(wait_running(&g, 1), 1);
    assert_int_equal(cp_pool_threads(p), 1);
    gate_open(&g);
    cp_pool_free(p);
    assert_int_equal(g.done, 1);
    gate_free(&g);
}

/* Beyond the limit a task waits for a worker - and still runs. */
static void test_waits_beyond_the_limit(void **state)
{
    (void)state;
    gate g;
    gate_init(&g);
    cp_pool *p = cp_pool_new(2);
    assert_non_null(p);
    gtask t[3];
    for (int i = 0; i < 3; i++) {
        t[i] = (gtask){.task.run = blocking, .g = &g}; /* no group: no cap */
        cp_pool_submit(p, &t[i].task);
    }
    assert_int_equal(wait_running(&g, 2), 2);
    /* give a (wrong) third worker time to show up */
    cp_mutex_lock(g.mu);
    cp_cond_timedwait(g.cv, g.mu, 200);
    int running = g.running;
    cp_mutex_unlock(g.mu);
    assert_int_equal(running, 2);
    assert_int_equal(cp_pool_busy(p), 3);
    gate_open(&g);
    assert_int_equal(wait_running(&g, 3), 3);
    cp_pool_free(p);
    assert_int_equal(g.done, 3);
    gate_free(&g);
}

/* Tasks still queued when the pool is freed run before it goes. */
typedef struct mark {
    cp_task task;
    int *ran;
} mark;

static cp_task_result mark_run(cp_task *t)
{
    *((mark *)t)->ran = 1;
    return CP_TASK_DONE;
}

static void test_frees_after_running_the_queue(void **state)
{
    (void)state;
    cp_pool *p = cp_pool_new(64);
    assert_non_null(p);
    int ran[100] = {0};
    mark m[100];
    for (int i = 0; i < 100; i++) {
        m[i] = (mark){.task.run = mark_run, .ran = &ran[i]};
        cp_pool_submit(p, &m[i].task);
    }
    cp_pool_free(p);
    for (int i = 0; i < 100; i++)
        assert_int_equal(ran[i], 1);
}

/* Waits up to 5 s for *flag to be set (written by a worker). */
static bool wait_flag(gate *g, const int *flag)
{
    cp_mutex_lock(g->mu);
    int64_t until = cp_now_ms() + 5000;
    while (!*flag && cp_now_ms() < until)
        cp_cond_timedwait(g->cv, g->mu, 20);
    bool set = *flag != 0;
    cp_mutex_unlock(g->mu);
    return set;
}

typedef struct flagtask {
    cp_task task;
    gate *g;
    int ran;
} flagtask;

static cp_task_result flag_run(cp_task *t)
{
    flagtask *f = (flagtask *)t;
    cp_mutex_lock(f->g->mu);
    f->ran = 1;
    cp_cond_broadcast(f->g->cv);
    cp_mutex_unlock(f->g->mu);
    return CP_TASK_DONE;
}

/* Six slow tasks of one group on a pool of four: the group holds three
 * workers (its cap), the fourth runs another group's task at once; the
 * other three slow tasks wait their turn and run once the gate opens. */
static void test_one_group_never_holds_every_worker(void **state)
{
    (void)state;
    gate g;
    gate_init(&g);
    cp_pool *p = cp_pool_new(4);
    assert_non_null(p);
    assert_int_equal(cp_pool_group_cap(p), 3);
    gtask t[6];
    for (int i = 0; i < 6; i++) {
        t[i] = (gtask){.task = {.run = blocking, .group = "disk"}, .g = &g};
        cp_pool_submit(p, &t[i].task);
    }
    assert_int_equal(wait_running(&g, 3), 3);
    flagtask other = {.task = {.run = flag_run, .group = "filesystem"}, .g = &g};
    int64_t t0 = cp_now_ms();
    cp_pool_submit(p, &other.task);
    assert_true(wait_flag(&g, &other.ran));
    assert_true(cp_now_ms() - t0 < 1000);
    cp_mutex_lock(g.mu);
    int running = g.running;
    cp_mutex_unlock(g.mu);
    assert_int_equal(running, 3); /* the cap held */
    gate_open(&g);
    cp_pool_free(p);
    assert_int_equal(g.done, 6);
    gate_free(&g);
}

static void test_group_cap_by_size(void **state)
{
    (void)state;
    const unsigned n[] = {1, 2, 3, 4, 8, 16}, cap[] = {1, 1, 2, 3, 6, 12};
    for (size_t i = 0; i < 6; i++) {
        cp_pool *p = cp_pool_new(n[i]);
        assert_non_null(p);
        assert_int_equal(cp_pool_group_cap(p), cap[i]);
        cp_pool_free(p);
    }
}

/* A task that parks on its first run; records its runs. */
typedef struct parker {
    cp_task task;
    gate *g;
    cp_pool *p;
    int runs;
    bool wake_self; /* wake itself before returning PARKED (a lock handed
                       over while the run is still returning) */
} parker;

static cp_task_result park_run(cp_task *t)
{
    parker *k = (parker *)t;
    cp_mutex_lock(k->g->mu);
    int run = ++k->runs;
    cp_cond_broadcast(k->g->cv);
    cp_mutex_unlock(k->g->mu);
    if (run > 1)
        return CP_TASK_DONE;
    if (k->wake_self)
        cp_pool_wake(k->p, t);
    return CP_TASK_PARKED;
}

static int runs_of(parker *k)
{
    cp_mutex_lock(k->g->mu);
    int r = k->runs;
    cp_mutex_unlock(k->g->mu);
    return r;
}

/* One worker: a parked task leaves it free for the next task, counts as
 * busy, and runs again when woken. */
static void test_parked_task_holds_no_worker(void **state)
{
    (void)state;
    gate g;
    gate_init(&g);
    cp_pool *p = cp_pool_new(1);
    assert_non_null(p);
    parker k = {.task = {.run = park_run, .group = "disk"}, .g = &g, .p = p};
    cp_pool_submit(p, &k.task);
    flagtask other = {.task = {.run = flag_run, .group = "disk"}, .g = &g};
    cp_pool_submit(p, &other.task);
    assert_true(wait_flag(&g, &other.ran)); /* the one worker was free */
    assert_int_equal(runs_of(&k), 1);
    int64_t until = cp_now_ms() + 5000; /* the worker counts `other` done after its run */
    while (cp_pool_busy(p) > 1 && cp_now_ms() < until)
        ;
    assert_int_equal(cp_pool_busy(p), 1); /* parked: still in flight */
    cp_pool_wake(p, &k.task);
    until = cp_now_ms() + 5000;
    while (runs_of(&k) < 2 && cp_now_ms() < until)
        ;
    assert_int_equal(runs_of(&k), 2);
    cp_pool_free(p);
    assert_int_equal(k.runs, 2);
    gate_free(&g);
}

/* Woken while its run was still returning PARKED: it runs again (the wake
 * is not lost), and freeing the pool waits for it. */
static void test_wake_while_parking_is_not_lost(void **state)
{
    (void)state;
    gate g;
    gate_init(&g);
    cp_pool *p = cp_pool_new(2);
    assert_non_null(p);
    parker k = {.task = {.run = park_run}, .g = &g, .p = p, .wake_self = true};
    cp_pool_submit(p, &k.task);
    cp_pool_free(p);
    assert_int_equal(k.runs, 2);
    gate_free(&g);
}

/* Freeing the pool waits for a parked task that a later task wakes. */
typedef struct waker {
    cp_task task;
    parker *k;
} waker;

static cp_task_result wake_run(cp_task *t)
{
    waker *w = (waker *)t;
    while (runs_of(w->k) < 1) /* the parker runs first (FIFO, one worker) */
        ;
    cp_pool_wake(w->k->p, &w->k->task);
    return CP_TASK_DONE;
}

static void test_free_waits_for_parked_tasks(void **state)
{
    (void)state;
    gate g;
    gate_init(&g);
    cp_pool *p = cp_pool_new(1);
    assert_non_null(p);
    parker k = {.task = {.run = park_run}, .g = &g, .p = p};
    waker w = {.task = {.run = wake_run}, .k = &k};
    cp_pool_submit(p, &k.task);
    cp_pool_submit(p, &w.task);
    cp_pool_free(p);
    assert_int_equal(k.runs, 2);
    gate_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_thread_until_the_first_task),
        cmocka_unit_test(test_grows_to_the_limit),
        cmocka_unit_test(test_waits_beyond_the_limit),
        cmocka_unit_test(test_frees_after_running_the_queue),
        cmocka_unit_test(test_one_group_never_holds_every_worker),
        cmocka_unit_test(test_group_cap_by_size),
        cmocka_unit_test(test_parked_task_holds_no_worker),
        cmocka_unit_test(test_wake_while_parking_is_not_lost),
        cmocka_unit_test(test_free_waits_for_parked_tasks),
    };
    return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
