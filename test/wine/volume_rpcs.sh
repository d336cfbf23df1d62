# shellcheck shell=bash
# volume_rpcs.sh - sourced by test/wine/storage.sh and test/wine/model.sh:
# the 56 volume RPCs of every version, one version after another on one
# volume, through the sourcing suite's rpc, expect, vol and mnt ($C, $K and
# $BOOTC, the boot volume C:, are the suite's too).
#
# volume_rpcs DISK VOLUME_ID [AFTER]
#   partitions the blank disk DISK (one volume, VOLUME_ID), then per
#   version: lists it, formats it, mounts it twice (the kubelet retries),
#   resizes it, reads its stats, disk number and ID from the folder, flushes
#   its cache, and unmounts it twice. AFTER, a function when given, is
#   called after the unmounts with the version, the folder and the name of
#   the unmount RPC.
volume_rpcs() {
    local disk=$1 id=$2 after=${3:-} n=0 v old d pathf sizef unmount
    expect "disk v1 PartitionDisk $disk" 0 'status: OK' disk v1 PartitionDisk "{\"disk_number\":$disk}"
    for v in v1alpha1 v1beta1 v1beta2 v1beta3 v1 v2alpha1; do
        n=$((n + 1))
        old=0; case $v in v1alpha1 | v1beta1 | v1beta2) old=1 ;; esac
        d=$(mnt "vol-$v")
        if [ $old = 1 ]; then
            pathf=path sizef=size unmount=DismountVolume
            rpc "volume $v ListVolumesOnDisk (string disk ID)" 0 "\"volume_ids\":[\"$id\"]" \
                volume $v ListVolumesOnDisk "{\"disk_id\":\"$disk\"}"
        else
            pathf=target_path sizef=size_bytes unmount=UnmountVolume
            rpc "volume $v ListVolumesOnDisk (partition 1)" 0 "\"volume_ids\":[\"$id\"]" \
                volume $v ListVolumesOnDisk "{\"disk_number\":$disk,\"partition_number\":1}"
        fi
        rpc "volume $v IsVolumeFormatted" 0 "$([ $n = 1 ] && echo '{}' || echo '"formatted":true')" \
            volume $v IsVolumeFormatted "{\"volume_id\":\"$id\"}"
        rpc "volume $v FormatVolume" 0 'status: OK' volume $v FormatVolume "{\"volume_id\":\"$id\"}"
        rpc "volume $v MountVolume" 0 'status: OK' volume $v MountVolume "{\"volume_id\":\"$id\",\"$pathf\":\"$d\"}"
        rpc "volume $v MountVolume again (kubelet retry)" 0 'status: OK' \
            volume $v MountVolume "{\"volume_id\":\"$id\",\"$pathf\":\"$d\"}"
        rpc "volume $v ResizeVolume (under 100 MiB more: nothing to do)" 0 'status: OK' \
            volume $v ResizeVolume "{\"volume_id\":\"$id\",\"$sizef\":10800000000}"
        case $v in
        v1beta1 | v1beta2)
            rpc "volume $v VolumeStats" 0 '"volumeSize":"' volume $v VolumeStats "{\"volume_id\":\"$id\"}"
            rpc "volume $v GetVolumeDiskNumber" 0 "\"diskNumber\":\"$disk\"" \
                volume $v GetVolumeDiskNumber "{\"volume_id\":\"$id\"}"
            rpc "volume $v GetVolumeIDFromMount" 0 "\"volume_id\":\"$id\"" volume $v GetVolumeIDFromMount "{\"mount\":\"$d\"}"
            ;;
        v1beta3 | v1 | v2alpha1)
            rpc "volume $v GetVolumeStats" 0 '"total_bytes":"' volume $v GetVolumeStats "{\"volume_id\":\"$id\"}"
            rpc "volume $v GetDiskNumberFromVolumeID" 0 "\"disk_number\":$disk" \
                volume $v GetDiskNumberFromVolumeID "{\"volume_id\":\"$id\"}"
            rpc "volume $v GetVolumeIDFromTargetPath" 0 "\"volume_id\":\"$id\"" \
                volume $v GetVolumeIDFromTargetPath "{\"target_path\":\"$d\"}"
            ;;
        esac
        [ $v = v1alpha1 ] || [ $v = v1beta1 ] ||
            rpc "volume $v WriteVolumeCache" 0 'status: OK' volume $v WriteVolumeCache "{\"volume_id\":\"$id\"}"
        if [ $v = v2alpha1 ]; then
            mkdir -p "$C/var/lib/kubelet/plugins/vol-$v/pod/data"
            rpc "volume $v GetClosestVolumeIDFromTargetPath (below a mount)" 0 "\"volume_id\":\"$id\"" \
                volume $v GetClosestVolumeIDFromTargetPath "{\"target_path\":\"$d\\\\pod\\\\data\"}"
            rpc "volume $v GetClosestVolumeIDFromTargetPath (drive C:)" 0 "\"volume_id\":\"$BOOTC\"" \
                volume $v GetClosestVolumeIDFromTargetPath "{\"target_path\":\"$K\"}"
        fi
        rpc "volume $v $unmount" 0 'status: OK' volume $v $unmount "{\"volume_id\":\"$id\",\"$pathf\":\"$d\"}"
        rpc "volume $v $unmount again (retry)" 0 'status: OK' \
            volume $v $unmount "{\"volume_id\":\"$id\",\"$pathf\":\"$d\"}"
        [ -z "$after" ] || "$after" "$v" "$d" "$unmount"
    done
}
