#!/usr/bin/env bash
# Wine suite: csi-proxy.exe under Wine's Service Control Manager and its
# configuration file. `csi-proxy.exe install` / `uninstall` (idempotent,
# refused for a restricted admin), upstream's sc.exe lines, start, query,
# stop with calls in flight (drained, or UNAVAILABLE after a short drain:
# none lost), a second instance refused while the first serves, the default
# config file, and config errors reported with file:line in both modes.
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
NEED_SCM=1
. test/wine/service_lib.sh

# --- install / uninstall refused without elevation ----------------------------
expect "install is refused for a restricted admin (Administrators deny-only)" 1 \
    "needs an elevated administrator" svctest restricted 'C:\csi\csi-proxy.exe' install
svctest qc csiproxy
check "... and created nothing" "$([ "$RC" = 3 ] && echo 0 || echo 1)" "$OUT"
expect "install refuses an unknown flag (exit 2)" 2 "flag provided but not defined: -nope" \
    proxy install -nope
expect "install refuses a relative -log_file (the service starts in system32)" 2 "need absolute paths" \
    proxy install -log_file=csi-proxy.log -logtostderr=false
printf 'groups:\n  filesystem: {}\n  fylesystem: {}\n' >"$C/csi/typo.yaml"
expect "install refuses a bad -config, naming file:line" 1 'C:\csi\typo.yaml:3: groups: unknown key "fylesystem"' \
    proxy install -config 'C:\csi\typo.yaml'
# The roots the service would refuse at every start are refused at install.
expect "install refuses -kubelet-path C:\\Windows\\csi, which the service would refuse at start" 1 \
    'install: -kubelet-path C:\Windows\csi: refused as a root: within' proxy install -kubelet-path 'C:\Windows\csi'
expect "... and a root named by an 8.3 short name of a missing directory under Program Files" 1 \
    'csi-k): refused as a root: within' proxy install -working-dir 'C:\PROG~FBU\csi-k'
printf "kubeletPath: 'C:\\\\Windows\\\\csi'\n" >"$C/csi/winroot.yaml"
expect "... and a root from the -config file" 1 'refused as a root: within' \
    proxy install -config 'C:\csi\winroot.yaml'
svctest qc csiproxy
check "... and created no service" "$([ "$RC" = 3 ] && echo 0 || echo 1)" "$OUT"
# The folder of the default configuration file: made at install, protected.
# (Under Wine its DACL becomes Unix mode bits: no access for "other".)
[ -d "$C/ProgramData/csi-proxy" ] && [[ $(stat -c %a "$C/ProgramData/csi-proxy") == *0 ]]
check "install made C:\\ProgramData\\csi-proxy for SYSTEM and Administrators only" $? \
    "$(ls -ld "$C/ProgramData/csi-proxy" 2>&1)"

# --- csi-proxy.exe install -------------------------------------------------------
LOGW='C:\csi\svc.log'
expect "install creates the service" 0 "service csiproxy installed" \
    proxy install -working-dir 'C:\csi-work' -log_file="$LOGW" -logtostderr=false -v 2
svctest qc csiproxy
want_bin='"C:\csi\csi-proxy.exe" -windows-service -working-dir C:\csi-work -log_file=C:\csi\svc.log -logtostderr=false -v 2'
if [[ "$OUT" == *"start: 2"* && "$OUT" == *"binpath: $want_bin"* && "$OUT" == *"display: CSI Proxy"* &&
    "$OUT" == *"description: Kubernetes CSI proxy"* ]]; then
    ok "service config: automatic start, binPath with -windows-service and the flags, description"
else
    bad "service config read back" "$OUT"
fi
# The failure actions as the SCM reports them. A read-back that differs
# fails. Wine's SCM neither stores nor returns them (QueryServiceConfig2W
# SERVICE_CONFIG_FAILURE_ACTIONS: ERROR_INVALID_LEVEL, 124): only that
# exact refusal is a skip, said as such; test/windows/security.ps1 checks
# them on Windows (sc.exe qfailure).
check_failure_actions() { # the output of "svctest qc"
    local line
    line=$(grep '^actions:' <<<"$1")
    if [ "$line" = "actions: restart/10000" ]; then
        ok "failure actions read back: restart/10000"
    elif [ "$line" = "actions: (query failed: error 124)" ]; then
        echo "ok - failure actions read back # SKIP Wine's SCM does not implement them (error 124)"
    else
        bad "failure actions read back: want restart/10000" "${line:-no actions line}"
    fi
}
check_failure_actions "$OUT"
reg=$(wine reg query 'HKLM\SYSTEM\CurrentControlSet\Services\EventLog\Application\csi-proxy' 2>&1 | tr -d '\r')
if [[ "$reg" == *'EventMessageFile    REG_EXPAND_SZ    C:\csi\csi-proxy.exe'* && "$reg" == *"TypesSupported    REG_DWORD    0x7"* ]]; then
    ok "event log source registered (message file = csi-proxy.exe)"
