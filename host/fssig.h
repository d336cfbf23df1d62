/* fssig.h - recognising, in the first bytes of a volume, a file system or
 * a container Windows does not mount (so the volume reads as RAW, and
 * IsVolumeFormatted answers false) but which holds someone's data: the
 * volume group refuses to format over it (groups/volume/volume.c).
 *
 * Each signature is where its format puts it, checked with a second field
 * where the format has one, so that stray bytes do not match:
 *   ext2/3/4  superblock at 1024: s_magic 0xEF53 (LE) at 1080, and
 *             s_log_block_size (1048) at most 6 (1 KiB .. 64 KiB blocks)
 *   XFS       "XFSB" at 0, sb_blocksize (BE, at 4) a power of two,
 *             512 .. 65536
 *   Btrfs     "_BHRfS_M" at 65600 (the superblock at 64 KiB, magic at 64)
 *   LVM2      "LABELONE" at the start of one of sectors 0-3 (512 bytes)
 *             and "LVM2 001" 24 bytes after it
 *   LUKS      "LUKS\xba\xbe" at 0 and version (BE, at 6) 1 or 2
 *   ZFS       an uberblock in label 0's array (128 KiB .. 256 KiB, slots
 *             of 1 KiB): ub_magic 0x00bab10c in either byte order at a
 *             slot's start and ub_version 1 .. 5000
 *   swap      "SWAPSPACE2" or "SWAP-SPACE" ending a page of 4, 8, 16 or
 *             64 KiB
 *   GPT       "EFI PART" at 512 or 4096 (the header at LBA 1)
 *   MBR       0x55 0xAA at 510, four partition entries that are well
 *             formed (status 0x00 or 0x80; a used entry has a type, a
 *             start and a length) with at least one used, and no boot
 *             sector of a file system Windows mounts (NTFS, exFAT, ReFS,
 *             BitLocker, FAT with a BIOS parameter block)
 *
 * Portable C; no I/O: the host reads the bytes. */
#ifndef CP_HOST_FSSIG_H
#define CP_HOST_FSSIG_H

#include <stddef.h>
#include <stdint.h>

/* Bytes from the volume's start the judge looks at: the callers read this
 * many (fewer when the volume is smaller). */
#define CP_FSSIG_HEAD_BYTES (256u * 1024u)

/* The signature found in the first len bytes of a volume ("ext2/3/4
 * (superblock magic 0xEF53 at byte 1080)"), or NULL when none. */
const char *cp_fssig_foreign(const uint8_t *head, size_t len);

#endif
