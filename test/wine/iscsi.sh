#!/usr/bin/env bash
# Wine suite: the iscsi group of the real build/win/csi-proxy.exe (its Win32
# back-end, host/iscsi_win.c, on iscsidsc.dll) over the named pipes,
# called by build/win/csi-proxy-cli.exe, in a private Wine prefix, at -v 10.
#
#   1. as Wine 8 is: no iscsidsc.dll in system32. All 15 iscsi RPCs (7 of
#      v1alpha1, 8 of v1alpha2) answer FAILED_PRECONDITION saying the
#      initiator API is not installed, after the group's own argument
#      checks; the other groups keep serving. The smb and iscsi calls that
#      carry secrets (SMB password, CHAP secret, mutual CHAP secret) are
#      audited with the secrets <redacted>, and no secret appears in the
#      log or in any answer.
#   2. with a stand-in iscsidsc.dll (test/wine/iscsidsc_fake.c) in the
#      prefix's system32: the back-end's calls, buffer loops and error map
#      end to end: add (idempotent), list, discover, connect (idempotent;
#      CHAP refused and accepted), disks as decimal strings (CD-ROMs left
#      out), mutual CHAP secret (refused and accepted), disconnect (twice),
#      remove (twice); still no secret anywhere. No login is ever made
#      persistent (as upstream: the session does not come back at boot),
#      and a refused login leaves none behind.
#      Portals the initiator would be sent to on loopback (127.0.0.1,
#      2130706433, localhost, [::1]), link-local (169.254.169.254:80) or
#      unspecified (0.0.0.0) addresses are INVALID_ARGUMENT naming the
#      portal and the rule; the stand-in never hears of them.
#   2b. a persistent login an older csi-proxy left (initiator instance
#      empty): DisconnectTarget removes it, passing RemoveIScsiPersistent-
#      TargetW the reported InitiatorInstance, never NULL.
#   3. the same DLL answering as with the MSiSCSI service stopped
#      (ISDSC_SERVICE_NOT_RUNNING; RPC_S_SERVER_UNAVAILABLE): FAILED_
#      PRECONDITION saying the service is not running.
#   4. a DLL without LoginIScsiTargetW: ConnectTarget is FAILED_PRECONDITION
#      naming the missing function; the rest works.
# The stand-in is built from the back-end's own declarations, so this
# shows the logic, not that the structures match Microsoft's DLL (that is
# test/windows/iscsi.ps1's part).
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
wine_suite iscsi csi-proxy.exe csi-proxy-cli.exe pipecheck.exe iscsidsc_fake/iscsidsc.dll iscsidsc_nologin/iscsidsc.dll
expect() { expect_cli "$@"; } # expect NAME WANT_RC SUBSTRING CLI-ARGS...

SECRET_SMB='S3cr3t-smb-pw-9021'
SECRET_CHAP='S3cr3t-chap-4412'  # a wrong CHAP secret (16 bytes)
SECRET_GOOD='fake-secret-1234'  # the stand-in target's secret
SECRET_MUTUAL='S3cr3t-mutual-77' # 16 bytes: accepted
SECRET_SHORT='S3cr3t-sh'         # 9 bytes: refused
ANSWERS=$WINEPREFIX/answers.txt  # every answer the client printed
: >"$ANSWERS"
cli_log() { cli "$@"; printf '%s\n' "$OUT" >>"$ANSWERS"; }
expect_log() { # expect, and keep the answer for the secret check
    local name=$1 want_rc=$2 sub=$3
    shift 3
    expect_run "$name" "$want_rc" "$sub" cli_log "$@"
}

echo "# prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
wineserver -p
C=$WINEPREFIX/drive_c
SYS32=$C/windows/system32
mkdir -p "$C/csi" "$C/var/lib/kubelet/pods" "$C/csi-work"
cp "$W/csi-proxy.exe" "$W/csi-proxy-cli.exe" "$W/pipecheck.exe" "$C/csi/"
K='C:\\var\\lib\\kubelet'
STATE=$C/iscsi-state.txt # the stand-in's persistent logins (CP_FAKE_ISCSI_STATE)
persistent() { # the stand-in's persistent-login lines
    grep '^persistent ' "$STATE" 2>/dev/null
}

