#!/usr/bin/env bash
# Wine suite: pipe security, caller authorization, audit and limits of the
# real csi-proxy.exe (console mode, a config file with per-group security).
#
# What Wine enforces and what it does not (DESIGN.md section 5): Wine stores
# a pipe's security descriptor and returns it, but does NOT check it when a
# client opens the pipe, so the "kernel refuses at open" half of the design
# cannot be shown here; the descriptors are read back and compared with the
# configuration instead. The in-process check is real under Wine:
# GetNamedPipeClientProcessId -> OpenProcess -> OpenProcessToken sees the
# client's token, so a client started with a restricted token
# (Administrators deny-only, CreateRestrictedToken + CreateProcessAsUserW)
# must be refused while an admin client is served. Wine's
# ImpersonateNamedPipeClient impersonates the server itself; the service
# therefore requires the process token to pass as well. The Event Log is a
# no-op in Wine: the ReportEventW calls are seen through WINEDEBUG=+eventlog.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/service_lib.sh

SECRET_SMB='S3cr3t-smb-pw-4711'
SECRET_CHAP='S3cr3t-chap-0815'
SECRET_MUTUAL='S3cr3t-mutual-1234'
SECRET_TARGET='S3cr3t-target-2718'

cat >"$C/csi/sec.yaml" <<'EOF'
security:
  allowedCallers: [SYSTEM, 'BUILTIN\Administrators']
  allowBroadCallers: true   # for the smb group below
groups:
  filesystem: {}
  disk: {}
  volume: {}
  smb:
    allowedCallers: [SYSTEM, 'BUILTIN\Administrators', 'BUILTIN\Users']
    pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GRGW;;;BU)'
  system:
    allowedCallers: [SYSTEM, ContainerAdministrator]
  iscsi:
    pipeSecurity: 'O:SYD:P(A;;GA;;;SY)(A;;0x12019f;;;BA)'
limits:
  maxMessageBytes: 2048
  maxConnections: 8
  idleTimeout: 2s
log:
  v: 10
  redactFields: [target_path]   # the secret-redaction check below drives it
EOF
LOG=$WINEPREFIX/server.log
# (fixme-all: Wine's own stub notes would print the arguments of the calls
# it fakes, e.g. CreateSymbolicLinkW's paths, into the server's stderr.)
KEEP_LOG=${KEEP_LOG:-}
# (fixme+advapi: Wine's RegisterEventSourceW is a stub that says so, which
# shows when the event source is registered.)
WINEDEBUG=fixme-all,fixme+advapi,trace+eventlog,warn+eventlog wine 'C:\csi\csi-proxy.exe' -config 'C:\csi\sec.yaml' >"$LOG" 2>&1 &
SPID=$!
BG+=("$SPID")
if wait_pipes; then
    ok "csi-proxy.exe serves 23 pipes with per-group security from the config"
else
    bad "server start" "$(tail -20 "$LOG")"
    finish
    exit 1
fi

# registering the event source is no part of start-up (it
# is a call into the Event Log service): it comes with the first record.
grep -q 'RegisterEventSourceW' "$LOG"
check "the Event Log source is not registered while the pipes come up (it is, with the first audit record)" \
    "$([ $? != 0 ] && echo 0 || echo 1)" "$(grep -m2 RegisterEventSource "$LOG")"

expect "-config naming a pipe (here a live csi-proxy pipe) is refused, not read" 1 \
    '-config: \\.\pipe\csi-proxy-disk-v1: not a regular file: a pipe' \
    proxy_bounded -config '\\.\pipe\csi-proxy-disk-v1'

