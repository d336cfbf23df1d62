#!/usr/bin/env bash
# demo-flow.sh - what CSI node plugins ask csi-proxy to do, call by call,
# against a running server seeded with test/fixtures/demo-node.yaml
# (scripts/demo.sh starts one). Each call is printed ("-> group version
# Method request"), then its answer ("<- ..." and "status: ...").
#
#   scripts/demo-flow.sh --wine           csi-proxy-cli.exe in $WINEPREFIX
#                                         (C:\csi\), over the named pipes
#   scripts/demo-flow.sh --socket-dir DIR the native csi-proxy-cli over the
#                                         native build's Unix sockets
#
# 1. A block driver (the AWS EBS driver's calls, DRIVER-CONTRACTS §1):
#    stage (find the disk by serial, make the staging folder, partition,
#    online, find the volume, format, mount), publish, stats, expand
#    (the cloud grew the disk: rescan, resize), unpublish, unstage.
# 2. The SMB driver (csi-driver-smb, §2): stage (map the share with its
#    credentials, linked at the staging folder), publish, unpublish, unstage.
# 3. An iSCSI target: add the portal, discover, log in (its LUN becomes a
#    disk), log out, remove the portal.
# Last, the final state is checked: no staging or pod folder left, the disk
# offline, the LUN gone, no portal. Exit 0 only when every call answered OK
# and the final state is clean.
#
# Wine creates no symbolic links (its CreateSymbolicLinkW makes none, and
# csi-proxy reports that as an error), so with --wine the two steps where
# drivers make a link use what Wine can do, and the transcript says so:
# the block volume is published by mounting it at the pod folder too, and
# the SMB share is mapped without a link (the staging folder stays a plain
# folder). --socket-dir runs the drivers' own calls (CreateSymlink, a
# mapping with its link). In both, the SMB pod folder is not linked: the
# simulated share's UNC path exists on no disk, so a link to it leads
# nowhere, and csi-proxy refuses a link whose source does not resolve.
set -u
MODE=
SOCK=
case ${1:-} in
--wine) MODE=wine ;;
--socket-dir) MODE=native SOCK=${2:?--socket-dir DIR} ;;
*) echo "usage: $0 --wine | --socket-dir DIR" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.." || exit 1
command -v jq >/dev/null || { echo "demo-flow: jq is needed (scripts/apt-packages.txt)" >&2; exit 2; }

CALLS=0
FAILED=0
OUT=
dirty=()
# call GROUP VERSION METHOD [JSON]: prints the call and its answer; OUT is
# the answer's JSON line. A call that does not answer OK is counted.
call() {
    local req=${4:-"{}"} rc
    CALLS=$((CALLS + 1))
    printf -- '-> %s %s %s %s\n' "$1" "$2" "$3" "$req"
    if [ $MODE = wine ]; then
        OUT=$(wine 'C:\csi\csi-proxy-cli.exe' "$1" "$2" "$3" "$req" 2>&1 | tr -d '\r')
    else
        OUT=$(build/native/csi-proxy-cli --socket-dir "$SOCK" "$1" "$2" "$3" "$req" 2>&1)
    fi
    rc=$?
    local body status
    body=$(grep -m1 '^{' <<<"$OUT")
    status=$(grep -m1 '^status: ' <<<"$OUT")
    [ -n "$body" ] && printf '<- %s\n' "$(cut -c1-300 <<<"$body")"
    printf '   %s\n' "${status:-status: none (exit $rc): $(head -3 <<<"$OUT")}"
    [ "$status" = "status: OK" ] || FAILED=$((FAILED + 1))
    OUT=$body
}
step() { printf '\n== %s\n' "$*"; }
note() { printf '   (%s)\n' "$*"; }
# jstr TEXT: TEXT as the inside of a JSON string
jstr() { jq -Rr '@json' <<<"$1" | sed 's/^"//; s/"$//'; }

