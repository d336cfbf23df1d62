#!/usr/bin/env bash
# Wine suite: csi-proxy onto a node and off it again, through the node
# scripts (scripts/node/*.cmd, run by Wine's cmd) from a package directory
# standing for the unpacked release archive:
#   - taking over a service created with upstream's `sc.exe create` line,
#     running an older build: its flags kept, the binary swapped in place
#     (the old one kept as .old), while a client calls (no call lost: each
#     is OK, or UNAVAILABLE and the retry is OK);
#   - an upgrade whose new service cannot start (a log file in a missing
#     directory): rolled back, the previous binary and ImagePath back, the
#     old one serving again, exit 3;
#   - `csi-proxy-cli health` both ways; uninstall leaves no service, no
#     event source and no pipes; a fresh install by install.cmd.
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
NEED_SCM=1
. test/wine/service_lib.sh

PKG=$C/pkg # the unpacked release archive
mkdir -p "$PKG" "$C/etc/kubernetes/node/bin" "$C/etc/kubernetes/logs"
cp "$W/csi-proxy.exe" "$W/csi-proxy-cli.exe" scripts/node/*.cmd "$PKG/"

# A build with another version string: the same bytes with the version
# replaced by one of the same length ("v1.3.0-c.0" -> "v0.0.1-c.0").
NEW_VER=$(wine 'C:\pkg\csi-proxy.exe' -version 2>&1 | tr -d '\r' | sed -n 's/^csi-proxy version //p')
with_version() { # SRC DST VERSION-CHAR: every digit of the version becomes the char
    local v=$1 to
    to=$(sed 's/[0-9]/'"$4"'/g' <<<"$v")
    /usr/bin/python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); f=sys.argv[3].encode(); t=sys.argv[4].encode(); assert f in b; open(sys.argv[2],"wb").write(b.replace(f,t))' "$2" "$3" "$v" "$to"
}
version_of() { # WINDOWS-PATH: what its -version prints
    wine "$1" -version 2>&1 | tr -d '\r' | sed -n 's/^csi-proxy version //p'
}
OLD_VER=$(sed 's/[0-9]/0/g' <<<"$NEW_VER")
BAD_VER=$(sed 's/[0-9]/9/g' <<<"$NEW_VER")
with_version "$NEW_VER" "$W/csi-proxy.exe" "$C/etc/kubernetes/node/bin/csi-proxy.exe" 0

qc() { svctest qc csiproxy; sed -n 's/^binpath: //p' <<<"$OUT"; }
health() { cli health "$@"; }

# --- health with nothing installed ---------------------------------------------
expect "health with no service: exit 1, every pipe named" 1 "filesystem v1 FAIL: no pipe" \
    health -deadline 500ms
expect "health refuses an unknown group (exit 3)" 3 'no group "nope"' health nope

# --- take over upstream's sc.exe create line ----------------------------------------
UP_FLAGS='-v=5 -windows-service -log_file=C:\etc\kubernetes\logs\csi-proxy.log -logtostderr=false'
run sc create csiproxy binPath= "C:\\etc\\kubernetes\\node\\bin\\csi-proxy.exe $UP_FLAGS"
check "upstream's sc.exe create line (old build at C:\\etc\\kubernetes\\node\\bin)" "$RC" "$OUT"
run sc start csiproxy
if wait_state csiproxy RUNNING && wait_pipes; then
    ok "the old build serves (version $OLD_VER)"
else
    bad "the old build serves" "state $(state csiproxy)"
fi
expect "health: all up, exit 0" 0 "filesystem v1 ok" health
[ "$(grep -c ' ok ' <<<"$OUT")" = 23 ]
check "... one ok line per pipe (23)" $? "$OUT"
printf 'groups:\n  filesystem: {versions: [v1]}\n' >"$C/csi/fs-only.yaml"
expect "health -config: only the pipes that config serves" 0 "filesystem v1 ok" \
    health -config 'C:\csi\fs-only.yaml'
[ "$(grep -c . <<<"$OUT")" = 1 ]
check "... one line" $? "$OUT"

# A client calling all through the upgrade, on one connection (--repeat):
# the stop must end it with UNAVAILABLE (exit 14), never with another
# error, and a retry must then succeed (on the new build). CALLS gets
# "first rc=N" and then "retry OK after N" or "LOST ...".
CALLS=$WINEPREFIX/calls.log
: >"$CALLS"
(
    out=$(set -o pipefail; wine 'C:\csi\csi-proxy-cli.exe' --repeat 100000000 filesystem v1 PathExists \
        "{\"path\":\"$K\"}" 2>&1 | tr -d '\r')
    rc=$?
    echo "first rc=$rc: $(tail -1 <<<"$out")" >>"$CALLS"
    [ $rc = 14 ] || exit 0
    for tries in $(seq 1 300); do
        wine 'C:\csi\csi-proxy-cli.exe' filesystem v1 PathExists "{\"path\":\"$K\"}" >/dev/null 2>&1
        rc=$?
        if [ $rc = 0 ]; then
            echo "retry OK after $tries" >>"$CALLS"
            exit 0
        elif [ $rc != 14 ]; then
            break
        fi
        sleep 0.2
    done
    echo "LOST: retry rc=$rc" >>"$CALLS"
) &
CLIENT=$!
BG+=("$CLIENT")
sleep 2
(cd "$PKG" && wine cmd /c 'C:\pkg\upgrade.cmd' >"$WINEPREFIX/up.out" 2>&1)
RC=$?
OUT=$(tr -d '\r' <"$WINEPREFIX/up.out")
wait "$CLIENT"
if [ "$RC" = 0 ] && [[ "$OUT" == *"keeping its flags: -v=5 -log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log -logtostderr=false"* &&
    "$OUT" == *"old binary kept as C:\\etc\\kubernetes\\node\\bin\\csi-proxy.exe.old"* &&
    "$OUT" == *"csiproxy is up: all 23 pipes answer"* && "$OUT" == *"upgraded"* &&
    "$OUT" == *"upgraded and healthy"* ]]; then
    ok "upgrade.cmd takes over upstream's service: one line per step, exit 0"
else
    bad "upgrade.cmd takes over upstream's service" "exit $RC: $OUT"
fi
echo "$OUT" | sed 's/^/# /'
want='"C:\etc\kubernetes\node\bin\csi-proxy.exe" -windows-service -v=5 -log_file=C:\etc\kubernetes\logs\csi-proxy.log -logtostderr=false'
got=$(qc)
[ "$got" = "$want" ]
check "... its flags kept in the ImagePath, the binary where it was" $? "got:  $got
want: $want"
[ "$(version_of 'C:\etc\kubernetes\node\bin\csi-proxy.exe')" = "$NEW_VER" ] &&
    [ "$(version_of 'C:\etc\kubernetes\node\bin\csi-proxy.exe.old')" = "$OLD_VER" ]
check "... the new build in place ($NEW_VER), the old one kept beside it ($OLD_VER)" $?
grep -q "Version: $NEW_VER" "$C/etc/kubernetes/logs/csi-proxy.log"
check "... and the new build is what serves (its log line)" $? "$(tail -3 "$C/etc/kubernetes/logs/csi-proxy.log")"
if grep -q '^first rc=14' "$CALLS" && grep -q '^retry OK' "$CALLS"; then
    ok "a client calling through the upgrade: UNAVAILABLE at the stop, its retry OK ($(tr '\n' ';' <"$CALLS"))"
else
    bad "a client calling through the upgrade loses no call" "$(cat "$CALLS")"
fi
expect "health after the upgrade" 0 "smb v1 ok" health

# --- an upgrade whose new service cannot start: rolled back -------------------------
with_version "$NEW_VER" "$W/csi-proxy.exe" "$PKG/csi-proxy.exe" 9
before=$(qc)
(cd "$PKG" && wine cmd /c 'C:\pkg\upgrade.cmd' -log_file='C:\no\such\dir\csi-proxy.log' \
    -logtostderr=false >"$WINEPREFIX/up.out" 2>&1)
RC=$?
OUT=$(tr -d '\r' <"$WINEPREFIX/up.out")
echo "$OUT" | sed 's/^/# /'
if [ "$RC" = 3 ] && [[ "$OUT" == *"did not come up"* && "$OUT" == *"rolled back: the previous csiproxy serves again"* ]]; then
    ok "a new service that cannot start is rolled back: exit 3, said so"
else
    bad "a new service that cannot start is rolled back" "exit $RC: $OUT"
fi
got=$(qc)
[ "$got" = "$before" ]
check "... the previous ImagePath is back" $? "got: $got
want: $before"
[ "$(version_of 'C:\etc\kubernetes\node\bin\csi-proxy.exe')" = "$NEW_VER" ]
check "... the previous binary is back ($NEW_VER, not $BAD_VER)" $?
[ "$(state csiproxy)" = RUNNING ]
check "... the old service runs" $?
expect "... and serves: health exit 0" 0 "iscsi v1alpha2 ok" health

# --- uninstall ----------------------------------------------------------------------
run cmd /c 'C:\pkg\uninstall.cmd'
check "uninstall.cmd: exit 0" "$RC" "$OUT"
[ "$(state csiproxy)" = NONE ]
check "... no service" $? "$(state csiproxy)"
wine reg query 'HKLM\SYSTEM\CurrentControlSet\Services\EventLog\Application\csi-proxy' >/dev/null 2>&1
[ $? != 0 ]
check "... no event source" $?
wait_gone
check "... no pipes" $?
expect "... health says so: exit 1, naming the pipes" 1 "smb v1 FAIL: no pipe" health -deadline 500ms

# --- a fresh install by install.cmd ------------------------------------------------
OUT=$(cd "$PKG" && CSI_PROXY_DIR='C:\node' wine cmd /c 'C:\pkg\install.cmd' -working-dir 'C:\csi-work' \
    -log_file='C:\csi\fresh.log' -logtostderr=false 2>&1 | tr -d '\r')
RC=$?
if [ "$RC" = 0 ] && [[ "$OUT" == *"installing into C:\\node"* && "$OUT" == *"installed and healthy"* ]]; then
    ok "install.cmd on a node without csi-proxy: installed, started, healthy"
else
    bad "install.cmd fresh" "exit $RC: $OUT"
fi
want='"C:\node\csi-proxy.exe" -windows-service -working-dir C:\csi-work -log_file=C:\csi\fresh.log -logtostderr=false'
got=$(qc)
[ "$got" = "$want" ] && [ -f "$C/node/csi-proxy-cli.exe" ]
check "... exes in CSI_PROXY_DIR, the flags in the ImagePath" $? "got: $got"
run cmd /c 'C:\pkg\uninstall.cmd'
wait_gone
check "... and uninstalled again" $?

finish
