#!/usr/bin/env bash
# Wine integration tests: the real build/win/csi-proxy.exe on real named
# pipes, called by build/win/csi-proxy-cli.exe (our gRPC client) in a private
# Wine prefix. Prints "ok - ..." / "not ok - ..." per check and a closing
# "N passed, N failed" line; exit 0 only when all passed.
set -u
cd "$(dirname "$0")/../.." || exit 1
W=build/win
for f in csi-proxy.exe csi-proxy-cli.exe pipecheck.exe health-probe.exe; do
    [ -f "$W/$f" ] || { echo "missing $W/$f: run make first"; exit 1; }
done

export WINEDEBUG=-all
export WINEPREFIX
WINEPREFIX=$(mktemp -d /tmp/csi-proxy-wine.XXXXXX)
LOG=$WINEPREFIX/server.log
pass=0
fail=0
PID=
IDLE=

cleanup() {
    [ -n "$IDLE" ] && kill "$IDLE" 2>/dev/null
    [ -n "$PID" ] && kill "$PID" 2>/dev/null
    wineserver -k 2>/dev/null
    rm -rf "$WINEPREFIX"
}
trap cleanup EXIT

. test/wine/lib.sh
# expect NAME WANT_RC SUBSTRING CLI-ARGS...
expect() {
    local name=$1 want_rc=$2 sub=$3
    shift 3
    expect_run "$name" "$want_rc" "$sub" cli "$@"
}

echo "# prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
wineserver -p # keep wineserver up between our short-lived processes
C=$WINEPREFIX/drive_c
mkdir -p "$C/csi" "$C/var/lib/kubelet/pods" "$C/csi-work"
cp "$W/csi-proxy.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$W/health-probe.exe" "$C/csi/"

# --- the executable itself ---------------------------------------------
imports=$(x86_64-w64-mingw32-objdump -p "$W/csi-proxy.exe" | grep -E 'DLL Name|^\s+[0-9a-f]+\s+[0-9]+\s+\w' )
if grep -qiE 'CreateProcess|ShellExecute|WinExec' <<<"$imports"; then
    bad "csi-proxy.exe imports no process-creation API" "$(grep -iE 'CreateProcess|ShellExecute|WinExec' <<<"$imports")"
else
    ok "csi-proxy.exe imports no process-creation API"
fi
dlls=$(x86_64-w64-mingw32-objdump -p "$W/csi-proxy.exe" | awk '/DLL Name/ {print tolower($3)}' | sort -u | tr '\n' ' ')
if [[ "$dlls" =~ ^((kernel32|advapi32|msvcrt|httpapi|ws2_32|ole32|oleaut32|shell32|user32|rpcrt4|ntdll)\.dll\ )+$ ]]; then
    ok "csi-proxy.exe needs only Windows DLLs ($dlls)"
else
    bad "csi-proxy.exe needs only Windows DLLs" "$dlls"
fi

# --- start ---------------------------------------------------------------
t0=$(date +%s%N)
wine 'C:\csi\csi-proxy.exe' -working-dir 'C:\csi-work' -v 2 >"$LOG" 2>&1 &
PID=$!
up=0
for _ in $(seq 1 200); do
    if wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1; then up=1; break; fi
    sleep 0.05
done
t1=$(date +%s%N)
if [ $up = 1 ]; then
    ok "all 23 pipes listening ($(( (t1 - t0) / 1000000 )) ms after start, Wine start-up included)"
else
    bad "all 23 pipes listening" "$(cat "$LOG")"
    echo "$pass passed, $fail failed"
    exit 1
fi

# A connection that never sends a byte, held open throughout (as the Go
# client's verification dial does).
wine 'C:\csi\pipecheck.exe' -hold 600000 csi-proxy-filesystem-v1 csi-proxy-filesystem-v1beta1 >/dev/null 2>&1 &
IDLE=$!
sleep 0.3

run 'C:\csi\pipecheck.exe' -h2
check "every pipe answers the HTTP/2 preface" "$RC" "$(grep -v '^ok ' <<<"$OUT")"

# A client that sends 270 calls (3 waves) before reading any answer: about
# 90 KB of answers wait for it, more than the pipe's 64 KiB, and all come
# once it reads. (On Windows the server's writes then wait for the reader
# and the loop waits for their events; Wine 8 completes them at once,
# beyond the quota: a broken cp_pc_on_write passes this test under Wine.)
run 'C:\csi\pipecheck.exe' -flood 270 csi-proxy-filesystem-v1
check "270 calls sent before reading: every one answered once the client reads" "$RC" "$OUT"

