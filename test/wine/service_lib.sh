# shellcheck shell=bash
# service_lib.sh - shared by test/wine/service.sh and service_security.sh:
# a private Wine prefix with the executables in C:\csi, wineserver kept
# alive (services die with it otherwise), "ok -" / "not ok -" lines and the
# closing "N passed, N failed". Sourced, not run.

W=build/win
for f in csi-proxy.exe csi-proxy-cli.exe pipecheck.exe svctest.exe; do
    [ -f "$W/$f" ] || { echo "missing $W/$f: run make first"; exit 1; }
done

export WINEDEBUG=-all
export WINEPREFIX
WINEPREFIX=$(mktemp -d /tmp/csi-proxy-svc.XXXXXX)
C=$WINEPREFIX/drive_c
pass=0
fail=0
BG=() # background pids to kill at exit

cleanup() {
    for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done
    wineserver -k 2>/dev/null
    rm -rf "$WINEPREFIX"
}
trap cleanup EXIT

. test/wine/lib.sh
proxy() { run 'C:\csi\csi-proxy.exe' "$@"; }
# proxy_bounded ARGS...: the same, ended after 20 s (a csi-proxy.exe that
# should have refused to start would otherwise serve forever).
proxy_bounded() { run_bounded 20 'C:\csi\csi-proxy.exe' "$@"; }
svctest() { run 'C:\csi\svctest.exe' "$@"; }

# expect NAME WANT_RC SUBSTRING CMD ARGS... (CMD: cli, proxy, svctest, run)
expect() { expect_run "$@"; }

# state SERVICE: prints RUNNING, STOPPED, ... or NONE.
state() {
    local q
    q=$(wine sc query "$1" 2>&1 | tr -d '\r')
    sed -n 's/.*STATE *: *[0-9]* *\([A-Z_]*\).*/\1/p' <<<"$q" | head -1 | grep . || echo NONE
}
# wait_state SERVICE STATE [TENTHS]: polls until the state is reached.
wait_state() {
    for _ in $(seq 1 "${3:-100}"); do
        [ "$(state "$1")" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
# wait_pipes [NAME...]: until the pipes answer (pipecheck), up to 10 s.
wait_pipes() {
    for _ in $(seq 1 100); do
        wine 'C:\csi\pipecheck.exe' "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
# wait_gone [NAME...]: until none of the pipes exists, up to 15 s.
wait_gone() {
    for _ in $(seq 1 150); do
        wine 'C:\csi\pipecheck.exe' -absent "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

echo "# prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
if [ "${NEED_SCM:-0}" = 1 ]; then
    # Seen here: a wineserver made persistent right after wineboot can end
    # up with two services.exe answering \\.\pipe\svcctl in turn, each with
    # its own service database (every other SCM call then misses the
    # service). So: end wineboot's server, then start one persistent
    # server and its services.exe, and check there is one.
    wineserver -k
    wineserver -p
    wine cmd /c exit >/dev/null 2>&1
    n_svc=0
    for p in $(pgrep -f 'services\.exe'); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "WINEPREFIX=$WINEPREFIX" && n_svc=$((n_svc + 1))
    done
    [ "$n_svc" = 1 ] || echo "# warning: $n_svc services.exe in this prefix (want 1): SCM checks may flap"
else
    wineserver -p
fi
mkdir -p "$C/csi" "$C/var/lib/kubelet/pods" "$C/csi-work"
cp "$W/csi-proxy.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$W/svctest.exe" "$C/csi/"
# shellcheck disable=SC2034 # used by the suites that source this file
K='C:\\var\\lib\\kubelet'