LOG=
start() { # start NAME [ENV=VALUE ...]: csi-proxy.exe at -v 10, log in $WINEPREFIX/NAME.log
    LOG=$WINEPREFIX/$1.log
    shift
    env "$@" wine 'C:\csi\csi-proxy.exe' -working-dir 'C:\csi-work' -v 10 >"$LOG" 2>&1 &
    PID=$!
    for _ in $(seq 1 200); do
        wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    bad "csi-proxy.exe starts" "$(cat "$LOG")"
    return 1
}
stop() {
    kill "$PID" 2>/dev/null
    wait "$PID" 2>/dev/null
    PID=
    for _ in $(seq 1 100); do
        wine 'C:\csi\pipecheck.exe' >/dev/null 2>&1 || return 0
        sleep 0.05
    done
}
serves() { # the filesystem group still answers
    expect "$1: the service still serves other pipes" 0 '"exists":true' filesystem v1 PathExists "{\"path\":\"$K\"}"
}

P='"target_portal":{"target_address":"192.0.2.10","target_port":0}'
T1='"iqn":"iqn.2024-01.test:t1"'
TC='"iqn":"iqn.2024-01.test:chap"'

# --- 1. Wine as it is: no iscsidsc.dll ----------------------------------------------
if [ -e "$SYS32/iscsidsc.dll" ]; then
    bad "Wine's system32 has no iscsidsc.dll" "$(ls -la "$SYS32/iscsidsc.dll")"
else
    ok "Wine's system32 has no iscsidsc.dll (Wine 8 ships none)"
fi
start absent || exit 1
ABSENT='the iSCSI initiator API (iscsidsc.dll in system32) is not installed'
for v in v1alpha1 v1alpha2; do
    expect_log "absent $v AddTargetPortal: FAILED_PRECONDITION" 9 "$ABSENT" iscsi $v AddTargetPortal "{$P}"
    expect_log "absent $v DiscoverTargetPortal: FAILED_PRECONDITION" 9 "$ABSENT" iscsi $v DiscoverTargetPortal "{$P}"
    expect_log "absent $v RemoveTargetPortal: FAILED_PRECONDITION" 9 "$ABSENT" iscsi $v RemoveTargetPortal "{$P}"
    expect_log "absent $v ListTargetPortals: FAILED_PRECONDITION" 9 "$ABSENT" iscsi $v ListTargetPortals '{}'
    expect_log "absent $v ConnectTarget (CHAP): FAILED_PRECONDITION" 9 "$ABSENT" iscsi $v ConnectTarget \
        "{$P,$T1,\"auth_type\":\"ONE_WAY_CHAP\",\"chap_username\":\"u\",\"chap_secret\":\"$SECRET_CHAP\"}"
    expect_log "absent $v DisconnectTarget: FAILED_PRECONDITION (not a no-op success)" 9 "$ABSENT" \
        iscsi $v DisconnectTarget "{$P,$T1}"
    expect_log "absent $v GetTargetDisks: FAILED_PRECONDITION (not an empty list)" 9 "$ABSENT" \
        iscsi $v GetTargetDisks "{$P,$T1}"
    expect_log "absent $v: a missing target_portal is INVALID_ARGUMENT before the host is asked" 3 \
        'target_portal is required' iscsi $v ConnectTarget "{$T1}"
done
expect_log "absent v1alpha2 SetMutualChapSecret: FAILED_PRECONDITION" 9 "$ABSENT" \
    iscsi v1alpha2 SetMutualChapSecret "{\"MutualChapSecret\":\"$SECRET_MUTUAL\"}"
cli_log smb v1 NewSmbGlobalMapping \
    "{\"remote_path\":\"\\\\\\\\fs1.example.com\\\\share\",\"local_path\":\"$K\\\\pods\\\\smb\",\"username\":\"u1\",\"password\":\"$SECRET_SMB\"}"
echo "# smb NewSmbGlobalMapping (with a password): $(head -1 <<<"$OUT")"
serves absent
sleep 0.3
n=$(grep -cE 'audit: call /v1alpha[12].Iscsi/(ConnectTarget|SetMutualChapSecret) .*"(chap_secret|MutualChapSecret)":"<redacted>"' "$LOG")
# (the audit renders every field, so the two ConnectTarget calls without a
# portal show an empty chap_secret as <redacted> too: 4 + 1)
check "absent: every ConnectTarget and SetMutualChapSecret is audited with its secret field <redacted> ($n records)" \
    "$([ "$n" = 5 ] && echo 0 || echo 1)" "$(grep -E 'audit: call .*Iscsi/(ConnectTarget|SetMutual)' "$LOG" | cut -c1-250)"
