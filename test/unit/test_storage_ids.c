/* test_storage_ids.c - the identity strings drivers parse (page83, serial
 * number, location, volume IDs, string disk IDs), made from raw
 * STORAGE_DEVICE_ID_DESCRIPTOR / STORAGE_DEVICE_DESCRIPTOR / SCSI_ADDRESS
 * bytes laid out as Windows returns them (host/storage_ids.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "host/storage_ids.h"

/* --- building descriptors byte by byte ---------------------------------- */

typedef struct buf {
    uint8_t b[1024];
    size_t n;
} buf;

static void u32(buf *d, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        d->b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void u16(buf *d, size_t at, uint16_t v)
{
    d->b[at] = (uint8_t)v;
    d->b[at + 1] = (uint8_t)(v >> 8);
}

/* STORAGE_DEVICE_ID_DESCRIPTOR header; identifiers are appended. */
static void id_header(buf *d)
{
    memset(d, 0, sizeof(*d));
    u32(d, 0, 16);
    d->n = 12;
}

/* Appends one STORAGE_IDENTIFIER; next = 0 means "aligned size", ~0 keeps 0. */
static void ident(buf *d, uint32_t code_set, uint32_t type, uint32_t assoc, const void *v,
                  uint16_t len, int next)
{
    size_t at = d->n;
    uint16_t step = (uint16_t)((16 + len + 3) / 4 * 4);
    u32(d, at, code_set);
    u32(d, at + 4, type);
    u16(d, at + 8, len);
    u16(d, at + 10, next < 0 ? 0 : next > 0 ? (uint16_t)next : step);
    u32(d, at + 12, assoc);
    memcpy(d->b + at + 16, v, len);
    d->n = at + step;
    u32(d, 8, d->b[8] + 1u);
    u32(d, 4, (uint32_t)d->n);
}

static const char *page83(const buf *d)
{
    static char out[256];
    cp_page83_format(d->b, d->n, out, sizeof(out));
    return out;
}

static void test_page83_binary_naa_is_lower_hex(void **state)
{
    (void)state;
    buf d;
    id_header(&d);
    const uint8_t naa[] = {0x60, 0x02, 0x24, 0x80, 0xAB, 0xCD, 0xEF, 0x01,
                           0x23, 0x45, 0x67, 0x89, 0x0A, 0xBC, 0xDE, 0xF0};
    ident(&d, CP_SID_CODESET_BINARY, CP_SID_TYPE_FCPH_NAME, CP_SID_ASSOC_DEVICE, naa, 16, 0);
    assert_string_equal(page83(&d), "60022480abcdef01234567890abcdef0");
}

static void test_page83_ascii_as_is_with_padding(void **state)
{
    (void)state;
    buf d;
    id_header(&d);
    const char t10[] = "Google  PersistentDisk  pvc-1234  ";
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_DEVICE, t10,
          (uint16_t)strlen(t10), 0);
    assert_string_equal(page83(&d), t10);
}

static void test_page83_nvme_eui_forms(void **state)
{
    (void)state;
    buf d;
    /* an NVMe namespace reported as an ASCII SCSI name string */
    id_header(&d);
    const char eui[] = "eui.0025385B71B0A013";
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_SCSI_NAME_STRING, CP_SID_ASSOC_DEVICE, eui,
          (uint16_t)strlen(eui), 0);
    assert_string_equal(page83(&d), "eui.0025385B71B0A013");
    /* an EUI-64 designator in binary: hex */
    id_header(&d);
    const uint8_t e64[] = {0x00, 0x25, 0x38, 0x5b, 0x71, 0xb0, 0xa0, 0x13};
    ident(&d, CP_SID_CODESET_BINARY, CP_SID_TYPE_EUI64, CP_SID_ASSOC_DEVICE, e64, 8, 0);
    assert_string_equal(page83(&d), "0025385b71b0a013");
    /* the same name as UTF-8 (code set 3): upstream skips it; nothing else -> "" */
    id_header(&d);
    ident(&d, CP_SID_CODESET_UTF8, CP_SID_TYPE_SCSI_NAME_STRING, CP_SID_ASSOC_DEVICE, eui,
          (uint16_t)strlen(eui), 0);
    assert_string_equal(page83(&d), "");
}

static void test_page83_first_device_identifier_wins(void **state)
{
    (void)state;
    buf d;
    id_header(&d);
    const char port[] = "port-id";
    const char utf8[] = "eui.utf8";
    const uint8_t bin[] = {0xde, 0xad, 0xbe, 0xef};
    const char later[] = "LATER";
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_PORT, port, 7, 0);
    ident(&d, CP_SID_CODESET_UTF8, CP_SID_TYPE_SCSI_NAME_STRING, CP_SID_ASSOC_DEVICE, utf8, 8, 0);
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_TARGET, port, 7, 0);
    ident(&d, CP_SID_CODESET_BINARY, CP_SID_TYPE_EUI64, CP_SID_ASSOC_DEVICE, bin, 4, 0);
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_DEVICE, later, 5, 0);
    assert_string_equal(page83(&d), "deadbeef");
}

