#!/usr/bin/env bash
# The release archive (make dist):
#   * its name carries scripts/dist/version.sh's version, and the programs
#     print exactly that (csi-proxy.exe -version and csi-proxy-cli.exe
#     --version under Wine, from the archive; the native build too);
#   * it holds exactly the files it should (the exes, config/*.example.yaml,
#     scripts/node/*.cmd, the node self-test test/windows/selftest.ps1 and the
#     common.ps1 it dot-sources, the operators' README, LICENSE if any,
#     SHA256SUMS),
#     the exes byte-identical to build/win's, and SHA256SUMS and the .sha256
#     beside it both check out;
#   * the tar.gz (bin/csi-proxy.exe, as AKS, aks-engine and Rancher's wins
#     unpack it), the bare <version>/csi-proxy.exe (as GKE's kube-up
#     downloads it), their .sha256 files and the SPDX SBOM of the zip:
#     test/dist/layouts.py;
#   * no build time in it: the PE headers and resource directories of both
#     exes carry no timestamp, no __DATE__/__TIME__ in the sources, and a
#     second build of the same tree, in a fresh copy in another directory
#     (a path of another length) with its own build tree, gives the same
#     archive, tar.gz, bare exe, .sha256 files and SBOM byte for byte;
#   * no build path in it: the exes hold no absolute source path (the
#     deps' assert()s used to carry build/deps/src/... of the tree that
#     built them), so where the tree sits does not matter.
#     The second build cross-builds its own deps (scripts/build-deps.sh, in
#     its own build/deps, from a copy of the Debian sources already fetched
#     in build/deps/src, so no network) and then makes only what the
#     archive holds (`make dist`: the two exes, no tests, no Go client, no
#     native build): checked (deps rebuilt there, no other program built).
# DIST_SKIP_REBUILD=1 skips the second build (minutes of CPU). SKIP_WINE=1
# (as for test/run-all.sh) skips only the two version checks under Wine.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
pass=0
fail=0
PY=/usr/bin/python3
T=$(mktemp -d /tmp/csi-proxy-dist.XXXXXX)
export WINEDEBUG=-all WINEPREFIX=$T/wineprefix
cleanup() {
    wineserver -k 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

# A longer path than most checkouts, and never the same as this tree's.
S=$T/a-second-checkout-elsewhere/src
# The copy for the second build is taken first, so that both builds see the
# same files. The tree as git sees it (tracked and untracked-but-not-ignored files,
# uncommitted changes included), without .git: the version and the date
# are handed over as a build from a source tarball would be.
mkdir -p "$S/build/deps"
git ls-files -co --exclude-standard -z | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
    tar -cf - --null -T - | tar -xf - -C "$S"
# The Debian sources as fetched (the deps themselves are rebuilt in $S).
[ -d build/deps/src ] && cp -a build/deps/src "$S/build/deps/"
touch "$S/build/.tools-stamp"
mtime=$(git log -1 --format=%ct 2>/dev/null || echo 315532800)

if ! make -s dist build/native/csi-proxy >"$T/make.log" 2>&1; then
    bad "make dist" "$(tail -20 "$T/make.log")"
    finish
    exit 1
fi
V=$(scripts/dist/version.sh)
Z=build/dist/csi-proxy-$V-windows-amd64.zip
check "make dist wrote $Z" "$([ -f "$Z" ] && [ -f "$Z.sha256" ]; echo $?)"
[ -f "$Z" ] || { finish; exit 1; }
hdr=$(sed -n 's/^#define CP_VERSION "\(.*\)"$/\1/p' build/gen/cp_version.h)
check "the compiled-in version is version.sh's ($hdr)" "$([ "$hdr" = "$V" ]; echo $?)" "header: $hdr, version.sh: $V"

# --- contents ---------------------------------------------------------------
want=$( (printf '%s\n' csi-proxy.exe csi-proxy-cli.exe README-operators.txt SHA256SUMS selftest.ps1 common.ps1
    for f in config/*.example.yaml scripts/node/*.cmd LICENSE NOTICE; do [ -f "$f" ] && basename "$f"; done) | sort)
got=$($PY -c 'import sys, zipfile; print("\n".join(sorted(zipfile.ZipFile(sys.argv[1]).namelist())))' "$Z")
check "the archive holds exactly: $(echo $want)" "$([ "$want" = "$got" ]; echo $?)" "$(diff <(echo "$want") <(echo "$got"))"
mkdir -p "$T/x"
(cd "$T/x" && unzip -q "$OLDPWD/$Z")
out=$(cd "$T/x" && sha256sum -c --strict SHA256SUMS 2>&1)
check "SHA256SUMS checks out" $? "$out"
listed=$(awk '{print $2}' "$T/x/SHA256SUMS" | sort)
check "SHA256SUMS lists every other file" "$([ "$listed" = "$(grep -vx SHA256SUMS <<<"$want")" ]; echo $?)" "$listed"
out=$(cd build/dist && sha256sum -c --strict "$(basename "$Z").sha256" 2>&1)
check "the archive's .sha256 checks out" $? "$out"
for e in csi-proxy.exe csi-proxy-cli.exe; do
    cmp -s "$T/x/$e" "build/win/$e"
    check "$e in the archive is build/win/$e" $?
done
for f in config/*.example.yaml scripts/node/*.cmd build/gen/README-operators.txt \
    test/windows/selftest.ps1 test/windows/common.ps1; do
    [ -f "$f" ] || continue
    cmp -s "$T/x/$(basename "$f")" "$f"
    check "$(basename "$f") in the archive is $f" $?
done

# --- the other layouts and the SBOM (test/dist/layouts.py) ---------------------
# The tar.gz as AKS, aks-engine and Rancher's wins read it, the bare exe as
# GKE's kube-up downloads it, each with its .sha256; the SPDX SBOM against
# the zip and build/deps/win/VERSIONS.
while IFS= read -r line; do
    case $line in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) bad "${line#not ok - }" ;;
    *) echo "$line" ;;
    esac
done < <($PY test/dist/layouts.py build/dist "$V" "$mtime" build/deps/win/VERSIONS build/win/csi-proxy.exe.map 2>&1)

# The node self-test: what it dot-sources is beside it in the archive, the
# operators' README tells to run it after install and after upgrade.
deps=$(grep -oE "Join-Path \\\$PSScriptRoot '[^']+'" "$T/x/selftest.ps1" | sed "s/.*'\(.*\)'/\1/")
missing=$(for d in $deps; do [ -f "$T/x/$d" ] || echo "$d"; done)
check "selftest.ps1 finds what it loads from beside it ($(echo $deps))" "$([ -n "$deps" ] && [ -z "$missing" ]; echo $?)" \
    "not in the archive: $missing"
# (the text is wrapped: a phrase may span lines, so it is read as one line)
flat=$(tr -s ' \n' '  ' <"$T/x/README-operators.txt")
grep -q 'selftest.ps1' <<<"$flat" && grep -qi 'after install and after upgrade' <<<"$flat"
check "README-operators.txt says to run selftest.ps1 after install and after upgrade" $?

# The operators' README is made from docs/operators/*.md: every page's
# title is in it, in plain text (no Markdown link or code marks), it names
# the install and self-test steps, and making it again gives the same bytes.
R=$T/x/README-operators.txt
titles=$(for p in docs/operators/*.md; do sed -n '1s/^# //p' "$p"; done)
missing=$(while IFS= read -r t; do grep -qxF "$t" "$R" || echo "$t"; done <<<"$titles")
check "README-operators.txt holds every docs/operators page ($(wc -l <<<"$titles") titles)" \
    "$([ -n "$titles" ] && [ -z "$missing" ]; echo $?)" "missing: $missing"
marks=$(grep -nE '\]\(|`' "$R" | head -3)
check "README-operators.txt is plain text (no Markdown links or code marks)" "$([ -z "$marks" ]; echo $?)" "$marks"
grep -q 'install.cmd' <<<"$flat" && grep -q 'upgrade.cmd' <<<"$flat" && grep -q 'Get-FileHash' <<<"$flat" &&
    grep -q 'csi-proxy-cli.exe health' <<<"$flat"
check "README-operators.txt names install.cmd, upgrade.cmd, checking the archive and the health check" $?
$PY scripts/dist/operators_txt.py --out "$T/again.txt" docs/operators
cmp -s "$T/again.txt" "$R"
check "README-operators.txt is made again byte for byte" $?

# --- no build time ------------------------------------------------------------
for e in csi-proxy.exe csi-proxy-cli.exe; do
    out=$($PY test/dist/pe_times.py "build/win/$e" 2>&1)
    check "$e: no timestamp in the PE header or the resource directory" $? "$out"
done
out=$(grep -rnE '__DATE__|__TIME__|__TIMESTAMP__' --include='*.c' --include='*.h' base rpc transport dispatch metrics groups host sim security service client cli)
check "no __DATE__/__TIME__ in the product's source" "$([ -z "$out" ]; echo $?)" "$out"

# --- no build path --------------------------------------------------------------
# An absolute path of a source or header file (/.../x.c), or this tree's path.
for e in csi-proxy.exe csi-proxy-cli.exe; do
    out=$({ strings -n 6 "build/win/$e" | grep -E '^/.*\.[ch]$'
        strings -n 6 "build/win/$e" | grep -F "$PWD/"; } | sort -u | head -5)
    check "$e: no build path in it (no absolute source path, not $PWD/)" "$([ -z "$out" ]; echo $?)" "$out"
done

# --- the version the programs print -------------------------------------------
out=$(build/native/csi-proxy -version 2>&1)
check "native csi-proxy -version: csi-proxy version $V" "$([ "$out" = "csi-proxy version $V" ]; echo $?)" "$out"
if [ "${SKIP_WINE:-0}" = 1 ]; then
    echo "# SKIP_WINE=1: csi-proxy.exe -version and csi-proxy-cli.exe --version under Wine skipped (NOT CHECKED)"
else
    wineboot -i >/dev/null 2>&1
    run "$T/x/csi-proxy.exe" -version
    check "csi-proxy.exe -version from the archive, under Wine: csi-proxy version $V" \
        "$([ "$RC" = 0 ] && [ "$OUT" = "csi-proxy version $V" ]; echo $?)" "rc=$RC: $OUT"
    run "$T/x/csi-proxy-cli.exe" --version
    check "csi-proxy-cli.exe --version from the archive: csi-proxy-cli $V" \
        "$([ "$RC" = 0 ] && [ "$OUT" = "csi-proxy-cli $V" ]; echo $?)" "rc=$RC: $OUT"
fi

# --- a second build, elsewhere, from scratch ----------------------------------
if [ "${DIST_SKIP_REBUILD:-0}" = 1 ]; then
    echo "# DIST_SKIP_REBUILD=1: second build skipped (NOT CHECKED: same bytes twice)"
else
    t0=$SECONDS
    touch "$T/before-make2"
    if (cd "$S" && make -s -j2 dist CP_VERSION="$V" DIST_MTIME="$mtime") >"$T/make2.log" 2>&1; then
        cmp -s "$Z" "$S/$Z"
        check "a second build in $S (fresh build tree and deps, $((SECONDS - t0)) s) gives the same bytes" $? \
            "$(cmp "$Z" "$S/$Z"; $PY test/dist/zipdiff.py "$Z" "$S/$Z")"
        # The other layouts, their .sha256 files and the SBOM too.
        for f in "${Z%.zip}.tar.gz" "${Z%.zip}.tar.gz.sha256" "build/dist/$V/csi-proxy.exe" \
            "build/dist/$V/csi-proxy.exe.sha256" "${Z%.zip}.spdx.json"; do
            cmp -s "$f" "$S/$f"
            check "... and the same $(basename "$f")" $? "$(cmp "$f" "$S/$f" 2>&1; diff <(head -c 4000 "$f") <(head -c 4000 "$S/$f") | head -10)"
        done
        # Its deps: built there by build-deps.sh, every library new.
        out=$(for f in .stamp lib/libnghttp2.a lib/libprotobuf-c.a lib/libyaml.a; do
            [ "$S/build/deps/win/$f" -nt "$T/before-make2" ] || echo "not rebuilt: $S/build/deps/win/$f"; done)
        check "... cross-building its own deps in $S/build/deps" "$([ -z "$out" ]; echo $?)" "$out"
        # Programs: an executable file outside build/deps, build/gen and
        # build/dist (which holds the bare csi-proxy.exe, a copy).
        built=$(cd "$S/build" && find . -path ./deps -prune -o -path ./gen -prune -o -path ./dist -prune -o -type f \
            \( -name '*.exe' -o -perm -u+x \) -print | sed 's|^\./||' | sort | tr '\n' ' ')
        check "... and building only the archive's programs (built: $built)" \
            "$([ "$built" = "win/csi-proxy-cli.exe win/csi-proxy.exe " ]; echo $?)" "$built"
    else
        bad "second make dist in $S" "$(tail -20 "$T/make2.log")"
    fi
fi
finish
