#!/usr/bin/env bash
# test/fuzz/run.sh smoke|fuzz [TARGET...]   (default: every target)
#   smoke  run build/fuzz/fuzz_TARGET once over every committed seed in
#          test/fuzz/corpus/TARGET (part of `make test`); then, for the
#          targets smoke_seconds names (the decoder differential), a short
#          mutation run with a fixed seed (SMOKE_SECONDS overrides it)
#   fuzz   fuzz each target for FUZZ_SECONDS (default 60) from the committed
#          seeds plus what earlier runs found (build/fuzz/corpus/TARGET);
#          crashes go to build/fuzz/artifacts/; prints executions per target
# Exit status 0 only when no target crashed, leaked or timed out.
set -u
cd "$(dirname "$0")/../.." || exit 1
mode=$1
shift
if [ $# -eq 0 ]; then
    # every target; the config parser's only once service/config.c exists
    for f in test/fuzz/fuzz_*.c; do
        t=${f#test/fuzz/fuzz_}
        t=${t%.c}
        [ "$t" = config ] && [ ! -f service/config.c ] && continue
        set -- "$@" "$t"
    done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

max_len() {
    case $1 in
    conn) echo 16384 ;;
    messages | decoders) echo 2048 ;;
    config) echo 4096 ;;
    *) echo 600 ;;
    esac
}

# seconds of mutation after the seeds in smoke mode
smoke_seconds() {
    case $1 in
    decoders) echo "${SMOKE_SECONDS:-20}" ;;
    *) echo 0 ;;
    esac
}

rc=0
ok=0
bad=0
for t in "$@"; do
    bin=build/fuzz/fuzz_$t
    seeds=test/fuzz/corpus/$t
    if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
        echo "fuzz $t: missing $bin or $seeds"
        rc=1
        bad=$((bad + 1))
        continue
    fi
    if [ "$mode" = smoke ]; then
        n=$(find "$seeds" -type f | wc -l)
        t0=$SECONDS
        log=$(mktemp)
        secs=$(smoke_seconds "$t")
        # new inputs go to a scratch corpus, never into the committed seeds
        scratch=$(mktemp -d)
        if find "$seeds" -type f -print0 | xargs -0 "$bin" -timeout=20 >"$log" 2>&1 &&
            { [ "$secs" -eq 0 ] || { mkdir -p build/fuzz/artifacts &&
                "$bin" -seed=1 -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 \
                    -max_len="$(max_len "$t")" -artifact_prefix="build/fuzz/artifacts/$t-" \
                    "$scratch" "$seeds" </dev/null >>"$log" 2>&1; }; }; then
            more=""
            [ "$secs" -eq 0 ] || more=" and $secs s of mutation"
            echo "fuzz $t: smoke over $n seeds$more OK ($((SECONDS - t0)) s)"
            ok=$((ok + 1))
        else
            tail -40 "$log"
            echo "fuzz $t: smoke FAILED"
            rc=1
            bad=$((bad + 1))
        fi
        rm -rf "$log" "$scratch"
    else
        mkdir -p "build/fuzz/corpus/$t" build/fuzz/artifacts
        log=build/fuzz/$t.log
        dict=()
        [ -f "test/fuzz/$t.dict" ] && dict=(-dict="test/fuzz/$t.dict")
        "$bin" "${dict[@]}" -max_total_time="${FUZZ_SECONDS:-60}" -timeout=20 -rss_limit_mb=4096 \
            -max_len="$(max_len "$t")" -print_final_stats=1 \
            -artifact_prefix="build/fuzz/artifacts/$t-" "build/fuzz/corpus/$t" "$seeds" \
            >"$log" 2>&1
        r=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -E 's/.*cov: ([0-9]+).*/\1/')
        if [ $r -eq 0 ]; then
            echo "fuzz $t: ${execs:-?} executions, cov ${cov:-?}, no finding (log $log)"
            ok=$((ok + 1))
        else
            grep -E 'ERROR|SUMMARY|runtime error|fuzz_' "$log" | head -20
            echo "fuzz $t: FINDING after ${execs:-?} executions (exit $r, log $log, artifacts build/fuzz/artifacts/$t-*)"
            rc=1
            bad=$((bad + 1))
        fi
    fi
done
echo "fuzz $mode: $ok passed, $bad failed"
exit $rc