# --- the 26 filesystem RPCs over the named pipes ------------------------
K='C:\\var\\lib\\kubelet'
for v in v1alpha1 v1beta1 v1beta2 v1 v2alpha1; do
    d="$K\\\\pods\\\\$v\\\\a\\\\b"
    host="$C/var/lib/kubelet/pods/$v/a/b"
    expect "$v PathExists (absent)" 0 '{}' filesystem $v PathExists "{\"path\":\"$d\"}"
    expect "$v Mkdir" 0 'status: OK' filesystem $v Mkdir "{\"path\":\"$d\"}"
    if [ -d "$host" ]; then ok "$v Mkdir created the directory on the host"; else bad "$v Mkdir created the directory on the host"; fi
    expect "$v PathExists (present)" 0 '"exists":true' filesystem $v PathExists "{\"path\":\"$d\"}"
    case $v in
    v1alpha1 | v1beta1) create=LinkPath check=IsMountPoint ;;
    *) create=CreateSymlink check=IsSymlink ;;
    esac
    expect "$v $check (plain directory is not a link)" 0 '{}' filesystem $v $check "{\"path\":\"$d\"}"
    # Wine's CreateSymbolicLinkW reports success and creates nothing: the
    # service must detect that and say so, never claim a link it lacks.
    # (Real links are verified by the native conformance suite.)
    cli filesystem $v $create "{\"source_path\":\"$d\",\"target_path\":\"$K\\\\pods\\\\$v\\\\link\"}"
    if [ "$RC" = 0 ] && [ ! -L "$C/var/lib/kubelet/pods/$v/link" ] && [ ! -e "$C/var/lib/kubelet/pods/$v/link" ]; then
        bad "$v $create does not report a link Wine did not make" "$OUT"
    elif [ "$RC" != 0 ] && [[ "$OUT" == *link* ]]; then
        ok "$v $create reports Wine's missing symlink support as an error ($(sed -n 's/^status: \([A-Z_]*\).*/\1/p' <<<"$OUT"))"
    else
        bad "$v $create answers clearly" "exit $RC: $OUT"
    fi
    expect "$v Rmdir non-empty without force is refused" 9 'FAILED_PRECONDITION' \
        filesystem $v Rmdir "{\"path\":\"$K\\\\pods\\\\$v\"}"
    if [ -d "$host" ]; then ok "$v refused Rmdir lost nothing"; else bad "$v refused Rmdir lost nothing"; fi
    expect "$v Rmdir" 0 'status: OK' filesystem $v Rmdir "{\"path\":\"$d\"}"
    expect "$v Rmdir force" 0 'status: OK' filesystem $v Rmdir "{\"path\":\"$K\\\\pods\\\\$v\",\"force\":true}"
    if [ ! -e "$C/var/lib/kubelet/pods/$v" ]; then ok "$v Rmdir force removed the tree"; else bad "$v Rmdir force removed the tree"; fi
    expect "$v path outside the kubelet dir is INVALID_ARGUMENT" 3 'not within' \
        filesystem $v Mkdir '{"path":"C:\\var\\lib\\kubelet-evil\\x"}'
    [ -e "$C/var/lib/kubelet-evil" ] && bad "$v refused Mkdir created nothing"
done
mkdir -p "$C/var/lib/kubelet/pods/rc/x/y" && touch "$C/var/lib/kubelet/pods/rc/x/f"
expect "v2alpha1 RmdirContents" 0 'status: OK' filesystem v2alpha1 RmdirContents "{\"path\":\"$K\\\\pods\\\\rc\"}"
if [ -d "$C/var/lib/kubelet/pods/rc" ] && [ -z "$(ls -A "$C/var/lib/kubelet/pods/rc")" ]; then
    ok "RmdirContents emptied the directory and kept it"
else
    bad "RmdirContents emptied the directory and kept it" "$(ls -la "$C/var/lib/kubelet/pods/rc")"
fi
expect "working dir is allowed" 0 'status: OK' filesystem v1 Mkdir '{"path":"C:\\csi-work\\w"}'
[ -d "$C/csi-work/w" ] && ok "working dir Mkdir on the host" || bad "working dir Mkdir on the host"

