/* test_wmi_retry.c - the WMI client's answer to a lost connection
 * (winapi/wmi_retry.h), natively: which HRESULTs mean the WMI service's
 * connection is gone (and whether the call may have run), and the retry
 * wrapper against a WMI double that fails once with each such code, then
 * answers: the cached connection is dropped on every one of them, an
 * idempotent call is made again on a new connection and succeeds, a call
 * that must not run twice is made again only when the code says it did
 * not run, and any other failure is returned as it is, with the
 * connection kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "winapi/wmi_retry.h"

typedef struct {
    uint32_t hr;
    cp_wmi_hr_class cls;
} code;

/* Each code, by its documented value (see wmi_retry.c for the sources). */
static const code lost[] = {
    {0x800706BEu, CP_WMI_HR_LOST_MAYBE_RUN}, /* HRESULT_FROM_WIN32(RPC_S_CALL_FAILED) */
    {0x800706BFu, CP_WMI_HR_LOST_NOT_RUN},   /* HRESULT_FROM_WIN32(RPC_S_CALL_FAILED_DNE) */
    {0x800706BAu, CP_WMI_HR_LOST_NOT_RUN},   /* HRESULT_FROM_WIN32(RPC_S_SERVER_UNAVAILABLE) */
    {0x800706D9u, CP_WMI_HR_LOST_NOT_RUN},   /* HRESULT_FROM_WIN32(EPT_S_NOT_REGISTERED) */
    {0x8007071Cu, CP_WMI_HR_LOST_MAYBE_RUN}, /* HRESULT_FROM_WIN32(RPC_S_COMM_FAILURE) */
    {0x80010007u, CP_WMI_HR_LOST_MAYBE_RUN}, /* RPC_E_SERVER_DIED */
    {0x80010012u, CP_WMI_HR_LOST_NOT_RUN},   /* RPC_E_SERVER_DIED_DNE */
    {0x80010108u, CP_WMI_HR_LOST_MAYBE_RUN}, /* RPC_E_DISCONNECTED */
    {0x80010006u, CP_WMI_HR_LOST_MAYBE_RUN}, /* RPC_E_CONNECTION_TERMINATED */
    {0x800401FDu, CP_WMI_HR_LOST_NOT_RUN},   /* CO_E_OBJNOTCONNECTED */
    {0x80080005u, CP_WMI_HR_LOST_NOT_RUN},   /* CO_E_SERVER_EXEC_FAILURE */
    {0x80041015u, CP_WMI_HR_LOST_MAYBE_RUN}, /* WBEM_E_TRANSPORT_FAILURE */
    {0x80041033u, CP_WMI_HR_LOST_MAYBE_RUN}, /* WBEM_E_SHUTTING_DOWN */
};
#define N_LOST (sizeof(lost) / sizeof(lost[0]))

/* Not a lost connection: the proxy stays. */
static const uint32_t other[] = {
    0,           /* S_OK */
    1722,        /* RPC_S_SERVER_UNAVAILABLE as a bare Win32 code: no HRESULT */
    0x80041002u, /* WBEM_E_NOT_FOUND */
    0x80041003u, /* WBEM_E_ACCESS_DENIED */
    0x80041004u, /* WBEM_E_PROVIDER_FAILURE */
    0x8004100Eu, /* WBEM_E_INVALID_NAMESPACE */
    0x80041010u, /* WBEM_E_INVALID_CLASS */
    0x80070005u, /* E_ACCESSDENIED */
    0x8007000Eu, /* E_OUTOFMEMORY */
    0x80004005u, /* E_FAIL */
    0x80010105u, /* RPC_E_SERVERFAULT: the server threw, the connection is fine */
    0x80010001u, /* RPC_E_CALL_REJECTED: busy, not gone */
};

