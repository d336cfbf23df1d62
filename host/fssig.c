/* fssig.c - file-system and container signatures Windows does not mount
 * (see fssig.h for where each lives and the second field checked). */
#include "host/fssig.h"

#include <stdbool.h>
#include <string.h>

static bool has(const uint8_t *b, size_t len, size_t at, const char *sig, size_t n)
{
    return at + n <= len && memcmp(b + at, sig, n) == 0;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | (uint64_t)be32(p + 4);
}

static bool ext(const uint8_t *b, size_t len)
{
    /* struct ext2_super_block at 1024: s_log_block_size at +24, s_magic at
     * +56 (little-endian 0xEF53). */
    return len >= 1082 && b[1080] == 0x53 && b[1081] == 0xEF && le32(b + 1048) <= 6;
}

static bool xfs(const uint8_t *b, size_t len)
{
    /* xfs_sb: sb_magicnum "XFSB", sb_blocksize (big-endian) at 4. */
    if (!has(b, len, 0, "XFSB", 4) || len < 8)
        return false;
    uint32_t bs = be32(b + 4);
    return bs >= 512 && bs <= 65536 && (bs & (bs - 1)) == 0;
}

static bool lvm2(const uint8_t *b, size_t len)
{
    /* label_header: id "LABELONE" at 0, type "LVM2 001" at 24, in one of
     * the first four 512-byte sectors. */
    for (size_t s = 0; s < 4; s++)
        if (has(b, len, s * 512, "LABELONE", 8) && has(b, len, s * 512 + 24, "LVM2 001", 8))
            return true;
    return false;
}

static bool luks(const uint8_t *b, size_t len)
{
    /* LUKS1 and LUKS2 headers: magic "LUKS\xba\xbe", version (big-endian
     * 16-bit) at 6. */
    return has(b, len, 0, "LUKS\xba\xbe", 6) && len >= 8 && b[6] == 0 && (b[7] == 1 || b[7] == 2);
}

static bool zfs(const uint8_t *b, size_t len)
{
    /* vdev label 0: 8 KiB blank, 8 KiB boot header, 112 KiB name/value
     * pairs, then the uberblock array at 128 KiB; a slot is at least 1 KiB
     * (1 << ashift). uberblock: ub_magic, ub_version (u64, the pool's byte
     * order). */
    for (size_t at = 128u * 1024; at + 16 <= len && at < 256u * 1024; at += 1024) {
        uint64_t m = le64(b + at), v = le64(b + at + 8);
        if (m != 0x00bab10cull) {
            m = be64(b + at);
            v = be64(b + at + 8);
        }
        if (m == 0x00bab10cull && v >= 1 && v <= 5000)
            return true;
    }
    return false;
}

static const char *swap(const uint8_t *b, size_t len)
{
    /* union swap_header: the magic ends the first page. */
    static const size_t pages[] = {4096, 8192, 16384, 65536};
    for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        if (has(b, len, pages[i] - 10, "SWAPSPACE2", 10))
            return "Linux swap (\"SWAPSPACE2\" ending the first page)";
        if (has(b, len, pages[i] - 10, "SWAP-SPACE", 10))
            return "Linux swap (\"SWAP-SPACE\" ending the first page)";
    }
    return NULL;
}

/* The boot sector of a file system Windows mounts: its OEM name, or a
 * jump and a FAT BIOS parameter block. */
static bool windows_boot_sector(const uint8_t *b)
{
    if (memcmp(b + 3, "NTFS    ", 8) == 0 || memcmp(b + 3, "EXFAT   ", 8) == 0 ||
        memcmp(b + 3, "ReFS", 4) == 0 || memcmp(b + 3, "-FVE-FS-", 8) == 0)
        return true;
    bool jump = (b[0] == 0xEB && b[2] == 0x90) || b[0] == 0xE9;
    unsigned bps = (unsigned)b[11] | (unsigned)b[12] << 8, spc = b[13];
    unsigned reserved = (unsigned)b[14] | (unsigned)b[15] << 8, fats = b[16];
    return jump && (bps == 512 || bps == 1024 || bps == 2048 || bps == 4096) && spc != 0 &&
           (spc & (spc - 1)) == 0 && reserved >= 1 && (fats == 1 || fats == 2);
}

static bool mbr(const uint8_t *b, size_t len)
{
    if (len < 512 || b[510] != 0x55 || b[511] != 0xAA || windows_boot_sector(b))
        return false;
    int used = 0;
    for (int i = 0; i < 4; i++) {
        const uint8_t *e = b + 446 + 16 * i;
        if (e[0] != 0x00 && e[0] != 0x80)
            return false;
        bool empty = true;
        for (int k = 0; k < 16; k++)
            empty = empty && e[k] == 0;
        if (empty)
            continue;
        if (e[4] == 0 || le32(e + 8) == 0 || le32(e + 12) == 0)
            return false;
        used++;
    }
    return used > 0;
}

const char *cp_fssig_foreign(const uint8_t *b, size_t len)
{
    if (b == NULL)
        return NULL;
    if (luks(b, len))
        return "LUKS (\"LUKS\\xba\\xbe\" at byte 0)";
    if (xfs(b, len))
        return "XFS (\"XFSB\" at byte 0)";
    if (lvm2(b, len))
        return "LVM2 physical volume (\"LABELONE\" ... \"LVM2 001\" in sectors 0-3)";
    if (ext(b, len))
        return "ext2/3/4 (superblock magic 0xEF53 at byte 1080)";
    if (has(b, len, 65600, "_BHRfS_M", 8))
        return "Btrfs (\"_BHRfS_M\" at byte 65600)";
    if (zfs(b, len))
        return "ZFS (uberblock magic 0x00bab10c at 128 KiB)";
    const char *s = swap(b, len);
    if (s != NULL)
        return s;
    if (has(b, len, 512, "EFI PART", 8) || has(b, len, 4096, "EFI PART", 8))
        return "a GPT partition table (\"EFI PART\" at LBA 1)";
    if (mbr(b, len))
        return "an MBR partition table (0x55AA at byte 510 with partition entries)";
    return NULL;
}