# --- links planted in the kubelet dir --------------------------------------
# Wine shows a Unix symlink in the prefix as a Windows link (a reparse
# point), so these are real attacks on the confinement as the service sees
# them: one leads out of the kubelet dir, one stays inside.
mkdir -p "$C/outside/secret" "$C/var/lib/kubelet/pods/real/d"
echo keep >"$C/outside/secret/marker"
ln -s ../../../../outside "$C/var/lib/kubelet/pods/esc"
ln -s real "$C/var/lib/kubelet/pods/in"
for m in PathExists Rmdir Mkdir; do
    force=; [ $m = Rmdir ] && force=',"force":true'
    expect "a link leading out of the kubelet dir is refused ($m)" 3 'resolves to C:\outside\secret' \
        filesystem v1 $m "{\"path\":\"$K\\\\pods\\\\esc\\\\secret\"$force}"
done
# The marker is checked, not the directory: a Mkdir after a successful
# Rmdir would recreate the directory but never the file in it.
if [ -f "$C/outside/secret/marker" ]; then ok "the refused calls lost nothing outside"; else bad "the refused calls lost nothing outside" "$(ls -la "$C/outside" 2>&1)"; fi

# Recursive removal never follows a link below its start (the walk opens
# each child relative to its parent without following reparse points and
# enters only what both the listing and the handle call a plain directory).
# Deterministic: the links are planted before the call (Wine shows them as
# reparse points in listings); a swap between listing and descent cannot be
# timed here. Wine 8 ignores FILE_OPEN_REPARSE_POINT (its opens follow the
# link) and cannot remove a directory symlink at all (RemoveDirectoryW and a
# delete disposition both act on the target and answer "not empty"), so the
# call may fail there; what must hold is that nothing outside is lost and
# any error names a path inside the tree.
for m in Rmdir RmdirContents; do
    t="$C/var/lib/kubelet/pods/walk-$m"
    mkdir -p "$t/a/b" "$C/outside/walk-$m/deep"
    echo keep >"$C/outside/walk-$m/marker"
    echo keep >"$C/outside/walk-$m/deep/marker"
    echo x >"$t/a/b/f"
    ln -s ../../../../../../outside/walk-$m "$t/a/b/dirlink" # a directory link, deep
    ln -s ../../../../outside/walk-$m/marker "$t/filelink"  # a file link
    if [ $m = Rmdir ]; then
        cli filesystem v1 Rmdir "{\"path\":\"$K\\\\pods\\\\walk-$m\",\"force\":true}"
    else
        cli filesystem v2alpha1 RmdirContents "{\"path\":\"$K\\\\pods\\\\walk-$m\"}"
    fi
    if [ "$RC" = 0 ] || [[ "$OUT" == *"kubelet\pods\walk-$m"* && "$OUT" != *outside* ]]; then
        ok "$m of a tree holding links to outside answers about the tree only ($(sed -n 's/^status: \([A-Z_]*\).*/\1/p' <<<"$OUT"))"
    else
        bad "$m of a tree holding links to outside answers about the tree only" "exit $RC: $OUT"
    fi
    if [ -f "$C/outside/walk-$m/marker" ] && [ -f "$C/outside/walk-$m/deep/marker" ]; then
        ok "$m did not follow the planted links (outside markers kept)"
    else
        bad "$m did not follow the planted links (outside markers kept)" "$(ls -laR "$C/outside/walk-$m" 2>&1)"
    fi
done

# Rmdir force on the link itself removes at most the link, never what it
# leads to (Wine 8 cannot remove a directory link: see above).
cli filesystem v1 Rmdir "{\"path\":\"$K\\\\pods\\\\esc\",\"force\":true}"
if [ -f "$C/outside/secret/marker" ]; then
    ok "Rmdir force of a link leading outside kept what it led to (exit $RC)"
else
    bad "Rmdir force of a link leading outside kept what it led to" "exit $RC: $OUT; $(ls -la "$C/outside/secret" 2>&1)"
fi

# The kubelet dir and the working dir themselves may be read and created,
# never removed, emptied or replaced (every spelling the rules accept).
mkdir -p "$C/var/lib/kubelet/pods/keep" && echo keep >"$C/var/lib/kubelet/pods/keep/marker"
mkdir -p "$C/csi-work" && echo keep >"$C/csi-work/marker"
for root in "$K" "$K\\\\" 'c:\\VAR\\lib\\Kubelet' 'C:\\csi-work' 'c:\\CSI-WORK\\'; do
    expect "Rmdir force of the root $root is refused" 3 'is the configured directory' \
        filesystem v1 Rmdir "{\"path\":\"$root\",\"force\":true}"
    expect "RmdirContents of the root $root is refused" 3 'never removed, emptied, replaced or mounted over' \
        filesystem v2alpha1 RmdirContents "{\"path\":\"$root\"}"
    expect "Mkdir of the root $root is allowed" 0 'status: OK' filesystem v1 Mkdir "{\"path\":\"$root\"}"
