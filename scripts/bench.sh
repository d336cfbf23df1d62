#!/usr/bin/env bash
# Benchmarks of the real build/win/csi-proxy.exe under Wine (issue 5).
#
#   scripts/bench.sh bench   `make bench`: the transport floor and PathExists over
#                            gRPC in the same run, memory, size, start-up time, and
#                            a scaled-down load check (10k -> 100k calls). Prints
#                            a table; writes build/bench.json.
#   scripts/bench.sh load    `make load-wine`: memory and handle count of the
#                            server between 100,000 and 1,000,000 calls; writes
#                            build/load-wine.json.
#
# Everything runs in a private Wine prefix (mktemp -d) with its own wineserver;
# only processes started here are stopped here, by pid. Environment knobs:
# BENCH_SECS (5) and BENCH_WARM (0.5) per timed run; LOAD_TO (calls; 100000
# for bench, 1000000 for load; the first tenth is compared with the last).
set -u
cd "$(dirname "$0")/.."
MODE=${1:-bench}
case $MODE in bench | load) ;; *) echo "usage: $0 bench|load" >&2; exit 2 ;; esac

W=build/win
for f in csi-proxy.exe bench-floor.exe bench-grpc.exe bench-mon.exe bench-sleep.exe bench-hostops.exe; do
    [ -f "$W/$f" ] || { echo "missing $W/$f: run make bench-tools first" >&2; exit 1; }
done
SECS=${BENCH_SECS:-5}
WARM=${BENCH_WARM:-0.5}
if [ "$MODE" = bench ]; then
    LOAD_TO=${LOAD_TO:-100000} OUT=build/bench.json
else
    LOAD_TO=${LOAD_TO:-1000000} OUT=build/load-wine.json
fi
# The load workload: 4 threads, 8 calls in flight each, a new connection every
# 1000 calls (so connection set-up and tear-down are part of it), run in 10
# equal chunks from 0 to LOAD_TO calls.
LOAD_ARGS=(-n 4 -inflight 8 -percon 1000)
LOAD_CHUNKS=10

export WINEDEBUG=-all
export WINEPREFIX
WINEPREFIX=$(mktemp -d /tmp/csi-proxy-bench.XXXXXX)
RES=$WINEPREFIX/results.jsonl
C=$WINEPREFIX/drive_c
STARTED=() # Linux pids of the processes we started
SERVER_PID= SERVER_WINPID=

cleanup() {
    local p
    for p in "${STARTED[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${STARTED[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    done
    wineserver -k 2>/dev/null
    wineserver -w 2>/dev/null
    rm -rf "$WINEPREFIX"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "# $*" >&2; }
fact() { echo "$1" >>"$RES"; }
die() {
    echo "bench: $*" >&2
    [ -f "$C/csi/server.log" ] && tail -20 "$C/csi/server.log" >&2
    exit 1
}
mon() { wine 'C:\csi\bench-mon.exe' "$@" | tr -d '\r'; }
grpc() { wine 'C:\csi\bench-grpc.exe' "$@" -capture 'C:\csi\capture.bin' | tr -d '\r'; }
num() { sed -n "s/.*\"$1\":\([-0-9.]*\).*/\1/p" <<<"$2"; }

# linux_pid EXE: the Linux process hosting C:\csi\EXE in our prefix (Wine sets
# its command line to the Windows one). Prints the pid; fails if none.
linux_pid() {
    local p cmd
    for p in /proc/[0-9]*; do
        grep -qzx "WINEPREFIX=$WINEPREFIX" "$p/environ" 2>/dev/null || continue
        cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
        if [[ $cmd == "C:\\csi\\$1"* ]]; then
            echo "${p#/proc/}"
            return 0
        fi
    done
    return 1
}

# vm PID FIELD: VmRSS or VmHWM of a Linux process, in KiB.
vm() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

# wait_exit PID: until the process is gone (at most 10 s).
wait_exit() {
    for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
    return 1
}

forget() { # drop a pid from STARTED once it is gone
    local keep=() p
    for p in "${STARTED[@]}"; do [ "$p" != "$1" ] && keep+=("$p"); done
    STARTED=("${keep[@]}")
}

