#!/usr/bin/env bash
# Benchmarks of the real build/win/csi-proxy.exe under Wine.
#
#   scripts/bench.sh bench   `make bench`: the transport floor and PathExists over
#                            gRPC in the same run, memory, size, start-up time, and
#                            a scaled-down load check (10k -> 100k calls). Prints
#                            a table; writes build/bench.json.
#   scripts/bench.sh load    `make load-wine`: memory and handle count of the
#                            server between 100,000 and 1,000,000 calls; writes
#                            build/load-wine.json.
#
# The real grpc-go client (build/win/bench-goclient.exe) then runs
# its rows (sequential, 8 calls at once on one connection, 8 clients on 8
# connections, connect+call+close) against the server, measuring the server's
# CPU time around each run, its start-up (CreateProcess to the 23 pipes and
# the CPU spent until then) and idle memory; GO_ROUNDS (3) rounds. With
# GO_ONLY=1 keeps only the floor and the real client (no replay client, no
# load check): the quick way to compare two builds. With
# BASE=<commit> the same rounds run for that commit's csi-proxy.exe too (built
# in a scratch worktree under build/bench-base/), alternating ours and base,
# and the table shows medians and ours/base ratios. Last, a short pass per
# build with wineserver tracing (WINEDEBUG=+server) counts the requests the
# server's threads make per call. GO_SCALE (1) scales the call counts.
#
# Everything runs in a private Wine prefix (mktemp -d) with its own wineserver;
# only processes started here are stopped here, by pid. Environment knobs:
# BENCH_SECS (5) and BENCH_WARM (0.5) per timed run; LOAD_TO (calls; 100000
# for bench, 1000000 for load; the first tenth is compared with the last).
set -u
cd "$(dirname "$0")/.." || exit 1
MODE=${1:-bench}
case $MODE in bench | load) ;; *) echo "usage: $0 bench|load" >&2; exit 2 ;; esac

W=build/win
for f in csi-proxy.exe bench-floor.exe bench-grpc.exe bench-mon.exe bench-sleep.exe bench-hostops.exe \
    bench-goclient.exe; do
    [ -f "$W/$f" ] || { echo "missing $W/$f: run make bench-tools first" >&2; exit 1; }
done
SECS=${BENCH_SECS:-5}
WARM=${BENCH_WARM:-0.5}
if [ "$MODE" = bench ]; then
    LOAD_TO=${LOAD_TO:-100000} OUT=build/bench.json
else
    LOAD_TO=${LOAD_TO:-1000000} OUT=build/load-wine.json
fi
GO_ROUNDS=${GO_ROUNDS:-3}
GO_SCALE=${GO_SCALE:-1}
BASE=${BASE:-}
BASE_EXE="" BASE_SHA=""
if [ "$MODE" = bench ] && [ -n "$BASE" ]; then
    # The baseline's csi-proxy.exe, from a scratch worktree that reuses our
    # cross-built deps (kept between runs: build/bench-base/SHA).
    BASE_SHA=$(git rev-parse --verify "$BASE^{commit}") || { echo "bench: BASE=$BASE: no such commit" >&2; exit 2; }
    BWT=build/bench-base/${BASE_SHA:0:12}
    if [ ! -f "$BWT/build/win/csi-proxy.exe" ]; then
        echo "# building the baseline $BASE (${BASE_SHA:0:12}) in $BWT" >&2
        if [ ! -d "$BWT" ]; then
            git worktree add --detach "$BWT" "$BASE_SHA" >&2 || exit 1
        fi
        mkdir -p "$BWT/build"
        [ -d "$BWT/build/deps" ] || cp -a build/deps "$BWT/build/"
        touch "$BWT/build/.tools-stamp"
        find "$BWT/build/deps" -name .stamp -exec touch {} +
        make -j"$(nproc)" -C "$BWT" build/win/csi-proxy.exe >"$BWT.log" 2>&1 || { tail -20 "$BWT.log" >&2; echo "bench: the baseline did not build" >&2; exit 1; }
    fi
    BASE_EXE=$BWT/build/win/csi-proxy.exe
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
SERVER_PID="" SERVER_WINPID=""

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
grpc() { wine 'C:\csi\bench-grpc.exe' "$@" -capture 'C:\csi\capture.bin' | tr -d '\r'; }
. test/bench/lib.sh