done
expect "PathExists of the kubelet root is allowed" 0 '"exists":true' filesystem v1 PathExists "{\"path\":\"$K\"}"
expect "IsSymlink of the kubelet root is allowed" 0 '{}' filesystem v1 IsSymlink "{\"path\":\"$K\"}"
if [ -f "$C/var/lib/kubelet/pods/keep/marker" ] && [ -f "$C/csi-work/marker" ]; then
    ok "the refused root calls lost nothing"
else
    bad "the refused root calls lost nothing" "$(ls -la "$C/var/lib/kubelet" "$C/csi-work" 2>&1)"
fi
expect "a link that stays inside the kubelet dir is followed" 0 '"exists":true' \
    filesystem v1 PathExists "{\"path\":\"$K\\\\pods\\\\in\\\\d\"}"

# --- errors over the pipes ------------------------------------------------
expect "unknown method is UNIMPLEMENTED" 12 'unknown method Format for service v1.Filesystem' \
    --raw-path /v1.Filesystem/Format filesystem v1
expect "unknown method on the iscsi pipe is UNIMPLEMENTED" 12 'unknown method Format for service v1alpha2.Iscsi' \
    --raw-path /v1alpha2.Iscsi/Format iscsi v1alpha2
# iscsi on the real host: Wine has no iscsidsc.dll; portable checks first, then a clean refusal (test/wine/iscsi.sh has the rest)
expect "iscsi: a missing target_portal is INVALID_ARGUMENT (upstream crashes)" 3 'target_portal is required' \
    iscsi v1alpha2 AddTargetPortal '{}'
expect "iscsi: the Win32 host answers FAILED_PRECONDITION naming iscsidsc.dll" 9 'iscsidsc.dll' \
    iscsi v1alpha2 ListTargetPortals
# smb on the real host: Wine has no MSFT_SmbGlobalMapping; a clean refusal, the service keeps serving
expect "smb: a share of this machine is refused before the host is asked" 3 'is this machine' \
    smb v1 NewSmbGlobalMapping '{"remote_path":"\\\\localhost\\c$"}'
# This machine's own addresses (GetAdaptersAddresses, which Wine answers
# with the Linux host's interfaces) are this machine too, in Windows' other
# spellings as well; an address that is not the machine's reaches the host.
own4=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+(\.[0-9]+){3}$' | grep -v '^127\.' | head -1)
own6=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep ':' | grep -vi '^fe80:' | head -1)
if [ -n "$own4" ]; then
    IFS=. read -r o1 o2 o3 o4 <<<"$own4"
    own4_dec=$(( (o1 << 24) | (o2 << 16) | (o3 << 8) | o4 ))
    expect "smb: this machine's address $own4 is refused (GetAdaptersAddresses)" 3 'is this machine' \
        smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\$own4\\\\share\"}"
    expect "smb: and written as one number ($own4_dec)" 3 'is this machine' \
        smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\$own4_dec\\\\share\"}"
    expect "smb: RemoveSmbGlobalMapping of \\$own4\\share (one backslash, as Trident) is refused too" 3 'is this machine' \
        smb v1 RemoveSmbGlobalMapping "{\"remote_path\":\"\\\\$own4\\\\share\"}"
else
    ok "smb: this machine's IPv4 address is refused # SKIP the host has no non-loopback IPv4 address"
fi
if [ -n "$own6" ]; then
    lit6="${own6//:/-}.ipv6-literal.net"
    expect "smb: this machine's address $own6 as $lit6 is refused" 3 'is this machine' \
        smb v1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\$lit6\\\\share\"}"
else
    ok "smb: this machine's IPv6 address is refused # SKIP the host has no global IPv6 address"
fi
expect "smb: an address that is not this machine's reaches the host (FAILED_PRECONDITION: no SMB interface)" 9 \
    'MSFT_SmbGlobalMapping' smb v1 NewSmbGlobalMapping '{"remote_path":"\\\\198.51.100.7\\share"}'
expect "smb: RemoveSmbGlobalMapping with one leading backslash (Trident's unstage) reaches the host" 9 \
    'MSFT_SmbGlobalMapping' smb v1 RemoveSmbGlobalMapping '{"remote_path":"\\fs1.example.com\\trident_pvc_1"}'
