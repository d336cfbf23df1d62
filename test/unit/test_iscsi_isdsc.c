/* test_iscsi_isdsc.c - the portable half of the iSCSI Win32 host
 * (host/iscsi_isdsc.c): the initiator's ISDSC_* codes map to the status
 * a caller can act on (the service not running is FAILED_PRECONDITION, an
 * unknown target NOT_FOUND, a target logged in already ALREADY_EXISTS,
 * refused CHAP credentials PERMISSION_DENIED, a refused secret
 * INVALID_ARGUMENT), and a target's DiscoveryMechanisms string is matched
 * to the send-target portal it names, and to no other. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/status.h"
#include "host/iscsi_isdsc.h"

static void test_codes_map_to_what_a_caller_can_do(void **state)
{
    (void)state;
    static const struct {
        uint32_t code;
        const char *name;
        int status;
    } want[] = {
        {0xEFFF003Eu, "ISDSC_SERVICE_NOT_RUNNING", CP_E_FAILED_PRECONDITION},
        {0xEFFF0029u, "ISDSC_TARGET_NOT_FOUND", CP_E_NOT_FOUND},
        {0xEFFF0043u, "ISDSC_PORTAL_NOT_FOUND", CP_E_NOT_FOUND},
        {0xEFFF001Cu, "ISDSC_INVALID_SESSION_ID", CP_E_NOT_FOUND},
        {0xEFFF003Fu, "ISDSC_TARGET_ALREADY_LOGGED_IN", CP_E_ALREADY_EXISTS},
        {0xEFFF0032u, "ISDSC_TARGET_PORTAL_ALREADY_EXISTS", CP_E_ALREADY_EXISTS},
        {0xEFFF0016u, "ISDSC_SESSION_ALREADY_EXISTS", CP_E_ALREADY_EXISTS},
        {0xEFFF0009u, "ISDSC_AUTHENTICATION_FAILURE", CP_E_PERMISSION_DENIED},
        {0xEFFF0003u, "ISDSC_CONNECTION_FAILED", CP_E_UNAVAILABLE},
        {0xEFFF0040u, "ISDSC_DEVICE_BUSY_ON_SESSION", CP_E_UNAVAILABLE},
        {0xEFFF004Au, "ISDSC_INVALID_CHAP_SECRET", CP_E_INVALID_ARGUMENT},
        {0xAFFF0048u, "ISDSC_SHORT_CHAP_SECRET", CP_E_INVALID_ARGUMENT},
        {0xEFFF0065u, "ISDSC_RESTRICTED_BY_GROUP_POLICY", CP_E_FAILED_PRECONDITION},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const cp_isdsc_code *c = cp_isdsc_lookup(want[i].code);
        if (c == NULL)
            fail_msg("0x%08x (%s) is not in the table", (unsigned)want[i].code, want[i].name);
        assert_string_equal(c->name, want[i].name);
        if (c->status != want[i].status)
            fail_msg("%s maps to %d, want %d", c->name, c->status, want[i].status);
        assert_true(strlen(c->text) > 0 && c->text[strlen(c->text) - 1] != '.');
    }
    /* Win32 codes and unknown ISDSC codes are left to the Win32 map */
    assert_null(cp_isdsc_lookup(5));    /* ERROR_ACCESS_DENIED */
    assert_null(cp_isdsc_lookup(1722)); /* RPC_S_SERVER_UNAVAILABLE */
    assert_null(cp_isdsc_lookup(0xEFFF0FFFu));
    assert_null(cp_isdsc_lookup(0));
}

static void test_mechanism_names_its_portal(void **state)
{
    (void)state;
    const char *m = "SendTargets:*10.0.0.5 0003260 ROOT\\ISCSIPRT\\0000_0 ";
    assert_true(cp_isdsc_mechanism_is_portal(m, "10.0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal(m, "10.0.0.5", 3261));
    assert_false(cp_isdsc_mechanism_is_portal(m, "10.0.0.50", 3260));
    assert_false(cp_isdsc_mechanism_is_portal(m, "10.0.0.", 3260)); /* a prefix is not a match */
    assert_false(cp_isdsc_mechanism_is_portal(m, "0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal(m, "", 3260));
    /* no '*', no trailing fields, host names in any case */
    assert_true(cp_isdsc_mechanism_is_portal("SendTargets:san1.example.com 3260",
                                             "SAN1.example.COM", 3260));
    assert_true(
        cp_isdsc_mechanism_is_portal("sendtargets:*[fe80::1] 0003260 X", "[fe80::1]", 3260));
    /* other discovery mechanisms, and malformed ports, never match */
    assert_false(cp_isdsc_mechanism_is_portal("iSNS:*10.0.0.5 0003260 X", "10.0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal("HBA:10.0.0.5 0003260", "10.0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal("SendTargets:*10.0.0.5 ", "10.0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal("SendTargets:*10.0.0.5 3260x", "10.0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal("SendTargets:*10.0.0.5 9999999", "10.0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal("SendTargets:*10.0.0.5", "10.0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal("SendTarg", "10.0.0.5", 3260));
    assert_false(cp_isdsc_mechanism_is_portal(NULL, "10.0.0.5", 3260));
}

static void test_name_eq(void **state)
{
    (void)state;
    assert_true(cp_isdsc_name_eq("iqn.1991-05.com.Microsoft:X", "IQN.1991-05.com.microsoft:x"));
    assert_false(cp_isdsc_name_eq("iqn.a", "iqn.ab"));
    assert_false(cp_isdsc_name_eq("iqn.ab", "iqn.a"));
    assert_true(cp_isdsc_name_eq("", ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_map_to_what_a_caller_can_do),
        cmocka_unit_test(test_mechanism_names_its_portal),
        cmocka_unit_test(test_name_eq),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
