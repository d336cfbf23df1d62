#!/usr/bin/env bash
# Cross-build the third-party C libraries for the Windows (mingw-w64) build,
# static, from Debian's source packages (Debian patches applied):
#
#   nghttp2     lib/*.c compiled directly (no cmake, no C++)
#   protobuf-c  runtime only (protobuf-c/protobuf-c.c)
#   libyaml     src/*.c compiled directly, static (YAML_DECLARE_STATIC)
#   cmocka      cmake + scripts/mingw-toolchain.cmake, WITH_STATIC_LIB=ON
#
# Usage: scripts/build-deps.sh PREFIX        (the Makefile: build/deps/win)
#
# Result: PREFIX/include/{nghttp2/nghttp2.h,nghttp2/nghttp2ver.h,
#         protobuf-c/protobuf-c.h,yaml.h,cmocka.h}
#         PREFIX/lib/{libnghttp2.a,libprotobuf-c.a,libyaml.a,libcmocka-static.a}
#         PREFIX/VERSIONS  ("name debian-version" per line: the Debian source
#                           packages built here, then those of the mingw-w64
#                           runtime and libgcc the compiler links statically)
#         PREFIX/.stamp    (written last; holds a hash of this script and the
#                           toolchain file: when it matches, nothing is done)
# Consumers must compile with -DNGHTTP2_STATICLIB -DYAML_DECLARE_STATIC and
# link cmocka as PREFIX/lib/libcmocka-static.a (or -l:libcmocka-static.a):
# a plain -lcmocka picks the DLL import library libcmocka.dll.a.
#
# Sources and logs go to build/deps/{src,logs,obj} in the repository
# (override with DEPS_WORKDIR). Needs the tools and deb-src entries that
# scripts/setup-tools.sh installs. FORCE=1 rebuilds and re-fetches sources.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
TOOLCHAIN=$here/mingw-toolchain.cmake
HOST=x86_64-w64-mingw32
CC=$HOST-gcc
AR=$HOST-ar
OPT=(-O2)
JOBS=$(nproc 2>/dev/null || echo 2)
T0=$(date +%s.%N)

say()  { printf 'build-deps: %s\n' "$*"; }
die()  { printf 'build-deps: ERROR: %s\n' "$*" >&2; exit 1; }
trap 'rc=$?; printf "build-deps: ERROR: unexpected failure (exit %s) at line %s: %s\n" "$rc" "$LINENO" "$BASH_COMMAND" >&2' ERR

