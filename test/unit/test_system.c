/* test_system.c - the system group: the SMBIOS string reader on raw table
 * bytes, and the four RPCs through the real dispatch path (encoded request
 * -> v1alpha1 table -> group logic -> the simulated host), with and
 * without an allowedServices policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups/groups.h"
#include "groups/system/system.h"
#include "dispatch/dispatch.h"
#include "system/v1alpha1/api.pb-c.h"
#include "host/fs.h"
#include "host/smbios.h"
#include "test/unit/group_call.h"
#include "test/unit/group_env.h"

/* --- SMBIOS ------------------------------------------------------------------ */

/* type 0 (BIOS, 1 string), type 1 (System: serial is string 3), end. */
static const uint8_t table[] = {
    0x00, 0x05, 0x00, 0x00, 0x01, 'V', 'e', 'n', 'd', 'o', 'r',  0,    0,    0x01, 0x08, 0x01, 0x00,
    0x01, 0x02, 0x00, 0x03, 'A',  'c', 'm', 'e', 0,   'B', 'o',  'x',  0,    'V',  'M',  'w',  'a',
    'r',  'e',  '-',  '4',  '2',  ' ', '1', 'f', 0,   0,   0x7f, 0x04, 0x02, 0x00, 0,    0,
};

static void test_smbios_system_serial(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(cp_smbios_string(table, sizeof(table), 1, 7, out, sizeof(out)), 1);
    assert_string_equal(out, "VMware-42 1f");
    assert_int_equal(cp_smbios_string(table, sizeof(table), 1, 4, out, sizeof(out)), 1);
    assert_string_equal(out, "Acme");
    assert_int_equal(cp_smbios_string(table, sizeof(table), 0, 4, out, sizeof(out)), 1);
    assert_string_equal(out, "Vendor");
}

static void test_smbios_absent_and_unset(void **state)
{
    (void)state;
    char out[64] = "x";
    /* no type 2 structure */
    assert_int_equal(cp_smbios_string(table, sizeof(table), 2, 4, out, sizeof(out)), 0);
    assert_string_equal(out, "");
    /* string number 0 = not set (offset 6 of the type 1 structure) */
    assert_int_equal(cp_smbios_string(table, sizeof(table), 1, 6, out, sizeof(out)), 0);
    /* an offset past the formatted area */
    assert_int_equal(cp_smbios_string(table, sizeof(table), 1, 9, out, sizeof(out)), 0);
    /* a structure with no strings at all */
    const uint8_t bare[] = {0x01, 0x08, 0x01, 0x00, 0, 0, 0, 0, 0, 0};
    assert_int_equal(cp_smbios_string(bare, sizeof(bare), 1, 7, out, sizeof(out)), 0);
}

static void test_smbios_malformed(void **state)
{
    (void)state;
    char out[64];
    /* cut inside the type 1 strings: no double NUL */
    assert_int_equal(cp_smbios_string(table, 26, 1, 7, out, sizeof(out)), -1);
    /* a header whose length is below 4 */
    const uint8_t shorthdr[] = {0x01, 0x02, 0x00, 0x00, 0, 0};
    assert_int_equal(cp_smbios_string(shorthdr, sizeof(shorthdr), 1, 7, out, sizeof(out)), -1);
    /* a length running past the table */
    const uint8_t longhdr[] = {0x01, 0x40, 0x00, 0x00, 0, 0};
    assert_int_equal(cp_smbios_string(longhdr, sizeof(longhdr), 1, 7, out, sizeof(out)), -1);
    /* a string number the set does not have */
    const uint8_t missing[] = {0x01, 0x08, 0x01, 0x00, 0, 0, 0, 0x05, 'a', 0, 0};
    assert_int_equal(cp_smbios_string(missing, sizeof(missing), 1, 7, out, sizeof(out)), -1);
}

