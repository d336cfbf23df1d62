#!/usr/bin/env bash
# check_imports.sh - the product executables start no process and need
# only the DLLs the README names (docs/contributing.md: no child processes
# and no command strings anywhere). For build/win/csi-proxy.exe and
# build/win/csi-proxy-cli.exe:
#
#   1. DLLs: the import table names only KERNEL32, ADVAPI32 and msvcrt
#      (x86_64-w64-mingw32-objdump -p), and not iscsidsc.dll, which the
#      iscsi group loads at run time (host/iscsidsc_win.c), nor
#      httpapi.dll (the HTTP Server API), loaded only when
#      -metrics-bind-address asks for metrics (service/metrics_http_win.c),
#      nor iphlpapi.dll (the IP Helper API), loaded only when an SMB call
#      names its server by address, to compare it with this machine's
#      addresses (host/localaddr_win.c): every DLL in the table is
#      loaded by every start;
#   2. imports: no process-creation function is imported by name, from any
#      DLL (Win32, native and msvcrt's: see FORBIDDEN);
#   3. linked symbols: no such symbol is defined or referenced by anything
#      linked in, our objects, the deps' archives or mingw's static CRT
#      (the linker's cross-reference table, <exe>.map, written by the link
#      with -Wl,-Map=...,--cref). This catches a static implementation that
#      an import-table check cannot see;
#   4. strings: no process-creation function name appears in the image as
#      ASCII or UTF-16 text, the name GetProcAddress would need;
#   5. test code: the link map names no object of sim/ (the simulators:
#      csi-proxy-sim.exe's and the native build's only) nor of test/ (the
#      storage device model of test/model/ is csi-proxy-model.exe's only),
#      linked by path or as an archive member (archives keep only the
#      object's base name, so a member named as a sim/ or test/ source and
#      as no product source is one). Checked first on a made-up map that
#      names one of each, which must be refused.
#
# Usage: test/exe/check_imports.sh [EXE...]    (default: both products)
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
OBJDUMP=x86_64-w64-mingw32-objdump
ALLOWED_DLLS='ADVAPI32.dll KERNEL32.dll msvcrt.dll'

# Process creation, by name (anchored, case-sensitive as the linker is):
#   msvcrt:  system _wsystem _popen _wpopen _spawn* _wspawn* _exec* _wexec*
#            and the old POSIX names (spawnl, execv, popen, ...);
#   Win32:   CreateProcess{A,W,AsUser*,WithLogonW,WithTokenW,Internal*},
#            ShellExecute{A,W,Ex*}, WinExec, LoadModule (runs a program);
#   native:  NtCreateUserProcess, NtCreateProcess(Ex), ZwCreate..., and
#            RtlCreateUserProcess(Ex).
FORBIDDEN='_?w?system|_?w?popen|_?w?spawn[lv]p?e?|_?w?exec[lv]p?e?'
FORBIDDEN+='|CreateProcess[A-Za-z]*|ShellExecute[A-Za-z]*|WinExec|LoadModule'
FORBIDDEN+='|(Nt|Zw)CreateUserProcess|(Nt|Zw)CreateProcess(Ex)?|RtlCreateUserProcess(Ex)?'
# In strings, only the names that are not also ordinary words.
FORBIDDEN_TEXT='_w?system|_?w?popen|_w?spawn[lv]p?e?|_w?exec[lv]p?e?|CreateProcess|ShellExecute|WinExec'
FORBIDDEN_TEXT+='|CreateUserProcess|NtCreateProcess|ZwCreateProcess'

# Object names (x.o) only sim/ and test/ sources give.
LAYER_DIRS='base rpc transport dispatch metrics groups host security service client cli'
# shellcheck disable=SC2086 # the folders are words
FOREIGN_OBJS=$(LC_ALL=C comm -23 \
    <(find sim test -name '*.c' -printf '%f\n' | sed 's/\.c$/.o/' | LC_ALL=C sort -u) \
    <(find $LAYER_DIRS -name '*.c' -printf '%f\n' | sed 's/\.c$/.o/' | LC_ALL=C sort -u))

# Prints the sim/ and test/ objects link map $1 names, one a line.
foreign_objects() {
    {
        grep -oE 'obj/(sim|test)/[^ ()]*\.o' "$1"
        grep -oE '\.a\([^()]*\.o\)' "$1" | sed 's/^\.a(//; s/)$//' | LC_ALL=C sort -u |
            grep -Fx -f <(printf '%s\n' "$FOREIGN_OBJS") | sed 's/^/archive member /'
    } | LC_ALL=C sort -u
}

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() {
    fail=$((fail + 1))
    echo "not ok - $1"
    [ -n "${2:-}" ] && printf '%s\n' "$2" | head -20 | sed 's/^/    /'
}

