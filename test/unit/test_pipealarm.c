/* test_pipealarm.c - a foreign server instance of a served pipe, as the
 * service reports it (service/pipealarm.h): counted for that pipe and no
 * other (the metric's samples, one per pipe served, from 0), handed to the
 * sink (on Windows the Event Log error and the mark `csi-proxy-cli health`
 * reads) with a message that names the pipe and the counts, each report
 * once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "service/pipealarm.h"

typedef struct seen {
    int n;
    char pipe[96];
    char line[1024];
} seen;

static void sink(void *ctx, const char *pipe, const char *line)
{
    seen *s = ctx;
    s->n++;
    snprintf(s->pipe, sizeof(s->pipe), "%s", pipe);
    snprintf(s->line, sizeof(s->line), "%s", line);
}

typedef struct samples {
    int n;
    char label[4][96];
    double value[4];
} samples;

static void emit(void *ctx, const char *label, double value)
{
    samples *s = ctx;
    if (s->n < 4) {
        snprintf(s->label[s->n], sizeof(s->label[0]), "%s", label != NULL ? label : "(none)");
        s->value[s->n] = value;
    }
    s->n++;
}

static void test_report(void **state)
{
    (void)state;
    const char *pipes[] = {"csi-proxy-filesystem-v1", "csi-proxy-smb-v1"};
    seen s = {0};
    cp_pipealarm *a = cp_pipealarm_new(pipes, 2, sink, &s);
    assert_non_null(a);
    samples m = {0};
    cp_pipealarm_collect(a, emit, &m);
    assert_int_equal(m.n, 2); /* every pipe served, from 0 */
    assert_string_equal(m.label[1], "csi-proxy-smb-v1");
    assert_true(m.value[0] == 0 && m.value[1] == 0);

    /* the transport names the pipe by its path */
    cp_pipealarm_report(a, "\\\\.\\pipe\\csi-proxy-smb-v1", 3, 2);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.pipe, "csi-proxy-smb-v1");
    assert_non_null(
        strstr(s.line, "pipe \\\\.\\pipe\\csi-proxy-smb-v1: a foreign server instance"));
    assert_non_null(strstr(s.line, "counts 3 instances of it, csi-proxy made 2"));
    memset(&m, 0, sizeof(m));
    cp_pipealarm_collect(a, emit, &m);
    assert_string_equal(m.label[0], "csi-proxy-filesystem-v1");
    assert_true(m.value[0] == 0);
    assert_true(m.value[1] == 1);

    /* a pipe the list does not hold is still reported, counted nowhere */
    cp_pipealarm_report(a, "\\\\.\\pipe\\csi-proxy-disk-v1", 2, 1);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.pipe, "csi-proxy-disk-v1");
    memset(&m, 0, sizeof(m));
    cp_pipealarm_collect(a, emit, &m);
    assert_int_equal(m.n, 2);
    assert_true(m.value[0] == 0 && m.value[1] == 1);
    cp_pipealarm_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