static void test_smbios_sanitized_and_bounded(void **state)
{
    (void)state;
    const uint8_t odd[] = {0x01, 0x08, 0x01, 0x00, 0, 0, 0, 0x01, 'S', 0x01, 0xff, 'N', 0, 0};
    char out[64];
    assert_int_equal(cp_smbios_string(odd, sizeof(odd), 1, 7, out, sizeof(out)), 1);
    assert_string_equal(out, "S..N"); /* control and non-ASCII bytes: valid UTF-8 out */
    char small[3];
    assert_int_equal(cp_smbios_string(table, sizeof(table), 1, 7, small, sizeof(small)), 1);
    assert_string_equal(small, "VM");
}

/* --- the group through dispatch ---------------------------------------------- */

typedef genv env;

static int make_env(void **state, bool restricted, const char *const *allowed, size_t n)
{
    genv_opts o = {.tag = "system-test",
                   .cfg = {.system = {.services_restricted = restricted,
                                      .allowed_services = allowed,
                                      .n_allowed_services = n}}};
    return genv_open(&o, (genv **)state);
}

static int setup_open(void **state)
{
    return make_env(state, false, NULL, 0);
}

static int setup_restricted(void **state)
{
    static const char *const allowed[] = {"W32Time", "lanmanserver"};
    return make_env(state, true, allowed, 2);
}

static int setup_none(void **state)
{
    return make_env(state, true, NULL, 0); /* allowedServices: [] */
}

static int teardown(void **state)
{
    return genv_close(*state);
}

typedef struct result {
    int status;
    char msg[CP_ERROR_MSG_MAX];
    char serial[64], display[128];
    int start_type, state;
} result;

static result call(const env *t, const char *method, const char *name, bool force)
{
    const cp_service *svc = gcall_service(t->groups, "system", "v1alpha1");
    ProtobufCMessage *req = gcall_request(svc, method);
    gcall_set_if(req, "name", name);
    gcall_set_bool_if(req, "force", force);
    gcall_reply g = gcall_run(svc, method, req);
    free(req);
    result res = {.status = g.status};
    snprintf(res.msg, sizeof(res.msg), "%s", g.msg);
    if (g.resp != NULL && strcmp(method, "GetService") == 0) {
        const V1alpha1__GetServiceResponse *r = (const V1alpha1__GetServiceResponse *)g.resp;
        snprintf(res.display, sizeof(res.display), "%s", r->display_name);
        res.start_type = r->start_type;
        res.state = r->status;
    } else if (g.resp != NULL && strcmp(method, "GetBIOSSerialNumber") == 0) {
        const V1alpha1__GetBIOSSerialNumberResponse *r =
            (const V1alpha1__GetBIOSSerialNumberResponse *)g.resp;
        snprintf(res.serial, sizeof(res.serial), "%s", r->serial_number);
    }
    gcall_reply_free(&g);
    return res;
}

static void expect(result r, int status, const char *in_msg)
{
    gcall_check(r.status, r.msg, status, in_msg);
}

static void test_bios_serial(void **state)
{
    result r = call(*state, "GetBIOSSerialNumber", NULL, false);
    expect(r, CP_OK, NULL);
    assert_string_equal(r.serial, "SIM-BIOS-0001");
}

static void test_get_service(void **state)
{
    result r = call(*state, "GetService", "W32TIME", false); /* names are case-insensitive */
    expect(r, CP_OK, NULL);
    assert_string_equal(r.display, "Windows Time");
    assert_int_equal(r.start_type, V1ALPHA1__START_TYPE__MANUAL);
    assert_int_equal(r.state, V1ALPHA1__SERVICE_STATUS__STOPPED);
    expect(call(*state, "GetService", "nosuchsvc", false), CP_E_NOT_FOUND, "nosuchsvc");
}