grep -qE 'audit: call /v1.Smb/NewSmbGlobalMapping .*"password":"<redacted>"' "$LOG"
check "absent: the smb call carrying a password is audited with it <redacted>" $? "$(grep 'Smb' "$LOG" | head -2)"
stop

# --- 2. a stand-in iscsidsc.dll ---------------------------------------------------
cp "$W/iscsidsc_fake/iscsidsc.dll" "$SYS32/iscsidsc.dll"
start fake 'CP_FAKE_ISCSI_STATE=C:\iscsi-state.txt' || exit 1
expect_log "fake: ListTargetPortals with none registered is empty" 0 'status: OK' iscsi v1alpha2 ListTargetPortals '{}'
expect_log "fake: AddTargetPortal (port 0 is 3260)" 0 'status: OK' iscsi v1alpha2 AddTargetPortal "{$P}"
expect_log "fake: AddTargetPortal again is a no-op success" 0 'status: OK' iscsi v1alpha1 AddTargetPortal \
    '{"target_portal":{"target_address":"192.0.2.10","target_port":3260}}'
expect_log "fake: ListTargetPortals shows it once, port 3260" 0 '"target_portals":[{"target_address":"192.0.2.10","target_port":3260}]' \
    iscsi v1alpha2 ListTargetPortals '{}'
expect_log "fake: an unreachable portal is UNAVAILABLE naming it and the cause" 14 \
    'AddIScsiSendTargetPortalW target portal unreachable.example:3260: Connection failed (ISDSC_CONNECTION_FAILED)' \
    iscsi v1alpha2 AddTargetPortal '{"target_portal":{"target_address":"unreachable.example"}}'
for a in 127.0.0.1 2130706433 localhost '[::1]' 0.0.0.0; do
    expect_log "fake: AddTargetPortal $a is INVALID_ARGUMENT naming the portal and the rule" 3 \
        "target portal $a:3260: $a is a" iscsi v1alpha2 AddTargetPortal "{\"target_portal\":{\"target_address\":\"$a\"}}"
done
expect_log "fake: AddTargetPortal 169.254.169.254:80 is INVALID_ARGUMENT: link-local" 3 \
    'target portal 169.254.169.254:80: 169.254.169.254 is a link-local address' \
    iscsi v1alpha1 AddTargetPortal '{"target_portal":{"target_address":"169.254.169.254","target_port":80}}'
expect_log "fake: ConnectTarget through 127.0.0.1 is INVALID_ARGUMENT too" 3 'is a loopback address' \
    iscsi v1alpha2 ConnectTarget '{"target_portal":{"target_address":"127.0.0.1"},"iqn":"iqn.2024-01.test:t1"}'
expect_log "fake: ... none of them reached the initiator" 0 '"target_portals":[{"target_address":"192.0.2.10","target_port":3260}]' \
    iscsi v1alpha2 ListTargetPortals '{}'
expect_log "fake: DiscoverTargetPortal lists the portal's targets" 0 '"iqns":["iqn.2024-01.test:t1","iqn.2024-01.test:chap"]' \
    iscsi v1alpha2 DiscoverTargetPortal "{$P}"
expect_log "fake: DiscoverTargetPortal of a portal not registered is NOT_FOUND naming it" 5 \
    'target portal 10.9.9.9:3260 is not registered' iscsi v1alpha1 DiscoverTargetPortal \
    '{"target_portal":{"target_address":"10.9.9.9"}}'
expect_log "fake: ConnectTarget (no authentication)" 0 'status: OK' iscsi v1alpha2 ConnectTarget "{$P,$T1}"
expect_log "fake: ConnectTarget again is a no-op success" 0 'status: OK' iscsi v1alpha1 ConnectTarget "{$P,$T1}"
check "fake: ConnectTarget made no persistent login (none asked, none recorded; upstream never makes one)" \
    "$(grep -qx 'persistent-login-calls 0' "$STATE" && [ -z "$(persistent)" ] && echo 0 || echo 1)" \
    "$(cat "$STATE" 2>&1)"
