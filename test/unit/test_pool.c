/* test_pool.c - the worker pool: a blocked task holds up no other task
 * while the limit allows, workers start only when needed, and freeing the
 * pool runs what is queued. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include "server/pool.h"
#include "server/thread.h"

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
static void blocking(cp_task *t)
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
 * pool grew from its one starting worker. */
static void test_grows_to_the_limit(void **state)
{
    (void)state;
    gate g;
    gate_init(&g);
    cp_pool *p = cp_pool_new(4);
    assert_non_null(p);
    gtask t[4];
    for (int i = 0; i < 4; i++) {
        t[i].task.run = blocking;
        t[i].g = &g;
        cp_pool_submit(p, &t[i].task);
    }
    assert_int_equal(wait_running(&g, 4), 4);
    assert_int_equal(cp_pool_busy(p), 4);
    gate_open(&g);
    cp_pool_free(p);
    assert_int_equal(g.done, 4);
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
        t[i].task.run = blocking;
        t[i].g = &g;
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

static void mark_run(cp_task *t)
{
    *((mark *)t)->ran = 1;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grows_to_the_limit),
        cmocka_unit_test(test_waits_beyond_the_limit),
        cmocka_unit_test(test_frees_after_running_the_queue),
    };
    return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
