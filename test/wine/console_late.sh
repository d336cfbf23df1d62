#!/usr/bin/env bash
# A late Ctrl+C: console mode, a second Ctrl+C that
# arrives after the app was freed must not reach the app (it used to: the
# console handler called cp_app_drain_ms/cp_app_stop on the freed app).
# Made deterministic with build/win/csi-proxy-hooks.exe (mk/hooks.mk):
# CSI_PROXY_TEST_TEARDOWN_PAUSE_MS holds the process after the app is
# freed, and the second Ctrl+C is sent inside that pause. Wine turns SIGINT
# into CTRL_C_EVENT for the console process, on a thread of its own as
# Windows does. Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
wine_suite late csi-proxy-hooks.exe pipecheck.exe

wineboot -i >/dev/null 2>&1
wineserver -p
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi"
cp "$W/csi-proxy-hooks.exe" "$W/pipecheck.exe" "$C/csi/"
LOG=$WINEPREFIX/console.log

# wait_log PATTERN: up to 20 s for PATTERN in the log.
wait_log() {
    for _ in $(seq 1 200); do
        grep -q "$1" "$LOG" && return 0
        sleep 0.1
    done
    return 1
}

CSI_PROXY_TEST_TEARDOWN_PAUSE_MS=4000 wine 'C:\csi\csi-proxy-hooks.exe' -v 2 >"$LOG" 2>&1 &
PID=$!
up=1
for _ in $(seq 1 200); do
    wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1 && { up=0; break; }
    sleep 0.1
done
check "csi-proxy-hooks.exe serves all pipes" $up "$(tail -5 "$LOG")"

kill -INT "$PID"
wait_log 'test hook: app freed'
check "first Ctrl+C: the app stops and is freed (the test hook holds the process)" $? "$(tail -5 "$LOG")"
kill -INT "$PID"
wait "$PID"
rc=$?
PID=
log=$(tr -d '\r' <"$LOG")
check "a Ctrl+C after the app was freed: the process still exits 0" "$([ "$rc" = 0 ] && echo 0 || echo 1)" \
    "exit $rc; $(tail -5 <<<"$log")"
n_stop=$(grep -c 'interrupted: stopping' <<<"$log")
check "... the late handler did not touch the freed app (\"interrupted: stopping\" logged once)" \
    "$([ "$n_stop" = 1 ] && echo 0 || echo 1)" "$(grep -E 'interrupted|test hook' <<<"$log")"
late=$(awk '/test hook: app freed/ {f=1} f && /interrupted while exiting: nothing left to stop/ {print "yes"; exit}' <<<"$log")
check "... it ran, found no app, and said so" "$([ "$late" = yes ] && echo 0 || echo 1)" \
    "$(grep -E 'interrupted|test hook' <<<"$log")"
grep -q 'exiting with code 0' <<<"$log"
check "... and the log's last word is \"exiting with code 0\"" $? "$(tail -3 <<<"$log")"
finish
