#!/usr/bin/env bash
# Wine suite: a second process makes its own server instance of a pipe
# csi-proxy serves, as any caller the pipe's DACL lets write can (on a pipe
# FILE_APPEND_DATA is FILE_CREATE_PIPE_INSTANCE, and a client needs it), and
# so may receive the calls of clients that land on it. csi-proxy cannot
# stop that; it must see it and say so: an error in its log and to the
# Event Log (ReportEventW, a no-op under Wine, seen with +eventlog) naming
# the pipe, a metric counter per pipe, and `csi-proxy-cli health` failing
# for that pipe, and only that one. First, normal traffic (many clients,
# connections opened and closed in a tight loop, so that the listening
# instance is made again and again) raises none of it. Wine does not
# enforce DACLs but does count a pipe's instances (GetNamedPipeHandleStateW),
# which is what the check reads. Prints "ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
wine_suite pipewatch csi-proxy.exe csi-proxy-cli.exe pipecheck.exe squat.exe
PY=/usr/bin/python3
LOG=$WINEPREFIX/server.log

wineboot -i >/dev/null 2>&1
wineserver -p
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi" "$C/var/lib/kubelet"
cp "$W/csi-proxy.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$W/squat.exe" "$C/csi/"

# What the check is built on, as Wine does it: a server instance closed
# before its client leaves the count at once here (on Windows the instance
# stays until the client closes too: the check allows for it).
run 'C:\csi\squat.exe' -linger
echo "$OUT" | sed 's/^/# /'
check "Wine counts a pipe's instances across processes" \
    "$(grep -q '^server a + client + server b: 2$' <<<"$OUT" && echo 0 || echo 1)" "$OUT"

# http.sys first (see metrics.sh): the counter is read from /metrics.
for i in $(seq 1 60); do
    [ $((i % 10)) = 1 ] && wine sc start http >/dev/null 2>&1
    wine sc query http 2>/dev/null | grep -q RUNNING && break
    sleep 1
done
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$C/csi/watch.yaml" <<'YAML'
groups:
  filesystem: {}
  smb: {}
YAML
WINEDEBUG=fixme-all,trace+eventlog wine 'C:\csi\csi-proxy.exe' -config 'C:\csi\watch.yaml' \
    -metrics-bind-address "127.0.0.1:$PORT" -v 2 >"$LOG" 2>&1 &
PID=$!
if $PY test/wine/metrics_check.py wait "$PORT" 60; then
    ok "csi-proxy serves filesystem and smb, and metrics"
else
    bad "csi-proxy serves filesystem and smb, and metrics" "$(tail -20 "$LOG")"
    finish
    exit 1
fi
K='C:\\var\\lib\\kubelet'
BGP=()

# --- normal operation: no alarm --------------------------------------------------
# Four clients open and close the filesystem pipe in a tight loop for 6 s
# (each connection makes the service create the next listening instance),
# while others call and hold connections open: several checks pass.
for _ in 1 2 3 4; do
    wine 'C:\csi\pipecheck.exe' -churn 6000 csi-proxy-filesystem-v1 >>"$WINEPREFIX/churn.out" 2>&1 &
    BGP+=($!)
done
wine 'C:\csi\pipecheck.exe' -hold 6000 csi-proxy-filesystem-v1 csi-proxy-filesystem-v1beta1 \
    csi-proxy-smb-v1 csi-proxy-smb-v1beta1 >/dev/null 2>&1 &
BGP+=($!)
n_ok=0
fails=
for i in $(seq 1 10); do
    run 'C:\csi\csi-proxy-cli.exe' filesystem v1 PathExists "{\"path\":\"$K\"}"
    if [ "$RC" = 0 ]; then
        n_ok=$((n_ok + 1))
    else
        fails+="call $i: exit $RC: $OUT"$'\n'
    fi