# The configuration file decides who may call and what the roots are, and
# the service reads it as SYSTEM: a file, default or -config, that someone
# else may change is refused, naming the file, the principal and the rights.
# Under Wine a file's security descriptor is made from its Unix mode (owner:
# the Wine user, which is the service's own account; Everyone: the "other"
# bits), so a world-writable file or folder is the lax DACL planted here.
mkdir -p "$C/ProgramData/csi-proxy"
printf 'security:\n  allowedCallers: [Everyone]\n  allowBroadCallers: true\n' >"$C/ProgramData/csi-proxy/config.yaml"
chmod 666 "$C/ProgramData/csi-proxy/config.yaml"
expect "a planted default config.yaml that Everyone may write is refused at start, naming file and principal" 1 \
    'configuration file: C:\ProgramData\csi-proxy\config.yaml: refused: the file grants S-1-1-0 (Everyone) FILE_WRITE_DATA' \
    proxy_bounded
chmod 644 "$C/ProgramData/csi-proxy/config.yaml"
chmod 777 "$C/ProgramData/csi-proxy"
expect "... and so is one in a folder where Everyone may add or rename files" 1 \
    'refused: the folder C:\ProgramData\csi-proxy grants S-1-1-0 (Everyone) FILE_ADD_FILE' proxy_bounded
rm -rf "$C/ProgramData/csi-proxy"
mkdir -p "$C/cfgw"
printf 'groups:\n  filesystem: {}\n' >"$C/cfgw/lax.yaml"
chmod 666 "$C/cfgw/lax.yaml"
expect "-config naming a file Everyone may write is refused" 1 \
    '-config: C:\cfgw\lax.yaml: refused: the file grants S-1-1-0 (Everyone)' \
    proxy_bounded -config 'C:\cfgw\lax.yaml'

grep -q "W.*group smb admits a broad group (allowed callers: S-1-5-32-545 (BUILTIN\\\\Users)): security.allowBroadCallers is true" "$LOG"
check "allowBroadCallers: true admits BUILTIN\\Users for smb, with a warning at start" $? "$(grep -m3 'broad' "$LOG")"
grep -q "group filesystem admits a broad" "$LOG"
check "... and no warning for the groups that admit none" "$([ $? != 0 ] && echo 0 || echo 1)"
# A written pipeSecurity that gives a caller more than a client needs (GA:
# WRITE_DAC, WRITE_OWNER, DELETE) still works, with a warning naming it.
grep -q "W.*group smb: pipe security gives BA (GA) more than a client needs (WRITE_DAC, WRITE_OWNER or DELETE)" "$LOG"
check "pipeSecurity granting BA GA: a warning at start naming the entry" $? "$(grep -m3 'more than a client' "$LOG")"
grep -q "group filesystem: pipe security gives" "$LOG"
check "... and none for a derived DACL (callers get FRFW)" "$([ $? != 0 ] && echo 0 || echo 1)"

# --- the pipes' security descriptors, read back --------------------------------------
# the process creates every pipe instance, so its own account
# must be granted that right. Under Wine it runs as the Wine user, not SYSTEM:
# the system group's DACL, derived from allowedCallers [SYSTEM,
# ContainerAdministrator], grants neither that user nor a group it holds, so
# csi-proxy adds an entry for it (and logs it); the other groups grant it
# through BUILTIN\Administrators. (Wine does not enforce pipe DACLs, so the
# one-instance failure itself cannot be shown here.)
ME=$(sed -n "s/.*system pipe security (derived from allowedCallers): added full access for this process's account \(S-[0-9-]*\) .*/\1/p" "$LOG" | head -1)
check "a derived DACL that does not let the service's account create pipe instances gets an entry for it (logged: ${ME:-none})" \
    "$([ -n "$ME" ] && echo 0 || echo 1)"
