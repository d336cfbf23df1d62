#!/usr/bin/env bash
# Wine tests of the disk and volume groups: the real executables on
# real named pipes, called by build/win/csi-proxy-cli.exe in a private Wine
# prefix.
#
#   1. The executables: csi-proxy.exe links no simulator and
#      csi-proxy-sim.exe no WMI; neither imports a process-creation API.
#      The one Win32 error map (base/winutil_win.h):
#      winutilcheck.exe, linked with libcore.a, checks its codes and message
#      form (ERROR_NOT_READY UNAVAILABLE, ERROR_DISK_FULL RESOURCE_EXHAUSTED,
#      a long object cut on a character boundary).
#   2. csi-proxy.exe (the Win32 storage host) under Wine, as far as Wine
#      goes: the volume-name functions work; the disk IOCTLs Wine lacks give
#      an error naming the IOCTL (Wine has no disks to partition or mount).
#   3. csi-proxy-sim.exe (same main and core, the storage simulator seeded
#      from test/fixtures/storage.yaml with 150 ms per disk operation):
#      every disk and volume RPC of every version (86), the staging flow a
#      CSI driver runs (ListDiskIDs -> PartitionDisk -> ListVolumesOnDisk ->
#      IsVolumeFormatted -> FormatVolume -> MountVolume -> GetVolumeStats ->
#      ResizeVolume -> UnmountVolume), 8 such flows at once on 8 disks, and
#      4 calls at once on one disk, which the simulator would refuse
#      (ABORTED) if the service did not serialize them.
# Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed";
# exit 0 only when all passed.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
wine_suite wine-storage csi-proxy.exe csi-proxy-sim.exe csi-proxy-cli.exe pipecheck.exe winutilcheck.exe
LOG=$WINEPREFIX/server.log
expect() { expect_cli "$@"; } # expect NAME WANT_RC SUBSTRING CLI-ARGS...

# Every (group version RPC) called through the sim exe, for the count.
declare -A covered
# rpc NAME WANT_RC SUBSTRING GROUP VERSION METHOD [JSON]
rpc() {
    covered["$4 $5 $6"]=1
    expect "$@"
}

start() { # EXE [env]: starts a server, waits for its 23 pipes
    local exe=$1
    shift
    env "$@" wine "C:\\csi\\$exe" -working-dir 'C:\csi-work' -v 2 >"$LOG" 2>&1 &
    PID=$!
    for _ in $(seq 1 200); do
        if wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1; then return 0; fi
        sleep 0.05
    done
    return 1
}

stop() {
    kill "$PID" 2>/dev/null
    wait "$PID" 2>/dev/null
    PID=
    # the pipes are gone once the process is
    for _ in $(seq 1 100); do
        wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1 || return 0
        sleep 0.05
    done
}

echo "# prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
wineserver -p
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi" "$C/var/lib/kubelet/plugins" "$C/csi-work"
cp "$W/csi-proxy.exe" "$W/csi-proxy-sim.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$W/winutilcheck.exe" "$C/csi/"
{ echo "latency_ms: 150"; cat test/fixtures/storage.yaml; } >"$C/csi/storage.yaml"

# --- 1. the executables ------------------------------------------------------
for exe in csi-proxy.exe csi-proxy-sim.exe; do
    if x86_64-w64-mingw32-objdump -p "$W/$exe" | grep -qiE 'CreateProcess|ShellExecute|WinExec'; then
        bad "$exe imports no process-creation API"
    else
        ok "$exe imports no process-creation API"
    fi
done
if [ "$(strings "$W/csi-proxy.exe" | grep -c 'storage simulator')" = 0 ]; then
    ok "csi-proxy.exe contains no storage simulator"
else
    bad "csi-proxy.exe contains no storage simulator"
fi
if [ "$(strings "$W/csi-proxy-sim.exe" | grep -c 'storage simulator')" -gt 0 ] &&
    [ "$(strings -e l "$W/csi-proxy-sim.exe" | grep -c 'Microsoft.Windows.Storage')" = 0 ] &&
    [ "$(strings -e l "$W/csi-proxy.exe" | grep -c 'Microsoft.Windows.Storage')" = 1 ]; then
    ok "csi-proxy-sim.exe has the simulator instead of the Win32/WMI host"