# 5 on a made-up map: one sim/ object by path, one test/ object as an
# archive member, one product member; the first two must be found.
sample=$(mktemp)
trap 'rm -f "$sample"' EXIT
printf '%s\n' ' .text 0x1 0x2 build/win/obj/sim/storage_sim.o' \
    'build/win/libmodel.a(model_state.o)' 'build/win/libcore.a(storage_win.o)' >"$sample"
found=$(foreign_objects "$sample" | tr '\n' ' ')
if [ "$found" = "archive member model_state.o obj/sim/storage_sim.o " ]; then
    ok "the link-map check finds a sim/ object and a test/ archive member, not a product one"
else
    bad "the link-map check finds a sim/ object and a test/ archive member, not a product one" "found: $found"
fi

[ $# -gt 0 ] || set -- build/win/csi-proxy.exe build/win/csi-proxy-cli.exe
for exe in "$@"; do
    name=$(basename "$exe")
    if [ ! -f "$exe" ]; then
        bad "$name exists" "missing $exe: run make first"
        continue
    fi
    dump=$($OBJDUMP -p "$exe") || { bad "$name: objdump -p" "$dump"; continue; }

    # 1. DLLs
    dlls=$(awk '/DLL Name:/ {print $3}' <<<"$dump" | sort -u)
    lower() { tr 'A-Z' 'a-z' | LC_ALL=C sort -u; }
    extra=$(LC_ALL=C comm -23 <(lower <<<"$dlls") <(tr ' ' '\n' <<<"$ALLOWED_DLLS" | lower) | tr '\n' ' ')
    if [ -z "$extra" ]; then
        ok "$name imports only from $(tr '\n' ' ' <<<"$dlls")"
    else
        bad "$name imports only from $ALLOWED_DLLS" "also: $extra"
    fi

    # 1b. DLLs loaded at run time, from system32, only when a call (or a
    # flag) needs them: a host without the iSCSI initiator still starts the
    # service, a start with metrics off does not load the HTTP Server API,
    # and only an SMB server named by address loads the IP Helper API
    for lazy in iscsidsc.dll httpapi.dll iphlpapi.dll; do
        if grep -qix "$lazy" <<<"$dlls"; then
            bad "$name does not import $lazy (it is loaded at run time)" "$lazy is in the import table"
        else
            ok "$name does not import $lazy (it is loaded at run time)"
        fi
    done

    # 2. imported functions: "<hint> <name>" lines under each DLL
    funcs=$(awk '/DLL Name:/ {dll=$3} /^[ \t]+[0-9a-f]+[ \t]+[0-9]+[ \t]+[A-Za-z_]/ && dll {print dll ": " $3}' <<<"$dump")
    if [ -z "$funcs" ]; then
        bad "$name: the import table lists functions" "objdump -p printed none"
    else
        hits=$(grep -E ": ($FORBIDDEN)\$" <<<"$funcs")
        if [ -z "$hits" ]; then
            ok "$name imports no process-creation function ($(wc -l <<<"$funcs") imports checked)"
        else
            bad "$name imports no process-creation function" "$hits"
        fi
    fi

    # 3. linked symbols (the link map's cross-reference table)
    map=$exe.map
    if [ ! -f "$map" ] || [ "$map" -ot "$exe" ]; then
        bad "$name: link map $map is there and current" "relink: rm $exe && make $exe"
    else
        syms=$(awk '/^Cross Reference Table/ {f=1; next} f && /^[^ \t]/ && $1 != "Symbol" {print $1}' "$map")
        if [ -z "$syms" ]; then
            bad "$name: $map has a cross-reference table" "link with -Wl,-Map=...,--cref"
        else
            hits=$(grep -E "^(__imp_)?($FORBIDDEN)\$" <<<"$syms")
            if [ -z "$hits" ]; then
                ok "$name links no process-creation symbol ($(wc -l <<<"$syms") symbols checked)"
            else
                refs=$(for s in $hits; do
                    awk -v s="$s" '/^Cross Reference Table/ {f=1} f && $1 == s {p=1; print; next}
                                   p && /^[ \t]/ {print; next} {p=0}' "$map"
                done)
                bad "$name links no process-creation symbol" "$refs"
            fi
        fi
    fi

    # 5. no simulator or test code linked in
    if [ -f "$map" ]; then
        hits=$(foreign_objects "$map" | head -5)
        if [ -z "$hits" ]; then
            ok "$name links no simulator or test code (no sim/ or test/ object)"
        else
            bad "$name links no simulator or test code" "$hits"
        fi
    fi

    # 4. names in the image's text
    hits=$( { strings -a "$exe"; strings -a -e l "$exe"; } | grep -oE "\\b($FORBIDDEN_TEXT)\\b" | sort -u)
    if [ -z "$hits" ]; then
        ok "$name holds no process-creation function name as text"
    else
        bad "$name holds no process-creation function name as text" "$hits"
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
