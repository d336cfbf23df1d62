#!/usr/bin/env python3
"""pslint.py - a structural check of the PowerShell scripts in test/windows/,
for a machine without PowerShell. It is NOT PowerShell's parser: it proves
less than `[System.Management.Automation.Language.Parser]::ParseFile` would,
and what it proves it proves by its own tokenizer. Checked:

  1. ASCII only (Windows PowerShell 5.1 reads a script without a byte-order
     mark in the ANSI code page, where UTF-8 bytes of a dash or a section sign
     can read as quote characters);
  2. strings ('...', "..." with `$(...)` inside, here-strings @'...'@ and
     @"..."@), comments (# and <# #>) and (), {}, [] are closed, in order;
     no "$name:" in an expanding string (PowerShell refuses it: ${name}:);
  3. every bare word in command position is a keyword, a function the script
     (or common.ps1, when it dot-sources it) defines, a cmdlet or program in
     KNOWN below, or NAME.exe: a misspelt helper or cmdlet fails here;
  4. no redirection of the Error stream (2>&1, 2>$null, 2> FILE, *>...) on a
     program (& $x, NAME.exe, or a word that is no cmdlet or function)
     outside common.ps1's Invoke-Native: Windows PowerShell 5.1 turns such
     a program's stderr lines into error records under the script's
     $ErrorActionPreference ('Stop' ends the script at the first line);
  5. run-all.ps1: every script it runs (Invoke-TestScript / Skip-TestScript)
     exists, every script in the directory is named there, every -Param it
     passes is in that script's param block, and every mandatory parameter
     is passed.

Usage: pslint.py [DIR]        check DIR/**/*.ps1 (default: this directory)
       pslint.py --self-test  broken samples must each be refused
Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
"""
import os
import re
import sys

KEYWORDS = {
    'begin', 'break', 'catch', 'class', 'continue', 'data', 'do', 'dynamicparam', 'else', 'elseif', 'end',
    'exit', 'filter', 'finally', 'for', 'foreach', 'function', 'if', 'in', 'param', 'process', 'return',
    'switch', 'throw', 'trap', 'try', 'until', 'while',
}
# Cmdlets and programs the scripts call (case-insensitive). A new one is added
# here on purpose, after checking its name in Microsoft's documentation.
KNOWN = {n.lower() for n in '''
Add-Content Add-Type Clear-Content ConvertFrom-Json ConvertTo-Json ConvertTo-SecureString Copy-Item
Disable-IscsiSessionChap Dismount-DiskImage Format-List Get-Acl Get-ChildItem Get-CimInstance Get-Content
Get-Date Get-Disk Get-IscsiConnection Get-IscsiSession Register-IscsiSession Remove-ItemProperty Get-NetIPAddress Get-IscsiTarget Get-IscsiTargetPortal Get-IscsiServerTarget
Get-Item Get-ItemProperty Get-Partition Get-PhysicalDisk Get-Process Get-Random Get-Service Get-SmbGlobalMapping
Get-Volume Get-WinEvent Get-WindowsFeature Group-Object Install-WindowsFeature Invoke-WebRequest Join-Path
Measure-Object New-IscsiServerTarget New-IscsiVirtualDisk New-Item New-LocalUser New-Object New-SmbShare
Out-File Out-Null Out-String Remove-IscsiServerTarget Remove-IscsiTargetPortal Remove-IscsiVirtualDisk
Remove-Item Remove-LocalUser Remove-SmbGlobalMapping Remove-SmbShare Resolve-Path Select-Object Select-String
Set-Acl Set-Content Set-Disk Set-IscsiServerTarget Set-Service Set-StrictMode Sort-Object Split-Path
Start-Process Start-Service Start-Sleep Stop-Process Stop-Service Tee-Object Test-Path Update-Disk
Where-Object Wait-Process Write-Error Write-Host Write-Output Write-Warning ForEach-Object Add-IscsiVirtualDiskTargetMapping
Connect-IscsiTarget Disconnect-IscsiTarget New-IscsiTargetPortal Update-IscsiTarget Get-InitiatorPort
Register-ScheduledTask Get-NetFirewallRule Mount-DiskImage Get-DiskImage Invoke-Expression Get-Command
Set-ItemProperty Get-FileHash Expand-Archive Rename-Item Move-Item Get-Location Set-Location
Compare-Object Unregister-IscsiSession Start-Job Wait-Job Receive-Job Add-PartitionAccessPath
Remove-NetFirewallRule New-NetFirewallRule Invoke-RestMethod New-SelfSignedCertificate Set-WSManQuickConfig
Set-Item Restart-Service Stop-Job Remove-Job Initialize-Disk New-Partition Format-Volume
Get-PartitionSupportedSize
'''.split()}


