/* test_sched.c - jobs on the worker pool with the disk locks
 * (rpc/job.c, rpc/pool.c, groups/common/disklocks.c): a job whose
 * deadline passed or whose client cancelled never runs its handler; calls
 * waiting for a disk hold no worker; a lock
 * handed to a call that no longer wants it passes on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filesystem/v1/api.pb-c.h"
#include "groups/common/disklocks.h"
#include "rpc/conn_internal.h"
#include "dispatch/method.h"
#include "base/thread.h"

/* ---- a fake "disk" service: Hold locks the disk named by path[0] -------- */

typedef struct {
    const char *path; /* "<digit>[slow]" */
} hold_req;

static cp_mutex *mu;
static cp_cond *cv;
static bool gate_open;
static char ran[64]; /* one letter per handler run that got its lock: path[2] */
static size_t n_ran;
static cp_job *done[64];
static size_t n_done;

static int h_hold(cp_call *call, const void *req, void *resp)
{
    (void)resp;
    const char *p = ((const hold_req *)req)->path;
    cp_disklocks *locks = cp_call_ctx(call);
    int rc = cp_disklocks_lock(locks, call, (uint32_t)(p[0] - '0'));
    if (rc != CP_OK)
        return rc;
    cp_mutex_lock(mu);
    ran[n_ran++] = p[2];
    cp_cond_broadcast(cv);
    int64_t until = cp_now_ms() + 5000;
    while (strstr(p, "slow") != NULL && !gate_open && cp_now_ms() < until)
        cp_cond_timedwait(cv, mu, 50);
    cp_mutex_unlock(mu);
    cp_disklocks_unlock(locks, call, (uint32_t)(p[0] - '0'));
    return CP_OK;
}

static const cp_fieldmap hold_map[] = {{"path", offsetof(hold_req, path), CP_F_STRING},
                                       {NULL, 0, 0}};
static const cp_method methods[] = {
    {"Mkdir", &v1__mkdir_request__descriptor, &v1__mkdir_response__descriptor, hold_map, NULL,
     h_hold, NULL, NULL, 0},
};
static const cp_service_def def = {"disk",  "v1", "v1.Filesystem",  &v1__filesystem__descriptor,
                                   methods, 1,    sizeof(hold_req), sizeof(hold_req)};

static void post(void *ctx, cp_job *job)
{
    (void)ctx;
    cp_mutex_lock(mu);
    done[n_done++] = job;
    cp_cond_broadcast(cv);
    cp_mutex_unlock(mu);
}

static cp_job *make_job(cp_conn *c, const char *path, int32_t id)
{
    V1__MkdirRequest req = V1__MKDIR_REQUEST__INIT;
    req.path = (char *)path;
    size_t n = protobuf_c_message_get_packed_size(&req.base);
    uint8_t *body = malloc(n + 1);
    assert_non_null(body);
    protobuf_c_message_pack(&req.base, body);
    cp_job *job = cp_job_new(c, id, &methods[0], "/v1.Filesystem/Mkdir", body, n);
    assert_non_null(job);
    c->refs++; /* as conn.c's start_job */
    c->inflight++;
    return job;
}

/* Waits up to 5 s for n posted jobs. */
static size_t wait_done(size_t n)
{
    cp_mutex_lock(mu);
    int64_t until = cp_now_ms() + 5000;
    while (n_done < n && cp_now_ms() < until)
        cp_cond_timedwait(cv, mu, 20);
    size_t d = n_done;
    cp_mutex_unlock(mu);
    return d;
}

static size_t wait_ran(size_t n)
{
    cp_mutex_lock(mu);
    int64_t until = cp_now_ms() + 5000;
    while (n_ran < n && cp_now_ms() < until)
        cp_cond_timedwait(cv, mu, 20);
    size_t r = n_ran;
    cp_mutex_unlock(mu);
    return r;
}

static void open_gate(void)
{
    cp_mutex_lock(mu);
    gate_open = true;
    cp_cond_broadcast(cv);
    cp_mutex_unlock(mu);
}

static cp_disklocks *locks;
static cp_service svc;

static int setup(void **state)
{
    (void)state;
    mu = cp_mutex_new();
    cv = cp_cond_new();
    locks = cp_disklocks_new();
    svc = (cp_service){&def, locks};
    gate_open = false;
    n_ran = n_done = 0;
    memset(ran, 0, sizeof(ran));
    return mu != NULL && cv != NULL && locks != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    cp_disklocks_free(locks);
    cp_cond_free(cv);
    cp_mutex_free(mu);
    return 0;
}

/* Answers every posted job (the I/O thread's part) and drops the conn. */
static void finish(cp_conn *c)
{
    for (size_t i = 0; i < n_done; i++)
        cp_job_complete(done[i]);
    cp_conn_close(c);
}

