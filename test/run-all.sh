#!/usr/bin/env bash
# Runs every suite of `make test` and ends with one summary line
# ("N passed, N failed") counting suites. Exit status 0 only if all passed.
set -u
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
passed=0
failed=0
failed_names=()

suite() {
    local name=$1
    shift
    echo "=== suite: $name"
    local t0=$SECONDS
    if "$@"; then
        passed=$((passed + 1))
        echo "=== suite $name: PASS ($((SECONDS - t0)) s)"
    else
        failed=$((failed + 1))
        failed_names+=("$name")
        echo "=== suite $name: FAIL ($((SECONDS - t0)) s)"
    fi
}

unit() {
    local rc=0
    for t in build/native/test_*; do
        [ -x "$t" ] || continue
        "$t" || rc=1
    done
    return $rc
}

pytest_dir() {
    # pytest's exit code 5 (no tests collected) is a failure here too.
    $PY -m pytest -q -p no:cacheprovider "$@"
}

suite unit unit
suite api pytest_dir test/api
suite conformance pytest_dir test/conformance
if [ "${SKIP_WINE:-0}" != 1 ]; then
    suite wine bash test/wine/run.sh
fi

echo
[ ${#failed_names[@]} -gt 0 ] && echo "failed suites: ${failed_names[*]}"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