want_of() {
    case $1 in
    smb) echo 'D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GRGW;;;BU)' ;;
    system) echo "D:P(A;;GA;;;SY)(A;;FRFW;;;S-1-5-93-2-1)(A;;GA;;;$ME)" ;;
    iscsi) echo 'D:P(A;;GA;;;SY)(A;;0x12019f;;;BA)' ;;
    *) echo 'D:P(A;;GA;;;SY)(A;;FRFW;;;BA)' ;;
    esac
}
mismatch=""
n=0
for p in filesystem-v1alpha1 filesystem-v1beta1 filesystem-v1beta2 filesystem-v1 filesystem-v2alpha1 \
    disk-v1alpha1 disk-v1beta1 disk-v1beta2 disk-v1beta3 disk-v1 volume-v1alpha1 volume-v1beta1 \
    volume-v1beta2 volume-v1beta3 volume-v1 volume-v2alpha1 smb-v1alpha1 smb-v1beta1 smb-v1beta2 smb-v1 \
    system-v1alpha1 iscsi-v1alpha1 iscsi-v1alpha2; do
    g=${p%%-*}
    svctest norm "$(want_of "$g")"
    want=$OUT
    svctest sddl "csi-proxy-$p"
    if [ "$RC" != 0 ] || [ "$OUT" != "$want" ]; then
        mismatch="$mismatch [$p: got '$OUT' want '$want']"
    else
        n=$((n + 1))
    fi
done
if [ -z "$mismatch" ]; then
    ok "all $n pipes carry their group's protected DACL as configured (read back with GetSecurityInfo)"
else
    bad "pipe DACLs read back as configured" "$mismatch"
fi
svctest sddl csi-proxy-smb-v1
echo "# e.g. smb, configured as $(want_of smb): reads back as $OUT"

# --- who may call ---------------------------------------------------------------------
svctest member
check "this test runs as an admin (Wine's default token): $OUT" "$([ "$OUT" = admin ] && echo 0 || echo 1)"
svctest restricted 'C:\csi\svctest.exe' member
check "a restricted child is not: $OUT" "$([ "$OUT" = "not admin" ] && echo 0 || echo 1)"
# The gate's second judge, one AccessCheck for a group's SIDs
# (security/osjudge_win.h), answers as CheckTokenMembership SID by SID.
svctest osjudge
check "the system judge (AccessCheck) agrees with CheckTokenMembership on 13 token/SID-list cases" \
    "$RC" "$(grep 'not ok' <<<"$OUT")"

expect "an admin client is served (Mkdir)" 0 'status: OK' cli filesystem v1 Mkdir "{\"path\":\"$K\\\\pods\\\\admin\"}"
check "... and the directory exists on the host" "$([ -d "$C/var/lib/kubelet/pods/admin" ] && echo 0 || echo 1)"
expect "a restricted-token client is refused: PERMISSION_DENIED" 7 'not allowed to use the filesystem group' \
    svctest restricted 'C:\csi\csi-proxy-cli.exe' filesystem v1 Mkdir "{\"path\":\"$K\\\\pods\\\\evil\"}"
check "... and nothing was created" "$([ ! -e "$C/var/lib/kubelet/pods/evil" ] && echo 0 || echo 1)"
expect "... on every call of its connection" 7 'PERMISSION_DENIED' \
    svctest restricted 'C:\csi\csi-proxy-cli.exe' --repeat 3 filesystem v1 PathExists "{\"path\":\"$K\"}"
expect "... and on every version of the group" 7 'PERMISSION_DENIED' \
    svctest restricted 'C:\csi\csi-proxy-cli.exe' filesystem v1alpha1 PathExists "{\"path\":\"$K\"}"
grep -qE 'audit: denied caller=S-1-5-21-[0-9-]+ pid=[0-9]+ group=filesystem pipe=csi-proxy-filesystem-v1: process token: .*has S-1-5-32-544 only for deny' "$LOG"
check "the refusal is audited: caller SID, pid, group, pipe and why" $? "$(grep -m2 'audit: denied' "$LOG")"
grep -q 'eventlog:ReportEventW L"audit: denied caller=' "$LOG"
check "... and sent to the Event Log (ReportEventW, a no-op under Wine)" $?
awk '/RegisterEventSourceW/ && !r {r = NR} /eventlog:ReportEventW/ && !w {w = NR} END {exit !(r && w && r < w)}' "$LOG"
check "... the first record registered the event source first (none is lost for coming early)" $? \
    "$(grep -m3 -n 'RegisterEventSource\|eventlog:ReportEventW' "$LOG")"

