#!/usr/bin/env bash
# bench-smoke (make test): the real grpc-go client of `make bench` builds and
# talks to build/win/csi-proxy.exe under Wine: one probe, 50 sequential calls
# on a long-lived client (with its idle client on the disk pipe), 50 calls
# from 8 goroutines on one connection, 5 connect+call+close, 48 calls from
# 8 clients on 8 connections, and 50 sequential calls with 150 and with
# 1100 more connections open (each loop's completion port takes any
# number; nothing is polled).
# Private prefix;
# stops only what it started, by pid, and waits until the pipes are gone.
# The first build of the client compiles Go's standard library for Windows
# into build/go/cache (about a minute of CPU); later runs reuse it.
set -u
cd "$(dirname "$0")/../.." || exit 1
make -s build/win/bench-goclient.exe build/win/bench-mon.exe build/win/csi-proxy.exe || exit 1
export WINEDEBUG=-all
export WINEPREFIX
WINEPREFIX=$(mktemp -d /tmp/csi-proxy-gosmoke.XXXXXX)
C=$WINEPREFIX/drive_c
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    fi
    wineserver -k 2>/dev/null
    wineserver -w 2>/dev/null
    rm -rf "$WINEPREFIX"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "bench-smoke: FAIL: $*"; [ -f "$C/csi/server.log" ] && tail -5 "$C/csi/server.log"; exit 1; }

wineboot -i >/dev/null 2>&1
[ -d "$C" ] || fail "wineboot did not make $C"
wineserver -p
mkdir -p "$C/csi" "$C/var/lib/kubelet" "$C/csiproxy-test/dir"
cp build/win/csi-proxy.exe build/win/bench-mon.exe build/win/bench-goclient.exe "$C/csi/"
out=$(wine 'C:\csi\bench-mon.exe' start -log 'C:\csi\server.log' 'C:\csi\csi-proxy.exe' \
    -kubelet-path 'C:\var\lib\kubelet' -working-dir 'C:\csiproxy-test' | tr -d '\r')
for p in /proc/[0-9]*; do
    grep -qzx "WINEPREFIX=$WINEPREFIX" "$p/environ" 2>/dev/null || continue
    [[ $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) == 'C:\csi\csi-proxy.exe'* ]] && SERVER_PID=${p#/proc/}
done
[ -n "$SERVER_PID" ] || fail "csi-proxy.exe did not start: $out"
grep -q '"pipes":23' <<<"$out" || fail "not all pipes came up: $out"

n=0 bad=0
check() { # check NAME EXPECTED-SUBSTRING ARGS...
    local name=$1 want=$2 out
    shift 2
    out=$(timeout 60 wine 'C:\csi\bench-goclient.exe' "$@" 2>&1 | tr -d '\r')
    n=$((n + 1))
    if grep -q "$want" <<<"$out"; then
        echo "ok   $name: $out"
    else
        bad=$((bad + 1))
        echo "FAIL $name: $out"
    fi
}
check probe '"exists":true' probe
check seq50 '"calls":50,' seq -warm 0 -calls 50
check conc8 '"calls":50,' conc -n 8 -warm 0 -calls 50
check churn5 '"calls":5,' churn -warm 0 -calls 5
# 8 clients at once: past SPREAD connections the next instances go to the
# second loop (cp_pipe_place), so its clients are served only if it serves
check clients8 '"calls":48,' clients -n 8 -warm 0 -calls 48
# 150 and 1100 more connections spread over both loops (cp_pipe_place),
# which must serve the clients placed on them (each of the 150 makes one
# call before the timed ones) and the timed client among them: a
# completion port takes any number of connections, with no polling.
check many150 '"calls":50,' seq -many 150 -warm 0 -calls 50
check many1100 '"calls":50,' seq -many 1100 -warm 0 -calls 50
check missing-pipe 'File not found\|cannot find' probe -pipe '\\.\pipe\csi-proxy-nonexistent'

kill "$SERVER_PID"
for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SERVER_PID" 2>/dev/null && fail "csi-proxy.exe did not exit"
SERVER_PID=
wine 'C:\csi\bench-mon.exe' gone -timeout 10000 >/dev/null || fail "pipes still there after the server exited"
echo "bench-smoke: $((n - bad)) passed, $bad failed"
[ $bad = 0 ]
