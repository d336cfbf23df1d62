/* test_yamldepth.c - deeply nested YAML is refused before it costs time:
 * libyaml's scanner keeps one possible simple key per flow level and looks
 * at all of them for every token, so nesting costs time quadratic in the
 * depth; the configuration loader counts the depth as the parser's events
 * arrive (base/yamldepth.c) and stops at CP_YAML_MAX_DEPTH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/config.h"
#include "base/yamldepth.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* n bytes of "[[[...]]]" (or "{a: {a: ...}}" with map). */
static char *nested(size_t n, bool map, size_t *len)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    size_t half = map ? n / 8 : n / 2, k = 0;
    for (size_t i = 0; i < half; i++) {
        if (map) {
            memcpy(s + k, "{a: ", 4);
            k += 4;
        } else {
            s[k++] = '[';
        }
    }
    if (map) {
        s[k++] = '1';
    }
    for (size_t i = 0; i < half; i++)
        s[k++] = map ? '}' : ']';
    s[k] = '\0';
    *len = k;
    return s;
}

static void refused_fast(size_t bytes, bool map)
{
    size_t len;
    char *y = nested(bytes, map, &len);
    cp_config c;
    cp_error e;
    double t0 = now();
    int rc = cp_config_load_string(&c, "deep.yaml", y, len, NULL, NULL, &e);
    double dt = now() - t0;
    cp_config_free(&c);
    free(y);
    /* before the cap: 100 KB took seconds, 1 MiB minutes (generous bound
     * for a loaded machine) */
    if (dt > 2.0)
        fail_msg("%zu bytes of nesting took %.2f s", bytes, dt);
    assert_int_equal(rc, CP_E_INVALID_ARGUMENT);
    if (strstr(e.msg, "deep.yaml:1: nested deeper than") == NULL)
        fail_msg("message: %s", e.msg);
}

static void test_flow_sequences_100k(void **state)
{
    (void)state;
    refused_fast(100 * 1024, false);
}

static void test_flow_sequences_1m(void **state)
{
    (void)state;
    refused_fast(CP_CONFIG_MAX_FILE - 16, false);
}

static void test_flow_mappings(void **state)
{
    (void)state;
    refused_fast(512 * 1024, true);
}

static void test_depth_counted(void **state)
{
    (void)state;
    cp_error e;
    char y[256];
    /* CP_YAML_MAX_DEPTH levels pass the check, one more does not */
    size_t k = 0;
    for (int i = 0; i < CP_YAML_MAX_DEPTH; i++)
        y[k++] = '[';
    for (int i = 0; i < CP_YAML_MAX_DEPTH; i++)
        y[k++] = ']';
    y[k] = '\0';
    assert_int_equal(cp_yaml_depth_check("f", y, k, &e), CP_OK);
    memmove(y + 1, y, k + 1);
    y[0] = '[';
    y[++k] = ']';
    y[++k] = '\0';
    assert_int_equal(cp_yaml_depth_check("f", y, k, &e), CP_E_INVALID_ARGUMENT);
    assert_non_null(strstr(e.msg, "f:1: nested deeper than"));
    /* block nesting counts too, and the line is the one that went too deep */
    char b[4096] = "";
    for (int i = 0; i <= CP_YAML_MAX_DEPTH; i++) {
        size_t n = strlen(b);
        snprintf(b + n, sizeof(b) - n, "%*sk%d:\n", i * 2, "", i);
    }
    snprintf(b + strlen(b), sizeof(b) - strlen(b), "%*sx: 1\n", (CP_YAML_MAX_DEPTH + 1) * 2, "");
    assert_int_equal(cp_yaml_depth_check("b.yaml", b, strlen(b), &e), CP_E_INVALID_ARGUMENT);
    char want[64];
    snprintf(want, sizeof(want), "b.yaml:%d: nested deeper than", CP_YAML_MAX_DEPTH + 1);
    if (strstr(e.msg, want) == NULL)
        fail_msg("message: %s (want %s)", e.msg, want);
    /* a real configuration is far below the cap; malformed YAML is left to
     * the loader, which says what is wrong */
    const char *ok = "groups:\n  smb: {versions: [v1], allowedCallers: [SYSTEM]}\n";
    assert_int_equal(cp_yaml_depth_check("c", ok, strlen(ok), &e), CP_OK);
    assert_int_equal(cp_yaml_depth_check("c", "[[", 2, &e), CP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depth_counted),
        cmocka_unit_test(test_flow_sequences_100k),
        cmocka_unit_test(test_flow_mappings),
        cmocka_unit_test(test_flow_sequences_1m),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
