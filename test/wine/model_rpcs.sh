# shellcheck shell=bash
# model_rpcs.sh - sourced by test/wine/model.sh: every disk (30) and
# volume (56) RPC of every version against csi-proxy-model.exe, each
# through the product's Win32 storage host on the device model. Disk 7 is
# the blank disk the volume RPCs partition (the flows use 1-6).

# -- disk: 30 RPCs ------------------------------------------------------------------
for v in v1alpha1 v1beta1 v1beta2 v1beta3 v1; do
    old=0; case $v in v1alpha1 | v1beta1 | v1beta2) old=1 ;; esac
    rpc "disk $v ListDiskLocations (from IOCTL_SCSI_GET_ADDRESS)" 0 '"13":{"Adapter":"4","Target":"13","LUNID":"7"}' \
        disk $v ListDiskLocations
    rpc "disk $v Rescan" 0 'status: OK' disk $v Rescan
    if [ $old = 1 ]; then
        rpc "disk $v PartitionDisk (string ID, refused on a system disk it would change)" 9 \
            'disk 14 is the system disk: refusing to partition it' disk $v PartitionDisk '{"diskID":"14"}'
    else
        rpc "disk $v PartitionDisk (unknown disk)" 5 'disk 99 not found' disk $v PartitionDisk '{"disk_number":99}'
    fi
done
rpc "disk v1alpha1 GetDiskNumberByName (page83 as a T10 vendor ID)" 0 '"disk_number":"9"' \
    disk v1alpha1 GetDiskNumberByName '{"disk_name":"Google  PersistentDisk  pvc-staged"}'
for v in v1beta1 v1beta2; do
    rpc "disk $v ListDiskIDs (identifiers map)" 0 '"5":{"identifiers":{"page83":"eui.0a1b2c3d4e5f6000050000000000000005","serialNumber":"vol0a1b2c3d4e5f60005_00000001."}}' \
        disk $v ListDiskIDs
    rpc "disk $v DiskStats" 0 '"diskSize":"8589934592"' disk $v DiskStats '{"diskID":"9"}'
done
for v in v1beta3 v1; do
    rpc "disk $v ListDiskIDs" 0 '"13":{"page83":"0025385b71b0a013","serial_number":"S3Z9NB0K123456A"}' \
        disk $v ListDiskIDs
    rpc "disk $v GetDiskStats" 0 '"total_bytes":"8589934592"' disk $v GetDiskStats '{"disk_number":9}'
    rpc "disk $v SetDiskState (offline)" 0 'status: OK' disk $v SetDiskState '{"disk_number":10,"is_online":false}'
    rpc "disk $v GetDiskState (offline)" 0 '{}' disk $v GetDiskState '{"disk_number":10}'
    rpc "disk $v SetDiskState (online)" 0 'status: OK' disk $v SetDiskState '{"disk_number":10,"is_online":true}'
    rpc "disk $v GetDiskState" 0 '"is_online":true' disk $v GetDiskState '{"disk_number":10}'
    rpc "disk $v SetDiskState (boot disk offline refused)" 9 'refusing to take it offline' \
        disk $v SetDiskState '{"disk_number":0,"is_online":false}'
done
rpc "disk v1beta2 SetAttachState (offline)" 0 'status: OK' disk v1beta2 SetAttachState '{"diskID":"10","isOnline":false}'
rpc "disk v1beta2 GetAttachState (offline)" 0 '{}' disk v1beta2 GetAttachState '{"diskID":"10"}'
rpc "disk v1beta2 SetAttachState (online)" 0 'status: OK' disk v1beta2 SetAttachState '{"diskID":"10","isOnline":true}'
rpc "disk v1beta2 GetAttachState" 0 '"isOnline":true' disk v1beta2 GetAttachState '{"diskID":"10"}'