static void test_page83_next_offset_is_followed(void **state)
{
    (void)state;
    buf d;
    id_header(&d);
    /* NextOffset larger than the identifier (drivers pad): 40 bytes */
    const char skip[] = "x";
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_PORT, skip, 1, 40);
    d.n = 12 + 40;
    const char want[] = "ABC";
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_DEVICE, want, 3, 0);
    assert_string_equal(page83(&d), "ABC");
}

static void test_page83_bad_buffers_give_empty(void **state)
{
    (void)state;
    char out[64] = "junk";
    assert_int_equal(cp_page83_format(NULL, 0, out, sizeof(out)), 0);
    assert_string_equal(out, "");
    buf d;
    id_header(&d);
    assert_string_equal(page83(&d), "");                             /* no identifiers */
    assert_int_equal(cp_page83_format(d.b, 8, out, sizeof(out)), 0); /* short header */
    /* the identifier claims more bytes than the buffer has */
    const char v[] = "ABCDEFGH";
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_DEVICE, v, 8, 0);
    assert_int_equal(cp_page83_format(d.b, 12 + 16 + 4, out, sizeof(out)), 0);
    assert_string_equal(out, "");
    /* count says 3, the buffer holds 1 identifier that is skipped */
    u32(&d, 8, 3);
    u32(&d, 12 + 12, CP_SID_ASSOC_PORT);
    assert_string_equal(page83(&d), "");
    /* NextOffset 0 on a skipped identifier: stop (upstream loops forever) */
    id_header(&d);
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_PORT, v, 8, -1);
    u32(&d, 8, 2);
    assert_string_equal(page83(&d), "");
}

static void test_page83_ascii_nul_and_small_output(void **state)
{
    (void)state;
    buf d;
    id_header(&d);
    const char v[8] = {'A', 'B', 'C', 0, 'D', 'E', 0, 0};
    ident(&d, CP_SID_CODESET_ASCII, CP_SID_TYPE_VENDOR_ID, CP_SID_ASSOC_DEVICE, v, 8, 0);
    assert_string_equal(page83(&d), "ABC");
    id_header(&d);
    const uint8_t bin[] = {1, 2, 3, 4};
    ident(&d, CP_SID_CODESET_BINARY, CP_SID_TYPE_EUI64, CP_SID_ASSOC_DEVICE, bin, 4, 0);
    char small[5];
    assert_int_equal(cp_page83_format(d.b, d.n, small, sizeof(small)), 8);
    assert_string_equal(small, "0102");
}

/* --- serial number ------------------------------------------------------- */

/* STORAGE_DEVICE_DESCRIPTOR with strings appended at their offsets. */
static void dev_desc(buf *d, const char *vendor, const char *serial)
{
    memset(d, 0, sizeof(*d));
    u32(d, 0, 40);
    d->n = 36;
    if (vendor != NULL) {
        u32(d, 12, (uint32_t)d->n);
        memcpy(d->b + d->n, vendor, strlen(vendor) + 1);
        d->n += strlen(vendor) + 1;
    }
    if (serial != NULL) {
        u32(d, 24, (uint32_t)d->n);
        memcpy(d->b + d->n, serial, strlen(serial) + 1);
        d->n += strlen(serial) + 1;
    }
    u32(d, 4, (uint32_t)d->n);
}

static const char *serial(const buf *d)
{
    static char out[128];
    cp_serial_format(d->b, d->n, out, sizeof(out));
    return out;
}

static void test_serial(void **state)
{
    (void)state;
    buf d;
    dev_desc(&d, "Msft    ", "vol0a1b2c3d4e5f60005_00000001.");
    assert_string_equal(serial(&d), "vol0a1b2c3d4e5f60005_00000001.");
    dev_desc(&d, NULL, "     S3Z9NB0K123456A     ");
    assert_string_equal(serial(&d), "S3Z9NB0K123456A");
    dev_desc(&d, "ATA", NULL); /* SerialNumberOffset 0: none */
    assert_string_equal(serial(&d), "");
    dev_desc(&d, NULL, "   ");
    assert_string_equal(serial(&d), "");
    /* offset past the buffer */
    dev_desc(&d, NULL, "X");
    u32(&d, 24, 900);
    assert_string_equal(serial(&d), "");
    /* no terminating NUL inside the buffer: bounded by it */
    dev_desc(&d, NULL, "ABCDEF");
    d.n -= 3; /* cut "EF\0" */
    assert_string_equal(serial(&d), "ABCD");
    /* header too short */
    char out[8] = "junk";
    assert_int_equal(cp_serial_format(d.b, 20, out, sizeof(out)), 0);
    assert_string_equal(out, "");
}

