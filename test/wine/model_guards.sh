# shellcheck shell=bash
# model_guards.sh - sourced by test/wine/model.sh: the guards for data
# that would be lost or left unwritable, through the product's Win32
# storage host on the device model (fixture disks 22-25,
# test/fixtures/model.yaml).

# Disk 22 comes back offline and read-only: SetDiskState(online) clears
# both in one IOCTL_DISK_SET_DISK_ATTRIBUTES, the audit record says so, and
# its volume takes writes (MSFT_Volume.Format fails on a read-only disk).
expect "read-only disk 22: SetDiskState(online)" 0 'status: OK' \
    disk v1 SetDiskState '{"disk_number":22,"is_online":true}'
if grep -a 'audit: call /v1.Disk/SetDiskState' "$LOG" | grep -aq \
    'args={"disk_number":22,"is_online":true} result=OK changed=\[cleared the read-only attribute (DISK_ATTRIBUTE_READ_ONLY) of disk 22\]'; then
    ok "read-only disk 22: the audit record says the read-only attribute was cleared"
else
    bad "read-only disk 22: the audit record says the read-only attribute was cleared" \
        "$(grep -a 'audit: call /v1.Disk/SetDiskState' "$LOG" | tail -3)"
fi
V22=$(vol 22222222-0022-4000-8000-000000000001)
expect "read-only disk 22: its volume formats after SetDiskState(online)" 0 'status: OK' \
    volume v1 FormatVolume "{\"volume_id\":\"$V22\"}"
expect "read-only disk 22: ... and reads as formatted" 0 '"formatted":true' \
    volume v1 IsVolumeFormatted "{\"volume_id\":\"$V22\"}"

# Disk 23's media is write-protected: refused naming the disk, left offline.
expect "write-protected disk 23: SetDiskState(online) refused naming it" 9 \
    'disk 23 is write-protected at the hardware (the media is write protected)' \
    disk v1 SetDiskState '{"disk_number":23,"is_online":true}'
expect "write-protected disk 23: PartitionDisk refused naming it" 9 \
    'disk 23 is write-protected at the hardware' disk v1 PartitionDisk '{"disk_number":23}'
expect "write-protected disk 23: still offline" 0 '{}' disk v1 GetDiskState '{"disk_number":23}'

# Disk 24: volumes Windows reads as RAW that hold Linux file systems.
for c in "1|ext2/3/4 (superblock magic 0xEF53 at byte 1080)" "2|XFS (\"XFSB\" at byte 0)" \
    "3|Linux swap (\"SWAPSPACE2\" ending the first page)" "4|an MBR partition table (0x55AA at byte 510 with partition entries)"; do
    n=${c%%|*} sig=${c#*|}
    V=$(vol "24242424-0024-4000-8000-00000000000$n")
    expect "foreign volume 24.$n: IsVolumeFormatted keeps upstream's answer (false)" 0 '{}' \
        volume v1 IsVolumeFormatted "{\"volume_id\":\"$V\"}"
    expect "foreign volume 24.$n: FormatVolume refused naming $sig" 9 \
        "holds $sig, which Windows does not mount: refusing to format over it" \
        volume v1 FormatVolume "{\"volume_id\":\"$V\"}"
done
expect "volume 24.5 (the ext magic one byte off): FormatVolume formats it" 0 'status: OK' \
    volume v1 FormatVolume "{\"volume_id\":\"$(vol 24242424-0024-4000-8000-000000000005)\"}"

# Disk 25: every WMI operation on it fails (no Storage Management
# provider behind it, as with the defragmentation service disabled), and
# ResizeVolume still grows its volume: IOCTL_DISK_GROW_PARTITION and
# FSCTL_EXTEND_VOLUME, no MSFT_Partition.GetSupportedSize.
V25=$(vol 25252525-0025-4000-8000-000000000001)
expect "no-WMI disk 25: WMI is down for it (FormatVolume fails)" 14 'WBEM_E_FAILED' \
    volume v1 FormatVolume "{\"volume_id\":\"$V25\"}"
expect "no-WMI disk 25: ResizeVolume to the maximum" 0 'status: OK' \
    volume v1 ResizeVolume "{\"volume_id\":\"$V25\",\"size_bytes\":0}"
# 4 GiB - 1 MiB (start) - 16896 (the backup GPT) = 4293901824, in whole 4 KiB clusters
expect "no-WMI disk 25: GetVolumeStats shows the grown volume" 0 '"total_bytes":"4293898240"' \
    volume v1 GetVolumeStats "{\"volume_id\":\"$V25\"}"