else
    bad "csi-proxy-sim.exe has the simulator instead of the Win32/WMI host"
fi

# the one Win32 error map, as libcore.a has it
WU=$(wine 'C:\csi\winutilcheck.exe' 2>&1 | tr -d '\r')
if grep -q '^[0-9]* passed, 0 failed$' <<<"$WU"; then
    ok "base/winutil_win.h: one Win32 error map ($(tail -1 <<<"$WU"))"
else
    bad "base/winutil_win.h: one Win32 error map" "$(grep '^not ok' <<<"$WU" | head -5)"
fi

K='C:\\var\\lib\\kubelet'
mkdir -p "$C/var/lib/kubelet/plugins/plain"

# --- 2. the Win32 storage host under Wine ---------------------------------------
if start csi-proxy.exe; then
    ok "csi-proxy.exe: all 23 pipes listening"
    # GetFileAttributesW, FindFirstFileW, GetVolumeNameForVolumeMountPointW
    expect "csi-proxy.exe: GetClosestVolumeIDFromTargetPath walks to C:'s volume (Win32 volume names)" \
        0 '"volume_id":"\\\\?\\Volume{' volume v2alpha1 GetClosestVolumeIDFromTargetPath \
        "{\"target_path\":\"$K\\\\plugins\\\\plain\"}"
    expect "csi-proxy.exe: a plain directory is not a mounted folder" 9 'not a mounted folder' \
        volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$K\\\\plugins\\\\plain\"}"
    # Facts 4, 5, 7, 8: EBS's regex needs v1.2.1's wording in the
    # text, on the Win32 host as on the simulator (the text is the volume
    # group's, portable; the Win32 host only answers "not a mounted folder"
    # or "not found"). Wine has no mount points.
    V121='(Get-Item -Path $Env:mountpath).Target, output: , error: '
    expect "csi-proxy.exe: fact 4: an empty directory's text matches EBS's regex" 9 "$V121" \
        volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$K\\\\plugins\\\\plain\"}"
    expect "csi-proxy.exe: fact 4: the same on v1beta2's GetVolumeIDFromMount" 9 "$V121" \
        volume v1beta2 GetVolumeIDFromMount "{\"mount\":\"$K\\\\plugins\\\\plain\"}"
    expect "csi-proxy.exe: fact 5: a missing path's text matches EBS's regex" 5 'because it does not exist' \
        volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$K\\\\plugins\\\\gone\"}"
    expect "csi-proxy.exe: fact 7: a drive-less raw path gets the system drive" 9 "$V121" \
        volume v1 GetVolumeIDFromTargetPath '{"target_path":"\\var\\lib\\kubelet\\plugins\\plain"}'
    expect "csi-proxy.exe: fact 8: a lower-case drive letter" 9 "$V121" \
        volume v1 GetVolumeIDFromTargetPath '{"target_path":"c:\\var\\lib\\kubelet\\plugins\\plain"}'
    # Link following (fact 6) cannot be shown here: this Wine reports a Unix
    # symlink in the prefix with no FILE_ATTRIBUTE_REPARSE_POINT (IsSymlink
    # answers false for one), so the Win32 host never sees a link to follow;
    # the native conformance suite proves it (test_volume.py fact06).
    expect "csi-proxy.exe: fact 7: IsSymlink takes a drive-less raw path" 0 'status: OK' \
        filesystem v1 IsSymlink '{"path":"\\var\\lib\\kubelet\\plugins\\plain"}'
    expect "csi-proxy.exe: path rules hold for volume RPCs" 3 'is not within the working directories' \
        volume v1 MountVolume '{"volume_id":"\\\\?\\Volume{00000000-0000-0000-0000-000000000043}\\","target_path":"C:\\Windows"}'
    # The boot volume (C:'s) is never mounted into the kubelet directory. Wine
    # cannot show why on a real node (no disk extents, no page-file registry
    # values: test/windows/staging.ps1 checks that); here the call must fail
    # and leave no mount point.
    cli volume v2alpha1 GetClosestVolumeIDFromTargetPath "{\"target_path\":\"$K\\\\plugins\\\\plain\"}"
    CVOL=$(grep -o 'Volume{[0-9a-fA-F-]*}' <<<"$OUT" | head -1)
    mkdir -p "$C/var/lib/kubelet/plugins/bootvol"
    cli volume v1 MountVolume "{\"volume_id\":\"\\\\\\\\?\\\\$CVOL\\\\\",\"target_path\":\"$K\\\\plugins\\\\bootvol\"}"
    MRC=$RC MOUT=$(tr -d '\r' <<<"$OUT" | grep -v '^{' | head -2 | tr '\n' ' ')
    cli volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$K\\\\plugins\\\\bootvol\"}"
    if [ -n "$CVOL" ] && [ "$MRC" != 0 ] && [[ "$OUT" == *"not a mounted folder"* ]]; then
        ok "csi-proxy.exe: MountVolume of C:'s volume fails and mounts nothing (${MOUT:0:160})"
    else
        bad "csi-proxy.exe: MountVolume of C:'s volume fails and mounts nothing" "volume $CVOL exit $MRC: $MOUT / $OUT"
    fi
    # Wine: QueryDosDeviceW lists PhysicalDrive0 but IOCTL_DISK_GET_LENGTH_INFO
    # fails (ERROR_NOT_SUPPORTED). A disk that cannot be read is left out
    # and logged, naming the IOCTL and the cause; the listing answers for
    # the others (here: none), not a crash, not a lie.
    cli disk v1 ListDiskIDs
    if [ "$RC" = 0 ] && grep -q "storage: listing disks: skipping IOCTL_DISK_GET_LENGTH_INFO disk 0: " "$LOG"; then
        ok "csi-proxy.exe: ListDiskIDs under Wine skips the disk Wine cannot describe and logs the IOCTL"
    else
        bad "csi-proxy.exe: ListDiskIDs under Wine skips the disk Wine cannot describe and logs the IOCTL" \
            "exit $RC: $OUT / log: $(grep -i 'skipping' "$LOG" | head -2)"
    fi
    # Wine's WMI has the storage namespace but none of its classes: Rescan
    # must fail with the WMI error (it once crashed Wine's provider).
    cli disk v1 Rescan
    if [ "$RC" != 0 ] && [[ "$OUT" == *"MSFT_StorageSetting.UpdateHostStorageCache"*"HRESULT"* ]]; then
        ok "csi-proxy.exe: Rescan under Wine fails with the WMI error (exit $RC)"
    else
        bad "csi-proxy.exe: Rescan under Wine fails with the WMI error" "exit $RC: $OUT"
    fi
    if kill -0 "$PID" 2>/dev/null && ! grep -q 'Unhandled' "$LOG"; then
        ok "csi-proxy.exe: still running after the Wine-unsupported storage calls"
    else
        bad "csi-proxy.exe: still running after the Wine-unsupported storage calls" "$(grep -A3 Unhandled "$LOG" | head -8)"
    fi
    stop