/* --- location --------------------------------------------------------------- */

static void test_location_from_scsi_address_bytes(void **state)
{
    (void)state;
    const uint8_t sa[8] = {8, 0, 0, 0, 2, 0, 3, 4}; /* SCSI_ADDRESS */
    unsigned port, path, target, lun;
    assert_true(cp_scsi_address_read(sa, sizeof(sa), &port, &path, &target, &lun));
    char loc[128];
    cp_location_format("", port, path, target, lun, loc, sizeof(loc));
    assert_string_equal(loc, "Integrated : Adapter 2 : Port 0 : Target 3 : LUN 4");
    cp_location_format("PCI Slot 3", 0, 0, 1, 0, loc, sizeof(loc));
    assert_string_equal(loc, "PCI Slot 3 : Adapter 0 : Port 0 : Target 1 : LUN 0");
    assert_false(cp_scsi_address_read(sa, 7, &port, &path, &target, &lun));
    cp_disk_location l;
    cp_location_format("", port, path, target, lun, loc, sizeof(loc));
    assert_true(cp_location_parse(loc, &l));
    assert_string_equal(l.adapter, "2");
    assert_string_equal(l.target, "3");
    assert_string_equal(l.lun, "4");
    assert_string_equal(l.bus, "");
}

static void test_location_parse_as_upstream(void **state)
{
    (void)state;
    cp_disk_location l;
    /* MSFT_Disk.Location examples */
    assert_true(cp_location_parse("PCI Slot 3 : Adapter 0 : Port 0 : Target 1 : LUN 0", &l));
    assert_string_equal(l.adapter, "0");
    assert_string_equal(l.bus, "");
    assert_string_equal(l.target, "1");
    assert_string_equal(l.lun, "0");
    assert_true(cp_location_parse(
        "PCI Bus 0, Device 4, Function 0 : Adapter 3 : Port 0 : Target 0 : LUN 11", &l));
    assert_string_equal(l.adapter, "3");
    assert_string_equal(l.lun, "11");
    /* a "Bus N" part fills Bus */
    assert_true(cp_location_parse("Integrated : Adapter 1 : Bus 2 : Target 3 : LUN 4", &l));
    assert_string_equal(l.bus, "2");
    /* fewer than 5 parts: left out */
    assert_false(cp_location_parse("Adapter 0 : Port 0 : Target 1 : LUN 0", &l));
    assert_false(cp_location_parse("", &l));
    assert_false(cp_location_parse(NULL, &l));
    /* 5 parts but no two-word part: left out */
    assert_false(cp_location_parse("a : b : c : d : e f g", &l));
    /* two-word unknown parts count as found, fill nothing */
    assert_true(cp_location_parse("x : y : z : Port 0 : Slot 1", &l));
    assert_string_equal(l.adapter, "");
    /* split on single spaces: "Adapter  0" has three words */
    assert_true(cp_location_parse("I : Adapter  0 : Port 0 : Target 5 : LUN 6", &l));
    assert_string_equal(l.adapter, "");
    assert_string_equal(l.target, "5");
    /* surrounding blanks are trimmed, case matters */
    assert_true(cp_location_parse(" I :\tAdapter 7\t: Port 0 : target 5 : LUN 6 ", &l));
    assert_string_equal(l.adapter, "7");
    assert_string_equal(l.target, "");
    assert_string_equal(l.lun, "6");
}

/* --- volume IDs and GUIDs ---------------------------------------------------- */