static void test_classify(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_LOST; i++) {
        if (cp_wmi_classify(lost[i].hr) != lost[i].cls)
            fail_msg("0x%08x: class %d, want %d", (unsigned)lost[i].hr,
                     (int)cp_wmi_classify(lost[i].hr), (int)lost[i].cls);
        assert_non_null(cp_wmi_hr_name(lost[i].hr));
    }
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        if (cp_wmi_classify(other[i]) != CP_WMI_HR_OTHER)
            fail_msg("0x%08x is not a lost connection", (unsigned)other[i]);
        assert_null(cp_wmi_hr_name(other[i]));
    }
    assert_string_equal(cp_wmi_hr_name(0x80010108u), "RPC_E_DISCONNECTED");
    assert_string_equal(cp_wmi_hr_name(0x800706BEu), "RPC_S_CALL_FAILED");
    assert_string_equal(cp_wmi_hr_name(0x80041033u), "WBEM_E_SHUTTING_DOWN");
}

/* The WMI double: a connection that is alive or dead; a call on a dead
 * one fails with `fail_hr` (once: the double's service then runs again, as
 * winmgmt after a restart), on a live one it succeeds. `ran` counts calls
 * that reached the service. */
typedef struct {
    bool connected;   /* the cached proxy is live */
    uint32_t fail_hr; /* what a call on the dead proxy answers */
    int fail_status;
    int attempts, drops, ran;
    bool fail_again;    /* the rebuilt connection fails the same way */
    bool before_effect; /* the dead proxy fails a step before the method call */
} wmi_double;

static int attempt(void *arg, cp_wmi_failure *f, cp_error *e)
{
    wmi_double *d = arg;
    d->attempts++;
    if (!d->connected) {
        f->hr = d->fail_hr;
        f->effect = !d->before_effect;
        if (f->effect && cp_wmi_classify(d->fail_hr) == CP_WMI_HR_LOST_MAYBE_RUN)
            d->ran++; /* the server may have run it before the connection went */
        return cp_error_set(e, d->fail_status, "WMI call failed (HRESULT 0x%08x)",
                            (unsigned)d->fail_hr);
    }
    d->ran++;
    return CP_OK;
}

static void drop(void *conn)
{
    wmi_double *d = conn;
    d->drops++;
    d->connected = !d->fail_again; /* the next attempt connects again */
}

static void test_idempotent_retried_after_each_code(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_LOST; i++) {
        wmi_double d = {.fail_hr = lost[i].hr, .fail_status = CP_E_UNAVAILABLE};
        cp_error e;
        int rc = cp_wmi_call(attempt, &d, drop, &d, CP_WMI_RETRY_IDEMPOTENT, &e);
        if (rc != CP_OK || d.drops != 1 || d.attempts != 2 || !d.connected)
            fail_msg("%s: rc %d, %d drops, %d attempts; want OK after one rebuild and one retry",
                     cp_wmi_hr_name(lost[i].hr), rc, d.drops, d.attempts);
        /* and the next call uses the rebuilt connection at once */
        rc = cp_wmi_call(attempt, &d, drop, &d, CP_WMI_RETRY_IDEMPOTENT, &e);
        assert_int_equal(rc, CP_OK);
        assert_int_equal(d.attempts, 3);
        assert_int_equal(d.drops, 1);
    }
}