else
    bad "csi-proxy.exe: all 23 pipes listening" "$(cat "$LOG")"
    stop
fi

# --- 3. the simulator build ------------------------------------------------------
if ! start csi-proxy-sim.exe CSI_PROXY_SIM_FIXTURE='C:\csi\storage.yaml'; then
    bad "csi-proxy-sim.exe: all 23 pipes listening" "$(cat "$LOG")"
    echo "$pass passed, $fail failed"
    exit 1
fi
ok "csi-proxy-sim.exe: all 23 pipes listening"

# --- the staging flow, as a CSI driver runs it -------------------------------
# flow SERIAL NAME: finds the disk by serial number, stages it at
# ...\plugins\NAME, checks stats, grows it after a Rescan, unstages it.
# Prints one line per step to stdout; exit 0 when every step did its job.
flow() (
    serial=$1 name=$2
    step() { # step LABEL RPC-ARGS... ; stops the flow on a failure
        local label=$1
        shift
        cli "$@"
        if [ "$RC" != 0 ]; then
            echo "$name: $label failed: exit $RC: $OUT"
            exit 1
        fi
    }
    step ListDiskIDs disk v1 ListDiskIDs
    disk=$(json | jq -r --arg s "$serial" '.diskIDs | to_entries[] | select(.value.serial_number == $s) | .key')
    [ -n "$disk" ] || { echo "$name: no disk with serial $serial"; exit 1; }
    step PartitionDisk disk v1 PartitionDisk "{\"disk_number\":$disk}"
    step ListVolumesOnDisk volume v1 ListVolumesOnDisk "{\"disk_number\":$disk}"
    id=$(json | jq -r '.volume_ids[0]')
    jid=$(jq -Rr '@json' <<<"$id" | sed 's/^"//; s/"$//')
    step IsVolumeFormatted volume v1 IsVolumeFormatted "{\"volume_id\":\"$jid\"}"
    if [ "$(json | jq -r '.formatted // false')" != true ]; then
        step FormatVolume volume v1 FormatVolume "{\"volume_id\":\"$jid\"}"
    fi
    mkdir -p "$C/var/lib/kubelet/plugins/$name/globalmount"
    target="$K\\\\plugins\\\\$name\\\\globalmount"
    step MountVolume volume v1 MountVolume "{\"volume_id\":\"$jid\",\"target_path\":\"$target\"}"
    step GetVolumeIDFromTargetPath volume v1 GetVolumeIDFromTargetPath "{\"target_path\":\"$target\"}"
    [ "$(json | jq -r .volume_id)" = "$id" ] || { echo "$name: mounted volume is $(json)"; exit 1; }
    step GetVolumeStats volume v1 GetVolumeStats "{\"volume_id\":\"$jid\"}"
    before=$(json | jq -r .total_bytes)
    step Rescan disk v1 Rescan
    step ResizeVolume volume v1 ResizeVolume "{\"volume_id\":\"$jid\",\"size_bytes\":0}"
    step GetVolumeStats volume v1 GetVolumeStats "{\"volume_id\":\"$jid\"}"
    after=$(json | jq -r .total_bytes)
    step GetDiskStats disk v1 GetDiskStats "{\"disk_number\":$disk}"
    dsize=$(json | jq -r .total_bytes)
    [ "$after" = $((dsize - 2097152)) ] || { echo "$name: size $before -> $after on a $dsize-byte disk"; exit 1; }
    step UnmountVolume volume v1 UnmountVolume "{\"volume_id\":\"$jid\",\"target_path\":\"$target\"}"
    echo "$name: disk $disk ($serial) staged as $id, $before -> $after bytes, unstaged"
)