class Lint(Exception):
    pass


def tokenize(text, fname):
    """Tokens (kind, value, line): kinds word, var, str, op, open, close, nl."""
    toks = []
    i, n, line = 0, len(text), 1
    stack = []

    def push(kind, val):
        toks.append((kind, val, line))

    def dq_string(i, end_here=False):
        """A double-quoted string from i (past the opening quote); returns the
        index past it. `$(...)` inside is code: tokenized recursively."""
        nonlocal line
        start_line = line
        while True:
            if i >= n:
                raise Lint(f'{fname}:{start_line}: string never closed')
            c = text[i]
            if c == '\n':
                line += 1
            if end_here:
                if c == '\n' and text.startswith('"@', i + 1):
                    return i + 3
            elif c == '"' or c in '\u201c\u201d':
                if text.startswith('""', i):
                    i += 2
                    continue
                return i + 1
            if c == '`':
                i += 2
                continue
            if c == '$' and i + 1 < n and text[i + 1] == '(':
                push('open', '$(')
                j = code(i + 2, ')')
                push('close', ')')
                i = j
                continue
            if c == '$':
                # "$name:" followed by no name is a parse error ("Variable
                # reference is not valid"); "${name}:" is what is meant.
                m = re.compile(r'\$([A-Za-z_]\w*):(?![\w{])').match(text, i)
                if m:
                    raise Lint(f'{fname}:{line}: "${m.group(1)}:" in a string is not a valid variable reference (write ${{{m.group(1)}}}:)')
            i += 1

    def code(i, closer):
        """Code from i up to the matching closer (')' for a subexpression, or
        None for the whole file); returns the index past the closer."""
        nonlocal line
        depth_stack = []
        while i < n:
            c = text[i]
            if c == '\n':
                line += 1
                push('nl', '\n')
                i += 1
            elif c in ' \t\r':
                i += 1
            elif c == '`' and i + 1 < n:
                if text[i + 1] == '\n':
                    line += 1
                i += 2
            elif text.startswith('<#', i):
                j = text.find('#>', i + 2)
                if j < 0:
                    raise Lint(f'{fname}:{line}: <# comment never closed')
                line += text.count('\n', i, j)
                i = j + 2
            elif c == '#':
                j = text.find('\n', i)
                i = n if j < 0 else j
            elif text.startswith("@'", i) and text[i + 2:i + 3] in ('\n', '\r'):
                m = re.compile(r"\n'@").search(text, i)
                if not m:
                    raise Lint(f"{fname}:{line}: here-string @' never closed")
                line += text.count('\n', i, m.end())
                push('str', "@''@")
                i = m.end()
            elif text.startswith('@"', i) and text[i + 2:i + 3] in ('\n', '\r'):
                i = dq_string(i + 2, end_here=True)
                push('str', '@""@')
            elif c == "'" or c in '\u2018\u2019':
                j = i + 1
                start = line
                while True:
                    if j >= n:
                        raise Lint(f"{fname}:{start}: string ' never closed")
                    if text[j] == '\n':
                        line += 1
                    if text[j] == "'":
                        if text.startswith("''", j):
                            j += 2
                            continue
                        break
                    j += 1
                push('str', text[i + 1:j])
                i = j + 1
            elif c == '"':
                i = dq_string(i + 1)
                push('str', '""')
            elif c == '$':
                m = re.compile(r'\$(\{[^}]*\}|[\w:?^$]+)').match(text, i)
                if m and text[i + 1] != '(':
                    push('var', m.group(1))
                    i = m.end()
                else:
                    push('op', '$')
                    i += 1
            elif c == '@' and text[i + 1:i + 2] in '({':
                push('open', '@' + text[i + 1])
                depth_stack.append((')' if text[i + 1] == '(' else '}', line))
                i += 2
            elif c in '({[':
                push('open', c)
                depth_stack.append(({'(': ')', '{': '}', '[': ']'}[c], line))
                i += 1
            elif c in ')}]':
                if not depth_stack:
                    if closer == c:
                        return i + 1
                    raise Lint(f'{fname}:{line}: {c} closes nothing')
                want, at = depth_stack.pop()
                if want != c:
                    raise Lint(f'{fname}:{line}: {c} closes the {want} opened at line {at}')
                push('close', c)
                i += 1
            elif c in ';|':
                push('op', c)
                i += 1
            elif c in '2*' and text[i - 1:i] in (' ', '\t') and re.match(r'[2*]>', text[i:i + 2]):
                m = re.compile(r'[2*]>(&1|>)?').match(text, i)
                push('redir', m.group(0))
                i = m.end()
            elif c == '=' and text[i + 1:i + 2] != '=':
                push('op', '=')
                i += 1
            elif re.match(r'[A-Za-z_]', c):
                m = re.compile(r'[A-Za-z_][\w.\-]*').match(text, i)
                w = m.group(0).rstrip('.-')
                push('word', w)
                i += len(w)
            elif c == '-' and re.match(r'-[A-Za-z]', text[i:i + 2]):
                m = re.compile(r'-[A-Za-z][\w]*').match(text, i)
                push('param', m.group(0))
                i = m.end()
            else:
                push('op', c)
                i += 1
        if depth_stack:
            want, at = depth_stack[-1]
            raise Lint(f'{fname}: the bracket opened at line {at} is never closed (want {want})')
        if closer is not None:
            raise Lint(f'{fname}:{line}: $( never closed')
        return i

    code(0, None)
    return toks