# (Wine's WMI has no ROOT\Microsoft\Windows\SMB: ConnectServer answers
# WBEM_E_INVALID_NAMESPACE, which smb_win.c reports as the missing interface.)
expect "smb: the Win32 host answers FAILED_PRECONDITION naming MSFT_SmbGlobalMapping and its namespace" 9 \
    'MSFT_SmbGlobalMapping (ROOT\Microsoft\Windows\SMB) is not available on this host: connecting to the namespace failed (HRESULT 0x8004100e, WBEM_E_INVALID_NAMESPACE)' \
    smb v1 NewSmbGlobalMapping '{"remote_path":"\\\\fs1.example.com\\share","username":"u1","password":"S3cr3t-w"}'
if [[ "$OUT" == *S3cr3t-w* ]]; then
    bad "smb: the refusal does not carry the password" "$OUT"
else
    ok "smb: the refusal does not carry the password"
fi
expect "smb: RemoveSmbGlobalMapping on the Win32 host answers FAILED_PRECONDITION naming MSFT_SmbGlobalMapping" 9 \
    'MSFT_SmbGlobalMapping (ROOT\Microsoft\Windows\SMB) is not available on this host' \
    smb v1 RemoveSmbGlobalMapping '{"remote_path":"\\\\fs1.example.com\\share"}'
expect "smb: the service still serves after the smb refusals" 0 '"exists":true' \
    filesystem v1 PathExists "{\"path\":\"$K\"}"
# Big requests arrive in hundreds of pipe reads, most of them completing at
# once (the transport handles a run of those, then lets the port in).
big_request() { # big_request N FILE: a PathExists request whose path is N bytes longer
    /usr/bin/python3 -c 'import json,sys; json.dump({"path": "C:\\var\\lib\\kubelet\\" + "a" * int(sys.argv[1])}, open(sys.argv[2], "w"))' "$1" "$2"
}
big_request 3000000 "$C/csi/big3.json"
big_request 5000000 "$C/csi/big5.json"
expect "a 3 MB path arrives whole and is refused by length (INVALID_ARGUMENT)" 3 'exceeds maximum' \
    filesystem v1 PathExists '@C:\csi\big3.json'
expect "a 5 MB request is RESOURCE_EXHAUSTED" 8 'RESOURCE_EXHAUSTED' filesystem v1 PathExists '@C:\csi\big5.json'
expect "served after the big requests" 0 '"exists":true' filesystem v1 PathExists "{\"path\":\"$K\\\\pods\"}"
expect "missing pipe is UNAVAILABLE" 14 'csi-proxy-filesystem-v9' --pipe csi-proxy-filesystem-v9 filesystem v1 PathExists '{}'

# --- 32 concurrent clients ------------------------------------------------
pids=()
for i in $(seq 1 32); do
    wine 'C:\csi\csi-proxy-cli.exe' --repeat 25 filesystem v1 PathExists "{\"path\":\"$K\\\\pods\"}" \
        >"$WINEPREFIX/c$i.out" 2>&1 &
    pids+=($!)
done
cfail=0
for p in "${pids[@]}"; do wait "$p" || cfail=$((cfail + 1)); done
if [ $cfail = 0 ] && [ "$(cat "$WINEPREFIX"/c*.out | tr -d '\r' | grep -c '^status: OK')" = 32 ]; then
    ok "32 concurrent clients x 25 calls all OK"
else
    bad "32 concurrent clients x 25 calls all OK" \
        "$cfail failed; $(cat "$WINEPREFIX"/c*.out | tr -d '\r' | grep -v '^status: OK$' | grep -v '^{"exists":true}$' | head -8)"
fi

# --- clients that open a pipe and close it at once ------------------------
# (PowerShell's Test-Path on a pipe does this.) The pipe must never be left
# without a listening instance, and the server must keep running.
CH=$(wine 'C:\csi\pipecheck.exe' -churn 1500 csi-proxy-filesystem-v1 2>&1 | tr -d '\r')
if [[ "$CH" == PASS* ]] && kill -0 "$PID" 2>/dev/null; then
    ok "open-and-close churn: the pipe keeps listening ($CH)"
else
    bad "open-and-close churn: the pipe keeps listening" "$CH"
fi
expect "served after the churn" 0 '"exists":true' filesystem v1 PathExists "{\"path\":\"$K\\\\pods\"}"

