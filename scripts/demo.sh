#!/usr/bin/env bash
# `make demo`: csi-proxy at work on a small simulated node, in about a
# minute. csi-proxy-sim.exe (csi-proxy.exe's main and core with the storage,
# SMB and iSCSI simulators in place of Windows') runs under Wine, seeded with
# test/fixtures/demo-node.yaml (two data disks, an SMB server, an iSCSI
# target), and scripts/demo-flow.sh makes a block driver's, the SMB
# driver's and an iSCSI login's calls over the real named pipes with
# csi-proxy-cli.exe, printing each call and its answer.
#
#   scripts/demo.sh            under Wine, over the named pipes
#   scripts/demo.sh --native   the native build over Unix sockets (no Wine;
#                              here the drivers' links are made too)
#
# Each run starts from a fresh simulated node (a new Wine prefix or root
# under build/demo-run, removed afterwards). The exit code is
# demo-flow.sh's: 0 when every call answered OK and nothing was left behind.
# `make run` is the real csi-proxy.exe.
set -u
cd "$(dirname "$0")/.." || exit 1
NATIVE=0
[ "${1:-}" = --native ] && NATIVE=1
mkdir -p build/demo-run
T=$(mktemp -d "$PWD/build/demo-run/run.XXXXXX")
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    [ $NATIVE = 0 ] && wineserver -k 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
FIXTURE=test/fixtures/demo-node.yaml

if [ $NATIVE = 1 ]; then
    for f in build/native/csi-proxy build/native/csi-proxy-cli; do
        [ -x "$f" ] || { echo "missing $f: run make first" >&2; exit 1; }
    done
    mkdir -p "$T/s" "$T/r/C/var/lib/kubelet/plugins" "$T/r/C/var/lib/kubelet/pods" "$T/r/C/csi-work"
    build/native/csi-proxy -socket-dir "$T/s" -root "$T/r" -working-dir 'C:\csi-work' \
        -sim-fixture "$FIXTURE" >"$T/server.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 200); do
        [ "$(find "$T/s" -name '*.sock' | wc -l)" = 23 ] && break
        sleep 0.05
    done
    [ "$(find "$T/s" -name '*.sock' | wc -l)" = 23 ] || { echo "the server did not start:" >&2; cat "$T/server.log" >&2; exit 1; }
    bash scripts/demo-flow.sh --socket-dir "$T/s"
    exit $?
fi

for f in csi-proxy-sim.exe csi-proxy-cli.exe pipecheck.exe; do
    [ -f "build/win/$f" ] || { echo "missing build/win/$f: run make demo" >&2; exit 1; }
done
export WINEDEBUG=-all WINEPREFIX=$T/wineprefix
echo "starting Wine in a fresh prefix ($WINEPREFIX) ..."
mkdir -p "$WINEPREFIX"
wineboot -i >"$T/wineboot.log" 2>&1
[ -d "$WINEPREFIX/drive_c" ] || { cat "$T/wineboot.log" >&2; exit 1; }
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi" "$C/var/lib/kubelet/plugins" "$C/var/lib/kubelet/pods" "$C/csi-work"
cp build/win/csi-proxy-sim.exe build/win/csi-proxy-cli.exe build/win/pipecheck.exe "$C/csi/"
cp "$FIXTURE" "$C/csi/node.yaml"
CSI_PROXY_SIM_FIXTURE='C:\csi\node.yaml' wine 'C:\csi\csi-proxy-sim.exe' -working-dir 'C:\csi-work' -v 2 \
    >"$T/server.log" 2>&1 &
PID=$!
up=1
for _ in $(seq 1 200); do
    if wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1; then up=0; break; fi
    sleep 0.05
done
[ $up = 0 ] || { echo "csi-proxy-sim.exe did not open its pipes:" >&2; cat "$T/server.log" >&2; exit 1; }
bash scripts/demo-flow.sh --wine
