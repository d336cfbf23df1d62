#!/usr/bin/env bash
# csi-proxy-cli.exe reads its command line in UTF-16 (wmain, -municode) and
# works in UTF-8: a non-ASCII argument comes back intact in its messages.
# (Without wmain, main's argv is in the ANSI code page and "grüppé" turns
# into "gr?pp?" or mojibake.) No server needed: an unknown service name is
# echoed in the error. Prints "ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
wine_suite cli csi-proxy-cli.exe
wineboot -i >/dev/null 2>&1
mkdir -p "$WINEPREFIX/drive_c/csi"
cp "$W/csi-proxy-cli.exe" "$WINEPREFIX/drive_c/csi/"

expect_run "a non-ASCII argument reaches the CLI intact (UTF-16 command line -> UTF-8)" 3 \
    'no service "grüppé日本 v1"' cli 'grüppé日本' v1 Foo '{}'
finish