svctest restricted 'C:\csi\csi-proxy-cli.exe' smb v1 NewSmbGlobalMapping \
    "{\"remote_path\":\"\\\\\\\\srv\\\\share\",\"local_path\":\"$K\\\\pods\\\\smb\",\"username\":\"CORP\\\\svc\",\"password\":\"$SECRET_SMB\"}"
echo "# restricted client on smb v1: $(tail -1 <<<"$OUT")"
check "per-group policy: the smb group admits BUILTIN\\Users, so the restricted client passes its gate (exit $RC, not 7)" \
    "$([ "$RC" != 7 ] && [[ "$OUT" == *"status: "* ]] && echo 0 || echo 1)" "$OUT"
expect "per-group policy: the system group admits only SYSTEM and ContainerAdministrator, so an admin is refused" 7 \
    'not allowed to use the system group' cli system v1alpha1 GetBIOSSerialNumber '{}'

# --- the cache of allowed tokens (gate_win.c, gate_seen) ---------------------------------
# A process token judged allowed for a group is remembered by its TokenId
# and ModifiedId; refusals never are. The attack: be allowed once (and
# remembered), change the token, open a new connection. One process
# (svctest tokcache) makes each call on a new connection and prints its
# token's state before each; the service logs, for every allowance, the
# state it saw and whether it judged it now or found it judged before.
# What Wine 8 lets a process change (probed): AdjustTokenPrivileges moves
# ModifiedId; AdjustTokenGroups is not implemented (ERROR_INVALID_FUNCTION),
# nor is replacing a running process's token (NtSetInformationProcess
# ProcessAccessToken: STATUS_NOT_IMPLEMENTED). So the refusal after an
# in-place group change can only be shown on Windows
# (test/windows/tokcache.ps1); here: a modified token is judged again, and
# a second token made from the remembered one (same groups but
# Administrators deny-only, and under Wine the same ModifiedId) is refused.
OUT=$(timeout -k 5 120 wine 'C:\csi\svctest.exe' tokcache csi-proxy-filesystem-v1 'C:\var\lib\kubelet' \
    S-1-5-32-544 2>&1 | tr -d '\r')
RC=$?
sed 's/^/# tokcache: /' <<<"$OUT"
mapfile -t ST < <(sed -n 's/^token //p' <<<"$OUT")
S1=${ST[0]:-none}
S2=${ST[1]:-none}
allowed_as() { # allowed_as STATE judged|'judged allowed before in this state': count
    grep -cE "allowed on csi-proxy-filesystem-v1: process token $1 $2[[:cntrl:]]?\$" "$LOG" # (CRLF)
}
[[ "$OUT" == *"call unchanged-1: status 0 "* ]] && [ "$(allowed_as "$S1" judged)" = 1 ]
check "token cache: a new admin process is allowed, its token judged (token $S1)" $? \
    "exit $RC; $(grep 'allowed on csi-proxy-filesystem-v1: process token' "$LOG" | tail -3)"
[[ "$OUT" == *"call unchanged-2: status 0 "* ]] &&
    [ "$(allowed_as "$S1" 'judged allowed before in this state')" -ge 1 ]
check "... the same unchanged token on a new connection stays allowed, from the cache" $? \
    "$(grep 'allowed on csi-proxy-filesystem-v1: process token' "$LOG" | tail -3)"
[ "${S1%% *}" = "${S2%% *}" ] && [ "$S1" != "$S2" ] &&
    [[ "$OUT" == *"call privileges-adjusted: status 0 "* ]] && [ "$(allowed_as "$S2" judged)" = 1 ]
check "... the same token modified in place (AdjustTokenPrivileges: $S1 -> $S2) is judged again on its next connection, not taken from the cache" $? \
    "$(grep 'allowed on csi-proxy-filesystem-v1: process token' "$LOG" | tail -3)"
if [[ "$OUT" == *"groups: AdjustTokenGroups disabled S-1-5-32-544"* ]]; then
    # (A Wine that implements AdjustTokenGroups, and lets a process disable
    # a group it marks mandatory: the attack itself.)
    [[ "$OUT" == *"call groups-adjusted: status 7 csi-proxy: this caller is not allowed to use the filesystem group"* ]]
    check "... with BUILTIN\\Administrators disabled in place (${ST[2]:-}), its new connection is PERMISSION_DENIED" $? "$OUT"
