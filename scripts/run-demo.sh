#!/usr/bin/env bash
# `make run`: csi-proxy.exe under Wine, in the foreground (console mode),
# in a Wine prefix kept under build/demo, with a kubelet directory and a
# working directory made for the demo. Ctrl+C drains and stops it.
# Call it from another terminal with scripts/cli.sh (see the README).
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
export WINEDEBUG=-all
export WINEPREFIX=$PWD/build/demo/wineprefix
if [ ! -d "$WINEPREFIX/drive_c" ]; then
    echo "creating the demo Wine prefix in $WINEPREFIX (a few seconds, once)"
    mkdir -p "$WINEPREFIX"
    wineboot -i >"$PWD/build/demo/wineboot.log" 2>&1 || true
    [ -d "$WINEPREFIX/drive_c" ] || { cat "$PWD/build/demo/wineboot.log"; exit 1; }
fi
# csi-proxy.exe runs as a plain Wine process here, which keeps wineserver up.
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi" "$C/var/lib/kubelet/pods" "$C/csi-demo"
cp build/win/csi-proxy.exe build/win/csi-proxy-cli.exe "$C/csi/"
cat <<MSG
csi-proxy.exe (console mode) with -kubelet-path C:\\var\\lib\\kubelet -working-dir C:\\csi-demo
  C:\\ is $C
  from another terminal:  scripts/cli.sh filesystem v1 Mkdir '{"path":"C:\\\\var\\\\lib\\\\kubelet\\\\pods\\\\demo"}'
  Ctrl+C stops it (calls in flight are drained).
MSG
exec wine 'C:\csi\csi-proxy.exe' -kubelet-path 'C:\var\lib\kubelet' -working-dir 'C:\csi-demo' -v 2