def commands(toks):
    """(word, line) for each bare word in command position, outside [...] and
    outside hashtable literals' keys. `default` directly in a switch's body
    and followed by a block is the switch's keyword, not a command."""
    out = []
    ctx = []  # open tokens: '(', '{', '[', '@{', '@(', and 'switch{' for a switch's body
    switch_at = None  # len(ctx) where the last `switch` keyword stood, until its body opens
    prev = prev2 = None
    for idx, (kind, val, line) in enumerate(toks):
        in_brackets = '[' in ctx
        in_hash = bool(ctx) and ctx[-1] == '@{'
        # '=' is an assignment (a command may follow) after a variable, an
        # index or a hashtable key; in `sc.exe create x start= auto` it is not.
        assign = prev is not None and prev[0] == 'op' and prev[1] == '=' and \
            (in_hash or (prev2 is not None and prev2[0] in ('var', 'close')))
        at_start = prev is None or (prev[0] in ('nl', 'open') and prev[1] in ('\n', '(', '{', '@(', '$(')) or \
            (prev[0] == 'op' and prev[1] in (';', '|')) or assign
        nxt = toks[idx + 1] if idx + 1 < len(toks) else (None, None, None)
        if kind == 'word' and at_start and not in_brackets:
            if in_hash and not assign and not (prev[0] == 'op' and prev[1] == '|'):
                pass  # a key of @{ key = value; ... }
            elif val.lower() == 'default' and ctx and ctx[-1] == 'switch{' and nxt[:2] == ('open', '{'):
                pass  # switch (...) { ...; default { ... } }
            else:
                out.append((val, line))
            if val.lower() == 'switch':
                switch_at = len(ctx)
        if kind == 'open':
            # the first { at the switch keyword's own level is its body (after
            # any -options and the (value), which open and close above it)
            if val == '{' and switch_at == len(ctx):
                ctx.append('switch{')
                switch_at = None
            else:
                ctx.append(val)
        elif kind == 'close' and ctx:
            ctx.pop()
        prev2, prev = prev, (kind, val)
    return out


