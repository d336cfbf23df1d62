#!/usr/bin/env bash
# Wine check: one pipe transport loop whose wait fails ends only that
# loop's connections; the other pipes keep serving, and the failure is
# logged and counted (csi_proxy_transport_loop_failures_total).
# build/win/csi-proxy-hooks.exe with CSI_PROXY_TEST_FAIL_WAIT=1:1: the second
# loop's wait fails once it has taken one connect (cp_transport_test_fail_wait).
# The first loop takes the first three connections (SPREAD); the next client
# of the pipe that got the third lands on the second loop.
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
PY=/usr/bin/python3
. test/wine/lib.sh
wine_suite loopfail csi-proxy-hooks.exe csi-proxy-cli.exe pipecheck.exe
HOLD=
trap 'kill $HOLD 2>/dev/null; wine_suite_cleanup' EXIT
wineboot -i >/dev/null 2>&1
wineserver -p
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi" "$C/csi-work"
cp "$W/csi-proxy-hooks.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$C/csi/"
cp "${CSI_PROXY_EXE:-$W/csi-proxy-hooks.exe}" "$C/csi/csi-proxy-hooks.exe" # another build
LOG=$WINEPREFIX/server.log

# http.sys (metrics) is a Wine driver service started on demand: started here
# first, as test/wine/metrics.sh does, so that the start measures csi-proxy.
for i in $(seq 1 60); do
    [ $((i % 10)) = 1 ] && wine sc start http >/dev/null 2>&1
    wine sc query http 2>/dev/null | grep -q RUNNING && break
    sleep 1
done
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

CSI_PROXY_TEST_FAIL_WAIT=1:1 wine 'C:\csi\csi-proxy-hooks.exe' -working-dir 'C:\csi-work' \
    -metrics-bind-address "127.0.0.1:$PORT" -v 2 >"$LOG" 2>&1 &
PID=$!
up=1
for _ in $(seq 1 300); do
    wine 'C:\csi\pipecheck.exe' csi-proxy-filesystem-v1 >/dev/null 2>&1 && { up=0; break; }
    sleep 0.1
done
check "csi-proxy-hooks.exe serves" $up "$(tail -5 "$LOG")"

# Three idle connections: the first loop's (SPREAD). The filesystem v1
# pipe's next instance then listens on the second loop.
wine 'C:\csi\pipecheck.exe' -hold 60000 csi-proxy-disk-v1 csi-proxy-volume-v1 \
    csi-proxy-filesystem-v1 >"$WINEPREFIX/hold.out" 2>&1 &
HOLD=$!
sleep 3
# Its client lands on the second loop, whose wait then fails: this call
# may fail or not, depending on when the wait fails; it is not checked.
cli filesystem v1 PathExists '{"path":"C:\\csi-work"}' >/dev/null 2>&1
for _ in $(seq 1 100); do
    grep -q 'GetQueuedCompletionStatusEx failed' "$LOG" && break
    sleep 0.1
done
line=$(tr -d '\r' <"$LOG" | grep 'GetQueuedCompletionStatusEx failed')
grep -q 'loop 2 of 2: GetQueuedCompletionStatusEx failed' <<<"$line"
check "the failed wait is logged, naming the loop" $? "$(tail -5 "$LOG")"
grep -q 'the others serve on' <<<"$line"
check "... and says the other loops serve on" $? "$line"
kill -0 "$PID" 2>/dev/null
check "the service still runs" $? "$(tail -5 "$LOG")"
for v in v1 v1beta1 v1alpha1 v2alpha1; do
    for i in 1 2 3; do
        expect_cli "after the failure, filesystem $v calls are answered ($i)" 0 '"exists":true' \
            filesystem "$v" PathExists '{"path":"C:\\csi-work"}'
    done
done
grep -q '^csi_proxy_transport_loop_failures_total 1$' \
    <<<"$($PY -c 'import sys; sys.path.insert(0, "test/wine"); import metrics_check as m; print(m.fetch(int(sys.argv[1]))[2])' "$PORT" 2>&1)"
check "the metric counts one failed loop" $? \
    "$($PY -c 'import sys; sys.path.insert(0, "test/wine"); import metrics_check as m; print(m.fetch(int(sys.argv[1]))[2])' "$PORT" 2>&1 | grep -i -m3 "loop\|error")"
kill -0 "$HOLD" 2>/dev/null
check "the first loop's idle connections stay open" $? "$(cat "$WINEPREFIX/hold.out")"
finish
