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
# after each version's unmounts: the folder is no mounted folder any more
unmounted() { # VERSION FOLDER UNMOUNT-RPC
    expect "volume $1: the folder is no mounted folder after $3" 9 'not a mounted folder' \
        volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$2\"}"
}
. test/wine/volume_rpcs.sh
volume_rpcs 7 "$(vol 5157d15c-0007-4000-8000-000000000001)" unmounted
