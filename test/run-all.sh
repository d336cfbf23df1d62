#!/usr/bin/env bash
# Runs every suite of `make test` and ends with one summary line
# ("N passed, N failed") counting suites. Exit status 0 only if all passed.
#
#   test/run-all.sh                 every suite (SKIP_WINE=1: no Wine suites)
#   test/run-all.sh NAME|GLOB ...   only the suites named, e.g.
#                                   `test/run-all.sh api 'wine*'`; a NAME
#                                   that matches no suite is an error
#   test/run-all.sh --list          the suite names, one a line
set -u
cd "$(dirname "$0")/.." || exit 1
PY=/usr/bin/python3
passed=0
failed=0
failed_names=()
LIST=0
SELECT=()
declare -A MATCHED=()
for a in "$@"; do
    case $a in
    --list) LIST=1 ;;
    -*) echo "usage: $0 [--list] [SUITE|GLOB ...]" >&2; exit 2 ;;
    *) SELECT+=("$a") ;;
    esac
done

# selected NAME: true when no names were given or one of them matches.
selected() {
    [ ${#SELECT[@]} = 0 ] && return 0
    local pat hit=1
    for pat in "${SELECT[@]}"; do
        # shellcheck disable=SC2053 # a glob on purpose
        if [[ $1 == $pat ]]; then MATCHED[$pat]=1; hit=0; fi
    done
    return $hit
}

suite() {
    local name=$1
    shift
    if [ $LIST = 1 ]; then
        echo "$name"
        return
    fi
    selected "$name" || return 0
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

# the native tree under ASan + UBSan (build/asan, mk/sanitize.mk),
# libFuzzer seeds (build/fuzz, mk/fuzz.mk), faults and load against it.
sanitized() (
    export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    "$@"
)
unit_asan() {
    local rc=0
    for t in build/asan/test_*; do
        [ -x "$t" ] || continue
        sanitized "$t" || rc=1
    done
    return $rc
}
suite unit-asan unit_asan
suite conformance-asan sanitized env CSI_PROXY_SERVER=build/asan/csi-proxy \
    $PY -m pytest -q -p no:cacheprovider test/conformance
suite fuzz-smoke bash test/fuzz/run.sh smoke
suite faults sanitized pytest_dir test/faults
suite load sanitized bash test/load/run.sh short
# Static checks: the product executables' imports (no process creation,
# only the DLLs the README names), formatting and cppcheck (make lint).
suite exe-imports bash test/exe/check_imports.sh
suite lint bash scripts/lint.sh
# the release archive (reproducible), the Packer template, the
# HostProcess manifests. dist runs two programs under Wine; with SKIP_WINE=1
# it skips just those checks and says so (the rest needs no Wine).
suite dist bash test/dist/run.sh
suite packer bash test/packer/run.sh
suite deploy $PY test/deploy/check_manifests.py
if [ "${SKIP_WINE:-0}" != 1 ]; then
    suite wine bash test/wine/run.sh
    suite wine-storage bash test/wine/storage.sh
    suite wine-simflow bash test/wine/simflow.sh
    # make demo (and its native twin) run and their transcripts checked
    suite wine-demo bash test/wine/demo.sh
    suite wine-service bash test/wine/service.sh
    suite wine-security bash test/wine/service_security.sh
    suite wine-pipewatch bash test/wine/pipewatch.sh
    suite wine-console-late bash test/wine/console_late.sh
    suite wine-cli-args bash test/wine/cli_args.sh
    suite wine-drivers bash test/wine/drivers.sh
    suite wine-iscsi bash test/wine/iscsi.sh
    suite wine-metrics bash test/wine/metrics.sh
    suite wine-upgrade bash test/wine/upgrade.sh
    suite wine-stall bash test/wine/stall.sh
    # one transport loop's wait fails (test hook): the other pipes serve on
    suite wine-loopfail bash test/wine/loopfail.sh
    # the Win32 storage host on the device model (csi-proxy-model.exe).
    suite wine-model bash test/wine/model.sh
    # the real grpc-go client of make bench: builds and makes a few calls
    suite bench-smoke bash test/bench/smoke.sh
    # the pipe transport at scale with the real grpc-go client: 2,000 idle
    # connections, 1,000 refused connects (figures and ratios printed)
    suite wine-transport bash test/wine/transport.sh
fi

[ $LIST = 1 ] && exit 0
for pat in "${SELECT[@]}"; do
    if [ -z "${MATCHED[$pat]:-}" ]; then
        echo "no suite matches \"$pat\" (test/run-all.sh --list; SKIP_WINE=${SKIP_WINE:-0})"
        failed=$((failed + 1))
        failed_names+=("$pat?")
    fi
done
echo
[ ${#failed_names[@]} -gt 0 ] && echo "failed suites: ${failed_names[*]}"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
