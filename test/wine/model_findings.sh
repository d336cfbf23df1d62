# shellcheck shell=bash
# model_findings.sh - sourced by test/wine/model.sh: the Win32 review
# findings as regression tests on
# csi-proxy-model.exe. Each names the fixture disk (test/fixtures/
# model.yaml) that shows it.

# disk 20 answers ERROR_NOT_READY: left out, logged, naming the IOCTL.
expect "ListDiskIDs answers for the others when disk 20 is not ready" 0 '"19":{' disk v1 ListDiskIDs
if [[ "$(json)" != *'"20":'* ]] &&
    grep -q 'storage: listing disks: skipping IOCTL_DISK_GET_LENGTH_INFO disk 20: .*(error 21)' "$LOG"; then
    ok "disk 20 is left out and logged with IOCTL_DISK_GET_LENGTH_INFO and ERROR_NOT_READY"
else
    bad "disk 20 is left out and logged" "$(json | head -c 300) / $(grep -i skipping "$LOG" | head -3)"
fi
expect "ListDiskLocations answers for the others" 0 '"1":{"Adapter":"1","Target":"0","LUNID":"1"}' \
    disk v1 ListDiskLocations
# NVMe namespaces 1 and 2 of one controller (disks 26, 27) share a SCSI
# address: they answer LUN = NSID - 1, so a driver picking by LUN finds each.
expect "NVMe namespace 1 of adapter 5 answers LUN 0" 0 '"26":{"Adapter":"5","Target":"0","LUNID":"0"}' \
    disk v1 ListDiskLocations
if [[ "$(json)" == *'"27":{"Adapter":"5","Target":"0","LUNID":"1"}'* ]]; then
    ok "NVMe namespace 2 of adapter 5 answers LUN 1"
else
    bad "NVMe namespace 2 of adapter 5 answers LUN 1" "$(json | head -c 400)"
fi
expect "a call naming disk 20 fails UNAVAILABLE" 14 'IOCTL_DISK_GET_LENGTH_INFO disk 20: Not ready (error 21)' disk v1 GetDiskStats '{"disk_number":20}'

# CD-ROM 0's volume says DeviceNumber 0 (FILE_DEVICE_CD_ROM): not a
# volume of disk 0.
CD=$(vol cdcdcdcd-0000-4000-8000-000000000001)
cli volume v1 ListVolumesOnDisk '{"disk_number":0}'
if [ "$RC" = 0 ] && [[ "$OUT" == *"$BOOTC"* ]] && [[ "$OUT" != *cdcdcdcd* ]]; then
    ok "ListVolumesOnDisk of disk 0 has C: and not CD-ROM 0's volume"
else
    bad "ListVolumesOnDisk of disk 0 has C: and not CD-ROM 0's volume" "exit $RC: $OUT"
fi
expect "GetDiskNumberFromVolumeID of the CD-ROM volume is no disk's" 9 'not a basic volume on one partition' \
    volume v1 GetDiskNumberFromVolumeID "{\"volume_id\":\"$CD\"}"

# disk 10 (offline, one volume that arrives 2500 ms after it comes
# online): listed right after SetDiskState(online).
expect "SetDiskState(online) of disk 10" 0 'status: OK' disk v1 SetDiskState '{"disk_number":10,"is_online":true}'
# (the volume group's ListVolumesOnDisk waits for expected volumes itself:
# a call on the volume, made at once, shows that the host waited)
expect "GetVolumeStats of its volume right after SetDiskState(online)" 0 '"total_bytes":"3221225472"' \
    volume v1 GetVolumeStats "{\"volume_id\":\"$(vol 10101010-0010-4000-8000-000000000001)\"}"
expect "ListVolumesOnDisk right after it sees the volume" 0 \
    "$(vol 10101010-0010-4000-8000-000000000001)" volume v1 ListVolumesOnDisk '{"disk_number":10}'
# disk 17 collides: clearing the attribute leaves it offline, the
# host falls back to MSFT_Disk.Online.
expect "SetDiskState(online) of disk 17 (signature collision)" 0 'status: OK' \
    disk v1 SetDiskState '{"disk_number":17,"is_online":true}'
