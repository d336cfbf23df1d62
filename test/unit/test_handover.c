/* test_handover.c - finished jobs handed to their connections by one
 * thread at a time (cp_handover, rpc/handover.h; both transports's
 * post_job): the first to put hands over, later ones leave their jobs to
 * it, and a job put while it hands over is never left behind. The
 * interleavings are played step by step on one thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rpc/conn.h"
#include "rpc/conn_internal.h"
#include "rpc/handover.h"

static cp_job jobs[4];

/* The jobs cp_handover_take returned, in order, as indexes into jobs. */
static int taken(cp_handover *h, int *out, int cap)
{
    int n = 0;
    for (cp_job *j = cp_handover_take(h); j != NULL; j = cp_handover_next(j))
        if (n < cap)
            out[n++] = (int)(j - jobs);
    return n;
}

static void test_first_hands_over_the_others_leave_it(void **state)
{
    (void)state;
    cp_handover h = {0};
    assert_true(cp_handover_put(&h, &jobs[0]));  /* nobody handing over: this one does */
    assert_false(cp_handover_put(&h, &jobs[1])); /* left to the first */
    assert_false(cp_handover_put(&h, &jobs[2]));
    int got[4];
    assert_int_equal(taken(&h, got, 4), 3);
    assert_int_equal(got[0], 0); /* oldest first */
    assert_int_equal(got[1], 1);
    assert_int_equal(got[2], 2);
    assert_false(cp_handover_end(&h));          /* nothing came meanwhile: done */
    assert_true(cp_handover_put(&h, &jobs[3])); /* and the next one hands over itself */
    assert_int_equal(taken(&h, got, 4), 1);
    assert_false(cp_handover_end(&h));
}

/* A job put after the list was taken, while the hand-over still runs, is
 * left to it: ending must say "again", else that job is never answered. */
static void test_job_put_during_the_hand_over_is_not_left_behind(void **state)
{
    (void)state;
    cp_handover h = {0};
    int got[4];
    assert_true(cp_handover_put(&h, &jobs[0]));
    assert_int_equal(taken(&h, got, 4), 1);
    assert_false(cp_handover_put(&h, &jobs[1])); /* busy: left to the hand-over */
    assert_true(cp_handover_end(&h));            /* so it goes on */
    assert_int_equal(taken(&h, got, 4), 1);
    assert_int_equal(got[0], 1);
    assert_false(cp_handover_end(&h));
    assert_null(cp_handover_take(&h));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_hands_over_the_others_leave_it),
        cmocka_unit_test(test_job_put_during_the_hand_over_is_not_left_behind),
    };
    return cmocka_run_group_tests_name("handover", tests, NULL, NULL);
}