# First, before any Rescan: disk 1 (10 GiB) grows to 12 GiB at the Rescan.
out=$(flow DATA0001 flow-single 2>&1)
if [ $? = 0 ] && [[ "$out" == *"10735321088 -> 12882804736 bytes"* ]]; then
    ok "staging flow: $out"
else
    bad "staging flow on the disk with serial DATA0001" "$out"
fi


vol() { printf '\\\\\\\\?\\\\Volume{%s}\\\\' "$1"; } # JSON-escaped volume ID
NEW3=$(vol 5157d15c-0003-4000-8000-000000000001)
STAGED=$(vol 9a9a9a9a-0009-4000-8000-000000000001)
BOOTC=$(vol 0a6f7c10-1111-4a2b-9c3d-000000000003)
mnt() { mkdir -p "$C/var/lib/kubelet/plugins/$1"; printf '%s\\\\plugins\\\\%s' "$K" "$1"; }

# -- disk: 30 RPCs ----------------------------------------------------------------
for v in v1alpha1 v1beta1 v1beta2 v1beta3 v1; do
    old=0; case $v in v1alpha1 | v1beta1 | v1beta2) old=1 ;; esac
    rpc "disk $v ListDiskLocations" 0 '"1":{"Adapter":"1","Target":"0","LUNID":"1"}' disk $v ListDiskLocations
    rpc "disk $v Rescan" 0 'status: OK' disk $v Rescan
    if [ $old = 1 ]; then
        rpc "disk $v PartitionDisk (string ID, refused on a system disk it would change)" 9 \
            'disk 14 is the system disk: refusing to partition it' disk $v PartitionDisk '{"diskID":"14"}'
        rpc "disk $v PartitionDisk (bad string ID)" 3 "Failed to convert $v.PartitionDiskRequest.DiskID to uint32" \
            disk $v PartitionDisk '{"diskID":"x"}'
    else
        rpc "disk $v PartitionDisk (unknown disk)" 5 'PartitionDisk: disk 99 not found' \
            disk $v PartitionDisk '{"disk_number":99}'
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
    rpc "disk $v SetDiskState (online)" 0 'status: OK' disk $v SetDiskState '{"disk_number":10,"is_online":true}'
    rpc "disk $v GetDiskState" 0 '"is_online":true' disk $v GetDiskState '{"disk_number":10}'
    rpc "disk $v SetDiskState (offline)" 0 'status: OK' disk $v SetDiskState '{"disk_number":10,"is_online":false}'
    rpc "disk $v SetDiskState (boot disk offline refused)" 9 'refusing to take it offline' \
        disk $v SetDiskState '{"disk_number":0,"is_online":false}'