expect "disk 17 is online after it" 0 '"is_online":true' disk v1 GetDiskState '{"disk_number":17}'
expect "and its volume is listed" 0 "$(vol 17171717-0017-4000-8000-000000000001)" \
    volume v1 ListVolumesOnDisk '{"disk_number":17}'
# disk 18 is RAW and offline (SAN policy): PartitionDisk first.
expect "PartitionDisk of RAW offline disk 18 brings it online and partitions it" 0 'status: OK' \
    disk v1 PartitionDisk '{"disk_number":18}'
# format right after partitioning (the volume arrives 2500 ms after the
# partition; PartitionDisk waits for it): FormatVolume at once
expect "format right after partitioning: FormatVolume of disk 18's new volume at once" 0 'status: OK' \
    volume v1 FormatVolume "{\"volume_id\":\"$(vol 5157d15c-0012-4000-8000-000000000001)\"}"
expect "disk 18 has its volume" 0 "$(vol 5157d15c-0012-4000-8000-000000000001)" \
    volume v1 ListVolumesOnDisk '{"disk_number":18}'

# disk 19 (ESP, MSR, a basic volume): a system disk PartitionDisk
# would not change: it succeeds.
expect "PartitionDisk of a restored boot-disk snapshot with a basic volume succeeds" 0 'status: OK' \
    disk v1 PartitionDisk '{"disk_number":19}'
expect "... and leaves its three partitions" 0 "$(vol 19191919-0019-4000-8000-000000000003)" \
    volume v1 ListVolumesOnDisk '{"disk_number":19}'

# resize after growth (the flows check it on every version); on
# the staged disk 9 (no growth) up to the end of its GPT usable area.
expect "ResizeVolume to the maximum on disk 9" 0 'status: OK' \
    volume v1 ResizeVolume "{\"volume_id\":\"$STAGED\",\"size_bytes\":0}"
# 8 GiB - 1 MiB (start) - 16896 (the backup GPT) = 8588869120, in whole 4 KiB clusters
expect "GetVolumeStats shows it" 0 '"total_bytes":"8588865536"' \
    volume v1 GetVolumeStats "{\"volume_id\":\"$STAGED\"}"

# a read-only disk (DISK_ATTRIBUTE_READ_ONLY) is made writable before
# PartitionDisk writes to it (model_guards.sh: the same for SetDiskState)
expect "read-only disk 21: PartitionDisk clears the attribute and partitions it" 0 'status: OK' \
    disk v1 PartitionDisk '{"disk_number":21}'
expect "read-only disk 21: ... and it has its volume" 0 'Volume{5157d15c-0015-4000-8000-' \
    volume v1 ListVolumesOnDisk '{"disk_number":21}'

# what Windows needs, from the host's own sources
mkdir -p "$C/var/lib/kubelet/plugins/needed"
expect "MountVolume of C: (boot, page file, crash dump, on disk 0)" 9 \
    'is the boot volume (it holds Windows), holds the page file, holds the crash dump file and is on disk 0, the boot and system disk: refusing to mount it' \
    volume v1 MountVolume "{\"volume_id\":\"$BOOTC\",\"target_path\":\"$K\\\\plugins\\\\needed\"}"
expect "MountVolume of D: (the page file, from the registry) is refused" 9 'holds the page file: refusing to mount it' \
    volume v1 MountVolume "{\"volume_id\":\"$(vol 15151515-0015-4000-8000-000000000001)\",\"target_path\":\"$K\\\\plugins\\\\needed\"}"
expect "FormatVolume of disk 14's EFI system partition is refused" 9 'refusing to format it' \
    volume v1 FormatVolume "{\"volume_id\":\"$(vol 14141414-0014-4000-8000-000000000001)\"}"
SNAPE=$(vol 16161616-0016-4000-8000-000000000001)
d=$(mnt snap)
expect "a data volume with E: mounts" 0 'status: OK' \
    volume v1 MountVolume "{\"volume_id\":\"$SNAPE\",\"target_path\":\"$d\"}"
expect "... and unmounts" 0 'status: OK' volume v1 UnmountVolume "{\"volume_id\":\"$SNAPE\",\"target_path\":\"$d\"}"
