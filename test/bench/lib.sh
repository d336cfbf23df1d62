# shellcheck shell=bash
# lib.sh - shell helpers of the Wine benches (scripts/bench.sh,
# test/bench/startup.sh), sourced from the repository root with WINEPREFIX
# set to the bench's private prefix.

mon() { wine 'C:\csi\bench-mon.exe' "$@" | tr -d '\r'; }
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

# cpu_ns_ms PID: the process's CPU time in ms from the scheduler's ns counters
# of its live threads (exact; misses threads that already exited).
cpu_ns_ms() { cat "/proc/$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.2f", s / 1e6}'; }
