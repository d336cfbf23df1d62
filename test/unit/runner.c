/* runner.c - the command line every unit test binary takes, linked into
 * each of them with -Wl,--wrap=main -Wl,--wrap=_cmocka_run_group_tests:
 *
 *   test_foo                 run every test
 *   test_foo NAME|GLOB       run only the tests whose name matches
 *                            (cmocka's pattern: * and ?)
 *   test_foo --list          print the test names, one a line, run nothing
 *
 * The test files keep their plain `int main(void)`; this wrapper takes the
 * arguments, then calls it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

int __real_main(void);
int __wrap_main(int argc, char **argv);
int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);

static int listing;

int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown)
{
    if (listing) {
        for (size_t i = 0; i < num_tests; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    return __real__cmocka_run_group_tests(group_name, tests, num_tests, group_setup,
                                          group_teardown);
}

int __wrap_main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
        fprintf(stderr, "usage: %s [--list | NAME | GLOB]\n", argv[0]);
        return 2;
    }
    if (argc == 2 && strcmp(argv[1], "--list") == 0)
        listing = 1;
    else if (argc == 2)
        cmocka_set_test_filter(argv[1]);
    return __real_main();
}
