#!/usr/bin/env bash
# Wine run of the driver-contract suite: the node-plugin models of
# test/conformance/drivers/ (AWS EBS, Azure Disk, GCE PD, the SMB drivers),
# through csi-proxy-cli.exe over the named pipes of csi-proxy-sim.exe (the
# Win32 file-system host and the storage simulator) in a private Wine prefix.
# The package starts the server itself (its fixture, with the drivers'
# extra disks, lives in its harness); this script prepares the prefix and sets
# CSI_PROXY_WINE_PREFIX. What Wine cannot show is reported by pytest as a
# skip naming the fact and the reason. Exit 0 only when pytest passed.
set -u
cd "$(dirname "$0")/../.." || exit 1
W=build/win
for f in csi-proxy-sim.exe csi-proxy-cli.exe pipecheck.exe; do
    [ -f "$W/$f" ] || { echo "missing $W/$f: run make first"; exit 1; }
done

export WINEDEBUG=-all
export WINEPREFIX
WINEPREFIX=$(mktemp -d /tmp/csi-proxy-wine-drivers.XXXXXX)
cleanup() {
    wineserver -k 2>/dev/null
    rm -rf "$WINEPREFIX"
}
trap cleanup EXIT

echo "# prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
wineserver -p
mkdir -p "$WINEPREFIX/drive_c/csi"
cp "$W/csi-proxy-sim.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$WINEPREFIX/drive_c/csi/"

CSI_PROXY_WINE_PREFIX=$WINEPREFIX /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs \
    test/conformance/drivers "$@"
rc=$?
if [ "$rc" != 0 ] && [ -f "$WINEPREFIX/drivers-server.log" ]; then
    echo "# server log (last 30 lines):"
    tail -30 "$WINEPREFIX/drivers-server.log"
fi
exit $rc
