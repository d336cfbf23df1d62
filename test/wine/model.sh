#!/usr/bin/env bash
# Wine tests of the product's Win32 storage host on the device model
#: build/win/csi-proxy-model.exe is csi-proxy.exe's main, core
# and Win32 storage host (host/storage_win.c, storage_volume_win.c,
# storage_roles_win.c) unchanged, on the model's call table (test/model/)
# instead of Windows' (host/storage_calls_win.h), seeded from
# test/fixtures/model.yaml. Called over the real named pipes by
# csi-proxy-cli.exe in a private Wine prefix:
#
#   1. the executables: csi-proxy.exe links no model code (link map and
#      strings), csi-proxy-model.exe has the model and no simulator;
#   2. every disk (30) and volume (56) RPC of every version;
#   3. the staging flow a CSI driver runs, once per API version, each on
#      its own blank disk (one with 4096-byte sectors), growth included;
#   4. the Win32 review findings as
#      regression tests: an unreadable disk skipped, a CD-ROM volume, a
#      disk brought online then listed, a collision, resize after growth,
#      format right after partitioning, a RAW disk kept offline, a
#      read-only disk, the boot, page-file and EFI volumes refused;
#   5. the guards (model_guards.sh): a reattached read-only disk made
#      writable by SetDiskState(online), audited; write-protected media
#      refused; FormatVolume over a foreign file system refused, naming it;
#      ResizeVolume with every WMI operation of its disk failing.
# The Wine registry of the prefix holds the page-file and crash-dump
# values the host reads (Wine has none of its own).
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed"; exit 0 only
# when all passed. MODEL_TRACE=1 traces every modelled call to the log.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
wine_suite wine-model csi-proxy.exe csi-proxy-model.exe csi-proxy-cli.exe pipecheck.exe
LOG=$WINEPREFIX/server.log

expect() { expect_cli "$@"; } # expect NAME WANT_RC SUBSTRING CLI-ARGS...
declare -A covered
rpc() {
    covered["$4 $5 $6"]=1
    expect "$@"
}

echo "# prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
wineserver -p
C=$WINEPREFIX/drive_c
K='C:\\var\\lib\\kubelet'
mkdir -p "$C/csi" "$C/var/lib/kubelet/plugins" "$C/csi-work"
cp "$W/csi-proxy-model.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$C/csi/"
cp test/fixtures/model.yaml "$C/csi/model.yaml"
# What storage_roles_win.c reads: C: holds the page file and the crash
# dump (%SystemRoot%\MEMORY.DMP), D: a second page file.
MM='HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management'
wine reg add "$MM" /v PagingFiles /t REG_MULTI_SZ /d 'C:\pagefile.sys 0 0\0D:\pagefile.sys' /f >/dev/null 2>&1
wine reg add 'HKLM\SYSTEM\CurrentControlSet\Control\CrashControl' /v DumpFile /t REG_EXPAND_SZ \
    /d '%SystemRoot%\MEMORY.DMP' /f >/dev/null 2>&1

# --- 1. the executables --------------------------------------------------------
if [ -f "$W/csi-proxy.exe.map" ] && ! grep -q 'test/model/' "$W/csi-proxy.exe.map" &&
    [ "$(strings "$W/csi-proxy.exe" | grep -c 'storage device model')" = 0 ] &&
    grep -q '(storage_calls_win.o)' "$W/csi-proxy.exe.map"; then
    ok "csi-proxy.exe links the real call table and no device model (link map, strings)"
else
    bad "csi-proxy.exe links the real call table and no device model"
fi
# sim/ objects link by path or as archive members; the model shares only
# the fixture's byte-list reader with the simulator.
sims=$(grep -o '[^ ]*sim/[A-Za-z_]*\.o\|([A-Za-z_]*_sim\.o)' "$W/csi-proxy-model.exe.map" |
    grep -v 'obj/sim/headbytes_sim\.o$' | sort -u)
if grep -q 'test/model/model_ioctl.o' "$W/csi-proxy-model.exe.map" &&
    grep -q 'libcore.a(storage_volume_win.o)' "$W/csi-proxy-model.exe.map" &&
    ! grep -q '(storage_calls_win.o)' "$W/csi-proxy-model.exe.map" && [ -z "$sims" ]; then
    ok "csi-proxy-model.exe: the Win32 storage host on the model, no real table, no simulator"
else
    bad "csi-proxy-model.exe: the Win32 storage host on the model, no real table, no simulator" \
        "simulator objects: ${sims:-none}"
