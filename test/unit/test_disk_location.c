/* test_disk_location.c - the ListDiskLocations rule for NVMe namespaces
 * (host/disk_location.h): the bus type and namespace ID read from the
 * bytes Windows reports, and the settling of one answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "host/disk_location.h"

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A STORAGE_DEVICE_ID_DESCRIPTOR of one identifier. */
static size_t id_desc(uint8_t *buf, uint32_t code_set, uint32_t type, const char *value,
                      size_t vlen)
{
    memset(buf, 0, 512);
    size_t step = (CP_STORAGE_IDENT_HEADER + vlen + 3) / 4 * 4;
    wr32(buf, 16);
    wr32(buf + 4, (uint32_t)(CP_STORAGE_ID_HEADER + step));
    wr32(buf + 8, 1);
    uint8_t *p = buf + CP_STORAGE_ID_HEADER;
    wr32(p, code_set);
    wr32(p + 4, type);
    p[8] = (uint8_t)vlen;
    p[10] = (uint8_t)step;
    memcpy(p + 16, value, vlen);
    return CP_STORAGE_ID_HEADER + step;
}

/* NVME_SCSI_NAME_STRING with namespace ID text ns (4 characters). */
static const char *name_string(const char *ns)
{
    static char s[69];
    snprintf(s, sizeof(s), "1414%-40s%.4s%-20s", "MSFT NVMe Accelerator v1.0", ns, "SN-0001");
    return s;
}

static void test_bus_type_nvme(void **state)
{
    (void)state;
    uint8_t d[40] = {0};
    wr32(d + 28, 17);
    assert_true(cp_disk_bus_is_nvme(d, sizeof(d)));
    wr32(d + 28, 1); /* BusTypeScsi */
    assert_false(cp_disk_bus_is_nvme(d, sizeof(d)));
    assert_false(cp_disk_bus_is_nvme(d, 20));
    assert_false(cp_disk_bus_is_nvme(NULL, 40));
}

static void test_nsid_from_the_name_string(void **state)
{
    (void)state;
    uint8_t b[512];
    size_t n =
        id_desc(b, CP_SID_CODESET_ASCII, CP_SID_TYPE_SCSI_NAME_STRING, name_string("0002"), 68);
    assert_int_equal(cp_disk_nvme_nsid(b, n), 2);
    n = id_desc(b, CP_SID_CODESET_ASCII, CP_SID_TYPE_SCSI_NAME_STRING, name_string("00aF"), 68);
    assert_int_equal(cp_disk_nvme_nsid(b, n), 0xaf);
    /* a namespace ID that is not four hex digits, or 0: unknown */
    n = id_desc(b, CP_SID_CODESET_ASCII, CP_SID_TYPE_SCSI_NAME_STRING, name_string("00 2"), 68);
    assert_int_equal(cp_disk_nvme_nsid(b, n), 0);
    n = id_desc(b, CP_SID_CODESET_ASCII, CP_SID_TYPE_SCSI_NAME_STRING, name_string("0000"), 68);
    assert_int_equal(cp_disk_nvme_nsid(b, n), 0);
    /* cut short: the identifier runs past the buffer */
    n = id_desc(b, CP_SID_CODESET_ASCII, CP_SID_TYPE_SCSI_NAME_STRING, name_string("0002"), 68);
    assert_int_equal(cp_disk_nvme_nsid(b, 60), 0);
    assert_int_equal(cp_disk_nvme_nsid(NULL, 0), 0);
}

static void test_other_identifiers_give_no_nsid(void **state)
{
    (void)state;
    uint8_t b[512];
    const char *eui = "eui.0a1b2c3d4e5f6000050000000000000005";
    size_t n = id_desc(b, CP_SID_CODESET_ASCII, CP_SID_TYPE_SCSI_NAME_STRING, eui, strlen(eui));
    assert_int_equal(cp_disk_nvme_nsid(b, n), 0);
    n = id_desc(b, CP_SID_CODESET_BINARY, CP_SID_TYPE_EUI64, "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
    assert_int_equal(cp_disk_nvme_nsid(b, n), 0);
    /* 68 bytes, but binary: not a name string */
    n = id_desc(b, CP_SID_CODESET_BINARY, CP_SID_TYPE_SCSI_NAME_STRING, name_string("0002"), 68);
    assert_int_equal(cp_disk_nvme_nsid(b, n), 0);
}

static cp_loc_entry entry(const char *adapter, const char *target, const char *lun, bool nvme,
                          uint32_t nsid)
{
    cp_loc_entry e;
    memset(&e, 0, sizeof(e));
    snprintf(e.loc.adapter, sizeof(e.loc.adapter), "%s", adapter);
    snprintf(e.loc.target, sizeof(e.loc.target), "%s", target);
    snprintf(e.loc.lun, sizeof(e.loc.lun), "%s", lun);
    e.nvme = nvme;
    e.nsid = nsid;
    return e;
}

static void test_namespaces_of_one_controller_get_nsid_minus_one(void **state)
{
    (void)state;
    cp_loc_entry e[3] = {entry("9", "0", "0", true, 1), entry("9", "0", "0", true, 3),
                         entry("9", "0", "0", true, 2)};
    cp_disk_locations_settle(e, 3);
    for (int i = 0; i < 3; i++)
        assert_true(e[i].keep);
    assert_string_equal(e[0].loc.lun, "0");
    assert_string_equal(e[1].loc.lun, "2");
    assert_string_equal(e[2].loc.lun, "1");
}

static void test_ambiguous_disks_are_left_out(void **state)
{
    (void)state;
    /* two namespaces without IDs; a SCSI disk at the same place as a
     * namespace whose ID made it LUN 1; two SCSI disks of other places */
    cp_loc_entry e[6] = {entry("10", "0", "0", true, 0), entry("10", "0", "0", true, 0),
                         entry("9", "0", "1", false, 0), entry("9", "0", "0", true, 2),
                         entry("1", "0", "1", false, 0), entry("1", "1", "1", false, 0)};
    cp_disk_locations_settle(e, 6);
    assert_false(e[0].keep);
    assert_false(e[1].keep);
    assert_false(e[2].keep);
    assert_false(e[3].keep);
    assert_true(e[4].keep);
    assert_true(e[5].keep);
}

static void test_scsi_disks_and_lone_namespaces_keep_their_lun(void **state)
{
    (void)state;
    /* a SCSI disk with a name string is not NVMe: its LUN stays */
    cp_loc_entry e[3] = {entry("1", "0", "4", false, 7), entry("11", "0", "0", true, 0),
                         entry("12", "0", "0", true, 1)};
    cp_disk_locations_settle(e, 3);
    assert_string_equal(e[0].loc.lun, "4");
    assert_string_equal(e[1].loc.lun, "0");
    assert_string_equal(e[2].loc.lun, "0");
    for (int i = 0; i < 3; i++)
        assert_true(e[i].keep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bus_type_nvme),
        cmocka_unit_test(test_nsid_from_the_name_string),
        cmocka_unit_test(test_other_identifiers_give_no_nsid),
        cmocka_unit_test(test_namespaces_of_one_controller_get_nsid_minus_one),
        cmocka_unit_test(test_ambiguous_disks_are_left_out),
        cmocka_unit_test(test_scsi_disks_and_lone_namespaces_keep_their_lun),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
