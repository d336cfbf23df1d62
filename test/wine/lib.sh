# shellcheck shell=bash
# lib.sh - what the Wine suites share (sourced, not run, from the
# repository root): a suite's private prefix (wine_suite), TAP-like result
# lines with a closing "N passed, N failed", and running Wine programs with
# their output and exit code captured. A suite either calls wine_suite or
# sets WINEPREFIX and initialises pass=0 fail=0 itself.

# wine_suite LABEL EXE...: the start of a suite. Every EXE (a path under
# build/win) must have been built; W=build/win; a private prefix
# /tmp/csi-proxy-LABEL.XXXXXX in WINEPREFIX (exported, WINEDEBUG=-all);
# pass=0 fail=0 PID=; at exit the server in PID (when set) and the prefix's
# wineserver are stopped and the prefix removed.
wine_suite() {
    local label=$1 f
    shift
    W=build/win
    for f in "$@"; do
        [ -f "$W/$f" ] || { echo "missing $W/$f: run make first"; exit 1; }
    done
    export WINEDEBUG=-all
    export WINEPREFIX
    WINEPREFIX=$(mktemp -d "/tmp/csi-proxy-$label.XXXXXX")
    pass=0 fail=0 PID=
    trap wine_suite_cleanup EXIT
}
wine_suite_cleanup() {
    [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null
    wineserver -k 2>/dev/null
    rm -rf "$WINEPREFIX"
}

ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() {
    fail=$((fail + 1))
    echo "not ok - $1"
    [ -n "${2:-}" ] && printf '%s\n' "$2" | head -20 | sed 's/^/    /'
}
check() { # check NAME CONDITION-STATUS [DETAIL]
    if [ "$2" = 0 ]; then ok "$1"; else bad "$1" "${3:-}"; fi
}
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
}

# run ARGS...: a Wine program; sets OUT (stdout+stderr, no CRs) and RC.
# The wine launcher very rarely fails silently on a loaded machine (exit 1,
# no output; our programs never exit 1 silently), or Wine's own process
# teardown trips glibc's loader ("Inconsistency detected by ld.so:
# dl-fini.c", exit 127) after the program ran, hiding its exit code: say
# so and retry once.
run() { run_cmd wine "$@"; }
# run_bounded SECS ARGS...: run, killed after SECS seconds (exit 124).
run_bounded() {
    local secs=$1
    shift
    run_cmd timeout -k 5 "$secs" wine "$@"
}
run_cmd() {
    OUT=$(set -o pipefail; "$@" 2>&1 | tr -d '\r')
    RC=$?
    if [ "$RC" = 1 ] && [ -z "$OUT" ]; then
        echo "# wine exited 1 with no output; retrying: $*"
        OUT=$(set -o pipefail; "$@" 2>&1 | tr -d '\r')
        RC=$?
    elif [ "$RC" = 127 ] && [[ "$OUT" == *"Inconsistency detected by ld.so"* ]]; then
        echo "# Wine's process teardown failed in ld.so (exit 127); retrying: $*"
        OUT=$(set -o pipefail; "$@" 2>&1 | tr -d '\r')
        RC=$?
    fi
}
cli() { run 'C:\csi\csi-proxy-cli.exe' "$@"; }
# json: the first JSON line of the last program's output.
json() { grep -m1 '^{' <<<"$OUT"; }

# expect_run NAME WANT_RC SUBSTRING CMD ARGS...: runs CMD (cli, run, ...)
# and checks its exit code and that its output holds SUBSTRING.
expect_run() {
    local name=$1 want_rc=$2 sub=$3
    shift 3
    "$@"
    if [ "$RC" = "$want_rc" ] && [[ "$OUT" == *"$sub"* ]]; then
        ok "$name"
    else
        bad "$name" "exit $RC (want $want_rc), output: $OUT"
    fi
}
# expect_cli NAME WANT_RC SUBSTRING CLI-ARGS...: expect_run with cli.
expect_cli() {
    local name=$1 want_rc=$2 sub=$3
    shift 3
    expect_run "$name" "$want_rc" "$sub" cli "$@"
}
