#!/usr/bin/env bash
# Install the Debian packages listed in scripts/apt-packages.txt that are
# missing, and make sure deb-src entries exist so `apt-get source` works
# (scripts/build-deps.sh needs it). Then the npm tools of make lint
# (scripts/npm-tools: package.json and its lock) into build/tools/npm.
#
# Usage: scripts/setup-tools.sh [PACKAGE-LIST]
#
# Idempotent: when every package is installed and the source indices are
# present it only runs dpkg-query and exits (well under a second).
# Runs as root without stdin (CI); uses sudo -n when not root.
set -euo pipefail

# APT_ETC is only overridable for testing the deb-src rewriting on a copy.
APT_ETC=${SETUP_TOOLS_APT_ETC:-/etc/apt}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list=${1:-$here/apt-packages.txt}
export DEBIAN_FRONTEND=noninteractive

say() { printf 'setup-tools: %s\n' "$*"; }
die() { printf 'setup-tools: ERROR: %s\n' "$*" >&2; exit 1; }

[ -r "$list" ] || die "package list not found: $list"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); else SUDO=(false); fi
fi
as_root() { "${SUDO[@]}" "$@" || die "command failed (need root): $*"; }

# ---------------------------------------------------------------- packages
# Strip comments (whole-line and trailing) and blank lines.
mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]\+$//' -e 's/^[[:space:]]\+//' "$list" | grep -v '^$')
[ "${#pkgs[@]}" -gt 0 ] || die "no packages in $list"

# "ii " = wanted+installed. A package with several architectures prints
# several lines; any installed one counts.
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${pkgs[@]}" 2>/dev/null \
            | awk '$2 == "ii" { print $1 }' || true)
missing=()
for p in "${pkgs[@]}"; do
    grep -qxF -- "${p%%:*}" <<<"$installed" || missing+=("$p")
done

# ----------------------------------------------------------------- deb-src
# Debian 12 images ship /etc/apt/sources.list.d/debian.sources (deb822) with
# "Types: deb"; older/other images use one-line "deb URI suite comps" in
# /etc/apt/sources.list. Only Debian archive entries get a deb-src twin
# (third-party repositories usually publish no sources).
added_src=0
have_deb_src() {
    local f
    for f in "$APT_ETC"/sources.list "$APT_ETC"/sources.list.d/*.list; do
        [ -r "$f" ] && grep -Eq '^[[:space:]]*deb-src[[:space:]]' "$f" && return 0
    done
    for f in "$APT_ETC"/sources.list.d/*.sources; do
        [ -r "$f" ] && grep -Eiq '^Types:.*[[:space:]]deb-src([[:space:]]|$)' "$f" && return 0
    done
    return 1
}

ensure_deb_src() {
    have_deb_src && return 0
    local f tmp bak
    # deb822: add deb-src to the Types of Debian stanzas (paragraph mode).
    for f in "$APT_ETC"/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        grep -Eiq '^URIs:.*debian' "$f" || continue
        tmp=$(mktemp)
        awk 'BEGIN { RS = "" }
             {
               if (NR > 1) printf "\n"
               n = split($0, L, "\n"); deb = 0
               for (i = 1; i <= n; i++)
                 if (tolower(L[i]) ~ /^uris:.*debian/) deb = 1
               out = ""
               for (i = 1; i <= n; i++) {
                 line = L[i]
                 if (deb && tolower(line) ~ /^types:/ && line !~ /deb-src/)
                   line = line " deb-src"
                 out = out (i > 1 ? "\n" : "") line
               }
               print out
             }' "$f" >"$tmp"
        if ! cmp -s "$f" "$tmp"; then
            # Backup outside sources.list.d: apt warns about unknown extensions there.
            bak=/var/backups/$(basename "$f").orig-setup-tools
            [ -n "${SETUP_TOOLS_APT_ETC:-}" ] && bak=$f.orig-setup-tools
            as_root cp "$f" "$bak"
            as_root install -m 0644 "$tmp" "$f"
            say "added deb-src to Types in $f (backup: $bak)"
            added_src=1
        fi
        rm -f "$tmp"
    done
    # One-line format: mirror each Debian "deb" line as "deb-src".
    if ! have_deb_src; then
        tmp=$(mktemp)
        for f in "$APT_ETC"/sources.list "$APT_ETC"/sources.list.d/*.list; do
            [ -r "$f" ] || continue
            sed -n -E 's/^[[:space:]]*deb[[:space:]]+(.*debian.*)$/deb-src \1/p' "$f"
        done | sort -u >"$tmp"
        if [ -s "$tmp" ]; then
            as_root install -m 0644 "$tmp" "$APT_ETC"/sources.list.d/zz-deb-src.list
            say "wrote $APT_ETC/sources.list.d/zz-deb-src.list"
            added_src=1
        fi
        rm -f "$tmp"
    fi
    have_deb_src || die "no Debian apt source found to derive deb-src entries from"
}
ensure_deb_src

# Source indices (Sources files) present? apt-get update fetches them.
have_src_index=0
if compgen -G '/var/lib/apt/lists/*_Sources*' >/dev/null; then have_src_index=1; fi

# Wait (up to 10 min) instead of failing if another apt/dpkg holds the lock.
APT=(apt-get -q -y -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)

# ---------------------------------------------------------------- npm tools
# `npm ci` of scripts/npm-tools into build/tools/npm (CSI_PROXY_NPM_TOOLS):
# the registry's packages as the lock pins them, no install scripts; the
# workflow linter there is WebAssembly and downloads nothing when it runs.
# Node and npm come from Debian (nodejs, npm) when the machine has no npm; a
# machine with another Node build keeps it (Debian's npm conflicts with
# NodeSource's nodejs, which carries its own npm). Done once per lock: the
# lock's checksum is kept in $dst/.installed.
npm_tools() {
    local src=$here/npm-tools dst=${CSI_PROXY_NPM_TOOLS:-$here/../build/tools/npm} sum
    [ -r "$src/package-lock.json" ] || return 0
    sum=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
    if [ -d "$dst/node_modules" ] && [ "$(cat "$dst/.installed" 2>/dev/null)" = "$sum" ]; then
        return 0
    fi
    if ! command -v npm >/dev/null 2>&1; then
        say "installing nodejs and npm (for $src)"
        as_root "${APT[@]}" update >/dev/null
        as_root env DEBIAN_FRONTEND=noninteractive "${APT[@]}" install nodejs npm </dev/null
    fi
    mkdir -p "$dst"
    rm -f "$dst/.installed"
    cp "$src/package.json" "$src/package-lock.json" "$dst/"
    say "npm ci in $dst"
    (cd "$dst" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) || die "npm ci failed in $dst"
    echo "$sum" >"$dst/.installed"
}

# ------------------------------------------------------------------ apt run
if [ "${#missing[@]}" -eq 0 ] && [ "$added_src" -eq 0 ] && [ "$have_src_index" -eq 1 ]; then
    say "all ${#pkgs[@]} packages present; deb-src configured"
    npm_tools
    exit 0
fi

say "apt-get update (missing packages: ${#missing[@]}, deb-src added: $added_src, source index: $have_src_index)"
as_root "${APT[@]}" update >/dev/null

if [ "${#missing[@]}" -gt 0 ]; then
    say "installing: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive "${APT[@]}" install "${missing[@]}" </dev/null
fi
npm_tools
say "done"