# vm PID FIELD: VmRSS or VmHWM of a Linux process, in KiB.
vm() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

# cpu_ms PID: user+system CPU of the whole process (exited threads included),
# in ms, from /proc/PID/stat (clock ticks: steps of 1000/CLK_TCK ms).
HZ=$(getconf CLK_TCK)
cpu_ms() { awk -v hz="$HZ" '{sub(/.*\) /, ""); printf "%.0f", ($12 + $13) * 1000 / hz}' "/proc/$1/stat"; }

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
mkdir -p "$C/csi/ours" "$C/var/lib/kubelet" "$C/csiproxy-test/dir"
cp "$W"/csi-proxy.exe "$W"/bench-*.exe "$C/csi/"
cp "$W"/csi-proxy.exe "$C/csi/ours/"
BUILDS=(ours)
if [ -n "$BASE_EXE" ]; then
    mkdir -p "$C/csi/base"
    cp "$BASE_EXE" "$C/csi/base/csi-proxy.exe"
    BUILDS=(ours base)
    fact "{\"kind\":\"base\",\"commit\":\"$BASE_SHA\",\"bytes\":$(stat -c %s "$BASE_EXE")}"
fi
fact "{\"kind\":\"ours\",\"commit\":\"$(git rev-parse HEAD)\",\"dirty\":$([ -z "$(git status --porcelain --untracked-files=no)" ] && echo false || echo true)}"
# The request the bench sends is grpc-go's PathExists of C:\csiproxy-test\dir.
cp test/captures/01-filesystem-v1-PathExists.bin "$C/csi/capture.bin"
fact "{\"kind\":\"exe\",\"path\":\"$W/csi-proxy.exe\",\"bytes\":$(stat -c %s "$W/csi-proxy.exe")}"

if [ "$MODE" = bench ]; then
    # --- start-up: 5 starts; the last server stays for the runs ---------------
    for i in 1 2 3; do
        out=$(mon spawn-exit 'C:\csi\bench-sleep.exe' 0)
        fact "{\"kind\":\"spawn-exit\",${out#\{}"
    done
    NSTART=5
    [ "${GO_ONLY:-0}" = 1 ] && NSTART=1
    for i in $(seq 1 $NSTART); do
        start_server
        [ "$i" -lt $NSTART ] && stop_server
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
EMPTY_RSS=$(vm "$SLEEP_PID" VmRSS) EMPTY_HWM=$(vm "$SLEEP_PID" VmHWM) EMPTY_CPU=$(cpu_ns_ms "$SLEEP_PID")
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
fi
if [ "$MODE" = bench ] && [ "${GO_ONLY:-0}" != 1 ]; then
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
if [ "$MODE" = load ] || [ "${GO_ONLY:-0}" != 1 ]; then
    say "load: ${LOAD_ARGS[*]}, $LOAD_CHUNKS chunks up to $LOAD_TO calls"
    step=$((LOAD_TO / LOAD_CHUNKS))
    for k in $(seq 1 "$LOAD_CHUNKS"); do
        load_chunk $((k * step))
    done
fi

fact "{\"kind\":\"memory\",\"idle_rss_kb\":$IDLE_RSS,\"idle_hwm_kb\":$IDLE_HWM,\"empty_rss_kb\":$EMPTY_RSS,\"empty_hwm_kb\":$EMPTY_HWM,\"empty_cpu_ms\":$EMPTY_CPU,\"idle_handles\":$(num handles "$IDLE_H"),\"idle_threads\":$(num threads "$IDLE_H"),\"peak_hwm_kb\":${PEAK_HWM:-null},\"peak_hwm_after_load_kb\":$(vm "$SERVER_PID" VmHWM),\"end_rss_kb\":$(vm "$SERVER_PID" VmRSS)}"

fact "{\"kind\":\"env-end\",\"load_after\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"

# --- stop, check the pipes went away, report -------------------------------------
kill -0 "$SERVER_PID" 2>/dev/null || die "csi-proxy.exe died during the runs"
stop_server

