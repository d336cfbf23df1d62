/* test_utf8.c - cutting UTF-8 text on character boundaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/utf8.h"

static size_t cut(const char *s, size_t max)
{
    return cp_utf8_cut(s, strlen(s), max);
}

static void test_short_text_is_kept(void **state)
{
    (void)state;
    assert_int_equal(cut("abc", 10), 3);
    assert_int_equal(cut("abc", 3), 3);
    assert_int_equal(cut("", 0), 0);
}

static void test_ascii_cut_at_max(void **state)
{
    (void)state;
    assert_int_equal(cut("abcdef", 4), 4);
}

static void test_cut_never_splits_a_character(void **state)
{
    (void)state;
    /* "a" + U+00E9 (2 bytes) + U+20AC (3 bytes) + U+1F600 (4 bytes) */
    const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
    assert_int_equal(cut(s, 1), 1);
    assert_int_equal(cut(s, 2), 1); /* inside U+00E9 */
    assert_int_equal(cut(s, 3), 3);
    assert_int_equal(cut(s, 4), 3); /* inside U+20AC */
    assert_int_equal(cut(s, 5), 3);
    assert_int_equal(cut(s, 6), 6);
    assert_int_equal(cut(s, 7), 6); /* inside U+1F600 */
    assert_int_equal(cut(s, 9), 6);
    assert_int_equal(cut(s, 10), 10);
    assert_int_equal(cut(s, 11), 11);
}

static void test_invalid_bytes_are_cut_as_they_are(void **state)
{
    (void)state;
    /* stray continuation bytes: no lead byte to go back to within 3 */
    const char *s = "\x80\x80\x80\x80\x80x";
    assert_int_equal(cut(s, 4), 4);
    /* a lone lead byte before the cut */
    assert_int_equal(cut("ab\xe2z", 3), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_text_is_kept),
        cmocka_unit_test(test_ascii_cut_at_max),
        cmocka_unit_test(test_cut_never_splits_a_character),
        cmocka_unit_test(test_invalid_bytes_are_cut_as_they_are),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