else
    [[ "$OUT" == *"groups: AdjustTokenGroups cannot disable S-1-5-32-544: error 1 (not implemented: Wine)"* ]]
    check "... (Wine 8 has no AdjustTokenGroups, ERROR_INVALID_FUNCTION: a group cannot be disabled in place here; test/windows/tokcache.ps1 does it on Windows)" $? "$OUT"
fi
CHILD=$(sed -n 's/^child token //p' <<<"$OUT")
CPID=$(sed -n 's/^child pid //p' <<<"$OUT")
echo "# the restricted child's token: $CHILD (the parent's, remembered: $S2)"
[[ "$OUT" == *"call restricted-child: status 7 csi-proxy: this caller is not allowed to use the filesystem group"* ]] &&
    ! grep -q "allowed on csi-proxy-filesystem-v1: process token $CHILD " "$LOG"
check "... a second token made from the remembered one, Administrators deny-only (token $CHILD), is PERMISSION_DENIED" $? \
    "$OUT; $(grep 'allowed on csi-proxy-filesystem-v1: process token' "$LOG" | tail -3)"
grep -qE "audit: denied caller=S-1-5-21-[0-9-]+ pid=${CPID:-none} group=filesystem pipe=csi-proxy-filesystem-v1: process token: .*has S-1-5-32-544 only for deny" "$LOG"
check "... and the refusal is audited (pid ${CPID:-none}, Administrators only for deny)" $? \
    "$(grep 'audit: denied' "$LOG" | tail -2)"
SL=${ST[-1]:-none} # the parent's state after the child ran
[ "$SL" = "$S2" ] && how='judged allowed before in this state' || how=judged
[[ "$OUT" == *"call after-child: status 0 "* ]] && [ "$(allowed_as "$SL" "$how")" -ge 1 ]
check "... while the allowed token is still allowed (token $SL, $how)" $? "$OUT"

cp build/win/precheck.exe "$C/csi/"
run 'C:\csi\precheck.exe'
PC=$OUT
if grep -q '^[0-9]* passed, 0 failed$' <<<"$PC"; then
    ok "the hand-off check of the reads one look of a loop finds done: one look for all only when no opener among them has exited ($(tail -1 <<<"$PC"))"
else
    bad "the batched hand-off check (precheck.exe)" "$(grep '^not ok' <<<"$PC" | head -5)"
fi
svctest handoff csi-proxy-filesystem-v1
for _ in $(seq 1 100); do # the audit line, within 10 s
    grep -qE 'audit: denied caller=unknown pid=[0-9]+ group=filesystem pipe=csi-proxy-filesystem-v1: (OpenProcess|the client process [0-9]+ has exited)' "$LOG" && break
    sleep 0.1
done
grep -qE 'audit: denied caller=unknown pid=[0-9]+ group=filesystem pipe=csi-proxy-filesystem-v1: (OpenProcess|the client process [0-9]+ has exited)' "$LOG"
check "a connection whose opener exited (handed to another process) is refused and audited" $? \
    "$(grep 'audit: denied' "$LOG" | tail -2)"
# The attack itself: an admin opens, sends one byte (it is identified on
# it and allowed), hands the handle to a child whose token has
# Administrators deny-only, and exits; the child then calls Mkdir.
svctest handoff-call csi-proxy-filesystem-v1 'C:\var\lib\kubelet\pods\handed'
if [[ "$OUT" == *"status: 7 csi-proxy: the process that opened this connection has exited"* ]] &&
    [ ! -e "$C/var/lib/kubelet/pods/handed" ]; then
    ok "a connection an allowed opener handed to a restricted child before exiting: the child's Mkdir is PERMISSION_DENIED, nothing created"
else
    bad "a handed-on connection keeps no rights" "$OUT; $(ls "$C/var/lib/kubelet/pods")"
