#!/usr/bin/env bash
# Fetch nanopb's runtime (pb.h, pb_common.[ch], pb_decode.[ch],
# pb_encode.[ch]) from Debian's source package, at the version of the
# installed generator (the `nanopb` package ships the generator only), for
# the second decoder of the differential check (mk/nanopb.mk).
#
# Usage: scripts/fetch-nanopb.sh OUTDIR      (the Makefile: build/nanopb/rt)
#
# Needs the deb-src entries scripts/setup-tools.sh adds. Sources are
# unpacked under build/deps/src/nanopb; OUTDIR receives the six files and
# a VERSION line ("nanopb <debian-version>").
set -euo pipefail

say() { printf 'fetch-nanopb: %s\n' "$*"; }
die() { printf 'fetch-nanopb: ERROR: %s\n' "$*" >&2; exit 1; }

[ $# -eq 1 ] && [ -n "$1" ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$1
work=${DEPS_WORKDIR:-$root/build/deps}/src/nanopb

want=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' nanopb 2>/dev/null | awk '$1 == "ii" { print $2 }') || true
[ -n "$want" ] || die "the nanopb package is not installed; run: bash scripts/setup-tools.sh"

if [ ! -f "$work/.fetched" ] || [ "$(cut -d' ' -f2 "$work/.fetched")" != "$want" ]; then
    rm -rf "$work"
    mkdir -p "$work"
    (cd "$work" && apt-get -q source "nanopb=$want") >"$work.log" 2>&1 </dev/null || {
        tail -n 20 "$work.log" >&2
        die "apt-get source nanopb=$want failed (deb-src entries: bash scripts/setup-tools.sh)"
    }
    dirs=("$work"/nanopb-*/)
    [ "${#dirs[@]}" -eq 1 ] && [ -d "${dirs[0]}" ] || die "cannot find the unpacked nanopb source in $work"
    echo "$(basename "${dirs[0]}") $want" >"$work/.fetched"
fi
src=$work/$(cut -d' ' -f1 "$work/.fetched")
mkdir -p "$out"
for f in pb.h pb_common.c pb_common.h pb_decode.c pb_decode.h pb_encode.c pb_encode.h; do
    [ -f "$src/$f" ] || die "$f missing from $src"
    cp "$src/$f" "$out/$f"
done
echo "nanopb $want" >"$out/VERSION"
say "nanopb $want runtime in $out"
