#!/usr/bin/env bash
# Wine tests of the SMB and iSCSI simulators in csi-proxy-sim.exe, seeded
# from test/fixtures/storage.yaml (its smb: and iscsi: sections), called
# over the real named pipes by csi-proxy-cli.exe in a private Wine prefix:
#
#   1. The iSCSI driver flow for both iscsi versions: AddTargetPortal ->
#      DiscoverTargetPortal -> ConnectTarget (CHAP refused without it and
#      with a wrong secret, then accepted) -> GetTargetDisks -> the disks in
#      disk ListDiskIDs / ListDiskLocations -> PartitionDisk ->
#      ListVolumesOnDisk -> FormatVolume -> MountVolume ->
#      GetVolumeIDFromTargetPath -> UnmountVolume -> DisconnectTarget (the
#      disks leave ListDiskIDs and ListDiskLocations) -> RemoveTargetPortal.
#   2. SMB: a mapping made through the pipe, and its link as far as Wine
#      shows it. Wine's CreateSymbolicLinkW is a stub that reports success
#      and creates nothing; the fs host checks and says so, so the link
#      step fails with that text and no link exists in the prefix. What is
#      shown: the mapping itself exists afterwards (another user is refused
#      the server with FAILED_PRECONDITION naming the share, and removing
#      it succeeds). (This check found that the Win32 fs host refused a UNC
#      link target outright, "not a drive-absolute path": fixed in
#      host/fs_win.c.) A mapping without a link succeeds; refusals from the
#      server (down, wrong password, a share it lacks, the fixture's mapping
#      by another user) have their codes. Not shown: a working link.
#   3. At -v 10 no CHAP secret or password appears in the server's log.
# Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed";
# exit 0 only when all passed.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
wine_suite wine-simflow csi-proxy-sim.exe csi-proxy-cli.exe pipecheck.exe
LOG=$WINEPREFIX/server.log

expect() { expect_cli "$@"; } # expect NAME WANT_RC SUBSTRING CLI-ARGS...
# jstr TEXT: TEXT as the inside of a JSON string
jstr() { jq -Rr '@json' <<<"$1" | sed 's/^"//; s/"$//'; }

echo "# prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
wineserver -p
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi" "$C/var/lib/kubelet/plugins" "$C/csi-work"
cp "$W/csi-proxy-sim.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$C/csi/"
cp test/fixtures/storage.yaml "$C/csi/storage.yaml"

CSI_PROXY_SIM_FIXTURE='C:\csi\storage.yaml' wine 'C:\csi\csi-proxy-sim.exe' \
    -working-dir 'C:\csi-work' -v 10 >"$LOG" 2>&1 &
PID=$!
up=1
for _ in $(seq 1 200); do
    if wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1; then up=0; break; fi
    sleep 0.05
done
if [ $up != 0 ]; then
    bad "csi-proxy-sim.exe: all 23 pipes listening" "$(cat "$LOG")"
    finish
    exit 1
fi
ok "csi-proxy-sim.exe: all 23 pipes listening (fixture with smb: and iscsi:)"

K='C:\\var\\lib\\kubelet'
SECRET=Chap-S3cret-16b
WRONG=Wr0ng-S3cret-16

