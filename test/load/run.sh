#!/usr/bin/env bash
# test/load/run.sh short|full [CLIENTS CALLS]
#   short  16 clients x 500 calls (part of `make test`)
#   full   64 clients x 10,000 calls (`make load`)
# Starts the native server under ASan + UBSan (build/asan/csi-proxy, or
# $CSI_PROXY_SERVER) on a temporary root, runs build/native/load-client
# against its Unix sockets, then stops the server with SIGTERM. Passes when
# every call got the expected answer, the server exits 0 with no
# sanitizer report (LeakSanitizer runs at exit), and every client
# directory the calls created was removed again.
set -u
cd "$(dirname "$0")/../.." || exit 1
case ${1:-short} in
short) clients=16 calls=500 ;;
full) clients=64 calls=10000 ;;
*) echo "usage: $0 short|full [CLIENTS CALLS]"; exit 2 ;;
esac
clients=${2:-$clients}
calls=${3:-$calls}
server=${CSI_PROXY_SERVER:-build/asan/csi-proxy}
client=build/native/load-client
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"

tmp=$(mktemp -d /tmp/cp-load-XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/s" "$tmp/r/C/var/lib/kubelet/pods"
"$server" -socket-dir "$tmp/s" -root "$tmp/r" -sim-fixture test/fixtures/storage.yaml \
    >"$tmp/server.log" 2>&1 &
pid=$!
for _ in $(seq 500); do
    [ "$(find "$tmp/s" -name '*.sock' | wc -l)" -eq 23 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
done
if [ "$(find "$tmp/s" -name '*.sock' | wc -l)" -ne 23 ]; then
    cat "$tmp/server.log"
    echo "load: server did not start"
    exit 1
fi

fail=0
t0=$(date +%s.%N)
"$client" -socket-dir "$tmp/s" -clients "$clients" -calls "$calls" || fail=1
rss=$(awk '/VmHWM/ {print $2, $3}' "/proc/$pid/status" 2>/dev/null)
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
t1=$(date +%s.%N)
if [ $rc -ne 0 ]; then
    echo "load: server exit status $rc after SIGTERM"
    fail=1
fi
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|UndefinedBehaviorSanitizer' "$tmp/server.log"; then
    grep -E -A30 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$tmp/server.log" | head -80
    echo "load: sanitizer report from the server"
    fail=1
fi
left=$(find "$tmp/r/C/var/lib/kubelet/pods" -mindepth 2 | wc -l)
if [ "$left" -ne 0 ] && [ $((calls % 10)) -eq 0 ]; then
    echo "load: $left entries left under pods/ (every cycle removes what it made)"
    fail=1
fi
echo "load: server peak RSS ${rss:-?} (ASan build); wall $(echo "$t1 - $t0" | bc) s incl. stop"
if [ $fail -eq 0 ]; then
    echo "load: 1 passed, 0 failed"
else
    echo "load: 0 passed, 1 failed"
fi
exit $fail