[ $# -eq 1 ] && [ -n "$1" ] || { echo "usage: $0 PREFIX   (e.g. build/deps/win)" >&2; exit 2; }
mkdir -p "$1"
PREFIX=$(cd "$1" && pwd)
[ "$PREFIX" != / ] || die "refusing PREFIX=/"

WORK=${DEPS_WORKDIR:-$root/build/deps}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
SRC=$WORK/src
OBJ=$WORK/obj
LOGS=$WORK/logs

# The libraries must not depend on where the tree is: nghttp2, protobuf-c and
# libyaml keep their assert()s, whose __FILE__ is the absolute path of the
# source ($SRC/...), and those strings end up in csi-proxy.exe, so two
# checkouts in different directories gave different exes. These prefixes are
# cut from __FILE__ and from any debug info (-ffile-prefix-map is
# -fmacro-prefix-map plus -fdebug-prefix-map): an assert then names
# "nghttp2/nghttp2-1.52.0/lib/nghttp2_session.c".
MAP=("-ffile-prefix-map=$SRC/=" "-ffile-prefix-map=$OBJ/=" "-ffile-prefix-map=$PREFIX/=")

# ------------------------------------------------------------------ stamp
key=$(cat "${BASH_SOURCE[0]}" "$TOOLCHAIN" | sha256sum | cut -d' ' -f1)
if [ "${FORCE:-0}" != 1 ] && [ -f "$PREFIX/.stamp" ] && [ "$(cat "$PREFIX/.stamp")" = "$key" ]; then
    say "deps up to date ($PREFIX)"
    exit 0
fi

# -------------------------------------------------------------- preflight
for t in "$CC" "$AR" cmake apt-get dpkg-source dpkg-parsechangelog sha256sum; do
    command -v "$t" >/dev/null 2>&1 || die "'$t' not found; run: bash scripts/setup-tools.sh"
done

mkdir -p "$SRC" "$OBJ" "$LOGS"
rm -f "$PREFIX/.stamp" "$PREFIX/VERSIONS"
rm -rf "${PREFIX:?}/include" "${PREFIX:?}/lib" "${PREFIX:?}/bin" "${PREFIX:?}/share"
mkdir -p "$PREFIX/include" "$PREFIX/lib"
: >"$PREFIX/VERSIONS.tmp"

# run LOG CMD... : append output to LOG; on failure show its tail and stop.
fail_log() {
    local log=$1; shift
    printf 'build-deps: ERROR: %s failed; last lines of %s:\n' "$*" "$log" >&2
    tail -n 40 "$log" | sed 's/^/    /' >&2
    trap - ERR
    exit 1
}
run() {
    local log=$1; shift
    printf '+ %s\n' "$*" >>"$log"
    "$@" >>"$log" 2>&1 </dev/null || fail_log "$log" "$*"
}

# pcc LOG OBJDIR FLAGS... -- FILES... : compile C files in parallel (JOBS).
pcc() {
    local log=$1 od=$2; shift 2
    local flags=() f n=0 rc=0
    while [ "$1" != -- ]; do flags+=("$1"); shift; done; shift
    mkdir -p "$od"
    printf '+ %s %s -c %s\n' "$CC" "${flags[*]}" "$(cd "$(dirname "$1")" && pwd)/{$(for f in "$@"; do printf '%s ' "$(basename "$f")"; done)}" >>"$log"
    for f in "$@"; do
        if [ "$n" -ge "$JOBS" ]; then wait -n || rc=1; n=$((n - 1)); fi
        "$CC" "${flags[@]}" -c "$f" -o "$od/$(basename "${f%.c}").o" >>"$log" 2>&1 </dev/null &
        n=$((n + 1))
    done
    while [ "$n" -gt 0 ]; do wait -n || rc=1; n=$((n - 1)); done
    [ "$rc" -eq 0 ] || fail_log "$log" "compiling $(basename "$od") ($# files)"
}

# archive LIB OBJDIR : members in C-locale name order (a glob sorts by the
# user's locale), zero dates and ids (D, binutils' default made explicit).
archive() {
    local objs=()
    mapfile -d '' -t objs < <(find "$OBJ/$2" -maxdepth 1 -name '*.o' -print0 | LC_ALL=C sort -z)
    [ "${#objs[@]}" -gt 0 ] || die "no objects in $OBJ/$2"
    rm -f "$1"
    run "$LOGS/$2.log" "$AR" rcsD "$1" "${objs[@]}"
}

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }

# ------------------------------------------------------------------ fetch
# fetch SRCPKG DEVPKG -> sets SRCDIR and DEBVER. Prefers the source version
# of the installed native -dev package, so the Linux and Windows builds use
# the same library version; falls back to the archive's current version.
fetch() {
    local pkg=$1 dev=$2 want="" d log=$LOGS/fetch-$1.log
    want=$(dpkg-query -W -f='${db:Status-Abbrev} ${source:Version}' "$dev" 2>/dev/null \
           | awk '$1 == "ii" { print $2 }') || true
    d=$SRC/$pkg
    if [ "${FORCE:-0}" = 1 ] || [ ! -f "$d/.fetched" ] \
       || { [ -n "$want" ] && [ "$(cut -d' ' -f2 "$d/.fetched")" != "$want" ]; } \
       || [ ! -d "$d/$(cut -d' ' -f1 "$d/.fetched")" ]; then
        rm -rf "$d"; mkdir -p "$d"; : >"$log"
        local ok=0
        if [ -n "$want" ]; then
            (cd "$d" && apt-get -q source "$pkg=$want") >>"$log" 2>&1 </dev/null && ok=1 \
                || echo "(apt-get source $pkg=$want failed; retrying with the archive's current version)" >>"$log"
        fi
        if [ "$ok" = 0 ]; then
            rm -rf "$d"; mkdir -p "$d"
            (cd "$d" && apt-get -q source "$pkg") >>"$log" 2>&1 </dev/null || {
                printf 'build-deps: ERROR: apt-get source %s failed; last lines of %s:\n' "$pkg" "$log" >&2
                tail -n 20 "$log" | sed 's/^/    /' >&2
                echo "build-deps: hint: run 'bash scripts/setup-tools.sh' (deb-src entries + apt-get update)" >&2
                trap - ERR; exit 1
            }
        fi
        local dirs=("$d"/"$pkg"-*/)
        [ "${#dirs[@]}" -eq 1 ] && [ -d "${dirs[0]}" ] || die "cannot find the unpacked $pkg source in $d"
        local ver
        ver=$(dpkg-parsechangelog -l "${dirs[0]}/debian/changelog" -S Version)
        echo "$(basename "${dirs[0]}") $ver" >"$d/.fetched"
    fi
    SRCDIR=$d/$(cut -d' ' -f1 "$d/.fetched")
    DEBVER=$(cut -d' ' -f2 "$d/.fetched")
    echo "$pkg $DEBVER" >>"$PREFIX/VERSIONS.tmp"
}