# --- 1. the iSCSI flow -----------------------------------------------------------
for v in v1alpha1 v1alpha2; do
    P="{\"target_address\":\"san-$v.sim.example\"}"
    DATA="iqn.2003-01.org.linux-iscsi.san:$v-data"
    SEC="iqn.2003-01.org.linux-iscsi.san:$v-secure"
    expect "iscsi $v AddTargetPortal" 0 'status: OK' iscsi $v AddTargetPortal "{\"target_portal\":$P}"
    expect "iscsi $v ListTargetPortals shows it, port 0 as 3260" 0 \
        "{\"target_address\":\"san-$v.sim.example\",\"target_port\":3260}" iscsi $v ListTargetPortals
    expect "iscsi $v DiscoverTargetPortal finds the fixture's two targets" 0 "{\"iqns\":[\"$DATA\",\"$SEC\"]}" \
        iscsi $v DiscoverTargetPortal "{\"target_portal\":$P}"
    expect "iscsi $v ConnectTarget without CHAP to a CHAP target: PERMISSION_DENIED" 7 \
        "logging in to $SEC: authentication failure" iscsi $v ConnectTarget "{\"target_portal\":$P,\"iqn\":\"$SEC\"}"
    cli iscsi $v ConnectTarget "{\"target_portal\":$P,\"iqn\":\"$SEC\",\"auth_type\":\"ONE_WAY_CHAP\",\"chap_username\":\"node-a\",\"chap_secret\":\"$WRONG\"}"
    if [ "$RC" = 7 ] && [[ "$OUT" == *"$SEC"* ]] && [[ "$OUT" != *"$WRONG"* ]]; then
        ok "iscsi $v ConnectTarget with a wrong CHAP secret: PERMISSION_DENIED, the secret not echoed"
    else
        bad "iscsi $v ConnectTarget with a wrong CHAP secret: PERMISSION_DENIED, the secret not echoed" "exit $RC: $OUT"
    fi
    expect "iscsi $v ConnectTarget with the target's CHAP secret" 0 'status: OK' iscsi $v ConnectTarget \
        "{\"target_portal\":$P,\"iqn\":\"$SEC\",\"auth_type\":\"ONE_WAY_CHAP\",\"chap_username\":\"node-a\",\"chap_secret\":\"$SECRET\"}"
    expect "iscsi $v ConnectTarget (no CHAP)" 0 'status: OK' iscsi $v ConnectTarget "{\"target_portal\":$P,\"iqn\":\"$DATA\"}"
    cli iscsi $v GetTargetDisks "{\"target_portal\":$P,\"iqn\":\"$DATA\"}"
    mapfile -t NUMS < <(json | jq -r '.diskIDs[]?')
    cli iscsi $v GetTargetDisks "{\"target_portal\":$P,\"iqn\":\"$SEC\"}"
    SNUM=$(json | jq -r '.diskIDs[0]? // empty')
    if [ "${#NUMS[@]}" = 2 ] && [[ "${NUMS[0]}${NUMS[1]}$SNUM" =~ ^[0-9]+$ ]]; then
        ok "iscsi $v GetTargetDisks: two LUNs and one, as decimal strings (${NUMS[*]} / $SNUM)"
    else
        bad "iscsi $v GetTargetDisks: two LUNs and one, as decimal strings" "data: ${NUMS[*]:-} secure: $SNUM"
        continue
    fi
    D=${NUMS[0]}
    cli disk v1 ListDiskIDs
    p83=$(json | jq -r --arg d "$D" '.diskIDs[$d].page83 // empty')
    sser=$(json | jq -r --arg d "$SNUM" '.diskIDs[$d].serial_number // empty')
    want_serial=SECURE-B-0
    [ $v = v1alpha1 ] && want_serial=SECURE-A-0
    if [[ "$p83" == 600140* ]] && [ "${#p83}" = 32 ] && [ "$sser" = "$want_serial" ]; then
        ok "disk v1 ListDiskIDs: the LUNs are disks with an NAA page 83 ID ($p83) and the fixture's serial ($sser)"
    else
        bad "disk v1 ListDiskIDs: the LUNs are disks with an NAA page 83 ID and the fixture's serial" "$(json | head -c 600)"
    fi
    cli disk v1 ListDiskLocations
    if [ "$(json | jq -r --arg d "$D" '.disk_locations[$d].Adapter // empty')" = 3 ]; then
        ok "disk v1 ListDiskLocations: disk $D on the initiator's adapter 3"
    else
        bad "disk v1 ListDiskLocations: disk $D on the initiator's adapter 3" "$OUT"
    fi
    expect "disk v1 GetDiskStats: disk $D is the 4 GiB LUN" 0 '"total_bytes":"4294967296"' \
        disk v1 GetDiskStats "{\"disk_number\":$D}"
    expect "disk v1 PartitionDisk $D" 0 'status: OK' disk v1 PartitionDisk "{\"disk_number\":$D}"
    cli volume v1 ListVolumesOnDisk "{\"disk_number\":$D}"
    VOL=$(json | jq -r '.volume_ids[0] // empty')
    JV=$(jstr "$VOL")
    if [[ "$VOL" == '\\?\Volume{'* ]]; then ok "volume v1 ListVolumesOnDisk $D: $VOL"; else bad "volume v1 ListVolumesOnDisk $D" "$OUT"; fi
    expect "volume v1 IsVolumeFormatted: a new LUN is RAW" 0 '{}' volume v1 IsVolumeFormatted "{\"volume_id\":\"$JV\"}"
    expect "volume v1 FormatVolume" 0 'status: OK' volume v1 FormatVolume "{\"volume_id\":\"$JV\"}"
    mkdir -p "$C/var/lib/kubelet/plugins/iscsi-$v/globalmount"
    T="$K\\\\plugins\\\\iscsi-$v\\\\globalmount"
    expect "volume v1 MountVolume to the kubelet staging path" 0 'status: OK' \
        volume v1 MountVolume "{\"volume_id\":\"$JV\",\"target_path\":\"$T\"}"
    expect "volume v1 GetVolumeIDFromTargetPath gives the LUN's volume" 0 "\"volume_id\":\"$JV\"" \
        volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$T\"}"
    expect "volume v1 UnmountVolume" 0 'status: OK' volume v1 UnmountVolume "{\"volume_id\":\"$JV\",\"target_path\":\"$T\"}"
    expect "iscsi $v DisconnectTarget (data)" 0 'status: OK' iscsi $v DisconnectTarget "{\"target_portal\":$P,\"iqn\":\"$DATA\"}"
    expect "iscsi $v DisconnectTarget (secure)" 0 'status: OK' iscsi $v DisconnectTarget "{\"target_portal\":$P,\"iqn\":\"$SEC\"}"
    cli disk v1 ListDiskIDs
    ids=$(json)
    cli disk v1 ListDiskLocations
    locs=$(json)
    gone=0
    for d in "${NUMS[@]}" "$SNUM"; do
        [ "$(jq -r --arg d "$d" '.diskIDs[$d] // empty' <<<"$ids")" = "" ] || gone=1
        [ "$(jq -r --arg d "$d" '.disk_locations[$d] // empty' <<<"$locs")" = "" ] || gone=1
    done
    check "after the logouts disks ${NUMS[*]} $SNUM are in neither ListDiskIDs nor ListDiskLocations" $gone "$ids"
    expect "volume v1 IsVolumeFormatted of the departed LUN's volume: NOT_FOUND" 5 "$VOL" \
        volume v1 IsVolumeFormatted "{\"volume_id\":\"$JV\"}"
    expect "iscsi $v GetTargetDisks after the logout: none" 0 '{}' iscsi $v GetTargetDisks "{\"target_portal\":$P,\"iqn\":\"$DATA\"}"
    expect "iscsi $v RemoveTargetPortal" 0 'status: OK' iscsi $v RemoveTargetPortal "{\"target_portal\":$P}"