def function_spans(toks):
    """{name.lower(): [(first, last)]}: the token indexes of each function's body."""
    spans = {}
    for i in range(len(toks) - 1):
        if not (toks[i][0] == 'word' and toks[i][1].lower() == 'function' and toks[i + 1][0] == 'word'):
            continue
        j, depth = i + 2, 0
        while j < len(toks):  # past a (param) list, to the body's {
            k, v, _ = toks[j]
            if k == 'open':
                if v == '{' and depth == 0:
                    break
                depth += 1
            elif k == 'close':
                depth -= 1
            j += 1
        start, depth = j, 0
        while j < len(toks):
            if toks[j][0] == 'open':
                depth += 1
            elif toks[j][0] == 'close':
                depth -= 1
                if depth == 0:
                    break
            j += 1
        spans.setdefault(toks[i + 1][1].lower(), []).append((start, j))
    return spans


def native_redirects(toks, defined, allowed_spans):
    """(redirection, program, line) for each redirection of the Error stream
    on a program (not a cmdlet, function or expression) outside allowed_spans."""
    out = []
    starts = [0]  # the first token of the current pipeline element, per nesting level
    prev = prev2 = None
    for idx, (kind, val, line) in enumerate(toks):
        assign = prev is not None and prev[:2] == ('op', '=') and prev2 is not None and prev2[0] in ('var', 'close')
        if prev is None or (prev[0] in ('nl', 'open')) or (prev[0] == 'op' and prev[1] in (';', '|')) or assign:
            if kind not in ('nl', 'close'):
                starts[-1] = idx
        if kind == 'open':
            starts.append(idx + 1)
        elif kind == 'close' and len(starts) > 1:
            starts.pop()
        elif kind == 'redir' and not any(a <= idx <= b for a, b in allowed_spans):
            first = toks[starts[-1]] if starts[-1] < len(toks) else (None, None, None)
            nxt = toks[starts[-1] + 1] if starts[-1] + 1 < len(toks) else (None, None, None)
            if first[:2] in (('op', '&'), ('op', '.')) and nxt[:2] != ('open', '{'):
                out.append((val, first[1] + ' ' + ('(...)' if nxt[0] == 'open' else str(nxt[1])), line))
            elif first[0] == 'word':
                w = first[1].lower()
                if w.endswith('.exe') or not (w in KEYWORDS or w in defined or w in KNOWN):
                    out.append((val, first[1], line))
        prev2, prev = prev, (kind, val)
    return out


def functions(toks):
    return {toks[i + 1][1].lower() for i in range(len(toks) - 1)
            if toks[i][0] == 'word' and toks[i][1].lower() == 'function' and toks[i + 1][0] == 'word'}


def params(toks):
    """{name.lower(): mandatory} of the script's param( ) block."""
    for i, t in enumerate(toks):
        if t[0] == 'word' and t[1].lower() == 'param' and i + 1 < len(toks) and toks[i + 1][1] == '(':
            depth, j, res, mandatory = 0, i + 1, {}, False
            while j < len(toks):
                k, v, _ = toks[j]
                if k == 'open':
                    depth += 1
                elif k == 'close':
                    depth -= 1
                    if depth == 0:
                        return res
                elif k == 'word' and v == 'Mandatory':
                    mandatory = True
                elif k == 'var' and depth == 1 and toks[j - 1][1] != '=':
                    res[v.lower()] = mandatory
                    mandatory = False
                j += 1
    return {}


def check_file(path, text, common_funcs):
    errs = []
    if any(ord(c) > 127 for c in text):
        ln = next(i + 1 for i, l in enumerate(text.split('\n')) if any(ord(c) > 127 for c in l))
        errs.append(f'{path}:{ln}: not ASCII')
    toks = tokenize(text, path)
    defined = functions(toks)
    if re.search(r"^\.\s+\(Join-Path \$PSScriptRoot '(\.\.\\)?common\.ps1'\)", text, re.M):
        defined |= common_funcs
    for w, line in commands(toks):
        lw = w.lower()
        if lw in KEYWORDS or lw in defined or lw in KNOWN or lw.endswith('.exe'):
            continue
        errs.append(f'{path}:{line}: command {w} is not defined here (a function), nor a known cmdlet')
    allowed = function_spans(toks).get('invoke-native', []) if os.path.basename(path) == 'common.ps1' else []
    for redir, prog, line in native_redirects(toks, defined, allowed):
        errs.append(f'{path}:{line}: {redir} on the program {prog}: run it with Invoke-Native (common.ps1); '
                    f'under $ErrorActionPreference Stop, PowerShell 5.1 ends the script at its first stderr line')
    return toks, errs