done
for p in "${BGP[@]}"; do wait "$p"; done
n_churn=$(tr -d '\r' <"$WINEPREFIX/churn.out" | grep -c ' 0 missing$')
sed 's/^/# /' "$WINEPREFIX/churn.out"
check "normal traffic is served: $n_ok/10 calls OK alongside 4 churning clients (never without a listening instance: $n_churn/4) and 4 held connections" \
    "$([ "$n_ok" = 10 ] && [ "$n_churn" = 4 ] && echo 0 || echo 1)" "$fails$(cat "$WINEPREFIX/churn.out")"
sleep 3 # two more checks after the traffic
if grep -q 'foreign server instance' "$LOG"; then
    bad "normal traffic raises no foreign-instance alarm" "$(grep -m3 'foreign' "$LOG")"
else
    ok "normal traffic raises no foreign-instance alarm"
fi
run 'C:\csi\csi-proxy-cli.exe' health -config 'C:\csi\watch.yaml'
check "health passes" "$RC" "$OUT"

# --- a foreign instance of csi-proxy-smb-v1 --------------------------------------
wine 'C:\csi\squat.exe' csi-proxy-smb-v1 30000 >"$WINEPREFIX/squat.out" 2>&1 &
SQ=$!
for _ in $(seq 1 100); do
    grep -q '^instances' "$WINEPREFIX/squat.out" && break
    sleep 0.1
done
echo "# squat: $(head -1 "$WINEPREFIX/squat.out" | tr -d '\r')"
# Up to 25 s: closes the service made while a client still had the
# connection open (the health call above may end that way) mask as many
# instances for 10-20 s (WATCH_LINGER_MS; the documented limit).
for _ in $(seq 1 250); do
    grep -q 'foreign server instance' "$LOG" && break
    sleep 0.1
done
check "the service logs an error naming the pipe" \
    "$(grep -q '^E.*csi-proxy-smb-v1: .*foreign server instance' "$LOG" && echo 0 || echo 1)" \
    "$(grep -m3 'foreign' "$LOG"; tail -3 "$LOG")"
# Wine's ReportEventW writes an EVENTLOG_ERROR_TYPE record's strings on its
# err channel (warnings on warn, the rest on trace).
grep -q 'err:eventlog:ReportEventW L".*csi-proxy-smb-v1: .*foreign server instance' "$LOG"
check "... and reports it to the Event Log as an error (ReportEventW, EVENTLOG_ERROR_TYPE)" $? \
    "$(grep -m3 'ReportEventW' "$LOG")"
n=$(grep -c '^E.*foreign server instance' "$LOG")
check "... once, not at every check ($n)" "$([ "$n" = 1 ] && echo 0 || echo 1)" "$(grep 'foreign' "$LOG")"
grep 'foreign' "$LOG" | head -2 | sed 's/^/# /'
cat >"$WINEPREFIX/expect.json" <<'JSON'
{"samples": [
  ["csi_proxy_pipe_foreign_instances_total", {"pipe": "csi-proxy-smb-v1"}, 1],
  ["csi_proxy_pipe_foreign_instances_total", {"pipe": "csi-proxy-filesystem-v1"}, 0]
 ]}
JSON
OUT=$($PY test/wine/metrics_check.py check "$PORT" "$WINEPREFIX/expect.json")
RC=$?
echo "$OUT" | sed 's/^/    /'
check "the metric counts it for that pipe, and only that pipe" $RC
run 'C:\csi\csi-proxy-cli.exe' health -config 'C:\csi\watch.yaml' -deadline 3s
echo "$OUT" | grep -v ' ok ' | sed 's/^/# /'
bad_lines=$(grep -c 'FAIL' <<<"$OUT")
check "health fails, for smb v1 only, naming the cause" \
    "$([ "$RC" = 1 ] && [ "$bad_lines" = 1 ] && grep -q '^smb v1 FAIL: .*foreign server instance' <<<"$OUT" && echo 0 || echo 1)" "$OUT"
wait "$SQ"
if kill -0 "$PID" 2>/dev/null; then ok "the server is still running"; else bad "the server is still running" "$(tail -5 "$LOG")"; fi
finish