K='C:\var\lib\kubelet'
STG="$K\\plugins\\kubernetes.io\\csi\\ebs.csi.aws.com\\0f1e2d3c4b5a\\globalmount"
PUB="$K\\pods\\7c0e6b1a-demo\\volumes\\kubernetes.io~csi\\pvc-block\\mount"
SSTG="$K\\plugins\\kubernetes.io\\csi\\smb.csi.k8s.io\\9a8b7c6d5e4f\\globalmount"
SPUB="$K\\pods\\7c0e6b1a-demo\\volumes\\kubernetes.io~csi\\pvc-smb\\mount"
JSTG=$(jstr "$STG") JPUB=$(jstr "$PUB") JSSTG=$(jstr "$SSTG") JSPUB=$(jstr "$SPUB")
# the folders the drivers make before they link (kubelet makes the pod's)
JPUBDIR=$(jstr "${PUB%\\*}") JSSTGDIR=$(jstr "${SSTG%\\*}") JSPUBDIR=$(jstr "${SPUB%\\*}")
SHARE='\\files.demo.example\pvc-data'
JSHARE=$(jstr "$SHARE")
SMBUSER=$(jstr 'DEMO\svc-smb')
SMBPASS=Demo-Pa55-w0rd
SERIAL=vol0demo00000000001

echo "csi-proxy demo: $([ $MODE = wine ] && echo 'csi-proxy-sim.exe under Wine, over the named pipes' ||
    echo "the native build, over the Unix sockets in $SOCK")"

# --- 1. a block driver ------------------------------------------------------------
step "block: NodeStageVolume - which disk did the cloud attach? (serial holds the volume ID $SERIAL)"
call disk v1 ListDiskIDs
D=$(jq -r --arg s "$SERIAL" '.diskIDs | to_entries[] | select(.value.serial_number // "" | contains($s)) | .key' <<<"$OUT" | head -1)
note "disk ${D:-none} carries $SERIAL"
[ -n "$D" ] || D=1
step "block: stage - the staging folder"
call filesystem v1 PathExists "{\"path\":\"$JSTG\"}"
call filesystem v1 Mkdir "{\"path\":\"$JSTG\"}"
step "block: stage - partition the disk, bring it online, find its volume"
call disk v1 PartitionDisk "{\"disk_number\":$D}"
call disk v1 SetDiskState "{\"disk_number\":$D,\"is_online\":true}"
call volume v1 ListVolumesOnDisk "{\"disk_number\":$D}"
VOL=$(jq -r '.volume_ids[0] // empty' <<<"$OUT")
JVOL=$(jstr "$VOL")
step "block: stage - format it if it is not, mount it at the staging folder"
call volume v1 IsVolumeFormatted "{\"volume_id\":\"$JVOL\"}"
[ "$(jq -r '.formatted // false' <<<"$OUT")" = true ] || call volume v1 FormatVolume "{\"volume_id\":\"$JVOL\"}"
call volume v1 MountVolume "{\"volume_id\":\"$JVOL\",\"target_path\":\"$JSTG\"}"
step "block: NodePublishVolume - the pod's folder shows the volume"
call filesystem v1 Mkdir "{\"path\":\"$JPUBDIR\"}"
if [ $MODE = native ]; then
    call filesystem v1 CreateSymlink "{\"source_path\":\"$JSTG\",\"target_path\":\"$JPUB\"}"
else
    note "the driver links the pod folder to the staging folder (CreateSymlink); Wine makes no"
    note "links, so here the volume is mounted at the pod folder too: the pod sees the same volume"
    call filesystem v1 Mkdir "{\"path\":\"$JPUB\"}"
    call volume v1 MountVolume "{\"volume_id\":\"$JVOL\",\"target_path\":\"$JPUB\"}"
fi
step "block: NodeGetVolumeStats"
call volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$JPUB\"}"
call volume v1 GetVolumeStats "{\"volume_id\":\"$JVOL\"}"
before=$(jq -r '.total_bytes // 0' <<<"$OUT")
step "block: NodeExpandVolume - the cloud grew the disk; rescan, grow the volume"
call disk v1 Rescan
call disk v1 GetDiskStats "{\"disk_number\":$D}"
call volume v1 ResizeVolume "{\"volume_id\":\"$JVOL\",\"size_bytes\":0}"
call volume v1 GetVolumeStats "{\"volume_id\":\"$JVOL\"}"
after=$(jq -r '.total_bytes // 0' <<<"$OUT")
note "volume size $before -> $after bytes"
[ "$after" -gt "$before" ] 2>/dev/null || dirty+=("the volume did not grow ($before -> $after)")
step "block: NodeUnpublishVolume"
[ $MODE = wine ] && call volume v1 UnmountVolume "{\"volume_id\":\"$JVOL\",\"target_path\":\"$JPUB\"}"
call filesystem v1 Rmdir "{\"path\":\"$JPUB\",\"force\":true}"
step "block: NodeUnstageVolume - unmount, remove the staging folder, take the disk offline"
call volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$JSTG\"}"
call volume v1 UnmountVolume "{\"volume_id\":\"$JVOL\",\"target_path\":\"$JSTG\"}"
call filesystem v1 Rmdir "{\"path\":\"$JSTG\",\"force\":true}"
call volume v1 GetDiskNumberFromVolumeID "{\"volume_id\":\"$JVOL\"}"
call disk v1 SetDiskState "{\"disk_number\":$D,\"is_online\":false}"