done
rpc "disk v1beta2 SetAttachState" 0 'status: OK' disk v1beta2 SetAttachState '{"diskID":"10","isOnline":true}'
rpc "disk v1beta2 GetAttachState" 0 '"isOnline":true' disk v1beta2 GetAttachState '{"diskID":"10"}'
rpc "disk v1beta2 SetAttachState (offline again)" 0 'status: OK' disk v1beta2 SetAttachState '{"diskID":"10","isOnline":false}'
expect "disk v1 GetDiskState: disk 10 is offline again" 0 '{}' disk v1 GetDiskState '{"disk_number":10}'

# -- volume: 56 RPCs, one volume per version ----------------------------------------
. test/wine/volume_rpcs.sh
volume_rpcs 3 "$NEW3"
# volumes Windows needs: refused, named, with the reason
PAGED=$(vol 15151515-0015-4000-8000-000000000001)
SNAPE=$(vol 16161616-0016-4000-8000-000000000001)
mkdir -p "$C/var/lib/kubelet/plugins/needed" "$C/var/lib/kubelet/plugins/snap"
expect "volume v1 MountVolume of the boot volume into the kubelet directory is refused" 9 \
    'is the boot volume (it holds Windows), holds the page file, holds the crash dump file and is on disk 0, the boot and system disk: refusing to mount it' \
    volume v1 MountVolume "{\"volume_id\":\"$BOOTC\",\"target_path\":\"$K\\\\plugins\\\\needed\"}"
expect "volume v1alpha1 MountVolume of the page-file volume D: is refused" 9 'holds the page file: refusing to mount it' \
    volume v1alpha1 MountVolume "{\"volume_id\":\"$PAGED\",\"path\":\"$K\\\\plugins\\\\needed\"}"
expect "volume v1 FormatVolume of the boot volume is refused" 9 'refusing to format it' \
    volume v1 FormatVolume "{\"volume_id\":\"$BOOTC\"}"
expect "volume v2alpha1 WriteVolumeCache of the page-file volume is refused" 9 'holds the page file: refusing to flush its cache' \
    volume v2alpha1 WriteVolumeCache "{\"volume_id\":\"$PAGED\"}"
expect "volume v1 GetVolumeStats still answers for the page-file volume" 0 '"total_bytes":"8589934592"' \
    volume v1 GetVolumeStats "{\"volume_id\":\"$PAGED\"}"
expect "volume v1 MountVolume of a data volume Windows gave E: works" 0 'status: OK' \
    volume v1 MountVolume "{\"volume_id\":\"$SNAPE\",\"target_path\":\"$K\\\\plugins\\\\snap\"}"
expect "volume v1 UnmountVolume of it works" 0 'status: OK' \
    volume v1 UnmountVolume "{\"volume_id\":\"$SNAPE\",\"target_path\":\"$K\\\\plugins\\\\snap\"}"