done
expect "iscsi v1alpha2 AddTargetPortal of the fixture's unreachable portal: UNAVAILABLE" 14 \
    'target portal 192.0.2.99:3260 does not answer' iscsi v1alpha2 AddTargetPortal '{"target_portal":{"target_address":"192.0.2.99"}}'

# --- 2. SMB ---------------------------------------------------------------------
PW=Fsx-Pa55-w0rd
U='CORP\\svc-fsx'
L="$K\\\\plugins\\\\smb-vol1"
cli smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\fsx1.corp.example\\\\vol1\\\\pvc-1\",\"local_path\":\"$L\",\"username\":\"$U\",\"password\":\"$PW\"}"
if [ "$RC" != 0 ] && [[ "$OUT" == *'creating link C:\var\lib\kubelet\plugins\smb-vol1 to \\fsx1.corp.example\vol1\pvc-1'* ]] &&
    [[ "$OUT" == *'does not create links (a stub, as in Wine)'* ]] && [[ "$OUT" != *"$PW"* ]] &&
    [ ! -e "$C/var/lib/kubelet/plugins/smb-vol1" ] && [ ! -L "$C/var/lib/kubelet/plugins/smb-vol1" ]; then
    ok "smb v1 NewSmbGlobalMapping with a link: mapped, then Wine's stub CreateSymbolicLinkW is reported, no link made (exit $RC)"
