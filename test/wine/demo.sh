#!/usr/bin/env bash
# `make demo` cannot rot: it is run non-interactively and its transcript
# checked, under Wine over the named pipes (make demo) and natively over
# Unix sockets (scripts/demo.sh --native):
#   * it exits 0, says which server and transport it used;
#   * every call it prints ("-> ...") is answered "status: OK", and the
#     closing count agrees ("demo: N calls, N answered OK, 0 did not");
#   * every step of the block driver (stage, publish, stats, expand,
#     unpublish, unstage), the SMB driver and the iSCSI login is there, the
#     volume grew at the expand, and "final state: clean";
#   * the demo's own Wine prefix / root under build/demo-run is gone after.
# Failure path: demo-flow.sh against a socket directory with no server
# exits non-zero and counts every call as not answered.
# Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
pass=0
fail=0
T=$(mktemp -d /tmp/csi-proxy-demo.XXXXXX)
trap 'rm -rf "$T"' EXIT

# transcript NAME FILE RC WANT-TRANSPORT: the checks above on one run.
transcript() {
    local name=$1 f=$2 rc=$3 want=$4 calls oks
    check "$name: exits 0" "$rc" "$(tail -20 "$f")"
    grep -qF "csi-proxy demo: $want" "$f"
    check "$name: runs $want" $? "$(head -3 "$f")"
    calls=$(grep -c '^-> ' "$f")
    oks=$(grep -c '^   status: OK$' "$f")
    check "$name: all $calls calls answered status: OK" "$([ "$calls" -ge 40 ] && [ "$oks" = "$calls" ] &&
        [ "$(grep -c '^   status: ' "$f")" = "$calls" ]; echo $?)" "$(grep -B2 '^   status: [^O]' "$f" | head -12)"
    grep -qx "demo: $calls calls, $calls answered OK, 0 did not" "$f"
    check "$name: the closing count says $calls calls, all OK" $? "$(tail -2 "$f")"
    local s missing=
    for s in "block: NodeStageVolume" "block: stage - partition" "block: stage - format" "block: NodePublishVolume" \
        "block: NodeGetVolumeStats" "block: NodeExpandVolume" "block: NodeUnpublishVolume" "block: NodeUnstageVolume" \
        "smb: NodeStageVolume" "smb: NodePublishVolume" "smb: NodeUnpublishVolume, NodeUnstageVolume" \
        "iscsi: the SAN's portal" "iscsi: log out" "the final state"; do
        grep -q "^== $s" "$f" || missing+="$s; "
    done
    check "$name: every step is shown (block stage..unstage, SMB, iSCSI, final state)" "$([ -z "$missing" ]; echo $?)" "missing: $missing"
    missing=
    for s in PartitionDisk FormatVolume MountVolume GetVolumeStats Rescan ResizeVolume UnmountVolume \
        NewSmbGlobalMapping RemoveSmbGlobalMapping ConnectTarget DisconnectTarget; do
        grep -q "^-> [a-z]* v[0-9a-z]* $s " "$f" || missing+="$s "
    done
    check "$name: the calls a driver makes are there (PartitionDisk ... DisconnectTarget)" "$([ -z "$missing" ]; echo $?)" "missing: $missing"
    grep -qE '^   \(volume size [0-9]+ -> [0-9]+ bytes\)$' "$f" &&
        [ "$(sed -n 's/^   (volume size \([0-9]*\) -> \([0-9]*\) bytes)$/\1 \2/p' "$f" | awk '{print ($2 > $1)}')" = 1 ]
    check "$name: the volume grew at the expand" $? "$(grep 'volume size' "$f")"
    grep -qx 'final state: clean' "$f"
    check "$name: final state: clean" $? "$(grep 'final state' "$f")"
}

before=$(ls build/demo-run 2>/dev/null | wc -l)
make -s demo >"$T/wine.txt" 2>&1
rc=$?
transcript "make demo (Wine, named pipes)" "$T/wine.txt" $rc "csi-proxy-sim.exe under Wine, over the named pipes"
bash scripts/demo.sh --native >"$T/native.txt" 2>&1
rc=$?
transcript "scripts/demo.sh --native" "$T/native.txt" $rc "the native build, over the Unix sockets"
after=$(ls build/demo-run 2>/dev/null | wc -l)
check "the demos left nothing in build/demo-run ($before entries before, $after after)" "$([ "$after" -le "$before" ]; echo $?)"

# Failure path: no server behind the sockets.
mkdir -p "$T/nosock"
bash scripts/demo-flow.sh --socket-dir "$T/nosock" >"$T/none.txt" 2>&1
rc=$?
n=$(grep -c '^-> ' "$T/none.txt")
check "demo-flow.sh with no server: exits non-zero, no call counted as answered" \
    "$([ "$rc" != 0 ] && grep -qx "demo: $n calls, 0 answered OK, $n did not" "$T/none.txt"; echo $?)" "$(tail -3 "$T/none.txt")"
finish