else
    bad "event log source registered" "$reg"
fi
expect "the message file's table renders event 1 as the record's text" 0 'audit: call /v1.Smb/X caller=S-1-5-18' \
    svctest msg 'C:\csi\csi-proxy.exe' 'audit: call /v1.Smb/X caller=S-1-5-18'
# A folder that is ours (owned by us) but open to everyone gets the DACL
# again. (Wine turns that SetSecurityInfo into a chmod that leaves "other"
# r-x: only the write bit is checked here; test/windows/config.ps1 reads the
# DACL back on Windows.)
chmod 777 "$C/ProgramData/csi-proxy"
expect "install again is idempotent" 0 "already installed: configuration updated" \
    proxy install -working-dir 'C:\csi-work' -log_file="$LOGW" -logtostderr=false -v 2
[[ "$OUT" == *"its DACL is now SYSTEM and Administrators only"* ]] &&
    (( (8#$(stat -c %a "$C/ProgramData/csi-proxy") & 2) == 0 ))
check "... and makes a configuration folder open to everyone (ours: owned by us) protected again" $? \
    "$(ls -ld "$C/ProgramData/csi-proxy"; echo "$OUT")"

# --- start, query, call, stop with calls in flight -------------------------------
run sc start csiproxy
if wait_state csiproxy RUNNING && wait_pipes; then
    ok "sc start: RUNNING and all 23 pipes listening"
else
    bad "sc start: RUNNING" "state $(state csiproxy); $(tail -5 "$C/csi/svc.log" 2>/dev/null)"
fi
expect "a call to the service" 0 'status: OK' cli filesystem v1 Mkdir "{\"path\":\"C:\\\\csi-work\\\\svc\"}"
check "... did its work on the host" "$([ -d "$C/csi-work/svc" ] && echo 0 || echo 1)"
grep -q 'running as a Windows service' "$C/csi/svc.log" 2>/dev/null
check "the service logs to -log_file in klog format" $? "$(head -3 "$C/csi/svc.log" 2>/dev/null)"

expect "a second instance is refused while the service serves" 1 "already exists: is another csi-proxy running?" \
    proxy_bounded
expect "... and the service keeps serving" 0 '"exists":true' cli filesystem v1 PathExists "{\"path\":\"C:\\\\csi-work\\\\svc\"}"

# Big trees, so that Rmdir calls are still running when the stop comes.
# Each tree holds TREE_FILES files: enough that removing it outlasts the
# stop's arrival (sc.exe's own start-up included) on a fast machine too; at
# 3000 the calls had once finished before the stop came.
TREE_FILES=6000
mk_trees() {
    local i half=$((TREE_FILES / 2))
    for i in $(seq 1 "$1"); do
        mkdir -p "$C/var/lib/kubelet/pods/t$i/a" "$C/var/lib/kubelet/pods/t$i/b"
        (cd "$C/var/lib/kubelet/pods/t$i" && for d in a b; do seq -f "$d/f%.0f" 1 "$half"; done | xargs touch)
    done
}
# start_rmdirs N: N clients, each removing its tree; their pids in RM.
start_rmdirs() {
    local i
    RM=()
    for i in $(seq 1 "$1"); do
        wine 'C:\csi\csi-proxy-cli.exe' --timeout 60s filesystem v1 Rmdir \
            "{\"path\":\"$K\\\\pods\\\\t$i\",\"force\":true}" >"$WINEPREFIX/rm$i.out" 2>&1 &
        RM+=($!)
    done
}
# every client printed exactly one status: counts OK and UNAVAILABLE.
tally() {
    local i n_ok=0 n_unav=0 other=""
    for i in $(seq 1 "$1"); do
        local s
        s=$(tr -d '\r' <"$WINEPREFIX/rm$i.out" | grep -c '^status:')
        if [ "$s" = 1 ] && grep -q '^status: OK' "$WINEPREFIX/rm$i.out"; then
            n_ok=$((n_ok + 1))
        elif [ "$s" = 1 ] && grep -q '^status: UNAVAILABLE' "$WINEPREFIX/rm$i.out"; then
            n_unav=$((n_unav + 1))
        else
            other="$other [client $i: $(tr -d '\r' <"$WINEPREFIX/rm$i.out" | tr '\n' ' ')]"
        fi
    done
    TALLY_OK=$n_ok TALLY_UNAV=$n_unav TALLY_OTHER=$other
}

# arrived LOG: how many callers were let in so far (logged at -v 2 when
# their request's first bytes arrive). wait_arrived LOG WANT: until WANT.
arrived() { grep -c 'allowed on csi-proxy-filesystem-v1' "$1" 2>/dev/null; }
wait_arrived() {
    local i
    for i in $(seq 1 150); do
        [ "$(arrived "$1")" -ge "$2" ] && break
        sleep 0.1
    done
}
# wait_deleting N: until the N calls are known to be running: their trees
# start to shrink on the host (at most 7.5 s).
wait_deleting() {
    local i t
    for i in $(seq 1 150); do
        local all=1
        for t in $(seq 1 "$1"); do
            [ "$(find "$C/var/lib/kubelet/pods/t$t" -type f 2>/dev/null | wc -l)" -lt "$TREE_FILES" ] || all=0
        done
        [ $all = 1 ] && return 0
        sleep 0.05
    done
}

N=4
mk_trees $N
base=$(arrived "$C/csi/svc.log")
start_rmdirs $N
wait_arrived "$C/csi/svc.log" $((base + N))
wait_deleting $N
t0=$(date +%s%N)
run sc stop csiproxy
wait_state csiproxy STOPPED 300
stopped=$?
t1=$(date +%s%N)
for p in "${RM[@]}"; do wait "$p"; done
tally $N
if [ $stopped = 0 ] && [ "$TALLY_OK" = $N ]; then
    ok "sc stop with $N calls in flight: all $N drained OK, STOPPED after $(( (t1 - t0) / 1000000 )) ms"
else
    bad "sc stop with calls in flight drains them" "stopped=$stopped ok=$TALLY_OK unavailable=$TALLY_UNAV$TALLY_OTHER"
fi
# the stop came while they ran: the stop line precedes their audit records
stop_line=$(grep -n 'service control 1: stopping' "$C/csi/svc.log" | head -1 | cut -d: -f1)
last_rm=$(grep -n 'audit: call /v1.Filesystem/Rmdir' "$C/csi/svc.log" | tail -1 | cut -d: -f1)
if [ -n "$stop_line" ] && [ -n "$last_rm" ] && [ "$last_rm" -gt "$stop_line" ]; then
    ok "... the calls were in flight when the stop came (log order)"
else
    bad "... the calls were in flight when the stop came" "stop at line ${stop_line:-?}, last Rmdir audit at ${last_rm:-?}"
fi
left=$(ls -d "$C"/var/lib/kubelet/pods/t* 2>/dev/null | wc -l)
check "... and finished their work (no tree left)" "$([ "$left" = 0 ] && echo 0 || echo 1)" "$left trees left"
grep -q 'exiting with code 0' "$C/csi/svc.log"
check "... the process exited with code 0" $? "$(tail -3 "$C/csi/svc.log")"
wait_gone
check "... and its pipes are gone" $?
expect "a call after the stop is UNAVAILABLE (no pipe)" 14 'cannot connect' cli filesystem v1 PathExists '{"path":"C:\\csi-work"}'

# --- a stop whose last call is answered while the client keeps its connection -------
# The client (pipecheck -silent-rmdir) writes not one byte after its call
# (no SETTINGS ACK, no WINDOW_UPDATE), so nothing it sends wakes the
# transport; the service must still close at once when the worker answers
# the last call, waiting neither for the drain deadline (10 s) nor for the
# client to hang up (30 s). (The worker closes the drained connection, whose
# cancelled read wakes the loop; post_job's own wake is a second way.)
run sc start csiproxy
wait_state csiproxy RUNNING && wait_pipes
mk_trees 1
wine 'C:\csi\pipecheck.exe' -silent-rmdir 'C:\var\lib\kubelet\pods\t1' 30 csi-proxy-filesystem-v1 \
    >"$WINEPREFIX/hold.out" 2>&1 &
HOLD=$!
wait_deleting 1
t0=$(date +%s%N)
run sc stop csiproxy
wait_state csiproxy STOPPED 300
stopped=$?
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
if [ $stopped = 0 ] && [ $ms -lt 7000 ] && grep -q '^answered: Rmdir' "$WINEPREFIX/hold.out"; then
    ok "sc stop, last call answered while its client stays silent on its connection: STOPPED after $ms ms"
else
    bad "sc stop does not wait for a silent client that keeps its connection" "stopped=$stopped after $ms ms; $(tr -d '\r' <"$WINEPREFIX/hold.out")"
fi
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
wait_gone

# --- uninstall ----------------------------------------------------------------------
run sc start csiproxy
wait_state csiproxy RUNNING
expect "uninstall is refused for a restricted admin" 1 "needs an elevated administrator" \
    svctest restricted 'C:\csi\csi-proxy.exe' uninstall
check "... and the service still runs" "$([ "$(state csiproxy)" = RUNNING ] && echo 0 || echo 1)"
expect "uninstall stops and removes the running service" 0 "service csiproxy removed" proxy uninstall
svctest qc csiproxy
check "... it is gone from the SCM" "$([ "$RC" = 3 ] && echo 0 || echo 1)" "$OUT"
wine reg query 'HKLM\SYSTEM\CurrentControlSet\Services\EventLog\Application\csi-proxy' >/dev/null 2>&1
check "... and so is the event log source" "$([ $? != 0 ] && echo 0 || echo 1)"
wait_gone
check "... and so are its pipes" $?
expect "uninstall again is idempotent" 0 "is not installed" proxy uninstall

# --- upstream's install lines, unchanged ---------------------------------------------
run sc create csiproxy start= auto binPath= "C:\\csi\\csi-proxy.exe -windows-service -log_file=C:\\csi\\up.log -logtostderr=false"
check "sc.exe create csiproxy start= auto binPath= \"...csi-proxy.exe -windows-service -log_file=... -logtostderr=false\"" "$RC" "$OUT"
run sc failure csiproxy reset= 0 actions= restart/10000
check "sc.exe failure csiproxy reset= 0 actions= restart/10000" "$RC" "$OUT"
run sc start csiproxy
if wait_state csiproxy RUNNING && wait_pipes; then
    ok "sc.exe start csiproxy: RUNNING, 23 pipes"
else
    bad "sc.exe start csiproxy" "state $(state csiproxy); $(tail -5 "$C/csi/up.log" 2>/dev/null)"
fi
expect "the upstream-installed service answers" 0 '"exists":true' cli filesystem v1 PathExists "{\"path\":\"$K\"}"
grep -qE '^I[0-9]{4} [0-9:.]+ +[0-9]+ [a-z_]+\.c:[0-9]+\] Starting CSI-Proxy Server' "$C/csi/up.log"
check "... logging to -log_file=C:\\csi\\up.log in klog format" $? "$(head -3 "$C/csi/up.log" 2>/dev/null)"
# (No -v here, the line is upstream's: wait_deleting tells the calls run.)
N=3
mk_trees $N
start_rmdirs $N
wait_deleting $N
run sc stop csiproxy
wait_state csiproxy STOPPED 300
stopped=$?
for p in "${RM[@]}"; do wait "$p"; done
tally $N
stop_line=$(grep -n 'service control 1: stopping' "$C/csi/up.log" | head -1 | cut -d: -f1)
last_rm=$(grep -n 'audit: call /v1.Filesystem/Rmdir' "$C/csi/up.log" | tail -1 | cut -d: -f1)
if [ $stopped = 0 ] && [ "$TALLY_OK" = $N ] && [ -n "$stop_line" ] && [ "${last_rm:-0}" -gt "$stop_line" ]; then
    ok "sc.exe stop csiproxy with $N calls in flight: drained (all OK), STOPPED"
else
    bad "sc.exe stop csiproxy drains" "stopped=$stopped ok=$TALLY_OK unavailable=$TALLY_UNAV$TALLY_OTHER; stop at ${stop_line:-?}, last Rmdir at ${last_rm:-?}"
fi
run sc delete csiproxy

# --- a short drain deadline: calls still running get UNAVAILABLE ---------------------
# 8 workers: one group may use 6 of them (rpc/pool.c), so all 4 calls run at
# once (with the default 4 workers the group gets 3 and the 4th waits its turn).
printf 'limits:\n  drainTimeout: 200ms\n  workerThreads: 8\n' >"$C/csi/short.yaml"
expect "install with -config" 0 "installed" proxy install -config 'C:\csi\short.yaml' -log_file='C:\csi\short.log' -logtostderr=false -v 2
run sc start csiproxy
wait_state csiproxy RUNNING && wait_pipes csi-proxy-filesystem-v1
N=4
mk_trees $N
base=$(arrived "$C/csi/short.log")
start_rmdirs $N
wait_arrived "$C/csi/short.log" $((base + N))
wait_deleting $N
run sc stop csiproxy
wait_state csiproxy STOPPED 300
stopped=$?
for p in "${RM[@]}"; do wait "$p"; done
tally $N
if [ $stopped = 0 ] && [ -z "$TALLY_OTHER" ] && [ $((TALLY_OK + TALLY_UNAV)) = $N ] && [ "$TALLY_UNAV" -gt 0 ]; then
    ok "drainTimeout 200ms: $TALLY_UNAV call(s) answered UNAVAILABLE, $TALLY_OK OK, none lost; STOPPED"
else
    bad "short drain: each call OK or UNAVAILABLE" "stopped=$stopped ok=$TALLY_OK unavailable=$TALLY_UNAV$TALLY_OTHER"
fi
grep -q 'csi-proxy is stopping' "$WINEPREFIX"/rm*.out
check "... with the message \"csi-proxy is stopping\"" $?
grep -q 'exiting with code' "$C/csi/short.log"
check "... and the process exited" $? "$(tail -3 "$C/csi/short.log")"
run sc delete csiproxy
rm -rf "$C"/var/lib/kubelet/pods/t*

# --- console mode: Ctrl+C drains the same way ----------------------------------------
# (Wine turns SIGINT into CTRL_C_EVENT for the console process.)
CLOG=$WINEPREFIX/console.log
wine 'C:\csi\csi-proxy.exe' -v 2 >"$CLOG" 2>&1 &
CPID=$!
BG+=("$CPID")
wait_pipes csi-proxy-filesystem-v1
N=3
mk_trees $N
base=$(arrived "$CLOG")
start_rmdirs $N
wait_arrived "$CLOG" $((base + N))
wait_deleting $N
kill -INT "$CPID"
wait "$CPID"
crc=$?
for p in "${RM[@]}"; do wait "$p"; done
tally $N
int_line=$(grep -n 'interrupted: stopping' "$CLOG" | head -1 | cut -d: -f1)
last_rm=$(grep -n 'audit: call /v1.Filesystem/Rmdir' "$CLOG" | tail -1 | cut -d: -f1)
if [ "$crc" = 0 ] && [ "$TALLY_OK" = $N ] && [ -n "$int_line" ] && [ "${last_rm:-0}" -gt "$int_line" ]; then
    ok "console mode: Ctrl+C with $N calls in flight drains them all (OK) and exits 0"
else
    bad "console Ctrl+C drains" "exit $crc ok=$TALLY_OK unavailable=$TALLY_UNAV$TALLY_OTHER; $(tail -3 "$CLOG")"
fi
rm -rf "$C"/var/lib/kubelet/pods/t*

# --- configuration errors -------------------------------------------------------------
cfg() { printf "$2" >"$C/csi/$1"; }
cfg bad1.yaml 'groups:\n  smb: {versions: [v1\n'
expect "bad YAML: refused with file:line" 1 'C:\csi\bad1.yaml:3: YAML:' proxy_bounded -config 'C:\csi\bad1.yaml'
cfg bad2.yaml 'kubeletPath: C:\\var\\lib\\kubelet\nlimits:\n  maxConnections: 8\n  maxConection: 9\n'
expect "unknown key: refused with file:line" 1 'C:\csi\bad2.yaml:4: limits: unknown key "maxConection"' proxy_bounded -config 'C:\csi\bad2.yaml'
cfg bad3.yaml 'security:\n  allowedCallers:\n    - S-1-5-32-544\n    - S-1-5-21-x\n'
expect "bad SID: refused with file:line" 1 'C:\csi\bad3.yaml:4: security.allowedCallers[1]: "S-1-5-21-x" is not a valid SID' \
    proxy_bounded -config 'C:\csi\bad3.yaml'
cfg bad4.yaml 'groups:\n  filesystem:\n    pipeSecurity: "D:(A;;GA;;;WD)"\n'
expect "unprotected SDDL: refused with file:line" 1 'C:\csi\bad4.yaml:3: groups.filesystem.pipeSecurity: invalid pipe security "D:(A;;GA;;;WD)"' \
    proxy_bounded -config 'C:\csi\bad4.yaml'
# The service's account must be able to create every pipe instance (or a
# group serves one connection at a time). The config refuses a DACL that does
# not give SYSTEM full access; the Windows side (pipesec_win.c) refuses one
# that does not give the account the process really runs as (here the Wine
# user) read, write and FILE_CREATE_PIPE_INSTANCE.
cfg bad4b.yaml 'groups:\n  disk:\n    pipeSecurity: "D:P(A;;GA;;;BA)"\n'
expect "SDDL not granting SYSTEM: refused with file:line and why" 1 \
    'C:\csi\bad4b.yaml:3: groups.disk.pipeSecurity: pipe security "D:P(A;;GA;;;BA)" cannot work: it does not give SY full access' \
    proxy_bounded -config 'C:\csi\bad4b.yaml'
cfg bad4c.yaml 'groups:\n  disk:\n    pipeSecurity: "D:P(A;;GA;;;SY)(A;;GA;;;S-1-5-93-2-1)"\n'
expect "SDDL not granting the process's own account: refused with file:line" 1 \
    "C:\\csi\\bad4c.yaml:3: disk pipe security: \"D:P(A;;GA;;;SY)(A;;GA;;;S-1-5-93-2-1)\" does not give this process's account" \
    proxy_bounded -config 'C:\csi\bad4c.yaml'
# An audit entry needs SeSecurityPrivilege at pipe creation, which Windows
# checks and Wine does not: refused at load on both, naming why.
cfg bad4d.yaml 'groups:\n  disk:\n    pipeSecurity: "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)S:(AU;FA;GA;;;WD)"\n'
expect "SDDL with an audit SACL: refused with file:line and why" 1 \
    'C:\csi\bad4d.yaml:3: groups.disk.pipeSecurity: invalid pipe security "D:P(A;;GA;;;SY)(A;;FRFW;;;BA)S:(AU;FA;GA;;;WD)": at offset 32: audit entries (AU) are not supported: a pipe with a SACL needs SeSecurityPrivilege' \
    proxy_bounded -config 'C:\csi\bad4d.yaml'
cfg bad5.yaml 'security:\n  allowedCallers: [SYSTEM, "NoSuchDomain\\\\nobody"]\n'
expect "unknown account name: refused with file:line and LookupAccountName's reason" 1 \
    'C:\csi\bad5.yaml:2: security.allowedCallers[1]: "NoSuchDomain\nobody" is neither a SID' proxy_bounded -config 'C:\csi\bad5.yaml'
cfg broad1.yaml 'security:\n  allowedCallers: [SYSTEM, Everyone]\n'
expect "allowedCallers: [Everyone] is refused with file:line" 1 \
    'C:\csi\broad1.yaml:2: security.allowedCallers: S-1-1-0 (Everyone) admits a broad group' \
    proxy_bounded -config 'C:\csi\broad1.yaml'
cfg broad2.yaml 'groups:\n  filesystem:\n    pipeSecurity: "D:P(A;;GA;;;SY)(A;;GA;;;WD)"\n'
expect "pipeSecurity D:P(A;;GA;;;SY)(A;;GA;;;WD) is refused with file:line" 1 \
    'C:\csi\broad2.yaml:3: groups.filesystem.pipeSecurity: "D:P(A;;GA;;;SY)(A;;GA;;;WD)" grants WD (Everyone)' \
    proxy_bounded -config 'C:\csi\broad2.yaml'
# Roots that would hand callers the system.
expect "-kubelet-path C:\\ (a drive root) is refused" 1 \
    '-kubelet-path C:\: refused as a root: a drive root' proxy_bounded -kubelet-path 'C:\'
expect "-working-dir C:\\ is refused" 1 '-working-dir C:\: refused as a root: a drive root' \
    proxy_bounded -working-dir 'C:\'
expect "-working-dir C:\\Windows\\Temp (below %SystemRoot%, asked of the system) is refused" 1 \
    'refused as a root: within C:\windows (%SystemRoot%)' proxy_bounded -working-dir 'C:\Windows\Temp'
expect "-working-dir 'C:\\Program Files\\x' is refused" 1 'refused as a root: within C:\Program Files' \
    proxy_bounded -working-dir 'C:\Program Files\x'
expect "-kubelet-path C:\\PROG~FBU\\csi-k (an 8.3 name of Program Files, csi-k missing) is refused" 1 \
    'csi-k): refused as a root: within' proxy_bounded -kubelet-path 'C:\PROG~FBU\csi-k'
expect "-working-dir C:\\csi-work\\..\\users is refused (. and .. resolved)" 1 \
    '(the user profiles directory), a system directory' proxy_bounded -working-dir 'C:\csi-work\..\users'
echo "kubeletPath: 'C:\\'" >"$C/csi/roots.yaml"
expect "kubeletPath: 'C:\\' in the config file is refused too" 1 '-kubelet-path C:\: refused as a root' \
    proxy_bounded -config 'C:\csi\roots.yaml'
expect "a missing -config file is refused" 1 '-config: C:\csi\nope.yaml: No such file' proxy_bounded -config 'C:\csi\nope.yaml'
# Names that are not regular files: a device read as the
# file gave an empty config, i.e. the default policy. nul.yaml exists as a
# file with a narrower policy; Win32 opens the device NUL all the same.
mkdir -p "$C/cfg/adir"
printf 'groups:\n  filesystem: {versions: [v1]}\n' >"$C/cfg/nul.yaml"
expect "-config C:\\cfg\\nul.yaml (the device NUL) is refused, naming it" 1 \
    '-config: C:\cfg\nul.yaml: not a regular file: a character device' proxy_bounded -config 'C:\cfg\nul.yaml'
# (Wine cannot open CON without a console: "Invalid handle"; Windows opens
# the console, FILE_TYPE_CHAR. Refused and named either way.)
expect "-config CON is refused" 1 '-config: CON: ' proxy_bounded -config CON
expect "-config COM1 is refused" 1 '-config: COM1: ' proxy_bounded -config COM1
expect "-config of a directory is refused" 1 '-config: C:\cfg\adir: not a regular file: a directory' \
    proxy_bounded -config 'C:\cfg\adir'
expect "-log_file NUL is refused (every file opened by name)" 1 'open log file NUL: not a regular file' \
    proxy_bounded -logtostderr=false -log_file NUL
wine 'C:\csi\pipecheck.exe' -absent >/dev/null 2>&1
check "... and none of them served a pipe" $?

# --- the default file C:\ProgramData\csi-proxy\config.yaml ----------------------------
mkdir -p "$C/ProgramData/csi-proxy"
printf "groups:\n  filesystem:\n    versions: [v1]\n" >"$C/ProgramData/csi-proxy/config.yaml"
wine 'C:\csi\csi-proxy.exe' -v 2 >"$WINEPREFIX/default.log" 2>&1 &
DPID=$!
BG+=("$DPID")
if wait_pipes csi-proxy-filesystem-v1 && wine 'C:\csi\pipecheck.exe' -absent csi-proxy-disk-v1 csi-proxy-filesystem-v1beta1 >/dev/null 2>&1; then
    ok "the default config file is used when present (only filesystem v1 served)"
else
    bad "the default config file is used" "$(tail -5 "$WINEPREFIX/default.log")"
fi
grep -q 'configuration: C:\\ProgramData\\csi-proxy\\config.yaml' "$WINEPREFIX/default.log"
check "... and named in the log" $? "$(grep -m3 -i config "$WINEPREFIX/default.log")"
kill "$DPID" 2>/dev/null
wait "$DPID" 2>/dev/null
wait_gone csi-proxy-filesystem-v1
printf "groups:\n  filesystem:\n    versions: v1\n" >"$C/ProgramData/csi-proxy/config.yaml"
expect "a broken default config file is refused too (fail closed)" 1 \
    'C:\ProgramData\csi-proxy\config.yaml:3: groups.filesystem.versions: expected a list' proxy_bounded

# A service whose config is bad: the SCM sees it stop with an error, the log says why.
run sc create csiproxy binPath= "C:\\csi\\csi-proxy.exe -windows-service -config C:\\csi\\bad2.yaml -log_file=C:\\csi\\bad.log -logtostderr=false"
run sc start csiproxy
wait_state csiproxy STOPPED 100
q=$(wine sc query csiproxy 2>&1 | tr -d '\r')
if [[ "$q" == *"STOPPED"* && "$q" == *"SERVICE_EXIT_CODE  : 1"* ]] &&
    grep -q 'bad2.yaml:4: limits: unknown key "maxConection"' "$C/csi/bad.log" 2>/dev/null; then
    ok "as a service, a bad config stops it with a service-specific error, file:line in the log"
else
    bad "service with a bad config" "$q / $(tail -3 "$C/csi/bad.log" 2>/dev/null)"
fi
run sc delete csiproxy
rm -f "$C/ProgramData/csi-proxy/config.yaml"

# --- the system group on Wine's SCM ------------------------------------------------
# Two stand-in services (svctest.exe's service mode), cpdep depending on
# cpdummy, and a config that lets Start/StopService touch cpdummy only.
# (Wine's EnumDependentServicesW lists nothing, so the dependents rule is
# verified natively: test_system.c, test/conformance/test_system.py.)
run sc create cpdummy binPath= "C:\\csi\\svctest.exe service cpdummy"
run sc create cpdep binPath= "C:\\csi\\svctest.exe service cpdep" depend= cpdummy
printf 'groups:\n  system:\n    allowedServices: [CPDummy]\n' >"$C/csi/sys.yaml"
wine 'C:\csi\csi-proxy.exe' -config 'C:\csi\sys.yaml' >"$WINEPREFIX/sys.log" 2>&1 &
SYSPID=$!
BG+=("$SYSPID")
wait_pipes csi-proxy-system-v1alpha1
check "system group served alone from a config" $? "$(tail -3 "$WINEPREFIX/sys.log")"
expect "system GetService: a manual service, stopped (QueryServiceConfigW, QueryServiceStatusEx)" 0 \
    '"start_type":"MANUAL","status":"STOPPED"' cli --emit-defaults system v1alpha1 GetService '{"name":"cpdummy"}'
expect "system StartService: started through the SCM and waited for" 0 'status: OK' \
    cli system v1alpha1 StartService '{"name":"cpdummy"}'
expect "... the SCM reports it RUNNING" 0 '"status":"RUNNING"' \
    cli --emit-defaults system v1alpha1 GetService '{"name":"cpdummy"}'
expect "system StopService: stopped through the SCM and waited for" 0 'status: OK' \
    cli system v1alpha1 StopService '{"name":"cpdummy"}'
expect "... the SCM reports it STOPPED" 0 '"status":"STOPPED"' \
    cli --emit-defaults system v1alpha1 GetService '{"name":"cpdummy"}'
expect "allowedServices: starting a service not listed is PERMISSION_DENIED" 7 \
    "service cpdep is not in the system group's allowedServices [CPDummy]" \
    cli system v1alpha1 StartService '{"name":"cpdep"}'
expect "... and it was not started" 0 '"status":"STOPPED"' \
    cli --emit-defaults system v1alpha1 GetService '{"name":"cpdep"}'
expect "system GetService of an unknown service is NOT_FOUND" 5 'GetService nosuchsvc: ' \
    cli system v1alpha1 GetService '{"name":"nosuchsvc"}'
expect "system GetBIOSSerialNumber answers from the SMBIOS table (empty under Wine)" 0 'status: OK' \
    cli system v1alpha1 GetBIOSSerialNumber
grep -q 'audit: call /v1alpha1.System/StartService .*args={"name":"cpdummy"} result=OK' "$WINEPREFIX/sys.log"
check "service starts are audited" $? "$(grep -m3 'audit:' "$WINEPREFIX/sys.log")"
kill "$SYSPID" 2>/dev/null
wait "$SYSPID" 2>/dev/null
wait_gone csi-proxy-system-v1alpha1
run sc delete cpdep
run sc delete cpdummy

finish