fi
opener=$(grep -oE 'caller S-1-5-21-[0-9-]+ \(pid [0-9]+\) allowed on csi-proxy-filesystem-v1' "$LOG" | tail -1 | sed -E 's/.*pid ([0-9]+).*/\1/')
grep -qE "audit: denied caller=unknown pid=$opener group=filesystem pipe=csi-proxy-filesystem-v1: call /v1.Filesystem/Mkdir refused: it was read after the process that opened this connection \(pid $opener, allowed as S-1-5-21-[0-9-]+\) had exited, so it comes from a process the connection was handed to" "$LOG"
check "... audited as what happened: Mkdir read after opener pid $opener exited, on a handed-on connection" $? \
    "$(grep 'audit: denied' "$LOG" | tail -2)"
grep -q 'audit: call /v1.Filesystem/Mkdir .*handed' "$LOG"
check "... and no Mkdir is audited as done under the opener's name" "$([ $? != 0 ] && echo 0 || echo 1)"
for _ in 1 2 3 4 5; do svctest touch csi-proxy-filesystem-v1; done
expect "clients that connect and leave before saying anything do no harm" 0 '"exists":true' \
    cli filesystem v1 PathExists "{\"path\":\"$K\\\\pods\\\\admin\"}"

# --- audit trail -----------------------------------------------------------------------
grep -qE 'audit: call /v1.Filesystem/Mkdir caller=S-1-5-21-0-0-0-1000 pid=[0-9]+ args=\{"path":"C:\\\\var\\\\lib\\\\kubelet\\\\pods\\\\admin"\} result=OK duration=[0-9]+ms' "$LOG"
check "a state-changing call is audited: caller SID, pid, method, arguments, result, duration" $? \
    "$(grep -m3 'audit: call' "$LOG")"
expect "a refused path" 3 'not within' cli filesystem v1 Rmdir '{"path":"C:\\windows\\system32","force":true}'
grep -qE 'audit: call /v1.Filesystem/Rmdir .* result=INVALID_ARGUMENT \(.*not within' "$LOG"
check "... is audited with its result" $?
grep -q 'audit: call /v1.Filesystem/PathExists' "$LOG"
check "read-only calls are not audited" "$([ $? != 0 ] && echo 0 || echo 1)"
grep -q 'trace:eventlog:ReportEventW L"audit: call /v1.Filesystem/Mkdir' "$LOG"
check "audit records go to the Event Log too (ReportEventW)" $? "$(grep -m2 eventlog "$LOG")"

# --- secrets never appear --------------------------------------------------------------
# The groups whose requests carry passwords (smb, iscsi) are audited
# below with their secrets <redacted>; log.redactFields: [target_path]
# also puts another implemented, audited
# call's field through the same redaction: a CreateSymlink whose target
# holds the secret, once accepted and once refused with a message that
# repeats it. With redaction off these lines carry the secret.
mkdir -p "$C/var/lib/kubelet/pods/src"
cli filesystem v1 CreateSymlink \
    "{\"source_path\":\"$K\\\\pods\\\\lnk\",\"target_path\":\"$K\\\\pods\\\\$SECRET_TARGET\"}"
cli filesystem v1 CreateSymlink \
    "{\"source_path\":\"$K\\\\pods\\\\src\",\"target_path\":\"C:\\\\elsewhere\\\\$SECRET_TARGET\"}"
echo "# CreateSymlink outside the root: $(tail -1 <<<"$OUT")"
[[ "$OUT" == *"$SECRET_TARGET"* ]] && echo "# (the caller is told its own path; the log must not be)"
sleep 0.5
n_sym=$(grep -c 'audit: call /v1.Filesystem/CreateSymlink .*"target_path":"<redacted>"' "$LOG")
check "the secret-carrying calls were audited ($n_sym CreateSymlink records, target_path <redacted>)" \
    "$([ "$n_sym" = 2 ] && echo 0 || echo 1)" "$(grep 'CreateSymlink' "$LOG" | head -3)"
