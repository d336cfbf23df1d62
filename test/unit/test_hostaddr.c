/* test_hostaddr.c - reading a host name as Windows reads an address
 * (groups/common/hostaddr.h): the non-strict IPv4 forms, IPv6 text with
 * or without brackets, the ipv6-literal.net spellings, a host name that
 * stays a host name, the spellings marked ambiguous, and the readings
 * chosen where the smb and iscsi rules' own parsers once disagreed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "groups/common/hostaddr.h"

typedef struct reading {
    const char *text;
    int family;
    unsigned char b[16];
} reading;

static int check_readings(const reading *r, size_t n, bool ambiguous)
{
    int wrong = 0;
    for (size_t i = 0; i < n; i++) {
        cp_hostaddr a;
        int fam = cp_hostaddr_read(r[i].text, &a);
        if (fam != r[i].family || a.family != fam || memcmp(a.b, r[i].b, fam == 4 ? 4 : 16) != 0 ||
            a.ambiguous != ambiguous) {
            char got[64];
            cp_hostaddr_text(&a, got, sizeof(got));
            print_message("%s: read as family %d %s%s; want family %d%s\n", r[i].text, fam, got,
                          a.ambiguous ? " (ambiguous)" : "", r[i].family,
                          ambiguous ? " (ambiguous)" : "");
            wrong++;
        }
    }
    return wrong;
}

#define V6_LOOPBACK                                                                                \
    {                                                                                              \
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1                                             \
    }

static void test_addresses(void **state)
{
    (void)state;
    static const reading yes[] = {
        {"1.2.3.4", 4, {1, 2, 3, 4}},
        {"1.2.772", 4, {1, 2, 3, 4}},
        {"1.131844", 4, {1, 2, 3, 4}},
        {"16909060", 4, {1, 2, 3, 4}},
        {"0x01020304", 4, {1, 2, 3, 4}},
        {"01.02.03.04", 4, {1, 2, 3, 4}},
        {"0xff.0377.0x3.4", 4, {255, 255, 3, 4}},
        {"4294967295", 4, {255, 255, 255, 255}},
        {"10.1", 4, {10, 0, 0, 1}},
        {"1.2.0x300", 4, {1, 2, 3, 0}},
        {"0x7f.1", 4, {127, 0, 0, 1}},
        {"0x", 4, {0, 0, 0, 0}},
        {"::1", 6, V6_LOOPBACK},
        {"::", 6, {0}},
        {"1:2:3:4:5:6:7:8", 6, {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}},
        {"2001:db8::1", 6, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
        {"1:2:3:4:5:6:1.2.3.4", 6, {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 1, 2, 3, 4}},
        {"0000:0000:0000:0000:0000:0000:0000:0001", 6, V6_LOOPBACK},
        {"fe80--1s4.ipv6-literal.net", 6, {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
        {"2001-DB8-2a-1005-230-48ff-fe73-989d.ipv6-literal.net",
         6,
         {0x20, 0x01, 0x0d, 0xb8, 0, 0x2a, 0x10, 0x05, 0x02, 0x30, 0x48, 0xff, 0xfe, 0x73, 0x98,
          0x9d}},
        {"0--ffff-1.2.3.4.ipv6-literal.net",
         6,
         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}},
        {"1-2-3-4-5-6-7--.ipv6-literal.net", 6, {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 0}},
        {"0--1.IPV6-LITERAL.NET", 6, V6_LOOPBACK},
        {"--.ipv6-literal.net", 6, {0}},
    };
    assert_int_equal(check_readings(yes, sizeof(yes) / sizeof(yes[0]), false), 0);
}

static void test_host_names(void **state)
{
    (void)state;
    static const char *const no[] = {
        "fs1",
        "fs1.example.com",
        "san.example.com",
        "deadbeef",
        "1.2.3.4.5",
        "256.1.1.1",
        "1.256.0.0",
        "1.2.3.256",
        "1.2.65536",
        "08",
        "09.1.1.1", /* 9 is no octal digit */
        "0x100000000",
        "4294967296",
        "1..2",
        ".1",
        "1:2:3:4:5:6:7:8:9",
        "1::2::3",
        "::1.2.3.4.5",
        "fe80:::1",
        "12345::1",
        "a:b",
        "[::1",
        "::1]",
        "10.0.0.5:3260",
        "fe80--1.ipv6-literal.org",
        "ipv6-literal.net",
        ".ipv6-literal.net",
        "x.ipv6-literal.net",
        "1-2-3.ipv6-literal.net",
        "",
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        cp_hostaddr a;
        if (cp_hostaddr_read(no[i], &a) != 0 || a.family != 0) {
            print_message("%s: read as an address\n", no[i]);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
}