fi

start() {
    env CSI_PROXY_MODEL_FIXTURE='C:\csi\model.yaml' ${MODEL_TRACE:+CSI_PROXY_MODEL_TRACE=1} \
        wine 'C:\csi\csi-proxy-model.exe' -working-dir 'C:\csi-work' -v 2 >"$LOG" 2>&1 &
    PID=$!
    for _ in $(seq 1 200); do
        if wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1; then return 0; fi
        sleep 0.05
    done
    return 1
}
if ! start; then
    bad "csi-proxy-model.exe: all 23 pipes listening" "$(cat "$LOG")"
    finish
    exit 1
fi
ok "csi-proxy-model.exe: all 23 pipes listening ($(grep -m1 'storage device model' "$LOG" | tr -d '\r'))"

vol() { printf '\\\\\\\\?\\\\Volume{%s}\\\\' "$1"; } # JSON-escaped volume ID
mnt() { mkdir -p "$C/var/lib/kubelet/plugins/$1"; printf '%s\\\\plugins\\\\%s' "$K" "$1"; }
BOOTC=$(vol 0a6f7c10-1111-4a2b-9c3d-000000000003)
STAGED=$(vol 9a9a9a9a-0009-4000-8000-000000000001)

. test/wine/model_findings.sh
. test/wine/model_guards.sh

