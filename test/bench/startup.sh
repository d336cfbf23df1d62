#!/bin/bash
# startup.sh - csi-proxy.exe's start-up cost under Wine, for one or more
# builds side by side: the server's CPU time from
# CreateProcess until all 23 pipes listen, the wall time to that point, and
# (with TRACE=1) the wineserver requests the server made in that window,
# grouped by request name.
#
#   bash test/bench/startup.sh [-n ROUNDS] LABEL=EXE [LABEL=EXE ...]
#
# Each round starts every build once, in alternating order, through
# bench-mon start (CreateProcessW, then polling the pipes; as
# scripts/bench.sh), reads the server's CPU from the scheduler's ns counters
# of its threads (/proc/PID/task/*/schedstat) as soon as bench-mon returns,
# then stops it. An empty mingw process (bench-sleep.exe) is measured the
# same way, 300 ms after its start, as the floor. Medians on stdout.
# Everything runs in a private Wine prefix with its own wineserver; only
# processes started here are stopped here, by pid.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROUNDS=9
if [ "${1:-}" = -n ]; then ROUNDS=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [-n ROUNDS] LABEL=EXE ..." >&2; exit 2; }
for f in build/win/bench-mon.exe build/win/bench-sleep.exe; do
    [ -f "$f" ] || { echo "missing $f: make build/win/bench-mon.exe build/win/bench-sleep.exe" >&2; exit 1; }
done
export WINEDEBUG=${WINEDEBUG:--all}
export WINEPREFIX
WINEPREFIX=$(mktemp -d /tmp/csi-proxy-startup.XXXXXX)
C=$WINEPREFIX/drive_c
STARTED=()
cleanup() {
    local p
    for p in "${STARTED[@]}"; do kill "$p" 2>/dev/null; done
    wineserver -k 2>/dev/null
    wineserver -w 2>/dev/null
    rm -rf "$WINEPREFIX"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wineboot -i >/dev/null 2>&1
wineserver -p
mkdir -p "$C/csi" "$C/var/lib/kubelet" "$C/csiproxy-test"
cp build/win/bench-mon.exe build/win/bench-sleep.exe "$C/csi/"
LABELS=()
for a in "$@"; do
    l=${a%%=*} e=${a#*=}
    mkdir -p "$C/csi/$l"
    cp "$e" "$C/csi/$l/csi-proxy.exe" || exit 1
    LABELS+=("$l")
done

. test/bench/lib.sh
stop() {
    kill "$1" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
    STARTED=()
}
RES=$WINEPREFIX/res
: >"$RES"
# one_start LABEL: one start of that build; appends "LABEL cpu_ms pipes_ms".
one_start() {
    local out pid
    out=$(mon start -log "C:\\csi\\$1\\server.log" "C:\\csi\\$1\\csi-proxy.exe" \
        -kubelet-path 'C:\var\lib\kubelet' -working-dir 'C:\csiproxy-test' 2>/dev/null)
    local rc=$?
    pid=$(linux_pid "$1\\csi-proxy.exe") || { echo "$1 did not start: $out" >&2; exit 1; }
    local cpu
    cpu=$(cpu_ns_ms "$pid")
    STARTED=("$pid")
    [ $rc = 0 ] || { echo "$1: not all pipes came up: $out" >&2; tail "$C/csi/$1/server.log" >&2; exit 1; }
    echo "$1 $cpu $(num pipes_ms "$out")" >>"$RES"
    stop "$pid"
    mon gone -timeout 10000 >/dev/null || { echo "pipes still there" >&2; exit 1; }
}
empty_start() {
    local pid
    mon spawn 'C:\csi\bench-sleep.exe' >/dev/null
    sleep 0.3
    pid=$(linux_pid 'bench-sleep.exe') || { echo "bench-sleep did not start" >&2; exit 1; }
    STARTED=("$pid")
    echo "empty $(cpu_ns_ms "$pid") 0" >>"$RES"
    stop "$pid"
}
one_start "${LABELS[0]}" >/dev/null # warm the prefix (first start loads more)
: >"$RES"
for k in $(seq 1 "$ROUNDS"); do
    order=("${LABELS[@]}")
    if [ $((k % 2)) = 0 ]; then
        order=()
        for ((i = ${#LABELS[@]} - 1; i >= 0; i--)); do order+=("${LABELS[$i]}"); done
    fi
    empty_start
    for l in "${order[@]}"; do one_start "$l"; done
done
echo "# $ROUNDS rounds; server CPU (ms) when all 23 pipes listen, and wall ms to that point"
/usr/bin/python3 - "$RES" <<'EOF'
import collections, statistics, sys
cpu, wall = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    l, c, w = line.split()
    cpu[l].append(float(c))
    wall[l].append(float(w))
for l in cpu:
    print("%-8s cpu median %7.2f ms (min %.2f, max %.2f, n %d)   pipes_ms median %.1f"
          % (l, statistics.median(cpu[l]), min(cpu[l]), max(cpu[l]), len(cpu[l]), statistics.median(wall[l])))
EOF

[ "${TRACE:-0}" = 1 ] || exit 0
# The +server trace of one start per build: a new wineserver of ours with
# request tracing on; bench-mon mark LABEL (an open of the absent pipe
# bench-mark-LABEL) cuts the trace; test/bench/srvtrace.py's thread mapping.
for l in empty "${LABELS[@]}"; do
    tr=$WINEPREFIX/trace.$l
    wineserver -k 2>/dev/null
    wineserver -w 2>/dev/null
    wineserver -p -d1 2>"$tr"
    mon mark ready >/dev/null 2>&1
    mon mark start >/dev/null 2>&1
    if [ "$l" = empty ]; then # the floor: its first 300 ms
        out=$(mon spawn 'C:\csi\bench-sleep.exe')
        sleep 0.3
        pid=$(linux_pid 'bench-sleep.exe') || { echo "bench-sleep did not start (traced)" >&2; exit 1; }
    else
        out=$(mon start -log "C:\\csi\\$l\\server.log" "C:\\csi\\$l\\csi-proxy.exe" \
            -kubelet-path 'C:\var\lib\kubelet' -working-dir 'C:\csiproxy-test' 2>/dev/null)
        pid=$(linux_pid "$l\\csi-proxy.exe") || { echo "$l did not start (traced)" >&2; exit 1; }
    fi
    STARTED=("$pid")
    mon mark started >/dev/null 2>&1
    mon mark idle-end >/dev/null 2>&1
    stop "$pid"
    wineserver -k 2>/dev/null
    wineserver -w 2>/dev/null
    [ -n "${KEEP_TRACE:-}" ] && cp "$tr" "$KEEP_TRACE.$l"
    /usr/bin/python3 - "$tr" "$(num winpid "$out")" "$l" <<'EOF'
import collections, sys
sys.path.insert(0, "test/bench")
import winetrace
server = "%04x" % int(sys.argv[2])
cur, n = None, collections.Counter()
for tid, name, rest, reply, pid in winetrace.lines(sys.argv[1]):
    if not reply:
        if "bench-mark-started" in rest:
            cur = None
        elif "bench-mark-start" in rest:
            cur = True
    if not reply and cur and pid == server:
        n[name] += 1
print("%s: %d wineserver requests from CreateProcess to all pipes listening" % (sys.argv[3], sum(n.values())))
print("   " + ", ".join("%s %d" % kv for kv in n.most_common()))
EOF
done