static void test_volume_ids(void **state)
{
    (void)state;
    /* {0a6f7c10-1111-4a2b-9c3d-000000000003} in memory (Data1..3 little-endian) */
    const uint8_t g[16] = {0x10, 0x7c, 0x6f, 0x0a, 0x11, 0x11, 0x2b, 0x4a,
                           0x9c, 0x3d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03};
    char id[CP_VOLUME_ID_LEN + 1];
    cp_volume_id_format(g, id);
    assert_string_equal(id, "\\\\?\\Volume{0a6f7c10-1111-4a2b-9c3d-000000000003}\\");
    assert_int_equal(strlen(id), CP_VOLUME_ID_LEN);

    char norm[CP_VOLUME_ID_LEN + 1];
    uint8_t back[16];
    cp_error e;
    assert_int_equal(
        cp_volume_id_parse("\\\\?\\Volume{0A6F7C10-1111-4A2B-9C3D-000000000003}\\", norm, back, &e),
        CP_OK);
    assert_string_equal(norm, id);
    assert_memory_equal(back, g, 16);
    const char *bad[] = {
        "",
        "\\\\?\\Volume{0a6f7c10-1111-4a2b-9c3d-000000000003}", /* no trailing \ */
        "\\\\.\\Volume{0a6f7c10-1111-4a2b-9c3d-000000000003}\\",
        "\\\\?\\Volume{0a6f7c10-1111-4a2b-9c3d-00000000000g}\\",
        "\\\\?\\Volume{0a6f7c10+1111-4a2b-9c3d-000000000003}\\",
        "\\\\?\\Volume{0a6f7c10-1111-4a2b-9c3d-000000000003}\\x",
        "C:\\",
        "Volume{0a6f7c10-1111-4a2b-9c3d-000000000003}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(cp_volume_id_parse(bad[i], norm, NULL, &e), CP_E_INVALID_ARGUMENT);
        assert_non_null(strstr(e.msg, "not a volume GUID path"));
    }
    uint8_t g2[16];
    assert_true(cp_guid_parse("{0a6f7c10-1111-4a2b-9c3d-000000000003}", g2));
    assert_memory_equal(g2, g, 16);
    assert_true(cp_guid_parse("0a6f7c10-1111-4a2b-9c3d-000000000003", g2));
    assert_false(cp_guid_parse("{0a6f7c10-1111-4a2b-9c3d-000000000003", g2));
    assert_false(cp_guid_parse(NULL, g2));

    assert_true(cp_has_volume_guid("\\\\?\\Volume{452e318a-5cde-421e-9831-b9853c521012}\\"));
    assert_true(cp_has_volume_guid("Volume{}"));
    assert_false(cp_has_volume_guid("C:\\var\\lib\\kubelet"));
    assert_false(cp_has_volume_guid("Volume{45 2e}"));
}

/* --- string disk IDs --------------------------------------------------------- */

static void test_disk_number_parse(void **state)
{
    (void)state;
    uint32_t n = 99;
    char why[128];
    assert_int_equal(cp_parse_disk_number("0", &n, why, sizeof(why)), CP_OK);
    assert_int_equal(n, 0);
    assert_int_equal(cp_parse_disk_number("007", &n, why, sizeof(why)), CP_OK);
    assert_int_equal(n, 7);
    assert_int_equal(cp_parse_disk_number("4294967295", &n, why, sizeof(why)), CP_OK);
    assert_int_equal(n, 4294967295u);
    const struct {
        const char *in, *why;
    } bad[] = {
        {"", "strconv.ParseUint: parsing \"\": invalid syntax"},
        {"x1", "strconv.ParseUint: parsing \"x1\": invalid syntax"},
        {"-1", "strconv.ParseUint: parsing \"-1\": invalid syntax"},
        {"+1", "strconv.ParseUint: parsing \"+1\": invalid syntax"},
        {" 1", "strconv.ParseUint: parsing \" 1\": invalid syntax"},
        {"0x1", "strconv.ParseUint: parsing \"0x1\": invalid syntax"},
        {"1_0", "strconv.ParseUint: parsing \"1_0\": invalid syntax"},
        {"a\"b", "strconv.ParseUint: parsing \"a\\\"b\": invalid syntax"},
        {"18446744073709551616",
         "strconv.ParseUint: parsing \"18446744073709551616\": value out of range"},
        {"99999999999999999999x",
         "strconv.ParseUint: parsing \"99999999999999999999x\": value out of range"},
        {"4294967297", "disk number 4294967297 is out of range (at most 4294967295)"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(cp_parse_disk_number(bad[i].in, &n, why, sizeof(why)),
                         CP_E_INVALID_ARGUMENT);
        assert_string_equal(why, bad[i].why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page83_binary_naa_is_lower_hex),
        cmocka_unit_test(test_page83_ascii_as_is_with_padding),
        cmocka_unit_test(test_page83_nvme_eui_forms),
        cmocka_unit_test(test_page83_first_device_identifier_wins),
        cmocka_unit_test(test_page83_next_offset_is_followed),
        cmocka_unit_test(test_page83_bad_buffers_give_empty),
        cmocka_unit_test(test_page83_ascii_nul_and_small_output),
        cmocka_unit_test(test_serial),
        cmocka_unit_test(test_location_from_scsi_address_bytes),
        cmocka_unit_test(test_location_parse_as_upstream),
        cmocka_unit_test(test_volume_ids),
        cmocka_unit_test(test_disk_number_parse),
    };
    return cmocka_run_group_tests_name("storage_ids", tests, NULL, NULL);
}