def check_dir(d):
    res = []
    files = sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs if f.endswith('.ps1'))
    texts = {f: open(os.path.join(d, f), encoding='utf-8', errors='replace').read() for f in files}
    common_funcs = set()
    if 'common.ps1' in texts:
        common_funcs = functions(tokenize(texts['common.ps1'], 'common.ps1'))
    toks = {}
    for f in files:
        try:
            toks[f], errs = check_file(f, texts[f], common_funcs)
        except Lint as e:
            errs = [str(e)]
        res.append((f'{f}: ASCII, closed strings and brackets, every command defined or known, '
                    f'no program\'s stderr redirected outside Invoke-Native', errs))
    if 'run-all.ps1' in toks:
        errs = []
        named = set()
        t = toks['run-all.ps1']
        for i, (k, v, line) in enumerate(t):
            if k == 'word' and v in ('Invoke-TestScript', 'Skip-TestScript') and t[i + 1][0] == 'str':
                name = t[i + 1][1]
                named.add(name)
                if name + '.ps1' not in toks:
                    errs.append(f'run-all.ps1:{line}: runs {name}.ps1, which does not exist')
                    continue
                if v == 'Skip-TestScript':
                    continue
                # the @( ... ) argument list: '-Name' strings
                passed = set()
                j = i + 2
                if t[j][1] == '@(':
                    depth = 0
                    while j < len(t):
                        if t[j][0] == 'open':
                            depth += 1
                        elif t[j][0] == 'close':
                            depth -= 1
                            if depth == 0:
                                break
                        elif t[j][0] == 'str' and re.fullmatch(r'-[A-Za-z]\w*', t[j][1]):
                            passed.add(t[j][1][1:].lower())
                        j += 1
                declared = params(toks[name + '.ps1'])
                for p in sorted(passed - set(declared)):
                    errs.append(f'run-all.ps1:{line}: {name}.ps1 has no parameter -{p}')
                for p in sorted(p for p, m in declared.items() if m and p not in passed):
                    errs.append(f'run-all.ps1:{line}: {name}.ps1 needs -{p}, not passed')
        missing = sorted(set(f[:-4] for f in toks if os.sep not in f) - named - {'run-all', 'common'})
        for m in missing:
            errs.append(f'run-all.ps1: {m}.ps1 is in the directory and run-all does not run it')
        res.append(('run-all.ps1: every script exists, each is run, parameters match their param blocks', errs))
    return res