# --- the standard gRPC health service -------------------------------------
# Asked by a stock client: grpc-go's generated grpc_health_v1 client over the
# pipe (health-probe.exe, test/wine/healthprobe), exit codes as
# grpc-health-probe's. Wine has no iscsidsc.dll, so the iscsi pipes are
# NOT_SERVING while the filesystem pipes are SERVING.
hp() { run 'C:\csi\health-probe.exe' -pipe "\\\\.\\pipe\\csi-proxy-$1" "${@:2}"; }
hp filesystem-v1
[ "$RC" = 0 ] && [[ "$OUT" == *"status: SERVING"* ]]
check "grpc-go health client: filesystem v1 Check(\"\") is SERVING" $? "exit $RC: $OUT"
hp filesystem-v1beta1 -service v1beta1.Filesystem
[ "$RC" = 0 ] && [[ "$OUT" == *"status: SERVING"* ]]
check "grpc-go health client: Check(\"v1beta1.Filesystem\") is SERVING" $? "exit $RC: $OUT"
hp iscsi-v1alpha2
[ "$RC" = 4 ] && [[ "$OUT" == *"status: NOT_SERVING"* ]]
check "grpc-go health client: iscsi v1alpha2 NOT_SERVING without Wine's iscsidsc.dll (exit 4)" $? "exit $RC: $OUT"
hp disk-v1 -service v1.Nope
[ "$RC" = 3 ] && [[ "$OUT" == *"code NotFound"*'"v1.Nope"'* ]]
check "grpc-go health client: an unknown service is NOT_FOUND naming it (exit 3)" $? "exit $RC: $OUT"
hp filesystem-v1 -watch 1
[ "$RC" = 0 ] && [[ "$OUT" == *"watch: SERVING"* ]]
check "grpc-go health client: Watch streams SERVING at once" $? "exit $RC: $OUT"
hp smb-v1 -service v1.Nope -watch 1
[ "$RC" = 0 ] && [[ "$OUT" == *"watch: SERVICE_UNKNOWN"* ]]
check "grpc-go health client: Watch of an unknown service: SERVICE_UNKNOWN" $? "exit $RC: $OUT"
# An open Watch is probed again every 2 s by the pipe transport's timer (the
# service logs each NOT_SERVING probe at -v 2); no change, no new message.
before=$(grep -c 'v1alpha2.Iscsi is not serving' "$LOG")
hp iscsi-v1alpha2 -watch 2 -timeout 7s
after=$(grep -c 'v1alpha2.Iscsi is not serving' "$LOG")
[ "$RC" = 3 ] && [ "$(grep -c '^watch: ' <<<"$OUT")" = 1 ] && [[ "$OUT" == *"watch: NOT_SERVING"* ]] &&
    [ $((after - before)) -ge 3 ]
check "grpc-go health client: a Watch is probed again while open, one message while nothing changes ($((after - before)) probes in 7 s)" $? "exit $RC: $OUT"
expect "csi-proxy-cli health: the iscsi pipes answer, NOT_SERVING named" 0 \
    "iscsi v1alpha2 ok" health iscsi filesystem/v1
[[ "$OUT" == *"NOT_SERVING"* && "$OUT" == *"filesystem v1 ok"* ]]
check "csi-proxy-cli health names NOT_SERVING" $? "$OUT"
expect "csi-proxy-cli health -serving: NOT_SERVING is down (exit 1)" 1 \
    "iscsi v1alpha2 FAIL: NOT_SERVING" health -serving -deadline 1s iscsi

# --- a second instance ----------------------------------------------------
OUT=$(set -o pipefail; wine 'C:\csi\csi-proxy.exe' 2>&1 | tr -d '\r')
RC=$?
if [ $RC != 0 ] && [[ "$OUT" == *already* ]]; then
    ok "a second instance exits $RC with: $(grep -m1 already <<<"$OUT")"
else
    bad "a second instance fails clearly" "exit $RC: $OUT"
fi
expect "the first instance keeps serving" 0 '"exists":true' filesystem v1 PathExists "{\"path\":\"$K\\\\pods\"}"

if kill -0 "$IDLE" 2>/dev/null; then ok "the silent connection stayed open throughout"; else bad "the silent connection stayed open throughout"; fi
if kill -0 "$PID" 2>/dev/null; then ok "the server is still running"; else bad "the server is still running" "$(cat "$LOG")"; fi

echo "# server log (tail):"
tail -5 "$LOG" | sed 's/^/#   /'
finish