/* ---- tests ------------------------------------------------------------- */

static void test_deadline_passed_or_cancelled_never_runs(void **state)
{
    (void)state;
    cp_conn *c = cp_conn_new(&svc, NULL, NULL, post, NULL);
    assert_non_null(c);
    cp_job *late = make_job(c, "1 a", 1);
    late->deadline = cp_now_ms() - 1;
    assert_int_equal(late->task.run(&late->task), CP_TASK_DONE);
    assert_int_equal(late->err.status, CP_E_DEADLINE_EXCEEDED);
    assert_non_null(strstr(late->err.msg, "before /v1.Filesystem/Mkdir started"));

    cp_job *gone = make_job(c, "1 b", 3);
    cp_job_cancel(gone);
    assert_int_equal(gone->task.run(&gone->task), CP_TASK_DONE);
    assert_int_equal(gone->err.status, CP_E_CANCELLED);

    cp_job *ok = make_job(c, "1 c", 5);
    ok->deadline = cp_now_ms() + 60000;
    assert_int_equal(ok->task.run(&ok->task), CP_TASK_DONE);
    assert_int_equal(ok->err.status, CP_OK);

    assert_int_equal(n_done, 3);
    assert_string_equal(ran, "c"); /* the handler ran for the live call only */
    finish(c);
}

/* Four workers: one holds disk 1 (slow), ten more calls for disk 1 wait
 * for it - parked, not on workers - so a call for disk 2 of the same
 * group runs at once. Then disk 1's calls all run, one at a time. */
static void test_waiting_calls_hold_no_worker(void **state)
{
    (void)state;
    cp_pool *p = cp_pool_new(4);
    assert_non_null(p);
    cp_conn *c = cp_conn_new(&svc, p, NULL, post, NULL);
    assert_non_null(c);
    cp_pool_submit(p, &make_job(c, "1 Aslow", 1)->task);
    assert_int_equal(wait_ran(1), 1);
    const char *order = "BCDEFGHIJK";
    char path[16];
    for (int i = 0; i < 10; i++) {
        snprintf(path, sizeof(path), "1 %c", order[i]);
        cp_pool_submit(p, &make_job(c, path, 3 + 2 * i)->task);
    }
    cp_pool_submit(p, &make_job(c, "2 z", 99)->task);
    size_t early = wait_done(1); /* disk 2's call, while A holds disk 1 */
    cp_mutex_lock(mu);
    char first[3] = {ran[0], ran[1], '\0'};
    cp_mutex_unlock(mu);
    open_gate(); /* before asserting: a failure must not leave workers behind */
    assert_int_equal(wait_done(12), 12);
    assert_int_equal(early, 1);
    assert_string_equal(first, "Az");
    assert_int_equal(n_ran, 12);
    for (int i = 0; i < 10; i++)
        assert_non_null(memchr(ran + 2, order[i], 10));
    int64_t until = cp_now_ms() + 5000; /* a worker counts its task done after the post */
    while (cp_pool_busy(p) > 0 && cp_now_ms() < until)
        ;
    assert_int_equal(cp_pool_busy(p), 0); /* none left parked */
    cp_pool_free(p);
    finish(c);
}

/* A lock handed to a call that was cancelled, or whose deadline passed,
 * while it waited: the call does not run, the next one gets the disk. */
static void test_lock_handed_to_a_call_given_up_passes_on(void **state)
{
    (void)state;
    cp_pool *p = cp_pool_new(4);
    assert_non_null(p);
    cp_conn *c = cp_conn_new(&svc, p, NULL, post, NULL);
    assert_non_null(c);
    cp_pool_submit(p, &make_job(c, "1 Aslow", 1)->task);
    assert_int_equal(wait_ran(1), 1);
    cp_job *cancelled = make_job(c, "1 C", 3);
    cp_job *late = make_job(c, "1 L", 5);
    late->deadline = cp_now_ms() + 100;
    cp_pool_submit(p, &cancelled->task);
    cp_pool_submit(p, &late->task);
    cp_pool_submit(p, &make_job(c, "1 N", 7)->task);
    int64_t until = cp_now_ms() + 300; /* C, L and N park behind A; L's deadline passes */
    while (cp_now_ms() < until)
        ;
    cp_job_cancel(cancelled);
    open_gate();
    assert_int_equal(wait_done(4), 4);
    assert_string_equal(ran, "AN");
    assert_int_equal(cancelled->err.status, CP_E_CANCELLED);
    assert_int_equal(late->err.status, CP_E_DEADLINE_EXCEEDED);
    cp_pool_free(p);
    finish(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deadline_passed_or_cancelled_never_runs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_waiting_calls_hold_no_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock_handed_to_a_call_given_up_passes_on, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("sched", tests, NULL, NULL);
}