cli smb v1 NewSmbGlobalMapping \
    "{\"remote_path\":\"\\\\\\\\srv\\\\share\",\"local_path\":\"$K\\\\pods\\\\smb\",\"username\":\"u\",\"password\":\"$SECRET_SMB\"}"
cli smb v1beta1 NewSmbGlobalMapping "{\"remote_path\":\"\\\\\\\\srv\\\\s\",\"local_path\":\"$K\\\\x\",\"password\":\"$SECRET_SMB\"}"
cli iscsi v1alpha2 ConnectTarget \
    "{\"target_portal\":{\"target_address\":\"10.0.0.5\",\"target_port\":3260},\"iqn\":\"iqn.2024-01.x:y\",\"auth_type\":\"MUTUAL_CHAP\",\"chap_username\":\"u\",\"chap_secret\":\"$SECRET_CHAP\"}"
cli iscsi v1alpha2 SetMutualChapSecret "{\"MutualChapSecret\":\"$SECRET_MUTUAL\"}"
sleep 0.5
n_isc=$(grep -cE 'audit: call /v1alpha2.Iscsi/(ConnectTarget|SetMutualChapSecret) .*"(chap_secret|MutualChapSecret)":"<redacted>"' "$LOG")
check "the iscsi calls carrying CHAP secrets were audited, secrets <redacted> ($n_isc records)" \
    "$([ "$n_isc" = 2 ] && echo 0 || echo 1)" "$(grep 'Iscsi' "$LOG" | head -4)"
if grep -qE "$SECRET_SMB|$SECRET_CHAP|$SECRET_MUTUAL|$SECRET_TARGET" "$LOG"; then
    bad "no SMB password or CHAP secret in the log (-v 10) or the Event Log" "$(grep -E "S3cr3t" "$LOG" | head -3)"
else
    ok "no SMB password or CHAP secret in the log at -v 10 nor in the Event Log calls ($(grep -c 'audit:' "$LOG") audit lines checked)"
fi

# --- limits ------------------------------------------------------------------------------
long=$(printf 'a%.0s' $(seq 1 2100))
expect "limits.maxMessageBytes 2048: a larger request is RESOURCE_EXHAUSTED" 8 'larger than max' \
    cli filesystem v1 Mkdir "{\"path\":\"$K\\\\$long\"}"
wine 'C:\csi\pipecheck.exe' -hold 4000 csi-proxy-disk-v1 csi-proxy-disk-v1beta1 csi-proxy-disk-v1beta2 \
    csi-proxy-disk-v1beta3 csi-proxy-volume-v1 csi-proxy-volume-v1beta1 csi-proxy-volume-v1beta2 \
    csi-proxy-volume-v1beta3 >"$WINEPREFIX/hold.out" 2>&1 &
HOLD=$!
BG+=("$HOLD")
for _ in $(seq 1 200); do # until all 8 are open (pipecheck says so before it holds them 4 s)
    [ "$(grep -c '^ok ' "$WINEPREFIX/hold.out")" -ge 8 ] && break
    sleep 0.1
done
expect "limits.maxConnections 8: with 8 held open, another client is turned away (UNAVAILABLE)" 14 '' \
    cli filesystem v1 PathExists "{\"path\":\"$K\"}"
wait "$HOLD"
expect "... and served once they are gone" 0 '"exists":true' cli filesystem v1 PathExists "{\"path\":\"$K\"}"
expect "limits.idleTimeout 2s: an idle connection is closed by the server" 0 'the server closed the connection' \
    cli --hold 5000 filesystem v1 PathExists "{\"path\":\"$K\"}"

n_late=$(grep -c '^W.*audit: denied .*it was read after the process that opened this connection' "$LOG")
check "clients that exit with their last frames unread cause no refusal or audit: only the hand-off's call ($n_late)" \
    "$([ "$n_late" = 1 ] && echo 0 || echo 1)" "$(grep 'read after the process' "$LOG" | head -3)"
if kill -0 "$SPID" 2>/dev/null; then ok "the server is still running"; else bad "the server is still running" "$(tail -5 "$LOG")"; fi
finish