else
    bad "smb v1 NewSmbGlobalMapping with a link: Wine's stub CreateSymbolicLinkW reported" "exit $RC: $OUT"
fi
expect "smb v1: the mapping exists: another user is refused that server, FAILED_PRECONDITION naming the share" 9 \
    '\\fsx1.corp.example\vol2: \\fsx1.corp.example\vol1 is already mapped with other credentials' \
    smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\fsx1.corp.example\\\\vol2\",\"username\":\"CORP\\\\backup\",\"password\":\"x\"}"
expect "smb v1 NewSmbGlobalMapping without a link, same credentials" 0 'status: OK' \
    smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\fsx1.corp.example\\\\vol2\",\"username\":\"$U\",\"password\":\"$PW\"}"
expect "smb v1beta2: the fixture's mapping by CORP\\backup makes fsx2 FAILED_PRECONDITION naming the share" 9 \
    '\\fsx2.corp.example\data' \
    smb v1beta2 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\fsx2.corp.example\\\\data\",\"username\":\"$U\",\"password\":\"$PW\"}"
cli smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\fsx1.corp.example\\\\vol1\",\"username\":\"$U\",\"password\":\"Not-The-Pa55\"}"
# vol1 is mapped already (same user): idempotent; the wrong password shows on a new server
cli smb v1alpha1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\pw-wine.example\\\\s\",\"username\":\"u\",\"password\":\"Not-The-Pa55\"}"
if [ "$RC" = 7 ] && [[ "$OUT" == *'the user name or password is incorrect'* ]] && [[ "$OUT" != *Not-The-Pa55* ]]; then
    ok "smb v1alpha1 wrong password: PERMISSION_DENIED, the password not echoed"
else
    bad "smb v1alpha1 wrong password: PERMISSION_DENIED, the password not echoed" "exit $RC: $OUT"
fi
expect "smb v1beta1 a server that is down: UNAVAILABLE" 14 'the network path was not found' \
    smb v1beta1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\gone.corp.example\\\\vol1\",\"username\":\"$U\",\"password\":\"$PW\"}"
expect "smb v1 a share the server lacks: NOT_FOUND" 5 'the network name cannot be found' \
    smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\fsx1.corp.example\\\\vol9\",\"username\":\"$U\",\"password\":\"$PW\"}"
expect "smb v1 RemoveSmbGlobalMapping vol1" 0 'status: OK' smb v1 RemoveSmbGlobalMapping '{"remote_path":"\\\\fsx1.corp.example\\vol1"}'
expect "smb v1 RemoveSmbGlobalMapping vol2" 0 'status: OK' smb v1 RemoveSmbGlobalMapping '{"remote_path":"\\\\fsx1.corp.example\\vol2"}'
expect "smb v1: once removed, another user maps the server" 0 'status: OK' \
    smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\fsx1.corp.example\\\\vol2\",\"username\":\"CORP\\\\svc-fsx\",\"password\":\"$PW\"}"

# --- 3. no secret in the log at -v 10 -------------------------------------------
if kill -0 "$PID" 2>/dev/null; then ok "csi-proxy-sim.exe is still running"; else bad "csi-proxy-sim.exe is still running" "$(tail -20 "$LOG")"; fi
n_audit=$(grep -c 'audit: call /v1alpha[12].Iscsi/ConnectTarget\|audit: call /v1.Smb/NewSmbGlobalMapping' "$LOG")
leak=$(grep -c -e "$SECRET" -e "$WRONG" -e "$PW" -e 'Not-The-Pa55' "$LOG")
if [ "$n_audit" -gt 0 ] && [ "$leak" = 0 ]; then
    ok "at -v 10 the log has $n_audit ConnectTarget/NewSmbGlobalMapping audit records and no CHAP secret or password"
else
    bad "at -v 10 the log has audit records and no CHAP secret or password" "$n_audit records, $leak leaks: $(grep -e "$SECRET" -e "$PW" "$LOG" | head -3)"
fi
finish