SAMPLES = {
    'an unclosed brace': ("function F { if ($x) { Ok 'a' }\n", None),
    'a brace closing a paren': ("$a = (1 + 2}\n", None),
    'an unclosed string': ("Write-Output 'abc\n", None),
    'an unclosed here-string': ("$s = @'\nabc\n", None),
    'an unclosed subexpression in a string': ('Write-Output "a $(Get-Date b"\n', None),
    'a non-ASCII character': ("# dash \u2013\nWrite-Output 'a'\n", None),
    'a colon after a variable in a string': ('Write-Output "exit $code: failed"\n', None),
    '2>&1 on a program called with &': ("$o = @(& $Cli health 2>&1 | ForEach-Object { \"$_\" })\n", None),
    '2>$null on NAME.exe': ("sc.exe query csiproxy 2>$null | Out-Null\n", None),
    '2>&1 on a program in a helper of its own': ("function Run($f) {\n    $o = & $f @('x') 2>&1\n}\n", None),
    '2>&1 in Invoke-Native outside common.ps1': ("function Invoke-Native($f) { & $f 2>&1 }\n", None),
    'a misspelt helper': ("function Check2 { }\nChekc $true 'x'\n", None),
    'a misspelt cmdlet': ("Get-Dsik | Out-Null\n", None),
    'a misspelt cmdlet in a string': ('Write-Output "now: $(Get-Dat)"\n', None),
    'default outside a switch': ("if ($x) { default { 1 } }\n", None),
    'default in a block inside a switch clause': ("switch ($x) { 'a' { default { 1 } } }\n", None),
    'run-all runs a script that is not there': None,
    'run-all passes a parameter the script lacks': None,
    'run-all leaves out a mandatory parameter': None,
    'a script run-all does not name': None,
}
GOOD = ("param([Parameter(Mandatory = $true)] [string] $Cli, [string] $X = $null)\n"
        "function Rpc([string] $a) { @{ path = \"$($a)\"; force = $true } }\n"
        "$h = @{ Name = 'x' }\nRpc 'y' | Out-Null\n"
        "switch -regex ($h.Name) {\n    { $_ -in 'a', 'b' } { Rpc 'a' }\n    'x' { Rpc 'x' }\n    default { Rpc 'z' }\n}\n"
        "$s = @'\nit's {(\n'@\nWrite-Output \"${h}: $env:TEMP $($h):\"\n"
        "$e = \"$(Get-Date 2>&1 | Out-String)\"; $n = 2 * 3; if ($n -gt 2) { Rpc 'q' 2>&1 | Out-Null }\n")
# common.ps1's Invoke-Native is the one place a program's stderr is merged.
GOOD_COMMON = ("function Invoke-Native([string] $file, [string[]] $argv = @()) {\n"
               "    $ErrorActionPreference = 'Continue'\n"
               "    $out = @(& $file @argv 2>&1 | ForEach-Object { \"$_\" })\n}\n"
               "function Other { Invoke-Native 'sc.exe' @('query') }\n")


def self_test():
    import tempfile
    res = []
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, 'good.ps1'), 'w') as f:
            f.write(GOOD)
        errs = check_file('good.ps1', GOOD, set())[1]
        res.append(('self-test: a well-formed sample passes', errs))
        errs = check_file('common.ps1', GOOD_COMMON, set())[1]
        res.append(('self-test: 2>&1 inside common.ps1\'s Invoke-Native passes', errs))
    for name, sample in SAMPLES.items():
        if sample is None:
            continue
        try:
            errs = check_file('sample.ps1', sample[0], set())[1]
        except Lint as e:
            errs = [str(e)]
        res.append((f'self-test: {name} is refused', [] if errs else ['accepted']))
    runall_cases = {
        'run-all runs a script that is not there': ("Invoke-TestScript 'nosuch' @('-Cli', 'x')\nInvoke-TestScript 'good' @('-Cli', 'x')\n", 'does not exist'),
        'run-all passes a parameter the script lacks': ("Invoke-TestScript 'good' @('-Cli', 'x', '-Nope', 'y')\n", 'no parameter -nope'),
        'run-all leaves out a mandatory parameter': ("Invoke-TestScript 'good' @('-X', 'x')\n", 'needs -cli'),
        'a script run-all does not name': ("Skip-TestScript 'nosuch2' 'why'\n", 'does not run it'),
    }
    for name, (runall, want) in runall_cases.items():
        with tempfile.TemporaryDirectory() as d:
            for fn, txt in (('good.ps1', GOOD), ('run-all.ps1', 'function Invoke-TestScript {}\nfunction Skip-TestScript {}\n' + runall)):
                with open(os.path.join(d, fn), 'w') as f:
                    f.write(txt)
            errs = [e for _, es in check_dir(d) for e in es]
            ok = any(want in e for e in errs)
        res.append((f'self-test: {name} is refused', [] if ok else [f'not refused: {errs}']))
    return res


def main():
    if sys.argv[1:] == ['--self-test']:
        res = self_test()
    else:
        res = check_dir(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
    bad = 0
    for name, errs in res:
        if errs:
            bad += 1
            print(f'not ok - {name}')
            for e in errs[:30]:
                print(f'    {e}')
        else:
            print(f'ok - {name}')
    print(f'{len(res) - bad} passed, {bad} failed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
