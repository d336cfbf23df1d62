#!/usr/bin/env bash
# Runs csi-proxy-cli.exe in the `make run` demo's Wine prefix (named pipes
# exist only among the processes of one prefix). Arguments go to the CLI:
#   scripts/cli.sh filesystem v1 PathExists '{"path":"C:\\var\\lib\\kubelet"}'
#   scripts/cli.sh --list filesystem
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
export WINEDEBUG=-all
export WINEPREFIX=$PWD/build/demo/wineprefix
[ -d "$WINEPREFIX/drive_c" ] || { echo "start the demo first: make run" >&2; exit 1; }
exec wine 'C:\csi\csi-proxy-cli.exe' "$@"