# -- volume: 56 RPCs, one volume, every version in turn --------------------------------
NEW7=$(vol 5157d15c-0007-4000-8000-000000000001)
expect "disk v1 PartitionDisk 7" 0 'status: OK' disk v1 PartitionDisk '{"disk_number":7}'
n=0
for v in v1alpha1 v1beta1 v1beta2 v1beta3 v1 v2alpha1; do
    n=$((n + 1))
    old=0; case $v in v1alpha1 | v1beta1 | v1beta2) old=1 ;; esac
    d=$(mnt "vol-$v")
    if [ $old = 1 ]; then
        pathf=path sizef=size unmount=DismountVolume
        rpc "volume $v ListVolumesOnDisk (string disk ID)" 0 "\"volume_ids\":[\"$NEW7\"]" \
            volume $v ListVolumesOnDisk '{"disk_id":"7"}'
    else
        pathf=target_path sizef=size_bytes unmount=UnmountVolume
        rpc "volume $v ListVolumesOnDisk (partition 1)" 0 "\"volume_ids\":[\"$NEW7\"]" \
            volume $v ListVolumesOnDisk '{"disk_number":7,"partition_number":1}'
    fi
    rpc "volume $v IsVolumeFormatted" 0 "$([ $n = 1 ] && echo '{}' || echo '"formatted":true')" \
        volume $v IsVolumeFormatted "{\"volume_id\":\"$NEW7\"}"
    rpc "volume $v FormatVolume" 0 'status: OK' volume $v FormatVolume "{\"volume_id\":\"$NEW7\"}"
    rpc "volume $v MountVolume" 0 'status: OK' volume $v MountVolume "{\"volume_id\":\"$NEW7\",\"$pathf\":\"$d\"}"
    rpc "volume $v MountVolume again (kubelet retry)" 0 'status: OK' \
        volume $v MountVolume "{\"volume_id\":\"$NEW7\",\"$pathf\":\"$d\"}"
    rpc "volume $v ResizeVolume (under 100 MiB more: nothing to do)" 0 'status: OK' \
        volume $v ResizeVolume "{\"volume_id\":\"$NEW7\",\"$sizef\":10800000000}"
    case $v in
    v1beta1 | v1beta2)
        rpc "volume $v VolumeStats" 0 '"volumeSize":"' volume $v VolumeStats "{\"volume_id\":\"$NEW7\"}"
        rpc "volume $v GetVolumeDiskNumber" 0 '"diskNumber":"7"' volume $v GetVolumeDiskNumber "{\"volume_id\":\"$NEW7\"}"
        rpc "volume $v GetVolumeIDFromMount" 0 "\"volume_id\":\"$NEW7\"" volume $v GetVolumeIDFromMount "{\"mount\":\"$d\"}"
        ;;
    v1beta3 | v1 | v2alpha1)
        rpc "volume $v GetVolumeStats" 0 '"total_bytes":"' volume $v GetVolumeStats "{\"volume_id\":\"$NEW7\"}"
        rpc "volume $v GetDiskNumberFromVolumeID" 0 '"disk_number":7' volume $v GetDiskNumberFromVolumeID "{\"volume_id\":\"$NEW7\"}"
        rpc "volume $v GetVolumeIDFromTargetPath" 0 "\"volume_id\":\"$NEW7\"" volume $v GetVolumeIDFromTargetPath "{\"target_path\":\"$d\"}"
        ;;
    esac
    [ $v = v1alpha1 ] || [ $v = v1beta1 ] ||
        rpc "volume $v WriteVolumeCache" 0 'status: OK' volume $v WriteVolumeCache "{\"volume_id\":\"$NEW7\"}"
    if [ $v = v2alpha1 ]; then
        mkdir -p "$C/var/lib/kubelet/plugins/vol-$v/pod/data"
        rpc "volume $v GetClosestVolumeIDFromTargetPath (below a mount)" 0 "\"volume_id\":\"$NEW7\"" \
            volume $v GetClosestVolumeIDFromTargetPath "{\"target_path\":\"$d\\\\pod\\\\data\"}"
        rpc "volume $v GetClosestVolumeIDFromTargetPath (drive C:)" 0 "\"volume_id\":\"$BOOTC\"" \
            volume $v GetClosestVolumeIDFromTargetPath "{\"target_path\":\"$K\"}"
    fi
    rpc "volume $v $unmount" 0 'status: OK' volume $v $unmount "{\"volume_id\":\"$NEW7\",\"$pathf\":\"$d\"}"
    rpc "volume $v $unmount again (retry)" 0 'status: OK' volume $v $unmount "{\"volume_id\":\"$NEW7\",\"$pathf\":\"$d\"}"
    expect "volume $v: the folder is no mounted folder after $unmount" 9 'not a mounted folder' \
        volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$d\"}"
done
