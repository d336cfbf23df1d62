#!/usr/bin/env bash
# Wine suite: csi-proxy onto a node and off it again, from the release
# archive (make dist, build/dist/csi-proxy-<version>-windows-amd64.zip)
# unpacked into this fresh prefix where Packer's install.ps1 puts it
# (C:\Program Files\csi-proxy\releases\<version>: a path with a space),
# its SHA256SUMS checked there, and driven only through the node scripts
# in it (install.cmd, upgrade.cmd, uninstall.cmd, run by Wine's cmd):
#   - taking over a service created with upstream's `sc.exe create` line,
#     running an older build (the archive's exe with its version string
#     patched): its flags kept, the binary swapped in place (the old one
#     kept as .old), while a client calls (no call lost: each is OK, or
#     UNAVAILABLE and the retry is OK); the default config file
#     (C:\ProgramData\csi-proxy\config.yaml) refuses this caller on the
#     system group: the install's wait and `csi-proxy-cli health` both
#     count its PERMISSION_DENIED as up (the pipe answered);
#   - an upgrade whose new service cannot start (a log file in a missing
#     directory), from a second unpacked release: rolled back, the previous
#     binary and ImagePath back, the old one serving again, exit 3;
#   - `csi-proxy-cli health` both ways, and its warning for a page-file
#     entry whose volume cannot be told; uninstall leaves no service, no
#     event source and no pipes; a fresh install by install.cmd with
#     CSI_PROXY_DIR and CSI_PROXY_CONFIG, the installed exes the archive's.
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
# make dist first (before service_lib.sh copies build/win's exes): up to
# date after `make` it only re-zips, and the archive is then this tree's,
# never a stale one left in build/dist.
if ! out=$(make -s dist 2>&1); then
    echo "not ok - make dist"
    printf '%s\n' "$out" | tail -20 | sed 's/^/    /'
    echo "0 passed, 1 failed"
    exit 1
fi
NEED_SCM=1
. test/wine/service_lib.sh

# --- the release archive, unpacked into the prefix -----------------------------------
V=$(scripts/dist/version.sh)
Z=build/dist/csi-proxy-$V-windows-amd64.zip
REL_WIN="C:\\Program Files\\csi-proxy\\releases\\$V"
PKG="$C/Program Files/csi-proxy/releases/$V"
unpack() { # ZIP DIR: Python's zipfile, as Expand-Archive would (no unzip needed)
    /usr/bin/python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"
}
mkdir -p "$PKG" "$C/etc/kubernetes/node/bin" "$C/etc/kubernetes/logs"
unpack "$Z" "$PKG"
out=$(cd "$PKG" && sha256sum -c --strict SHA256SUMS 2>&1)
check "$(basename "$Z") unpacked into $REL_WIN: SHA256SUMS checks out there" $? "$out"
for f in install.cmd upgrade.cmd uninstall.cmd csi-proxy.exe csi-proxy-cli.exe; do
    [ -f "$PKG/$f" ] && grep -q "  $f\$" "$PKG/SHA256SUMS" || bad "the archive has $f, listed in SHA256SUMS"
done
pkg() { # SCRIPT ARGS...: a node script of the unpacked release, run by cmd from its directory
    local s=$1
    shift
    OUT=$(cd "$PKG" && set -o pipefail && wine cmd /c "$REL_WIN\\$s" "$@" 2>&1 | tr -d '\r')
    RC=$?
}

# The older build: the archive's exe with every digit of its version
# string replaced (same length: "v1.3.0-c.0-g..." -> "v0.0.0-c.0-g...").
NEW_VER=$(wine "$REL_WIN\\csi-proxy.exe" -version 2>&1 | tr -d '\r' | sed -n 's/^csi-proxy version //p')
[ "$NEW_VER" = "$V" ]
check "the archive's csi-proxy.exe prints the archive's version ($V)" $? "it prints: $NEW_VER"
with_version() { # VERSION SRC DST CHAR: every digit of the version becomes CHAR
    local v=$1 to
    to=$(sed 's/[0-9]/'"$4"'/g' <<<"$v")
    /usr/bin/python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); f=sys.argv[3].encode(); t=sys.argv[4].encode(); assert f in b; open(sys.argv[2],"wb").write(b.replace(f,t))' "$2" "$3" "$v" "$to"
}
version_of() { # WINDOWS-PATH: what its -version prints
    wine "$1" -version 2>&1 | tr -d '\r' | sed -n 's/^csi-proxy version //p'
}
OLD_VER=$(sed 's/[0-9]/0/g' <<<"$NEW_VER")
BAD_VER=$(sed 's/[0-9]/9/g' <<<"$NEW_VER")
with_version "$NEW_VER" "$PKG/csi-proxy.exe" "$C/etc/kubernetes/node/bin/csi-proxy.exe" 0