if [ "$MODE" = bench ]; then
    # --- the real grpc-go client --------------------------------------------------
    goc() { wine 'C:\csi\bench-goclient.exe' "$@" | tr -d '\r'; }
    gscale() { awk -v n="$1" -v s="$GO_SCALE" 'BEGIN {v = int(n * s); print (v < 1 ? 1 : v)}'; }
    # the rows: label, then the client's arguments (warm-up calls first)
    GO_ROWS=(
        "go-seq|seq -warm $(gscale 100) -calls $(gscale 1000)"
        "go-conc8|conc -n 8 -warm $(gscale 400) -calls $(gscale 4000)"
        "go-clients8|clients -n 8 -warm $(gscale 400) -calls $(gscale 4000)"
        "go-churn|churn -warm $(gscale 10) -calls $(gscale 200)"
    )
    G_PID="" G_WINPID=""
    # go_start BUILD ROUND: starts C:\csi\BUILD\csi-proxy.exe; records the
    # time to the 23 pipes and the server's CPU time by then.
    go_start() {
        local out rc cpu cpuns
        out=$(mon start -log "C:\\csi\\$1\\server.log" "C:\\csi\\$1\\csi-proxy.exe" \
            -kubelet-path 'C:\var\lib\kubelet' -working-dir 'C:\csiproxy-test')
        rc=$?
        G_WINPID=$(num winpid "$out")
        G_PID=$(linux_pid "$1\\csi-proxy.exe") || die "$1 csi-proxy.exe did not start: $out"
        cpuns=$(cpu_ns_ms "$G_PID") cpu=$(cpu_ms "$G_PID")
        STARTED+=("$G_PID")
        [ $rc = 0 ] || die "$1: not all pipes came up: $out"
        fact "{\"kind\":\"go-start\",\"build\":\"$1\",\"round\":$2,\"cpu_ms\":$cpuns,\"cpu_ticks_ms\":$cpu,${out#\{}"
        say "$1 started: $out, server CPU by then ${cpuns} ms (${cpu} ms in ticks)"
    }
    go_stop() {
        kill "$G_PID" 2>/dev/null
        wait_exit "$G_PID" || die "csi-proxy.exe (pid $G_PID) did not exit"
        forget "$G_PID"
        mon gone -timeout 10000 >/dev/null || die "pipes still there after the server exited"
    }
    # go_round BUILD ROUND: two starts (the second server stays), idle memory,
    # then every row with the server's CPU time around it.
    go_round() {
        local b=$1 k=$2 row label args out c0 c1 n0 n1
        go_start "$b" "$k"
        go_stop
        go_start "$b" "$k"
        sleep 1
        fact "{\"kind\":\"go-idle\",\"build\":\"$b\",\"round\":$k,\"rss_kb\":$(vm "$G_PID" VmRSS),\"hwm_kb\":$(vm "$G_PID" VmHWM),\"cpu_ms\":$(cpu_ns_ms "$G_PID")}"
        for row in "${GO_ROWS[@]}"; do
            label=${row%%|*} args=${row#*|}
            # CPU both ways: clock ticks of the whole process (steps of
            # 10 ms), and the scheduler's ns counters of its threads, exact
            # but blind to a thread that exits: used only when the same
            # threads are there before and after (tasks_same).
            c0=$(cpu_ms "$G_PID") n0=$(cpu_ns_ms "$G_PID") tasks0=$(ls "/proc/$G_PID/task" | tr '\n' ,)
            # shellcheck disable=SC2086 # args split on purpose
            out=$(goc $args -label "$label") || die "$b $label failed: $out"
            c1=$(cpu_ms "$G_PID") n1=$(cpu_ns_ms "$G_PID") tasks1=$(ls "/proc/$G_PID/task" | tr '\n' ,)
            same=false
            [ "$tasks0" = "$tasks1" ] && same=true
            fact "{\"build\":\"$b\",\"round\":$k,\"server_cpu_ms\":$((c1 - c0)),\"server_cpu_ns_ms\":$(awk -v a="$n0" -v b="$n1" 'BEGIN {printf "%.2f", b - a}'),\"tasks_same\":$same,${out#\{}"
            say "$b round $k: $out; server CPU $((c1 - c0)) ms"
        done
        fact "{\"kind\":\"go-after\",\"build\":\"$b\",\"round\":$k,\"rss_kb\":$(vm "$G_PID" VmRSS),\"hwm_kb\":$(vm "$G_PID" VmHWM)}"
        go_stop
    }
    say "real grpc-go client: ${GO_ROUNDS} rounds of ${BUILDS[*]}"
    for k in $(seq 1 "$GO_ROUNDS"); do
        # alternate which build goes first, so neither always runs on a
        # warmer (or busier) machine
        if [ $((k % 2)) = 0 ] && [ ${#BUILDS[@]} = 2 ]; then order=(base ours); else order=("${BUILDS[@]}"); fi
        for b in "${order[@]}"; do go_round "$b" "$k"; done
    done

    # --- wineserver requests per call (the +server trace) -------------------------
    # A wineserver of our own writes the trace (wineserver -d1: what
    # WINEDEBUG=+server shows; every process is traced, the server's threads
    # are picked out by test/bench/srvtrace.py). bench-mon mark
    # LABEL cuts the trace into windows; the idle window gives the server's
    # requests per second at rest, taken off the call windows.
    tmark() { mon mark "$1"; echo "{\"kind\":\"trace-mark\",\"build\":\"$2\",\"label\":\"$1\",\"t\":$(date +%s.%N)}" >>"$WINEPREFIX/marks.$2"; }
    trace_pass() {
        local b=$1 out row label args tr=$WINEPREFIX/trace.$1
        # A new wineserver of ours with request tracing on (-d1: every
        # request of every process, to its stderr); a mark that shows up in
        # the trace proves it is the one that answers.
        local try
        for try in 1 2 3 4 5; do
            wineserver -k 2>/dev/null
            wineserver -w 2>/dev/null
            wineserver -p -d1 2>"$tr"
            mon mark "ready$try"
            grep -q "bench-mark-ready$try" "$tr" && break
            [ "$try" = 5 ] && die "no wineserver trace in $tr"
            sleep 1
        done
        : >"$WINEPREFIX/marks.$b"
        tmark start "$b"
        out=$(mon start -log "C:\\csi\\$b\\server.log" "C:\\csi\\$b\\csi-proxy.exe" \
            -kubelet-path 'C:\var\lib\kubelet' -working-dir 'C:\csiproxy-test' 2>/dev/null) || die "$b (traced) did not start: $out"
        G_WINPID=$(num winpid "$out")
        G_PID=$(linux_pid "$b\\csi-proxy.exe") || die "$b csi-proxy.exe did not start"
        STARTED+=("$G_PID")
        tmark started "$b"
        sleep 2
        tmark idle-end "$b"
        # go-conc8 is traced for its own figure, outside the mix (srvtrace.py)
        for row in "go-seq|seq -warm 10 -calls 100" "go-clients8|clients -n 8 -warm 40 -calls 200" \
            "go-churn|churn -warm 2 -calls 20" "go-conc8|conc -n 8 -warm 40 -calls 200"; do
            label=${row%%|*} args=${row#*|}
            tmark "$label" "$b"
            # shellcheck disable=SC2086
            out=$(goc $args -label "$label") || die "$b $label (traced) failed: $out"
            tmark "$label-end" "$b"
            echo "{\"trace_run\":true,\"build\":\"$b\",${out#\{}" >>"$WINEPREFIX/marks.$b"
        done
        go_stop
        wineserver -k 2>/dev/null
        wineserver -w 2>/dev/null
        /usr/bin/python3 test/bench/srvtrace.py "$tr" "$G_WINPID" "$b" <"$WINEPREFIX/marks.$b" >>"$RES" ||
            die "cannot read the trace of $b"
        say "$b: $(grep "\"trace-result\",\"build\":\"$b\"" "$RES" | cut -c1-300)"
    }
    for b in "${BUILDS[@]}"; do trace_pass "$b"; done
    fact "{\"kind\":\"env-end\",\"load_after\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
fi
/usr/bin/python3 test/bench/report.py "$MODE" "$RES" "$OUT"
