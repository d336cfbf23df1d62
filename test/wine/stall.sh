#!/usr/bin/env bash
# Wine check: clients that take no answer cost the server a bounded amount.
# The real csi-proxy.exe with its defaults; CONNS connections to
# csi-proxy-filesystem-v1 (pipecheck -stall), each with a zero flow-control
# window and CALLS PathExists calls sent at once, none acknowledged or read,
# all held open. The server's resident size (VmRSS of its Wine process, from
# /proc) may grow by at most LIMIT_MB meanwhile, and a normal caller is
# served while they are held.
#   test/wine/stall.sh [CONNS [CALLS [LIMIT_MB]]]   (default 200 1000 64)
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
CONNS=${1:-200}
CALLS=${2:-1000}
LIMIT_MB=${3:-64}
. test/wine/lib.sh
wine_suite stall csi-proxy.exe csi-proxy-cli.exe pipecheck.exe
STALL=
trap 'kill $STALL 2>/dev/null; wine_suite_cleanup' EXIT
echo "# prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
wineserver -p
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi" "$C/var/lib/kubelet/pods" "$C/csi-work"
cp "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$C/csi/"
cp "${CSI_PROXY_EXE:-$W/csi-proxy.exe}" "$C/csi/csi-proxy.exe" # CSI_PROXY_EXE: another build

wine 'C:\csi\csi-proxy.exe' -working-dir 'C:\csi-work' >"$WINEPREFIX/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 200); do
    wine 'C:\csi\pipecheck.exe' csi-proxy-filesystem-v1 >/dev/null 2>&1 && break
    sleep 0.05
done
SRV=
for p in /proc/[0-9]*; do
    grep -qzx "WINEPREFIX=$WINEPREFIX" "$p/environ" 2>/dev/null || continue
    [[ $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) == 'C:\csi\csi-proxy.exe'* ]] && SRV=${p#/proc/}
done
[ -n "$SRV" ]
check "csi-proxy.exe serves (its Wine process found)" $? "$(cat "$WINEPREFIX/server.log")"
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$SRV/status"; }
expect_run "a normal caller is served" 0 '"exists":true' \
    cli filesystem v1 PathExists '{"path":"C:\\var\\lib\\kubelet"}'
before=$(rss)

wine 'C:\csi\pipecheck.exe' -stall "$CONNS" "$CALLS" 600 'C:\var\lib\kubelet' \
    csi-proxy-filesystem-v1 >"$WINEPREFIX/stall.out" 2>&1 &
STALL=$!
for _ in $(seq 1 1200); do
    grep -q '^stalled:' "$WINEPREFIX/stall.out" && break
    kill -0 "$STALL" 2>/dev/null || break
    sleep 0.25
done
grep -q "^stalled: $CONNS connections" "$WINEPREFIX/stall.out"
check "$CONNS stalled clients connected, $CALLS calls written by each" $? "$(cat "$WINEPREFIX/stall.out")"
# their calls run and are answered into the closed windows: until it settles
last=$(rss) since=$SECONDS
while [ $((SECONDS - since)) -lt 5 ]; do
    sleep 0.5
    now=$(rss)
    [ "$now" -gt "$last" ] && last=$now since=$SECONDS
done
expect_run "a normal caller is served while they stall" 0 '"exists":true' \
    cli filesystem v1 PathExists '{"path":"C:\\var\\lib\\kubelet"}'
after=$(rss)
grown=$(( (after - before) / 1024 ))
echo "# server VmRSS ${before} kB -> ${after} kB (+${grown} MB) with $CONNS stalled clients"
[ "$grown" -lt "$LIMIT_MB" ]
check "the server grew by ${grown} MB (< ${LIMIT_MB} MB) for $CONNS stalled clients" $?
kill "$STALL" 2>/dev/null
wait "$STALL" 2>/dev/null
STALL=
finish
