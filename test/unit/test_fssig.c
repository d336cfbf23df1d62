/* test_fssig.c - the foreign-signature judge (host/fssig.h) over the
 * first bytes of volumes as each format's tools write them (the header
 * fields at their offsets, values a fresh mkfs/pvcreate/cryptsetup/zpool/
 * mkswap/sgdisk leaves), and near misses that must not match: the magic
 * one byte off, a second field out of range, a Windows boot sector. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host/fssig.h"

static uint8_t *vol; /* CP_FSSIG_HEAD_BYTES, zeroed per test */

static int setup(void **state)
{
    (void)state;
    vol = calloc(1, CP_FSSIG_HEAD_BYTES);
    return vol == NULL;
}

static int teardown(void **state)
{
    (void)state;
    free(vol);
    return 0;
}

static void put(size_t at, const void *b, size_t n)
{
    memcpy(vol + at, b, n);
}

static void le32(size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        vol[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void be32(size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        vol[at + (size_t)i] = (uint8_t)(v >> (8 * (3 - i)));
}

static void le64(size_t at, uint64_t v)
{
    le32(at, (uint32_t)v);
    le32(at + 4, (uint32_t)(v >> 32));
}

static void be64(size_t at, uint64_t v)
{
    be32(at, (uint32_t)(v >> 32));
    be32(at + 4, (uint32_t)v);
}

static const char *judge(void)
{
    return cp_fssig_foreign(vol, CP_FSSIG_HEAD_BYTES);
}

static void found(const char *want)
{
    const char *s = judge();
    assert_non_null(s);
    assert_non_null(strstr(s, want));
}

/* mkfs.ext4 on a 1 GiB volume: 4 KiB blocks, rev 1, clean. */
static void ext4_superblock(void)
{
    le32(1024 + 0, 65536);  /* s_inodes_count */
    le32(1024 + 4, 262144); /* s_blocks_count_lo */
    le32(1024 + 24, 2);     /* s_log_block_size: 4 KiB */
    le32(1024 + 28, 2);     /* s_log_cluster_size */
    le32(1024 + 32, 32768); /* s_blocks_per_group */
    vol[1080] = 0x53;       /* s_magic 0xEF53 */
    vol[1081] = 0xEF;
    vol[1082] = 1;      /* s_state: clean */
    le32(1024 + 76, 1); /* s_rev_level: dynamic */
}

static void test_ext4(void **state)
{
    (void)state;
    ext4_superblock();
    found("ext2/3/4");
    found("0xEF53 at byte 1080");
}

static void test_ext_near_misses(void **state)
{
    (void)state;
    ext4_superblock();
    vol[1080] = 0x00; /* the magic one byte later */
    vol[1081] = 0x53;
    vol[1082] = 0xEF;
    assert_null(judge());
    memset(vol, 0, 4096);
    ext4_superblock();
    le32(1024 + 24, 0x53EF); /* s_log_block_size nonsense */
    assert_null(judge());
    memset(vol, 0, 4096);
    vol[1080] = 0xEF; /* big-endian: not ext */
    vol[1081] = 0x53;
    assert_null(judge());
}

/* mkfs.xfs: "XFSB", sb_blocksize 4096 (big-endian). */
static void test_xfs(void **state)
{
    (void)state;
    put(0, "XFSB", 4);
    be32(4, 4096);
    be64(8, 262144); /* sb_dblocks */
    found("XFS");
    be32(4, 4095); /* not a power of two */
    assert_null(judge());
    be32(4, 4096);
    vol[0] = 'x'; /* lower case */
    assert_null(judge());
}

/* mkfs.btrfs: the superblock at 64 KiB, magic at +64. */
static void test_btrfs(void **state)
{
    (void)state;
    put(65536 + 64, "_BHRfS_M", 8);
    le64(65536 + 48, 65536); /* bytenr */
    found("Btrfs");
    memset(vol + 65536, 0, 128);
    put(65536, "_BHRfS_M", 8); /* at the superblock's start: not the magic's place */
    assert_null(judge());
    put(65600, "_BHRfS_m", 8);
    assert_null(judge());
}

/* pvcreate: the label in sector 1. */
static void test_lvm2(void **state)
{
    (void)state;
    put(512, "LABELONE", 8);
    le64(512 + 8, 1);   /* sector_xl */
    le32(512 + 20, 32); /* offset_xl */
    put(512 + 24, "LVM2 001", 8);
    found("LVM2");
    memset(vol + 512, 0, 32);
    put(512, "LABELONE", 8); /* no type */
    assert_null(judge());
    memset(vol + 512, 0, 32);
    put(4 * 512, "LABELONE", 8); /* sector 4: past where LVM looks */
    put(4 * 512 + 24, "LVM2 001", 8);
    assert_null(judge());
    memset(vol + 2048, 0, 32);
    put(3 * 512, "LABELONE", 8); /* sector 3: found */
    put(3 * 512 + 24, "LVM2 001", 8);
    found("LVM2");
}

/* cryptsetup luksFormat: LUKS1 and LUKS2. */
static void test_luks(void **state)
{
    (void)state;
    put(0, "LUKS\xba\xbe\x00\x02", 8);
    put(8, "luks2\0", 6);
    found("LUKS");
    put(0, "LUKS\xba\xbe\x00\x01", 8);
    put(8, "aes\0", 4);
    found("LUKS");
    put(0, "LUKS\xba\xbe\x00\x03", 8); /* no such version */
    assert_null(judge());
    put(0, "LUKS\xba\xbf\x00\x01", 8);
    assert_null(judge());
}

/* zpool create: uberblocks in label 0's array; little-endian on x86,
 * big-endian pools exist. */
static void test_zfs(void **state)
{
    (void)state;
    size_t ub = 128 * 1024 + 5 * 1024; /* slot 5 */
    le64(ub, 0x00bab10cull);
    le64(ub + 8, 5000); /* SPA_VERSION_FEATURES */
    le64(ub + 16, 42);  /* ub_txg */
    found("ZFS");
    memset(vol + ub, 0, 32);
    ub = 128 * 1024 + 127 * 1024; /* the last 1 KiB slot */
    be64(ub, 0x00bab10cull);
    be64(ub + 8, 28);
    found("ZFS");
    memset(vol + ub, 0, 32);
    le64(128 * 1024 + 8, 0x00bab10cull); /* inside a slot, not at its start */
    le64(128 * 1024 + 16, 5000);
    assert_null(judge());
    memset(vol + 128 * 1024, 0, 32);
    le64(128 * 1024, 0x00bab10cull); /* version 0 */
    assert_null(judge());
    memset(vol + 128 * 1024, 0, 32);
    le64(64 * 1024, 0x00bab10cull); /* before the array */
    le64(64 * 1024 + 8, 5000);
    assert_null(judge());
}

/* mkswap: version 1 header, magic at page end - 10. */
static void test_swap(void **state)
{
    (void)state;
    le32(1024, 1); /* version */
    put(4096 - 10, "SWAPSPACE2", 10);
    found("SWAPSPACE2");
    memset(vol + 4086, 0, 10);
    put(65536 - 10, "SWAP-SPACE", 10); /* the old format, 64 KiB pages */
    found("SWAP-SPACE");
    memset(vol + 65526, 0, 10);
    put(4096 - 9, "SWAPSPACE2", 10); /* one byte off */
    assert_null(judge());
}

/* sgdisk -o: a protective MBR and the GPT header at LBA 1. */
static void test_gpt(void **state)
{
    (void)state;
    put(512, "EFI PART", 8);
    le32(512 + 8, 0x00010000); /* revision 1.0 */
    le32(512 + 12, 92);        /* header size */
    found("GPT");
    memset(vol + 512, 0, 16);
    put(4096, "EFI PART", 8); /* 4 KiB sectors */
    found("GPT");
    memset(vol + 4096, 0, 8);
    put(1024, "EFI PART", 8); /* LBA 2 of 512: not a header */
    assert_null(judge());
}

static void mbr_entry(int i, uint8_t status, uint8_t type, uint32_t lba, uint32_t count)
{
    size_t e = 446 + 16 * (size_t)i;
    vol[e] = status;
    vol[e + 4] = type;
    le32(e + 8, lba);
    le32(e + 12, count);
}

/* fdisk: a DOS table with one Linux partition; GRUB's boot code. */
static void test_mbr(void **state)
{
    (void)state;
    vol[0] = 0xEB; /* GRUB boot.img: jmp, nop, no BIOS parameter block */
    vol[1] = 0x63;
    vol[2] = 0x90;
    mbr_entry(0, 0x80, 0x83, 2048, 2095104);
    vol[510] = 0x55;
    vol[511] = 0xAA;
    found("MBR");
    mbr_entry(1, 0x00, 0x82, 2097152, 1048576); /* and a swap partition */
    found("MBR");
}

static void test_mbr_near_misses(void **state)
{
    (void)state;
    vol[510] = 0x55; /* the boot signature and no entry */
    vol[511] = 0xAA;
    assert_null(judge());
    mbr_entry(0, 0x01, 0x83, 2048, 4096); /* status neither 0 nor 0x80 */
    assert_null(judge());
    mbr_entry(0, 0x00, 0x00, 2048, 4096); /* no type */
    assert_null(judge());
    mbr_entry(0, 0x00, 0x83, 2048, 4096);
    vol[511] = 0xAB;
    assert_null(judge());
    vol[511] = 0xAA;
    found("MBR");
    /* The same bytes in an NTFS boot sector: a volume Windows mounts. */
    put(0, "\xEB\x52\x90NTFS    ", 11);
    assert_null(judge());
    /* A FAT32 boot sector: jump, 512 bytes a sector, 8 a cluster, 32
     * reserved, 2 FATs. */
    put(0, "\xEB\x58\x90MSDOS5.0\x00\x02\x08\x20\x00\x02", 17);
    assert_null(judge());
}

static void test_blank_and_short(void **state)
{
    (void)state;
    assert_null(judge());
    assert_null(cp_fssig_foreign(NULL, 0));
    ext4_superblock();
    assert_null(cp_fssig_foreign(vol, 1081)); /* cut before the magic's end */
    assert_non_null(cp_fssig_foreign(vol, 1082));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ext4, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ext_near_misses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_xfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_btrfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lvm2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_luks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mbr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mbr_near_misses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blank_and_short, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