expect "volume v1 ResizeVolume grows a staged volume to the maximum" 0 'status: OK' \
    volume v1 ResizeVolume "{\"volume_id\":\"$STAGED\",\"size_bytes\":0}"
expect "volume v1 GetVolumeStats shows it" 0 '"total_bytes":"8587837440"' \
    volume v1 GetVolumeStats "{\"volume_id\":\"$STAGED\"}"
expect "volume v1 MountVolume outside the kubelet directory is refused" 3 'is not within the working directories' \
    volume v1 MountVolume "{\"volume_id\":\"$STAGED\",\"target_path\":\"C:\\\\Windows\"}"
expect "volume v1beta2 DismountVolume keeps upstream's forward wording" 3 'Forward to UnmountVolume failed, err=volume id empty' \
    volume v1beta2 DismountVolume '{}'
expect "volume v1 unknown volume is NOT_FOUND, named" 5 'Volume{00000000-0000-0000-0000-0000000000ff}\ not found' \
    volume v1 GetVolumeStats "{\"volume_id\":\"$(vol 00000000-0000-0000-0000-0000000000ff)\"}"

# --- 8 staging flows at once, on 8 disks (disk 1 again: every step is
# idempotent, as kubelet retries need) ------------------------------------
t0=$(date +%s%N)
pids=()
for i in 1 2 3 4 5 6 7 8; do
    serial=$(printf 'DATA%04d' "$i")
    [ "$i" -ge 5 ] && serial="vol0a1b2c3d4e5f6000${i}_00000001."
    flow "$serial" "flow-$i" >"$WINEPREFIX/flow$i.out" 2>&1 &
    pids+=($!)
done
ffail=0
for p in "${pids[@]}"; do wait "$p" || ffail=$((ffail + 1)); done
t1=$(date +%s%N)
if [ $ffail = 0 ]; then
    ok "8 concurrent staging flows on 8 disks, all complete ($(( (t1 - t0) / 1000000 )) ms)"
else
    bad "8 concurrent staging flows on 8 disks" "$ffail failed: $(cat "$WINEPREFIX"/flow*.out | grep -v 'staged as' | head -8)"
fi

# 4 formats of one volume at once: the simulator refuses overlapping
# operations on a disk (ABORTED), so all four succeeding, one after the
# other (>= 4 x 150 ms), shows the service serialized them. Four versions:
# identical calls in flight would share one run.
t0=$(date +%s%N)
pids=()
i=0
for v in v1 v1beta3 v1beta2 v1beta1; do
    i=$((i + 1))
    wine 'C:\csi\csi-proxy-cli.exe' volume $v FormatVolume "{\"volume_id\":\"$STAGED\"}" \
        >"$WINEPREFIX/fmt$i.out" 2>&1 &
    pids+=($!)
done
sfail=0
for p in "${pids[@]}"; do wait "$p" || sfail=$((sfail + 1)); done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ $sfail = 0 ] && [ "$ms" -ge 600 ]; then
    ok "4 concurrent calls on one disk all succeed, serialized ($ms ms >= 4 x 150 ms)"
else
    bad "4 concurrent calls on one disk serialized" "$sfail failed in $ms ms: $(cat "$WINEPREFIX"/fmt*.out | tr -d '\r' | grep -v '^status: OK' | head -4)"
fi

# --- coverage ----------------------------------------------------------------
ndisk=$(for k in "${!covered[@]}"; do echo "$k"; done | grep -c '^disk ')
nvol=$(for k in "${!covered[@]}"; do echo "$k"; done | grep -c '^volume ')
if [ "$ndisk" = 30 ] && [ "$nvol" = 56 ]; then
    ok "every disk (30) and volume (56) RPC of every version called over the pipes"
else
    bad "every disk and volume RPC of every version called" "disk $ndisk/30, volume $nvol/56"
fi

if kill -0 "$PID" 2>/dev/null; then ok "csi-proxy-sim.exe is still running"; else bad "csi-proxy-sim.exe is still running" "$(tail -20 "$LOG")"; fi
echo "# server log (tail):"
tail -3 "$LOG" | sed 's/^/#   /'
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
