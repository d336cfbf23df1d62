#!/usr/bin/env python3
"""refs.py - everything a GitHub workflow of this repository names must exist:

  * every repository path in a `run:` script or a `with:` value (a path
    inside a downloaded artifact counts from the download's `path:`): a file
    or directory in the tree, or a build output make knows how to make;
  * every PowerShell script it runs: each -Flag it passes is a parameter of
    that script's param block, and every mandatory parameter is passed;
  * every `make` target: make has a rule for it (`make -n TARGET`);
  * every artifact a job downloads is uploaded by a job it needs.

Paths of another repository's checkout (`upstream/...`), of the runner
(`C:\\...`, `$env:...`, `${{ ... }}`) and of Windows itself are not ours and
are left alone.

Usage: refs.py [WORKFLOW...]   (default: .github/workflows/*.yml)
       refs.py --self-test     a workflow broken in each of those ways fails
Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'test', 'windows'))
import pslint  # noqa: E402  (the param-block reader)

PATH_RE = re.compile(r'(?<![\w$%{:/\\-])(?:\.[\\/])?[A-Za-z0-9_.][A-Za-z0-9_.\-]*(?:[\\/][A-Za-z0-9_.\-]+)+[\\/]?')


def top_entries():
    out = subprocess.run(['git', 'ls-files'], cwd=ROOT, capture_output=True, text=True).stdout.split()
    return {p.split('/')[0] for p in out} | {'build'}


def make_db():
    return subprocess.run(['make', '-pRrq', ':'], cwd=ROOT, capture_output=True, text=True).stdout


def make_knows(target, cache={}):
    if target not in cache:
        r = subprocess.run(['make', '-n', target], cwd=ROOT, capture_output=True, text=True)
        cache[target] = r.returncode == 0 and 'No rule to make target' not in r.stderr
    return cache[target]


def build_path_known(p, db):
    """A path under build/: a file make can make, or a directory that is the
    value of a make variable or holds a file make can make."""
    if make_knows(p.rstrip('/')):
        return True
    d = p.rstrip('/')
    for m in re.finditer(r'^[A-Za-z_]+ :?= (\S+)$', db, re.M):
        if m.group(1) == d:
            return True
    return any(line.startswith(d + '/') for line in re.findall(r'^([^\s#:=]+):', db, re.M))


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def check(wf_path, text=None):
    """[(name, [errors])] for one workflow."""
    text = open(wf_path).read() if text is None else text
    wf = yaml.safe_load(text)
    tops = top_entries()
    db = make_db()
    res = []
    jobs = wf.get('jobs') or {}
    uploads = {}
    for jname, job in jobs.items():
        for st in job.get('steps') or []:
            if str(st.get('uses', '')).startswith('actions/upload-artifact'):
                uploads.setdefault(jname, set()).add(str((st.get('with') or {}).get('name', '')))
    for jname, job in jobs.items():
        errs = []
        steps = job.get('steps') or []
        prefixes = [str((st.get('with') or {}).get('path', '')).strip('/\\') for st in steps
                    if str(st.get('uses', '')).startswith('actions/download-artifact')]
        needs = job.get('needs') or []
        needs = [needs] if isinstance(needs, str) else needs
        for st in steps:
            if str(st.get('uses', '')).startswith('actions/download-artifact'):
                name = str((st.get('with') or {}).get('name', ''))
                if not any(name in uploads.get(n, set()) for n in needs):
                    errs.append(f'downloads artifact {name!r}, which no job in needs {needs} uploads')
        for st in steps:
            texts = list(strings(st.get('run', ''))) + list(strings(st.get('with') or {}))
            is_checkout_of_other = str(st.get('uses', '')).startswith('actions/checkout') and \
                (st.get('with') or {}).get('repository')
            if is_checkout_of_other:
                continue
            for t in texts:
                t_clean = re.sub(r'\$\{\{[^}]*\}\}', ' ', t)
                for m in PATH_RE.finditer(t_clean):
                    p = m.group(0).replace('\\', '/')
                    if p.startswith('./'):
                        p = p[2:]
                    first = p.split('/')[0]
                    if re.match(r'^[\w.-]+\.(com|org|io)$', first) or '://' in t_clean[max(0, m.start() - 3):m.start()]:
                        continue
                    rel = None
                    if first in prefixes:
                        rel = p[len(first) + 1:]
                    elif first in tops:
                        rel = p
                    if rel is None or rel == '':
                        continue
                    if os.path.exists(os.path.join(ROOT, rel)):
                        pass
                    elif rel.startswith('build/') and build_path_known(rel, db):
                        pass
                    else:
                        errs.append(f'step {st.get("name") or st.get("uses")}: {p} does not exist (nor does make build it)')
                        continue
                    if rel.endswith('.ps1') and os.path.isfile(os.path.join(ROOT, rel)):
                        errs += ps1_flags(rel, t_clean[m.end():], st)
                for mm in re.finditer(r'(?m)^[ \t]*make((?:[ \t]+[^\s;&|]+)*)', t_clean):
                    for w in mm.group(1).split():
                        if w.startswith('-') or '=' in w:
                            continue
                        if not make_knows(w):
                            errs.append(f'step {st.get("name")}: make has no rule for {w}')
        res.append((f'{os.path.relpath(wf_path, ROOT)} job {jname}: every path, script flag, make target and artifact named exists', errs))
    return res


def ps1_flags(rel, rest, st):
    """The -Flags after a .ps1 path, up to the end of its command (a line end
    not continued by a backtick, or ;)."""
    lines, out = rest.split('\n'), []
    for ln in lines:
        out.append(ln)
        if not ln.rstrip().endswith('`'):
            break
    cmd = ' '.join(out)
    flags = {f[1:].lower() for f in re.findall(r'(?<![\w"\'])-[A-Za-z]\w*', cmd)}
    declared = pslint.params(pslint.tokenize(open(os.path.join(ROOT, rel)).read(), rel))
    errs = [f'step {st.get("name")}: {rel} has no parameter -{f}' for f in sorted(flags - set(declared))]
    errs += [f'step {st.get("name")}: {rel} needs -{p}, not passed' for p, m in sorted(declared.items())
             if m and p not in flags]
    return errs


def self_test():
    wf = os.path.join(ROOT, '.github', 'workflows', 'windows.yml')
    text = open(wf).read()
    cases = {
        'a script that is not there': ('test\\windows\\run-all.ps1', 'test\\windows\\run-al.ps1', 'does not exist'),
        'a flag the script lacks': ('-Destructive -Out', '-Destroy -Out', 'no parameter -destroy'),
        'a mandatory flag left out': ('run-all.ps1 -Dir csi\\build\\win', 'run-all.ps1 csi\\build\\win', 'needs -dir'),
        'a make target that is not there': ('          make dist\n', '          make distt\n', 'no rule for distt'),
        'an upload of a file nothing builds': ('build/win/svctest.exe', 'build/win/svctst.exe', 'does not exist'),
        'an artifact no needed job uploads': ('name: csi-proxy-windows\n          path: csi', 'name: csi-proxy-win\n          path: csi', 'no job in needs'),
    }
    res = []
    base = [e for _, es in check(wf, text) for e in es]
    res.append(('self-test: the workflow as it is passes', base))
    for name, (a, b, want) in cases.items():
        if a not in text:
            res.append((f'self-test: {name} is refused', [f'sample text {a!r} not in the workflow']))
            continue
        errs = [e for _, es in check(wf, text.replace(a, b, 1)) for e in es]
        ok = any(want in e for e in errs)
        res.append((f'self-test: {name} is refused', [] if ok else [f'not refused: {errs}']))
    return res


def main():
    args = sys.argv[1:]
    if args == ['--self-test']:
        res = self_test()
    else:
        files = args or sorted(glob.glob(os.path.join(ROOT, '.github', 'workflows', '*.yml')))
        res = [r for f in files for r in check(f)]
        if not files:
            res = [('a workflow exists', ['no .github/workflows/*.yml'])]
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