# --- 3. the staging flow, once per version ------------------------------------------
# flow VOLUME-VERSION DISK SERIAL NAME: as a CSI node plugin of that API
# version stages a blank disk and grows it after the cloud did.
flow() (
    vv=$1 disk=$2 serial=$3 name=$4
    dv=$vv
    [ "$vv" = v2alpha1 ] && dv=v1
    old=0; case $vv in v1alpha1 | v1beta1 | v1beta2) old=1 ;; esac
    step() {
        local label=$1
        shift
        cli "$@"
        if [ "$RC" != 0 ]; then
            echo "$name: $label failed: exit $RC: $OUT"
            exit 1
        fi
    }
    if [ "$dv" != v1alpha1 ]; then
        step ListDiskIDs disk "$dv" ListDiskIDs
        grep -q "\"$disk\":{[^}]*$serial" <<<"$(json)" || { echo "$name: disk $disk is not $serial: $(json)"; exit 1; }
    fi
    case $dv in
    v1beta2) step SetAttachState disk v1beta2 SetAttachState "{\"diskID\":\"$disk\",\"isOnline\":true}" ;;
    v1beta3 | v1) step SetDiskState disk "$dv" SetDiskState "{\"disk_number\":$disk,\"is_online\":true}" ;;
    esac
    if [ $old = 1 ]; then
        step PartitionDisk disk "$dv" PartitionDisk "{\"diskID\":\"$disk\"}"
        step ListVolumesOnDisk volume "$vv" ListVolumesOnDisk "{\"disk_id\":\"$disk\"}"
    else
        step PartitionDisk disk "$dv" PartitionDisk "{\"disk_number\":$disk}"
        step ListVolumesOnDisk volume "$vv" ListVolumesOnDisk "{\"disk_number\":$disk}"
    fi
    id=$(json | jq -r '.volume_ids[0] // empty')
    [ -n "$id" ] || { echo "$name: no volume right after PartitionDisk: $OUT"; exit 1; }
    jid=$(jq -Rr '@json' <<<"$id" | sed 's/^"//; s/"$//')
    step IsVolumeFormatted volume "$vv" IsVolumeFormatted "{\"volume_id\":\"$jid\"}"
    [ "$(json | jq -r '.formatted // false')" = false ] || { echo "$name: a new volume is formatted"; exit 1; }
    step FormatVolume volume "$vv" FormatVolume "{\"volume_id\":\"$jid\"}"
    step IsVolumeFormatted volume "$vv" IsVolumeFormatted "{\"volume_id\":\"$jid\"}"
    [ "$(json | jq -r '.formatted // false')" = true ] || { echo "$name: not formatted after FormatVolume"; exit 1; }
    mkdir -p "$C/var/lib/kubelet/plugins/$name/globalmount"
    target="$K\\\\plugins\\\\$name\\\\globalmount"
    pathf=target_path sizef=size_bytes
    [ $old = 1 ] && pathf=path sizef=size
    step MountVolume volume "$vv" MountVolume "{\"volume_id\":\"$jid\",\"$pathf\":\"$target\"}"
    stats() { :; }
    case $vv in
    v1beta1 | v1beta2)
        step GetVolumeIDFromMount volume "$vv" GetVolumeIDFromMount "{\"mount\":\"$target\"}"
        [ "$(json | jq -r .volume_id)" = "$id" ] || { echo "$name: mounted volume is $(json)"; exit 1; }
        stats() { step VolumeStats volume "$vv" VolumeStats "{\"volume_id\":\"$jid\"}"; size=$(json | jq -r .volumeSize); }
        ;;
    v1beta3 | v1 | v2alpha1)
        step GetVolumeIDFromTargetPath volume "$vv" GetVolumeIDFromTargetPath "{\"target_path\":\"$target\"}"
        [ "$(json | jq -r .volume_id)" = "$id" ] || { echo "$name: mounted volume is $(json)"; exit 1; }
        stats() { step GetVolumeStats volume "$vv" GetVolumeStats "{\"volume_id\":\"$jid\"}"; size=$(json | jq -r .total_bytes); }
        ;;
    esac
    size=
    stats
    before=$size
    step Rescan disk "$dv" Rescan
    step ResizeVolume volume "$vv" ResizeVolume "{\"volume_id\":\"$jid\",\"$sizef\":0}"
    stats
    after=$size
    case $dv in
    v1beta1 | v1beta2) step DiskStats disk "$dv" DiskStats "{\"diskID\":\"$disk\"}"; dsize=$(json | jq -r .diskSize) ;;
    v1beta3 | v1) step GetDiskStats disk "$dv" GetDiskStats "{\"disk_number\":$disk}"; dsize=$(json | jq -r .total_bytes) ;;
    *) dsize= ;;
    esac
    if [ -n "$after" ] && [ -n "$dsize" ]; then
        [ "$dsize" = 12884901888 ] && [ "$after" = $((dsize - 2097152)) ] ||
            { echo "$name: size $before -> $after on a $dsize-byte disk (want 12 GiB, 2 MiB less)"; exit 1; }
    fi
    [ "$vv" = v1alpha1 ] || [ "$vv" = v1beta1 ] ||
        step WriteVolumeCache volume "$vv" WriteVolumeCache "{\"volume_id\":\"$jid\"}"
    if [ $old = 1 ]; then
        step DismountVolume volume "$vv" DismountVolume "{\"volume_id\":\"$jid\",\"path\":\"$target\"}"
    else
        step UnmountVolume volume "$vv" UnmountVolume "{\"volume_id\":\"$jid\",\"target_path\":\"$target\"}"
    fi
    echo "$name: disk $disk staged as $id through $dv/$vv, ${before:-?} -> ${after:-?} bytes, unstaged"
)
# the six flows at once, each on its own disk (disk 4 has 4096-byte sectors)
n=0
pids=()
for vv in v1alpha1 v1beta1 v1beta2 v1beta3 v1 v2alpha1; do
    n=$((n + 1))
    serial=$(printf 'DATA%04d' "$n")
    [ $n -ge 5 ] && serial="vol0a1b2c3d4e5f6000${n}_00000001."
    flow "$vv" "$n" "$serial" "flow-$vv" >"$WINEPREFIX/flow-$vv.out" 2>&1 &
    pids+=($!)
done
n=0
for vv in v1alpha1 v1beta1 v1beta2 v1beta3 v1 v2alpha1; do
    wait "${pids[$n]}"
    rc=$?
    n=$((n + 1))
    out=$(cat "$WINEPREFIX/flow-$vv.out")
    check "staging flow, $vv: $(tail -1 <<<"$out")" $rc "$out"
done

. test/wine/model_rpcs.sh

# --- coverage ------------------------------------------------------------------------
ndisk=$(for k in "${!covered[@]}"; do echo "$k"; done | grep -c '^disk ')
nvol=$(for k in "${!covered[@]}"; do echo "$k"; done | grep -c '^volume ')
if [ "$ndisk" = 30 ] && [ "$nvol" = 56 ]; then
    ok "every disk (30) and volume (56) RPC of every version ran the Win32 host on the model"
else
    bad "every disk and volume RPC of every version called" "disk $ndisk/30, volume $nvol/56"
fi
if kill -0 "$PID" 2>/dev/null && ! grep -q 'Unhandled' "$LOG"; then
    ok "csi-proxy-model.exe is still running"
else
    bad "csi-proxy-model.exe is still running" "$(tail -20 "$LOG")"
fi
finish