qc() { svctest qc csiproxy; sed -n 's/^binpath: //p' <<<"$OUT"; }
health() { run "$REL_WIN\\csi-proxy-cli.exe" health "$@"; }

# --- health with nothing installed ---------------------------------------------
expect "health with no service: exit 1, every pipe named" 1 "filesystem v1 FAIL: no pipe" \
    health -deadline 500ms
expect "health refuses an unknown group (exit 3)" 3 'no group "nope"' health nope

# --- take over upstream's sc.exe create line ----------------------------------------
UP_FLAGS='-v=5 -windows-service -log_file=C:\etc\kubernetes\logs\csi-proxy.log -logtostderr=false'
run sc create csiproxy binPath= "C:\\etc\\kubernetes\\node\\bin\\csi-proxy.exe $UP_FLAGS"
check "upstream's sc.exe create line (old build at C:\\etc\\kubernetes\\node\\bin)" "$RC" "$OUT"
# The default config file, read by the service, by install's wait and by
# health alike: every group served, the system group admitting SYSTEM only
# (this test runs as the Wine user, an admin, not SYSTEM). Wine quirk: a
# service started by Wine's services.exe gets ProgramData=C:\users\Public
# (the registry's ProfileList and every other process say C:\ProgramData),
# so the service's copy goes there too.
for d in "$C/ProgramData/csi-proxy" "$C/users/Public/csi-proxy"; do
    mkdir -p "$d"
    printf 'groups:\n  filesystem: {}\n  disk: {}\n  volume: {}\n  smb: {}\n  iscsi: {}\n  system:\n    allowedCallers: [SYSTEM]\n' \
        >"$d/config.yaml"
done
run sc start csiproxy
if wait_state csiproxy RUNNING && wait_pipes; then
    ok "the old build serves (version $OLD_VER)"
else
    bad "the old build serves" "state $(state csiproxy)"
fi
expect "health: all up, exit 0" 0 "filesystem v1 ok" health
[ "$(grep -c ' ok ' <<<"$OUT")" = 23 ]
check "... one ok line per pipe (23)" $? "$OUT"
grep -q '^system v1alpha1 ok .*this caller is not allowed: PERMISSION_DENIED' <<<"$OUT"
check "... the system pipe, which refuses this caller (config.yaml in C:\\ProgramData\\csi-proxy), counts as up: it answered PERMISSION_DENIED" $? \
    "$(grep '^system' <<<"$OUT"; grep -m3 'configuration\|group system' "$C/etc/kubernetes/logs/csi-proxy.log")"
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
(cd "$PKG" && wine cmd /c "$REL_WIN\\upgrade.cmd" >"$WINEPREFIX/up.out" 2>&1)
RC=$?
OUT=$(tr -d '\r' <"$WINEPREFIX/up.out")
wait "$CLIENT"
if [ "$RC" = 0 ] && [[ "$OUT" == *"keeping its flags: -v=5 -log_file=C:\\etc\\kubernetes\\logs\\csi-proxy.log -logtostderr=false"* &&
    "$OUT" == *"old binary kept as C:\\etc\\kubernetes\\node\\bin\\csi-proxy.exe.old"* &&
    "$OUT" == *"csiproxy is up: all 23 pipes answer"* && "$OUT" == *"upgraded"* &&
    "$OUT" == *"upgraded and healthy"* ]]; then
    ok "upgrade.cmd takes over upstream's service: one line per step, exit 0 (its wait counts the system pipe's PERMISSION_DENIED as up)"
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
# A page-file entry whose volume cannot be told (a relative path, which
# GetVolumePathNameW would answer with the boot volume) is named by health
# as a warning; the pipes are up, so the exit stays 0.
MM='HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management'
wine reg add "$MM" /v PagingFiles /t REG_MULTI_SZ /d 'pagefile.sys 0 0' /f >/dev/null 2>&1
expect "health names a page-file entry whose volume cannot be told (a warning, exit 0)" 0 \
    'warning: page file entry "pagefile.sys 0 0" (HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management\PagingFiles): its volume cannot be told (not an absolute path)' \
    health