expect_log "fake: GetTargetDisks: the disk numbers as decimal strings, the CD-ROM left out" 0 '"diskIDs":["3","4"]' \
    iscsi v1alpha2 GetTargetDisks "{$P,$T1}"
expect_log "fake: ConnectTarget of an unknown target is NOT_FOUND naming it" 5 \
    'LoginIScsiTargetW target iqn.2024-01.test:nope through target portal 192.0.2.10:3260: The target name is not found' \
    iscsi v1alpha2 ConnectTarget "{$P,\"iqn\":\"iqn.2024-01.test:nope\"}"
expect_log "fake: ConnectTarget with a wrong CHAP secret is PERMISSION_DENIED naming the target" 7 \
    'LoginIScsiTargetW target iqn.2024-01.test:chap through target portal 192.0.2.10:3260: Authentication failure (ISDSC_AUTHENTICATION_FAILURE)' \
    iscsi v1alpha2 ConnectTarget "{$P,$TC,\"auth_type\":\"ONE_WAY_CHAP\",\"chap_username\":\"chapuser\",\"chap_secret\":\"$SECRET_CHAP\"}"
expect_log "fake: the refused target has no disks (not connected: an empty list)" 0 'status: OK' \
    iscsi v1alpha2 GetTargetDisks "{$P,$TC}"
[[ "$OUT" == *diskIDs* ]] && bad "fake: ... and no diskIDs" "$OUT"
check "fake: the refused logins left no persistent login behind" \
    "$([ -z "$(persistent)" ] && echo 0 || echo 1)" "$(cat "$STATE" 2>&1)"
expect_log "fake: ConnectTarget with the right CHAP user and secret" 0 'status: OK' iscsi v1alpha2 ConnectTarget \
    "{$P,$TC,\"auth_type\":\"ONE_WAY_CHAP\",\"chap_username\":\"chapuser\",\"chap_secret\":\"$SECRET_GOOD\"}"
expect_log "fake: GetTargetDisks of the CHAP target" 0 '"diskIDs":["5"]' iscsi v1alpha1 GetTargetDisks "{$P,$TC}"
expect_log "fake: a 9-byte mutual CHAP secret is INVALID_ARGUMENT with Windows' reason" 3 \
    'SetIScsiInitiatorCHAPSharedSecret (the initiator'"'"'s mutual CHAP secret): The CHAP secret is not valid (it must be 12 to 16 bytes) (ISDSC_INVALID_CHAP_SECRET)' \
    iscsi v1alpha2 SetMutualChapSecret "{\"MutualChapSecret\":\"$SECRET_SHORT\"}"
expect_log "fake: a 16-byte mutual CHAP secret is set" 0 'status: OK' \
    iscsi v1alpha2 SetMutualChapSecret "{\"MutualChapSecret\":\"$SECRET_MUTUAL\"}"
expect_log "fake: DisconnectTarget" 0 'status: OK' iscsi v1alpha2 DisconnectTarget "{$P,$T1}"
expect_log "fake: ... its disks are gone (an empty list)" 0 'status: OK' iscsi v1alpha2 GetTargetDisks "{$P,$T1}"
[[ "$OUT" == *diskIDs* ]] && bad "fake: ... and no diskIDs" "$OUT"
expect_log "fake: DisconnectTarget of a target not connected is a no-op success" 0 'status: OK' \
    iscsi v1alpha1 DisconnectTarget "{$P,$T1}"
expect_log "fake: ConnectTarget after DisconnectTarget logs in again" 0 'status: OK' iscsi v1alpha2 ConnectTarget "{$P,$T1}"
check "fake: after every connect, still no persistent login" \
    "$(grep -qx 'persistent-login-calls 0' "$STATE" && [ -z "$(persistent)" ] && echo 0 || echo 1)" \
    "$(cat "$STATE" 2>&1)"
expect_log "fake: RemoveTargetPortal" 0 'status: OK' iscsi v1alpha2 RemoveTargetPortal "{$P}"
expect_log "fake: RemoveTargetPortal again is NOT_FOUND naming the portal" 5 'target portal 192.0.2.10:3260 is not registered' \
    iscsi v1alpha1 RemoveTargetPortal "{$P}"