t=$(date +%s.%N)
fetch nghttp2 libnghttp2-dev;       NGHTTP2_SRC=$SRCDIR
fetch protobuf-c libprotobuf-c-dev; PBC_SRC=$SRCDIR
fetch libyaml libyaml-dev;          YAML_SRC=$SRCDIR
fetch cmocka libcmocka-dev;         CMOCKA_SRC=$SRCDIR
say "sources ready in $SRC ($(elapsed "$t"))"

# The toolchain's own libraries that -static links into every program: the
# mingw-w64 runtime (CRT start-up, libmingwex, import libraries) and GCC's
# libgcc. Recorded as the Debian source package and version owning the very
# files this compiler links (the release's SBOM lists them).
toolchain_lib() { # LIBRARY-FILE-NAME
    local f bin src
    f=$("$CC" -print-file-name="$1")
    f=$(readlink -f "$f")
    [ -f "$f" ] || die "$CC has no $1"
    bin=$(dpkg-query -S "$f" 2>/dev/null | head -1 | cut -d: -f1) || true
    [ -n "$bin" ] || die "no Debian package owns $f (dpkg-query -S)"
    src=$(dpkg-query -W -f='${source:Package} ${source:Version}' "$bin") || die "dpkg-query -W $bin failed"
    grep -qxF "$src" "$PREFIX/VERSIONS.tmp" || echo "$src" >>"$PREFIX/VERSIONS.tmp"
}
toolchain_lib libmingwex.a
toolchain_lib libgcc.a