static void test_once_only_calls(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_LOST; i++) {
        wmi_double d = {.fail_hr = lost[i].hr, .fail_status = CP_E_UNAVAILABLE};
        cp_error e;
        int rc = cp_wmi_call(attempt, &d, drop, &d, CP_WMI_RETRY_IF_NOT_RUN, &e);
        assert_int_equal(d.drops, 1); /* rebuilt in every case */
        assert_true(d.connected);
        if (lost[i].cls == CP_WMI_HR_LOST_NOT_RUN) {
            /* it did not run: made again, once in all */
            if (rc != CP_OK || d.attempts != 2 || d.ran != 1)
                fail_msg("%s: rc %d, %d attempts, ran %d", cp_wmi_hr_name(lost[i].hr), rc,
                         d.attempts, d.ran);
        } else {
            /* it may have run: not made again; the caller hears UNAVAILABLE */
            if (rc != CP_E_UNAVAILABLE || d.attempts != 1 || d.ran != 1)
                fail_msg("%s: rc %d, %d attempts, ran %d", cp_wmi_hr_name(lost[i].hr), rc,
                         d.attempts, d.ran);
            assert_non_null(strstr(e.msg, "HRESULT"));
            /* the caller's retry reaches the rebuilt connection */
            assert_int_equal(cp_wmi_call(attempt, &d, drop, &d, CP_WMI_RETRY_IF_NOT_RUN, &e),
                             CP_OK);
        }
    }
}

static void test_once_only_failed_before_the_effect(void **state)
{
    (void)state;
    /* the connection was found dead by a step before the method call (the
     * class lookup, the query for the object): the call cannot have run,
     * so even a call that must not run twice is made again */
    for (size_t i = 0; i < N_LOST; i++) {
        wmi_double d = {
            .fail_hr = lost[i].hr, .fail_status = CP_E_UNAVAILABLE, .before_effect = true};
        cp_error e;
        int rc = cp_wmi_call(attempt, &d, drop, &d, CP_WMI_RETRY_IF_NOT_RUN, &e);
        if (rc != CP_OK || d.attempts != 2 || d.drops != 1 || d.ran != 1)
            fail_msg("%s: rc %d, %d attempts, %d drops, ran %d", cp_wmi_hr_name(lost[i].hr), rc,
                     d.attempts, d.drops, d.ran);
    }
}

static void test_retry_fails_again(void **state)
{
    (void)state;
    /* winmgmt still down: one retry, not a loop; the connection is dropped
     * again so the next call tries anew */
    wmi_double d = {.fail_hr = 0x800706BAu, .fail_status = CP_E_UNAVAILABLE, .fail_again = true};
    cp_error e;
    assert_int_equal(cp_wmi_call(attempt, &d, drop, &d, CP_WMI_RETRY_IDEMPOTENT, &e),
                     CP_E_UNAVAILABLE);
    assert_int_equal(d.attempts, 2);
    assert_int_equal(d.drops, 2);
}

static void test_other_failures_kept(void **state)
{
    (void)state;
    for (size_t i = 1; i < sizeof(other) / sizeof(other[0]); i++) {
        wmi_double d = {.fail_hr = other[i], .fail_status = CP_E_NOT_FOUND};
        cp_error e;
        assert_int_equal(cp_wmi_call(attempt, &d, drop, &d, CP_WMI_RETRY_IDEMPOTENT, &e),
                         CP_E_NOT_FOUND);
        assert_int_equal(d.attempts, 1);
        assert_int_equal(d.drops, 0);
    }
    /* a failure with no HRESULT at all (hr 0): the same */
    wmi_double d = {.fail_hr = 0, .fail_status = CP_E_INVALID_ARGUMENT};
    cp_error e;
    assert_int_equal(cp_wmi_call(attempt, &d, drop, &d, CP_WMI_RETRY_IDEMPOTENT, &e),
                     CP_E_INVALID_ARGUMENT);
    assert_int_equal(d.attempts, 1);
    assert_int_equal(d.drops, 0);
    /* success: one attempt, nothing dropped */
    wmi_double ok = {.connected = true};
    assert_int_equal(cp_wmi_call(attempt, &ok, drop, &ok, CP_WMI_RETRY_IF_NOT_RUN, &e), CP_OK);
    assert_int_equal(ok.attempts, 1);
    assert_int_equal(ok.drops, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_idempotent_retried_after_each_code),
        cmocka_unit_test(test_once_only_calls),
        cmocka_unit_test(test_once_only_failed_before_the_effect),
        cmocka_unit_test(test_retry_fails_again),
        cmocka_unit_test(test_other_failures_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