# start_server: starts csi-proxy.exe through bench-mon (CreateProcessW, then
# polling the 23 pipes); records the start-up time; sets SERVER_PID/WINPID.
start_server() {
    local out
    out=$(mon start -log 'C:\csi\server.log' 'C:\csi\csi-proxy.exe' \
        -kubelet-path 'C:\var\lib\kubelet' -working-dir 'C:\csiproxy-test')
    local rc=$?
    SERVER_WINPID=$(num winpid "$out")
    SERVER_PID=$(linux_pid csi-proxy.exe) || die "csi-proxy.exe did not start: $out"
    STARTED+=("$SERVER_PID")
    [ $rc = 0 ] || die "not all pipes came up: $out"
    fact "{\"kind\":\"start\",${out#\{}"
    say "csi-proxy.exe started: $out (Linux pid $SERVER_PID)"
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null
    wait_exit "$SERVER_PID" || die "csi-proxy.exe (pid $SERVER_PID) did not exit"
    forget "$SERVER_PID"
    mon gone -timeout 10000 >/dev/null || die "pipes still there after the server exited"
}

# load_chunk TOTAL: more calls until TOTAL calls were made since the load
# began, sampling the server's VmRSS every 0.25 s meanwhile; then, settled,
# its VmRSS, VmHWM, handles and threads. Memory under load swings by several
# MB with the heap's state at any one instant, so the mean of the samples
# during a chunk is what chunks are compared by (the settled value is shown
# too).
LOAD_DONE=0
load_chunk() {
    local n=$(($1 - LOAD_DONE)) out spid h
    (while :; do vm "$SERVER_PID" VmRSS; sleep 0.25; done) >"$WINEPREFIX/rss.samples" 2>/dev/null &
    spid=$!
    STARTED+=("$spid")
    out=$(grpc load -calls "$n" "${LOAD_ARGS[@]}")
    local rc=$?
    kill "$spid"
    wait "$spid" 2>/dev/null
    forget "$spid"
    [ $rc = 0 ] || die "load run failed: $out"
    LOAD_DONE=$1
    fact "${out%\}},\"to\":$1}"
    local stats
    stats=$(awk 'NF {n++; s+=$1; if ($1>m) m=$1} END {printf "\"mean_rss_kb\":%d,\"max_rss_kb\":%d,\"samples\":%d", n ? s/n : 0, m, n}' "$WINEPREFIX/rss.samples")
    sleep 1
    h=$(mon handles "$SERVER_WINPID") || die "cannot read the handle count"
    fact "{\"kind\":\"load-checkpoint\",\"calls\":$1,\"rss_kb\":$(vm "$SERVER_PID" VmRSS),\"hwm_kb\":$(vm "$SERVER_PID" VmHWM),$stats,${h#\{}"
    say "after $1 calls: $(cut -c1-100 <<<"$out")... settled VmRSS $(vm "$SERVER_PID" VmRSS) KiB, under load $stats, $h"
}

# --- prefix ------------------------------------------------------------------
say "prefix $WINEPREFIX"
fact "{\"kind\":\"env\",\"date\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"cpus\":$(nproc),\"wine\":\"$(wine --version 2>/dev/null)\",\"kernel\":\"$(uname -r)\",\"load_before\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
wineboot -i >/dev/null 2>&1
[ -d "$C" ] || die "wineboot did not make $C"
wineserver -p # keep wineserver up between our short-lived processes
mkdir -p "$C/csi" "$C/var/lib/kubelet" "$C/csiproxy-test/dir"
cp "$W"/csi-proxy.exe "$W"/bench-*.exe "$C/csi/"
# The request the bench sends is grpc-go's PathExists of C:\csiproxy-test\dir.
cp test/captures/01-filesystem-v1-PathExists.bin "$C/csi/capture.bin"
fact "{\"kind\":\"exe\",\"path\":\"$W/csi-proxy.exe\",\"bytes\":$(stat -c %s "$W/csi-proxy.exe")}"

if [ "$MODE" = bench ]; then
    # --- start-up: 5 starts; the last server stays for the runs ---------------
    for i in 1 2 3; do
        out=$(mon spawn-exit 'C:\csi\bench-sleep.exe' 0)
        fact "{\"kind\":\"spawn-exit\",${out#\{}"
    done
    for i in 1 2 3 4 5; do
        start_server
        [ $i -lt 5 ] && stop_server
    done
else
    start_server
fi