serves fake
stop

# --- 2b. a persistent login an older csi-proxy left ----------------------------------
rm -f "$STATE"
start left 'CP_FAKE_ISCSI_STATE=C:\iscsi-state.txt' CP_FAKE_ISCSI_LEFT=iqn.2024-01.test:t1 || exit 1
expect_log "left: AddTargetPortal" 0 'status: OK' iscsi v1alpha2 AddTargetPortal "{$P}"
check "left: the stand-in holds the old persistent login (initiator instance empty)" \
    "$([ "$(persistent)" = 'persistent iqn.2024-01.test:t1 instance=' ] && echo 0 || echo 1)" "$(cat "$STATE" 2>&1)"
expect_log "left: DisconnectTarget of the target with only a persistent login" 0 'status: OK' \
    iscsi v1alpha2 DisconnectTarget "{$P,$T1}"
check "left: ... removed the persistent login (InitiatorInstance passed as reported, not NULL)" \
    "$([ -z "$(persistent)" ] && echo 0 || echo 1)" "$(cat "$STATE" 2>&1)"
expect_log "left: ConnectTarget then makes a session only" 0 'status: OK' iscsi v1alpha2 ConnectTarget "{$P,$T1}"
check "left: ... and no persistent login" \
    "$(grep -qx 'persistent-login-calls 0' "$STATE" && [ -z "$(persistent)" ] && echo 0 || echo 1)" "$(cat "$STATE" 2>&1)"
expect_log "left: DisconnectTarget" 0 'status: OK' iscsi v1alpha2 DisconnectTarget "{$P,$T1}"
stop

# --- 3. the initiator service not running -------------------------------------------
start stopped CP_FAKE_ISCSI=stopped || exit 1
expect_log "service stopped: ListTargetPortals is FAILED_PRECONDITION saying MSiSCSI is not running" 9 \
    'ReportIScsiSendTargetPortalsExW: the iSCSI initiator service (MSiSCSI) is not running (ISDSC_SERVICE_NOT_RUNNING, error 0xefff003e)' \
    iscsi v1alpha2 ListTargetPortals '{}'
expect_log "service stopped: ConnectTarget too" 9 'the iSCSI initiator service (MSiSCSI) is not running' \
    iscsi v1alpha1 ConnectTarget "{$P,$T1}"
serves stopped
stop
start rpc CP_FAKE_ISCSI=rpc || exit 1
expect_log "service unreachable by RPC: DisconnectTarget is FAILED_PRECONDITION, not a no-op" 9 \
    'the iSCSI initiator service (MSiSCSI) is not running (RPC_S_SERVER_UNAVAILABLE, error 0x000006ba)' \
    iscsi v1alpha2 DisconnectTarget "{$P,$T1}"
serves rpc
stop

# --- 4. a DLL without LoginIScsiTargetW ----------------------------------------------
cp "$W/iscsidsc_nologin/iscsidsc.dll" "$SYS32/iscsidsc.dll"
start nologin || exit 1
expect_log "no LoginIScsiTargetW: ConnectTarget is FAILED_PRECONDITION naming it" 9 \
    'the iSCSI initiator API (iscsidsc.dll in system32) has no LoginIScsiTargetW' iscsi v1alpha2 ConnectTarget "{$P,$T1}"
expect_log "no LoginIScsiTargetW: AddTargetPortal still works" 0 'status: OK' iscsi v1alpha2 AddTargetPortal "{$P}"
serves nologin
stop

# --- no secret anywhere --------------------------------------------------------------
hits=$(grep -lE "$SECRET_SMB|$SECRET_CHAP|$SECRET_GOOD|$SECRET_MUTUAL|$SECRET_SHORT" "$WINEPREFIX"/*.log "$ANSWERS" 2>/dev/null)
if [ -z "$hits" ]; then
    ok "no SMB password or CHAP secret in any log at -v 10 or any answer ($(cat "$WINEPREFIX"/*.log | grep -c 'audit:') audit lines, $(grep -c '^status:' "$ANSWERS") answers)"
else
    bad "no SMB password or CHAP secret in any log at -v 10 or any answer" "$(grep -hE 'S3cr3t|fake-secret' $hits | head -3)"
fi
finish