wine reg delete "$MM" /v PagingFiles /f >/dev/null 2>&1

# --- an upgrade whose new service cannot start: rolled back -------------------------
# A second release unpacked beside the first, its exe another version.
BAD_PKG="$C/Program Files/csi-proxy/releases/$BAD_VER"
cp -a "$PKG" "$BAD_PKG"
with_version "$NEW_VER" "$PKG/csi-proxy.exe" "$BAD_PKG/csi-proxy.exe" 9
before=$(qc)
(cd "$BAD_PKG" && wine cmd /c "C:\\Program Files\\csi-proxy\\releases\\$BAD_VER\\upgrade.cmd" \
    -log_file='C:\no\such\dir\csi-proxy.log' -logtostderr=false >"$WINEPREFIX/up.out" 2>&1)
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

# --- install.cmd over a registered but stopped service ----------------------------
# (an image whose bootstrap starts csi-proxy later): the exe's takeover keeps
# it stopped, the node script starts it and checks its health.
wine sc stop csiproxy >/dev/null 2>&1
wait_state csiproxy STOPPED
check "the service stopped (sc stop)" $? "$(state csiproxy)"
pkg install.cmd
[ "$RC" = 0 ] && [[ "$OUT" == *"installed and healthy"* ]]
check "install.cmd over a stopped csiproxy: started and healthy, exit 0" $? "exit $RC: $OUT"
[ "$(state csiproxy)" = RUNNING ]
check "... the service runs" $? "$(state csiproxy)"

# --- uninstall ----------------------------------------------------------------------
pkg uninstall.cmd
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
# No default config file now; CSI_PROXY_CONFIG names one (filesystem v1
# only): install.cmd passes it on as -config, into the ImagePath and to
# its health check.
rm -f "$C/ProgramData/csi-proxy/config.yaml" "$C/users/Public/csi-proxy/config.yaml"
OUT=$(cd "$PKG" && set -o pipefail && CSI_PROXY_DIR='C:\node' CSI_PROXY_CONFIG='C:\csi\fs-only.yaml' \
    wine cmd /c "$REL_WIN\\install.cmd" -working-dir 'C:\csi-work' \
    -log_file='C:\csi\fresh.log' -logtostderr=false 2>&1 | tr -d '\r')
RC=$?
if [ "$RC" = 0 ] && [[ "$OUT" == *"installing into C:\\node"* && "$OUT" == *"installed and healthy"* ]] &&
    [ "$(grep -c ' ok ' <<<"$OUT")" = 1 ]; then
    ok "install.cmd on a node without csi-proxy: installed, started, healthy (one pipe: CSI_PROXY_CONFIG's)"
else
    bad "install.cmd fresh" "exit $RC: $OUT"
fi
want='"C:\node\csi-proxy.exe" -windows-service -config C:\csi\fs-only.yaml -working-dir C:\csi-work -log_file=C:\csi\fresh.log -logtostderr=false'
got=$(qc)
[ "$got" = "$want" ]
check "... the flags and CSI_PROXY_CONFIG's -config in the ImagePath" $? "got:  $got
want: $want"
cmp -s "$C/node/csi-proxy.exe" "$PKG/csi-proxy.exe" && cmp -s "$C/node/csi-proxy-cli.exe" "$PKG/csi-proxy-cli.exe"
check "... the archive's exes, in CSI_PROXY_DIR" $?
pkg uninstall.cmd
wait_gone
check "... and uninstalled again" $?

finish