# ---------------------------------------------------------------- nghttp2
t=$(date +%s.%N)
log=$LOGS/nghttp2.log; : >"$log"
v=$(sed -n 's/^project(nghttp2 VERSION \([0-9][0-9.]*\)).*/\1/p' "$NGHTTP2_SRC/CMakeLists.txt")
[[ "$v" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || die "cannot read the nghttp2 version from $NGHTTP2_SRC/CMakeLists.txt"
vnum=$(printf '0x%02x%02x%02x' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
mkdir -p "$PREFIX/include/nghttp2"
cp "$NGHTTP2_SRC/lib/includes/nghttp2/nghttp2.h" "$PREFIX/include/nghttp2/"
sed -e "s/@PACKAGE_VERSION@/$v/" -e "s/@PACKAGE_VERSION_NUM@/$vnum/" \
    "$NGHTTP2_SRC/lib/includes/nghttp2/nghttp2ver.h.in" >"$PREFIX/include/nghttp2/nghttp2ver.h"
! grep -Eq '@[A-Z_]+@' "$PREFIX/include/nghttp2/nghttp2ver.h" || die "unsubstituted @VAR@ left in nghttp2ver.h"
rm -rf "$OBJ/nghttp2"
pcc "$log" "$OBJ/nghttp2" "${OPT[@]}" "${MAP[@]}" -DNGHTTP2_STATICLIB -DBUILDING_NGHTTP2 \
    -DHAVE_TIME_H -DHAVE_SYSINFOAPI_H -DHAVE_GETTICKCOUNT64 \
    -I"$PREFIX/include" -I"$NGHTTP2_SRC/lib" -- "$NGHTTP2_SRC"/lib/*.c
archive "$PREFIX/lib/libnghttp2.a" nghttp2
say "nghttp2 $v ($(elapsed "$t"))"

# ------------------------------------------------------------- protobuf-c
t=$(date +%s.%N)
log=$LOGS/protobuf-c.log; : >"$log"
rm -rf "$OBJ/protobuf-c"
pcc "$log" "$OBJ/protobuf-c" "${OPT[@]}" "${MAP[@]}" -I"$PBC_SRC" -- "$PBC_SRC/protobuf-c/protobuf-c.c"
archive "$PREFIX/lib/libprotobuf-c.a" protobuf-c
mkdir -p "$PREFIX/include/protobuf-c"
cp "$PBC_SRC/protobuf-c/protobuf-c.h" "$PREFIX/include/protobuf-c/"
say "protobuf-c $(sed -n 's/^#define PROTOBUF_C_VERSION[[:space:]]*"\(.*\)"/\1/p' "$PBC_SRC/protobuf-c/protobuf-c.h") ($(elapsed "$t"))"

# ---------------------------------------------------------------- libyaml
# Same defines as its CMakeLists: the version (normally via config.h) and
# YAML_DECLARE_STATIC for a static library.
t=$(date +%s.%N)
log=$LOGS/libyaml.log; : >"$log"
yv() { sed -n "s/^set *(YAML_VERSION_$1 \([0-9][0-9]*\)).*/\1/p" "$YAML_SRC/CMakeLists.txt"; }
ymaj=$(yv MAJOR); ymin=$(yv MINOR); ypat=$(yv PATCH)
[ -n "$ymaj" ] && [ -n "$ymin" ] && [ -n "$ypat" ] || die "cannot read the libyaml version from $YAML_SRC/CMakeLists.txt"
rm -rf "$OBJ/libyaml"
pcc "$log" "$OBJ/libyaml" "${OPT[@]}" "${MAP[@]}" -DYAML_DECLARE_STATIC \
    -DYAML_VERSION_MAJOR="$ymaj" -DYAML_VERSION_MINOR="$ymin" -DYAML_VERSION_PATCH="$ypat" \
    -DYAML_VERSION_STRING="\"$ymaj.$ymin.$ypat\"" \
    -I"$YAML_SRC/include" -- "$YAML_SRC"/src/*.c
archive "$PREFIX/lib/libyaml.a" libyaml
cp "$YAML_SRC/include/yaml.h" "$PREFIX/include/"
say "libyaml $ymaj.$ymin.$ypat ($(elapsed "$t"))"

# ----------------------------------------------------------------- cmocka
t=$(date +%s.%N)
log=$LOGS/cmocka.log; : >"$log"
rm -rf "$OBJ/cmocka"
export MINGW_DEPS_PREFIX=$PREFIX
# cmake splits its flags at blanks: the maps go in only when the paths have
# none (cmocka is for the Windows unit tests; it is not in the release).
cmap=("${MAP[@]}")
case "$SRC$OBJ$PREFIX" in *[[:space:]]*) cmap=(); echo "(path with blanks: cmocka built without -ffile-prefix-map)" >>"$log" ;; esac
run "$log" cmake -S "$CMOCKA_SRC" -B "$OBJ/cmocka" \
    -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="${OPT[*]} ${cmap[*]} -DNDEBUG" \
    -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF \
    -DCMAKE_INSTALL_PREFIX="$PREFIX"
run "$log" cmake --build "$OBJ/cmocka" -j "$JOBS"
run "$log" cmake --install "$OBJ/cmocka"
say "cmocka $(sed -n 's/^project(cmocka VERSION \([0-9.]*\).*/\1/p' "$CMOCKA_SRC/CMakeLists.txt") ($(elapsed "$t"))"

# ----------------------------------------------------------------- verify
for f in lib/libnghttp2.a lib/libprotobuf-c.a lib/libyaml.a lib/libcmocka-static.a \
         include/nghttp2/nghttp2.h include/nghttp2/nghttp2ver.h \
         include/protobuf-c/protobuf-c.h include/yaml.h include/cmocka.h; do
    [ -s "$PREFIX/$f" ] || die "expected $PREFIX/$f was not produced"
done

mv "$PREFIX/VERSIONS.tmp" "$PREFIX/VERSIONS"
echo "$key" >"$PREFIX/.stamp"
say "done in $(elapsed "$T0"): $PREFIX ($(paste -sd, "$PREFIX/VERSIONS" | sed 's/,/, /g'))"