static void test_start_stop(void **state)
{
    expect(call(*state, "StartService", "w32time", false), CP_OK, NULL);
    assert_int_equal(call(*state, "GetService", "w32time", false).state,
                     V1ALPHA1__SERVICE_STATUS__RUNNING);
    expect(call(*state, "StartService", "w32time", false), CP_OK, NULL); /* already running */
    expect(call(*state, "StopService", "w32time", false), CP_OK, NULL);
    assert_int_equal(call(*state, "GetService", "w32time", false).state,
                     V1ALPHA1__SERVICE_STATUS__STOPPED);
    expect(call(*state, "StopService", "w32time", false), CP_OK, NULL); /* already stopped */
    expect(call(*state, "StartService", "remoteregistry", false), CP_E_FAILED_PRECONDITION,
           "disabled");
    expect(call(*state, "StartService", "nosuchsvc", false), CP_E_NOT_FOUND, "nosuchsvc");
}

static void test_stop_with_dependents(void **state)
{
    /* browser depends on lanmanserver: refused without force, named; then
     * force stops both, the dependent first */
    expect(call(*state, "StopService", "lanmanserver", false), CP_E_FAILED_PRECONDITION, "browser");
    assert_int_equal(call(*state, "GetService", "lanmanserver", false).state,
                     V1ALPHA1__SERVICE_STATUS__RUNNING);
    expect(call(*state, "StopService", "lanmanserver", true), CP_OK, NULL);
    assert_int_equal(call(*state, "GetService", "browser", false).state,
                     V1ALPHA1__SERVICE_STATUS__STOPPED);
    assert_int_equal(call(*state, "GetService", "lanmanserver", false).state,
                     V1ALPHA1__SERVICE_STATUS__STOPPED);
}

static void test_bad_names(void **state)
{
    expect(call(*state, "StartService", "", false), CP_E_INVALID_ARGUMENT, "service name empty");
    expect(call(*state, "GetService", "", false), CP_E_INVALID_ARGUMENT, "service name empty");
    expect(call(*state, "StopService", "a\\b", false), CP_E_INVALID_ARGUMENT, "contains");
    char longname[300];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    expect(call(*state, "StartService", longname, false), CP_E_INVALID_ARGUMENT, "longer than 256");
}

/* allowedServices [W32Time, lanmanserver]: the attack is starting or
 * stopping anything else; it is refused and changes nothing. */
static void test_policy_refuses_others(void **state)
{
    expect(call(*state, "StartService", "msiscsi", false), CP_E_PERMISSION_DENIED,
           "service msiscsi is not in the system group's allowedServices [W32Time, lanmanserver]");
    assert_int_equal(call(*state, "GetService", "msiscsi", false).state,
                     V1ALPHA1__SERVICE_STATUS__STOPPED);
    expect(call(*state, "StopService", "browser", true), CP_E_PERMISSION_DENIED, "browser");
    assert_int_equal(call(*state, "GetService", "browser", false).state,
                     V1ALPHA1__SERVICE_STATUS__RUNNING);
    /* listed ones work, in any letter case */
    expect(call(*state, "StartService", "w32time", false), CP_OK, NULL);
    /* reading is not limited */
    expect(call(*state, "GetService", "msiscsi", false), CP_OK, NULL);
}

static void test_policy_empty_list(void **state)
{
    expect(call(*state, "StartService", "w32time", false), CP_E_PERMISSION_DENIED,
           "allowedServices []");
    expect(call(*state, "GetBIOSSerialNumber", NULL, false), CP_OK, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_smbios_system_serial),
        cmocka_unit_test(test_smbios_absent_and_unset),
        cmocka_unit_test(test_smbios_malformed),
        cmocka_unit_test(test_smbios_sanitized_and_bounded),
        cmocka_unit_test_setup_teardown(test_bios_serial, setup_open, teardown),
        cmocka_unit_test_setup_teardown(test_get_service, setup_open, teardown),
        cmocka_unit_test_setup_teardown(test_start_stop, setup_open, teardown),
        cmocka_unit_test_setup_teardown(test_stop_with_dependents, setup_open, teardown),
        cmocka_unit_test_setup_teardown(test_bad_names, setup_open, teardown),
        cmocka_unit_test_setup_teardown(test_policy_refuses_others, setup_restricted, teardown),
        cmocka_unit_test_setup_teardown(test_policy_empty_list, setup_none, teardown),
    };
    return cmocka_run_group_tests_name("system", tests, NULL, NULL);
}