# --- memory: the server idle next to an empty Wine process --------------------
out=$(mon spawn 'C:\csi\bench-sleep.exe') || die "cannot start bench-sleep.exe"
SLEEP_PID=$(linux_pid bench-sleep.exe) || die "bench-sleep.exe is not running"
STARTED+=("$SLEEP_PID")
sleep 2
IDLE_RSS=$(vm "$SERVER_PID" VmRSS) IDLE_HWM=$(vm "$SERVER_PID" VmHWM)
EMPTY_RSS=$(vm "$SLEEP_PID" VmRSS) EMPTY_HWM=$(vm "$SLEEP_PID" VmHWM)
IDLE_H=$(mon handles "$SERVER_WINPID")
kill "$SLEEP_PID"
wait_exit "$SLEEP_PID"
forget "$SLEEP_PID"
say "idle: csi-proxy VmRSS $IDLE_RSS KiB ($IDLE_H), empty Wine process VmRSS $EMPTY_RSS KiB"

if [ "$MODE" = bench ]; then
    # --- bytes of one call, then the floor with the same counts ----------------
    PROBE=$(grpc probe) || die "probe failed: $PROBE"
    fact "$PROBE"
    REQ=$(num req_bytes "$PROBE") RESP=$(num resp_bytes "$PROBE")
    say "one call: $PROBE"

    # floor NAME [-hop]: runs the echo server and its client once.
    floor() {
        local label=$1 out fpid
        shift
        wine 'C:\csi\bench-floor.exe' server -req "$REQ" -resp "$RESP" "$@" >"$WINEPREFIX/floor.out" 2>&1 &
        fpid=$!
        STARTED+=("$fpid")
        for _ in $(seq 1 100); do grep -q listening "$WINEPREFIX/floor.out" && break; sleep 0.05; done
        out=$(wine 'C:\csi\bench-floor.exe' client -req "$REQ" -resp "$RESP" -secs "$SECS" \
            -warm "$WARM" -label "$label" | tr -d '\r') || die "floor client failed: $out"
        fact "$out"
        say "$out"
        kill "$fpid"
        wait_exit "$fpid"
        forget "$fpid"
    }
    floor floor
    # What the host part of one PathExists costs in process (no pipe, no gRPC).
    while read -r line; do
        fact "$line"
        say "$line"
    done < <(wine 'C:\csi\bench-hostops.exe' -n 2000 'C:\csiproxy-test\dir' | tr -d '\r')

    # --- PathExists over gRPC ---------------------------------------------------
    run() {
        local out
        out=$(grpc "$@" -secs "$SECS" -warm "$WARM")
        fact "$out"
        say "$out"
    }
    run seq -label seq
    run seq -nobdp -label seq-nobdp
    run conc -n 8 -label conc8
    run conc -n 32 -label conc32
    run clients -n 8 -label clients8
    run clients -n 32 -label clients32
    run churn -label churn
    PEAK_HWM=$(vm "$SERVER_PID" VmHWM)
    floor floor-hop -hop
    floor floor-end
fi

# --- load: memory and handles between LOAD_TO / 10 and LOAD_TO calls ------------
say "load: ${LOAD_ARGS[*]}, $LOAD_CHUNKS chunks up to $LOAD_TO calls"
step=$((LOAD_TO / LOAD_CHUNKS))
for k in $(seq 1 "$LOAD_CHUNKS"); do
    load_chunk $((k * step))
done

fact "{\"kind\":\"memory\",\"idle_rss_kb\":$IDLE_RSS,\"idle_hwm_kb\":$IDLE_HWM,\"empty_rss_kb\":$EMPTY_RSS,\"empty_hwm_kb\":$EMPTY_HWM,\"idle_handles\":$(num handles "$IDLE_H"),\"idle_threads\":$(num threads "$IDLE_H"),\"peak_hwm_kb\":${PEAK_HWM:-null},\"peak_hwm_after_load_kb\":$(vm "$SERVER_PID" VmHWM),\"end_rss_kb\":$(vm "$SERVER_PID" VmRSS)}"

fact "{\"kind\":\"env-end\",\"load_after\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"

# --- stop, check the pipes went away, report -------------------------------------
kill -0 "$SERVER_PID" 2>/dev/null || die "csi-proxy.exe died during the runs"
stop_server
/usr/bin/python3 test/bench/report.py "$MODE" "$RES" "$OUT"
