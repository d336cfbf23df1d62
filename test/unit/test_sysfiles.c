/* test_sysfiles.c - page-file and crash-dump registry entries turned into
 * paths the volume calls take (host/sysfiles.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "host/sysfiles.h"

static void expect(const char *entry, bool paging, cp_sysfile_kind kind, const char *out)
{
    char buf[1100];
    memset(buf, 0, sizeof(buf));
    cp_sysfile_kind k = cp_sysfile_entry(entry, paging, buf, sizeof(buf));
    if (k != kind)
        fail_msg("\"%s\": kind %d, want %d (%s)", entry, (int)k, (int)kind, buf);
    if (out != NULL && strcmp(buf, out) != 0)
        fail_msg("\"%s\": \"%s\", want \"%s\"", entry, buf, out);
}

static void test_paging_entries(void **state)
{
    (void)state;
    expect("C:\\pagefile.sys 0 0", true, CP_SYSFILE_PATH, "C:\\pagefile.sys");
    expect("D:\\pagefile.sys 1024 4096", true, CP_SYSFILE_PATH, "D:\\pagefile.sys");
    expect("D:\\pagefile.sys 1024", true, CP_SYSFILE_PATH, "D:\\pagefile.sys");
    expect("D:\\pagefile.sys", true, CP_SYSFILE_PATH, "D:\\pagefile.sys");
    expect("E:\\page files\\pagefile.sys  512  512 ", true, CP_SYSFILE_PATH,
           "E:\\page files\\pagefile.sys");
    expect("?:\\pagefile.sys", true, CP_SYSFILE_NONE, NULL);
    expect("", true, CP_SYSFILE_NONE, NULL);
    expect("   ", true, CP_SYSFILE_NONE, NULL);
}

/* ExistingPageFiles: \??\ is the DOS-devices directory (\\?\ in Win32),
 * never to be dropped: a volume GUID path without it is relative, which
 * GetVolumePathNameW answers with the boot volume. */
static void test_nt_paths_converted(void **state)
{
    (void)state;
    expect("\\??\\C:\\pagefile.sys", true, CP_SYSFILE_PATH, "C:\\pagefile.sys");
    expect("\\??\\Volume{0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0}\\pagefile.sys", true,
           CP_SYSFILE_PATH, "\\\\?\\Volume{0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0}\\pagefile.sys");
    expect("\\\\?\\Volume{0B1C2D3E-4F50-6172-8394-A5B6C7D8E9F0}\\dump\\d.sys", false,
           CP_SYSFILE_PATH, "\\\\?\\Volume{0B1C2D3E-4F50-6172-8394-A5B6C7D8E9F0}\\dump\\d.sys");
    expect("\\\\?\\C:\\pagefile.sys", true, CP_SYSFILE_PATH, "C:\\pagefile.sys");
}

static void test_entries_naming_no_volume(void **state)
{
    (void)state;
    expect("pagefile.sys 0 0", true, CP_SYSFILE_BAD, "not an absolute path");
    expect("Volume{0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0}\\pagefile.sys", true, CP_SYSFILE_BAD,
           "not an absolute path");
    expect("\\??\\Volume{0b1c2d3e}\\pagefile.sys", true, CP_SYSFILE_BAD,
           "a device path the volume calls do not take");
    expect("\\??\\HarddiskVolume3\\pagefile.sys", true, CP_SYSFILE_BAD,
           "a device path the volume calls do not take");
    expect("\\Device\\HarddiskVolume3\\pagefile.sys", true, CP_SYSFILE_BAD,
           "an NT object path the volume calls do not take");
    expect("\\??\\UNC\\server\\share\\memory.dmp", false, CP_SYSFILE_BAD,
           "a network path: on no local volume");
    expect("\\\\server\\share\\memory.dmp", false, CP_SYSFILE_BAD,
           "a network path: on no local volume");
    expect("C:", false, CP_SYSFILE_BAD, "not an absolute path");
    expect("C:MEMORY.DMP", false, CP_SYSFILE_BAD, "not an absolute path");
    char longp[1500];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[0] = 'C', longp[1] = ':', longp[2] = '\\';
    longp[sizeof(longp) - 1] = '\0';
    expect(longp, false, CP_SYSFILE_BAD, "longer than a path may be here");
}

/* Dump files: no size fields (a trailing number is part of the name). */
static void test_dump_entries(void **state)
{
    (void)state;
    expect("C:\\Windows\\MEMORY.DMP", false, CP_SYSFILE_PATH, "C:\\Windows\\MEMORY.DMP");
    expect("D:\\dumps\\dump 1", false, CP_SYSFILE_PATH, "D:\\dumps\\dump 1");
}

static void test_problem_line(void **state)
{
    (void)state;
    char line[1024];
    cp_sysfile_problem(&cp_sysfile_sources[1], "\\??\\HarddiskVolume3\\pagefile.sys",
                       "a device path the volume calls do not take", line, sizeof(line));
    assert_string_equal(line, "page file entry \"\\??\\HarddiskVolume3\\pagefile.sys\" "
                              "(HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Memory "
                              "Management\\ExistingPageFiles): its volume cannot be told (a "
                              "device path the volume calls do not take); csi-proxy does not "
                              "keep that volume from being changed for it");
    assert_int_equal(cp_sysfile_unresolved(NULL, NULL), 0); /* native: none */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paging_entries),
        cmocka_unit_test(test_nt_paths_converted),
        cmocka_unit_test(test_entries_naming_no_volume),
        cmocka_unit_test(test_dump_entries),
        cmocka_unit_test(test_problem_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