# --- 2. the SMB driver ------------------------------------------------------------------
step "smb: NodeStageVolume - map $SHARE with the secret's credentials"
call filesystem v1 Mkdir "{\"path\":\"$JSSTGDIR\"}"
SMAP="{\"remote_path\":\"$JSHARE\",\"username\":\"$SMBUSER\",\"password\":\"$SMBPASS\""
if [ $MODE = native ]; then
    call smb v1 NewSmbGlobalMapping "$SMAP,\"local_path\":\"$JSSTG\"}"
else
    note "the driver asks for the mapping linked at its staging folder; Wine makes no"
    note "links, so here the share is mapped without one"
    call smb v1 NewSmbGlobalMapping "$SMAP}"
fi
step "smb: NodePublishVolume"
note "the driver links the pod folder to the staging link (CreateSymlink); the share is"
note "simulated, so its UNC path exists on no disk here and that link would lead nowhere"
call filesystem v1 Mkdir "{\"path\":\"$JSPUBDIR\"}"
call filesystem v1 PathExists "{\"path\":\"$JSPUB\"}"
step "smb: NodeUnpublishVolume, NodeUnstageVolume"
call filesystem v1 Rmdir "{\"path\":\"$JSPUB\",\"force\":true}"
call smb v1 RemoveSmbGlobalMapping "{\"remote_path\":\"$JSHARE\"}"
call filesystem v1 Rmdir "{\"path\":\"$JSSTG\",\"force\":true}"

# --- 3. iSCSI ---------------------------------------------------------------------------
P='{"target_address":"san.demo.example"}'
IQN=iqn.2026-01.example.demo:san-lun
step "iscsi: the SAN's portal, its target, a login: the LUN becomes a disk"
call iscsi v1alpha2 AddTargetPortal "{\"target_portal\":$P}"
call iscsi v1alpha2 DiscoverTargetPortal "{\"target_portal\":$P}"
call iscsi v1alpha2 ConnectTarget "{\"target_portal\":$P,\"iqn\":\"$IQN\"}"
call iscsi v1alpha2 GetTargetDisks "{\"target_portal\":$P,\"iqn\":\"$IQN\"}"
L=$(jq -r '.diskIDs[0] // empty' <<<"$OUT")
[ -n "$L" ] && call disk v1 GetDiskStats "{\"disk_number\":$L}"
step "iscsi: log out, remove the portal"
call iscsi v1alpha2 DisconnectTarget "{\"target_portal\":$P,\"iqn\":\"$IQN\"}"
call iscsi v1alpha2 RemoveTargetPortal "{\"target_portal\":$P}"

# --- the final state --------------------------------------------------------------------
step "the final state: nothing left behind"
for p in "$JSTG" "$JPUB" "$JSSTG" "$JSPUB"; do
    call filesystem v1 PathExists "{\"path\":\"$p\"}"
    [ "$(jq -r '.exists // false' <<<"$OUT")" = false ] || dirty+=("$p exists")
done
call disk v1 GetDiskState "{\"disk_number\":$D}"
[ "$(jq -r '.is_online // false' <<<"$OUT")" = false ] || dirty+=("disk $D online")
call iscsi v1alpha2 GetTargetDisks "{\"target_portal\":$P,\"iqn\":\"$IQN\"}"
[ "$(jq -r '.diskIDs // [] | length' <<<"$OUT")" = 0 ] || dirty+=("the LUN is still a disk")
call iscsi v1alpha2 ListTargetPortals
[ "$(jq -r '.target_portals // [] | length' <<<"$OUT")" = 0 ] || dirty+=("a portal is left")

echo
if [ "${#dirty[@]}" = 0 ]; then
    echo "final state: clean"
else
    echo "final state: NOT clean: ${dirty[*]}"
fi
echo "demo: $CALLS calls, $((CALLS - FAILED)) answered OK, $FAILED did not"
[ "$FAILED" = 0 ] && [ "${#dirty[@]}" = 0 ]
