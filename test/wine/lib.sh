# lib.sh - what the Wine suites share (sourced, not run): TAP-like result
# lines with a closing "N passed, N failed", and running Wine programs with
# their output and exit code captured. The caller sets WINEPREFIX and
# initialises pass=0 fail=0.

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
# no output; our programs never exit 1 silently): say so and retry once.
run() {
    OUT=$(set -o pipefail; wine "$@" 2>&1 | tr -d '\r')
    RC=$?
    if [ "$RC" = 1 ] && [ -z "$OUT" ]; then
        echo "# wine exited 1 with no output; retrying: $*"
        OUT=$(set -o pipefail; wine "$@" 2>&1 | tr -d '\r')
        RC=$?
    fi
}
cli() { run 'C:\csi\csi-proxy-cli.exe' "$@"; }

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