/* Where the smb and iscsi rules' parsers once read a spelling differently,
 * the reading that refuses: an address (a rule may refuse it) rather than a
 * name (let through), or ambiguous (refused) where either reading could be
 * the address a rule keeps out. */
static void test_disputed_spellings(void **state)
{
    (void)state;
    static const reading read[] = {
        /* any number of leading zeros in an IPv4 part (iscsi: a name) */
        {"000000000000000000177.0.0.1", 4, {127, 0, 0, 1}},
        {"0x00000000000000000000007f.1", 4, {127, 0, 0, 1}},
        /* brackets and an absolute name's final dot (smb: a name) */
        {"[::1]", 6, V6_LOOPBACK},
        {"[10.0.0.5]", 4, {10, 0, 0, 5}},
        {"127.0.0.1.", 4, {127, 0, 0, 1}},
        {"0--1.ipv6-literal.net.", 6, V6_LOOPBACK},
        /* a literal-net scope, whatever follows the 's' (smb: a name) */
        {"0--1s-x.ipv6-literal.net", 6, V6_LOOPBACK},
        {"0--1s.ipv6-literal.net", 6, V6_LOOPBACK},
        /* ':' inside a literal-net name (smb: a name) */
        {"::1.ipv6-literal.net", 6, V6_LOOPBACK},
    };
    assert_int_equal(check_readings(read, sizeof(read) / sizeof(read[0]), false), 0);
    static const reading ambiguous[] = {
        /* more than 4 digits in a group (iscsi: no address) */
        {"::00001", 6, V6_LOOPBACK},
        {"2001:db8::00001", 6, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
        {"0--00001.ipv6-literal.net", 6, V6_LOOPBACK},
        /* "::" beside 8 groups (iscsi: no address) */
        {"1:2:3:4::5:6:7:8", 6, {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}},
        {"0-0-0-0--0-0-0-1.ipv6-literal.net", 6, V6_LOOPBACK},
        /* an octal or hex part in an IPv4 tail (iscsi: decimal or none) */
        {"::ffff:0177.0.0.1", 6, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1}},
        {"::ffff:0x7f.0.0.1", 6, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1}},
        {"::ffff:1.2.3.04", 6, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}},
    };
    assert_int_equal(check_readings(ambiguous, sizeof(ambiguous) / sizeof(ambiguous[0]), true), 0);
    /* a %scope after IPv6 text (smb: read, iscsi: no address): no address,
     * which both rules refuse as not a host name */
    cp_hostaddr a;
    assert_int_equal(cp_hostaddr_read("::1%1", &a), 0);
    assert_int_equal(cp_hostaddr_read("fe80::1%4", &a), 0);
    /* a plain 0 part in an IPv4 tail is no octal */
    assert_int_equal(cp_hostaddr_read("::ffff:10.0.0.5", &a), 6);
    assert_false(a.ambiguous);
}

static void test_embedded_v4_and_text(void **state)
{
    (void)state;
    cp_hostaddr a;
    char text[64];
    assert_int_equal(cp_hostaddr_read("0x7f.1", &a), 4);
    cp_hostaddr_text(&a, text, sizeof(text));
    assert_string_equal(text, "127.0.0.1");
    assert_null(cp_hostaddr_embedded_v4(&a));
    assert_int_equal(cp_hostaddr_read("2001:db8::1", &a), 6);
    cp_hostaddr_text(&a, text, sizeof(text));
    assert_string_equal(text, "2001:db8:0:0:0:0:0:1");
    assert_null(cp_hostaddr_embedded_v4(&a));
    assert_int_equal(cp_hostaddr_read("::ffff:10.0.0.5", &a), 6);
    assert_memory_equal(cp_hostaddr_embedded_v4(&a), ((unsigned char[]){10, 0, 0, 5}), 4);
    assert_int_equal(cp_hostaddr_read("::10.0.0.5", &a), 6);
    assert_memory_equal(cp_hostaddr_embedded_v4(&a), ((unsigned char[]){10, 0, 0, 5}), 4);
    assert_int_equal(cp_hostaddr_read("::1", &a), 6);
    assert_memory_equal(cp_hostaddr_embedded_v4(&a), ((unsigned char[]){0, 0, 0, 1}), 4);
    assert_int_equal(cp_hostaddr_read("64:ff9b::7f00:1", &a), 6);
    assert_null(cp_hostaddr_embedded_v4(&a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_host_names),
        cmocka_unit_test(test_disputed_spellings),
        cmocka_unit_test(test_embedded_v4_and_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
